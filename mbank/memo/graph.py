"""Walks over the item graph: load-bearing checks, transitive blockers, diffusion (06 §8.2, §9)."""

from __future__ import annotations

import heapq

from mbank.memo.model import EXPAND_DECAY, EXPAND_FLOOR, EXPAND_LIMIT, OPEN
from mbank.memo.reducer import MemoState


def blocking_open(state: MemoState, node_id: str) -> list[str]:
    """Open nodes `node_id` blocks, plus open nodes that depend on it (one hop), sorted."""
    nodes = state.nodes
    found = {
        dst for (dst, kind) in state.out[node_id] if kind == "blocks" and nodes[dst].status in OPEN
    }
    found.update(
        src
        for (src, kind) in state.inc[node_id]
        if kind == "depends_on" and nodes[src].status in OPEN
    )
    return sorted(found)


def is_load_bearing(state: MemoState, node_id: str) -> bool:
    """True when the node blocks, or is required by, open work."""
    nodes = state.nodes
    for dst, kind in state.out[node_id]:
        if kind == "blocks" and nodes[dst].status in OPEN:
            return True
    for src, kind in state.inc[node_id]:
        if kind == "depends_on" and nodes[src].status in OPEN:
            return True
    return False


def _direct_blockers(state: MemoState, node_id: str) -> list[str]:
    out = [src for (src, kind) in state.inc[node_id] if kind == "blocks"]
    out.extend(dst for (dst, kind) in state.out[node_id] if kind == "depends_on")
    return sorted(set(out))


def blockers_of(state: MemoState, node_id: str, limit: int | None = None) -> list[str]:
    """Open blockers reached through incoming `blocks` / outgoing `depends_on`, transitively.

    Iterative DFS in discovery order; the walk continues only through open nodes (a closed
    blocker no longer blocks, so what blocks it does not block us through it).
    """
    nodes = state.nodes
    seen = {node_id}
    found: list[str] = []
    stack = list(reversed(_direct_blockers(state, node_id)))
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if nodes[current].status not in OPEN:
            continue
        found.append(current)
        if limit is not None and len(found) >= limit:
            break
        stack.extend(reversed([n for n in _direct_blockers(state, current) if n not in seen]))
    return found


def expand(
    state: MemoState,
    seeds: dict[str, float],
    hops: int,
    *,
    decay: float = EXPAND_DECAY,
    floor: float = EXPAND_FLOOR,
    limit: int = EXPAND_LIMIT,
    keep: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """Breadth-first diffusion keeping each node's best path score, never the sum.

    Each layer propagates the scores its frontier had when the layer began, so the result does
    not depend on the order neighbours are visited. Returns the top `limit` by score (then id),
    plus every node in `keep` (the exact matches).
    """
    best = dict(seeds)
    frontier = dict(seeds)
    neighbours = state.neighbours
    get = best.get
    for _ in range(hops):
        if not frontier:
            break
        improved: dict[str, float] = {}
        for node_id, score in frontier.items():
            base = score * decay
            if base <= floor:
                continue
            for weight, other in neighbours(node_id):
                value = base * weight
                if value <= floor:
                    break  # heaviest first: every later edge is lighter still
                if value > get(other, 0.0):
                    best[other] = value
                    improved[other] = value
        frontier = improved
    return top_scores(best, limit, keep)


def top_scores(scores: dict[str, float], limit: int, keep: frozenset[str]) -> dict[str, float]:
    """The `limit` best by score then id, plus every node of `keep` that has a score."""
    if len(scores) <= limit:
        return scores
    cut = heapq.nlargest(limit, scores.values())[-1]
    above = [(n, s) for n, s in scores.items() if s > cut]
    ties = sorted(n for n, s in scores.items() if s == cut)
    result = dict(above)
    for n in ties[: limit - len(above)]:
        result[n] = cut
    for node_id in keep:
        if node_id in scores:
            result[node_id] = scores[node_id]
    return result
