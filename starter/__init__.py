"""The starter set `bank_init` seeds (spec 05 §1): package data, read by `mbank.shipped_files`.

This directory is the package `mbank.starter`, under that one name (see `mbank.module_identity`).
"""

from mbank.module_identity import require_name

require_name(__name__, "mbank.starter")
