"""The frontmatter YAML loader: libyaml speed, YAML 1.2 core scalars, three guards, exact
error kinds and texts (spec 01 §4.2, §4.3, §4.5; 07 §3.1)."""

from __future__ import annotations

import base64
import datetime as dt
import math
from typing import Any

import pytest
import yaml

from mbank.frontmatter_yaml import (
    ALIAS_NODE_LIMIT,
    FRONTMATTER_MAX_BYTES,
    YamlLoader,
    aliases_exceed_limit,
)
from mbank.parse import (
    json_data,
    load_yaml,
    parse_text,
    scalar_text,
)


def value_of(scalar: str) -> Any:
    """The value the loader builds for `a: <scalar>`."""
    outcome = load_yaml(f"a: {scalar}")
    assert outcome.error is None, outcome
    assert outcome.data is not None
    return outcome.data["a"]


# -- the loader class -------------------------------------------------------------------------


def test_the_loader_is_libyaml_csafeloader_when_libyaml_is_present() -> None:
    assert yaml.__with_libyaml__, "PyYAML wheels bundle libyaml; mbank relies on its speed"
    assert issubclass(YamlLoader, yaml.CSafeLoader)
    assert not issubclass(YamlLoader, yaml.Loader)  # never the unsafe loader


def test_stock_resolvers_for_bool_int_float_null_merge_value_are_replaced() -> None:
    tags = {tag for entries in YamlLoader.yaml_implicit_resolvers.values() for tag, _ in entries}
    assert "tag:yaml.org,2002:merge" not in tags
    assert "tag:yaml.org,2002:value" not in tags
    # the stock 1.1 bool resolver lists "yes"; the 1.2 one registered instead does not
    assert "y" not in YamlLoader.yaml_implicit_resolvers


# -- YAML 1.2 core scalars --------------------------------------------------------------------

CORE_SCALARS: list[tuple[str, Any]] = [
    # null
    ("~", None),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("", None),
    ("nULL", "nULL"),
    # bool: only the six spellings of true/false
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("False", False),
    ("FALSE", False),
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("n", "n"),
    ("Yes", "Yes"),
    ("tRUE", "tRUE"),
    # int: decimal (no octal by leading zero), 0o octal, 0x hex
    ("12", 12),
    ("012", 12),
    ("-012", -12),
    ("+12", 12),
    ("0", 0),
    ("-0", 0),
    ("0o17", 15),
    ("0x1F", 31),
    ("0xff", 255),
    ("0o8", "0o8"),
    ("0xG", "0xG"),
    ("0b101", "0b101"),
    ("1_000", "1_000"),
    ("12:30", "12:30"),
    ("1:30", "1:30"),
    ("190:20:30", "190:20:30"),
    # float
    ("12.0", 12.0),
    ("1e3", 1000.0),
    ("1E3", 1000.0),
    ("-1.5e-3", -0.0015),
    ("1.", 1.0),
    (".5", 0.5),
    ("+.5", 0.5),
    ("1_000.5", "1_000.5"),
    ("1e", "1e"),
    ("1.2.3", "1.2.3"),
    # timestamps
    ("2026-09-14", dt.date(2026, 9, 14)),
    ("2026-09-14T10:00:00Z", dt.datetime(2026, 9, 14, 10, 0, tzinfo=dt.UTC)),
    (
        "2026-09-14 10:00:00 +02:00",
        dt.datetime(2026, 9, 14, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    ),
    ("2026-09-14T10:00:00", dt.datetime(2026, 9, 14, 10, 0)),
    ("2026-9-14", "2026-9-14"),
    # everything else is a string; << and = have no special meaning
    ("<<", "<<"),
    ("=", "="),
    ("draft # note", "draft"),  # a comment after a space is YAML's, not part of the value
    ("[a, b]", ["a", "b"]),
]


@pytest.mark.parametrize(("scalar", "expected"), CORE_SCALARS, ids=[s for s, _ in CORE_SCALARS])
def test_core_schema_resolves_plain_scalars(scalar: str, expected: Any) -> None:
    value = value_of(scalar)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("scalar", "check"),
    [
        (".inf", lambda v: v == math.inf),
        (".Inf", lambda v: v == math.inf),
        ("+.INF", lambda v: v == math.inf),
        ("-.inf", lambda v: v == -math.inf),
        (".nan", math.isnan),
        (".NaN", math.isnan),
        (".NAN", math.isnan),
    ],
)
def test_special_floats_resolve(scalar: str, check: Any) -> None:
    value = value_of(scalar)
    assert isinstance(value, float)
    assert check(value)


