"""Hostile inputs to parsing, refresh and the walk, and hostile paths given to read-style
callers (spec 07 §4.3): each gets a named refusal or a finding, and nothing else is lost —
every other document is still indexed exactly as before."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from mbank.model import Doc, RefusalError
from mbank.parse import json_data
from mbank.snapshot import Bank

Unchanged = Callable[[Path], AbstractContextManager[None]]

# A tripwire against quadratic behaviour, not a benchmark (07 §4.3).
WALL_CLOCK_GUARD_S = 10.0


@contextmanager
def within_guard() -> Iterator[None]:
    started = time.monotonic()
    yield
    assert time.monotonic() - started < WALL_CLOCK_GUARD_S


@pytest.fixture
def baseline(fixture_bank: Path) -> dict[str, Doc]:
    """The fixture bank's documents before anything hostile is added."""
    return dict(Bank(fixture_bank).refresh().docs)


def refresh_with(root: Path, name: str, content: bytes) -> Doc:
    """Add one hostile file to the bank, refresh, and return its record."""
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    with within_guard():
        snapshot = Bank(root).refresh()
    assert name in snapshot.docs
    return snapshot.docs[name]


def assert_nothing_else_lost(root: Path, baseline: dict[str, Doc], hostile: str) -> None:
    docs = Bank(root).refresh().docs
    others = {path: doc for path, doc in docs.items() if path != hostile}
    assert others == baseline


def frontmatter(yaml_text: str, body: str = "# Body\n\n## Section\n") -> bytes:
    return f"---\ntitle: Hostile\n{yaml_text}\n---\n{body}".encode()


# -- encodings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("---\ntitle: Café\n---\nCafé\n".encode("latin-1"), "invalid byte 0xe9 at offset 14"),
        ("---\ntitle: x\n---\n# x\n".encode("utf-16"), "invalid byte 0xff at offset 0"),
        (bytes(range(256)) * 64, "NUL byte at offset 0"),
        (b"# Title\n\x00\x01\x02 binary tail", "NUL byte at offset 8"),
    ],
    ids=["latin-1", "utf-16-with-bom", "random-binary", "text-with-nul"],
)
def test_non_text_files_are_indexed_with_invalid_encoding(
    fixture_bank: Path, baseline: dict[str, Doc], content: bytes, error: str
) -> None:
    record = refresh_with(fixture_bank, "engineering/hostile.md", content)
    assert record.parse_error_kind == "invalid-encoding"
    assert record.parse_error == f"not UTF-8 ({error})"
    assert not record.text_ok
    assert record.title == "hostile"
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/hostile.md")


def test_a_utf8_bom_and_crlf_parse_as_the_same_document(fixture_bank: Path) -> None:
    rules = fixture_bank / "domain" / "rules.md"
    plain = Bank(fixture_bank).refresh().docs["domain/rules.md"]
    rules.write_bytes(b"\xef\xbb\xbf" + rules.read_bytes().replace(b"\n", b"\r\n"))
    variant = Bank(fixture_bank).refresh().docs["domain/rules.md"]
    assert variant.parse_error is None
    for field in ("title", "data", "fields", "sections", "canonical_for", "derived_from"):
        assert getattr(variant, field) == getattr(plain, field), field


# -- size -------------------------------------------------------------------------------------


def test_a_20_mb_document_is_indexed(fixture_bank: Path, baseline: dict[str, Doc]) -> None:
    paragraph = b"## Part\n\n" + b"word " * 2_000 + b"\n\n"
    content = frontmatter("doc_kind: engineering", "") + paragraph * (20_000_000 // len(paragraph))
    assert len(content) > 19_990_000
    record = refresh_with(fixture_bank, "engineering/huge.md", content)
    assert record.parse_error is None
    assert record.size == len(content)
    assert len(record.sections) == 20_000_000 // len(paragraph)
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/huge.md")


def test_frontmatter_over_64_kib_is_too_large_and_recovered(
    fixture_bank: Path, baseline: dict[str, Doc]
) -> None:
    record = refresh_with(
        fixture_bank,
        "engineering/long-header.md",
        frontmatter("purpose: " + "long " * 14_000 + "\ncanonical_for:\n  - long_key"),
    )
    assert (record.parse_error_kind, record.parse_error_line) == ("too-large", 1)
    assert record.parse_error == "frontmatter is 70052 bytes"
    assert record.title == "Hostile"
    assert record.canonical_for == ("long_key",)
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/long-header.md")


def test_10000_headings_are_10000_sections(fixture_bank: Path) -> None:
    body = "".join(f"## Heading {i}\n" for i in range(10_000))
    record = refresh_with(fixture_bank, "engineering/many.md", frontmatter("", body))
    assert len(record.sections) == 10_000
    assert record.sections[0].line == 5
    assert record.sections[-1].title == "Heading 9999"
    assert record.sections[-1].line == 10_004


def test_a_1_mb_line_without_newline_is_indexed(fixture_bank: Path) -> None:
    content = b"x" * 500_000 + b" [link](../domain/rules.md) " + b"y" * 500_000
    record = refresh_with(fixture_bank, "engineering/one-line.md", content)
    assert record.parse_error is None
    assert record.title == "one-line"
    assert [link.to for link in record.links] == ["domain/rules.md"]


# -- YAML -------------------------------------------------------------------------------------


def _bomb() -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines)


