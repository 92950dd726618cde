"""The governance check of a new document (`check_governance`, spec 03 §2.6).

Pure. Used by `bank_create` and `bank_promote` before anything is planned: every
`derived_from` entry resolves (or points outside the bank, which is only a warning), no key is
claimed that another document owns ("one fact, one home"), an `active` document declares where
it derives from when the bank requires it, and the kind and status are values `dna/` declares
(warnings only). Returns the warnings in order; raises the first refusal.
"""

from __future__ import annotations

from collections.abc import Sequence

from mbank.parse import resolve_from
from mbank.paths import refuse
from mbank.projection import Snapshot

ACTIVE = "active"


def check_derived_from(snapshot: Snapshot, target: str, derived_from: Sequence[str]) -> list[str]:
    """Step 1: each entry resolves from `target` to a document, or is external (a warning)."""
    warnings: list[str] = []
    for entry in derived_from:
        where = resolve_from(target, entry)
        if where.external:
            warnings.append(
                f'derived_from "{entry}" points outside the bank; it will not be checked.'
            )
            continue
        if where.resolved is None or where.resolved not in snapshot.docs:
            tried = where.resolved if where.resolved is not None else entry
            raise refuse(
                "derived-from-unresolved",
                f'derived_from "{entry}" does not resolve to a document of this bank '
                f"(tried {tried}).",
            )
    return warnings


def check_unowned(
    snapshot: Snapshot, target: str, canonical_for: Sequence[str], exempt: str | None
) -> None:
    """Step 2: no key is already owned by a document other than `target` and `exempt`."""
    for key in canonical_for:
        owners = [owner for owner in snapshot.owners.get(key, ()) if owner not in (target, exempt)]
        if owners:
            raise refuse(
                "canonical-owned",
                f'canonical_for "{key}" is already owned by {", ".join(owners)}. '
                "One fact, one home.",
            )


def check_governance(
    snapshot: Snapshot,
    target: str,
    status: str,
    derived_from: Sequence[str],
    canonical_for: Sequence[str],
    doc_kind: str,
    exempt: str | None = None,
) -> tuple[str, ...]:
    """Steps 1–5 of §2.6 in order: the warnings, or the first refusal.

    `exempt` is the promotion source, which does not count as an owner of its own keys.
    """
    warnings = check_derived_from(snapshot, target, derived_from)
    check_unowned(snapshot, target, canonical_for, exempt)
    contract = snapshot.contract
    if contract.requires_derived_from and not derived_from:
        if status == ACTIVE:
            raise refuse(
                "derived-from-required",
                "Governance requires every active non-root document to declare derived_from.",
            )
        warnings.append(
            "No derived_from: governance requires one before this document can become active."
        )
    if contract.doc_kinds and doc_kind not in contract.doc_kinds:
        warnings.append(f'doc_kind "{doc_kind}" is not among the values declared in dna/.')
    if contract.statuses and status not in contract.statuses:
        warnings.append(f'status "{status}" is not among the values declared in dna/.')
    return tuple(warnings)
