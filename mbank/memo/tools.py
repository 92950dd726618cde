"""The memory's tools as plain functions over the store: values in, envelopes out (06 §11).

`server.py` adapts these to MCP; everything the model sees is decided here. Refusals are
raised as `MemoError` and become `ToolError("<code>: <message>")` at the surface.
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from mbank.memo.capabilities import can_do
from mbank.memo.decide import (
    ForgetIntent,
    Intent,
    LinkIntent,
    RememberIntent,
    UpdateIntent,
    check_chars,
    check_enum,
    check_key,
    check_tags,
    decide,
    require_nodes,
)
from mbank.memo.events import AnyEvent, Forgotten, Linked
from mbank.memo.graph import blockers_of, expand
from mbank.memo.model import (
    HISTORY_SHOWN,
    KIND_PREFIX,
    KINDS,
    MAX_QUERY_CHARS,
    MAX_SESSION_CHARS,
    NEIGHBORHOOD_TOP,
    OPEN,
    ORDERS,
    PENDING_BLOCKED_BY_SHOWN,
    PRIORITY_RANK,
    REVERSE_EDGE_NAME,
    SPILL_MAX_ITEMS,
    STATUSES,
    Edge,
    HistoryEntry,
    MemoError,
    Node,
)
from mbank.memo.reducer import MemoState
from mbank.memo.retrieval import related
from mbank.memo.salience import salience
from mbank.memo.spill import (
    InboxWriter,
    SpillRefused,
    spill_body,
    spill_items,
    spill_path,
    spill_purpose,
    spill_title,
)
from mbank.memo.store import Finish, Handler, MemoStore
from mbank.memo.timestamps import iso_millis, iso_seconds
from mbank.memo.views import node_view, pending_row, stats


def _bounded(field: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MemoError("invalid_argument", f"{field} must be an integer {low}–{high}.")


def _raise_if_error(result: list[AnyEvent] | MemoError) -> list[AnyEvent]:
    if isinstance(result, MemoError):
        raise result
    return result


def _fingerprinted(intent: Intent) -> dict[str, Any]:
    """A write's arguments as its idempotency fingerprint reads them (06 §12): the intent's
    fields, sequences as lists."""
    arguments: dict[str, Any] = msgspec.to_builtins(intent)
    return arguments


def _tuple_or_none(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """An optional list argument as the intent holds it: a tuple, or None when not given."""
    return tuple(values) if values is not None else None


def _compared_fields(node: Node) -> dict[str, Any]:
    """The fields of an item `do_update_item` compares before and after the change."""
    return {
        "status": node.status,
        "priority": node.priority,
        "title": node.title,
        "body": node.body,
        "tags": node.tags,
        "boost": node.boost,
    }


def _q(value: Any) -> str:
    """A JSON-quoted value for compensation hints, so titles with spaces survive."""
    return json.dumps(value, ensure_ascii=False)


def read_envelope(value: Any, quality: str, unit: str, now: float) -> dict[str, Any]:
    """`{value, timestamp, quality, unit}`."""
    return {"value": value, "timestamp": iso_millis(now), "quality": quality, "unit": unit}


def nothing_done(key: str, now: float) -> dict[str, Any]:
    """The envelope of a write that found nothing to do: partial, no side effects."""
    return do_envelope(
        status="partial",
        key=key,
        side_effects=[],
        hint="nothing to compensate",
        now=now,
        applied=None,
        previous=None,
    )


def do_envelope(
    *,
    status: str,
    key: str,
    side_effects: list[str],
    hint: str,
    now: float,
    applied: Any,
    previous: Any,
    **extensions: Any,
) -> dict[str, Any]:
    """`{status, idempotency_key, compensable, side_effects, compensation_hint, timestamp,
    applied_value, previous_value, …extensions}`."""
    return {
        "status": status,
        "idempotency_key": key,
        "compensable": True,
        "side_effects": side_effects,
        "compensation_hint": hint,
        "timestamp": iso_millis(now),
        "applied_value": applied,
        "previous_value": previous,
        **extensions,
    }


def _history_view(entry: HistoryEntry) -> dict[str, Any]:
    view: dict[str, Any] = {"at": iso_seconds(entry.at), "op": entry.op, "what": entry.what}
    if entry.changes is not None:
        view["changes"] = {
            k: [list(a) if isinstance(a, tuple) else a, list(b) if isinstance(b, tuple) else b]
            for k, (a, b) in entry.changes.items()
        }
    if entry.note is not None:
        view["note"] = entry.note
    if entry.edge is not None:
        view["edge"] = entry.edge
    return view


class MemoTools:
    """The eight tools (plus `do_spill` when a bank and a writer are given)."""

    def __init__(
        self,
        store: MemoStore,
        *,
        bank_root: Path | None = None,
        inbox_writer: InboxWriter | None = None,
        perf_counter: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.store = store
        self.config = store.config
        self.bank_root = bank_root
        self.inbox_writer = inbox_writer
        self.perf_counter = perf_counter

    @property
    def spill_enabled(self) -> bool:
        """`do_spill` exists only with `--bank`."""
        return self.bank_root is not None and self.inbox_writer is not None

    def _mutate(
        self, tool: str, key: str, intent: Intent | dict[str, Any], handler: Handler
    ) -> dict[str, Any]:
        """A keyed write through the store: its envelope, or the replayed one (06 §12).

        The key is checked before anything runs; the intent (or a write's plain arguments) is
        what the key's fingerprint compares.
        """
        check_key(key)
        arguments = intent if isinstance(intent, dict) else _fingerprinted(intent)
        result: dict[str, Any] = self.store.mutate(tool, key, arguments, handler)
        return result

    def _view(self, state: MemoState, node_id: str, now: float) -> dict[str, Any]:
        return node_view(state, state.nodes[node_id], now, self.config.half_life_h)

    # ------------------------------------------------------------ reads

    def read_pending(
        self,
        status: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        session: str | None = None,
        order: str = "salience",
        limit: int = 20,
    ) -> dict[str, Any]:
        """Open work (or the given statuses), ranked; only the top `limit` is serialised."""
        for s in status or ():
            check_enum("status", s, STATUSES)
        for k in kinds or ():
            check_enum("kind", k, KINDS)
        wanted_tags = set(check_tags("tags", tags))
        if session is not None:
            check_chars("session", session, MAX_SESSION_CHARS)
        check_enum("order", order, ORDERS)
        _bounded("limit", limit, 1, 100)
        statuses = set(status) if status else OPEN
        kind_set = set(kinds) if kinds else None
        half_life = self.config.half_life_h

        def reader(state: MemoState, now: float) -> dict[str, Any]:
            rows: list[tuple[float, float, int, str]] = []
            out, inc = state.out, state.inc
            for node in state.nodes.values():
                if node.status not in statuses:
                    continue
                if kind_set is not None and node.kind not in kind_set:
                    continue
                if wanted_tags and wanted_tags.isdisjoint(node.tags):
                    continue
                if session is not None and node.session != session:
                    continue
                sal = salience(node, len(out[node.id]) + len(inc[node.id]), now, half_life)
                rows.append((sal, node.touched_at, PRIORITY_RANK[node.priority], node.id))
            if order == "salience":
                top = heapq.nsmallest(limit, rows, key=lambda r: (-r[0], r[3]))
            elif order == "recent":
                top = heapq.nsmallest(limit, rows, key=lambda r: (-r[1], r[3]))
            else:
                top = heapq.nsmallest(limit, rows, key=lambda r: (r[2], -r[0], r[3]))
            items = []
            for row in top:
                view = pending_row(state, state.nodes[row[3]], now, half_life)
                view["blocked_by"] = blockers_of(state, row[3], limit=PENDING_BLOCKED_BY_SHOWN)
                items.append(view)
            value = {
                "items": items,
                "returned": len(items),
                "matched": len(rows),
                "stats": stats(state),
                "uptime_s": round(now - self.store.started_at, 3),
            }
            return read_envelope(value, "good" if rows else "degraded", "items", now)

        return self.store.read(reader)

    def read_related(
        self,
        query: str = "",
        node_id: str | None = None,
        hops: int = 2,
        limit: int = 10,
        include_closed: bool = False,
    ) -> dict[str, Any]:
        """Vector seeds plus graph diffusion around a query and/or an anchor item."""
        check_chars("query", query, MAX_QUERY_CHARS)
        _bounded("hops", hops, 0, 4)
        _bounded("limit", limit, 1, 100)

        def reader(state: MemoState, now: float) -> dict[str, Any]:
            value = related(
                state,
                query=query,
                anchor=node_id,
                hops=hops,
                limit=limit,
                include_closed=include_closed,
                now=now,
                half_life_h=self.config.half_life_h,
            )
            return read_envelope(value, "good" if value["matches"] else "degraded", "matches", now)

        return self.store.read(reader)

    def read_item(self, node_id: str, hops: int = 1) -> dict[str, Any]:
        """One item with its neighbours, transitive blockers, history and neighbourhood."""
        _bounded("hops", hops, 1, 4)

        def reader(state: MemoState, now: float) -> dict[str, Any]:
            require_nodes(state, [("node_id", node_id)])
            node = state.nodes[node_id]
            value = self._view(state, node_id, now)
            neighbours = []
            for (other, kind), edge in state.out[node_id].items():
                neighbours.append(("out", kind, other, edge.weight, edge.auto))
            for (other, kind), edge in state.inc[node_id].items():
                neighbours.append(("in", REVERSE_EDGE_NAME[kind], other, edge.weight, edge.auto))
            neighbours.sort(key=lambda n: (-n[3], n[2], n[0], n[1]))
            value["neighbors"] = _neighbour_rows(state, neighbours)
            value["blocked_by"] = [
                {"id": b, "title": state.nodes[b].title, "status": state.nodes[b].status}
                for b in blockers_of(state, node_id)
            ]
            history = list(node.history)[-HISTORY_SHOWN:]
            value["history"] = [_history_view(h) for h in history]
            value["history_truncated"] = node.history_total > len(history)
            value["history_total"] = node.history_total
            if hops > 1:
                best = expand(state, {node_id: 1.0}, hops)
                best.pop(node_id, None)
                top = heapq.nsmallest(
                    NEIGHBORHOOD_TOP, best.items(), key=lambda kv: (-kv[1], kv[0])
                )
                value["neighborhood"] = [
                    {"id": n, "title": state.nodes[n].title, "proximity": round(p, 4)}
                    for n, p in top
                ]
            return read_envelope(value, "good", "item", now)

        return self.store.read(reader)

    def can_do(self, intent: dict[str, Any], scope: Sequence[str] | None = None) -> dict[str, Any]:
        """Which tool serves this intent now; blocked routes and unroutable reasons."""
        started = self.perf_counter()

        def reader(state: MemoState, now: float) -> dict[str, Any]:
            return can_do(
                state,
                intent,
                list(scope) if scope is not None else None,
                now=now,
                half_life_h=self.config.half_life_h,
                started_at=self.store.started_at,
                spill_enabled=self.spill_enabled,
                elapsed_ms=lambda: (self.perf_counter() - started) * 1000.0,
            )

        return self.store.read(reader)

    # ------------------------------------------------------------ writes

    def do_remember(
        self,
        title: str,
        idempotency_key: str = "",
        kind: str = "task",
        body: str = "",
        tags: Sequence[str] | None = None,
        priority: str = "normal",
        status: str = "pending",
        session: str | None = None,
        related_to: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Store one item; forget cold closed items, evict at capacity, autolink."""
        intent = RememberIntent(
            title=title,
            kind=kind,
            body=body,
            tags=_tuple_or_none(tags),
            priority=priority,
            status=status,
            session=session,
            related_to=_tuple_or_none(related_to),
        )
        config = self.config

        def handler(
            state: MemoState, now: float, mint: Callable[[str], str]
        ) -> tuple[list[AnyEvent], Finish]:
            new_id = mint(kind) if kind in KIND_PREFIX else ""
            events = _raise_if_error(decide(state, intent, now, new_id, config))
            forgotten: list[dict[str, Any]] = []
            evicted: dict[str, Any] | None = None
            explicit: list[dict[str, Any]] = []
            auto: list[dict[str, Any]] = []
            for e in events:
                if isinstance(e, Forgotten):
                    gone = state.nodes[e.id]
                    if e.reason == "cold_after_ops":
                        forgotten.append(
                            {
                                "id": e.id,
                                "title": gone.title,
                                "reason": e.reason,
                                "idle_ops": e.op - gone.touched_at_op,
                            }
                        )
                    else:
                        evicted = {
                            "id": e.id,
                            "title": gone.title,
                            "reason": e.reason,
                            "max_nodes": config.max_nodes,
                        }
                elif isinstance(e, Linked):
                    entry = {"id": e.dst, "title": state.nodes[e.dst].title}
                    if e.auto:
                        auto.append({**entry, "similarity": e.weight})
                    else:
                        explicit.append(entry)

            def finish() -> dict[str, Any]:
                return do_envelope(
                    status="success",
                    key=idempotency_key,
                    side_effects=[
                        "stores one item in volatile memory",
                        f"may add up to {config.autolink_max} relates_to edges",
                        "may forget cold closed items or evict one item at capacity",
                    ],
                    hint=f"do_update_item node_id={new_id} status=dropped",
                    now=now,
                    applied={
                        "node": self._view(state, new_id, now),
                        "auto_linked": auto,
                        "explicit_links": explicit,
                        "evicted": evicted,
                        "forgotten": forgotten,
                    },
                    previous=None,
                )

            return events, finish

        return self._mutate("do_remember", idempotency_key, intent, handler)

    def do_update_item(
        self,
        node_id: str,
        idempotency_key: str = "",
        status: str | None = None,
        priority: str | None = None,
        title: str | None = None,
        body: str | None = None,
        add_tags: Sequence[str] | None = None,
        remove_tags: Sequence[str] | None = None,
        note: str | None = None,
        bump: bool = False,
    ) -> dict[str, Any]:
        """Change fields of one item, all or nothing; every call touches it."""
        intent = UpdateIntent(
            node_id=node_id,
            status=status,
            priority=priority,
            title=title,
            body=body,
            add_tags=_tuple_or_none(add_tags),
            remove_tags=_tuple_or_none(remove_tags),
            note=note,
            bump=bump,
        )

        def handler(
            state: MemoState, now: float, mint: Callable[[str], str]
        ) -> tuple[list[AnyEvent], Finish]:
            events = _raise_if_error(decide(state, intent, now, "", self.config))
            node = state.nodes[node_id]
            before = _compared_fields(node)
            noted = any(getattr(e, "note", None) for e in events)

            def finish() -> dict[str, Any]:
                after = state.nodes[node_id]
                now_values = _compared_fields(after)
                changed = [f for f in before if before[f] != now_values[f]]
                if noted:
                    changed.append("note")
                shown = [f for f in ("status", "priority", "title", "tags") if f in changed]

                def plain(v: Any) -> Any:
                    return list(v) if isinstance(v, tuple) else v

                applied = {f: plain(now_values[f]) for f in shown} or None
                previous = {f: plain(before[f]) for f in shown} or None
                return do_envelope(
                    status="success" if changed else "partial",
                    key=idempotency_key,
                    side_effects=["changes one item in volatile memory"],
                    hint=_update_hint(node_id, before, now_values, shown, "body" in changed),
                    now=now,
                    applied=applied,
                    previous=previous,
                    changed=changed,
                    node=self._view(state, node_id, now),
                )

            return events, finish

        return self._mutate("do_update_item", idempotency_key, intent, handler)

    def do_link(
        self,
        src: str,
        dst: str,
        idempotency_key: str = "",
        kind: str = "relates_to",
        weight: float = 1.0,
        remove: bool = False,
    ) -> dict[str, Any]:
        """Create (or replace) one explicit edge, or remove exactly that triple."""
        intent = LinkIntent(src=src, dst=dst, kind=kind, weight=float(weight), remove=remove)

        def handler(
            state: MemoState, now: float, mint: Callable[[str], str]
        ) -> tuple[list[AnyEvent], Finish]:
            events = _raise_if_error(decide(state, intent, now, "", self.config))
            existing = state.out[src].get((dst, kind))

            def success(side_effect: str, hint: str, applied: Any, previous: Any) -> dict[str, Any]:
                return do_envelope(
                    status="success",
                    key=idempotency_key,
                    side_effects=[side_effect],
                    hint=f"do_link src={src} dst={dst} kind={kind} {hint}",
                    now=now,
                    applied=applied,
                    previous=previous,
                )

            def finish() -> dict[str, Any]:
                if not remove:
                    # the edge as stored, and the one it replaced (its weight, auto or not)
                    stored = msgspec.to_builtins(Edge(src, dst, kind, float(weight)))
                    replaced = msgspec.to_builtins(existing) if existing is not None else None
                    effect = "adds one edge to volatile memory; touches both items"
                    return success(effect, "remove=true", stored, replaced)
                if existing is None:
                    return nothing_done(idempotency_key, now)
                return success(
                    "removes one edge from volatile memory",
                    f"weight={existing.weight}",
                    None,
                    {"edge": existing.label()},
                )

            return events, finish

        return self._mutate("do_link", idempotency_key, intent, handler)

    def do_forget(self, node_id: str, idempotency_key: str = "") -> dict[str, Any]:
        """Hard-delete one item and its edges; refused while it blocks open work."""
        intent = ForgetIntent(node_id=node_id)

        def handler(
            state: MemoState, now: float, mint: Callable[[str], str]
        ) -> tuple[list[AnyEvent], Finish]:
            events = _raise_if_error(decide(state, intent, now, "", self.config))
            node = state.nodes[node_id]
            previous = self._view(state, node_id, now)
            hint = (
                f"do_remember title={_q(node.title)} kind={node.kind} "
                f"priority={node.priority} status={node.status}"
            )

            def finish() -> dict[str, Any]:
                return do_envelope(
                    status="success",
                    key=idempotency_key,
                    side_effects=["deletes one item and every edge touching it"],
                    hint=hint,
                    now=now,
                    applied=None,
                    previous=previous,
                )

            return events, finish

        return self._mutate("do_forget", idempotency_key, intent, handler)

    def do_spill(
        self,
        idempotency_key: str = "",
        session: str | None = None,
        limit: int = 200,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Hand open items to the bank as one `_inbox/` note; the memory is not changed."""
        if not self.spill_enabled:
            raise MemoError("invalid_argument", "do_spill needs the server started with --bank.")
        check_key(idempotency_key)  # first, as in every write: before the other arguments
        if session is not None:
            check_chars("session", session, MAX_SESSION_CHARS)
        _bounded("limit", limit, 1, SPILL_MAX_ITEMS)
        arguments = {"session": session, "limit": limit, "dry_run": dry_run}
        bank_root = self.bank_root
        writer = self.inbox_writer
        assert bank_root is not None and writer is not None

        def handler(
            state: MemoState, now: float, mint: Callable[[str], str]
        ) -> tuple[list[AnyEvent], Finish]:
            items, total = spill_items(state, session, limit, now, self.config.half_life_h)
            omitted = total - len(items)

            def finish() -> dict[str, Any]:
                if not items:
                    return nothing_done(idempotency_key, now)
                path = spill_path(now, lambda p: (bank_root / p).exists())
                title = spill_title(now, session)
                body = spill_body(state, items, omitted)
                try:
                    answer = writer(
                        bank_root, path, title, spill_purpose(len(items)), body, dry_run=dry_run
                    )
                except SpillRefused as refusal:
                    raise MemoError("spill_refused", str(refusal)) from refusal
                applied: dict[str, Any] = {"path": path, "items": len(items), "omitted": omitted}
                applied["diff" if dry_run else "journal_id"] = answer
                return do_envelope(
                    status="success",
                    key=idempotency_key,
                    side_effects=[] if dry_run else ["writes one note into the bank's _inbox/"],
                    hint=(
                        "nothing to compensate (dry run)"
                        if dry_run
                        else f'bank_discard path={path} (or mbank discard {path} --reason "…")'
                    ),
                    now=now,
                    applied=applied,
                    previous=None,
                )

            return [], finish

        return self._mutate("do_spill", idempotency_key, arguments, handler)


def _neighbour_rows(
    state: MemoState, edges: list[tuple[str, str, str, float, bool]]
) -> list[dict[str, Any]]:
    """One row per neighbour (issue 19), its heaviest edge first; any other edge between the
    two items under `also`. `edges` are `(direction, relation, other, weight, auto)`, sorted."""
    rows: dict[str, dict[str, Any]] = {}
    for direction, relation, other, weight, auto in edges:
        edge = {"relation": relation, "direction": direction, "weight": weight, "auto": auto}
        row = rows.get(other)
        if row is None:
            node = state.nodes[other]
            rows[other] = {"id": other, "title": node.title, "status": node.status, **edge}
        else:
            row.setdefault("also", []).append(edge)
    return list(rows.values())


def _update_hint(
    node_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
    shown: Sequence[str],
    body_changed: bool,
) -> str:
    """`do_update_item node_id=<id> <field>=<JSON> …` restoring the previous values."""
    if not shown and not body_changed:
        return "nothing to compensate"
    parts = [f"do_update_item node_id={node_id}"]
    for field in shown:
        if field == "tags":
            old, new = set(before["tags"]), set(after["tags"])
            if old - new:
                parts.append(f"add_tags={_q(sorted(old - new))}")
            if new - old:
                parts.append(f"remove_tags={_q(sorted(new - old))}")
        else:
            parts.append(f"{field}={_q(before[field])}")
    hint = " ".join(parts)
    if body_changed:
        hint += " (body not restorable from this hint)"
    return hint