@pytest.mark.parametrize(
    "yaml_text",
    [_bomb(), "loop: &x [*x]", "loop: &m\n  self: *m"],
    ids=["billion-laughs", "recursive-sequence", "recursive-mapping"],
)
def test_alias_bombs_are_refused_in_bounded_time(
    fixture_bank: Path, baseline: dict[str, Doc], yaml_text: str
) -> None:
    record = refresh_with(fixture_bank, "engineering/bomb.md", frontmatter(yaml_text))
    assert (record.parse_error_kind, record.parse_error) == (
        "alias-limit",
        "aliases expand past 1000 nodes",
    )
    assert record.title == "Hostile"  # recovered leniently
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/bomb.md")


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [("status: draft\nstatus: active", "status"), ("meta:\n  owner: a\n  owner: b", "owner")],
    ids=["top-level", "nested"],
)
def test_duplicate_keys_are_refused_naming_the_key(
    fixture_bank: Path, yaml_text: str, key: str
) -> None:
    record = refresh_with(fixture_bank, "engineering/dup.md", frontmatter(yaml_text))
    assert (record.parse_error_kind, record.parse_error) == (
        "duplicate-key",
        f'duplicate key "{key}"',
    )


def _depth(value: Any) -> int:
    """Nesting depth of lists, measured without recursion."""
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    return depth


def test_flow_nesting_999_deep_loads_without_recursion_error(
    fixture_bank: Path, baseline: dict[str, Doc]
) -> None:
    record = refresh_with(
        fixture_bank, "engineering/deep.md", frontmatter("deep: " + "[" * 999 + "]" * 999)
    )
    assert record.parse_error is None
    assert _depth(record.data["deep"]) == 999
    assert _depth(json_data(record.data)["deep"]) == 999  # the JSON conversion is iterative
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/deep.md")


@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_flow_nesting_past_libyamls_limit_is_a_yaml_error(fixture_bank: Path, depth: int) -> None:
    record = refresh_with(
        fixture_bank,
        "engineering/deeper.md",
        frontmatter("deep: " + "[" * depth + "]" * depth + "\ncanonical_for: [k]"),
    )
    assert (record.parse_error_kind, record.parse_error) == (
        "yaml",
        "exceeded maximum nesting depth",
    )
    # the recovery keeps a flow list as its text (§4.4), and a string is one key (§6.1)
    assert record.data["canonical_for"] == "[k]"
    assert record.canonical_for == ("[k]",)


@pytest.mark.parametrize(
    ("yaml_text", "problem"),
    [
        ("\tpurpose: tabbed", "found a tab character that violates indentation"),
        ('purpose: "never closed', "found unexpected end of stream"),
        ("purpose: Retry: backoff", "mapping values are not allowed in this context"),
        (
            "payload: !!python/object:os.system echo",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
        ),
    ],
    ids=["tab", "unclosed-quote", "unquoted-colon", "python-object"],
)
def test_broken_yaml_is_kind_yaml_with_lenient_recovery(
    fixture_bank: Path, baseline: dict[str, Doc], yaml_text: str, problem: str
) -> None:
    record = refresh_with(
        fixture_bank,
        "engineering/broken.md",
        frontmatter(f"doc_kind: engineering\n{yaml_text}\nstatus: draft"),
    )
    assert (record.parse_error_kind, record.parse_error) == ("yaml", problem)
    assert (record.title, record.doc_kind, record.status) == ("Hostile", "engineering", "draft")
    assert_nothing_else_lost(fixture_bank, baseline, "engineering/broken.md")


# -- the walk ---------------------------------------------------------------------------------


