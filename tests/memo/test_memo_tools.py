"""The tools and their envelopes (06 §11), limits (§14) and errors (§15)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from memo_fixtures import FakeClock, remember

from mbank.memo.model import MemoError
from mbank.memo.tools import MemoTools

DO_KEYS = [
    "status", "idempotency_key", "compensable", "side_effects", "compensation_hint",
    "timestamp", "applied_value", "previous_value",
]  # fmt: skip
VIEW_KEYS = [
    "id", "kind", "title", "body", "status", "priority", "tags", "session", "created_at",
    "updated_at", "touched_at", "age_hours", "degree", "salience",
]  # fmt: skip


def _code(call: Callable[[], object]) -> MemoError:
    with pytest.raises(MemoError) as caught:
        call()
    return caught.value


def test_do_remember_envelope_and_node_view(tools: MemoTools) -> None:
    result = tools.do_remember(
        "  Fix race condition in session store ",
        "k1",
        kind="blocker",
        body="seen on logout",
        tags=[" Auth", "auth", "DB "],
        priority="high",
        session="s1",
    )
    assert list(result)[:8] == DO_KEYS
    assert result["status"] == "success" and result["compensable"] is True
    assert result["timestamp"] == "2026-09-14T12:00:00.000Z"
    node = result["applied_value"]["node"]
    assert list(node) == VIEW_KEYS
    assert node["id"].startswith("b_") and len(node["id"]) == 12
    assert node["title"] == "Fix race condition in session store"
    assert node["tags"] == ["auth", "db"] and node["session"] == "s1"
    assert node["created_at"] == "2026-09-14T12:00:00Z" and node["age_hours"] == 0.0
    assert result["compensation_hint"] == f"do_update_item node_id={node['id']} status=dropped"
    assert result["previous_value"] is None
    assert set(result["applied_value"]) == {
        "node", "auto_linked", "explicit_links", "evicted", "forgotten",
    }  # fmt: skip


def test_do_remember_links_related_ids_and_autolinks_similar_items(tools: MemoTools) -> None:
    a = remember(tools, "Token refresh fails after expiry")
    b = remember(tools, "Translate the settings page")
    result = tools.do_remember("Refresh token expiry breaks login", "", related_to=[b, b])
    value = result["applied_value"]
    assert value["explicit_links"] == [{"id": b, "title": "Translate the settings page"}]
    assert [x["id"] for x in value["auto_linked"]] == [a]
    assert 0.15 <= value["auto_linked"][0]["similarity"] <= 1.0
    new = value["node"]["id"]
    assert tools.store.state.out[new][(b, "relates_to")].auto is False


def test_an_unknown_related_to_id_refuses_the_whole_call(tools: MemoTools) -> None:
    error = _code(lambda: tools.do_remember("x", "", related_to=["t_0123456789"]))
    assert error.code == "node_not_found" and "t_0123456789" in error.message
    assert tools.store.state.nodes == {}


@pytest.mark.parametrize(
    ("options", "code", "fragment"),
    [
        ({"title": " "}, "invalid_argument", "title must not be blank."),
        (
            {"title": "x" * 201},
            "field_too_long",
            "title is 201 characters; the limit is 200 characters.",
        ),
        (
            {"body": "é" * 4097},
            "field_too_long",
            "body is 8194 bytes (UTF-8); the limit is 8192 bytes.",
        ),
        ({"tags": [f"t{i}" for i in range(21)]}, "field_too_long", "the limit is 20 tags."),
        ({"tags": ["x" * 41]}, "field_too_long", "is 41 characters; the limit is 40 characters."),
        ({"session": "s" * 101}, "field_too_long", "session is 101 characters; the limit is 100"),
        ({"related_to": ["t_0123456789"] * 51}, "field_too_long", "related_to has 51 ids"),
        ({"related_to": ["nope"]}, "invalid_argument", 'related_to "nope" is not an item id'),
        ({"kind": "epic"}, "invalid_enum_value", 'kind "epic" is not one of task, blocker'),
        ({"priority": "urgent"}, "invalid_enum_value", 'priority "urgent" is not one of'),
        ({"status": "closed"}, "invalid_enum_value", 'status "closed" is not one of'),
        ({"idempotency_key": "k" * 201}, "field_too_long", "idempotency_key is 201 characters"),
    ],
)
def test_do_remember_limits(
    tools: MemoTools, options: dict[str, object], code: str, fragment: str
) -> None:
    args: dict[str, object] = {"title": "ok", "idempotency_key": "", **options}
    error = _code(lambda: tools.do_remember(**args))  # type: ignore[arg-type]
    assert error.code == code and fragment in error.message, error.message


def test_update_has_the_same_limits_as_remember(tools: MemoTools) -> None:
    # devmemomcp accepted a 500-character title and a 20 KB body on update.
    a = remember(tools, "Fix slow query")
    assert _code(lambda: tools.do_update_item(a, "", title="x" * 500)).code == "field_too_long"
    assert _code(lambda: tools.do_update_item(a, "", body="b" * 20_000)).code == "field_too_long"
    assert _code(lambda: tools.do_update_item(a, "", title="  ")).code == "invalid_argument"
    assert _code(lambda: tools.do_update_item(a, "", note="n" * 501)).code == "field_too_long"
    too_many = [f"t{i}" for i in range(21)]
    assert _code(lambda: tools.do_update_item(a, "", add_tags=too_many)).code == "field_too_long"
    tools.do_update_item(a, "", add_tags=[f"t{i}" for i in range(15)])
    error = _code(lambda: tools.do_update_item(a, "", add_tags=[f"u{i}" for i in range(6)]))
    assert error.message == "the item would carry 21 tags; the limit is 20 tags."


def test_atomic_multi_field_update_an_invalid_field_changes_nothing(tools: MemoTools) -> None:
    # devmemomcp applied status=done, then failed on priority=urgent, leaving the node done.
    a = remember(tools, "Fix slow query", tags=["db"])
    before = tools.store.state.nodes[a].canonical()
    op = tools.store.state.op
    error = _code(
        lambda: tools.do_update_item(a, "k", status="done", title="New", priority="urgent")
    )
    assert error.code == "invalid_enum_value"
    assert tools.store.state.nodes[a].canonical() == before
    assert tools.store.state.op == op and "k" not in tools.store.idempotency.records
    assert tools.store.state.by_status["done"] == 0


def test_update_reports_changed_fields_previous_values_and_a_json_quoted_hint(
    tools: MemoTools,
) -> None:
    a = remember(tools, "Fix slow query", tags=["db"])
    result = tools.do_update_item(
        a,
        "k",
        status="active",
        title='Fix the "slow" query',
        body="new",
        add_tags=["perf"],
        remove_tags=["db"],
        note="started",
        bump=True,
    )
    assert result["status"] == "success"
    assert result["changed"] == ["status", "title", "body", "tags", "boost", "note"]
    assert result["applied_value"] == {
        "status": "active",
        "title": 'Fix the "slow" query',
        "tags": ["perf"],
    }
    assert result["previous_value"] == {
        "status": "pending",
        "title": "Fix slow query",
        "tags": ["db"],
    }
    assert result["compensation_hint"] == (
        f'do_update_item node_id={a} status="pending" title="Fix slow query" '
        'add_tags=["db"] remove_tags=["perf"] (body not restorable from this hint)'
    )
    assert result["node"]["title"] == 'Fix the "slow" query'
    assert json.loads(result["compensation_hint"].split("title=")[1].split(" add_tags")[0]) == (
        "Fix slow query"
    )


def test_an_update_changing_nothing_is_partial_but_still_touches(
    tools: MemoTools, clock: FakeClock
) -> None:
    a = remember(tools, "Fix slow query")
    clock.advance(7200)
    result = tools.do_update_item(a, "", status="pending")
    assert result["status"] == "partial" and result["changed"] == []
    assert result["applied_value"] is None and result["previous_value"] is None
    assert result["compensation_hint"] == "nothing to compensate"
    assert result["node"]["age_hours"] == 0.0


def test_bump_adds_a_tenth_capped_at_one_half(tools: MemoTools) -> None:
    a = remember(tools, "Fix slow query")
    for _ in range(7):
        tools.do_update_item(a, "", bump=True)
    assert tools.store.state.nodes[a].boost == 0.5
    assert tools.do_update_item(a, "", bump=True)["status"] == "partial"


def test_do_link_creates_replaces_and_removes_exactly_one_triple(tools: MemoTools) -> None:
    a = remember(tools, "alpha one")
    b = remember(tools, "beta two")
    created = tools.do_link(a, b, "", kind="blocks", weight=0.5)
    assert created["applied_value"] == {
        "src": a,
        "dst": b,
        "kind": "blocks",
        "weight": 0.5,
        "auto": False,
    }
    assert created["previous_value"] is None
    assert created["compensation_hint"] == f"do_link src={a} dst={b} kind=blocks remove=true"
    replaced = tools.do_link(a, b, "", kind="blocks", weight=0.9)
    assert replaced["previous_value"]["weight"] == 0.5
    tools.do_link(a, b, "", kind="touches")
    removed = tools.do_link(a, b, "", kind="blocks", remove=True)
    assert removed["status"] == "success"
    assert removed["previous_value"] == {"edge": f"{a} -blocks-> {b}"}
    assert removed["compensation_hint"] == f"do_link src={a} dst={b} kind=blocks weight=0.9"
    assert (b, "touches") in tools.store.state.out[a]
    again = tools.do_link(a, b, "", kind="blocks", remove=True)
    assert again["status"] == "partial"


def test_do_link_refuses_self_links_unknown_ids_and_weights_outside_0_1(tools: MemoTools) -> None:
    a = remember(tools, "alpha one")
    b = remember(tools, "beta two")
    assert _code(lambda: tools.do_link(a, a, "")).code == "self_link"
    error = _code(lambda: tools.do_link(a, "t_0123456789", ""))
    assert error.code == "node_not_found" and "t_0123456789" in error.message
    error = _code(lambda: tools.do_link(a, b, "", weight=1.5))
    assert error.code == "invalid_argument" and "refused, not clamped" in error.message
    assert _code(lambda: tools.do_link(a, b, "", weight=-0.1)).code == "invalid_argument"
    assert _code(lambda: tools.do_link(a, b, "", kind="causes")).code == "invalid_enum_value"
    assert tools.store.state.edges == 0


def test_do_forget_deletes_the_item_and_its_edges_with_a_remember_hint(tools: MemoTools) -> None:
    a = remember(tools, "Fix the slow query", kind="question", priority="high")
    b = remember(tools, "unrelated thing")
    tools.do_link(b, a, "", kind="relates_to")
    result = tools.do_forget(a, "")
    assert result["applied_value"] is None and result["previous_value"]["id"] == a
    assert result["compensation_hint"] == (
        'do_remember title="Fix the slow query" kind=question priority=high status=pending'
    )
    state = tools.store.state
    assert a not in state.nodes and state.out[b] == {} and state.edges == 0


def test_do_forget_refuses_a_load_bearing_item_listing_the_blocked_ids(tools: MemoTools) -> None:
    blocker = remember(tools, "CI is red", kind="blocker")
    task = remember(tools, "Ship it")
    tools.do_link(blocker, task, "", kind="blocks")
    error = _code(lambda: tools.do_forget(blocker, ""))
    assert error.code == "node_still_load_bearing"
    assert task in error.message and "remove those links first" in error.message
    tools.do_update_item(task, "", status="done")
    tools.do_forget(blocker, "")


def test_read_item_unknown_id_is_an_error_not_a_degraded_value(tools: MemoTools) -> None:
    error = _code(lambda: tools.read_item("t_0123456789"))
    assert error.code == "node_not_found" and "restart" in error.message
    assert _code(lambda: tools.read_item("bad id")).code == "invalid_argument"


def test_read_item_shows_neighbours_transitive_blockers_and_neighbourhood(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(autolink_max=0)
    task, mid, root = (remember(tools, t) for t in ("Ship it", "Fix CI", "Renew certificate"))
    tools.do_link(mid, task, "", kind="blocks")
    tools.do_link(task, root, "", kind="depends_on", weight=0.4)
    tools.do_link(root, mid, "", kind="blocks")
    result = tools.read_item(task, hops=2)
    value = result["value"]
    assert result["unit"] == "item" and result["quality"] == "good"
    assert value["neighbors"] == [
        {"id": mid, "title": "Fix CI", "status": "pending", "relation": "blocked_by",
         "direction": "in", "weight": 1.0, "auto": False},
        {"id": root, "title": "Renew certificate", "status": "pending", "relation": "depends_on",
         "direction": "out", "weight": 0.4, "auto": False},
    ]  # fmt: skip
    assert [b["id"] for b in value["blocked_by"]] == sorted([mid, root])  # DFS in id order
    assert value["history_total"] == 3 and value["history_truncated"] is False
    assert {n["id"] for n in value["neighborhood"]} == {mid, root}
    assert "neighborhood" not in tools.read_item(task)["value"]


def test_read_pending_ranks_open_items_with_blockers_and_stats(
    tools: MemoTools, clock: FakeClock
) -> None:
    low = remember(tools, "alpha one", priority="low")
    clock.advance(3600)
    crit = remember(tools, "beta two", priority="critical", tags=["ops"], session="s")
    done = remember(tools, "gamma three")
    tools.do_update_item(done, "", status="done")
    tools.do_link(crit, low, "", kind="blocks")
    result = tools.read_pending()
    value = result["value"]
    assert result["quality"] == "good" and result["unit"] == "items"
    assert [i["id"] for i in value["items"]] == [crit, low]
    assert value["items"][1]["blocked_by"] == [crit]
    assert value["returned"] == 2 and value["matched"] == 2
    assert value["stats"]["nodes"] == 3 and value["stats"]["by_status"] == {"done": 1, "pending": 2}
    assert tools.read_pending(order="recent")["value"]["items"][0]["id"] == crit
    assert [i["id"] for i in tools.read_pending(status=["done"])["value"]["items"]] == [done]
    assert [i["id"] for i in tools.read_pending(tags=["OPS"])["value"]["items"]] == [crit]
    assert [i["id"] for i in tools.read_pending(session="s")["value"]["items"]] == [crit]
    assert tools.read_pending(kinds=["blocker"])["quality"] == "degraded"
    assert tools.read_pending(limit=1)["value"]["returned"] == 1
    assert [i["id"] for i in tools.read_pending(order="priority")["value"]["items"]] == [crit, low]


def test_reads_refuse_out_of_bounds_numbers(tools: MemoTools) -> None:
    assert _code(lambda: tools.read_pending(limit=0)).code == "invalid_argument"
    assert _code(lambda: tools.read_related("x", hops=5)).code == "invalid_argument"
    assert _code(lambda: tools.read_item("t_0123456789", hops=0)).code == "invalid_argument"
    assert _code(lambda: tools.read_pending(order="oldest")).code == "invalid_enum_value"


def test_read_pending_on_an_empty_memory_is_degraded_not_an_error(tools: MemoTools) -> None:
    result = tools.read_pending()
    assert result["quality"] == "degraded"
    assert result["value"]["items"] == [] and result["value"]["matched"] == 0
    assert list(result) == ["value", "timestamp", "quality", "unit"]


def test_a_neighbour_joined_by_several_edges_is_listed_once(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(autolink_max=0)
    a, b = remember(tools, "Ship it"), remember(tools, "Fix CI")
    tools.do_link(b, a, kind="blocks")
    tools.do_link(a, b, kind="relates_to", weight=0.5)
    tools.do_link(a, b, kind="depends_on", weight=0.8)
    assert tools.read_item(a)["value"]["neighbors"] == [
        {"id": b, "title": "Fix CI", "status": "pending", "relation": "blocked_by",
         "direction": "in", "weight": 1.0, "auto": False,
         "also": [
             {"relation": "depends_on", "direction": "out", "weight": 0.8, "auto": False},
             {"relation": "relates_to", "direction": "out", "weight": 0.5, "auto": False},
         ]},
    ]  # fmt: skip


def test_twenty_pending_rows_stay_within_ten_thousand_characters(tools: MemoTools) -> None:
    import json

    from bench.memo import generate

    for item in generate(60, seed=5):
        tools.do_remember(**{**item, "body": ("é" + item["body"] * 20)[:8000]})  # long bodies
    value = tools.read_pending()["value"]
    assert value["returned"] == 20
    row = value["items"][0]
    assert row["body"].endswith(" …") and len(row["body"]) == 122 and row["body_chars"] > 2000
    node = tools.read_item(row["id"])["value"]
    assert len(node["body"]) == row["body_chars"]  # read_item returns the whole body
    text = json.dumps(tools.read_pending(), separators=(",", ":"), ensure_ascii=False)
    assert len(text) <= 10_000, len(text)
