"""Caller paths become bank paths or a named refusal; write targets the walk could never see
are refused (spec 01 §2.2, §2.3; the path rows of 07 §4.3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbank.model import RefusalError
from mbank.paths import check_write_target, normalise_caller_path, refuse
from mbank.snapshot import Bank

ROOT = "/tmp/bank"


def normalise(
    given: str,
    *,
    root: str = ROOT,
    real_root: str = ROOT,
    documents: frozenset[str] = frozenset(),
    inner_dir: bool = False,
) -> str:
    """`normalise_caller_path` with the disk facts given as values."""
    return normalise_caller_path(
        given, root, real_root, lambda path: path in documents, lambda: inner_dir
    )


def refusal_of(given: str, **kwargs: object) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        normalise(given, **kwargs)  # type: ignore[arg-type]
    return caught.value.refusal.rule, caught.value.refusal.message


def test_refuse_builds_a_refusal_error() -> None:
    error = refuse("path-empty", "`path` is required.")
    assert (error.refusal.rule, error.refusal.message, str(error)) == (
        "path-empty",
        "`path` is required.",
        "`path` is required.",
    )


# -- §2.2 normalising -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.md", "a.md"),
        ("  features/FT-1/brief.md \n", "features/FT-1/brief.md"),
        ("./a.md", "a.md"),
        ("././a.md", "a.md"),
        (".//a.md", "a.md"),
        ("a//b/./c.md", "a/b/c.md"),
        ("a/../b.md", "b.md"),
        ("a/b/../../c.md", "c.md"),
        ("x.md /", "x.md "),  # only the whole path is stripped
        ("%2e%2e/x.md", "%2e%2e/x.md"),  # nothing is decoded
        ("~/x.md", "~/x.md"),
        (".", ""),
        ("x/..", ""),
        ("/tmp/bank/a.md", "a.md"),
        ("/tmp/bank//sub/./a.md", "sub/a.md"),
        ("/tmp/bank/sub/../a.md", "a.md"),
        ("//tmp/bank/a.md", "a.md"),
        ("///tmp/bank/a.md", "a.md"),
        ("/tmp/other/../bank/a.md", "a.md"),
        ("/tmp/bank", ""),
        ("/tmp/bank/", ""),
    ],
)
def test_normalise_gives_a_bank_path(given: str, expected: str) -> None:
    assert normalise(given) == expected


@pytest.mark.parametrize("given", ["", " ", "\t\n "])
def test_an_empty_or_blank_path_is_refused(given: str) -> None:
    assert refusal_of(given) == ("path-empty", "`path` is required.")


@pytest.mark.parametrize("given", ["x.md\x00.txt", "\x00", "a/\x00/b.md"])
def test_a_nul_character_is_refused(given: str) -> None:
    assert refusal_of(given) == ("path-nul", "Path contains a NUL character.")


@pytest.mark.parametrize("given", ["..\\x.md", "dir\\x.md", "C:\\x.md"])
def test_a_backslash_is_refused(given: str) -> None:
    assert refusal_of(given) == (
        "path-backslash",
        f'Path contains a backslash; bank paths use "/": {given}',
    )


@pytest.mark.parametrize(
    "given",
    [
        "../x.md",
        "a/../../x.md",
        "./../x.md",
        "_inbox/../../x.md",
        "memory_bank/../../x.md",
        "..",
        "/etc/passwd",
        "/etc/x.md",
        "/",
        "/tmp/bankX/x.md",  # a sibling that shares the root's prefix
        "/tmp/bank/../x.md",
        "/tmp",
    ],
)
def test_a_path_leaving_the_bank_is_refused(given: str) -> None:
    assert refusal_of(given) == ("path-outside", f"Path must stay inside the bank: {given}")


def test_the_refusal_names_the_path_as_the_caller_gave_it() -> None:
    assert refusal_of("  ../x.md ")[1] == "Path must stay inside the bank:   ../x.md "


def test_an_absolute_path_below_the_real_root_is_accepted() -> None:
    assert normalise("/real/bank/a.md", root="/link/bank", real_root="/real/bank") == "a.md"
    assert normalise("/link/bank/a.md", root="/link/bank", real_root="/real/bank") == "a.md"


def test_segment_of_255_bytes_is_accepted() -> None:
    for segment in ["a" * 255, "я" * 127 + "a", "€" * 85]:
        assert len(segment.encode()) == 255
        assert normalise(f"dir/{segment}") == f"dir/{segment}"


@pytest.mark.parametrize("segment", ["a" * 256, "я" * 128, "€" * 86, "b" * 300 + ".md"])
def test_a_segment_over_255_bytes_is_refused(segment: str) -> None:
    assert refusal_of(f"dir/{segment}/x.md") == (
        "path-segment-too-long",
        f"Path has a segment longer than 255 bytes: {segment[:40]}…",
    )


def test_a_long_segment_resolved_away_is_not_refused() -> None:
    assert normalise("a" * 300 + "/../x.md") == "x.md"


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        (" \x00\\", "path-nul"),  # NUL is checked before the backslash
        ("/etc/\\x", "path-backslash"),  # the backslash before outside
        ("../" + "a" * 300, "path-outside"),  # outside before too long
        ("\x00/../..", "path-nul"),
    ],
)
def test_the_first_refusal_in_spec_order_wins(given: str, rule: str) -> None:
    assert refusal_of(given)[0] == rule


def test_root_name_prefix_is_dropped() -> None:
    assert normalise("bank/features/FT-12/brief.md") == "features/FT-12/brief.md"
    assert normalise("./bank/a.md") == "a.md"
    assert normalise("bank/../x.md") == "x.md"


def test_root_name_prefix_is_kept_when_a_document_exists_at_the_path_as_given() -> None:
    assert normalise("bank/a.md", documents=frozenset({"bank/a.md"})) == "bank/a.md"


def test_root_name_prefix_is_kept_when_the_bank_has_a_real_inner_directory_of_that_name() -> None:
    assert normalise("bank/a.md", inner_dir=True) == "bank/a.md"


def test_root_name_prefix_needs_the_whole_segment() -> None:
    assert normalise("banker/a.md") == "banker/a.md"
    assert normalise("bank") == "bank"


# -- Bank.relative: the same function with facts from the disk --------------------------------


def _bank_with(root: Path, *files: str) -> Bank:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n", encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return Bank(root)


def test_bank_relative_drops_the_root_name_prefix(tmp_path: Path) -> None:
    bank = _bank_with(tmp_path / "memory_bank", "features/FT-12/brief.md")
    assert bank.relative("memory_bank/features/FT-12/brief.md") == "features/FT-12/brief.md"
    assert bank.relative(str(tmp_path / "memory_bank" / "features")) == "features"


def test_bank_relative_keeps_the_prefix_for_a_real_inner_directory(tmp_path: Path) -> None:
    bank = _bank_with(tmp_path / "memory_bank", "memory_bank/a.md", "a.md")
    assert bank.relative("memory_bank/a.md") == "memory_bank/a.md"


def test_bank_relative_drops_the_prefix_when_the_inner_name_is_a_symlink(tmp_path: Path) -> None:
    bank = _bank_with(tmp_path / "memory_bank", "a.md")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "memory_bank" / "memory_bank")
    assert bank.relative("memory_bank/a.md") == "a.md"


def test_bank_relative_accepts_paths_under_the_root_and_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    _bank_with(real, "a.md")
    link = tmp_path / "link"
    os.symlink(real, link)
    bank = Bank(link)
    assert (bank.root, bank.real_root) == (str(link), str(real))
    assert bank.relative(str(link / "a.md")) == "a.md"
    assert bank.relative(str(real / "a.md")) == "a.md"
    with pytest.raises(RefusalError) as caught:
        bank.relative(str(tmp_path / "realX" / "a.md"))
    assert caught.value.refusal.rule == "path-outside"


def test_bank_root_is_absolute_and_lexically_normalised(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    bank = Bank(str(tmp_path / "x" / ".." / "b") + "/")
    assert bank.root == str(tmp_path / "b")


# -- §2.3 write targets -----------------------------------------------------------------------


def write_refusal(path: str, *, must_be_md: bool = True) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        check_write_target(path, must_be_md=must_be_md)
    return caught.value.refusal.rule, caught.value.refusal.message


@pytest.mark.parametrize("path", ["a.md", "features/FT-1/brief.md", "dist.md", "x/node_modules.md"])
def test_an_ordinary_markdown_target_passes(path: str) -> None:
    check_write_target(path, must_be_md=True)


@pytest.mark.parametrize("path", ["x.MD", "x.txt", "domain", "x.md ", ".mbank/journal.jsonl"])
def test_a_create_target_must_end_in_md(path: str) -> None:
    assert write_refusal(path) == ("path-not-md", f"Path must end in .md: {path}")


def test_a_target_that_need_not_be_markdown_skips_the_suffix_check() -> None:
    check_write_target("assets/notes.txt", must_be_md=False)


@pytest.mark.parametrize(
    "path", [".git/config.md", ".obsidian/x.md", ".mbank/x.md", "a/.hidden/b.md", "a/.dot.md"]
)
def test_a_hidden_segment_is_refused(path: str) -> None:
    assert write_refusal(path) == (
        "path-hidden",
        f"Path goes through a hidden (dot) name, which the bank does not index: {path}",
    )


@pytest.mark.parametrize(
    ("path", "segment"),
    [("node_modules/x.md", "node_modules"), ("a/dist/x.md", "dist"), ("dist/b/x.md", "dist")],
)
def test_a_skipped_directory_is_refused(path: str, segment: str) -> None:
    assert write_refusal(path) == (
        "path-skipped-dir",
        f'Path goes through "{segment}/", which the bank does not index: {path}',
    )