def test_symlinks_in_and_out_of_the_root_are_skipped(
    fixture_bank: Path, baseline: dict[str, Doc], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n", encoding="utf-8")
    os.symlink(outside / "secret.md", fixture_bank / "leak.md")
    os.symlink(fixture_bank / "domain" / "rules.md", fixture_bank / "alias.md")
    os.symlink(outside, fixture_bank / "escape")
    os.symlink(fixture_bank / "domain", fixture_bank / "domain-again")
    docs = Bank(fixture_bank).refresh().docs
    assert docs == baseline
    bank = Bank(fixture_bank)
    for given in ["leak.md", "alias.md", "escape/secret.md", "domain-again/rules.md"]:
        assert bank.relative(given) not in docs  # read: "Not a document of this bank"


def test_dot_directories_and_skipped_directories_are_never_indexed(
    fixture_bank: Path, baseline: dict[str, Doc]
) -> None:
    for name in [".mbank/journal.md", ".git/config.md", ".obsidian/x.md", "node_modules/x.md"]:
        target = fixture_bank / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# not indexed\n", encoding="utf-8")
    (fixture_bank / "domain" / "dist").mkdir()
    (fixture_bank / "domain" / "dist" / "built.md").write_text("# built\n", encoding="utf-8")
    bank = Bank(fixture_bank)
    assert bank.refresh().docs == baseline
    for given in [".mbank/journal.jsonl", ".git/config.md", ".obsidian/x.md", "node_modules/x.md"]:
        assert bank.relative(given) not in bank.snapshot.docs


# -- hostile paths given to read-style callers ------------------------------------------------


@pytest.mark.parametrize(
    ("given", "rule", "message"),
    [
        ("../x.md", "path-outside", "Path must stay inside the bank: ../x.md"),
        ("a/../../x.md", "path-outside", "Path must stay inside the bank: a/../../x.md"),
        ("./../x.md", "path-outside", "Path must stay inside the bank: ./../x.md"),
        ("_inbox/../../x.md", "path-outside", "Path must stay inside the bank: _inbox/../../x.md"),
        ("bank/../../x.md", "path-outside", "Path must stay inside the bank: bank/../../x.md"),
        ("/etc/passwd", "path-outside", "Path must stay inside the bank: /etc/passwd"),
        ("/etc/x.md", "path-outside", "Path must stay inside the bank: /etc/x.md"),
        ("/", "path-outside", "Path must stay inside the bank: /"),
        ("..\\x.md", "path-backslash", 'Path contains a backslash; bank paths use "/": ..\\x.md'),
        ("dir\\x.md", "path-backslash", 'Path contains a backslash; bank paths use "/": dir\\x.md'),
        ("C:\\x.md", "path-backslash", 'Path contains a backslash; bank paths use "/": C:\\x.md'),
        ("x.md\x00.txt", "path-nul", "Path contains a NUL character."),
        ("\x00", "path-nul", "Path contains a NUL character."),
        ("", "path-empty", "`path` is required."),
        ("   ", "path-empty", "`path` is required."),
        (
            "a" * 256,
            "path-segment-too-long",
            "Path has a segment longer than 255 bytes: " + "a" * 40 + "…",
        ),
        (
            "д" * 128 + "/x.md",
            "path-segment-too-long",
            "Path has a segment longer than 255 bytes: " + "д" * 40 + "…",
        ),
    ],
)
def test_hostile_paths_are_refused_for_reads_and_change_nothing(
    fixture_bank: Path, assert_unchanged: Unchanged, given: str, rule: str, message: str
) -> None:
    bank = Bank(fixture_bank)
    with assert_unchanged(fixture_bank), pytest.raises(RefusalError) as caught:
        bank.relative(given)
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (rule, message)


def test_a_sibling_directory_sharing_the_roots_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "bank").mkdir()
    (tmp_path / "bankX").mkdir()
    (tmp_path / "bankX" / "x.md").write_text("# x\n", encoding="utf-8")
    given = str(tmp_path / "bankX" / "x.md")
    with pytest.raises(RefusalError) as caught:
        Bank(tmp_path / "bank").relative(given)
    assert caught.value.refusal.message == f"Path must stay inside the bank: {given}"


def test_a_255_byte_segment_and_the_root_name_prefix_are_accepted(fixture_bank: Path) -> None:
    bank = Bank(fixture_bank)
    assert bank.relative("d" * 252 + ".md") == "d" * 252 + ".md"
    assert bank.relative("bank/domain/rules.md") == "domain/rules.md"  # the root is ".../bank"
    assert bank.relative(str(fixture_bank / "domain" / "rules.md")) == "domain/rules.md"
    assert bank.relative("x.md /") == "x.md "  # not a document: reads say so
