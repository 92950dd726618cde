"""The shipped templates (spec 05 §7): package data, read by `mbank.shipped_files`.

This directory is the package `mbank.templates`, under that one name (see `mbank.module_identity`).
"""

from mbank.module_identity import require_name

require_name(__name__, "mbank.templates")
