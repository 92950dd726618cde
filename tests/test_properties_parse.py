"""Property tests of the parsing layer (spec 07 §4.4): parsing never raises on any bytes,
frontmatter of YAML-safe values survives serialise → parse, and the path functions keep their
promises on any input. Profiles `ci` (default) and `fuzz` are registered in conftest."""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from mbank.frontmatter_yaml import YamlLoader
from mbank.model import RefusalError
from mbank.parse import (
    json_data,
    load_yaml,
    parse_document,
    recover_leniently,
    resolve_from,
    scan_body,
    split_frontmatter,
)
from mbank.paths import normalise_caller_path

# -- parsing never raises ---------------------------------------------------------------------

MARKDOWN_BYTES = st.lists(
    st.sampled_from(
        [
            *(b"---\n", b"---\r\n", b"\xef\xbb\xbf", b"title: T\n", b"a: [", b"]\n", b": "),
            *(b"&a ", b"*a", b"## H\n", b"# T\n", b"```\n", b"~~~\n", b"- [x](y.md)\n"),
            *(b"\x00", b"\xff", b"\xc3", b"\t", b"\r", b"\n", b"  - ", b"path: ", b"fit: "),
            *(b"derived_from:\n", b"\xd0\xbf"),
        ]
    )
    | st.binary(max_size=8),
    max_size=40,
).map(b"".join)


@given(st.binary(max_size=2_000) | MARKDOWN_BYTES)
def test_parse_never_raises_for_arbitrary_bytes(raw: bytes) -> None:
    parsed = parse_document("dir/doc.md", raw, mtime_ns=1)
    record = parsed.doc
    assert record.size == len(raw)
    assert record.title
    try:
        text = raw.decode("utf-8")
        decodes = b"\x00" not in raw
    except UnicodeDecodeError:
        decodes = False
    assert record.text_ok is decodes
    assert (record.parse_error_kind == "invalid-encoding") is not decodes
    if not decodes:
        return
    assert parsed.text == text
    line_count = len(text.split("\n"))
    lines = [section.line for section in record.sections]
    assert lines == sorted(set(lines))
    assert all(record.body_offset < line <= line_count for line in lines)
    assert all(1 <= link.line <= line_count for link in record.links)
    json.dumps(json_data(record.data), allow_nan=False)


@given(st.text(max_size=500))
def test_the_split_keeps_every_character(text: str) -> None:
    split = split_frontmatter(text)
    assert split.head + split.body == text
    assert split.body_offset == split.head.count("\n") + (
        1 if split.head and not split.head.endswith("\n") else 0
    )


@given(st.text(max_size=500))
def test_yaml_loading_and_recovery_never_raise(text: str) -> None:
    outcome = load_yaml(text)
    assert (outcome.data is None) is (outcome.error is not None)
    if outcome.error is not None:
        assert "\n" not in outcome.error
        assert outcome.kind in {
            "yaml",
            "duplicate-key",
            "too-large",
            "alias-limit",
            "not-a-mapping",
        }
    recover_leniently(text)


@given(st.text(max_size=300))
def test_body_scanning_never_raises(body: str) -> None:
    scan_body(body)


# -- serialise → parse gives the same data ----------------------------------------------------


class CoreSchemaDumper(yaml.CSafeDumper):
    """libyaml's emitter, quoting exactly the strings the 1.2 core loader would not read back.

    (PyYAML's pure-Python emitter writes U+0085 raw inside single quotes, where libyaml folds it
    to a space; libyaml's own emitter escapes it as "\\N".)
    """


CoreSchemaDumper.yaml_implicit_resolvers = {
    first: list(entries) for first, entries in YamlLoader.yaml_implicit_resolvers.items()
}

TIMEZONES = st.sampled_from(
    [None, dt.UTC, dt.timezone(dt.timedelta(hours=2)), dt.timezone(-dt.timedelta(hours=5.5))]
)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
SCALARS = (
    TEXT
    | st.sampled_from(["yes", "no", "on", "012", "1e3", "0o17", "0x1F", "12:30", "~", "<<"])
    | st.sampled_from(["True", "NULL", ".inf", "2026-09-14", "- x", "a: b", "#c", "[a]", ""])
    | st.integers()
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
    | st.dates()
    | st.datetimes(timezones=TIMEZONES)
)
KEYS = TEXT | st.sampled_from(["title", "derived_from", "true", "12", "~", "null", "2024"])
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(KEYS, VALUES, max_size=8))
def test_frontmatter_of_yaml_safe_values_round_trips(data: dict[str, Any]) -> None:
    dumped = yaml.dump(data, Dumper=CoreSchemaDumper, allow_unicode=True, sort_keys=False)
    raw = f"---\n{dumped}---\n# Body\n".encode()
    record = parse_document("x.md", raw).doc
    assert record.parse_error is None, (dumped, record.parse_error)
    assert record.data == data
    assert record.fields == tuple(data)


# -- paths ------------------------------------------------------------------------------------

PATH_TEXT = st.lists(
    st.sampled_from(["a", "b.md", "..", ".", "", "/", "//", "./", "memory_bank", " ", "é", "\\"])
    | st.text(max_size=5),
    max_size=10,
).map("".join)
ROOT = "/tmp/memory_bank"


def _is_bank_path(path: str) -> bool:
    return path == "" or all(segment not in ("", ".", "..") for segment in path.split("/"))


@given(PATH_TEXT | st.text(max_size=30))
def test_caller_paths_become_clean_bank_paths_or_a_refusal(given_path: str) -> None:
    try:
        path = normalise_caller_path(given_path, ROOT, ROOT, lambda _: False, lambda: False)
    except RefusalError as refusal:
        assert refusal.refusal.rule.startswith("path-")
        return
    assert _is_bank_path(path)
    assert not path.startswith("/")
    if path and path == path.strip() and not path.startswith("memory_bank/"):
        # idempotent; only the whole path is stripped, so a "x.md " result is not a fixpoint
        assert normalise_caller_path(path, ROOT, ROOT, lambda _: False, lambda: False) == path


@given(PATH_TEXT, PATH_TEXT)
def test_resolve_from_gives_a_clean_path_or_external(directory: str, reference: str) -> None:
    doc_path = posixpath.normpath("/" + directory + "/doc.md").lstrip("/")
    result = resolve_from(doc_path, reference)
    if result.resolved is not None:
        assert not result.external
        assert _is_bank_path(result.resolved)
        assert result.resolved
    if result.url:
        assert result.external and result.resolved is None
