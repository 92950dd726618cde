"""One document from bytes to record: splitting, errors and lenient recovery, edges, fields,
titles, sections, links, non-text files (spec 01 §2.4, §3–§6; 07 §3.2)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from fixture_banks import FIXTURE_BANK, FIXTURE_OVERLAY

from mbank.model import Doc, Edge, Link, Section
from mbank.parse import (
    parse_document,
    parse_text,
    recover_leniently,
    resolve_from,
    split_frontmatter,
    unquote,
)


def doc(text: str, path: str = "engineering/x.md") -> Doc:
    """Parse `text` as the document at `path`."""
    return parse_text(path, text)


def frontmatter(yaml_text: str, body: str = "") -> str:
    return f"---\n{yaml_text}\n---\n{body}"


# -- §4.1 splitting ---------------------------------------------------------------------------


def test_split_without_frontmatter_keeps_everything_as_body() -> None:
    split = split_frontmatter("# Title\n\ntext\n")
    assert (split.has_frontmatter, split.yaml_text, split.head, split.body, split.body_offset) == (
        False,
        None,
        "",
        "# Title\n\ntext\n",
        0,
    )


def test_split_gives_yaml_head_body_and_offset() -> None:
    split = split_frontmatter("---\ntitle: T\nstatus: draft\n---\n# T\n")
    assert split.has_frontmatter
    assert split.yaml_text == "title: T\nstatus: draft"
    assert split.head == "---\ntitle: T\nstatus: draft\n---\n"
    assert split.body == "# T\n"
    assert split.body_offset == 4
    assert not split.unclosed


def test_split_keeps_crlf_in_head_and_body_but_not_in_yaml() -> None:
    text = "---\r\ntitle: T\r\n---\r\nbody\r\n"
    split = split_frontmatter(text)
    assert split.yaml_text == "title: T"
    assert split.head == "---\r\ntitle: T\r\n---\r\n"
    assert split.body == "body\r\n"
    assert split.head + split.body == text


def test_split_ignores_a_leading_bom_and_keeps_it_in_the_head() -> None:
    split = split_frontmatter("\ufeff---\ntitle: T\n---\nbody")
    assert split.has_frontmatter
    assert split.yaml_text == "title: T"
    assert split.head.startswith("\ufeff---")


def test_split_accepts_trailing_spaces_and_tabs_on_the_fence_lines() -> None:
    split = split_frontmatter("--- \t\ntitle: T\n---  \nbody")
    assert (split.yaml_text, split.body, split.body_offset) == ("title: T", "body", 3)


@pytest.mark.parametrize(
    "text", [" ---\ntitle: T\n---\n", "----\n", "--\n", "x\n---\n---\n", "---\r\r\nt: 1\n---\n"]
)
def test_split_needs_exactly_three_dashes_on_the_first_line(text: str) -> None:
    assert not split_frontmatter(text).has_frontmatter


def test_split_ignores_only_one_trailing_carriage_return_on_the_closing_line() -> None:
    split = split_frontmatter("---\nt: 1\n---\r\r\nbody\n---\r\n")
    assert split.yaml_text == "t: 1\n---\r\nbody"


def test_split_closed_on_the_last_line_without_newline() -> None:
    split = split_frontmatter("---\ntitle: T\n---")
    assert (split.yaml_text, split.head, split.body, split.body_offset) == (
        "title: T",
        "---\ntitle: T\n---",
        "",
        3,
    )


def test_split_empty_frontmatter_is_an_empty_mapping_without_error() -> None:
    split = split_frontmatter("---\n---\nbody")
    assert (split.yaml_text, split.body_offset) == ("", 2)
    record = doc("---\n---\nbody")
    assert record.data == {}
    assert record.parse_error is None
    assert record.has_frontmatter


@pytest.mark.parametrize("text", ["---\ntitle: T\n# Body\n", "---\n", "---"])
def test_split_unclosed_frontmatter_is_reported_and_recovers_nothing(text: str) -> None:
    split = split_frontmatter(text)
    assert split.unclosed
    assert split.yaml_text is None
    assert split.body_offset == 1
    assert split.head == text.split("\n", 1)[0] + ("\n" if "\n" in text else "")
    record = doc(text)
    assert (record.parse_error_kind, record.parse_error, record.parse_error_line) == (
        "unclosed",
        "frontmatter is never closed",
        1,
    )
    assert record.data == {}
    assert record.has_frontmatter


def test_split_stops_at_the_first_closing_line() -> None:
    split = split_frontmatter("---\na: 1\n---\nbody\n---\nmore")
    assert split.yaml_text == "a: 1"
    assert split.body == "body\n---\nmore"


# -- §4.3 parse errors on the record ----------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "kind", "error", "line"),
    [
        ("title: T\npurpose: a: b", "yaml", "mapping values are not allowed in this context", 3),
        ("title: A\ntitle: B", "duplicate-key", 'duplicate key "title"', 3),
        ("a: &a [*a]", "alias-limit", "aliases expand past 1000 nodes", 1),
        ("- a\n- b", "not-a-mapping", "frontmatter is not a mapping", 1),
        ("purpose: " + "x" * 70_000, "too-large", "frontmatter is 70009 bytes", 1),
    ],
)
def test_parse_errors_are_kept_on_the_record(
    yaml_text: str, kind: str, error: str, line: int
) -> None:
    record = doc(frontmatter(yaml_text, "# Heading\n"))
    assert (record.parse_error_kind, record.parse_error, record.parse_error_line) == (
        kind,
        error,
        line,
    )
    assert record.text_ok
    assert record.title  # still routable


def test_a_document_with_an_invalid_header_keeps_its_body_structure() -> None:
    record = doc(frontmatter("title: T\npurpose: a: b", "# H\n\n## One\n\n## Two\n"))
    assert record.sections == (Section("One", 7), Section("Two", 9))
    assert record.title == "T"


# -- §4.4 lenient recovery --------------------------------------------------------------------


def test_lenient_recovery_of_the_spec_example() -> None:
    text = frontmatter(
        "title: Retry Layer\n"
        "doc_kind: engineering\n"
        "purpose: Defines the retry layer: backoff, jitter, and give-up rules.\n"
        "canonical_for:\n"
        "  - retry_policy\n"
        "derived_from:\n"
        "  - path: ../domain/rules.md\n"
        '    fit: "Only the thresholds."'
    )
    record = doc(text)
    assert (record.parse_error_kind, record.parse_error_line) == ("yaml", 4)
    assert record.purpose == "Defines the retry layer: backoff, jitter, and give-up rules."
    assert record.canonical_for == ("retry_policy",)
    assert record.data["derived_from"] == [
        {"path": "../domain/rules.md", "fit": "Only the thresholds."}
    ]
    assert record.derived_from == (
        Edge("../domain/rules.md", "Only the thresholds.", "domain/rules.md", False),
    )
    assert record.doc_kind == "engineering"
    assert record.title == "Retry Layer"
    assert record.fields == ("title", "doc_kind", "purpose", "canonical_for", "derived_from")


def test_lenient_recovery_recovers_every_field_kind() -> None:
    recovered = recover_leniently(
        "title: 'Quoted: title'\n"
        "status: draft # note\n"
        "tags: [a, b]\n"
        "delivery_status: in_progress\n"
        "must_not_define:\n"
        "  - other_key\n"
        "anchors:\n"
        "  - ./src/app.py\n"
        "derived_from:\n"
        "  - ../a.md\n"
        "  - path: '../b.md'\n"
        "    fit: Only part: the rest is ignored.\n"
        "  - path: ../c.md\n"
        "  - ../d.md\n"
        "    fit: no pending object, ignored\n"
        "audience: humans_and_agents"
    )
    assert recovered == {
        "title": "Quoted: title",
        "status": "draft # note",
        "tags": "[a, b]",
        "delivery_status": "in_progress",
        "must_not_define": ["other_key"],
        "anchors": ["./src/app.py"],
        "derived_from": [
            "../a.md",
            {"path": "../b.md", "fit": "Only part: the rest is ignored."},
            {"path": "../c.md"},
            "../d.md",
        ],
        "audience": "humans_and_agents",
    }


def test_lenient_recovery_items_replace_an_inline_value_and_a_later_key_wins() -> None:
    recovered = recover_leniently("a: inline\n  - item\nb: first\nb: second\nc:\n  nested: x")
    assert recovered == {"a": ["item"], "b": "second"}


def test_lenient_recovery_ignores_comments_nested_mappings_and_orphan_items() -> None:
    recovered = recover_leniently("- orphan item\n# comment\n\nkey:\n  nested: value\n  deeper: 1")
    assert recovered == {}


def test_lenient_recovery_ignores_trailing_carriage_returns() -> None:
    assert recover_leniently("title: T\r\nlist:\r\n  - a\r\n") == {"title": "T", "list": ["a"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('  "quoted"  ', "quoted"),
        ("'single'", "single"),
        ('"only leading', "only leading"),
        ("only trailing'", "only trailing"),
        ('" spaced "', "spaced"),
        ('"', ""),
        ('""x""', '"x"'),
        ("plain", "plain"),
    ],
)
def test_unquote(text: str, expected: str) -> None:
    assert unquote(text) == expected


@pytest.mark.parametrize(
    "yaml_text",
    ["title: T\npurpose: a: b", "title: T\ntitle: U", "a: &a [*a]\ntitle: T", "- x\ntitle: T"],
)
def test_every_unusable_kind_but_unclosed_and_encoding_recovers_leniently(yaml_text: str) -> None:
    record = doc(frontmatter(yaml_text))
    assert record.parse_error is not None
    assert record.data == recover_leniently(yaml_text)
    assert record.title in ("T", "U")


def test_too_large_frontmatter_recovers_leniently() -> None:
    record = doc(frontmatter("title: Big\npurpose: " + "x" * 70_000))
    assert record.parse_error_kind == "too-large"
    assert record.title == "Big"
    assert len(record.purpose) == 70_000


# -- §2.4 resolving references ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "resolved", "external"),
    [
        # the spec's table, from features/FT-001/brief.md
        ("../../domain/rules.md", "domain/rules.md", False),
        ("../../adr/ADR-001-queue-choice.md#decision", "adr/ADR-001-queue-choice.md", False),
        ("../../../outside-bank/upstream.md", None, True),
        ("notes.md", "features/FT-001/notes.md", False),
        ("", None, False),
        # more
        ("  notes.md  ", "features/FT-001/notes.md", False),
        ("#only-an-anchor", None, False),
        ("./notes.md", "features/FT-001/notes.md", False),
        ("a//b/./c.md", "features/FT-001/a/b/c.md", False),
        ("/dna/x.md", "features/FT-001/dna/x.md", False),  # a leading "/" is a separator
        ("../../x/../../y.md", None, True),
        ("../../../../a/../b.md", None, True),
        ("C:/x.md", "features/FT-001/C:/x.md", False),  # a drive letter is not a scheme
        ("x:y.md", "features/FT-001/x:y.md", False),
    ],
)
def test_resolve_from_the_documents_own_directory(
    reference: str, resolved: str | None, external: bool
) -> None:
    result = resolve_from("features/FT-001/brief.md", reference)
    assert (result.resolved, result.external, result.url) == (resolved, external, False)


@pytest.mark.parametrize(
    "reference",
    [
        "https://github.com/org/repo/issues/5",
        "http://example.com/x.md",
        "file:///etc/passwd",
        "mailto:someone@example.com",
        "git+ssh://host/repo",
        "ab:c",
    ],
)
def test_a_url_scheme_is_external_with_url_true(reference: str) -> None:
    result = resolve_from("features/FT-001/brief.md", reference)
    assert (result.resolved, result.external, result.url) == (None, True, True)


def test_resolve_from_a_root_document() -> None:
    assert resolve_from("README.md", "dna/governance.md").resolved == "dna/governance.md"
    assert resolve_from("README.md", "../x.md").external


# -- §6.2 derived_from edges ------------------------------------------------------------------


def test_derived_from_string_mapping_and_external_forms() -> None:
    record = doc(
        frontmatter(
            "derived_from:\n"
            "  - ../../domain/rules.md\n"
            "  - path: ../../adr/ADR-001-queue-choice.md\n"
            '    fit: "Only the accepted queue topology is reused."\n'
            "  - ../../../outside-bank/upstream.md"
        ),
        "features/FT-001/brief.md",
    )
    assert record.derived_from == (
        Edge("../../domain/rules.md", None, "domain/rules.md", False),
        Edge(
            "../../adr/ADR-001-queue-choice.md",
            "Only the accepted queue topology is reused.",
            "adr/ADR-001-queue-choice.md",
            False,
        ),
        Edge("../../../outside-bank/upstream.md", None, None, True),
    )


def test_derived_from_as_a_scalar_string_is_a_one_element_list() -> None:
    record = doc(frontmatter("derived_from: ../domain/rules.md"))
    assert record.derived_from == (Edge("../domain/rules.md", None, "domain/rules.md", False),)


def test_derived_from_url_edge_is_external_with_url() -> None:
    record = doc(frontmatter("derived_from:\n  - https://example.com/issues/42"))
    assert record.derived_from == (Edge("https://example.com/issues/42", None, None, True, True),)


def test_derived_from_anchor_is_dropped_when_resolving() -> None:
    record = doc(frontmatter("derived_from: [../domain/rules.md#thresholds]"))
    assert record.derived_from[0].raw == "../domain/rules.md#thresholds"
    assert record.derived_from[0].resolved == "domain/rules.md"


def test_derived_from_ignores_unusable_items_and_non_string_fit() -> None:
    record = doc(
        frontmatter(
            "derived_from:\n"
            "  - 42\n"
            "  - [nested.md]\n"
            "  - {fit: no path}\n"
            "  - {path: 7}\n"
            "  - {path: ok.md, fit: 3}\n"
            "  - ''\n"
        )
    )
    assert record.derived_from == (
        Edge("ok.md", None, "engineering/ok.md", False),
        Edge("", None, None, False),  # an empty edge: kept, ignored by every rule
    )


@pytest.mark.parametrize("value", ["42", "{path: a.md}", "true", "~"])
def test_derived_from_of_another_type_gives_no_edges(value: str) -> None:
    assert doc(frontmatter(f"derived_from: {value}")).derived_from == ()


# -- §6.1 fields ------------------------------------------------------------------------------


def test_text_fields_are_trimmed_strings_or_empty() -> None:
    record = doc(
        frontmatter(
            "doc_kind: '  adr  '\ndoc_function: 3\npurpose: [a]\nstatus: true\n"
            "delivery_status: '   '\ndecision_status: ' accepted '"
        )
    )
    assert (record.doc_kind, record.doc_function, record.purpose, record.status) == (
        "adr",
        "",
        "",
        "",
    )
    assert record.delivery_status is None
    assert record.decision_status == "accepted"


def test_key_lists_accept_a_string_or_a_list_of_strings() -> None:
    record = doc(
        frontmatter(
            "canonical_for: single_key\n"
            "must_not_define: [' a ', '', 3, b, null, '  ']\n"
            "anchors: ['./src/x.py', '/abs/y.py', 'z.py', './', '/']"
        )
    )
    assert record.canonical_for == ("single_key",)
    assert record.must_not_define == ("a", "b")
    assert record.anchors == ("src/x.py", "abs/y.py", "z.py")


def test_key_lists_of_other_types_are_empty() -> None:
    record = doc(frontmatter("canonical_for: 3\nmust_not_define: {a: b}\nanchors: true"))
    assert (record.canonical_for, record.must_not_define, record.anchors) == ((), (), ())


def test_fields_are_the_data_keys_in_file_order_and_extra_keys_are_kept() -> None:
    record = doc(frontmatter("zeta: 1\ntitle: T\ndate: 2026-09-14\ncustom: [x]"))
    assert record.fields == ("zeta", "title", "date", "custom")
    assert record.data["custom"] == ["x"]


def test_size_sha256_and_mtime_come_from_the_bytes_read() -> None:
    raw = "---\ntitle: Café\n---\n".encode()
    parsed = parse_document("x.md", raw, mtime_ns=123)
    assert parsed.doc.size == len(raw) == 21
    assert parsed.doc.mtime_ns == 123
    assert parsed.doc.sha256 == hashlib.sha256(raw).hexdigest()
    assert parsed.text == raw.decode()


def test_a_bom_and_crlf_parse_as_the_same_document() -> None:
    plain = "---\ntitle: T\nstatus: draft\n---\n# H\n\n## A\n\ntext [l](y.md)\n"
    variant = "\ufeff" + plain.replace("\n", "\r\n")
    a, b = doc(plain), doc(variant)
    for field in ("title", "status", "data", "fields", "sections", "has_frontmatter", "links"):
        assert getattr(a, field) == getattr(b, field), field
    assert b.parse_error is None


def test_the_layer_of_a_parsed_document_is_the_built_in_one() -> None:
    # The snapshot overlays the declared layer table (§8.3); parsing alone knows the built-ins.
    assert doc("", "features/x.md").layer == "delivery"
    assert doc("", "README.md").layer == "other"
    assert doc("", "playbooks/x.md").layer == "other"


# -- §6.3 titles ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (frontmatter("title: '  From Frontmatter  '", "# From H1\n"), "From Frontmatter"),
        (frontmatter("title: '   '", "# From H1\n"), "From H1"),
        (frontmatter("title: 42", "# From H1\n"), "From H1"),
        (frontmatter("doc_kind: adr", "intro\n\n#   Spaced H1 #\n# Second\n"), "Spaced H1"),
        (frontmatter("doc_kind: adr", "## Only H2\n"), "my-note"),
        (frontmatter("doc_kind: adr", "#\n"), "my-note"),
        ("Setext H1\n===\n", "my-note"),
        ("```\n# In a fence\n```\n", "my-note"),
        ("> # In a quote\n", "my-note"),
        ("", "my-note"),
    ],
)
def test_title_fallbacks_frontmatter_then_first_h1_then_file_name(text: str, title: str) -> None:
    assert doc(text, "notes/my-note.md").title == title


def test_first_h1_is_kept_on_the_record() -> None:
    assert doc("# One\n# Two\n").first_h1 == "One"
    assert doc("no heading").first_h1 is None


# -- §5.2 sections ----------------------------------------------------------------------------


def test_section_lines_include_the_frontmatter_offset() -> None:
    record = doc(frontmatter("title: T\nstatus: draft", "# T\n\n## First\n\ntext\n\n## Second\n"))
    assert record.body_offset == 4
    assert record.sections == (Section("First", 7), Section("Second", 11))


def test_fenced_headings_are_not_sections() -> None:
    body = "## Real\n```\n## Fake\n```\n~~~~\n```\n## Also fake\n~~~~\n## Real too\n"
    assert doc(body).sections == (Section("Real", 1), Section("Real too", 9))


def test_only_top_level_atx_h2_is_a_section() -> None:
    body = (
        "## Decisions ##\n"  # closing hashes dropped
        "   ## Indented\n"  # 1-3 spaces: still a section
        "    ## code\n"  # 4 spaces: indented code
        "> ## quoted\n\n"
        "- ## listed\n\n"
        "### Deeper\n"
        "Setext\n---\n"
        "## `Inline` *markup* kept\n"
    )
    assert [s.title for s in doc(body).sections] == [
        "Decisions",
        "Indented",
        "`Inline` *markup* kept",
    ]


def test_sections_of_a_crlf_document() -> None:
    record = doc("---\r\ntitle: T\r\n---\r\n## A\r\n\r\n## B\r\n")
    assert record.sections == (Section("A", 4), Section("B", 6))


def test_a_document_without_sections() -> None:
    assert doc("just text\n").sections == ()


# -- §5.5 links -------------------------------------------------------------------------------


def test_links_in_bullets_tables_prose_and_numbered_items() -> None:
    text = frontmatter(
        "title: Index",
        "- [Bullet](a.md)\n"
        "| [`Row`](sub/b.md) | x |\n"
        "See [prose](../c.md) and [two](d.md#part) on one line.\n"
        "1. [Numbered](e.md)\n",
    )
    links = doc(text, "idx/README.md").links
    assert [(link.raw, link.to, link.external, link.line) for link in links] == [
        ("a.md", "idx/a.md", False, 4),
        ("sub/b.md", "idx/sub/b.md", False, 5),
        ("../c.md", "c.md", False, 6),
        ("d.md#part", "idx/d.md", False, 6),
        ("e.md", "idx/e.md", False, 7),
    ]
    assert all(link.source == "idx/README.md" for link in links)


def test_links_skip_fenced_code_and_url_schemes() -> None:
    body = (
        "- [Web](https://example.com/spec.md)\n"
        "- [File](file:///x.md)\n"
        "```markdown\n- [Example](example.md)\n```\n"
        "- [Kept](kept.md)\n"
    )
    links = doc(body, "README.md").links
    assert [link.raw for link in links] == ["kept.md"]


def test_links_are_found_in_frontmatter_lines_too() -> None:
    record = doc(frontmatter("purpose: 'See [the rules](rules.md).'"), "domain/README.md")
    assert record.links == (Link("domain/README.md", "rules.md", "domain/rules.md", False, 2),)


def test_links_outside_the_bank_are_external() -> None:
    (link,) = doc("[up](../../x.md)\n", "a/README.md").links
    assert (link.to, link.external) == (None, True)


@pytest.mark.parametrize(
    "line",
    [
        '[titled](b.md "title")',
        "[angle](<b.md>)",
        "[ref][b]",
        "[upper](b.MD)",
        "[query](b.md?x=1)",
        "[space](b .md)",
        "[txt](b.txt)",
    ],
)
def test_link_forms_that_are_not_matched(line: str) -> None:
    assert doc(line + "\n").links == ()


# -- §3 and §6.4 non-text documents -----------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("title: Café".encode("latin-1"), "not UTF-8 (invalid byte 0xe9 at offset 10)"),
        (
            "\ufeff---\ntitle: x\n---\n".encode("utf-16"),
            "not UTF-8 (invalid byte 0xff at offset 0)",
        ),
        (b"---\ntitle: T\n---\nbody\x00", "not UTF-8 (NUL byte at offset 21)"),
        (bytes(range(256)), "not UTF-8 (NUL byte at offset 0)"),  # the first problem wins
        (b"ok \xc3", "not UTF-8 (invalid byte 0xc3 at offset 3)"),
    ],
)
def test_non_text_files_are_indexed_with_an_invalid_encoding_error(raw: bytes, error: str) -> None:
    parsed = parse_document("features/legacy.md", raw, mtime_ns=7)
    record = parsed.doc
    assert (record.parse_error_kind, record.parse_error, record.parse_error_line) == (
        "invalid-encoding",
        error,
        None,
    )
    assert parsed.text == ""
    # the minimal record of §6.4
    assert record.title == "legacy"
    assert (record.doc_kind, record.doc_function, record.purpose, record.status) == ("", "", "", "")
    assert (record.delivery_status, record.decision_status) == (None, None)
    assert record.layer == "delivery"
    empty_tuples = (
        record.derived_from,
        record.canonical_for,
        record.must_not_define,
        record.anchors,
        record.sections,
        record.registered_in,
        record.fields,
        record.links,
    )
    assert all(value == () for value in empty_tuples)
    assert record.data == {}
    assert not record.has_frontmatter
    assert not record.text_ok
    assert (record.size, record.mtime_ns) == (len(raw), 7)
    assert record.sha256 == hashlib.sha256(raw).hexdigest()


# -- the fixture banks, parsed one document at a time -----------------------------------------


def _parse_tree(root: Path) -> dict[str, Any]:
    records = {}
    for path in sorted(root.rglob("*.md")):
        bank_path = path.relative_to(root).as_posix()
        records[bank_path] = msgspec.to_builtins(parse_document(bank_path, path.read_bytes()).doc)
    return records


def test_every_fixture_document_parses_to_its_snapshot(snapshot: Any) -> None:
    assert _parse_tree(FIXTURE_BANK) == snapshot(name="base")
    assert _parse_tree(FIXTURE_OVERLAY) == snapshot(name="overlay")


def test_fixture_parse_outcomes_of_spec_01_section_11() -> None:
    base = {
        path: parse_document(path, (FIXTURE_BANK / path).read_bytes()).doc
        for path in [
            "broken/bad-yaml.md",
            "features/FT-001/brief.md",
            "engineering/architecture.md",
            "flows/templates/adr/ADR-ID.md",
            "flows/templates/feature/brief.md",
        ]
    }
    bad = base["broken/bad-yaml.md"]
    assert bad.parse_error_kind == "yaml"
    assert bad.purpose == "Defines the retry layer: backoff, jitter, and give-up rules."
    assert bad.canonical_for == ("retry_policy",)
    brief = base["features/FT-001/brief.md"]
    assert [(e.resolved, e.external, e.fit is not None) for e in brief.derived_from] == [
        ("domain/rules.md", False, False),
        ("adr/ADR-001-queue-choice.md", False, True),
        (None, True, False),
    ]
    architecture = base["engineering/architecture.md"]
    assert architecture.derived_from[1] == Edge(
        "../missing/nowhere.md", None, "missing/nowhere.md", False
    )
    assert base["flows/templates/adr/ADR-ID.md"].doc_function == "template"
    assert base["flows/templates/feature/brief.md"].doc_function == "template"


def test_overlay_parse_outcomes() -> None:
    def parsed(path: str) -> Doc:
        return parse_document(path, (FIXTURE_OVERLAY / path).read_bytes()).doc

    duplicate = parsed("adr/ADR-003-duplicate-key.md")
    assert (duplicate.parse_error_kind, duplicate.parse_error, duplicate.parse_error_line) == (
        "duplicate-key",
        'duplicate key "title"',
        5,
    )
    assert duplicate.title == "ADR-003: Drop Repeated Job Submissions By Client Key"  # last won
    assert parsed("broken/latin1.md").parse_error_kind == "invalid-encoding"
    logging = parsed("engineering/logging.md")
    assert logging.derived_from == (Edge("../domain/rules.md", None, "domain/rules.md", False),)
    cache = parsed("adr/ADR-002-cache-layer.md")
    assert cache.derived_from[1] == Edge("https://example.com/issues/42", None, None, True, True)
    assert [s.title for s in parsed("domain/rules.md").sections] == [
        "Thresholds",
        "Invariants",
        "Пороги",
    ]


def test_links_in_an_indented_code_block_are_still_links() -> None:
    # Only fenced regions are skipped (spec 01 §5.1); an indented code block is not one.
    record = doc("text\n\n    - [indented](x.md)\n")
    assert [(link.raw, link.line) for link in record.links] == [("x.md", 3)]