@pytest.mark.parametrize("scalar", ["-.nan", ".iNf", "inf", "nan", ".infinity"])
def test_near_misses_of_special_floats_stay_strings(scalar: str) -> None:
    assert value_of(scalar) == scalar


@pytest.mark.parametrize("scalar", ['"12"', "'true'", '"~"', "'2026-09-14'", '"1e3"', "'012'"])
def test_quoted_scalars_are_always_strings(scalar: str) -> None:
    assert value_of(scalar) == scalar[1:-1]


def test_int_is_tried_before_float() -> None:
    assert type(value_of("12")) is int
    assert type(value_of("12.0")) is float
    assert type(value_of("1e3")) is float


def test_merge_key_has_no_special_meaning() -> None:
    outcome = load_yaml("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2")
    assert outcome.data == {"base": {"x": 1}, "child": {"<<": {"x": 1}, "y": 2}}


def test_binary_and_set_tags_build_bytes_and_sets() -> None:
    outcome = load_yaml("blob: !!binary aGVsbG8=\ntags: !!set {b: null, a: null}")
    assert outcome.data == {"blob": b"hello", "tags": {"a", "b"}}


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("2024: x", "2024"),
        ("1.5: x", "1.5"),
        ("true: x", "true"),
        ("2026-09-14: x", "2026-09-14"),
        ("0x10: x", "16"),
        (".inf: x", ".inf"),
        ("~: x", ""),
    ],
)
def test_non_string_keys_become_their_scalar_text(text: str, key: str) -> None:
    assert load_yaml(text).data == {key: "x"}


def test_a_list_or_mapping_key_is_a_yaml_error() -> None:
    # Spec silent: a collection has no scalar text, so mbank keeps PyYAML's own refusal.
    outcome = load_yaml("title: T\n? [a, b]\n: 1\n? [c]\n: 2")
    assert (outcome.kind, outcome.error, outcome.line) == ("yaml", "found unhashable key", 3)


def test_keys_keep_file_order() -> None:
    outcome = load_yaml("zeta: 1\nalpha: 2\nmid: 3")
    assert outcome.data is not None
    assert list(outcome.data) == ["zeta", "alpha", "mid"]


# -- empty and non-mapping documents ----------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment", "~", "null", "---", "  "])
def test_empty_or_null_yaml_is_an_empty_mapping_without_error(text: str) -> None:
    assert load_yaml(text) == load_yaml("")
    assert load_yaml(text).data == {}
    assert load_yaml(text).error is None


@pytest.mark.parametrize("text", ["- a\n- b", "just a sentence", "42", "[a, b]", '"quoted"'])
def test_a_top_level_value_that_is_not_a_mapping_is_refused(text: str) -> None:
    outcome = load_yaml(text)
    assert (outcome.data, outcome.kind, outcome.error, outcome.line) == (
        None,
        "not-a-mapping",
        "frontmatter is not a mapping",
        1,
    )


# -- guard 1: size ----------------------------------------------------------------------------


def test_frontmatter_of_exactly_64_kib_is_loaded() -> None:
    text = "purpose: " + "a" * (FRONTMATTER_MAX_BYTES - len("purpose: "))
    assert len(text.encode()) == 65_536
    assert load_yaml(text).error is None


