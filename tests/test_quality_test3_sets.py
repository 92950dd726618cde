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
    REPO,
    assert_no_question_or_id_repeats,
    assert_paraphrased_questions_per_language_and_kind,
    load,
    tempting_without_bank_words,
    ungoverned_gold,
)

from bench import route_quality

ROUTE_DIR = REPO / "tests" / "route_quality_test3"
OLDER_ROUTE_DIRS = ("route_quality", "route_quality_test", "route_quality_test2")
ROUTE_FILES = sorted(ROUTE_DIR.glob("*.json"))


def test_each_real_bank_has_a_route_file() -> None:
    assert [s.bank for s in route_quality.load_sets(ROUTE_DIR)] == sorted(BANKS)


@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_counts_paraphrase_rule_and_nothing_repeated_from_the_older_sets(path: Path) -> None:
    # the same shape as route_quality_test2 (10 + 10 per language and kind), and new to all three
    # older sets, so no question was seen before this set was run
    assert_paraphrased_questions_per_language_and_kind(path)
    assert_no_question_or_id_repeats(path, OLDER_ROUTE_DIRS)


@pytest.mark.corpus
@pytest.mark.parametrize("path", ROUTE_FILES, ids=lambda p: p.stem)
def test_gold_is_governed_and_each_tempting_question_reuses_the_banks_words(
    path: Path, corpus: dict[str, Path]
) -> None:
    assert ungoverned_gold(path, corpus) == []
    question_set = load(path)
    tempting = [q for q in question_set.questions if q.note.startswith("tempting")]
    assert len(tempting) == 10
    assert tempting_without_bank_words(path, corpus[question_set.bank]) == []
