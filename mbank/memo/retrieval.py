"""`read_related`: vector seeds plus graph diffusion, best path not sum (06 §8)."""

from __future__ import annotations

import heapq
from typing import Any

from mbank.memo.decide import require_nodes
from mbank.memo.graph import expand, top_scores
from mbank.memo.index import unpack
from mbank.memo.model import OPEN, SEED_BUDGET, SEED_MAX, SEED_RESCORED
from mbank.memo.reducer import MemoState, normalise_title
from mbank.memo.salience import salience
from mbank.memo.views import node_view


def similarity_seeds(
    state: MemoState, vector: dict[int, float], exclude: str | None = None
) -> dict[str, float]:
    """Candidates above the embedder's seed floor, the best `SEED_MAX` (ties by id)."""
    floor = state.embedder.seed_floor
    scored = {
        n: s
        for n, s in state.index.candidates(vector, SEED_RESCORED, SEED_BUDGET).items()
        if s > floor
    }
    if exclude is not None:
        scored.pop(exclude, None)
    return top_scores(scored, SEED_MAX, frozenset())


def related(
    state: MemoState,
    *,
    query: str,
    anchor: str | None,
    hops: int,
    limit: int,
    include_closed: bool,
    now: float,
    half_life_h: float,
) -> dict[str, Any]:
    """The value of `read_related`: `{matches, seeds, query, anchor, embedder}`."""
    if anchor is not None:
        require_nodes(state, [("node_id", anchor)])
    sims: dict[str, float] = {}
    exact: set[str] = set()
    if query.strip():
        sims = similarity_seeds(state, state.embedder.embed(query))
        exact = set(state.titles.get(normalise_title(query), ()))
        for node_id in exact:
            sims[node_id] = 1.0
    elif anchor is not None:
        sims = similarity_seeds(state, unpack(state.nodes[anchor].vector), exclude=anchor)
    seeds = dict(sims)
    if anchor is not None:
        seeds[anchor] = 1.0
    value: dict[str, Any] = {
        "matches": [],
        "seeds": len(sims),
        "query": query,
        "anchor": anchor,
        "embedder": state.embedder.signature,
    }
    if not seeds:
        return value
    best = expand(state, seeds, hops, keep=frozenset(exact))
    nodes = state.nodes
    rows: list[tuple[bool, float, str, float, float]] = []
    for node_id, graph in best.items():
        if node_id == anchor:
            continue
        node = nodes[node_id]
        if not include_closed and node.status not in OPEN:
            continue
        semantic = sims.get(node_id, 0.0)
        sal = salience(node, state.degree(node_id), now, half_life_h)
        score = 0.55 * semantic + 0.25 * graph + 0.20 * min(1.0, sal)
        rows.append((node_id in exact, score, node_id, semantic, graph))
    top = heapq.nsmallest(limit, rows, key=lambda r: (not r[0], -r[1], r[2]))
    matches = []
    for is_exact, score, node_id, semantic, graph in top:
        view = node_view(state, nodes[node_id], now, half_life_h)
        match: dict[str, Any] = {
            "score": round(score, 4),
            "semantic": round(semantic, 4),
            "graph": round(graph, 4),
            "via": "vector" if semantic >= graph else "graph",
        }
        if is_exact:
            match["exact"] = True
        view["match"] = match
        matches.append(view)
    value["matches"] = matches
    return value
