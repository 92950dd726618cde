"""The data of the `memorybank://health` resource (spec 04 §3): a full validation's totals.

`{root, documents, contract, total, errors, warnings, byRule, findings}` — `documents` counts
every document, templates included; `contract` is the list of contract sources, or None in
degraded mode; the rest is `bank_validate`'s result with no filter (spec 02 §7.1).
"""

from __future__ import annotations

from typing import Any

from mbank.projection import Snapshot
from mbank.validate import validate


def health(snapshot: Snapshot) -> dict[str, Any]:
    """The `memorybank://health` resource object."""
    contract = snapshot.contract
    return {
        "root": snapshot.root,
        "documents": len(snapshot.docs),
        "contract": list(contract.source) if contract.present else None,
        **validate(snapshot),
    }
