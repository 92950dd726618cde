"""The optional bank vocabulary, `dna/vocabulary.md` (spec 01 §10)."""

from __future__ import annotations

from mbank.contract import parse_vocabulary
from mbank.model import VocabularyRow


def test_the_spec_example() -> None:
    text = """\
| Russian stem | English |
|---|---|
| корпус | corpus, collection |
| `книг` | book, books |
| `прогон` | run, pass |
"""
    assert parse_vocabulary(text) == (
        VocabularyRow(stem="корпус", words=("corpus", "collection")),
        VocabularyRow(stem="книг", words=("book", "books")),
        VocabularyRow(stem="прогон", words=("run", "pass")),
    )


def test_empty_text_gives_no_rows() -> None:
    assert parse_vocabulary("") == ()


def test_header_separator_and_prose_drop_out() -> None:
    text = "# Vocabulary\n\nкорпус | corpus\n| Русский | English |\n|:--|--:|\n| - | - |\n"
    # The header has Cyrillic on the left, but `English` is kept as the word `english`.
    assert parse_vocabulary(text) == (VocabularyRow(stem="русский", words=("english",)),)


def test_left_cell_is_lower_cased_and_needs_a_cyrillic_letter() -> None:
    text = "| КОРПУС | Corpus |\n| corpus | corpus |\n| 123 | number |\n| ёлк | tree |"
    assert parse_vocabulary(text) == (
        VocabularyRow(stem="корпус", words=("corpus",)),
        VocabularyRow(stem="ёлк", words=("tree",)),
    )


def test_words_are_lower_cased_unbackticked_and_must_be_identifier_like() -> None:
    text = "| книг | `Book`, two words, 3d, page-turn, snake_case, книга, , x.y |"
    assert parse_vocabulary(text) == (
        VocabularyRow(stem="книг", words=("book", "page-turn", "snake_case")),
    )


def test_a_row_without_any_valid_word_is_dropped() -> None:
    assert parse_vocabulary("| корпус | корпус, 42 |\n| книг |") == ()


def test_only_the_first_two_cells_count_and_indentation_is_allowed() -> None:
    text = "   | прогон | run | ignored, words |"
    assert parse_vocabulary(text) == (VocabularyRow(stem="прогон", words=("run",)),)


def test_rows_keep_file_order_and_duplicates() -> None:
    text = "| б | b |\n| а | a |\n| б | bee |"
    assert [row.stem for row in parse_vocabulary(text)] == ["б", "а", "б"]
