"""can_do (06 §11.2): candidates, blocked routes, the three unroutable reasons."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
from memo_fixtures import remember

from mbank.memo.capabilities import CATALOGUE
from mbank.memo.tools import MemoTools

GOALS = {
    "read_pending": ("what work is still pending in this session", "que queda pendiente"),
    "read_related": (
        "find related previous decisions on this topic",
        "buscar decisiones previas relacionadas",
    ),
    "read_item": ("show item detail and history", "mostrar detalle e historial del item"),
    "do_remember": ("record a new pending task", "guardar un nuevo pendiente"),
    "do_update_item": ("mark it done and close it", "marcar como hecho y cerrar"),
    "do_link": ("link these two items: one depends on the other", "enlazar: una depende de otra"),
    "do_forget": ("delete this duplicate", "borrar este duplicado"),
    "can_do": ("check whether this is possible before acting", "comprobar si es posible antes"),
    "do_spill": ("handoff open items to the bank inbox", "traspasar al banco y su bandeja"),
}


@pytest.fixture
def spill_tools(tools: MemoTools, tmp_path: object) -> MemoTools:
    tools.bank_root = tmp_path  # type: ignore[assignment]
    tools.inbox_writer = lambda *a, **k: "j1"
    return tools


def _top(result: dict[str, object]) -> str:
    candidates = result["candidates"]
    assert isinstance(candidates, list) and candidates, result
    name: str = candidates[0]["capability"]
    return name


@pytest.mark.parametrize("tool", sorted(GOALS))
def test_can_do_routes_every_tool_by_english_and_spanish_goals_and_by_action(
    spill_tools: MemoTools, tool: str
) -> None:
    english, spanish = GOALS[tool]
    assert _top(spill_tools.can_do({"goal": english})) == tool
    assert _top(spill_tools.can_do({"goal": spanish})) == tool
    by_action = spill_tools.can_do({"action": tool})
    assert _top(by_action) == tool and by_action["candidates"][0]["confidence"] == 1.0


def test_the_catalogue_covers_all_eight_tools_and_the_bridge() -> None:
    assert [c.name for c in CATALOGUE] == [
        "read_pending", "read_related", "read_item", "do_remember", "do_update_item",
        "do_link", "do_forget", "can_do", "do_spill",
    ]  # fmt: skip


def test_do_spill_is_not_routable_without_a_bank(tools: MemoTools) -> None:
    result = tools.can_do({"action": "do_spill"})
    assert all(c["capability"] != "do_spill" for c in result["candidates"])


def test_a_node_id_alone_routes_at_one_half_to_the_tools_taking_an_id(tools: MemoTools) -> None:
    a = remember(tools, "Fix slow query")
    result = tools.can_do({"node_id": a})
    assert {c["capability"]: c["confidence"] for c in result["candidates"]} == {
        "read_related": 0.5,
        "read_item": 0.5,
        "do_update_item": 0.5,
        "do_link": 0.5,
        "do_forget": 0.5,
    }
    assert [c["capability"] for c in result["candidates"]][:2] == ["read_related", "read_item"]


def test_an_empty_intent_is_a_malformed_request(tools: MemoTools) -> None:
    result = tools.can_do({})
    assert result["feasible"] is False and result["candidates"] == []
    [entry] = result["unroutable"]
    assert entry["outcome"] == "unroutable" and entry["reason"] == "malformed_request"
    assert entry["producers_found"] == []
    assert entry["missing_requirements"] == ["goal or action or node_id"]


def test_an_unknown_target_is_requirements_unmet(tools: MemoTools) -> None:
    result = tools.can_do({"goal": "mark it done", "node_id": "t_0123456789"})
    [entry] = result["unroutable"]
    assert entry["reason"] == "requirements_unmet"
    assert entry["producers_found"] == [
        "read_item", "do_remember", "do_update_item", "do_link", "do_forget",
    ]  # fmt: skip
    assert entry["missing_requirements"] == ["node_id t_0123456789 exists"]
    assert result["candidates"] == [] and result["feasible"] is False


def test_a_goal_matching_nothing_is_no_producer_and_emits_no_candidates(tools: MemoTools) -> None:
    result = tools.can_do({"goal": "bake sourdough bread"})
    assert [u["reason"] for u in result["unroutable"]] == ["no_producer"]
    assert result["candidates"] == [] and result["feasible"] is False


def test_closing_an_item_with_open_blockers_requires_human_approval(tools: MemoTools) -> None:
    task = remember(tools, "Ship the release")
    blocker = remember(tools, "CI is red", kind="blocker")
    tools.do_link(blocker, task, "", kind="blocks")
    result = tools.can_do({"goal": "finish it", "node_id": task, "status": "done"})
    [entry] = result["blocked"]
    assert entry["capability"] == "do_update_item"
    assert entry["permission"] == "requires_human_approval"
    assert entry["reason"] == "1 open blockers"
    assert entry["details"] == [f"{blocker}: CI is red"]
    assert all(c["capability"] != "do_update_item" for c in result["candidates"])
    assert result["context"]["current_observations"]["open_blockers"] == 1


def test_forgetting_a_load_bearing_item_requires_human_approval(tools: MemoTools) -> None:
    task = remember(tools, "Ship the release")
    blocker = remember(tools, "CI is red", kind="blocker")
    tools.do_link(blocker, task, "", kind="blocks")
    result = tools.can_do({"action": "do_forget", "node_id": blocker})
    [entry] = result["blocked"]
    assert entry["permission"] == "requires_human_approval"
    assert entry["reason"] == "blocks 1 open items; unlink them first"
    assert entry["details"] == [f"{task}: Ship the release"]


def test_a_status_that_is_not_a_status_is_out_of_range(tools: MemoTools) -> None:
    a = remember(tools, "Ship the release")
    result = tools.can_do({"node_id": a, "status": "finished"})
    [entry] = result["blocked"]
    assert entry["capability"] == "do_update_item" and entry["permission"] == "out_of_range"


def test_candidates_carry_constraints_latency_and_validity_bands(tools: MemoTools) -> None:
    a = remember(tools, "Ship the release")
    static = tools.can_do({"goal": "record a new pending task"})
    cand = static["candidates"][0]
    assert cand["capability"] == "do_remember" and cand["source"] == "mbank-memo"
    assert cand["permission"] == "allowed" and cand["estimated_latency_ms"] == 20
    assert cand["constraints"] == {"max_title_chars": 200, "max_body_bytes": 8192}
    assert cand["current_state"]["unit"] == "items"

    def seconds(result: dict[str, object], c: dict[str, str]) -> float:
        meta = result["metadata"]
        assert isinstance(meta, dict)
        until = datetime.fromisoformat(c["valid_until"].replace("Z", "+00:00"))
        now = datetime.fromisoformat(meta["timestamp"].replace("Z", "+00:00"))
        return (until - now).total_seconds()

    assert seconds(static, cand) == 240
    targeted = tools.can_do({"goal": "change the priority", "node_id": a})
    update = next(c for c in targeted["candidates"] if c["capability"] == "do_update_item")
    assert seconds(targeted, update) == 20
    assert update["constraints"] == {
        "enum_values": ["pending", "active", "blocked", "done", "dropped"]
    }
    link = tools.can_do({"action": "do_link"})["candidates"][0]
    assert link["constraints"] == {"min": 0.0, "max": 1.0, "unit": "weight"}


def test_feasible_and_context_on_an_empty_memory(make_tools: Callable[..., MemoTools]) -> None:
    result = make_tools().can_do({"goal": "what is pending"})
    assert result["feasible"] is True
    obs = result["context"]["current_observations"]
    assert obs["memory_cold"] is True and obs["volatile"] is True and obs["target"] is None
    assert result["context"]["related_reads"] == ["read_pending", "read_related", "read_item"]
    assert set(result) == {
        "query_id", "feasible", "candidates", "blocked", "unroutable", "context", "metadata",
    }  # fmt: skip


def test_scope_restricts_the_catalogue(tools: MemoTools) -> None:
    result = tools.can_do({"goal": "record a new pending task"}, scope=["read_pending"])
    assert [c["capability"] for c in result["candidates"]] in (["read_pending"], [])


def test_a_given_status_raises_update_to_at_least_one_half(tools: MemoTools) -> None:
    a = remember(tools, "Ship the release")
    result = tools.can_do({"goal": "bake bread", "node_id": a, "status": "active"})
    update = next(c for c in result["candidates"] if c["capability"] == "do_update_item")
    assert update["confidence"] >= 0.5
