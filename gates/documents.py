"""Gates on the document a write names: it is a document, it is text, it is not a template.

Pure (spec 03 §2.2–§2.4). The journal's explanation of a path that is no longer a document
(§14.9) is an outside fact: the tool's shell looks it up (`mbank.journal.where_did_it_go`) for
every path its arguments name and passes `{bank path: sentence}` in `intent.facts` under
`GONE_FACT`. Whether `<root>/<root name>/` is a real directory (the root-name prefix rule of
spec 01 §2.2 step 8) is passed under `INNER_ROOT_DIR_FACT`; when absent, it is taken to exist
when some document lies in it (the same rule reads use without the disk).
"""

from __future__ import annotations

from collections.abc import Mapping

from mbank.model import Doc, Intent
from mbank.paths import inner_root_dir_guess, normalise_caller_path, not_a_document, refuse
from mbank.projection import Snapshot

# intent.facts keys (filled by the tool's shell)
GONE_FACT = "gone"
INNER_ROOT_DIR_FACT = "innerRootDir"


def inner_root_dir_exists(snapshot: Snapshot, intent: Intent) -> bool:
    """Whether `<root>/<root name>/` is a directory: the shell's fact, else the snapshot's guess."""
    fact = intent.facts.get(INNER_ROOT_DIR_FACT)
    if isinstance(fact, bool):
        return fact
    return inner_root_dir_guess(snapshot.root, snapshot.docs)


def bank_path(snapshot: Snapshot, intent: Intent, given: str) -> str:
    """Normalise a caller's path into a bank path, or raise a path refusal (spec 01 §2.2)."""
    inner = inner_root_dir_exists(snapshot, intent)
    return normalise_caller_path(
        given, snapshot.root, snapshot.real_root, snapshot.docs.__contains__, lambda: inner
    )


def gone_note(intent: Intent, path: str) -> str | None:
    """The journal's "where did it go" sentence for a bank path, from the intent's facts."""
    notes = intent.facts.get(GONE_FACT)
    if isinstance(notes, Mapping):
        note = notes.get(path)
        if isinstance(note, str) and note:
            return note
    return None


def require_document(snapshot: Snapshot, intent: Intent, given: str, path: str) -> Doc:
    """The document at bank path `path`, or the `not-a-document` refusal (§2.2)."""
    doc = snapshot.docs.get(path)
    if doc is None:
        raise not_a_document(given, gone_note(intent, path))
    return doc


def require_text(doc: Doc) -> None:
    """Refuse writing through a document that is not UTF-8 text (§2.3, reason `not-text`)."""
    if not doc.text_ok or doc.parse_error_kind == "invalid-encoding":
        raise refuse("not-text", f"{doc.path} is not UTF-8 text, so mbank does not write to it.")


def refuse_template(doc: Doc) -> None:
    """Refuse writing through a template: templates are edited by hand (§2.4, `template`)."""
    if doc.doc_function == "template":
        raise refuse(
            "template",
            f"{doc.path} is a template. Templates are edited by hand, not through the server.",
        )


def document_to_write(snapshot: Snapshot, intent: Intent, given: str) -> Doc:
    """The document a body or field write targets, through §2.1–§2.4 in order.

    Path refusals, then `not-a-document`, `not-text`, `template` — the shared head of
    `bank_edit`, `bank_update_section`, `bank_rewrite`, `bank_set_status` and `bank_set_field`.
    """
    path = bank_path(snapshot, intent, given)
    doc = require_document(snapshot, intent, given, path)
    require_text(doc)
    refuse_template(doc)
    return doc
