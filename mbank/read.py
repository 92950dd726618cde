"""`bank_read`: one document or a batch, whole or one `##` section, under a byte budget.

A pure function of the snapshot (spec 02 §5). The shell injects how a caller's path names a
document, as one `PathLookup`: the caller-path normaliser (the shell passes `Bank.relative`,
which can stat the disk for the root-name prefix rule) and the journal's explanation of a path
that is no longer a document (spec 03 §14.9). `bank_graph` takes the same value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from mbank.model import Doc, RefusalError
from mbank.parse import json_data, split_frontmatter
from mbank.paths import inner_root_dir_guess, normalise_caller_path, not_a_document, refuse
from mbank.projection import Snapshot
from mbank.sections import match_section, section_text

MAX_BYTES = 400_000
BATCH_BUDGET = 40_000
MAX_BATCH = 50

Relative = Callable[[str], str]
NoteLookup = Callable[[str], "str | None"]
ReadElement = str | dict[str, Any]


def snapshot_relative(snapshot: Snapshot) -> Relative:
    """Path normalisation (spec 01 §2.2) that reads nothing but the snapshot.

    The root-name prefix rule (step 8) needs to know whether `<root>/<root name>/` is a real
    directory; without the disk, a directory is taken to exist when some document lies in it.
    The shell passes `Bank.relative` instead, which asks the disk.
    """
    inner = inner_root_dir_guess(snapshot.root, snapshot.docs)

    def relative(given: str) -> str:
        return normalise_caller_path(
            given, snapshot.root, snapshot.real_root, snapshot.docs.__contains__, lambda: inner
        )

    return relative


class PathLookup(msgspec.Struct, frozen=True):
    """How a caller's path names a document of one session: `relative` normalises it
    (without it, `snapshot_relative`'s rule) and `not_a_document_note` explains a path that is
    no document (without it, the refusal has no note)."""

    relative: Relative | None = None
    not_a_document_note: NoteLookup | None = None

    def normaliser(self, snapshot: Snapshot) -> Relative:
        """The normaliser to use on this snapshot."""
        return self.relative if self.relative is not None else snapshot_relative(snapshot)


def document_of(snapshot: Snapshot, given: str, lookup: PathLookup | None = None) -> Doc:
    """The document a caller's path names, or a path / `not-a-document` refusal."""
    lookup = lookup if lookup is not None else PathLookup()
    path = lookup.normaliser(snapshot)(given)
    doc = snapshot.docs.get(path)
    if doc is None:
        note = lookup.not_a_document_note
        raise not_a_document(given, note(path) if note is not None else None)
    return doc


def _blank_to_none(section: str | None) -> str | None:
    return section if section is not None and section.strip() else None


class ReadOptions(msgspec.Struct, frozen=True):
    """How `bank_read` reads: the section wanted (`None` or blank: the whole document), the
    batch budget, how a given path names a document, and whether a section read also
    answers the frontmatter."""

    section: str | None = None
    max_bytes: int | None = None
    lookup: PathLookup | None = None
    frontmatter: bool = False


def read_single(snapshot: Snapshot, given: str, options: ReadOptions) -> dict[str, Any]:
    """`ReadResult` for one document (spec 02 §5.2).

    Issue 16: a section read answers `path, title, status, section, content, bytes,
    truncated` — the frontmatter and the section list only when `frontmatter` is asked for,
    since repeating them made a 525-character section a 1,924-character answer. A whole
    read is unchanged.
    """
    doc = document_of(snapshot, given, options.lookup)
    if not doc.text_ok:
        raise refuse(
            "not-text", f"{doc.path} is not UTF-8 text, so it cannot be read through mbank."
        )
    text = snapshot.raw[doc.path]
    wanted = _blank_to_none(options.section)
    full = wanted is None or options.frontmatter
    result: dict[str, Any] = {"path": doc.path, "title": doc.title}
    if full:
        result["frontmatter"] = json_data(doc.data)
    else:
        result["status"] = doc.status
    if wanted is None:
        # a byte-order mark is whitespace to upstream's JavaScript trim(), not to str.strip()
        content = split_frontmatter(text).body.strip().removeprefix("\ufeff").strip()
    else:
        chosen = match_section(doc, wanted)
        content = section_text(text, doc, chosen)
        result["section"] = chosen.title
    size = len(content.encode("utf-8"))
    truncated = size > MAX_BYTES
    if truncated:
        content = content[:MAX_BYTES]
        size = len(content.encode("utf-8"))
    result["content"] = content
    result["bytes"] = size
    result["truncated"] = truncated
    if full:
        result["availableSections"] = [s.title for s in doc.sections]
    return result


def _element(element: ReadElement, section: str | None) -> tuple[str, str | None]:
    if isinstance(element, str):
        return element, _blank_to_none(section)
    path = element.get("path")
    own = element.get("section")
    return (path if isinstance(path, str) else ""), _blank_to_none(
        own if isinstance(own, str) else None
    )


def read_batch(
    snapshot: Snapshot, elements: Sequence[ReadElement], options: ReadOptions
) -> dict[str, Any]:
    """The batch result of spec 02 §5.3: documents, failed, skipped, under one budget.

    Bounds are the surface's job (at most 50 elements, `maxBytes` ≥ 1000); here a
    `max_bytes` can only lower the 40,000-byte budget.
    """
    max_bytes = options.max_bytes
    lookup = options.lookup if options.lookup is not None else PathLookup()
    # normalised once for the whole batch: the shell's normaliser can stat the disk
    normalise = lookup.normaliser(snapshot)
    each_lookup = msgspec.structs.replace(lookup, relative=normalise)
    budget = min(max_bytes if max_bytes is not None else BATCH_BUDGET, BATCH_BUDGET)
    spent = 0
    documents: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for element in elements:
        given, wanted = _element(element, options.section)
        try:
            doc: Doc | None = snapshot.docs.get(normalise(given))
        except RefusalError:
            doc = None
        overshoots = wanted is None and doc is not None and spent + doc.size > budget
        if documents and (spent >= budget or overshoots):
            skipped.append(
                {
                    "path": given,
                    "title": doc.title if doc is not None else "",
                    "bytes": doc.size if doc is not None else 0,
                    "availableSections": [s.title for s in doc.sections] if doc else [],
                }
            )
            continue
        try:
            each = msgspec.structs.replace(options, section=wanted, lookup=each_lookup)
            read = read_single(snapshot, given, each)
        except RefusalError as exc:
            failed.append({"path": given, "error": exc.refusal.message})
            continue
        documents.append(read)
        spent += read["bytes"]
    result: dict[str, Any] = {
        "documents": documents,
        "failed": failed,
        "skipped": skipped,
        "bytes": spent,
        "budgetBytes": budget,
    }
    if max_bytes is not None and max_bytes > BATCH_BUDGET:
        result["note"] = (
            f"maxBytes {max_bytes} is above the ceiling of {BATCH_BUDGET}, so {BATCH_BUDGET} "
            "was used. A larger answer would reach you as a file path, not as text; read the "
            "skipped documents by section instead."
        )
    return result


def read(
    snapshot: Snapshot,
    paths: str | Sequence[ReadElement],
    *,
    section: str | None = None,
    max_bytes: int | None = None,
    lookup: PathLookup | None = None,
    frontmatter: bool = False,
) -> dict[str, Any]:
    """`bank_read`: a single `ReadResult` for a string, the batch result for an array."""
    options = ReadOptions(section, max_bytes, lookup, frontmatter)
    if isinstance(paths, str):
        return read_single(snapshot, paths, options)
    return read_batch(snapshot, paths, options)


def format_read(result: dict[str, Any]) -> str:
    """The human rendering of a read (spec 04 §9.3)."""
    lines: list[str] = []
    documents = result.get("documents", [result])
    for document in documents:
        heading = f"# {document['path']}"
        if "section" in document:
            heading += f" :: {document['section']}"
        lines.append(f"{heading} ({document['bytes']} bytes)")
        lines.append(document["content"])
        lines.append("")
    if "documents" in result:
        for entry in result["skipped"]:
            sections = " | ".join(entry["availableSections"]) or "(none)"
            lines.append(
                f"skipped: {entry['path']} ({entry['bytes']} bytes) — sections: {sections}"
            )
        for entry in result["failed"]:
            lines.append(f"failed: {entry['path']}: {entry['error']}")
        if "note" in result:
            lines.append(f"note: {result['note']}")
    return "\n".join(lines) + "\n"
