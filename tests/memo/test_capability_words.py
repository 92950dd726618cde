"""The capability words are package data (mbank/memo/capability_words.tsv), read once."""

from __future__ import annotations

from mbank.memo.capabilities import _KEYWORDS, CATALOGUE, LANGUAGES, WEIGHTS
from mbank.package_data import tsv_rows


def test_every_row_names_a_capability_a_weight_and_a_language() -> None:
    names = {cap.name for cap in CATALOGUE}
    rows = tsv_rows("mbank.memo", "capability_words.tsv")
    assert rows, "the words file ships with the package"
    for name, weight, language, words in rows:
        assert name in names and weight in WEIGHTS and language in LANGUAGES, (name, weight)
        assert words.split() == words.split(" "), f"{name}: words are single-space separated"


def test_every_capability_is_called_by_a_verb_or_a_modal_word() -> None:
    called = {
        name
        for name, weight, _language, _words in tsv_rows("mbank.memo", "capability_words.tsv")
        if weight in ("verb", "modal")
    }
    assert called == {cap.name for cap in CATALOGUE}


def test_the_index_holds_the_stems_of_both_languages() -> None:
    assert ("en", "forget") in _KEYWORDS and ("es", "olvid") in _KEYWORDS
    assert dict(_KEYWORDS[("en", "forget")]) == {"do_forget": 3.0}
