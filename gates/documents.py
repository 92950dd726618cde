"""Gates on the document a write names: it is a document, it is text, it is not a template.

Pure (spec 03 §2.2–§2.4). Two outside facts come from the tool's shell: the journal's
explanation of a path that is no longer a document (§14.9, `mbank.journal.where_did_it_go`),
as `{bank path: sentence}` for every path the arguments name, and whether `<root>/<root name>/`
is a real directory (the root-name prefix rule of spec 01 §2.2 step 8). `DocumentFacts` is
the facts Struct of every write to one existing document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from mbank.model import Doc, RefusalError
from mbank.parse import split_frontmatter
from mbank.paths import normalise_caller_path, not_a_document, refuse
from mbank.projection import Snapshot
from mbank.write_declaration import FactPaths, KnownFacts


class DocumentFacts(msgspec.Struct, frozen=True):
    """The outside facts of a write to one existing document (edit, update_section, rewrite,
    set_status, set_field, discard)."""

    inner_root_dir: bool
    gone: dict[str, str]


def bank_path(snapshot: Snapshot, inner_root_dir: bool, given: str) -> str:
    """Normalise a caller's path into a bank path, or raise a path refusal (spec 01 §2.2)."""
    return normalise_caller_path(
        given,
        snapshot.root,
        snapshot.real_root,
        snapshot.docs.__contains__,
        lambda: inner_root_dir,
    )


def bank_path_or_none(snapshot: Snapshot, inner_root_dir: bool, given: str) -> str | None:
    """The bank path a caller's path names, or None when the gate will refuse it anyway (the
    facts of a path that cannot be written are never needed)."""
    try:
        return bank_path(snapshot, inner_root_dir, given)
    except RefusalError:
        return None


def require_document(snapshot: Snapshot, gone: Mapping[str, str], given: str, path: str) -> Doc:
    """The document at bank path `path`, or the `not-a-document` refusal (§2.2)."""
    doc = snapshot.docs.get(path)
    if doc is None:
        raise not_a_document(given, gone.get(path) or None)
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


_TOP_LEVEL_KEY = re.compile(r"^([^\s#:][^:]*?)\s*:(?:\s|$)")


def duplicate_keys(doc: Doc, text: str) -> tuple[str, ...]:
    """The frontmatter keys `doc` declares more than once, in the order they first appear.

    The parser stops at the first duplicate (`parse_error_kind == "duplicate-key"`, its
    message naming that key); every top-level one is named from the frontmatter's lines, and
    a nested duplicate falls back to the parser's key.
    """
    if doc.parse_error_kind != "duplicate-key":
        return ()
    seen: dict[str, int] = {}
    yaml_text = split_frontmatter(text).yaml_text or ""
    for line in yaml_text.split("\n"):
        match = _TOP_LEVEL_KEY.match(line.rstrip("\r"))
        if match is not None:
            key = match.group(1).strip().strip("\"'")
            seen[key] = seen.get(key, 0) + 1
    found = tuple(key for key, count in seen.items() if count > 1)
    if found:
        return found
    error = doc.parse_error or ""
    return (error.split('"')[1],) if error.count('"') >= 2 else ("?",)


def refuse_duplicate_keys(doc: Doc, text: str) -> None:
    """`duplicate-keys`: a write would edit one of two values while readers keep the other
    (issue 13 item 12), so every write to such a document is refused until a person fixes it."""
    keys = duplicate_keys(doc, text)
    if keys:
        named = ", ".join(f'"{key}"' for key in keys)
        raise refuse(
            "duplicate-keys",
            f"{doc.path} declares {named} more than once in its frontmatter; keep one of each "
            "by hand, then write again; nothing was written.",
        )


def document_to_write(snapshot: Snapshot, facts: DocumentFacts, given: str) -> Doc:
    """The document a body or field write targets, through §2.1–§2.4 in order.

    Path refusals, then `not-a-document`, `not-text`, `template` — the shared head of
    `bank_edit`, `bank_update_section`, `bank_rewrite`, `bank_set_status` and `bank_set_field`.
    """
    path = bank_path(snapshot, facts.inner_root_dir, given)
    doc = require_document(snapshot, facts.gone, given, path)
    require_text(doc)
    refuse_template(doc)
    refuse_duplicate_keys(doc, snapshot.raw.get(path, ""))
    return doc


def document_fact_paths(snapshot: Snapshot, args: Any, known: KnownFacts) -> FactPaths:
    """The `fact_paths` of a write to one existing document named by `args.path`: that path,
    when it names no document, is the one whose "where did it go" the facts need."""
    found = bank_path_or_none(snapshot, known.inner_root_dir, args.path)
    gone = (found,) if found is not None and found not in snapshot.docs else ()
    return FactPaths(gone=gone)
