"""Control characters are printed escaped everywhere a person reads mbank (issue 13, item 13).

A bank cloned from elsewhere may already hold a file whose name, title or body carries an
escape sequence or a carriage return. The JSON output escapes them by construction; the human
output of every read subcommand, and every refusal on stderr, must too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mbank.cli import main
from mbank.paths import terminal_text

ESC = "\x1b[31m"
HOSTILE_NAME = "engineering/evil\x1b[2J.md"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    root = tmp_path / "bank"
    (root / "dna").mkdir(parents=True)
    (root / "engineering").mkdir()
    (root / HOSTILE_NAME).write_text(
        f"---\ntitle: Red{ESC}Title\npurpose: Explains the{ESC} queue\rretries.\n---\n"
        f"# Red Title\n\nThe queue retries{ESC} jobs.\n",
        encoding="utf-8",
    )
    return root


def test_terminal_text_escapes_controls_but_keeps_line_breaks_and_tabs() -> None:
    assert terminal_text("a\x1b[31mb\r\n\tc\x85\x7f") == "a\\x1b[31mb\\r\n\tc\\x85\\x7f"
    assert terminal_text("plain ✓ текст\n") == "plain ✓ текст\n"


@pytest.mark.parametrize(
    "command",
    [
        ["route", "queue retries"],
        ["search", "queue"],
        ["stats"],
        ["validate"],
        ["read", HOSTILE_NAME],
        ["graph", HOSTILE_NAME],
    ],
    ids=lambda command: command[0],
)
def test_human_output_never_carries_a_raw_control_character(
    bank: Path, capsys: Any, command: list[str]
) -> None:
    code = main(["--root", str(bank), *command])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    printed = out + err
    assert not any(
        (ord(char) < 0x20 and char not in "\n\t") or 0x7F <= ord(char) < 0xA0 for char in printed
    ), repr(printed)


def test_a_refusal_on_stderr_prints_the_name_escaped(bank: Path, capsys: Any) -> None:
    code = main(["--root", str(bank), "edit", HOSTILE_NAME, "--find", "nowhere", "--replace", "x"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "\x1b" not in err and "\\x1b[2J" in err


def _mbank(
    bank: Path, *argv: bytes | str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mbank", "--root", str(bank), *argv],
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def test_non_utf8_standard_input_is_refused_with_a_sentence(
    bank: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(bank):
        done = _mbank(bank, "rewrite", HOSTILE_NAME, "--body-file", "-", stdin=b"ab\xff\xfe\n")
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.decode().endswith(
        "mbank: --body-file -: standard input is not UTF-8 text (byte 0xff at offset 2); "
        "pass a UTF-8 file.\n"
    )


def test_a_non_utf8_argument_is_refused_with_a_sentence(bank: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(bank):
        done = _mbank(bank, "set-field", HOSTILE_NAME.encode(), b"purpose", b"caf\xff")
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.decode().endswith("mbank: value: the value is not UTF-8 text; pass UTF-8.\n")


def test_a_new_path_past_path_max_is_refused_not_an_internal_error(
    bank: Path, assert_unchanged: Any, capsys: Any
) -> None:
    long = "a/" * 2100 + "x.md"
    with assert_unchanged(bank):
        code = main(["--root", str(bank), "create", long, "--kind", "domain", "--purpose", "P."])
    _, err = capsys.readouterr()
    size = len(f"{bank}/{long}".encode())
    assert code == 1
    assert err == (
        f"mbank: Path is {size} bytes with the bank root, past the 4095 a file path may have: "
        f"{long[:40]}…. Use a shorter path.\n"
    )
