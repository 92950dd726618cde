"""Forgetting and the node cap (06 §10): load-bearing items are never dropped."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from memo_fixtures import FakeClock, remember

from mbank.memo.model import DEFAULT_MAX_NODES, EVICTION_SAMPLE, MemoError
from mbank.memo.tools import MemoTools


def _words(i: int) -> str:
    # Distinct titles without shared words, so autolinking stays out of the way.
    return f"item{i} z{i * 7919}"


def test_cold_closed_items_are_forgotten_oldest_first_in_batches(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(cold_after_ops=5, forget_batch=2, autolink_max=0)
    closed = [remember(tools, _words(i), status="done") for i in range(4)]  # ops 1–4
    other = remember(tools, _words(100))  # op 5
    for _ in range(5):
        tools.do_update_item(other, "")  # ops 6–10: the sweep runs only on do_remember
    # op 11: every closed item is cold (idle 10, 9, 8, 7 ≥ 5); the batch takes the oldest two.
    result = tools.do_remember(_words(200), "")
    forgotten = result["applied_value"]["forgotten"]
    assert forgotten == [
        {"id": closed[0], "title": _words(0), "reason": "cold_after_ops", "idle_ops": 10},
        {"id": closed[1], "title": _words(1), "reason": "cold_after_ops", "idle_ops": 9},
    ]
    assert tools.store.state.forgotten_total == 2
    assert closed[2] in tools.store.state.nodes


def test_forgetting_stops_at_the_first_item_not_yet_cold(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(cold_after_ops=3, forget_batch=10, autolink_max=0)
    a = remember(tools, _words(1), status="done")
    b = remember(tools, _words(2), status="done")
    tools.do_update_item(a, "")  # a is now touched after b
    result = tools.do_remember(_words(3), "")
    assert result["applied_value"]["forgotten"] == []  # b idle 2 at op 4: not yet cold
    result = tools.do_remember(_words(4), "")
    assert [f["id"] for f in result["applied_value"]["forgotten"]] == [b]


def test_forgetting_keeps_a_closed_item_that_still_blocks_open_work(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(cold_after_ops=2, autolink_max=0)
    blocker = remember(tools, _words(1), kind="blocker")
    task = remember(tools, _words(2))
    tools.do_link(blocker, task, "", kind="blocks")
    tools.do_update_item(blocker, "", status="done")
    for i in range(5):
        remember(tools, _words(10 + i))
    assert blocker in tools.store.state.nodes


def test_eviction_takes_the_least_recently_touched_closed_item_first(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(max_nodes=4, autolink_max=0)
    a = remember(tools, _words(1))
    b = remember(tools, _words(2), status="done")
    c = remember(tools, _words(3), status="dropped")
    remember(tools, _words(4))
    tools.do_update_item(b, "")  # b touched after c
    result = tools.do_remember(_words(5), "")
    assert result["applied_value"]["evicted"] == {
        "id": c,
        "title": _words(3),
        "reason": "max_nodes_reached",
        "max_nodes": 4,
    }
    assert a in tools.store.state.nodes and len(tools.store.state.nodes) == 4
    assert tools.store.state.evicted_total == 1


def test_eviction_of_open_items_takes_the_lowest_salience_of_the_oldest_sample(
    make_tools: Callable[..., MemoTools], clock: FakeClock
) -> None:
    tools = make_tools(max_nodes=3, autolink_max=0)
    high = remember(tools, _words(1), priority="critical")
    low = remember(tools, _words(2), priority="low")
    remember(tools, _words(3), priority="normal")
    clock.advance(3600)
    result = tools.do_remember(_words(4), "")
    assert result["applied_value"]["evicted"]["id"] == low
    assert high in tools.store.state.nodes


def test_eviction_never_drops_a_blocker(make_tools: Callable[..., MemoTools]) -> None:
    # devmemomcp evicted a closed blocker of an open task at the cap.
    tools = make_tools(max_nodes=3, autolink_max=0)
    blocker = remember(tools, _words(1), kind="blocker")
    task = remember(tools, _words(2))
    tools.do_link(blocker, task, "", kind="blocks")
    tools.do_update_item(blocker, "", status="done")  # closed, salience 0, oldest: but load-bearing
    other = remember(tools, _words(3), priority="low")
    result = tools.do_remember(_words(4), "")
    assert result["applied_value"]["evicted"]["id"] == other
    assert blocker in tools.store.state.nodes and task in tools.store.state.nodes


def test_memory_full_when_every_candidate_blocks_open_work(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(max_nodes=2, autolink_max=0)
    a = remember(tools, _words(1))
    b = remember(tools, _words(2))
    tools.do_link(a, b, "", kind="blocks")
    tools.do_link(a, b, "", kind="depends_on")  # b is required by a
    with pytest.raises(MemoError) as caught:
        tools.do_remember(_words(3), "k")
    assert str(caught.value) == (
        "memory_full: memory is full (max_nodes 2) and every candidate for eviction blocks "
        "open work; close or forget items first"
    )
    assert len(tools.store.state.nodes) == 2 and tools.store.idempotency.records == {}


def test_eviction_samples_only_the_64_least_recently_touched_open_items(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(max_nodes=EVICTION_SAMPLE + 1, autolink_max=0)
    ids = [remember(tools, _words(i), priority="critical") for i in range(EVICTION_SAMPLE)]
    newest_low = remember(tools, _words(999), priority="low")  # outside the sample
    result = tools.do_remember(_words(1000), "")
    evicted = result["applied_value"]["evicted"]["id"]
    assert evicted != newest_low and evicted == min(ids)  # all equal salience: ties by id


def test_the_default_cap_is_5000() -> None:
    assert DEFAULT_MAX_NODES == 5000


def test_eviction_looks_at_a_bounded_sample_not_every_item(
    make_tools: Callable[..., MemoTools], monkeypatch: pytest.MonkeyPatch
) -> None:
    # devmemomcp scanned every node for the minimum salience on each insert at the cap.
    import mbank.memo.decide as decide_module

    tools = make_tools(max_nodes=500, autolink_max=0)
    for i in range(500):
        remember(tools, _words(i))
    calls = []
    real = decide_module.salience

    def counting(*args: object, **kwargs: object) -> float:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(decide_module, "salience", counting)
    result = tools.do_remember(_words(1000), "")
    assert result["applied_value"]["evicted"] is not None
    assert 0 < len(calls) <= EVICTION_SAMPLE
