"""Invariant 5 (ARCHITECTURE, spec 07 §1.1): only `server.py` and `memo/server.py` import `mcp`.

An AST scan of the installed packages (`mbank`, `mbank.reducers`, `mbank.gates`) for
`import mcp…` / `from mcp… import`, and a fresh process running the CLI's read subcommands
that reports `mcp` absent from `sys.modules` — the SDK costs about a second to import, and a
read subcommand must not pay it.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from fixture_banks import REPO, copy_fixture

# schema_refusal.py: the servers' shared answer to arguments that fail the schema (issue 15)
# schema_refusal.py and stdio_guard.py are the two servers' shared parts over the SDK
ALLOWED = {
    ("mbank", "server.py"),
    ("mbank", "memo/server.py"),
    ("mbank", "schema_refusal.py"),
    ("mbank", "stdio_guard.py"),
}
PACKAGES = ("mbank", "mbank.reducers", "mbank.gates")


def imports_mcp(source: str) -> list[int]:
    """Lines of `source` that import `mcp` or a submodule of it."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name == "mcp" or name.startswith("mcp.") for name in names):
            lines.append(node.lineno)
    return lines


def package_files() -> dict[tuple[str, str], Path]:
    """Every module file of the installed packages, by (package, relative path), once each."""
    found: dict[tuple[str, str], Path] = {}
    seen: set[str] = set()
    for name in PACKAGES:
        module = importlib.import_module(name)
        for directory in module.__path__:
            for path in sorted(Path(directory).rglob("*.py")):
                real = os.path.realpath(path)
                if real in seen:
                    continue
                seen.add(real)
                found[(name, path.relative_to(directory).as_posix())] = path
    return found


def test_the_scan_sees_every_package_and_recognises_each_import_form() -> None:
    files = package_files()
    assert ("mbank", "cli.py") in files
    assert any(package == "mbank.reducers" for package, _ in files)
    assert any(package == "mbank.gates" for package, _ in files)
    assert imports_mcp("import mcp\nimport mcp.types as t\nfrom mcp.server import x\n") == [
        1,
        2,
        3,
    ]
    assert imports_mcp("import mcpx\nfrom .mcp import y\nfrom mbank import mcp_like\n") == []


def test_only_the_two_servers_import_mcp() -> None:
    importing = {
        key
        for key, path in package_files().items()
        if imports_mcp(path.read_text(encoding="utf-8"))
    }
    assert importing == ALLOWED


SCRIPT = r"""
import contextlib, io, json, sys
from mbank.cli import main

root = sys.argv[1]
runs = [
    ["stats"],
    ["route", "filter thresholds"],
    ["read", "domain/rules.md"],
    ["search", "intake"],
    ["graph", "domain/rules.md"],
    ["validate"],
    ["changed", "2001-01-01"],
    ["drift"],
    ["history"],
    ["inbox"],
    ["contract-diff"],
]
codes = {}
for argv in runs:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            codes[argv[0]] = main(["--root", root, *argv])
        except SystemExit as exit_:
            codes[argv[0]] = exit_.code
loaded = sorted(name for name in sys.modules if name == "mcp" or name.startswith("mcp."))
print(json.dumps({"codes": codes, "mcp": loaded}))
"""


def test_read_subcommands_never_import_mcp(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path / "memory_bank", overlay=False)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MBANK_ROOT", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["mcp"] == []
    # every subcommand the CLI has ran to success; one it does not have yet exits 2
    assert set(report["codes"].values()) <= {0, 2}
    assert report["codes"]["route"] == 0 and report["codes"]["stats"] == 0
