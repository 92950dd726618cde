"""The bank's vocabulary, enforced the same way by every write (issue 14).

Pure. A value of an enumerated field (`doc_kind`, `doc_function`, `status`,
`delivery_status`, `decision_status`: the enums the contract declares, spec 01 §9) that the
bank neither declares in `dna/` nor already uses in some document is refused, naming the
allowed values and the `dna/` document where a new value is declared. A value the contract
lacks but some document already uses is accepted with the warning writes gave before (real
banks often have a contract that lags behind their documents, and an agent must not be
locked out of them). A bank without a contract, or a field it declares no values for, is not
checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mbank.contract import ENUM_FIELDS, declared_values
from mbank.model import Contract
from mbank.paths import refuse
from mbank.projection import Snapshot

INDEX_FILE = "README.md"
INDEX_FUNCTION = "index"
CANONICAL = "canonical"


def used_values(snapshot: Snapshot, field: str) -> tuple[str, ...]:
    """The values of `field` the bank's documents use, sorted."""
    found = {getattr(doc, field) for doc in snapshot.docs.values()}
    return tuple(sorted(value for value in found if isinstance(value, str) and value))


def require_known_value(snapshot: Snapshot, field: str, value: str) -> tuple[str, ...]:
    """The warning for a used but undeclared value, or `value-not-declared` for a value the
    bank neither declares nor uses (see the module docstring)."""
    contract = snapshot.contract
    declared = declared_values(contract, field)
    if not contract.present or not declared or value in declared:
        return ()
    used = used_values(snapshot, field)
    if value in used:
        return (f'{field} "{value}" is not among the values declared in dna/.',)
    allowed = [*declared, *(other for other in used if other not in declared)]
    where = contract.declared_in.get((field, declared[0]), "dna/")
    raise refuse(
        "value-not-declared",
        f'{field} "{value}" is neither declared in dna/ nor used by any document. Allowed: '
        f"{' | '.join(allowed)}. A new value is declared in {where} first.",
    )


def require_known_values(snapshot: Snapshot, values: Mapping[str, Any]) -> tuple[str, ...]:
    """`require_known_value` for each enumerated field of `values` that holds a string, in
    the fields' order (create's `extra`, for instance)."""
    warnings: tuple[str, ...] = ()
    for field in ENUM_FIELDS:
        value = values.get(field)
        if isinstance(value, str) and value.strip():
            warnings += require_known_value(snapshot, field, value.strip())
    return warnings


def default_doc_function(contract: Contract, target: str) -> str:
    """The `doc_function` a write fills in: the bank's declared index function for an index
    file (a `README.md`), else `canonical`."""
    name = target.rsplit("/", 1)[-1]
    if name == INDEX_FILE and INDEX_FUNCTION in contract.doc_functions:
        return INDEX_FUNCTION
    return CANONICAL
