"""The edges of issue 13 (items 6, 11–14): nothing outside the project previewed or written, no
unbounded text, no write that silently changes nothing, no name that cannot be linked, no
read-only document overwritten.

Real processes where the item is about them (the CLI, `mbank serve`), a real race for item 6
(a thread swapping a project directory for a symbolic link while writes read `bodyFile`), an
unprivileged user for item 14 where the machine has one. Every refusal is asserted exactly,
inside `assert_unchanged`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hostile_journal import (
    READ_ONLY_WRITE,
    cli,
    create_args,
    env,
    refused_line,
    serving,
    tree_state,
    unprivileged,
    written,
)

from mbank.model import RefusalError
from mbank.reducers import registry
from mbank.snapshot import Bank
from mbank.writes import run_write

pytestmark = pytest.mark.concurrency

SECRET = "OUTSIDE-SECRET-BYTES"


@pytest.fixture
def shared_place() -> Iterator[Path]:
    """A directory every user can enter (pytest's own temp dirs are private to root)."""
    place = Path(tempfile.mkdtemp(prefix="mbank-edges-"))
    place.chmod(0o755)
    try:
        yield place
    finally:
        shutil.rmtree(place)


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    return written(tmp_path / "project" / "bank")


def create_arguments(path: str, **extra: Any) -> dict[str, Any]:
    return {
        "docKind": "ops",
        "path": path,
        "title": "A note",
        "purpose": "A document a test writes.",
        "derivedFrom": ["../dna/governance.md"],
        **extra,
    }


# --------------------------------------------------------------------------------------------
# Item 6: bodyFile is opened by descriptor, so a swapped directory cannot preview outside
# --------------------------------------------------------------------------------------------


def test_a_directory_swapped_for_a_link_mid_write_never_previews_an_outside_file(
    tmp_path: Path,
) -> None:
    bank = written(tmp_path / "project" / "bank")
    project = bank.parent
    notes = project / "notes"
    notes.mkdir()
    (notes / "body.md").write_text("inside text\n", encoding="utf-8")
    outside = tmp_path / "outside" / "notes"
    outside.mkdir(parents=True)
    (outside / "body.md").write_text(SECRET + "\n", encoding="utf-8")
    outside_before = tree_state(tmp_path / "outside")
    parked = project / "notes.real"
    stop = threading.Event()
    swaps = 0

    def swap() -> None:
        nonlocal swaps
        while not stop.is_set():
            os.rename(notes, parked)
            os.symlink(outside, notes)
            os.unlink(notes)
            os.rename(parked, notes)
            swaps += 1

    tool = registry.BY_NAME["bank_create"]
    tries, previews, refusals = 1500, 0, 0
    seen: set[str] = set()
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for number in range(tries):
            arguments = create_arguments(f"ops/race-{number}.md", bodyFile="notes/body.md")
            try:
                result = run_write(tool, Bank(bank), arguments, dry_run=True, cwd=str(project))
            except RefusalError as exc:
                refusals += 1
                seen.add(exc.refusal.message)
                continue
            previews += 1
            assert SECRET not in result["diff"]
            assert "inside text" in result["diff"]
    finally:
        stop.set()
        swapper.join()
    assert swaps > 0 and previews > 0, (swaps, previews)
    assert previews + refusals == tries
    allowed = {
        'bodyFile "notes/body.md" could not be read (no such file). The path is absolute, or '
        "relative to the server's working directory.",
        'bodyFile "notes/body.md" leads outside this project through a symbolic link.',
        'bodyFile "notes/body.md" is outside this project ('
        + os.path.realpath(project)
        + "). Only files inside the project can be read.",
    }
    assert seen <= allowed, seen - allowed
    assert tree_state(tmp_path / "outside") == outside_before


def test_real_writes_during_the_swap_never_write_an_outside_byte(tmp_path: Path) -> None:
    bank = written(tmp_path / "project" / "bank")
    project = bank.parent
    notes = project / "notes"
    notes.mkdir()
    (notes / "body.md").write_text("inside text\n", encoding="utf-8")
    outside = tmp_path / "outside" / "notes"
    outside.mkdir(parents=True)
    (outside / "body.md").write_text(SECRET + "\n", encoding="utf-8")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(notes, project / "notes.real")
            os.symlink(outside, notes)
            os.unlink(notes)
            os.rename(project / "notes.real", notes)

    tool = registry.BY_NAME["bank_create"]
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for number in range(200):
            arguments = create_arguments(f"ops/real-{number}.md", bodyFile="notes/body.md")
            try:
                run_write(tool, Bank(bank), arguments, cwd=str(project))
            except RefusalError:
                continue
    finally:
        stop.set()
        swapper.join()
    for path in bank.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


# --------------------------------------------------------------------------------------------
# Item 11: the 1,000,000-character bound holds on the CLI too
# --------------------------------------------------------------------------------------------

TOO_LONG = (
    "`{name}` is longer than the 1000000 characters it accepts; shorten it, or write the "
    "document in sections."
)


def cli_with_input(root: Path, text: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mbank", "--root", str(root), *argv],
        input=text,
        capture_output=True,
        text=True,
        env=env(),
        cwd=str(root.parent),
        timeout=120,
    )


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        ([*create_args("ops/big.md"), "--body-file", "-"], "body"),
        (["update-section", "ops/first.md", "Notes", "--content-file", "-"], "content"),
    ],
    ids=["body-file-stdin", "content-file-stdin"],
)
def test_standard_input_past_the_bound_is_refused(
    bank: Path, assert_unchanged: Any, argv: list[str], name: str
) -> None:
    with assert_unchanged(bank):
        result = cli_with_input(bank, "x" * 1_000_001, *argv)
        assert refused_line(result) == TOO_LONG.format(name=name)
    at_bound = cli_with_input(bank, "y" * 999_000, *argv)
    assert at_bound.returncode in (0, 1) and "longer than" not in at_bound.stderr


