"""The fourth held-out routing set, `tests/route_quality_test4/` (issue 16).

Written before the next routing pass, after the three older held-out sets had been run several
times for aggregates; see its README. Without a corpus these tests check the benchmark format, the
counts (per bank: 15 English and 15 Russian answerable questions, 15 + 15 without an answer), the
paraphrase rule, and that no question or id repeats one of the four older folders. The
corpus-marked test re-reads the banks: every gold path exists with the recorded title and purpose
and is not a template, an inbox note or an archived document, and each of the 16 tempting
questions per bank (8 per language) reuses a word of the bank.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_route_quality_testset import (
    BANKS,
    REPO,
    assert_no_question_or_id_repeats,
    assert_paraphrased_questions_per_language_and_kind,
    load,
    tempting_without_bank_words,
    ungoverned_gold,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_test4"
OLDER_ROUTE_DIRS = (
    "route_quality",
    "route_quality_test",
    "route_quality_test2",
    "route_quality_test3",
)
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))
PER_LANGUAGE_AND_KIND = 15
TEMPTING_PER_LANGUAGE = 8


def test_each_real_bank_has_a_route_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_counts_paraphrase_rule_and_nothing_repeated_from_the_older_sets(path: Path) -> None:
    # 15 + 15 per language and kind, and new to all four older folders (the development set
    # included), so no question was seen before this set is run
    assert_paraphrased_questions_per_language_and_kind(path, PER_LANGUAGE_AND_KIND)
    assert_no_question_or_id_repeats(path, OLDER_ROUTE_DIRS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_tempting_questions_are_unanswerable_and_eight_per_language(path: Path) -> None:
    tempting = [q for q in load(path).questions if q.note.startswith("tempting")]
    assert all(not q.gold for q in tempting)
    assert (
        sorted(q.lang for q in tempting)
        == ["en"] * TEMPTING_PER_LANGUAGE + ["ru"] * TEMPTING_PER_LANGUAGE
    )


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_gold_is_governed_and_each_tempting_question_reuses_the_banks_words(
    path: Path, corpus: dict[str, Path]
) -> None:
    assert ungoverned_gold(path, corpus) == []
    question_set = load(path)
    tempting = [q for q in question_set.questions if q.note.startswith("tempting")]
    assert len(tempting) == 2 * TEMPTING_PER_LANGUAGE
    assert tempting_without_bank_words(path, corpus[question_set.bank]) == []