def test_frontmatter_over_64_kib_is_refused_as_too_large() -> None:
    text = "purpose: " + "a" * (FRONTMATTER_MAX_BYTES - len("purpose: ") + 1)
    outcome = load_yaml(text)
    assert (outcome.kind, outcome.error, outcome.line) == (
        "too-large",
        "frontmatter is 65537 bytes",
        1,
    )


def test_the_size_limit_counts_utf8_bytes_not_characters() -> None:
    text = "purpose: " + "я" * 32_800  # 32,809 characters, 65,609 bytes
    outcome = load_yaml(text)
    assert outcome.kind == "too-large"
    assert outcome.error == f"frontmatter is {len(text.encode())} bytes"


# -- guard 2: aliases -------------------------------------------------------------------------


def test_a_few_small_anchors_are_fine() -> None:
    outcome = load_yaml("a: &x [1, 2]\nb: *x\nc: *x\nd: &m {k: v}\ne: *m")
    assert outcome.data == {"a": [1, 2], "b": [1, 2], "c": [1, 2], "d": {"k": "v"}, "e": {"k": "v"}}


def _anchored_list(size: int, aliases: int) -> str:
    """An anchored list of `size - 1` scalars (`size` nodes) referenced `aliases` times."""
    items = ", ".join(["x"] * (size - 1))
    return f"a: &a [{items}]\n" + "".join(f"r{i}: *a\n" for i in range(aliases))


def test_aliases_adding_exactly_the_limit_are_accepted() -> None:
    assert load_yaml(_anchored_list(ALIAS_NODE_LIMIT, 1)).error is None


def test_aliases_adding_one_node_past_the_limit_are_refused() -> None:
    outcome = load_yaml(_anchored_list(ALIAS_NODE_LIMIT + 1, 1))
    assert (outcome.kind, outcome.error, outcome.line) == (
        "alias-limit",
        "aliases expand past 1000 nodes",
        1,
    )


def test_nested_aliases_count_their_full_expansion() -> None:
    # a = 3 nodes, b = [*a, *a] = 7 nodes; c = [*b, *b]: alias arrivals add 2*3 + 2*7 = 20
    small = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]"
    assert load_yaml(small).error is None
    nodes = yaml.compose(small, Loader=YamlLoader)
    assert not aliases_exceed_limit(nodes, limit=20)
    assert aliases_exceed_limit(nodes, limit=19)


def test_a_yaml_bomb_is_refused_quickly() -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    outcome = load_yaml("\n".join(lines))
    assert outcome.kind == "alias-limit"


@pytest.mark.parametrize("text", ["a: &a [*a]", "a: &a\n  b: *a", "a: &a [1, [2, *a]]"])
def test_a_recursive_alias_is_refused(text: str) -> None:
    assert load_yaml(text).kind == "alias-limit"


# -- guard 3: duplicate keys ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("title: A\ndoc_kind: adr\ntitle: B", "title", 4),
        ("a: 1\nb:\n  c: 1\n  c: 2", "c", 5),
        ("a: [{k: 1, k: 2}]", "k", 2),
        ("a: {x: 1, x: 2}", "x", 2),
        ("1: one\n'1': also one", "1", 3),  # keys compare as text (§4.2)
    ],
)
def test_a_duplicate_key_at_any_depth_is_refused(text: str, key: str, line: int) -> None:
    outcome = load_yaml(text)
    assert (outcome.data, outcome.kind, outcome.error, outcome.line) == (
        None,
        "duplicate-key",
        f'duplicate key "{key}"',
        line,
    )


