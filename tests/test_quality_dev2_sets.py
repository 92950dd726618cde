"""The second DEVELOPMENT routing set, `tests/route_quality_dev2/` (issue 16).

A development set: the router's authors may read its per-question results. It is heavy on
*tempting* unanswerable questions (the bank's own words around a topic the bank never covers);
see its README. Without a corpus these tests check the benchmark format, the counts (per bank
and language: 10 answerable questions, 20 without an answer of which 15 are tempting and 5
plain), the paraphrase rule, and that no question or id repeats one of the five older folders.
The corpus-marked test re-reads the banks: every gold path exists with the recorded title and
purpose and is not a template, an inbox note or an archived document, and each tempting
question reuses a word of the bank.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_route_quality_testset import (
    BANKS,
    CYRILLIC,
    REPO,
    assert_no_question_or_id_repeats,
    bank_root,
    load,
    reused_runs,
    tempting_without_bank_words,
    ungoverned_gold,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_dev2"
OLDER_ROUTE_DIRS = (
    "route_quality",
    "route_quality_test",
    "route_quality_test2",
    "route_quality_test3",
    "route_quality_test4",
)
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))
ANSWERABLE_PER_LANGUAGE = 10
UNANSWERABLE_PER_LANGUAGE = 20
TEMPTING_PER_LANGUAGE = 15


def test_each_real_bank_has_a_route_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_ten_answerable_and_twenty_unanswerable_questions_per_language(path: Path) -> None:
    questions = load(path).questions
    counts: dict[tuple[str, bool], int] = {}
    for q in questions:
        counts[(q.lang, bool(q.gold))] = counts.get((q.lang, bool(q.gold)), 0) + 1
    assert counts == {
        ("en", True): ANSWERABLE_PER_LANGUAGE,
        ("ru", True): ANSWERABLE_PER_LANGUAGE,
        ("en", False): UNANSWERABLE_PER_LANGUAGE,
        ("ru", False): UNANSWERABLE_PER_LANGUAGE,
    }
    assert len({q.id for q in questions}) == len({q.question for q in questions}) == 60


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_questions_are_in_their_script_and_paraphrase_their_gold_headers(path: Path) -> None:
    for q in load(path).questions:
        assert bool(CYRILLIC.search(q.question)) == (q.lang == "ru"), q.id
        assert len(q.gold) <= 2 and len(q.gold_title) == len(q.gold) == len(q.gold_purpose)
        assert not reused_runs(q.question, [*q.gold_title, *q.gold_purpose]), q.id


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_nothing_is_repeated_from_the_older_sets(path: Path) -> None:
    assert_no_question_or_id_repeats(path, OLDER_ROUTE_DIRS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_fifteen_tempting_and_five_plain_unanswerable_questions_per_language(
    path: Path,
) -> None:
    unanswerable = [q for q in load(path).questions if not q.gold]
    tempting = [q for q in unanswerable if q.note.startswith("tempting (")]
    plain = [q for q in unanswerable if q.note.startswith("plain")]
    assert sorted(q.lang for q in tempting) == (
        ["en"] * TEMPTING_PER_LANGUAGE + ["ru"] * TEMPTING_PER_LANGUAGE
    )
    assert sorted(q.lang for q in plain) == ["en"] * 5 + ["ru"] * 5
    assert all(not q.gold_title and not q.gold_purpose for q in unanswerable)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_at_least_six_hard_shape_tempting_questions_per_language(path: Path) -> None:
    hard = [q.lang for q in load(path).questions if "hard shape" in q.note]
    assert hard.count("en") >= 6 and hard.count("ru") >= 6


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_gold_is_governed_and_each_tempting_question_reuses_the_banks_words(
    path: Path, corpus: dict[str, Path]
) -> None:
    assert ungoverned_gold(path, corpus) == []
    root = bank_root(corpus, load(path).bank)
    assert tempting_without_bank_words(path, root) == []
