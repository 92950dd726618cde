"""read_related (06 §8): seeds, best-path diffusion, the exact-title tier, recall at scale."""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memo_fixtures import remember

from mbank.memo.graph import expand
from mbank.memo.model import MemoConfig, MemoError
from mbank.memo.store import MemoStore
from mbank.memo.tools import MemoTools


def _link(tools: MemoTools, src: str, dst: str, weight: float = 1.0, kind: str = "blocks") -> None:
    tools.do_link(src, dst, "", kind=kind, weight=weight)


def test_diffusion_keeps_the_best_path_not_the_sum(make_tools: Callable[..., MemoTools]) -> None:
    tools = make_tools(autolink_max=0)
    a, b, hub = (remember(tools, t) for t in ("alpha one", "beta two", "gamma three"))
    _link(tools, a, hub, 0.6)
    _link(tools, b, hub, 0.8)
    best = expand(tools.store.state, {a: 1.0, b: 1.0}, 1)
    assert best[hub] == pytest.approx(0.5 * 0.8)  # max of 0.3 and 0.4, never 0.7


def test_diffusion_decays_per_hop_and_prunes_at_the_floor(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(autolink_max=0)
    chain = [remember(tools, f"node {w}") for w in ("aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh")]
    for src, dst in pairwise(chain):
        _link(tools, src, dst)
    best = expand(tools.store.state, {chain[0]: 1.0}, 10)
    assert best[chain[1]] == 0.5 and best[chain[6]] == pytest.approx(0.5**6)
    assert chain[7] not in best  # 0.5**7 = 0.0078 ≤ 0.01 is pruned
    assert expand(tools.store.state, {chain[0]: 1.0}, 0) == {chain[0]: 1.0}


def test_hops_zero_is_vector_only(make_tools: Callable[..., MemoTools]) -> None:
    tools = make_tools(autolink_max=0)
    a = remember(tools, "Slow query in the orders report")
    b = remember(tools, "Translate the settings page")
    _link(tools, a, b)
    with_graph = tools.read_related("orders report slow query")["value"]["matches"]
    vector_only = tools.read_related("orders report slow query", hops=0)["value"]["matches"]
    assert [m["id"] for m in with_graph] == [a, b]
    assert with_graph[1]["match"]["via"] == "graph"
    assert [m["id"] for m in vector_only] == [a]


def test_closed_items_only_with_include_closed(tools: MemoTools) -> None:
    a = remember(tools, "Broken pagination in search results")
    tools.do_update_item(a, "", status="done")
    assert tools.read_related("broken pagination")["value"]["matches"] == []
    assert tools.read_related("broken pagination")["quality"] == "degraded"
    found = tools.read_related("broken pagination", include_closed=True)["value"]["matches"]
    assert [m["id"] for m in found] == [a]


def test_the_anchor_is_excluded_and_seeds_only_the_diffusion_when_a_query_is_given(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools = make_tools(autolink_max=0)
    anchor = remember(tools, "Decide the cache eviction policy")
    neighbour = remember(tools, "Write the onboarding guide")
    similar = remember(tools, "Webhook retries pile up")
    _link(tools, anchor, neighbour, kind="relates_to")
    value = tools.read_related("webhook retries", node_id=anchor)["value"]
    ids = [m["id"] for m in value["matches"]]
    assert anchor not in ids and value["anchor"] == anchor
    assert ids[0] == similar and neighbour in ids
    row = next(m for m in value["matches"] if m["id"] == neighbour)
    assert row["match"]["semantic"] == 0 and row["match"]["graph"] == 0.5
    assert value["seeds"] == 1


def test_an_anchor_alone_seeds_by_its_own_vector(make_tools: Callable[..., MemoTools]) -> None:
    tools = make_tools(autolink_max=0)
    anchor = remember(tools, "Race condition in the session store")
    similar = remember(tools, "Session store race condition on logout")
    remember(tools, "Write the onboarding guide")
    value = tools.read_related(node_id=anchor)["value"]
    ids = [m["id"] for m in value["matches"]]
    assert anchor not in ids and ids[0] == similar  # the shared kind word scores the rest low


def test_an_unknown_node_id_is_a_clear_error_naming_the_id(tools: MemoTools) -> None:
    with pytest.raises(MemoError) as caught:
        tools.read_related("x", node_id="t_0123456789")
    assert caught.value.code == "node_not_found"
    assert "t_0123456789" in caught.value.message and "volatile" in caught.value.message


def test_no_seeds_gives_an_empty_result_with_its_shape(tools: MemoTools) -> None:
    remember(tools, "Anything at all")
    result = tools.read_related("")
    assert result["value"] == {
        "matches": [],
        "seeds": 0,
        "query": "",
        "anchor": None,
        "embedder": "hashing-v2/dim=4096/ngrams=1-2/fold=nfkd",
    }
    assert result["quality"] == "degraded" and result["unit"] == "matches"


def test_exact_title_matches_come_first_whatever_the_scores(tools: MemoTools) -> None:
    exact = remember(tools, "Cache")
    for i in range(5):
        remember(tools, f"Cache cache cache layer invalidation {i}", priority="critical")
    rows = tools.read_related("  CACHE ")["value"]["matches"]
    assert rows[0]["id"] == exact
    assert rows[0]["match"]["exact"] is True and rows[0]["match"]["semantic"] == 1.0
    assert all("exact" not in r["match"] for r in rows[1:])


def test_score_mixes_semantic_graph_and_salience(tools: MemoTools) -> None:
    a = remember(tools, "Fix deadlock under load in the database pool")
    row = tools.read_related("deadlock database pool")["value"]["matches"][0]
    m = row["match"]
    assert row["id"] == a
    expected = 0.55 * m["semantic"] + 0.25 * m["graph"] + 0.20 * min(1.0, row["salience"])
    assert m["score"] == pytest.approx(expected, abs=2e-4)
    assert m["via"] == "vector"


def _recall(tools: MemoTools, corpus: list[dict[str, object]], sampled: list[int]) -> None:
    for i in sampled:
        title = str(corpus[i]["title"])
        matches = tools.read_related(title)["value"]["matches"]
        same = {j for j, item in enumerate(corpus) if item["title"] == title}
        leading = matches[: len(same)]
        assert leading and all(m["title"] == title for m in leading), (title, matches[:2])
        assert all(m["match"].get("exact") for m in leading)


def _build(
    make_tools: Callable[..., MemoTools], size: int, **options: object
) -> tuple[MemoTools, list[dict[str, object]]]:
    from bench.memo import generate, link_plan

    tools = make_tools(max_nodes=max(5000, size), **options)
    corpus = generate(size)
    ids = [tools.do_remember(idempotency_key="", **item)["applied_value"]["node"]["id"]
           for item in corpus]  # fmt: skip
    for a, b, kind in link_plan(size):
        tools.do_link(ids[a], ids[b], "", kind=kind)
    return tools, corpus


def test_exact_title_recall_at_2000_items_every_sampled_title_first(
    make_tools: Callable[..., MemoTools],
) -> None:
    tools, corpus = _build(make_tools, 2000)
    _recall(tools, corpus, random.Random(1).sample(range(2000), 200))
    from bench.memo import NATURAL_QUERIES

    empty = [q for q in NATURAL_QUERIES if not tools.read_related(q)["value"]["matches"]]
    assert empty == []


@pytest.mark.slow
def test_exact_title_recall_at_10000_items_every_sampled_title_first(
    make_tools: Callable[..., MemoTools],
) -> None:
    # Autolinking is switched off while building (it is what makes 10,000 inserts slow in
    # pure Python); recall rests on the index and the exact tier, which are fully exercised.
    tools, corpus = _build(make_tools, 10_000, autolink_max=0)
    assert len(tools.store.state.nodes) == 10_000
    _recall(tools, corpus, random.Random(2).sample(range(10_000), 200))


def test_recall_finds_an_item_whose_features_are_all_common(
    make_tools: Callable[..., MemoTools],
) -> None:
    # devmemomcp's fan-out cap dropped nodes whose dimensions were all shared by > 12 nodes.
    tools = make_tools(autolink_max=0)
    for i in range(60):
        remember(tools, f"Fix cache bug {i}")
    target = remember(tools, "Fix cache")
    rows = tools.read_related("fix cache")["value"]["matches"]
    assert rows[0]["id"] == target


_SHARED_TOOLS = MemoTools(MemoStore(MemoConfig()))
for _title in ("Fix the cache", "Decisión sobre el índice", "Race condition 🐛", "a_b c-d"):
    _SHARED_TOOLS.do_remember(_title, "")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_retrieval_never_raises_for_arbitrary_text(text: str) -> None:
    tools = _SHARED_TOOLS
    value = tools.read_related(text)["value"]
    assert value["query"] == text
    scores = [m["match"]["score"] for m in value["matches"] if "exact" not in m["match"]]
    assert scores == sorted(scores, reverse=True)


def test_paraphrased_queries_find_an_item_of_the_same_topic_in_the_top_five(
    make_tools: Callable[..., MemoTools],
) -> None:
    # Issue 19: the bounded candidate search keeps paraphrase recall (the original index
    # scored 86/100 on this measure at 2,000 items, as does the bounded one).
    from bench.memo_side import PARAPHRASES, topic_of

    tools, corpus = _build(make_tools, 2000)
    hits = 0
    for n, i in enumerate(random.Random(4).sample(range(2000), 100)):
        component, issue = topic_of(str(corpus[i]["title"]))
        query = PARAPHRASES[n % len(PARAPHRASES)].format(component=component, issue=issue)
        top = [topic_of(m["title"]) for m in tools.read_related(query)["value"]["matches"][:5]]
        hits += (component, issue) in top
    assert hits >= 85, hits
