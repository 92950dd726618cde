"""Gates of `bank_set_field`: which keys one scalar write may touch, and with what value.

Pure (spec 03 §9, steps 2–10; step 1 is `gates.documents.document_to_write`). Status,
identity and governance lists each have their own tool or are edited by hand, and a value
must be one non-blank line; a declared lifecycle value must be one the bank declares.
"""

from __future__ import annotations

import re
from typing import Any

from mbank.model import Contract, Doc
from mbank.paths import refuse

KEY = re.compile(r"^[A-Za-z_][\w-]*$", re.ASCII)
IDENTITY_FIELDS = {
    "doc_kind": "doc_kind decides the template, the section index and the gates. Changing it "
    "is re-creating the document, not editing a value.",
    "doc_function": "doc_function decides whether this is a document or a template. Changing "
    "it is re-creating the document, not editing a value.",
}
LIST_FIELDS = ("derived_from", "canonical_for", "must_not_define", "anchors")
DECLARED_FIELDS = ("delivery_status", "decision_status")


def require_key(field: str) -> None:
    """A frontmatter key is an ASCII identifier (`not-a-key`)."""
    if not KEY.match(field):
        raise refuse("not-a-key", f'"{field}" is not a frontmatter key.')


def refuse_status(field: str) -> None:
    """Status moves through `bank_set_status`, which runs the gates (`field-status`)."""
    if field == "status":
        raise refuse(
            "field-status", "status is where the gates are. Use bank_set_status, which runs them."
        )


def refuse_identity(field: str) -> None:
    """`doc_kind` and `doc_function` are what the document is (`field-identity`)."""
    message = IDENTITY_FIELDS.get(field)
    if message is not None:
        raise refuse("field-identity", message)


def refuse_governance_list(field: str) -> None:
    """The governance lists are edited by hand (`field-list`)."""
    if field in LIST_FIELDS:
        message = (
            f"{field} is a list, and it carries governance. This tool sets one scalar value; "
            f"nothing in the server edits {field} yet, so change it by hand and run "
            "bank_validate."
        )
        if field == "canonical_for":
            message += " Archiving gives the keys up: bank_set_status with releaseCanonical."
        raise refuse("field-list", message)


def require_value(value: str) -> None:
    """Refuse a blank value (`value-required`)."""
    if not value.strip():
        raise refuse(
            "value-required",
            "`value` is empty. To remove a field, edit the document by hand and say so.",
        )


def require_one_line(value: str) -> None:
    """Refuse a value with a line break (`value-multiline`)."""
    if "\n" in value or "\r" in value:
        raise refuse(
            "value-multiline",
            "`value` must fit on one line: frontmatter values here are single scalars.",
        )


def require_declared(field: str, to: str, contract: Contract) -> None:
    """A delivery/decision status must be one `dna/` declares, when it declares any."""
    if field not in DECLARED_FIELDS or not contract.present:
        return
    declared = (
        contract.delivery_statuses if field == "delivery_status" else contract.decision_statuses
    )
    if declared and to not in declared:
        raise refuse(
            "value-not-declared",
            f'"{to}" is not a {field} this bank declares. Allowed: {" | ".join(declared)} '
            "(from dna/).",
        )


def refuse_non_scalar(doc: Doc, field: str, current: Any) -> None:
    """A key holding a list or a mapping is not one value (`value-holds-list`)."""
    if isinstance(current, (list, tuple, dict, set, frozenset)):
        raise refuse(
            "value-holds-list",
            f"{field} in {doc.path} holds a list or a mapping, not one value. This tool sets "
            "scalars only.",
        )
