"""What tools return for a node (06 §2.5) and the memory's counters."""

from __future__ import annotations

from typing import Any

from mbank.memo.model import Node
from mbank.memo.reducer import MemoState
from mbank.memo.salience import salience
from mbank.memo.timestamps import iso_seconds


def node_view(state: MemoState, node: Node, now: float, half_life_h: float) -> dict[str, Any]:
    """`{id, kind, title, body, status, priority, tags, session, created_at, updated_at,
    touched_at, age_hours, degree, salience}`."""
    degree = len(state.out[node.id]) + len(state.inc[node.id])
    return {
        "id": node.id,
        "kind": node.kind,
        "title": node.title,
        "body": node.body,
        "status": node.status,
        "priority": node.priority,
        "tags": list(node.tags),
        "session": node.session,
        "created_at": iso_seconds(node.created_at),
        "updated_at": iso_seconds(node.updated_at),
        "touched_at": iso_seconds(node.touched_at),
        "age_hours": round(max(0.0, now - node.touched_at) / 3600.0, 2),
        "degree": degree,
        "salience": round(salience(node, degree, now, half_life_h), 4),
    }


PENDING_BODY_CHARS = 120


def pending_row(state: MemoState, node: Node, now: float, half_life_h: float) -> dict[str, Any]:
    """A `read_pending` row (issue 19: 20 rows within 10,000 characters): the fields that rank
    and identify an item, its body cut to `PENDING_BODY_CHARS` characters (` …` when cut,
    `body_chars` the whole length); `read_item` returns everything."""
    degree = len(state.out[node.id]) + len(state.inc[node.id])
    body = node.body
    row: dict[str, Any] = {
        "id": node.id,
        "kind": node.kind,
        "title": node.title,
        "status": node.status,
        "priority": node.priority,
        "tags": list(node.tags),
        "session": node.session,
        "touched_at": iso_seconds(node.touched_at),
        "degree": degree,
        "salience": round(salience(node, degree, now, half_life_h), 4),
        "body": body if len(body) <= PENDING_BODY_CHARS else body[:PENDING_BODY_CHARS] + " …",
        "body_chars": len(body),
    }
    return row


def stats(state: MemoState) -> dict[str, Any]:
    """`{nodes, edges, by_status, by_kind}` from counters kept by the reducer."""
    return {
        "nodes": len(state.nodes),
        "edges": state.edges,
        "by_status": {k: v for k, v in sorted(state.by_status.items()) if v},
        "by_kind": {k: v for k, v in sorted(state.by_kind.items()) if v},
    }
