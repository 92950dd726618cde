"""The frontmatter writer of spec 03 §3: key order, scalars, the three quoting styles, block
sequences and mappings, and the promise that a written block reads back identically."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mbank.frontmatter_writer import frontmatter_block, plain_safe, yaml_scalar, yaml_string
from mbank.parse import load_yaml, parse_text, split_frontmatter


def read_back(block: str) -> dict[str, Any]:
    split = split_frontmatter(block + "# Body\n")
    assert split.has_frontmatter and split.yaml_text is not None
    loaded = load_yaml(split.yaml_text)
    assert loaded.error is None, loaded.error
    assert loaded.data is not None
    return loaded.data


def test_the_spec_example_is_written_exactly() -> None:
    block = frontmatter_block(
        {
            "title": "Deploy The Backend",
            "doc_kind": "ops",
            "doc_function": "canonical",
            "purpose": "Read when: the build breaks",
            "derived_from": ["../dna/governance.md"],
            "canonical_for": ["deployment_procedure"],
            "status": "draft",
            "date": dt.date(2026, 9, 14),
            "reviewed_on": "2026-09-14",
        }
    )
    assert block == (
        "---\n"
        "title: Deploy The Backend\n"
        "doc_kind: ops\n"
        "doc_function: canonical\n"
        "purpose: 'Read when: the build breaks'\n"
        "derived_from:\n"
        "  - ../dna/governance.md\n"
        "canonical_for:\n"
        "  - deployment_procedure\n"
        "status: draft\n"
        "date: 2026-09-14\n"
        "reviewed_on: '2026-09-14'\n"
        "---\n"
    )
    data = read_back(block)
    assert data["date"] == dt.date(2026, 9, 14)
    assert data["reviewed_on"] == "2026-09-14"
    assert data["purpose"] == "Read when: the build breaks"


def test_keys_keep_the_given_order() -> None:
    block = frontmatter_block({"zeta": 1, "alpha": 2, "mid": 3})
    assert block == "---\nzeta: 1\nalpha: 2\nmid: 3\n---\n"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (-3, "-3"),
        (1.5, "1.5"),
        (1e16, "1e+16"),
        (math.inf, ".inf"),
        (-math.inf, "-.inf"),
        (math.nan, ".nan"),
        (dt.date(2026, 9, 14), "2026-09-14"),
        (dt.datetime(2026, 9, 14, 10, 0, tzinfo=dt.UTC), "2026-09-14T10:00:00+00:00"),
    ],
)
def test_scalars_are_written_as_the_spec_lists_them(value: Any, written: str) -> None:
    assert yaml_scalar(value) == written
    loaded = read_back(frontmatter_block({"k": value}))["k"]
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(loaded)
    else:
        assert loaded == value and type(loaded) is type(value)


@pytest.mark.parametrize(
    "text",
    [
        *["yes", "No", "on", "012", "1_000", "1:30", "2026-09-14", "true", "null", "~", "1e3"],
        *["<<", "y", "Y", "n", "N", "Off", "0x1f", ".5", "=", "12"],
    ],
)
def test_strings_a_yaml_loader_would_turn_into_something_else_are_single_quoted(
    text: str,
) -> None:
    assert yaml_string(text) == f"'{text}'"
    assert read_back(frontmatter_block({"k": text}))["k"] == text


@pytest.mark.parametrize("first", list("-?:,[]{}#&*!|>'\"%@`"))
def test_a_string_starting_with_an_indicator_is_quoted(first: str) -> None:
    text = first + "value"
    assert not plain_safe(text)
    assert read_back(frontmatter_block({"k": text}))["k"] == text


@pytest.mark.parametrize(
    "text", ["a: b", "see #3 above", "ends with:", " leading", "trailing ", "", "tab\there"]
)
def test_colon_space_space_hash_trailing_colon_and_edge_whitespace_are_quoted(text: str) -> None:
    assert not plain_safe(text)
    assert read_back(frontmatter_block({"k": text}))["k"] == text


@pytest.mark.parametrize(
    "text",
    ["Deploy The Backend", "a:b", "x#y", "Пороги фильтрации", "it's", "../dna/governance.md"],
)
def test_ordinary_strings_stay_plain(text: str) -> None:
    assert yaml_string(text) == text


def test_single_quotes_inside_a_single_quoted_string_are_doubled() -> None:
    assert yaml_string("Read before the owner's: release") == (
        "'Read before the owner''s: release'"
    )


def test_a_line_break_or_control_character_is_double_quoted_with_json_escapes() -> None:
    assert yaml_string("Пороги\nвторая строка") == '"Пороги\\nвторая строка"'
    assert yaml_string('tab\tand "quotes" and \\') == '"tab\\tand \\"quotes\\" and \\\\"'
    for text in ["a\x7fb", "a\x85b", "a\u2028b", "a\u2029b", "a\ufeffb", "a\x00b", "\x1b[0m"]:
        written = yaml_string(text)
        assert written.startswith('"') and "\n" not in written
        assert read_back(frontmatter_block({"k": text}))["k"] == text


def test_long_lines_are_never_folded() -> None:
    text = "word " * 200 + "end"
    block = frontmatter_block({"purpose": text})
    assert block.count("\n") == 3
    assert read_back(block)["purpose"] == text


def test_sequences_are_block_style_two_spaces_in_and_empty_ones_flow() -> None:
    block = frontmatter_block(
        {
            "must_not_define": [],
            "derived_from": [
                "../domain/rules.md",
                {"path": "../domain/rules.md", "fit": "Only the thresholds."},
            ],
            "pairs": [["a", "b"], [1, None]],
        }
    )
    assert block == (
        "---\n"
        "must_not_define: []\n"
        "derived_from:\n"
        "  - ../domain/rules.md\n"
        "  - path: ../domain/rules.md\n"
        "    fit: Only the thresholds.\n"
        "pairs:\n"
        '  - ["a", "b"]\n'
        "  - [1, null]\n"
        "---\n"
    )
    assert read_back(block)["pairs"] == [["a", "b"], [1, None]]


def test_mappings_nest_two_spaces_per_level_and_empty_ones_are_flow() -> None:
    block = frontmatter_block({"extra": {}, "owner": {"team": "core", "on_call": {"week": 37}}})
    assert block == ("---\nextra: {}\nowner:\n  team: core\n  on_call:\n    week: 37\n---\n")


def test_a_key_that_is_not_an_identifier_is_single_quoted() -> None:
    block = frontmatter_block({"two words": 1, "1st": 2, "null": 3, "ok-key_2": 4})
    assert block == "---\n'two words': 1\n'1st': 2\n'null': 3\nok-key_2: 4\n---\n"
    assert list(read_back(block)) == ["two words", "1st", "null", "ok-key_2"]


def test_a_written_block_parses_as_a_document_without_any_parse_error() -> None:
    block = frontmatter_block(
        {"title": "A: B", "doc_kind": "ops", "purpose": "yes", "status": "draft"}
    )
    doc = parse_text("ops/x.md", block + "# A: B\n")
    assert doc.parse_error is None
    assert (doc.title, doc.purpose, doc.status) == ("A: B", "yes", "draft")


# --------------------------------------------------------------------------------------------
# Properties (spec 07 §4.4): serialise → parse gives the same data
# --------------------------------------------------------------------------------------------

KEYS = st.one_of(
    st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_-]{0,12}\Z"),
    st.text(min_size=1, max_size=12),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.dates(),
    st.text(max_size=40),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(KEYS, children, max_size=4),
    ),
    max_leaves=12,
)


@given(st.dictionaries(KEYS, VALUES, max_size=8))
def test_any_mapping_of_yaml_safe_values_reads_back_identically(mapping: dict[str, Any]) -> None:
    assert read_back(frontmatter_block(mapping)) == mapping


@given(st.text(max_size=60))
def test_any_string_reads_back_and_takes_the_first_style_that_applies(text: str) -> None:
    written = yaml_string(text)
    assert read_back(frontmatter_block({"purpose": text}))["purpose"] == text
    if plain_safe(text):
        assert written == text
    elif written.startswith("'"):
        assert "\n" not in text and "\r" not in text
    else:
        assert written.startswith('"')


def test_a_non_string_key_is_written_as_its_scalar_text() -> None:
    from mbank.frontmatter_writer import frontmatter_block
    from mbank.parse import load_yaml

    block = frontmatter_block({"extra": {True: 1, 2024: "x"}})
    assert "  true: 1\n" in block
    loaded = load_yaml(block.removeprefix("---\n").removesuffix("---\n"))
    assert loaded.data == {"extra": {"true": 1, "2024": "x"}}
