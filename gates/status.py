"""Gates of `bank_set_status`: a lifecycle transition checks only what it changes.

Pure (spec 03 §8, steps 2–9; step 1 is `gates.documents.document_to_write`). **mbank:**
activation checks the `derived_from` requirement with the root documents of `dna/` exempt;
archiving checks the canonical release; resolution and ownership are not re-checked, so a
pre-existing conflict does not block a transition that cannot make it worse (the post-check
still refuses any new error).
"""

from __future__ import annotations

from mbank.model import Contract, Doc
from mbank.paths import refuse

ACTIVE = "active"
ARCHIVED = "archived"


def refuse_inbox(doc: Doc) -> None:
    """A quarantined note is moved by promote or discard, not by status (`inbox-status`)."""
    if doc.layer == "inbox":
        raise refuse(
            "inbox-status",
            f"{doc.path} is in the quarantine, where status is not the thing that moves it. "
            "Use bank_promote to place it and set its status in one step, or bank_discard "
            "to drop it.",
        )


def require_status(to: str) -> None:
    """Refuse a blank target status (`status-required`)."""
    if not to:
        raise refuse(
            "status-required",
            "`status` is required: the lifecycle value to move this document to.",
        )


def release_only_when_archiving(release: bool, to: str) -> None:
    """`releaseCanonical` goes with archiving and nothing else (`release-not-archiving`)."""
    if release and to != ARCHIVED:
        raise refuse(
            "release-not-archiving",
            "`releaseCanonical` belongs to archiving. Ownership is given up when a document "
            "retires, not on any other transition.",
        )


def require_frontmatter(doc: Doc, unclosed: bool, what: str = "status") -> None:
    """A document without a (closed) frontmatter has nothing to set (`no-frontmatter`)."""
    if not doc.has_frontmatter or unclosed:
        raise refuse(
            "no-frontmatter", f"{doc.path} has no frontmatter, so it has no {what} to set."
        )


def refuse_archiving_an_owner(doc: Doc, to: str, release: bool) -> None:
    """Archiving an owner of keys needs `releaseCanonical` (`still-owns`)."""
    if to == ARCHIVED and doc.canonical_for and not release:
        keys = ", ".join(f'"{key}"' for key in doc.canonical_for)
        raise refuse(
            "still-owns",
            f"{doc.path} still owns {keys}. An archived document that keeps its keys blocks "
            "whoever should own them next. Pass releaseCanonical: true to give them up with "
            "this transition, or move them to the successor document first.",
        )


def check_activation(doc: Doc, contract: Contract, current: str, to: str) -> None:
    """Activation needs `derived_from` unless the document is a declared root (**mbank:**)."""
    if to != ACTIVE or current == ACTIVE:
        return
    if contract.requires_derived_from and doc.path not in contract.roots and not doc.derived_from:
        raise refuse(
            "derived-from-required",
            "Governance requires every active non-root document to declare derived_from.",
        )
