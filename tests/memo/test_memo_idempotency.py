"""Idempotency scoped per tool and fingerprinted (06 §12)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from memo_fixtures import FakeClock, remember

from mbank.memo.idempotency import IdempotencyTable, fingerprint
from mbank.memo.model import IDEMPOTENCY_TTL_S, MemoError
from mbank.memo.tools import MemoTools


def test_same_key_same_arguments_replays_without_applying(tools: MemoTools) -> None:
    first = tools.do_remember("Fix slow query", "k1", tags=["db"])
    op = tools.store.state.op
    again = tools.do_remember("Fix slow query", "k1", tags=["db"])
    assert again == {**first, "replayed": True}
    assert tools.store.state.op == op and len(tools.store.state.nodes) == 1
    assert "replayed" not in first


def test_same_key_with_other_arguments_is_a_conflict(tools: MemoTools) -> None:
    tools.do_remember("Fix slow query", "k1")
    with pytest.raises(MemoError) as caught:
        tools.do_remember("Fix another slow query", "k1")
    assert str(caught.value) == (
        'idempotency_conflict: key "k1" was used at 2026-09-14T12:00:00Z for do_remember with '
        "other arguments; a new operation needs a new key. Nothing was applied."
    )
    assert len(tools.store.state.nodes) == 1


def test_key_reuse_across_tools_is_refused_with_a_clear_message(tools: MemoTools) -> None:
    # devmemomcp replayed the remember payload for do_link, then failed with a bare KeyError.
    a = remember(tools, "Write the migration")
    b = remember(tools, "Run the migration")
    tools.do_remember("Review the migration", "shared")
    with pytest.raises(MemoError) as caught:
        tools.do_link(a, b, "shared", kind="blocks")
    assert str(caught.value) == (
        'idempotency_conflict: key "shared" belongs to do_remember (used at '
        "2026-09-14T12:00:00Z); a new operation needs a new key. Nothing was applied."
    )
    assert (b, "blocks") not in tools.store.state.out[a]


def test_an_empty_key_never_deduplicates_or_records(tools: MemoTools) -> None:
    tools.do_remember("Fix slow query", "")
    tools.do_remember("Fix slow query", "")
    assert len(tools.store.state.nodes) == 2
    assert len(tools.store.idempotency.records) == 0


def test_failed_calls_are_not_recorded_so_a_retry_runs_again(tools: MemoTools) -> None:
    a = remember(tools, "Fix slow query")
    with pytest.raises(MemoError):
        tools.do_update_item(a, "k", title=" ")
    result = tools.do_update_item(a, "k", title="Fix the slow query")
    assert result["status"] == "success" and "replayed" not in result


def test_defaults_are_filled_before_fingerprinting(tools: MemoTools) -> None:
    first = tools.do_remember("Fix slow query", "k")
    again = tools.do_remember("Fix slow query", "k", kind="task", priority="normal", body="")
    assert again["replayed"] is True and again["applied_value"] == first["applied_value"]
    assert fingerprint({"a": 1, "b": None}) == fingerprint(
        {"b": None, "a": 1, "idempotency_key": "x"}
    )


def test_records_expire_after_24_hours(tools: MemoTools, clock: FakeClock) -> None:
    tools.do_remember("Fix slow query", "k")
    clock.advance(IDEMPOTENCY_TTL_S - 1)
    assert tools.do_remember("Fix slow query", "k")["replayed"] is True
    clock.advance(1)
    result = tools.do_remember("Fix slow query", "k")
    assert "replayed" not in result and len(tools.store.state.nodes) == 2


def test_the_table_is_fifo_capped_and_rerecording_moves_a_key_to_the_end(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(idem_max=2)
    tools.do_remember("one", "k1")
    tools.do_remember("two", "k2")
    tools.store.idempotency.record("do_remember", "k1", {"x": 1}, 0.0, {})  # k1 moves to the end
    tools.do_remember("three", "k3")  # evicts k2, the oldest
    assert list(tools.store.idempotency.records) == ["k1", "k3"]
    assert "replayed" not in tools.do_remember("two", "k2")


def test_lookup_of_an_unknown_key_is_none() -> None:
    assert IdempotencyTable().lookup("do_link", "nope", {}, 0.0) is None
