"""The gates: pure checks a write plan must pass (ARCHITECTURE.md).

This directory is the package `mbank.gates`, under that one name (see `mbank.module_identity`).
"""

from mbank.module_identity import require_name

require_name(__name__, "mbank.gates")
