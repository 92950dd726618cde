"""The write reducers: pure plans from an intent, its facts and a snapshot (ARCHITECTURE.md).

This directory is the package `mbank.reducers`, under that one name (see `mbank.module_identity`).
"""

from mbank.module_identity import require_name

require_name(__name__, "mbank.reducers")