def test_inline_body_past_the_bound_is_refused(
    bank: Path, assert_unchanged: Any, capsys: Any
) -> None:
    # The kernel caps one argument of a real process at 128 KiB (MAX_ARG_STRLEN), so an inline
    # --body past the bound can only come through the CLI's own entry point in-process.
    from mbank.cli import main

    with assert_unchanged(bank):
        code = main(["--root", str(bank), *create_args("ops/big.md"), "--body", "z" * 1_000_001])
    assert code == 1
    assert capsys.readouterr().err == "mbank: " + TOO_LONG.format(name="body") + "\n"


# --------------------------------------------------------------------------------------------
# Item 12: a document with duplicate frontmatter keys is refused for every write
# --------------------------------------------------------------------------------------------


def duplicate(bank: Path) -> None:
    path = bank / "ops" / "first.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("status: draft\n", "status: draft\nstatus: active\ntitle: Other\n", 1),
        encoding="utf-8",
    )


DUPLICATES = (
    'ops/first.md declares "title", "status" more than once in its frontmatter; keep one of '
    "each by hand, then write again; nothing was written."
)


@pytest.mark.parametrize(
    "argv",
    [
        ["set-status", "ops/first.md", "active"],
        ["set-field", "ops/first.md", "purpose", "Another purpose."],
        ["edit", "ops/first.md", "--find", "First", "--replace", "Second"],
        ["rewrite", "ops/first.md", "--body", "New body.\n"],
        ["update-section", "ops/first.md", "Notes", "--content", "New."],
    ],
    ids=["set-status", "set-field", "edit", "rewrite", "update-section"],
)
def test_every_write_to_a_document_with_duplicate_keys_is_refused_naming_them(
    bank: Path, assert_unchanged: Any, argv: list[str]
) -> None:
    duplicate(bank)
    with assert_unchanged(bank):
        assert refused_line(cli(bank, *argv)) == DUPLICATES


def test_promoting_a_note_with_duplicate_keys_is_refused_naming_them(
    bank: Path, assert_unchanged: Any
) -> None:
    note = bank / "_inbox" / "dup.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(
        "---\ntitle: A note\ntitle: Another\npurpose: Why.\ndoc_kind: domain\n---\n# A note\n",
        encoding="utf-8",
    )
    with assert_unchanged(bank):
        assert refused_line(cli(bank, "promote", "_inbox/dup.md", "--to", "ops/dup.md")) == (
            '_inbox/dup.md declares "title" more than once in its frontmatter; keep one of '
            "each by hand, then write again; nothing was written."
        )


# --------------------------------------------------------------------------------------------
# Item 13: names no index link could carry are refused, and echoed escaped
# --------------------------------------------------------------------------------------------

