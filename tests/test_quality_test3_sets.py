"""The third held-out routing set, `tests/route_quality_test3/` (issue 16, third pass).

Written before any code of the third pass changed, after `route_quality_test2` had been run twice
for aggregates; see its README. Without a corpus these tests check the benchmark format, the counts
(per bank: 10 English and 10 Russian answerable questions, 10 + 10 without an answer), the
paraphrase rule, and that no question repeats one of the older sets. The corpus-marked test re-reads
the banks: every gold path exists with the recorded title and purpose and is not a template, an
inbox note or an archived document.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_route_quality_testset import (
    BANKS,
    CYRILLIC,
    REPO,
    _bank_snapshot,
    load,
    reused_runs,
    words,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_test3"
OLDER_ROUTE_DIRS = ("route_quality", "route_quality_test", "route_quality_test2")
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))


def test_each_real_bank_has_a_route_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_counts_languages_and_paraphrase_rule(path: Path) -> None:
    questions = load(path).questions
    counts: dict[tuple[str, bool], int] = {}
    for q in questions:
        counts[(q.lang, bool(q.gold))] = counts.get((q.lang, bool(q.gold)), 0) + 1
        assert bool(CYRILLIC.search(q.question)) == (q.lang == "ru"), q.id
        assert len(q.gold) <= 3 and len(q.gold_title) == len(q.gold) == len(q.gold_purpose)
        assert not reused_runs(q.question, [*q.gold_title, *q.gold_purpose]), q.id
    assert counts == {("en", True): 10, ("ru", True): 10, ("en", False): 10, ("ru", False): 10}
    assert len({q.id for q in questions}) == len({q.question for q in questions}) == 40


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_no_question_or_id_repeats_an_older_set(path: Path) -> None:
    fresh = load(path).questions
    for folder in OLDER_ROUTE_DIRS:
        older = load(REPO / "tests" / folder / path.name).questions
        assert {q.id for q in fresh} & {q.id for q in older} == set()
        assert {" ".join(words(q.question)) for q in fresh} & {
            " ".join(words(q.question)) for q in older
        } == set()


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_gold_exists_with_its_title_and_purpose_and_is_governed(
    path: Path, corpus: dict[str, Path]
) -> None:
    question_set = load(path)
    docs = _bank_snapshot(corpus, question_set.bank).docs
    wrong = [
        f"{q.id}: {gold}"
        for q in question_set.questions
        for gold, title, purpose in zip(q.gold, q.gold_title, q.gold_purpose, strict=True)
        if gold not in docs
        or (docs[gold].title, docs[gold].purpose) != (title, purpose)
        or docs[gold].doc_function == "template"
        or docs[gold].layer == "inbox"
        or docs[gold].status == "archived"
    ]
    assert wrong == []