# -- syntax and construction errors -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem", "line"),
    [
        # libyaml's wording ("in this context"), not the pure-Python loader's ("here")
        ("title: T\npurpose: Defines x: y", "mapping values are not allowed in this context", 3),
        ('title: "unclosed', "found unexpected end of stream", 2),
        ("title: T\n\tpurpose: x", "found a tab character that violates indentation", 3),
        ("a:\n\t- x", "found character that cannot start any token", 3),
        (
            "title: T\nx: !!python/object:os.system ls",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
            3,
        ),
        ("x: !custom value", "could not determine a constructor for the tag '!custom'", 2),
        ("x: *nowhere", "found undefined alias", 2),
    ],
)
def test_syntax_and_construction_errors_are_kind_yaml_with_the_loader_problem(
    text: str, problem: str, line: int
) -> None:
    outcome = load_yaml(text)
    assert (outcome.data, outcome.kind, outcome.error, outcome.line) == (
        None,
        "yaml",
        problem,
        line,
    )


def test_error_texts_carry_no_position() -> None:
    # The write post-check compares findings by message; a moved line must not look new.
    for text in ["a: b: c", 'a: "x', "a: !!python/object:x y", "a: 1\na: 2"]:
        error = load_yaml(text).error
        assert error is not None
        assert "line" not in error
        assert "column" not in error


def test_loading_invalid_yaml_twice_gives_identical_results() -> None:
    # Upstream memoised by content and returned the first, mutated result the second time.
    text = "---\ntitle: T\npurpose: a: b\ncanonical_for:\n  - k\n---\n# T\n"
    first = parse_text("x.md", text)
    second = parse_text("x.md", text)
    assert first == second
    assert load_yaml("purpose: a: b") == load_yaml("purpose: a: b")
    assert first.data == {"title": "T", "purpose": "a: b", "canonical_for": ["k"]}


def test_nesting_999_deep_loads_and_1000_is_libyamls_error() -> None:
    ok = load_yaml("a: " + "[" * 999 + "]" * 999)
    assert ok.error is None
    too_deep = load_yaml("a: " + "[" * 1000 + "]" * 1000)
    assert (too_deep.kind, too_deep.error) == ("yaml", "exceeded maximum nesting depth")


# -- scalar text (§4.5) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("as is", "as is"),
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (-3, "-3"),
        (1.5, "1.5"),
        (1000.0, "1000.0"),
        (1e20, "1e+20"),
        (math.inf, ".inf"),
        (-math.inf, "-.inf"),
        (math.nan, ".nan"),
        (dt.date(2026, 9, 14), "2026-09-14"),
        (dt.datetime(2026, 9, 14, 10, 0, tzinfo=dt.UTC), "2026-09-14T10:00:00+00:00"),
        (dt.datetime(2026, 9, 14, 10, 0), "2026-09-14T10:00:00"),
        (None, None),
    ],
)
def test_scalar_text(value: Any, text: str | None) -> None:
    assert scalar_text(value) == text


def test_json_data_makes_frontmatter_json_safe() -> None:
    data = {
        "date": dt.date(2026, 9, 14),
        "when": dt.datetime(2026, 9, 14, 10, 0, tzinfo=dt.UTC),
        "floats": [math.nan, math.inf, -math.inf, 1.5],
        "blob": b"hello",
        "tags": {"b", "a"},
        "nested": {"list": [1, (2, 3)], 2024: "int key"},
        "plain": ["s", 1, True, None],
    }
    assert json_data(data) == {
        "date": "2026-09-14",
        "when": "2026-09-14T10:00:00+00:00",
        "floats": [".nan", ".inf", "-.inf", 1.5],
        "blob": base64.b64encode(b"hello").decode(),
        "tags": ["a", "b"],
        "nested": {"list": [1, [2, 3]], "2024": "int key"},
        "plain": ["s", 1, True, None],
    }


def test_json_data_of_a_loaded_document_keeps_key_order() -> None:
    outcome = load_yaml("z: 1\na: 2026-09-14\nm: [x]")
    assert outcome.data is not None
    assert list(json_data(outcome.data)) == ["z", "a", "m"]
