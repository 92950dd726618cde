"""The data of the `index` and `frontmatter-schema` resources (spec 04 §3).

Pure functions of the snapshot. The other three resources have their data next to the
feature they belong to: `health` in `mbank.health`, `inbox` in `mbank.inbox`, `journal` in
`mbank.journal`.
"""

from __future__ import annotations

from typing import Any

from mbank.projection import Snapshot

TEMPLATE_FUNCTION = "template"
NO_FRONTMATTER_FILE = "This bank has no dna/frontmatter.md."
DEGRADED_SCHEMA = (
    "This bank has no dna/frontmatter.md. The server runs in degraded mode: routing and reading "
    "only, no contract checks."
)


def index_resource(snapshot: Snapshot) -> dict[str, Any]:
    """`memorybank://index`: every document except templates, by path (inbox included)."""
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
