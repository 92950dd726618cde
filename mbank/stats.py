"""`mbank stats`: what a bank holds, as one result object and its human rendering (04 §9.3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from mbank.journal import journal_summary
from mbank.projection import Snapshot


def _counts(values: list[str]) -> dict[str, int]:
    counted = Counter(value or "(none)" for value in values)
    return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))


OFF = {"used": False, "status": "off", "reused": 0}


def bank_stats(
    snapshot: Snapshot, indexed_ms: float, cache: Mapping[str, object] = OFF
) -> dict[str, Any]:
    """The `stats --json` object (spec 04 §9.4), with what the projection cache did."""
    docs = list(snapshot.docs.values())
    contract = snapshot.contract
    edges = [edge for doc in docs for edge in doc.derived_from]
    unresolved = sum(
        1
        for edge in edges
        if not edge.external and edge.resolved is not None and edge.resolved not in snapshot.docs
    )
    return {
        "root": snapshot.root,
        "documents": len(docs),
        "bytes": sum(doc.size for doc in docs),
        "indexedMs": round(indexed_ms, 2),
        "contract": {
            "present": contract.present,
            "source": list(contract.source),
            "docKinds": list(contract.doc_kinds),
            "docFunctions": list(contract.doc_functions),
            "statuses": list(contract.statuses),
            "deliveryStatuses": list(contract.delivery_statuses),
            "decisionStatuses": list(contract.decision_statuses),
            "roots": list(contract.roots),
            "requiresDerivedFrom": contract.requires_derived_from,
            "forbidsCycles": contract.forbids_cycles,
        },
        "edges": {
            "total": len(edges),
            "withFit": sum(1 for edge in edges if edge.fit is not None),
            "external": sum(1 for edge in edges if edge.external),
            "unresolved": unresolved,
        },
        "canonical": {
            "keys": len(snapshot.owners),
            "conflicts": sum(1 for owners in snapshot.owners.values() if len(owners) > 1),
        },
        "indexLinks": len(snapshot.index_links),
        "parseErrors": [doc.path for doc in docs if doc.parse_error is not None],
        "noFrontmatter": [doc.path for doc in docs if not doc.has_frontmatter],
        "byLayer": _counts([doc.layer for doc in docs]),
        "byDocKind": _counts([doc.doc_kind for doc in docs]),
        "byDocFunction": _counts([doc.doc_function for doc in docs]),
        "journal": journal_summary(snapshot.root),
        "projectionCache": dict(cache),
    }


def _declared(values: list[str]) -> str:
    return ", ".join(sorted(values)) if values else "(not declared)"


def _listed(label: str, paths: list[str]) -> str:
    return f"{label}: {len(paths)}" + (f" -> {', '.join(paths)}" if paths else "")


def _cache_line(cache: Mapping[str, Any]) -> str:
    if cache["used"]:
        return f"projection cache: used, {cache['reused']} documents reused"
    return f"projection cache: not used ({cache['status']})"


def format_stats(result: dict[str, Any]) -> str:
    """The human rendering of `bank_stats` (spec 04 §9.3)."""
    lines = [
        f"root: {result['root']}",
        f"documents: {result['documents']}",
        f"bytes: {result['bytes'] / 1024:.1f} KB",
        f"indexed in: {result['indexedMs']:.1f} ms",
    ]
    contract = result["contract"]
    if contract["present"]:
        lines.append(f"contract: {', '.join(contract['source'])}")
        lines.append(f"  doc_kind: {_declared(contract['docKinds'])}")
        lines.append(f"  doc_function: {_declared(contract['docFunctions'])}")
        lines.append(f"  status: {_declared(contract['statuses'])}")
        lines.append(f"  roots: {', '.join(contract['roots']) or '(none)'}")
    else:
        lines.append("contract: ABSENT (degraded mode)")
    edges = result["edges"]
    lines.append(
        f"edges: {edges['total']} (with fit: {edges['withFit']}, external: {edges['external']}, "
        f"unresolved: {edges['unresolved']})"
    )
    canonical = result["canonical"]
    lines.append(f"canonical: {canonical['keys']} keys, conflicts: {canonical['conflicts']}")
    lines.append(f"index links: {result['indexLinks']}")
    lines.append(_listed("parse errors", result["parseErrors"]))
    lines.append(_listed("no frontmatter", result["noFrontmatter"]))
    for label, key in (
        ("by layer", "byLayer"),
        ("by doc_kind", "byDocKind"),
        ("by doc_function", "byDocFunction"),
    ):
        lines.append(f"{label}:")
        counts: dict[str, int] = result[key]
        width = max((len(str(count)) for count in counts.values()), default=1)
        for value, count in counts.items():
            lines.append(f"  {count:>{width}}  {value}")
    journal = result["journal"]
    journal_line = f"journal: {journal['records']} records"
    if "last" in journal:
        journal_line += f", last {journal['last']['time']} {journal['last']['tool']}"
    lines.append(journal_line)
    lines.append(_cache_line(result.get("projectionCache", OFF)))
    return "\n".join(lines) + "\n"
