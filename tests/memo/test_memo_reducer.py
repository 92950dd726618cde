"""Events, decide and the pure reducer (06 §3): fold(log) equals the live state."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memo_fixtures import FakeClock, remember, seeded_ids

from mbank.memo.decide import LinkIntent, RememberIntent, UpdateIntent, decide
from mbank.memo.events import Forgotten, Linked, Remembered, Updated
from mbank.memo.model import HISTORY_MAXLEN, MemoConfig, MemoError
from mbank.memo.reducer import MemoState, apply
from mbank.memo.salience import salience
from mbank.memo.store import MemoStore
from mbank.memo.tools import MemoTools


def _fresh(**options: object) -> tuple[MemoTools, FakeClock]:
    clock = FakeClock()
    store = MemoStore(MemoConfig(**options), clock=clock, new_id=seeded_ids())  # type: ignore[arg-type]
    return MemoTools(store), clock


def test_folding_the_log_from_empty_equals_the_live_state(tools: MemoTools) -> None:
    a = remember(tools, "Fix flaky login test")
    b = remember(tools, "Login test flakes on CI", kind="blocker", related_to=[a])
    tools.do_link(b, a, "", kind="blocks")
    tools.do_update_item(a, "", status="active", note="started", add_tags=["ci"])
    tools.do_link(b, a, "", kind="blocks", remove=True)
    tools.do_forget(b, "")
    assert tools.store.replay_log().canonical() == tools.store.state.canonical()


def test_decide_is_pure_same_inputs_give_the_same_events(tools: MemoTools) -> None:
    remember(tools, "Cache layer returns stale entries")
    state = tools.store.state
    intent = RememberIntent(title="Stale cache entries in the cache layer", tags=("Perf",))
    first = decide(state, intent, 1000.0, "t_00000000aa")
    second = decide(state, intent, 1000.0, "t_00000000aa")
    assert first == second
    assert isinstance(first, list)
    assert isinstance(first[0], Remembered) and first[0].tags == ("perf",)
    assert any(isinstance(e, Linked) and e.auto for e in first)


def test_decide_returns_a_refusal_value_and_no_events(tools: MemoTools) -> None:
    state = tools.store.state
    result = decide(state, RememberIntent(title="   "), 1000.0, "t_00000000aa")
    assert isinstance(result, MemoError) and result.code == "invalid_argument"


def test_every_event_of_one_call_carries_the_same_op(tools: MemoTools) -> None:
    for i in range(4):
        remember(tools, f"Retry storm in the webhook handler {i}")
    events = decide(
        tools.store.state, RememberIntent(title="Webhook handler retry storm"), 5.0, "t_00000000ab"
    )
    assert isinstance(events, list) and len(events) > 1
    assert {e.op for e in events} == {tools.store.state.op + 1}
    assert {e.at for e in events} == {5.0}


def test_op_clock_ticks_once_per_applied_call_never_on_reads_replays_or_refusals(
    tools: MemoTools,
) -> None:
    a = remember(tools, "Slow query in report builder")
    remember(tools, "Report builder slow query again")  # autolinks: still one tick
    assert tools.store.state.op == 2
    tools.read_pending()
    tools.read_related("slow query")
    tools.read_item(a)
    tools.can_do({"goal": "what is left"})
    tools.do_update_item(a, "k1", bump=True)
    tools.do_update_item(a, "k1", bump=True)  # replay
    with pytest.raises(MemoError):
        tools.do_update_item(a, "", priority="urgent")
    assert tools.store.state.op == 3


def test_touch_rules_per_event(tools: MemoTools, clock: FakeClock) -> None:
    old = remember(tools, "Memory leak in image resizer")
    clock.advance(60)
    new = remember(tools, "Image resizer memory leak on large input")
    state = tools.store.state
    assert state.out[new][(old, "relates_to")].auto is True
    assert state.nodes[old].touched_at_op == 1  # the older end of an auto link is not touched
    assert state.nodes[new].touched_at_op == 2
    clock.advance(60)
    tools.do_link(new, old, "", kind="depends_on")  # explicit: both ends touched
    assert state.nodes[old].touched_at_op == 3 and state.nodes[new].touched_at_op == 3
    assert state.nodes[old].touched_at == clock.now
    clock.advance(60)
    tools.do_link(new, old, "", kind="depends_on", remove=True)  # unlink touches nothing
    assert state.nodes[old].touched_at_op == 3
    tools.do_update_item(old, "")  # an update that changes nothing still touches
    assert state.nodes[old].touched_at_op == 5 and state.nodes[old].touched_at == clock.now
    clock.advance(60)
    tools.read_item(old)
    assert state.nodes[old].touched_at != clock.now


def test_an_explicit_edge_is_never_replaced_by_an_auto_edge() -> None:
    tools, _ = _fresh()
    a = remember(tools, "Deadlock under load in database pool")
    state = tools.store.state
    new = "t_00000000bb"
    fields = {"kind": "task", "title": "x", "body": "", "tags": (), "priority": "normal"}
    apply(state, Remembered(op=2, at=1.0, id=new, status="pending", session=None, **fields))
    apply(state, Linked(op=3, at=1.0, src=new, dst=a, kind="relates_to", weight=1.0, auto=False))
    apply(state, Linked(op=4, at=1.0, src=new, dst=a, kind="relates_to", weight=0.3, auto=True))
    edge = state.out[new][(a, "relates_to")]
    assert edge.auto is False and edge.weight == 1.0
    assert state.edges == 1


def test_history_keeps_fifty_entries_and_counts_all(tools: MemoTools) -> None:
    a = remember(tools, "Document the retry policy")
    for i in range(60):
        tools.do_update_item(a, "", note=f"note {i}")
    node = tools.store.state.nodes[a]
    assert len(node.history) == HISTORY_MAXLEN
    assert node.history_total == 61
    item = tools.read_item(a)["value"]
    assert len(item["history"]) == 10 and item["history_truncated"] is True
    assert item["history"][-1]["note"] == "note 59" and item["history"][-1]["what"] == "updated"


def test_note_only_update_is_a_recorded_change(tools: MemoTools) -> None:
    a = remember(tools, "Investigate encoding mismatch")
    result = tools.do_update_item(a, "", note="seen in CSV exports")
    assert result["status"] == "success" and result["changed"] == ["note"]
    assert tools.store.state.nodes[a].history[-1].note == "seen in CSV exports"


def test_bump_alone_is_recorded_as_bumped(tools: MemoTools) -> None:
    a = remember(tools, "Profile the PDF renderer")
    tools.do_update_item(a, "", bump=True)
    entry = tools.store.state.nodes[a].history[-1]
    assert entry.what == "bumped" and entry.changes == {"boost": (0.0, 0.1)}


def test_checkpoint_keeps_fold_equal_to_the_live_state_and_bounds_the_log() -> None:
    tools, clock = _fresh(checkpoint_events=25, max_nodes=30, cold_after_ops=10)
    ids = []
    for i in range(60):
        clock.advance(30)
        ids.append(remember(tools, f"Handle timeout on large input in worker {i % 7}"))
        if i % 3 == 0 and ids[-1] in tools.store.state.nodes:
            tools.do_update_item(ids[-1], "", status="done")
    assert len(tools.store.log) <= 25 + 10
    assert tools.store.checkpoint.op > 0
    assert tools.store.replay_log().canonical() == tools.store.state.canonical()


def test_a_cloned_state_is_independent(tools: MemoTools) -> None:
    a = remember(tools, "Guard against retry storm")
    twin = tools.store.state.clone()
    tools.do_update_item(a, "", title="Guard against a retry storm", add_tags=["ops"])
    assert twin.nodes[a].title == "Guard against retry storm"
    assert twin.canonical() != tools.store.state.canonical()


def test_updated_and_forgotten_events_fold_like_the_tools() -> None:
    tools, _ = _fresh()
    a = remember(tools, "Fix wrong timezone in calendar")
    state = MemoState(tools.store.embedder)
    for event in tools.store.log:
        apply(state, event)
    apply(state, Updated(op=2, at=5.0, id=a, status="done", note="fixed"))
    apply(state, Forgotten(op=3, at=6.0, id=a, reason="explicit"))
    assert (
        state.nodes == {}
        and state.op == 3
        and dict(state.by_status)
        == {
            "pending": 0,
            "done": 0,
        }
    )


# ---------------------------------------------------------------- property tests

TITLES = st.sampled_from(
    [
        "Fix race condition in session store",
        "Session store race on logout",
        "Slow query in orders report",
        "Add retry to webhook handler",
        "Webhook handler retries forever",
        "Decide cache eviction policy",
        "Document the release process",
        "Memory leak in image resizer",
    ]
)
STEP = st.one_of(
    st.tuples(st.just("remember"), TITLES, st.sampled_from(["task", "blocker", "decision"])),
    st.tuples(st.just("update"), st.integers(0, 30), st.sampled_from(["done", "active", None])),
    st.tuples(
        st.just("link"),
        st.integers(0, 30),
        st.integers(0, 30),
        st.sampled_from(["blocks", "depends_on", "relates_to"]),
    ),
    st.tuples(st.just("unlink"), st.integers(0, 30), st.integers(0, 30), st.just("blocks")),
    st.tuples(st.just("forget"), st.integers(0, 30)),
    st.tuples(st.just("bad"), st.integers(0, 30)),
    st.tuples(st.just("replay"), st.integers(0, 30)),
)


def _run(tools: MemoTools, clock: FakeClock, steps: list[tuple[object, ...]]) -> None:
    ids: list[str] = []
    keys: list[tuple[str, str]] = []

    def pick(i: object) -> str | None:
        return ids[int(i) % len(ids)] if ids else None  # type: ignore[call-overload]

    for n, step in enumerate(steps):
        clock.advance(17)
        kind = step[0]
        try:
            if kind == "remember":
                ids.append(remember(tools, str(step[1]), kind=str(step[2])))
            elif kind == "update" and ids:
                key = f"u{n}"
                tools.do_update_item(pick(step[1]) or "", key, status=step[2], bump=True)  # type: ignore[arg-type]
                keys.append((key, pick(step[1]) or ""))
            elif kind in ("link", "unlink") and ids:
                tools.do_link(pick(step[1]) or "", pick(step[2]) or "", "", kind=str(step[3]),
                              remove=kind == "unlink")  # fmt: skip
            elif kind == "forget" and ids:
                tools.do_forget(pick(step[1]) or "", "")
            elif kind == "bad" and ids:
                tools.do_update_item(pick(step[1]) or "", "", priority="urgent")
            elif kind == "replay" and keys:
                key, node = keys[int(step[1]) % len(keys)]  # type: ignore[call-overload]
                before = tools.store.state.op
                tools.do_update_item(node, key, status=None, bump=True)
                assert tools.store.state.op == before
        except MemoError:
            pass
        ids = [i for i in ids if i in tools.store.state.nodes]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=40))
def test_property_fold_equals_live_state_after_any_tool_sequence(
    steps: list[tuple[object, ...]],
) -> None:
    tools, clock = _fresh(max_nodes=12, cold_after_ops=6, forget_batch=2, checkpoint_events=30)
    _run(tools, clock, steps)
    state = tools.store.state
    assert tools.store.replay_log().canonical() == state.canonical()
    for node in state.nodes.values():
        assert 0.0 <= salience(node, state.degree(node.id), clock.now, 24.0) <= 1.8
    assert len(state.nodes) <= 12
    tools.read_related("race condition cache")
    tools.read_pending(order="priority")
    if state.nodes:
        anchor = sorted(state.nodes)[0]
        tools.read_related(node_id=anchor, hops=4)
        tools.read_item(anchor, hops=3)


def test_update_intent_and_link_intent_defaults_match_the_tool_defaults() -> None:
    assert LinkIntent("a", "b").kind == "relates_to" and LinkIntent("a", "b").weight == 1.0
    assert UpdateIntent("a").bump is False
    make: Callable[..., RememberIntent] = RememberIntent
    assert make("x").kind == "task" and make("x").status == "pending"
