"""`decide(state, intent, now, new_id) -> list[Event] | MemoError` (06 §3.3), pure.

Every field of the intent is validated first; then the whole consequence of the call
(forgetting sweep, eviction, links, autolinks) is computed as events. Nothing here reads a
clock, mints an id or touches I/O: `now` and `new_id` arrive as arguments.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import msgspec

from mbank.memo.events import AnyEvent, Forgotten, Linked, Remembered, Unlinked, Updated
from mbank.memo.graph import blocking_open, is_load_bearing
from mbank.memo.model import (
    AUTOLINK_BUDGET,
    AUTOLINK_RESCORED,
    DEFAULT_AUTOLINK_THRESHOLD,
    EDGE_KINDS,
    EVICTION_SAMPLE,
    ID_RE,
    KINDS,
    MAX_BODY_BYTES,
    MAX_KEY_CHARS,
    MAX_NOTE_CHARS,
    MAX_RELATED_TO,
    MAX_SESSION_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TITLE_CHARS,
    PRIORITIES,
    STATUSES,
    MemoConfig,
    MemoError,
    normalise_tags,
    volatile_not_found,
)
from mbank.memo.reducer import MemoState, searchable_text
from mbank.memo.salience import salience


class RememberIntent(msgspec.Struct, frozen=True):
    """`do_remember` arguments (06 §11.6)."""

    title: str
    kind: str = "task"
    body: str = ""
    tags: tuple[str, ...] | None = None
    priority: str = "normal"
    status: str = "pending"
    session: str | None = None
    related_to: tuple[str, ...] | None = None


class UpdateIntent(msgspec.Struct, frozen=True):
    """`do_update_item` arguments (06 §11.7)."""

    node_id: str
    status: str | None = None
    priority: str | None = None
    title: str | None = None
    body: str | None = None
    add_tags: tuple[str, ...] | None = None
    remove_tags: tuple[str, ...] | None = None
    note: str | None = None
    bump: bool = False


class LinkIntent(msgspec.Struct, frozen=True):
    """`do_link` arguments (06 §11.8)."""

    src: str
    dst: str
    kind: str = "relates_to"
    weight: float = 1.0
    remove: bool = False


class ForgetIntent(msgspec.Struct, frozen=True):
    """`do_forget` arguments (06 §11.9)."""

    node_id: str


Intent = RememberIntent | UpdateIntent | LinkIntent | ForgetIntent


# ---------------------------------------------------------------- validation


def check_enum(field: str, value: str, allowed: Sequence[str]) -> None:
    """`invalid_enum_value` unless `value` is one of `allowed`."""
    if value not in allowed:
        raise MemoError(
            "invalid_enum_value",
            f'{field} "{value}" is not one of {", ".join(allowed)}.',
        )


def check_chars(field: str, value: str, limit: int) -> None:
    """`field_too_long` in characters."""
    if len(value) > limit:
        raise MemoError(
            "field_too_long",
            f"{field} is {len(value)} characters; the limit is {limit} characters.",
        )


def check_title(title: str) -> str:
    """Stripped title, 1–200 characters, never blank."""
    stripped = title.strip()
    if not stripped:
        raise MemoError("invalid_argument", "title must not be blank.")
    check_chars("title", stripped, MAX_TITLE_CHARS)
    return stripped


def check_body(body: str) -> None:
    """`field_too_long` in UTF-8 bytes."""
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise MemoError(
            "field_too_long",
            f"body is {size} bytes (UTF-8); the limit is {MAX_BODY_BYTES} bytes.",
        )


def check_tags(field: str, tags: Sequence[str] | None) -> tuple[str, ...]:
    """At most 20 tags of at most 40 characters; returns them normalised."""
    if not tags:
        return ()
    if len(tags) > MAX_TAGS:
        raise MemoError(
            "field_too_long", f"{field} has {len(tags)} tags; the limit is {MAX_TAGS} tags."
        )
    for tag in tags:
        if len(tag.strip()) > MAX_TAG_CHARS:
            raise MemoError(
                "field_too_long",
                f'tag "{tag.strip()[:20]}…" is {len(tag.strip())} characters; '
                f"the limit is {MAX_TAG_CHARS} characters.",
            )
    return normalise_tags(tags)


def check_id(field: str, value: str) -> None:
    """`invalid_argument` for a malformed item id."""
    if not ID_RE.match(value):
        raise MemoError(
            "invalid_argument",
            f'{field} "{value[:40]}" is not an item id (a kind letter t, b, d, q, i or a, '
            f"an underscore, then 10 lower-case hex digits).",
        )


def check_key(key: str) -> None:
    """The idempotency key is at most 200 characters."""
    check_chars("idempotency_key", key, MAX_KEY_CHARS)


def require_nodes(state: MemoState, field_ids: Sequence[tuple[str, str]]) -> None:
    """Every id well formed, then every id present (one `node_not_found` naming all missing)."""
    for field, value in field_ids:
        check_id(field, value)
    missing = [value for _, value in field_ids if value not in state.nodes]
    if missing:
        raise volatile_not_found(list(dict.fromkeys(missing)))


# ---------------------------------------------------------------- decide


def decide(
    state: MemoState,
    intent: Intent,
    now: float,
    new_id: str,
    config: MemoConfig | None = None,
) -> list[AnyEvent] | MemoError:
    """Validate the intent, then return every event of the call (or the refusal)."""
    config = config or MemoConfig()
    try:
        if isinstance(intent, RememberIntent):
            return _remember(state, intent, now, new_id, config)
        if isinstance(intent, UpdateIntent):
            return _update(state, intent, now)
        if isinstance(intent, LinkIntent):
            return _link(state, intent, now)
        return _forget(state, intent, now)
    except MemoError as error:
        return error


def autolink_threshold(state: MemoState, config: MemoConfig) -> float:
    """`--autolink-threshold` > the embedder's threshold > 0.15."""
    if config.autolink_threshold is not None:
        return config.autolink_threshold
    return getattr(state.embedder, "autolink_threshold", DEFAULT_AUTOLINK_THRESHOLD)