UNLINKABLE = [
    ("ops/two words.md", "a space", "ops/two words.md"),
    ("ops/tab\there.md", "a whitespace character", "ops/tab\\there.md"),
    ("ops/new\nline.md", "a whitespace character", "ops/new\\nline.md"),
    ("ops/paren).md", 'a ")"', "ops/paren).md"),
    ("ops/hash#x.md", 'a "#"', "ops/hash#x.md"),
    ("file:/tmp/x.md", "a name that reads as a URL", "file:/tmp/x.md"),
    ("ops/esc\x1b[31m.md", "a control character", "ops/esc\\x1b[31m.md"),
    ("ops/bell\x07.md", "a control character", "ops/bell\\x07.md"),
]


def unlinkable(reason: str, shown: str) -> str:
    return (
        f"Path has {reason}, so no index link could name it: {shown}. Use letters, digits, "
        '"-", "_", "." and "/" (a "-" for a space).'
    )


@pytest.mark.parametrize(("path", "reason", "shown"), UNLINKABLE)
def test_an_unlinkable_name_is_refused_by_the_cli(
    bank: Path, assert_unchanged: Any, path: str, reason: str, shown: str
) -> None:
    with assert_unchanged(bank):
        result = cli(bank, *create_args(path))
        assert refused_line(result) == unlinkable(reason, shown)
        assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_every_unlinkable_name_is_refused_over_mcp(bank: Path, assert_unchanged: Any) -> None:
    answers = []
    with assert_unchanged(bank), serving(bank) as server:
        server.initialize()
        for path, _reason, _shown in UNLINKABLE:
            answers.append(
                server.request(
                    "tools/call", {"name": "bank_create", "arguments": create_arguments(path)}
                )
            )
    assert "Traceback" not in server.stderr, server.stderr
    for answer, (_path, reason, shown) in zip(answers, UNLINKABLE, strict=True):
        assert answer.get("isError"), answer
        assert answer["content"][0]["text"].endswith(unlinkable(reason, shown))


def test_a_control_character_in_a_missing_path_is_echoed_escaped(
    bank: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(bank):
        result = cli(bank, "set-status", "ops/no\x1b]0;pwned\x07.md", "active")
        assert refused_line(result) == ("Not a document of this bank: ops/no\\x1b]0;pwned\\x07.md")


# --------------------------------------------------------------------------------------------
# Item 14: a read-only document is never replaced or deleted
# --------------------------------------------------------------------------------------------


def read_only_refusal(mode: str) -> str:
    return (
        f"ops/first.md is read-only on disk (mode {mode}); make it writable (chmod u+w) if it "
        "should change; nothing was written."
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["edit", "ops/first.md", "--find", "First", "--replace", "Second"],
        ["set-status", "ops/first.md", "active"],
        ["rewrite", "ops/first.md", "--body", "New body.\n"],
        ["undo"],
    ],
    ids=["edit", "set-status", "rewrite", "undo-of-create"],
)
def test_a_0444_document_is_refused_for_every_replace_or_delete(
    bank: Path, assert_unchanged: Any, argv: list[str]
) -> None:
    # As root the bits are no obstacle to the rename, so this is the refusal's own check of
    # the mode (no write bit for anyone), which holds for every user.
    (bank / "ops" / "first.md").chmod(0o444)
    with assert_unchanged(bank):
        assert refused_line(cli(bank, *argv)) == read_only_refusal("0444")


def test_a_document_this_user_cannot_write_is_refused_as_an_unprivileged_user(
    shared_place: Path, assert_unchanged: Any
) -> None:
    user = unprivileged()
    if not user:
        pytest.skip("not root: no second user to own the bank")
    bank = written(shared_place / "bank")
    # nobody may write the bank's directories (so the journal works) but not the document
    for directory, dirnames, _files in os.walk(bank):
        os.chmod(directory, 0o777)
        for name in dirnames:
            os.chmod(os.path.join(directory, name), 0o777)
    for path in (bank / ".mbank").rglob("*"):
        path.chmod(0o777 if path.is_dir() else 0o666)
    (bank / "ops" / "first.md").chmod(0o644)
    with assert_unchanged(bank):
        result = cli(bank, "edit", "ops/first.md", "--find", "First", "--replace", "X", user=user)
        assert refused_line(result) == read_only_refusal("0644")
    assert READ_ONLY_WRITE  # the read-only checkout's sentence is item 9's, not this one
