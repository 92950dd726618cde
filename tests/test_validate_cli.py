"""`mbank validate` (spec 04 §9.2–9.4): human output, `--json`, `--summary`, the filters, and
exit codes — 0 with findings, 1 under `--fail-on` when a finding of that severity or worse is
reported, 2 for a usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mbank.cli import main
from mbank.snapshot import Bank
from mbank.validate import validate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_prints_findings_and_totals_and_exits_zero(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    code, out, err = run(capsys, "validate", "--root", str(fixture_bank))
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == [
        "ERROR   invalid-frontmatter      broken/bad-yaml.md:5",
        "        YAML frontmatter does not parse (mapping values are not allowed in this "
        'context). Values were recovered leniently; quote any value containing ": ".',
    ]
    assert "\ntotal: 5\n" in out
    assert out == snapshot


def test_validate_json_is_the_tool_result(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--root", str(fixture_plus), "validate", "--json")
    assert code == 0
    assert json.loads(out) == validate(Bank(fixture_plus).refresh())
    assert out.startswith('{\n  "total": 13,')


def test_validate_filters_reach_the_result(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "validate",
        "--root",
        str(fixture_plus),
        "--scope",
        "./broken/",
        "--severity",
        "error",
        "--rule",
        "invalid-frontmatter",
        "--json",
    )
    assert code == 0
    assert [item["path"] for item in json.loads(out)["findings"]] == [
        "broken/bad-yaml.md",
        "broken/latin1.md",
    ]


def test_validate_summary_prints_only_the_totals(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", "--root", str(fixture_bank), "--summary")
    assert code == 0
    assert out.splitlines()[0] == "total: 5"
    assert "ERROR" not in out


def test_fail_on_error_exits_one_on_the_fixture(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "validate", "--root", str(fixture_bank), "--fail-on", "error")
    assert code == 1
    assert "total: 5" in out
    assert err == ""


def test_fail_on_error_passes_when_only_warnings_are_reported(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["validate", "--root", str(fixture_bank), "--severity", "warning"]
    assert run(capsys, *argv, "--fail-on", "error")[0] == 0
    assert run(capsys, *argv, "--fail-on", "warning")[0] == 1


def test_fail_on_warning_also_trips_on_errors(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["validate", "--root", str(fixture_bank), "--rule", "ssot-conflict"]
    assert run(capsys, *argv, "--fail-on", "warning")[0] == 1
    assert run(capsys, *argv, "--scope", "adr", "--fail-on", "warning")[0] == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["--rule", "no-such-rule"],
        ["--severity", "fatal"],
        ["--fail-on", "info"],
    ],
)
def test_bad_flag_values_are_usage_errors(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, "validate", "--root", str(fixture_bank), *argv)
    assert code == 2
    assert out == ""
    assert "invalid choice" in err


def test_validate_writes_nothing(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Any
) -> None:
    with assert_unchanged(fixture_plus):
        run(capsys, "validate", "--root", str(fixture_plus))
    assert not (fixture_plus / ".mbank").exists()


def test_validate_does_not_import_mcp(fixture_bank: Path) -> None:
    script = (
        "import sys; from mbank.cli import main; "
        f"code = main(['validate', '--root', {str(fixture_bank)!r}, '--summary']); "
        "print('mcp' in sys.modules, code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "False 0"
