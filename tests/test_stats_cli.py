"""`mbank stats`: the human and `--json` output (spec 04 §9.3, §9.4), exit codes, root
discovery (§9.1), and one run of the real console script."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from fixture_banks import copy_fixture

from mbank.cli import discover_root, main
from mbank.model import JournalRecord

Unchanged = Callable[[Path], AbstractContextManager[None]]


@pytest.fixture(autouse=True)
def _no_ambient_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # The developer's own MBANK_ROOT must never leak into a test.
    monkeypatch.delenv("MBANK_ROOT", raising=False)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `mbank <argv>` in process: (exit code, stdout, stderr)."""
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def normalised_lines(output: str, root: Path) -> list[str]:
    """Human output with the root and the timing made stable for a snapshot."""
    text = output.replace(str(root), "<ROOT>")
    text = re.sub(r"^indexed in: [0-9.]+ ms$", "indexed in: <MS> ms", text, flags=re.M)
    return text.split("\n")


def normalised_json(output: str, root: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(output)
    assert result["root"] == str(root)
    assert isinstance(result["indexedMs"], int | float) and result["indexedMs"] >= 0
    return {**result, "root": "<ROOT>", "indexedMs": "<MS>"}


# -- human output -----------------------------------------------------------------------------


def test_stats_human_output_on_the_base_fixture(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    code, out, err = run(["stats", "--root", str(fixture_bank)], capsys)
    assert (code, err) == (0, "")
    lines = normalised_lines(out, fixture_bank)
    assert lines[:5] == [
        "root: <ROOT>",
        "documents: 17",
        f"bytes: {sum(p.stat().st_size for p in fixture_bank.rglob('*.md')) / 1024:.1f} KB",
        "indexed in: <MS> ms",
        "contract: dna/README.md, dna/frontmatter.md, dna/governance.md, dna/principles.md",
    ]
    assert "edges: 16 (with fit: 1, external: 1, unresolved: 1)" in lines
    assert "canonical: 9 keys, conflicts: 1" in lines
    assert "parse errors: 1 -> broken/bad-yaml.md" in lines
    assert "no frontmatter: 0" in lines
    assert lines[-3:] == ["journal: 0 records", "projection cache: not used (missing)", ""]
    assert lines == snapshot


def test_stats_human_output_on_the_extended_fixture(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    code, out, _ = run(["stats", "--root", str(fixture_plus)], capsys)
    assert code == 0
    lines = normalised_lines(out, fixture_plus)
    assert "edges: 22 (with fit: 1, external: 2, unresolved: 1)" in lines  # URL edge external
    assert (
        "parse errors: 3 -> adr/ADR-003-duplicate-key.md, broken/bad-yaml.md, broken/latin1.md"
        in lines
    )
    assert "no frontmatter: 1 -> broken/latin1.md" in lines
    assert lines == snapshot


def test_stats_in_degraded_mode(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    root = fixture_bank / "domain"
    code, out, _ = run(["stats", "--root", str(root)], capsys)
    assert code == 0
    lines = normalised_lines(out, root)
    assert "contract: ABSENT (degraded mode)" in lines
    assert not any(line.startswith("  doc_kind:") for line in lines)
    assert lines == snapshot


def test_stats_blocks_count_descending_with_none_for_empty_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, kind in [("a.md", "adr"), ("b.md", "adr"), ("c.md", ""), ("d.md", "zeta")]:
        header = f"---\ndoc_kind: {kind}\n---\n" if kind else "no header\n"
        (tmp_path / name).write_text(header, encoding="utf-8")
    _, out, _ = run(["stats", "--root", str(tmp_path)], capsys)
    block = out.split("by doc_kind:\n", 1)[1].split("by doc_function:", 1)[0]
    assert block == "  2  adr\n  1  (none)\n  1  zeta\n"
    assert "no frontmatter: 1 -> c.md" in out


def test_stats_reports_the_journal(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Unchanged
) -> None:
    journal = fixture_bank / ".mbank" / "journal.jsonl"
    journal.parent.mkdir()
    records = [
        JournalRecord(1, "j1", "2026-09-14T09:00:00Z", "bank_create", "cli", "0.1.0", {}, (), ()),
        JournalRecord(
            1, "j2", "2026-09-14T10:00:00Z", "bank_set_status", "mcp", "0.1.0", {}, (), ()
        ),
    ]
    journal.write_bytes(b"".join(msgspec.json.encode(record) + b"\n" for record in records))
    with assert_unchanged(fixture_bank):
        _, out, _ = run(["stats", "--root", str(fixture_bank)], capsys)
        _, as_json, _ = run(["stats", "--json", "--root", str(fixture_bank)], capsys)
    assert out.endswith(
        "journal: 2 records, last 2026-09-14T10:00:00Z bank_set_status\n"
        "projection cache: not used (missing)\n"
    )
    assert json.loads(as_json)["journal"] == {
        "records": 2,
        "last": {"time": "2026-09-14T10:00:00Z", "tool": "bank_set_status"},
    }


def test_stats_never_writes(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Unchanged
) -> None:
    with assert_unchanged(fixture_bank):
        assert run(["stats", "--root", str(fixture_bank)], capsys)[0] == 0
    assert not (fixture_bank / ".mbank").exists()


# -- --json -----------------------------------------------------------------------------------

STATS_KEYS = [
    "root",
    "documents",
    "bytes",
    "indexedMs",
    "contract",
    "edges",
    "canonical",
    "indexLinks",
    "parseErrors",
    "noFrontmatter",
    "byLayer",
    "byDocKind",
    "byDocFunction",
    "journal",
    "projectionCache",
]
CONTRACT_KEYS = [
    "present",
    "source",
    "docKinds",
    "docFunctions",
    "statuses",
    "deliveryStatuses",
    "decisionStatuses",
    "roots",
    "requiresDerivedFrom",
    "forbidsCycles",
]


def test_stats_json_shape(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    code, out, err = run(["stats", "--json", "--root", str(fixture_bank)], capsys)
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert list(result) == STATS_KEYS
    assert list(result["contract"]) == CONTRACT_KEYS
    assert list(result["edges"]) == ["total", "withFit", "external", "unresolved"]
    assert list(result["canonical"]) == ["keys", "conflicts"]
    assert result["journal"] == {"records": 0}
    assert result["projectionCache"] == {"used": False, "status": "missing", "reused": 0}
    assert result["documents"] == 17
    assert result["contract"]["docKinds"] == [
        "governance",
        "domain",
        "engineering",
        "adr",
        "feature",
    ]
    assert out == json.dumps(result, indent=2, ensure_ascii=False) + "\n"  # exactly the object
    assert normalised_json(out, fixture_bank) == snapshot


def test_json_is_accepted_before_or_after_the_subcommand(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = run(["--json", "--root", str(fixture_bank), "stats"], capsys)
    after = run(["stats", "--root", str(fixture_bank), "--json"], capsys)
    assert before[0] == after[0] == 0
    assert normalised_json(before[1], fixture_bank) == normalised_json(after[1], fixture_bank)


def test_json_output_is_utf8_unescaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "заметки.md").write_text("---\nbroken: [\n---\n", encoding="utf-8")
    _, out, _ = run(["stats", "--json", "--root", str(tmp_path)], capsys)
    assert '"заметки.md"' in out
    assert json.loads(out)["parseErrors"] == ["заметки.md"]


def test_a_missing_root_is_refused_not_read_as_an_empty_bank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 15: a mistyped root must not read as a bank with nothing in it
    code, out, err = run(["stats", "--json", "--root", str(tmp_path / "nothing")], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"mbank: No bank at {tmp_path / 'nothing'}: make one with ")


# -- usage errors -----------------------------------------------------------------------------


def test_an_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["stats", "--no-such-flag"], capsys)
    assert (code, out) == (2, "")
    assert "unrecognized arguments: --no-such-flag" in err


def test_an_upstream_mode_flag_names_the_subcommand(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hint reads the process's own argv, as the console script has it.
    monkeypatch.setattr(sys, "argv", ["mbank", "--stats"])
    code, _, err = run(["--stats"], capsys)
    assert code == 2
    assert "mbank: --stats is now a subcommand: mbank stats …" in err


# -- root discovery ---------------------------------------------------------------------------


def make_project(tmp_path: Path, *banks: str) -> Path:
    """A git work tree at tmp_path/project with the given bank directories."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for bank in banks:
        copy_fixture(project / bank, overlay=False)
    return project


@pytest.mark.parametrize(
    ("banks", "expected"),
    [
        (["memory_bank"], "memory_bank"),
        (["memory-bank"], "memory-bank"),
        (["memory_bank", "memory-bank"], "memory_bank"),
    ],
)
def test_discovery_finds_the_bank_from_the_working_directory(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    banks: list[str],
    expected: str,
) -> None:
    project = make_project(tmp_path, *banks)
    monkeypatch.chdir(project)
    code, out, _ = run(["stats", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["root"] == str(project / expected)


def test_discovery_climbs_to_the_git_top(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "memory-bank")
    deep = project / "src" / "pkg" / "module"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    code, out, _ = run(["stats", "--json"], capsys)
    assert (code, json.loads(out)["root"]) == (0, str(project / "memory-bank"))


def test_discovery_takes_the_nearest_directory_first(tmp_path: Path) -> None:
    # Spec: "the first directory that contains memory_bank/, else memory-bank/" — read per
    # directory, so a memory-bank/ beside the caller wins over a memory_bank/ further up.
    project = make_project(tmp_path, "memory_bank")
    (project / "service" / "memory-bank").mkdir(parents=True)
    assert discover_root(str(project / "service")) == str(project / "service" / "memory-bank")


def test_discovery_stops_at_the_git_top(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_fixture(tmp_path / "memory_bank", overlay=False)  # above the work tree: not searched
    project = make_project(tmp_path)
    monkeypatch.chdir(project)
    code, out, err = run(["stats"], capsys)
    assert (code, out) == (2, "")
    assert err.endswith("mbank: no bank found; pass --root\n")


def test_mbank_root_is_used_when_no_root_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "memory_bank")
    other = copy_fixture(tmp_path / "elsewhere", overlay=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("MBANK_ROOT", "../elsewhere")  # relative to the working directory
    _, out, _ = run(["stats", "--json"], capsys)
    assert json.loads(out)["root"] == str(other)
    _, out, _ = run(["stats", "--json", "--root", "memory_bank"], capsys)
    assert json.loads(out)["root"] == str(project / "memory_bank")  # --root wins


# -- the real console script ------------------------------------------------------------------


def _console_script() -> list[str]:
    beside = Path(sys.executable).with_name("mbank")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mbank")
    return [found] if found else [sys.executable, "-m", "mbank"]


def test_the_console_script_runs_stats(fixture_bank: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "MBANK_ROOT"}
    completed = subprocess.run(
        [*_console_script(), "--json", "stats", "--root", str(fixture_bank)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=60,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    result = json.loads(completed.stdout)
    assert (result["root"], result["documents"]) == (str(fixture_bank), 17)
