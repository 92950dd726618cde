"""The second held-out sets, `tests/route_quality_test2/` and `tests/search_quality_test2/`.

Written for issue 16's second wave after the first held-out set had been looked at (in aggregate)
three times; see their READMEs. Without a corpus these tests check the benchmark format, the
counts (per bank: 10 English and 10 Russian answerable questions, 10 + 10 without an answer, at
least 10 literals), the paraphrase rule, and that no question repeats one of the older sets.
Corpus-marked tests re-read the banks: every gold path exists with the recorded title and
purpose, is not a template, inbox note or archived document, and holds its literal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_route_quality_testset import (
    BANKS,
    REPO,
    _bank_snapshot,
    assert_no_question_or_id_repeats,
    assert_paraphrased_questions_per_language_and_kind,
    ungoverned_gold,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_test2"
SEARCH_DIR = REPO / "tests" / "search_quality_test2"
OLDER_ROUTE_DIRS = ("route_quality", "route_quality_test")
OLDER_SEARCH_DIRS = ("search_quality", "search_quality_test")
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))


def test_each_real_bank_has_a_route_and_a_search_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)
    assert sorted(path.stem for path in SEARCH_DIR.glob("*.json")) == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_counts_languages_and_paraphrase_rule(path: Path) -> None:
    assert_paraphrased_questions_per_language_and_kind(path)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_no_question_or_id_repeats_an_older_set(path: Path) -> None:
    assert_no_question_or_id_repeats(path, OLDER_ROUTE_DIRS)


@pytest.mark.parametrize("bank", BANKS)
def test_search_file_has_new_literals_in_the_benchmark_format(bank: str) -> None:
    raw = json.loads((SEARCH_DIR / f"{bank}.json").read_text(encoding="utf-8"))
    assert set(raw) == {"bank", "queries"} and raw["bank"] == bank
    assert len(raw["queries"]) >= 10
    assert all(set(q) == {"id", "query", "gold", "note"} and q["gold"] for q in raw["queries"])
    older = {
        q["query"]
        for folder in OLDER_SEARCH_DIRS
        for q in json.loads((REPO / "tests" / folder / f"{bank}.json").read_text(encoding="utf-8"))[
            "queries"
        ]
    }
    assert {q["query"] for q in raw["queries"]} & older == set()


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_gold_exists_with_its_title_and_purpose_and_is_governed(
    path: Path, corpus: dict[str, Path]
) -> None:
    assert ungoverned_gold(path, corpus) == []


@pytest.mark.corpus
@pytest.mark.parametrize("bank", BANKS)
def test_every_literal_occurs_in_each_of_its_gold_documents(
    bank: str, corpus: dict[str, Path]
) -> None:
    docs = _bank_snapshot(corpus, bank).docs
    root = corpus[bank]
    raw = json.loads((SEARCH_DIR / f"{bank}.json").read_text(encoding="utf-8"))
    missing = [
        (q["id"], gold)
        for q in raw["queries"]
        for gold in q["gold"]
        if gold not in docs
        or q["query"].lower() not in (root / gold).read_text(encoding="utf-8").lower()
    ]
    assert missing == []
