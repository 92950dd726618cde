"""Gates of `bank_set_field`: which keys one scalar write may touch, and with what value.

Pure (spec 03 §9, steps 2–10; step 1 is `gates.documents.document_to_write`). Status and
identity have their own tool or are re-creation, and a value must be one non-blank line; a
declared value must be one the bank declares or uses (`gates.vocabulary`), and list fields
have their own gates (`gates.lists`).
"""

from __future__ import annotations

import re
from typing import Any

from mbank.model import Doc
from mbank.paths import refuse

KEY = re.compile(r"^[A-Za-z_][\w-]*$", re.ASCII)
IDENTITY_FIELDS = {
    "doc_kind": "doc_kind decides the template, the section index and the gates. Changing it "
    "is re-creating the document, not editing a value.",
    "doc_function": "doc_function decides whether this is a document or a template. Changing "
    "it is re-creating the document, not editing a value.",
}


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


def refuse_non_scalar(doc: Doc, field: str, current: Any) -> None:
    """A key holding a mapping is neither one value nor a list (`value-holds-mapping`; a key
    holding a list is set as a list, `gates.lists`)."""
    if isinstance(current, (tuple, dict, set, frozenset)):
        raise refuse(
            "value-holds-mapping",
            f"{field} in {doc.path} holds a mapping, which this tool does not write: it sets "
            "one value, or a list field to a list.",
        )
