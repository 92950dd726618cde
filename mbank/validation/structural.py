"""Structural rules: they run in every bank, with or without `dna/` (spec 02 §7.2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mbank.model import INBOX_LAYER, INDEX_FUNCTION, Doc, Finding
from mbank.validation import file_name, finding

INDEX_FILE = "README.md"

_FRONTMATTER_MESSAGES: dict[str, str] = {
    "alias-limit": (
        "YAML frontmatter expands aliases past the limit of 1000 nodes, so it was not parsed. "
        "Values were recovered leniently; write the values out instead of using anchors."
    ),
    "not-a-mapping": (
        "YAML frontmatter is not a mapping of keys to values. Values were recovered leniently; "
        'write one "key: value" per line.'
    ),
    "unclosed": (
        'The frontmatter opened by "---" on line 1 is never closed by a "---" line, so it was '
        "not read."
    ),
}


def _between(text: str, prefix: str, suffix: str) -> str:
    """`text` without `prefix` and `suffix` when it has both, else `text` unchanged."""
    if text.startswith(prefix) and text.endswith(suffix) and len(text) >= len(prefix + suffix):
        return text[len(prefix) : len(text) - len(suffix)]
    return text


def frontmatter_message(kind: str | None, error: str) -> str:
    """The `invalid-frontmatter` message for a parse error of `kind` (spec 01 §4.3).

    The texts carry no positions, so the post-check sees an unchanged error as unchanged when
    lines move. An unknown kind (none exists today) reads like a YAML error.
    """
    fixed = _FRONTMATTER_MESSAGES.get(kind or "")
    if fixed is not None:
        return fixed
    if kind == "duplicate-key":
        key = _between(error, 'duplicate key "', '"')
        return (
            f'YAML frontmatter declares "{key}" more than once. Values were recovered '
            "leniently (the last one won); keep one."
        )
    if kind == "too-large":
        size = _between(error, "frontmatter is ", " bytes")
        return (
            f"YAML frontmatter is {size} bytes, over the 65536-byte limit, so it was not "
            "parsed. Values were recovered leniently; move long text into the body."
        )
    if kind == "invalid-encoding":
        detail = _between(error, "not UTF-8 (", ")")
        return f"File is not UTF-8 text ({detail}), so nothing in it was read. Re-save it as UTF-8."
    return (
        f"YAML frontmatter does not parse ({error}). Values were recovered leniently; "
        'quote any value containing ": ".'
    )


def invalid_frontmatter(doc: Doc) -> tuple[Finding, ...]:
    """Rule 1: one error per document whose frontmatter could not be used."""
    if doc.parse_error is None:
        return ()
    message = frontmatter_message(doc.parse_error_kind, doc.parse_error)
    return (finding("invalid-frontmatter", doc.path, message, doc.parse_error_line),)


def broken_derived_from(doc: Doc, docs: Mapping[str, Doc]) -> tuple[Finding, ...]:
    """Rule 2: one error per `derived_from` edge that resolves inside the bank to nothing.

    External edges (outside the bank, URLs) and empty ones never fire (spec 01 §6.2).
    """
    return tuple(
        finding(
            "broken-derived-from",
            doc.path,
            f"derived_from points at a file that does not exist: {edge.raw}",
        )
        for edge in doc.derived_from
        if edge.resolved is not None and edge.resolved not in docs
    )


def is_index(doc: Doc) -> bool:
    """Whether a document is an index: `doc_function: index` or named `README.md` (01 §7)."""
    return doc.doc_function == INDEX_FUNCTION or file_name(doc.path) == INDEX_FILE


def unregistered_doc(doc: Doc) -> tuple[Finding, ...]:
    """Rule 5: a document no index links to (inbox notes, indexes and READMEs excepted)."""
    if (
        doc.registered_in
        or doc.layer == INBOX_LAYER
        or doc.doc_function == INDEX_FUNCTION
        or file_name(doc.path) == INDEX_FILE
    ):
        return ()
    return (
        finding(
            "unregistered-doc",
            doc.path,
            "No index links to this document, so navigation cannot reach it.",
        ),
    )


def ssot_conflicts(owners: Mapping[str, tuple[str, ...]]) -> tuple[tuple[Finding, str], ...]:
    """Rule 8: one error per `canonical_for` key with two or more owners, with its key.

    Keys come in first-seen order; the finding sits on the first owner (path order). Every
    owner counts, whatever its status: an archived claim still confuses a reader.
    """
    return tuple(
        (ssot_conflict(key, holders), key) for key, holders in owners.items() if len(holders) > 1
    )


def ssot_conflict(key: str, holders: tuple[str, ...]) -> Finding:
    """The `ssot-conflict` finding of one key claimed by `holders` (two or more, sorted)."""
    return finding(
        "ssot-conflict",
        holders[0],
        f'canonical_for "{key}" is claimed by {len(holders)} documents: {", ".join(holders)}.',
    )


def must_not_define_violated(doc: Doc) -> tuple[Finding, ...]:
    """Rule 9: a key the document owns while its own `must_not_define` forbids it.

    A key listed twice in `canonical_for` gives one finding, not two.
    """
    if not doc.must_not_define:
        return ()
    forbidden = set(doc.must_not_define)
    return tuple(
        finding(
            "must-not-define-violated",
            doc.path,
            f'Document owns "{key}" while its own must_not_define forbids it.',
        )
        for key in _distinct(doc.canonical_for)
        if key in forbidden
    )


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def dangling_index_entries(doc: Doc, docs: Mapping[str, Doc]) -> tuple[Finding, ...]:
    """Rule 10: a link in an index that resolves inside the bank to a file that is not there.

    Links inside fenced code and links with a URL scheme were never extracted (spec 01 §5.5).
    """
    if not doc.links or not is_index(doc):
        return ()
    return tuple(
        finding(
            "dangling-index-entry",
            doc.path,
            f"Index links to a file that does not exist: {link.raw}",
            link.line,
        )
        for link in doc.links
        if link.to is not None and link.to not in docs
    )
