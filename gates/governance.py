"""The governance check of a new document (`check_governance`, spec 03 §2.6), and the rule
that only a person changes the governance itself (`require_governance_allowed`, issue 14).

Pure. Used by `bank_create` and `bank_promote` before anything is planned: every
`derived_from` entry resolves (or points outside the bank, which is only a warning), no key is
claimed that another document owns ("one fact, one home"), an `active` document declares where
it derives from when the bank requires it, and the kind and status are values `dna/` declares
(warnings only). Returns the warnings in order; raises the first refusal.
"""

from __future__ import annotations

from collections.abc import Sequence

from mbank.contract import GOVERNANCE_FOLDER, is_governance_path
from mbank.gates.vocabulary import require_known_value
from mbank.model import Plan
from mbank.parse import resolve_from
from mbank.paths import refuse
from mbank.projection import Snapshot

ACTIVE = "active"
GOVERNANCE_FLAG = "--governance"


def governance_paths(plan: Plan) -> tuple[str, ...]:
    """The paths a plan creates, changes or deletes inside the governance folder, in order."""
    return tuple(path for path in plan.paths if is_governance_path(path))


def governance_refusal_text(paths: Sequence[str]) -> str:
    """The `governance-protected` sentence: what the write touches and the two ways forward."""
    return (
        f"This write would change {', '.join(paths)}, the bank's governance "
        f"({GOVERNANCE_FOLDER}), which only a person changes, so nothing was written. Propose "
        "the change as an inbox note (bank_create with inbox: true) for a person to apply, "
        f"or run the same write from the CLI with {GOVERNANCE_FLAG}."
    )


def require_governance_allowed(plan: Plan, *, allowed: bool) -> tuple[str, ...]:
    """The plan's governance paths; refuses (`governance-protected`) when it has some and the
    caller may not change governance (any MCP call; a CLI call without the flag)."""
    paths = governance_paths(plan)
    if paths and not allowed:
        raise refuse("governance-protected", governance_refusal_text(paths))
    return paths


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
    """Steps 1–5 of §2.6 in order: the warnings, or the first refusal (steps 4–5 refuse a
    value the bank neither declares nor uses, `gates.vocabulary`).

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
    # steps 4-5, issue 14: a value neither declared nor used by any document is refused
    warnings.extend(require_known_value(snapshot, "doc_kind", doc_kind))
    warnings.extend(require_known_value(snapshot, "status", status))
    return tuple(warnings)
