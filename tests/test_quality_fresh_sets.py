"""The routing sets of one shape, `tests/route_quality_test4/` to `_test30/` (issue 16).

`_test4/` to `_test10/` were held out until issue 16's eighth pass made them development sets
(`_test9/` and `_test10/` after their one run); `_test11/` and `_test12/` were held out, run
once, and became development sets when the ninth pass began; `_test13/` and `_test14/` likewise
after their one run, when the ninth pass's second cycle began; `_test15/` and `_test16/`
likewise when the tenth pass began; `_test17/` and `_test18/` after their one run, when its
second cycle began; `_test19/` and `_test20/` likewise before its third; `_test21/` and
`_test22/` likewise when the eleventh pass began; `_test23/` and `_test24/` after their one run,
when its second cycle began; `_test25/` and `_test26/` likewise before its third;
`_test27/` to `_test30/` are the held-out sets now. Each pair was written at the same time from
two disjoint halves (of the documents and of the topics), and the third cycle's four from
disjoint quarters, so each set is checked against those written beside it as well.

Each was written before the routing pass it measures, after the older sets had been run for
aggregates; see each folder's README. Per bank: 15 English and 15 Russian answerable questions,
15 + 15 without an answer, 8 + 8 of these *tempting* (they reuse the bank's words). From the
fifth set on, at least four tempting questions per language are the *hard shape*: every word
occurs somewhere in the bank, but not together or not in that sense.

Without a corpus these tests check the benchmark format, the counts, the paraphrase rule, that no
question or id repeats one of the folders written before the set, and the tempting and hard-shape
marks. The corpus-marked tests re-read the banks: every gold path exists with the recorded title
and purpose and is not a template, an inbox note or an archived document; each tempting question
reuses a word of the bank; every word of a hard-shape question occurs somewhere in its bank.
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
    bank_root,
    load,
    tempting_without_bank_words,
    ungoverned_gold,
    words,
)

from bench import route_quality

FIRST = ("route_quality", "route_quality_test", "route_quality_test2", "route_quality_test3")
# every folder written before the two held-out sets of the eighth pass (the development sets)
UP_TO_TEST8 = (
    *FIRST,
    "route_quality_test4",
    "route_quality_dev2",
    "route_quality_test5",
    "route_quality_test6",
    "route_quality_test7",
    "route_quality_test8",
)
# the folders written before the ninth pass's first held-out pair, and before its second
UP_TO_TEST12 = (
    *UP_TO_TEST8,
    "route_quality_test9",
    "route_quality_test10",
    "route_quality_test11",
    "route_quality_test12",
)
UP_TO_TEST14 = (*UP_TO_TEST12, "route_quality_test13", "route_quality_test14")
UP_TO_TEST16 = (*UP_TO_TEST14, "route_quality_test15", "route_quality_test16")
UP_TO_TEST18 = (*UP_TO_TEST16, "route_quality_test17", "route_quality_test18")
UP_TO_TEST20 = (*UP_TO_TEST18, "route_quality_test19", "route_quality_test20")
UP_TO_TEST22 = (*UP_TO_TEST20, "route_quality_test21", "route_quality_test22")
UP_TO_TEST24 = (*UP_TO_TEST22, "route_quality_test23", "route_quality_test24")
UP_TO_TEST26 = (*UP_TO_TEST24, "route_quality_test25", "route_quality_test26")
# each set, the folders written before it (the development sets included), and how many of its
# tempting questions per language must be the hard shape; route_quality_dev2 was written beside
# test5, so only the sets after it must not repeat it
OLDER_AND_HARD: dict[str, tuple[tuple[str, ...], int]] = {
    "route_quality_test4": (FIRST, 0),
    "route_quality_test5": ((*FIRST, "route_quality_test4"), 4),
    "route_quality_test6": (
        (*FIRST, "route_quality_test4", "route_quality_dev2", "route_quality_test5"),
        4,
    ),
    "route_quality_test7": (
        (
            *FIRST,
            "route_quality_test4",
            "route_quality_dev2",
            "route_quality_test5",
            "route_quality_test6",
        ),
        4,
    ),
    "route_quality_test8": (
        (
            *FIRST,
            "route_quality_test4",
            "route_quality_dev2",
            "route_quality_test5",
            "route_quality_test6",
            "route_quality_test7",
        ),
        4,
    ),
    "route_quality_test9": (UP_TO_TEST8, 4),
    "route_quality_test10": ((*UP_TO_TEST8, "route_quality_test9"), 4),
    "route_quality_test11": ((*UP_TO_TEST8, "route_quality_test9", "route_quality_test10"), 4),
    # written beside test11 from the other halves, so checked against it as well
    "route_quality_test12": (
        (*UP_TO_TEST8, "route_quality_test9", "route_quality_test10", "route_quality_test11"),
        4,
    ),
    "route_quality_test13": (UP_TO_TEST12, 4),
    # written beside test13 from the other halves, so checked against it as well
    "route_quality_test14": ((*UP_TO_TEST12, "route_quality_test13"), 4),
    "route_quality_test15": (UP_TO_TEST14, 4),
    # written beside test15 from the other halves, so checked against it as well
    "route_quality_test16": ((*UP_TO_TEST14, "route_quality_test15"), 4),
    "route_quality_test17": (UP_TO_TEST16, 4),
    # written beside test17 from the other halves, so checked against it as well
    "route_quality_test18": ((*UP_TO_TEST16, "route_quality_test17"), 4),
    "route_quality_test19": (UP_TO_TEST18, 4),
    # written beside test19 from the other halves, so checked against it as well
    "route_quality_test20": ((*UP_TO_TEST18, "route_quality_test19"), 4),
    "route_quality_test21": (UP_TO_TEST20, 4),
    # written beside test21 from the other halves, so checked against it as well
    "route_quality_test22": ((*UP_TO_TEST20, "route_quality_test21"), 4),
    "route_quality_test23": (UP_TO_TEST22, 4),
    # written beside test23 from the other halves, so checked against it as well
    "route_quality_test24": ((*UP_TO_TEST22, "route_quality_test23"), 4),
    "route_quality_test25": (UP_TO_TEST24, 4),
    # written beside test25 from the other halves, so checked against it as well
    "route_quality_test26": ((*UP_TO_TEST24, "route_quality_test25"), 4),
    # the third cycle's four, written side by side from disjoint quarters
    "route_quality_test27": (UP_TO_TEST26, 4),
    "route_quality_test28": ((*UP_TO_TEST26, "route_quality_test27"), 4),
    "route_quality_test29": ((*UP_TO_TEST26, "route_quality_test27", "route_quality_test28"), 4),
    "route_quality_test30": (
        (*UP_TO_TEST26, "route_quality_test27", "route_quality_test28", "route_quality_test29"),
        4,
    ),
}
CASES = [
    (folder, path)
    for folder in OLDER_AND_HARD
    for path in sorted((REPO / "tests" / folder).glob("*.json"))
]
IDS = [f"{folder.removeprefix('route_quality_')}-{path.stem}" for folder, path in CASES]
PER_LANGUAGE_AND_KIND = 15
TEMPTING_PER_LANGUAGE = 8
HARD_SHAPE = "tempting (hard shape"


@pytest.mark.parametrize("folder", list(OLDER_AND_HARD))
def test_each_real_bank_has_a_route_file(folder: str) -> None:
    assert [s.bank for s in route_quality.load_sets(REPO / "tests" / folder)] == sorted(BANKS)


@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_counts_paraphrase_rule_and_nothing_repeated_from_the_older_sets(
    folder: str, path: Path
) -> None:
    # 15 + 15 per language and kind, and new to every folder written before it, so no question
    # was seen before the set was run
    assert_paraphrased_questions_per_language_and_kind(path, PER_LANGUAGE_AND_KIND)
    assert_no_question_or_id_repeats(path, OLDER_AND_HARD[folder][0])


@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_tempting_questions_are_unanswerable_eight_per_language_and_enough_hard(
    folder: str, path: Path
) -> None:
    questions = load(path).questions
    tempting = [q for q in questions if q.note.startswith("tempting")]
    assert all(not q.gold for q in tempting)
    assert (
        sorted(q.lang for q in tempting)
        == ["en"] * TEMPTING_PER_LANGUAGE + ["ru"] * TEMPTING_PER_LANGUAGE
    )
    hard = [q.lang for q in questions if q.note.startswith(HARD_SHAPE)]
    assert hard.count("en") >= OLDER_AND_HARD[folder][1]
    assert hard.count("ru") >= OLDER_AND_HARD[folder][1]


@pytest.mark.corpus
@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_gold_is_governed_and_each_tempting_question_reuses_the_banks_words(
    folder: str, path: Path, corpus: dict[str, Path]
) -> None:
    assert ungoverned_gold(path, corpus) == []
    root = bank_root(corpus, load(path).bank)
    assert tempting_without_bank_words(path, root) == []


@pytest.mark.corpus
@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_every_word_of_a_hard_shape_question_occurs_somewhere_in_its_bank(
    folder: str, path: Path, corpus: dict[str, Path]
) -> None:
    # ai-setup has no Cyrillic text, so its Russian hard-shape questions are checked on their
    # Latin words only (their notes name the English counterparts of the Russian words)
    question_set = load(path)
    root = bank_root(corpus, question_set.bank)
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
