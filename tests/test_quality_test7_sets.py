"""The seventh held-out routing set, `tests/route_quality_test7/` (issue 16).

Written before the next routing pass, after the six older held-out sets had been run several
times for aggregates; see its README. Without a corpus these tests check the benchmark format, the
counts (per bank: 15 English and 15 Russian answerable questions, 15 + 15 without an answer), the
paraphrase rule, that no question or id repeats one of the eight older folders, and that at least
four of the eight tempting questions per language are marked as the hard shape. The corpus-marked
tests re-read the banks: every gold path exists with the recorded title and purpose and is not a
template, an inbox note or an archived document, each of the 16 tempting questions per bank reuses
a word of the bank, and every word of a hard-shape question occurs somewhere in its bank.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_route_quality_testset import (
    BANKS,
    CYRILLIC,
    REPO,
    assert_no_question_or_id_repeats,
    assert_paraphrased_questions_per_language_and_kind,
    load,
    tempting_without_bank_words,
    ungoverned_gold,
    words,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_test7"
OLDER_ROUTE_DIRS = (
    "route_quality",
    "route_quality_dev2",
    "route_quality_test",
    "route_quality_test2",
    "route_quality_test3",
    "route_quality_test4",
    "route_quality_test5",
    "route_quality_test6",
)
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))
PER_LANGUAGE_AND_KIND = 15
TEMPTING_PER_LANGUAGE = 8


def test_each_real_bank_has_a_route_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_counts_paraphrase_rule_and_nothing_repeated_from_the_older_sets(path: Path) -> None:
    # 15 + 15 per language and kind, and new to all eight older folders (both development sets
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


HARD_SHAPE = "tempting (hard shape"
HARD_PER_LANGUAGE = 4


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_at_least_four_tempting_questions_per_language_are_the_hard_shape(path: Path) -> None:
    hard = [q.lang for q in load(path).questions if q.note.startswith(HARD_SHAPE)]
    assert hard.count("en") >= HARD_PER_LANGUAGE
    assert hard.count("ru") >= HARD_PER_LANGUAGE


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_every_word_of_a_hard_shape_question_occurs_somewhere_in_its_bank(
    path: Path, corpus: dict[str, Path]
) -> None:
    # ai-setup has no Cyrillic text, so its Russian hard-shape questions are checked on their
    # Latin words only (their notes name the English counterparts of the Russian words)
    question_set = load(path)
    if question_set.bank not in corpus:
        pytest.skip(f"{question_set.bank} is not among MBANK_TEST_ROOTS")
    root = corpus[question_set.bank]
    vocabulary = {w for doc in root.rglob("*.md") for w in words(doc.read_text(encoding="utf-8"))}
    bank_has_cyrillic = any(CYRILLIC.search(w) for w in vocabulary)
    missing = {
        q.id: absent
        for q in question_set.questions
        if q.note.startswith(HARD_SHAPE)
        and (
            absent := [
                w
                for w in words(q.question)
                if w not in vocabulary and (bank_has_cyrillic or not CYRILLIC.search(w))
            ]
        )
    }
    assert missing == {}
