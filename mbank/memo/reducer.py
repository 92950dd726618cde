"""The state and the pure reducer: `state = reduce(apply, events, EMPTY)` (06 §3).

`apply` mutates a private state object in place for speed, but reads nothing except the state
and the event: no clock, no ids, no randomness. Given events produced by `decide` it cannot
fail. The embedder is part of the state's configuration (a pure function of text).
"""

from __future__ import annotations

import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Iterable
from typing import Any

from mbank.memo.embedder import Embedder
from mbank.memo.events import AnyEvent, Forgotten, Linked, Remembered, Unlinked, Updated
from mbank.memo.index import DenseIndex, InvertedIndex, VectorIndex, pack
from mbank.memo.model import (
    BOOST_MAX,
    BOOST_STEP,
    OPEN,
    SEARCHABLE_BODY_CHARS,
    Edge,
    HistoryEntry,
    Node,
    normalise_tags,
)

_VECTOR_CACHE_MAX = 8


def searchable_text(title: str, body: str, tags: tuple[str, ...], kind: str) -> str:
    """Title twice, the first 500 body characters, the tags, the kind (06 §2.4)."""
    return "\n".join((title, title, body[:SEARCHABLE_BODY_CHARS], " ".join(tags), kind))


def normalise_title(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the key of the exact-title tier (06 §8.1)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class MemoState:
    """Nodes, mirrored adjacency, the vector index and the orders eviction walks."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.index: VectorIndex = InvertedIndex() if embedder.sparse else DenseIndex()
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, dict[tuple[str, str], Edge]] = {}
        self.inc: dict[str, dict[tuple[str, str], Edge]] = {}
        self.op = 0
        self.edges = 0
        # Both orders are by touched_at_op: a touch moves a node to the end.
        self.open_order: OrderedDict[str, None] = OrderedDict()
        self.closed_order: OrderedDict[str, None] = OrderedDict()
        self.by_status: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.titles: dict[str, set[str]] = {}
        self.forgotten_total = 0
        self.evicted_total = 0
        self._vectors: dict[str, dict[int, float]] = {}
        self._neighbours: dict[str, list[tuple[float, str]]] = {}

    def vectorize(self, text: str) -> dict[int, float]:
        """The embedder's vector for `text`, memoised for the decide → apply round trip."""
        vec = self._vectors.get(text)
        if vec is None:
            vec = self.embedder.embed(text)
            if len(self._vectors) >= _VECTOR_CACHE_MAX:
                self._vectors.clear()
            self._vectors[text] = vec
        return vec

    def neighbours(self, node_id: str) -> list[tuple[float, str]]:
        """`(weight, other)` over edges of every kind in both directions, heaviest first.

        A derived cache (never compared, never cloned), dropped by `apply` for both endpoints
        of any edge change; diffusion walks it and stops at the first edge too light to pass.
        """
        cached = self._neighbours.get(node_id)
        if cached is None:
            cached = [(e.weight, dst) for (dst, _), e in self.out[node_id].items()]
            cached.extend((e.weight, src) for (src, _), e in self.inc[node_id].items())
            cached.sort(key=lambda pair: -pair[0])
            self._neighbours[node_id] = cached
        return cached

    def forget_neighbours(self, *node_ids: str) -> None:
        """Invalidate the neighbour cache of these nodes."""
        for node_id in node_ids:
            self._neighbours.pop(node_id, None)

    def degree(self, node_id: str) -> int:
        """Incoming plus outgoing edges of every kind, auto included."""
        return len(self.out[node_id]) + len(self.inc[node_id])

    def clone(self) -> MemoState:
        """An independent deep copy (the checkpoint of 06 §3.3)."""
        twin = MemoState.__new__(MemoState)
        twin.embedder = self.embedder
        twin.index = self.index.clone()
        twin.nodes = {k: n.copy() for k, n in self.nodes.items()}
        twin.out = {k: dict(v) for k, v in self.out.items()}
        twin.inc = {k: dict(v) for k, v in self.inc.items()}
        twin.op = self.op
        twin.edges = self.edges
        twin.open_order = OrderedDict(self.open_order)
        twin.closed_order = OrderedDict(self.closed_order)
        twin.by_status = Counter(self.by_status)
        twin.by_kind = Counter(self.by_kind)
        twin.titles = {k: set(v) for k, v in self.titles.items()}
        twin.forgotten_total = self.forgotten_total
        twin.evicted_total = self.evicted_total
        twin._vectors = {}
        twin._neighbours = {}
        return twin

    def canonical(self) -> dict[str, Any]:
        """Everything that defines the state, as plain comparable values."""
        return {
            "nodes": {k: n.canonical() for k, n in sorted(self.nodes.items())},
            "out": {k: sorted(v.items()) for k, v in sorted(self.out.items())},
            "inc": {k: sorted(v.items()) for k, v in sorted(self.inc.items())},
            "index": self.index.canonical(),
            "op": self.op,
            "edges": self.edges,
            "open_order": list(self.open_order),
            "closed_order": list(self.closed_order),
            "by_status": {k: v for k, v in sorted(self.by_status.items()) if v},
            "by_kind": {k: v for k, v in sorted(self.by_kind.items()) if v},
            "titles": {k: sorted(v) for k, v in sorted(self.titles.items())},
            "forgotten_total": self.forgotten_total,
            "evicted_total": self.evicted_total,
        }


def _touch(state: MemoState, node: Node, at: float, op: int) -> None:
    node.touched_at = at
    node.touched_at_op = op
    order = state.open_order if node.status in OPEN else state.closed_order
    order.move_to_end(node.id)


def _record(node: Node, entry: HistoryEntry) -> None:
    node.history.append(entry)
    node.history_total += 1


def _index_node(state: MemoState, node: Node) -> None:
    node.vector = pack(
        state.vectorize(searchable_text(node.title, node.body, node.tags, node.kind))
    )
    state.index.add(node.id, node.vector)
    state.titles.setdefault(normalise_title(node.title), set()).add(node.id)


def _unindex_node(state: MemoState, node: Node) -> None:
    state.index.remove(node.id, node.vector)
    key = normalise_title(node.title)
    ids = state.titles.get(key)
    if ids is not None:
        ids.discard(node.id)
        if not ids:
            del state.titles[key]


def _apply_remembered(state: MemoState, e: Remembered) -> None:
    at = e.at
    node = Node(
        e.id, e.kind, e.title, e.body, e.status, e.priority, e.tags, e.session, at, at, at, e.op
    )
    state.nodes[e.id] = node
    state.out[e.id] = {}
    state.inc[e.id] = {}
    (state.open_order if e.status in OPEN else state.closed_order)[e.id] = None
    state.by_status[e.status] += 1
    state.by_kind[e.kind] += 1
    _index_node(state, node)
    _record(node, HistoryEntry(at=e.at, op=e.op, what="created"))


def _apply_linked(state: MemoState, e: Linked) -> None:
    key = (e.dst, e.kind)
    existing = state.out[e.src].get(key)
    if existing is not None and e.auto and not existing.auto:
        return  # an explicit edge is never replaced by an auto edge
    edge = Edge(e.src, e.dst, e.kind, e.weight, e.auto)
    state.forget_neighbours(e.src, e.dst)
    if existing is None:
        state.edges += 1
    state.out[e.src][key] = edge
    state.inc[e.dst][(e.src, e.kind)] = edge
    src = state.nodes[e.src]
    entry = HistoryEntry(at=e.at, op=e.op, what="linked", edge=edge.label())
    _record(src, entry)
    if not e.auto:
        dst = state.nodes[e.dst]
        _record(dst, entry)
        _touch(state, src, e.at, e.op)
        _touch(state, dst, e.at, e.op)


def _apply_unlinked(state: MemoState, e: Unlinked) -> None:
    edge = state.out[e.src].pop((e.dst, e.kind), None)
    if edge is None:
        return
    del state.inc[e.dst][(e.src, e.kind)]
    state.forget_neighbours(e.src, e.dst)
    state.edges -= 1
    entry = HistoryEntry(at=e.at, op=e.op, what="unlinked", edge=edge.label())
    _record(state.nodes[e.src], entry)
    _record(state.nodes[e.dst], entry)


def update_changes(node: Node, e: Updated) -> dict[str, tuple[Any, Any]]:
    """The `{field: (from, to)}` an update makes to a node (note and no-ops excluded)."""
    changes: dict[str, tuple[Any, Any]] = {}
    if e.status is not None and e.status != node.status:
        changes["status"] = (node.status, e.status)
    if e.priority is not None and e.priority != node.priority:
        changes["priority"] = (node.priority, e.priority)
    if e.title is not None and e.title != node.title:
        changes["title"] = (node.title, e.title)
    if e.body is not None and e.body != node.body:
        changes["body"] = (node.body, e.body)
    if e.tags_add or e.tags_remove:
        removed = set(e.tags_remove)
        tags = normalise_tags([t for t in node.tags if t not in removed] + list(e.tags_add))
        if tags != node.tags:
            changes["tags"] = (node.tags, tags)
    if e.bump:
        boost = round(min(BOOST_MAX, node.boost + BOOST_STEP), 10)
        if boost != node.boost:
            changes["boost"] = (node.boost, boost)
    return changes


def _apply_updated(state: MemoState, e: Updated) -> None:
    node = state.nodes[e.id]
    changes = update_changes(node, e)
    reindex = "title" in changes or "body" in changes or "tags" in changes
    if reindex:
        _unindex_node(state, node)
    if "status" in changes:
        old, new = changes["status"]
        state.by_status[old] -= 1
        state.by_status[new] += 1
        if (old in OPEN) != (new in OPEN):
            (state.open_order if old in OPEN else state.closed_order).pop(node.id)
            (state.open_order if new in OPEN else state.closed_order)[node.id] = None
        node.status = new
    if "priority" in changes:
        node.priority = changes["priority"][1]
    if "title" in changes:
        node.title = changes["title"][1]
    if "body" in changes:
        node.body = changes["body"][1]
    if "tags" in changes:
        node.tags = changes["tags"][1]
    if "boost" in changes:
        node.boost = changes["boost"][1]
    if reindex:
        _index_node(state, node)
    if changes or e.note:
        node.updated_at = e.at
        history_changes = {k: v for k, v in changes.items() if k != "body"}
        if "body" in changes:
            history_changes["body"] = (len(changes["body"][0]), len(changes["body"][1]))
        what = "bumped" if set(changes) == {"boost"} and not e.note else "updated"
        _record(
            node,
            HistoryEntry(at=e.at, op=e.op, what=what, changes=history_changes or None, note=e.note),
        )
    _touch(state, node, e.at, e.op)


def _apply_forgotten(state: MemoState, e: Forgotten) -> None:
    node = state.nodes.pop(e.id)
    state.forget_neighbours(e.id)
    for (dst, kind), _ in state.out.pop(e.id).items():
        del state.inc[dst][(e.id, kind)]
        state.forget_neighbours(dst)
        state.edges -= 1
    for (src, kind), _ in state.inc.pop(e.id).items():
        del state.out[src][(e.id, kind)]
        state.forget_neighbours(src)
        state.edges -= 1
    _unindex_node(state, node)
    (state.open_order if node.status in OPEN else state.closed_order).pop(e.id)
    state.by_status[node.status] -= 1
    state.by_kind[node.kind] -= 1
    if e.reason == "cold_after_ops":
        state.forgotten_total += 1
    elif e.reason == "max_nodes_reached":
        state.evicted_total += 1


def apply(state: MemoState, event: AnyEvent) -> MemoState:
    """Fold one event into the state (in place) and return it."""
    if isinstance(event, Remembered):
        _apply_remembered(state, event)
    elif isinstance(event, Linked):
        _apply_linked(state, event)
    elif isinstance(event, Unlinked):
        _apply_unlinked(state, event)
    elif isinstance(event, Updated):
        _apply_updated(state, event)
    else:
        _apply_forgotten(state, event)
    if event.op > state.op:
        state.op = event.op
    return state


def fold(events: Iterable[AnyEvent], start: MemoState) -> MemoState:
    """`reduce(apply, events, start)`; `start` is consumed (pass a clone to keep it)."""
    state = start
    for event in events:
        state = apply(state, event)
    return state
