"""The first ten minutes on the command line (issue 15): a wrong root fails loudly, the bank is
found from inside it, `init` refuses a second bank in one repository, search's timing goes to
stderr, `validate` splits and groups its findings, `memo --embedder minilm` without its extra is
one sentence, and `serve` in a terminal says it waits for a client."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from mbank.cli import MINILM_MISSING, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def no_bank(root: Path) -> str:
    return (
        f"mbank: No bank at {root}: make one with `mbank init NAME --root {root}`, or pass "
        "--root (or MBANK_ROOT) with the directory of an existing bank.\n"
    )


READS_AND_WRITES = [
    ["stats"],
    ["route", "queue"],
    ["read", "x.md"],
    ["search", "queue"],
    ["graph", "x.md"],
    ["changed", "HEAD"],
    ["drift"],
    ["validate", "--fail-on", "error"],
    ["contract-diff"],
    ["inbox"],
    ["history"],
    ["undo"],
    ["edit", "x.md", "--find", "a", "--replace", "b"],
    ["create", "x.md", "--kind", "note", "--title", "T", "--purpose", "P"],
    ["materialize-flows"],
    ["surface-cost"],
]


@pytest.mark.parametrize("argv", READS_AND_WRITES, ids=lambda argv: argv[0])
def test_a_root_that_does_not_exist_is_refused_by_every_command_but_init(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "memroy_bank"
    assert run(capsys, *argv, "--root", str(missing)) == (1, "", no_bank(missing))
    assert not missing.exists()


def test_mbank_root_that_does_not_exist_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MBANK_ROOT", str(tmp_path / "gone"))
    assert run(capsys, "validate") == (1, "", no_bank(tmp_path / "gone"))


def test_a_commit_gate_on_a_mistyped_root_fails_as_a_real_process(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mbank", "validate", "--fail-on", "error", "--root", "nope"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", no_bank(tmp_path / "nope"))


def test_init_still_makes_a_root_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "init", "Demo", "--root", str(tmp_path / "new_bank"))
    assert code == 0 and out.startswith(f"CREATED {tmp_path / 'new_bank'}\n")


def test_the_bank_is_found_from_inside_it_whatever_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = tmp_path / "project" / "docs" / "kb"
    subprocess.run(["git", "init", "-q", str(tmp_path / "project")], check=True)
    assert run(capsys, "init", "Demo", "--root", str(bank))[0] == 0
    monkeypatch.chdir(bank / "domain")
    code, out, _ = run(capsys, "stats")
    assert code == 0 and out.startswith(f"root: {bank}\n")


@pytest.fixture
def repo_with_bank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    project = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert run(capsys, "init", "Demo", "--root", str(project / "memory_bank"))[0] == 0
    return project


def test_init_of_a_second_bank_in_the_repository_is_refused_naming_the_first(
    repo_with_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = repo_with_bank / "services" / "api" / "memory_bank"
    bank = repo_with_bank / "memory_bank"
    assert run(capsys, "init", "Two", "--root", str(second)) == (
        1,
        "",
        f"mbank: This repository already has a bank at {bank}; use it (--root {bank}) "
        "instead of making a second one inside it.\n",
    )
    assert not (repo_with_bank / "services").exists()


def test_init_from_inside_the_bank_makes_no_nested_bank(
    repo_with_bank: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo_with_bank / "memory_bank" / "adr")
    code, out, err = run(capsys, "init", "Nested")
    assert (code, out) == (1, "")
    assert err.startswith("mbank: This bank already holds ")
    assert not (repo_with_bank / "memory_bank" / "adr" / "memory_bank").exists()


def test_search_prints_its_timing_on_stderr(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "search", "queue", "--root", str(fixture_bank))
    assert code == 0
    assert out.splitlines()[0].endswith("[adr / decision]  x5")
    assert err.startswith("indexed ") and err.endswith(" ms\n") and err.count("\n") == 1


def test_validate_summary_splits_errors_and_warnings_per_rule(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", "--root", str(fixture_bank), "--summary")
    assert code == 0
    assert out == (
        "total: 5\n"
        "  errors  warnings  rule\n"
        "       1         0  invalid-frontmatter\n"
        "       1         0  broken-derived-from\n"
        "       0         1  unregistered-doc\n"
        "       0         1  unresolved-rule-reference\n"
        "       1         0  ssot-conflict\n"
    )


def test_validate_groups_a_repeated_finding_with_its_count_and_first_three_paths(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for number in range(5):
        (fixture_bank / "domain" / f"loose-{number}.md").write_text(
            f"---\ntitle: Loose {number}\npurpose: p\n---\n# Loose\n"
        )
    code, out, _ = run(capsys, "validate", "--root", str(fixture_bank))
    assert code == 0
    lines = out.splitlines()
    start = lines.index(
        "WARNING unregistered-doc         6 findings: domain/loose-0.md, domain/loose-1.md, "
        "domain/loose-2.md, …"
    )
    assert lines[start + 2] == "        (`validate --rule unregistered-doc` lists all 6)"
    every = run(capsys, "validate", "--root", str(fixture_bank), "--rule", "unregistered-doc")[1]
    assert every.count("WARNING unregistered-doc ") == 6


def test_memo_minilm_without_its_extra_is_one_sentence_and_exit_two(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if find_spec("sentence_transformers") is not None:
        pytest.skip("the semantic extra is installed here, so minilm starts")
    assert run(capsys, "memo", "--embedder", "minilm") == (2, "", MINILM_MISSING + "\n")
    assert run(capsys, "memo", "--embedder=minilm")[0] == 2
    assert MINILM_MISSING.count(". ") == 0 and MINILM_MISSING.endswith(".")


def test_help_carries_no_spec_section_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    from mbank.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        texts += [sub.format_help() for sub in action.choices.values()]  # type: ignore[union-attr]
    assert [text for text in texts if "§" in text] == []


@pytest.mark.stdio
def test_serve_in_a_terminal_says_it_waits_for_an_mcp_client(fixture_bank: Path) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mbank", "serve", "--root", str(fixture_bank)],
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(follower)
    try:
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 60)
        assert ready, "serve printed nothing on stderr"
        line = process.stderr.readline()
    finally:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
        os.close(leader)
    assert line == (
        f"mbank: serving {fixture_bank} (full surface); waiting for an MCP client on stdio "
        "(an MCP client starts this command itself; Ctrl-C to stop).\n"
    )


@pytest.mark.parametrize(
    ("memo_args", "asks"),
    [
        ([], False),
        (["--embedder"], False),
        (["--embedder", "hashing"], False),
        (["--bank", "b", "--embedder", "minilm"], True),
        (["--embedder=minilm"], True),
    ],
)
def test_only_an_explicit_minilm_is_checked_for_its_extra(memo_args: list[str], asks: bool) -> None:
    from mbank.cli import _asks_for_minilm

    assert _asks_for_minilm(memo_args) is asks
