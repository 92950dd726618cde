"""The data of the `index`, `index/{section}` and `frontmatter-schema` resources (spec 04 §3).

Pure functions of the snapshot. The other three resources have their data next to the
feature they belong to: `health` in `mbank.health`, `inbox` in `mbank.inbox`, `journal` in
`mbank.journal`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mbank.model import INBOX_LAYER, INDEX_FUNCTION, TEMPLATE_FUNCTION, Doc
from mbank.projection import Snapshot

NO_FRONTMATTER_FILE = "This bank has no dna/frontmatter.md."
DEGRADED_SCHEMA = (
    "This bank has no dna/frontmatter.md. The server runs in degraded mode: routing and reading "
    "only, no contract checks."
)


ROOT_SECTION = "."
CANONICAL_FUNCTION = "canonical"
# per section, the canonical documents the map names at most (the rest are counted, not
# listed), and the smaller caps tried in turn until the map fits MAP_BUDGET characters
CANONICAL_CAPS = (12, 8, 5, 3, 1)
MAP_BUDGET = 10_000
# canonical_for keys shown per document in the map
KEYS_SHOWN = 4
RECENT_SHOWN = 8
DRILL_DOWN = (
    "memorybank://index/<section> lists one section's documents with title, purpose, kind, "
    "layer and status; bank_route finds the documents for a question; bank_read reads "
    "several paths at once, one section where a heading fits."
)


def section_of(path: str) -> str:
    """The section a document belongs to: its top-level folder, `.` for the root files."""
    head, separator, _rest = path.partition("/")
    return head if separator else ROOT_SECTION


def _listed(snapshot: Snapshot) -> list[Doc]:
    return [doc for doc in snapshot.docs.values() if doc.doc_function != TEMPLATE_FUNCTION]


def _canonical_rank(doc: Doc) -> tuple[int, str]:
    """Owners of canonical_for keys first, then other canonical documents, by path."""
    return (0 if doc.canonical_for else 1, doc.path)


def _modified(doc: Doc) -> str:
    return datetime.fromtimestamp(doc.mtime_ns / 1e9, UTC).strftime("%Y-%m-%d")


def index_map(snapshot: Snapshot) -> dict[str, Any]:
    """`memorybank://index` (issue 16): a compact map of the bank for a session start.

    Per section (top-level folder): the document count, the counts per layer, its index
    documents, and its canonical documents (owners of `canonical_for` keys first, with up to
    `KEYS_SHOWN` keys each; `moreCanonical` counts those not listed). Then the `RECENT_SHOWN`
    documents modified last, the inbox count, and how to drill down. Templates are left out,
    as in the full listing. The number of canonical documents listed per section is the
    largest of `CANONICAL_CAPS` whose map fits `MAP_BUDGET` compact-JSON characters, so a
    session start stays near 3,000 tokens whatever the size of the bank.
    """
    docs = _listed(snapshot)
    by_section: dict[str, list[Doc]] = {}
    for doc in docs:
        by_section.setdefault(section_of(doc.path), []).append(doc)
    recent = sorted(docs, key=lambda doc: (-doc.mtime_ns, doc.path))[:RECENT_SHOWN]
    result: dict[str, Any] = {}
    for cap in CANONICAL_CAPS:
        result = {
            "root": snapshot.root,
            "count": len(docs),
            "sections": [
                _section_entry(name, by_section[name], cap) for name in sorted(by_section)
            ],
            "recent": [
                {"path": doc.path, "title": doc.title, "modified": _modified(doc)} for doc in recent
            ],
            "inbox": sum(1 for doc in docs if doc.layer == INBOX_LAYER),
            "drillDown": DRILL_DOWN,
        }
        if len(compact_json(result)) <= MAP_BUDGET:
            break
    return result


def _section_entry(name: str, members: list[Doc], cap: int) -> dict[str, Any]:
    layers: dict[str, int] = {}
    for doc in members:
        layers[doc.layer] = layers.get(doc.layer, 0) + 1
    canonical = sorted(
        (
            doc
            for doc in members
            if doc.layer != INBOX_LAYER
            and (doc.canonical_for or doc.doc_function == CANONICAL_FUNCTION)
        ),
        key=_canonical_rank,
    )
    entry: dict[str, Any] = {
        "section": name,
        "count": len(members),
        "layers": dict(sorted(layers.items(), key=lambda item: (-item[1], item[0]))),
    }
    indexes = [doc.path for doc in members if doc.doc_function == INDEX_FUNCTION]
    if indexes:
        entry["index"] = sorted(indexes, key=lambda path: (path.count("/"), path))[:3]
    shown: list[dict[str, Any]] = []
    for doc in canonical[:cap]:
        item: dict[str, Any] = {"path": doc.path, "title": doc.title}
        if doc.canonical_for:
            item["owns"] = list(doc.canonical_for[:KEYS_SHOWN])
        shown.append(item)
    if shown:
        entry["canonical"] = shown
    if len(canonical) > cap:
        entry["moreCanonical"] = len(canonical) - cap
    return entry


def compact_json(value: Any) -> str:
    """JSON as the MCP surface sends it (issue 16): no indent, no spaces, UTF-8 unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def section_index(snapshot: Snapshot, section: str) -> dict[str, Any]:
    """`memorybank://index/{section}`: the full listing of one section (`.` = root files).

    A section the bank does not have answers an empty listing whose `hint` names the real
    ones (an error raised by a resource would reach the agent without its message).
    """
    listing = index_resource(snapshot)
    documents = [d for d in listing["documents"] if section_of(d["path"]) == section]
    result: dict[str, Any] = {
        "root": snapshot.root,
        "section": section,
        "count": len(documents),
        "documents": documents,
    }
    if not documents:
        known = sorted({section_of(d["path"]) for d in listing["documents"]})
        result["hint"] = (
            f"No section {section!r} in this bank; the sections are: {', '.join(known)}"
        )
    return result


def index_resource(snapshot: Snapshot) -> dict[str, Any]:
    """Every document except templates, by path (inbox included): the 0.1.0 `index`."""
    documents: list[dict[str, Any]] = []
    for path, doc in snapshot.docs.items():
        if doc.doc_function == TEMPLATE_FUNCTION:
            continue
        entry: dict[str, Any] = {
            "path": path,
            "title": doc.title,
            "purpose": doc.purpose,
            "docKind": doc.doc_kind,
            "layer": doc.layer,
            "status": doc.status,
        }
        if doc.canonical_for:
            entry["canonicalFor"] = list(doc.canonical_for)
        documents.append(entry)
    return {"root": snapshot.root, "count": len(documents), "documents": documents}


def frontmatter_schema(snapshot: Snapshot) -> str:
    """`memorybank://schema/frontmatter`: the first contract source ending in `frontmatter.md`.

    Verbatim text; the degraded-mode sentence without a contract (spec 01 §9.3); a plain
    sentence when the contract has no such file.
    """
    contract = snapshot.contract
    if not contract.present:
        return DEGRADED_SCHEMA
    for source in contract.source:
        if source.endswith("frontmatter.md") and source in snapshot.raw:
            return snapshot.raw[source]
    return NO_FRONTMATTER_FILE