def _cold_sweep(
    state: MemoState, op: int, config: MemoConfig, keep: set[str]
) -> list[tuple[str, int]]:
    """Cold, non-load-bearing closed nodes, oldest first, at most `forget_batch` (06 §10.1)."""
    chosen: list[tuple[str, int]] = []
    if config.forget_batch <= 0:
        return chosen
    nodes = state.nodes
    for node_id in state.closed_order:
        idle = op - nodes[node_id].touched_at_op
        if idle < config.cold_after_ops:
            break
        if node_id in keep or is_load_bearing(state, node_id):
            continue
        chosen.append((node_id, idle))
        if len(chosen) >= config.forget_batch:
            break
    return chosen


def choose_eviction(
    state: MemoState, now: float, config: MemoConfig, excluded: set[str]
) -> str | None:
    """Closed first (least recently touched), else the lowest-salience of 64 open (06 §10.2)."""
    for node_id in state.closed_order:
        if node_id not in excluded and not is_load_bearing(state, node_id):
            return node_id
    sample: list[str] = []
    for node_id in state.open_order:
        if node_id in excluded or is_load_bearing(state, node_id):
            continue
        sample.append(node_id)
        if len(sample) >= EVICTION_SAMPLE:
            break
    if not sample:
        return None
    nodes = state.nodes
    return min(
        sample,
        key=lambda n: (salience(nodes[n], state.degree(n), now, config.half_life_h), n),
    )


