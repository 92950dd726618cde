"""The CLI survives data nested as deep as libyaml allows, and names the subcommand that
replaced an upstream flag (spec 04 §9.1, 07 §4.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbank.cli import main


def test_read_json_of_frontmatter_nested_999_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x").mkdir()
    nested = "[" * 999 + "]" * 999
    (tmp_path / "x" / "deep.md").write_text(f"---\ntitle: Deep\na: {nested}\n---\n# Deep\n")
    assert main(["read", "x/deep.md", "--root", str(tmp_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    depth, value = 0, result["frontmatter"]["a"]
    while isinstance(value, list) and value:
        depth, value = depth + 1, value[0]
    assert depth == 998 and value == []


def test_an_upstream_flag_names_its_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--stats"])
    assert exited.value.code == 2
    assert "--stats is now a subcommand: mbank stats" in capsys.readouterr().err
