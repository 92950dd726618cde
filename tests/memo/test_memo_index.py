"""The inverted index without a fan-out cap (06 §6) and the dense exhaustive scan (§5.3)."""

from __future__ import annotations

import math
import random

import pytest
from memo_fixtures import remember

from mbank.memo.embedder import HashingEmbedder, cosine
from mbank.memo.index import DenseIndex, InvertedIndex, common_df
from mbank.memo.model import ADMIT_MIN
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
        index.add(node_id, vec)
        vectors[node_id] = vec
        titles.append(item["title"])
    return index, vectors, titles


def test_common_df_is_five_percent_with_a_floor_of_32() -> None:
    assert common_df(10) == 32
    assert common_df(2000) == 100
    assert common_df(10_001) == 501
    assert ADMIT_MIN == 256


def test_the_node_holding_every_query_feature_is_always_a_candidate() -> None:
    index, _, titles = _corpus_index(1500)
    e = HashingEmbedder()
    for i in random.Random(3).sample(range(1500), 60):
        assert f"t_{i:010x}" in index.candidates(e.embed(titles[i]))


def test_candidate_scores_equal_brute_force_cosines() -> None:
    index, vectors, titles = _corpus_index(800)
    e = HashingEmbedder()
    for i in range(0, 800, 40):
        query = e.embed(titles[i] + " retry the cache")
        for node_id, score in index.candidates(query).items():
            assert math.isclose(score, cosine(query, vectors[node_id]), abs_tol=1e-12)


def test_common_dimensions_still_score_but_do_not_admit() -> None:
    index = InvertedIndex()
    e = HashingEmbedder(ngrams=(1,))
    for i in range(400):
        index.add(f"t_{i:010x}", e.embed("cache"))  # one very common feature
    index.add("t_ffffffffff", e.embed("cache zebra"))
    query = e.embed("zebra cache")
    found = index.candidates(query)
    # "zebra" is rarest and admits its one node; "cache" (df 401 > COMMON_DF) is reached
    # with the accumulator below ADMIT_MIN, so it admits too: ADMIT_MIN keeps recall up.
    assert found["t_ffffffffff"] == pytest.approx(cosine(query, e.embed("cache zebra")))
    assert len(found) == 401


def test_a_common_dimension_past_admit_min_only_completes() -> None:
    index = InvertedIndex()
    e = HashingEmbedder(ngrams=(1,))
    for i in range(300):
        index.add(f"q_{i:010x}", e.embed(f"rare{i % 3} mid"))
    for i in range(2000):
        index.add(f"t_{i:010x}", e.embed("cache"))
    query = e.embed("rare0 rare1 rare2 mid cache")
    found = index.candidates(query)
    assert set(found) == {f"q_{i:010x}" for i in range(300)}  # "cache" completed nobody


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
        assert node.vector == state.embedder.embed(
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
        state.index.add(f"t_{i:010x}", e.embed(text))
    found = state.index.candidates(e.embed("aab"))
    assert set(found) == {f"t_{i:010x}" for i in range(4)}
    for i, text in enumerate(["aaa", "bbb", "ccc", "abc"]):
        assert found[f"t_{i:010x}"] == pytest.approx(cosine(e.embed("aab"), e.embed(text)))