def _remember(
    state: MemoState, intent: RememberIntent, now: float, new_id: str, config: MemoConfig
) -> list[AnyEvent]:
    title = check_title(intent.title)
    check_enum("kind", intent.kind, KINDS)
    check_body(intent.body)
    tags = check_tags("tags", intent.tags)
    check_enum("priority", intent.priority, PRIORITIES)
    check_enum("status", intent.status, STATUSES)
    if intent.session is not None:
        check_chars("session", intent.session, MAX_SESSION_CHARS)
    related = list(dict.fromkeys(intent.related_to or ()))
    if intent.related_to and len(intent.related_to) > MAX_RELATED_TO:
        raise MemoError(
            "field_too_long",
            f"related_to has {len(intent.related_to)} ids; the limit is {MAX_RELATED_TO} ids.",
        )
    require_nodes(state, [("related_to", r) for r in related])

    op = state.op + 1
    keep = set(related)
    events: list[AnyEvent] = []
    gone: set[str] = set()
    for node_id, _idle in _cold_sweep(state, op, config, keep):
        events.append(Forgotten(op=op, at=now, id=node_id, reason="cold_after_ops"))
        gone.add(node_id)
    if len(state.nodes) - len(gone) + 1 > config.max_nodes:
        victim = choose_eviction(state, now, config, keep | gone)
        if victim is None:
            raise MemoError(
                "memory_full",
                f"memory is full (max_nodes {config.max_nodes}) and every candidate for "
                "eviction blocks open work; close or forget items first",
            )
        events.append(Forgotten(op=op, at=now, id=victim, reason="max_nodes_reached"))
        gone.add(victim)

    events.append(
        Remembered(
            op=op,
            at=now,
            id=new_id,
            kind=intent.kind,
            title=title,
            body=intent.body,
            tags=tags,
            priority=intent.priority,
            status=intent.status,
            session=intent.session,
        )
    )
    for target in related:
        events.append(
            Linked(op=op, at=now, src=new_id, dst=target, kind="relates_to", weight=1.0, auto=False)
        )
    if config.autolink_max > 0:
        vector = state.vectorize(searchable_text(title, intent.body, tags, intent.kind))
        threshold = autolink_threshold(state, config)
        scored = [
            (sim, n)
            for n, sim in state.index.candidates(vector, AUTOLINK_RESCORED, AUTOLINK_BUDGET).items()
            if sim >= threshold and n not in keep and n not in gone
        ]
        best = heapq.nsmallest(config.autolink_max, scored, key=lambda pair: (-pair[0], pair[1]))
        for sim, n in best:
            events.append(
                Linked(
                    op=op,
                    at=now,
                    src=new_id,
                    dst=n,
                    kind="relates_to",
                    weight=round(sim, 4),
                    auto=True,
                )
            )
    return events


def _update(state: MemoState, intent: UpdateIntent, now: float) -> list[AnyEvent]:
    require_nodes(state, [("node_id", intent.node_id)])
    if intent.status is not None:
        check_enum("status", intent.status, STATUSES)
    if intent.priority is not None:
        check_enum("priority", intent.priority, PRIORITIES)
    title = check_title(intent.title) if intent.title is not None else None
    if intent.body is not None:
        check_body(intent.body)
    add = check_tags("add_tags", intent.add_tags)
    remove = check_tags("remove_tags", intent.remove_tags)
    note = None
    if intent.note is not None:
        check_chars("note", intent.note, MAX_NOTE_CHARS)
        note = intent.note.strip() or None
    node = state.nodes[intent.node_id]
    resulting = set(node.tags) - set(remove) | set(add)
    if len(resulting) > MAX_TAGS:
        raise MemoError(
            "field_too_long",
            f"the item would carry {len(resulting)} tags; the limit is {MAX_TAGS} tags.",
        )
    return [
        Updated(
            op=state.op + 1,
            at=now,
            id=intent.node_id,
            status=intent.status,
            priority=intent.priority,
            title=title,
            body=intent.body,
            tags_add=add,
            tags_remove=remove,
            note=note,
            bump=intent.bump,
        )
    ]


def _link(state: MemoState, intent: LinkIntent, now: float) -> list[AnyEvent]:
    check_id("src", intent.src)
    check_id("dst", intent.dst)
    check_enum("kind", intent.kind, EDGE_KINDS)
    if not (math.isfinite(intent.weight) and 0.0 <= intent.weight <= 1.0):
        raise MemoError(
            "invalid_argument",
            f"weight {intent.weight} is outside 0–1; it is refused, not clamped.",
        )
    require_nodes(state, [("src", intent.src), ("dst", intent.dst)])
    if intent.src == intent.dst:
        raise MemoError("self_link", f"an item cannot be linked to itself ({intent.src}).")
    op = state.op + 1
    if intent.remove:
        if (intent.dst, intent.kind) not in state.out[intent.src]:
            return []
        return [Unlinked(op=op, at=now, src=intent.src, dst=intent.dst, kind=intent.kind)]
    return [
        Linked(
            op=op,
            at=now,
            src=intent.src,
            dst=intent.dst,
            kind=intent.kind,
            weight=float(intent.weight),
            auto=False,
        )
    ]


def _forget(state: MemoState, intent: ForgetIntent, now: float) -> list[AnyEvent]:
    require_nodes(state, [("node_id", intent.node_id)])
    blocking = blocking_open(state, intent.node_id)
    if blocking:
        raise MemoError(
            "node_still_load_bearing",
            f"{intent.node_id} blocks or is required by open items {', '.join(blocking)}; "
            "remove those links first (do_link … remove=true), or close those items.",
        )
    return [Forgotten(op=state.op + 1, at=now, id=intent.node_id, reason="explicit")]
