"""The inverted index without a fan-out cap (06 §6) and the dense exhaustive scan (§5.3)."""

from __future__ import annotations

import math
import random

import pytest
from memo_fixtures import remember

from mbank.memo.embedder import HashingEmbedder, cosine
from mbank.memo.index import DenseIndex, InvertedIndex, pack, unpack
from mbank.memo.model import AUTOLINK_BUDGET, AUTOLINK_RESCORED, SEED_BUDGET, SEED_RESCORED
from mbank.memo.reducer import MemoState, searchable_text
from mbank.memo.tools import MemoTools


def _corpus_index(count: int) -> tuple[InvertedIndex, dict[str, dict[int, float]], list[str]]:
    from bench.memo import generate

    e = HashingEmbedder()
    index = InvertedIndex()
    vectors = {}
    titles = []
    for i, item in enumerate(generate(count, seed=11)):
        vec = e.embed(searchable_text(item["title"], item["body"], (), item["kind"]))
        node_id = f"t_{i:010x}"
        index.add(node_id, pack(vec))
        vectors[node_id] = vec
        titles.append(item["title"])
    return index, vectors, titles


def test_the_budgets_are_constants_so_the_work_per_query_is_flat() -> None:
    assert (AUTOLINK_BUDGET, AUTOLINK_RESCORED) == (512, 32)
    assert (SEED_BUDGET, SEED_RESCORED) == (4096, 128)


def test_the_node_holding_every_query_feature_is_always_a_candidate() -> None:
    index, _, titles = _corpus_index(1500)
    e = HashingEmbedder()
    for i in random.Random(3).sample(range(1500), 60):
        assert f"t_{i:010x}" in index.candidates(e.embed(titles[i]), 8, AUTOLINK_BUDGET)


def test_candidate_scores_equal_brute_force_cosines() -> None:
    index, vectors, titles = _corpus_index(800)
    e = HashingEmbedder()
    for i in range(0, 800, 40):
        query = e.embed(titles[i] + " retry the cache")
        found = index.candidates(query, SEED_RESCORED, SEED_BUDGET)
        assert len(found) >= min(SEED_RESCORED, 800) // 2
        for node_id, score in found.items():
            assert math.isclose(score, cosine(query, vectors[node_id]), abs_tol=1e-12)


def test_at_most_limit_candidates_plus_the_nodes_holding_every_feature() -> None:
    index = InvertedIndex()
    e = HashingEmbedder(ngrams=(1,))
    for i in range(400):
        index.add(f"t_{i:010x}", pack(e.embed("cache")))  # one very common feature
    index.add("t_ffffffffff", pack(e.embed("cache zebra")))
    found = index.candidates(e.embed("zebra cache"), 5, 1000)
    # "zebra" is the most informative and admits first; "cache" fills the top 5 partial
    # scores; every returned score is the exact cosine.
    assert "t_ffffffffff" in found and len(found) == 5
    assert found["t_ffffffffff"] == pytest.approx(
        cosine(e.embed("zebra cache"), e.embed("cache zebra"))
    )
    assert max(found, key=lambda n: found[n]) == "t_ffffffffff"


def test_the_budget_bounds_the_postings_walked_newest_first() -> None:
    index = InvertedIndex()
    e = HashingEmbedder(ngrams=(1,))
    for i in range(2000):
        index.add(f"t_{i:010x}", pack(e.embed("cache")))
    found = index.candidates(e.embed("cache"), 10, 50)
    # 2,000 nodes hold "cache": the walk stops after 50 postings, at the newest ones.
    assert set(found) == {f"t_{i:010x}" for i in range(1990, 2000)}


def test_candidates_are_never_empty_when_the_query_shares_a_feature() -> None:
    index, _, titles = _corpus_index(600)
    e = HashingEmbedder()
    for title in titles[:50]:
        assert index.candidates(e.embed(title.split()[0] + " zebra"), 4, AUTOLINK_BUDGET)


def test_postings_stay_consistent_with_a_rebuild_after_updates_and_forgetting(
    make_tools: type,
) -> None:
    tools: MemoTools = make_tools(max_nodes=40, cold_after_ops=5)
    ids = [remember(tools, f"Fix cache bug number {i} in worker") for i in range(45)]
    live = [i for i in ids if i in tools.store.state.nodes]
    tools.do_update_item(live[0], "", title="Rewrite the scheduler", add_tags=["x"])
    tools.do_update_item(live[1], "", body="new body text about queues", status="done")
    tools.do_forget(live[2], "")
    state = tools.store.state
    rebuilt = MemoState(state.embedder)
    for node in state.nodes.values():
        rebuilt.index.add(node.id, node.vector)
        assert unpack(node.vector) == state.embedder.embed(
            searchable_text(node.title, node.body, node.tags, node.kind)
        )
    assert state.index.canonical() == rebuilt.index.canonical()


class _TinyDense:
    signature = "dense-test"
    dim = 3
    sparse = False
    autolink_threshold = 0.35
    seed_floor = 0.2

    def embed(self, text: str) -> dict[int, float]:
        raw = [text.count("a") + 0.1, text.count("b") + 0.1, text.count("c") + 0.1]
        norm = math.sqrt(sum(v * v for v in raw))
        return {i: v / norm for i, v in enumerate(raw)}


def test_dense_vectors_are_scanned_exhaustively_never_inverted() -> None:
    state = MemoState(_TinyDense())
    assert isinstance(state.index, DenseIndex)
    e = _TinyDense()
    for i, text in enumerate(["aaa", "bbb", "ccc", "abc"]):
        state.index.add(f"t_{i:010x}", pack(e.embed(text)))
    found = state.index.candidates(e.embed("aab"), 1, 1)
    assert set(found) == {f"t_{i:010x}" for i in range(4)}
    for i, text in enumerate(["aaa", "bbb", "ccc", "abc"]):
        assert found[f"t_{i:010x}"] == pytest.approx(cosine(e.embed("aab"), e.embed(text)))
