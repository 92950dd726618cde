"""Invariant 4 (spec 07 §1.1): reads never write — not even `.mbank/` — and the same files
give the same answers.

Every read tool and every resource through the MCP surface in process, every read tool's core
function, and every read CLI subcommand (human and `--json`), on a copy of the extended
fixture inside a real git repository: the digest of the whole project — every path, its bytes,
permission bits and mtime, `.git/` included — is the same before and after, and no `.mbank/`
appears. A bank that already has a journal and an interrupted write stays as it is too (read
subcommands do not recover; they print the notice). When the tests do not run as root the tree
is also made read-only and every read must still succeed (as root, permission bits do not bind,
so that half is skipped).

Determinism (07 §3.26): two fresh processes with different `PYTHONHASHSEED` give byte-identical
JSON for route, search, validate, graph, changed (mtime mode) and the index resource, and
byte-identical dry-run plans and diffs; within one process a second call equals the first.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import write_calls
from fixture_banks import REPO, copy_fixture
from git_history import commit_all, init_repo
from planners import FIXED_NOW, Clock, Ids

from mbank.changed import changed
from mbank.contract_diff import contract_diff
from mbank.drift import drift
from mbank.graph import graph
from mbank.health import health
from mbank.inbox import inbox_listing
from mbank.journal import history, journal_resource
from mbank.read import PathLookup, read
from mbank.resources import frontmatter_schema, index_resource
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank
from mbank.validate import validate

TESTS = Path(__file__).resolve().parent
NOTE = (
    "---\ntitle: Loose Thought\ndoc_kind: domain\npurpose: Captured mid-session.\n"
    "status: draft\n---\n# Loose Thought\n\n## Idea\n\nRetry queues need a cap.\n"
)


def build_project(base: Path) -> Path:
    """A project (git work tree) holding the extended fixture bank at `<project>/bank`, with an
    inbox note, two dated commits and one uncommitted edit; returns the bank root."""
    project = init_repo(base / "project")
    root = copy_fixture(project / "bank", overlay=True)
    commit_all(project, "2026-08-01T10:00:00+00:00", "seed")
    (root / "_inbox").mkdir()
    (root / "_inbox" / "loose.md").write_text(NOTE, encoding="utf-8")
    commit_all(project, "2026-09-01T10:00:00+00:00", "capture")
    rules = root / "domain" / "rules.md"
    rules.write_text(rules.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    return root


def with_journal_and_an_interrupted_write(root: Path) -> None:
    """One real write (so `.mbank/` and a record exist), then a WAL entry left behind."""
    write_calls.set_field(
        Bank(root),
        {"path": "domain/rules.md", "field": "owner", "value": "platform"},
        clock=Clock(),
        make_id=Ids(),
        cwd=str(root.parent),
    )
    entry = {
        "id": "20260914T130000Z-dead01",
        "tool": "bank_edit",
        "time": "2026-09-14T13:00:00Z",
        "ops": [],
        "dirs": [],
    }
    (root / ".mbank" / "wal" / f"{entry['id']}.json").write_text(
        json.dumps(entry), encoding="utf-8"
    )


def digest(tree: Path) -> dict[str, tuple[int, int, int, str | None]]:
    """Every path under `tree` (directories too): mode, size, mtime in ns, and the bytes' hash
    (the link target for a symlink). Nothing is exempt, not even `.mbank/lock`: a read never
    opens it."""
    found: dict[str, tuple[int, int, int, str | None]] = {}
    for directory, dirnames, filenames in os.walk(tree):
        for name in [*dirnames, *filenames]:
            path = Path(directory, name)
            info = path.lstat()
            content: str | None = None
            if stat.S_ISLNK(info.st_mode):
                content = os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            found[path.relative_to(tree).as_posix()] = (
                info.st_mode,
                info.st_size,
                info.st_mtime_ns,
                content,
            )
    return found


@contextmanager
def read_only(tree: Path) -> Iterator[None]:
    """`chmod -R a-w` for the duration (skipped as root, where the bits do not bind)."""
    if os.geteuid() == 0:
        yield
        return
    changed_modes: list[tuple[Path, int]] = []
    for directory, dirnames, filenames in os.walk(tree):
        for name in [*dirnames, *filenames, ""]:
            path = Path(directory, name) if name else Path(directory)
            if path.is_symlink():
                continue
            mode = stat.S_IMODE(path.lstat().st_mode)
            changed_modes.append((path, mode))
            path.chmod(mode & ~0o222)
    try:
        yield
    finally:
        for path, mode in reversed(changed_modes):
            path.chmod(mode)


@pytest.fixture(params=["fresh", "journaled"])
def bank_root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = build_project(tmp_path)
    if request.param == "journaled":
        with_journal_and_an_interrupted_write(root)
    return root


# --------------------------------------------------------------------------------------------
# The core functions
# --------------------------------------------------------------------------------------------


def core_reads(bank: Bank) -> dict[str, Any]:
    """Every read tool and resource, called on the core functions as the surfaces call them."""
    snapshot = bank.refresh()
    index = SearchIndex()
    root = bank.root

    def relative(given: str) -> str:
        return bank.relative(given, snapshot)

    return {
        "route": route(snapshot, index, "what are the retry thresholds for jobs"),
        "route-layer": route(snapshot, index, "queue", layer="knowledge", limit=25),
        "read": read(snapshot, "domain/rules.md", lookup=PathLookup(relative)),
        "read-section": read(
            snapshot, "domain/rules.md", section="Thresholds", lookup=PathLookup(relative)
        ),
        "read-batch": read(
            snapshot, ["domain/rules.md", "README.md", "nope.md"], lookup=PathLookup(relative)
        ),
        "read-inbox": read(snapshot, "_inbox/loose.md", lookup=PathLookup(relative)),
        "search": search(snapshot, index, "threshold"),
        "search-status": search(snapshot, index, "queue", status="active"),
        "graph-down": graph(snapshot, "README.md", lookup=PathLookup(relative)),
        "graph-both": graph(
            snapshot,
            "domain/rules.md",
            direction="both",
            format="mermaid",
            lookup=PathLookup(relative),
        ),
        "validate": validate(snapshot),
        "validate-scope": validate(snapshot, scope="domain", severity="error"),
        "changed-git": changed(snapshot, "HEAD~1"),
        "changed-date": changed(snapshot, "2026-08-15"),
        "drift": drift(snapshot),
        "drift-scope": drift(snapshot, scope="engineering", threshold_days=0),
        "contract-diff": contract_diff(snapshot, None),
        "index": index_resource(snapshot),
        "schema": frontmatter_schema(snapshot),
        "health": health(snapshot),
        "inbox": inbox_listing(snapshot, FIXED_NOW),
        "journal": journal_resource(root),
        "history": history(root, path="domain/rules.md"),
    }


def test_every_core_read_leaves_the_project_untouched(bank_root: Path) -> None:
    project = bank_root.parent
    had_journal = (bank_root / ".mbank").exists()
    before = digest(project)
    with read_only(project):
        first = core_reads(Bank(bank_root))
    assert digest(project) == before
    assert (bank_root / ".mbank").exists() == had_journal
    assert first["read-inbox"]["path"] == "_inbox/loose.md"
    assert first["changed-git"]["changes"], "the uncommitted edit is a change"


def test_the_same_files_give_the_same_answers_in_one_process(bank_root: Path) -> None:
    first = core_reads(Bank(bank_root))
    again = core_reads(Bank(bank_root))
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    # A warm bank (same Bank, cached snapshot and index) answers as a cold one does.
    bank = Bank(bank_root)
    core_reads(bank)
    assert json.dumps(core_reads(bank), sort_keys=True) == json.dumps(first, sort_keys=True)


# --------------------------------------------------------------------------------------------
# The MCP surface: every read tool, every resource
# --------------------------------------------------------------------------------------------

READ_TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("bank_route", {"question": "what are the retry thresholds for jobs"}),
    ("bank_route", {"question": "queue", "layer": "knowledge", "limit": 25}),
    ("bank_read", {"path": "domain/rules.md"}),
    ("bank_read", {"path": "domain/rules.md", "section": "Thresholds"}),
    ("bank_read", {"path": ["domain/rules.md", "README.md", "nope.md"]}),
    ("bank_read", {"path": "_inbox/loose.md"}),
    ("bank_read", {"path": "../outside.md"}),
    ("bank_search", {"query": "threshold"}),
    ("bank_changed", {"since": "HEAD~1"}),
    ("bank_changed", {"since": "2026-08-15"}),
    ("bank_drift", {}),
    ("bank_drift", {"scope": "engineering", "thresholdDays": 0}),
    ("bank_graph", {"path": "README.md"}),
    ("bank_graph", {"path": "domain/rules.md", "direction": "both", "format": "mermaid"}),
    ("bank_validate", {}),
    ("bank_validate", {"scope": "domain", "severity": "error"}),
    ("bank_contract_diff", {}),
]
RESOURCES = [
    "memorybank://index",
    "memorybank://schema/frontmatter",
    "memorybank://health",
    "memorybank://inbox",
    "memorybank://journal",
]


@pytest.mark.anyio
async def test_every_read_tool_and_resource_over_mcp_leaves_the_project_untouched(
    bank_root: Path,
) -> None:
    from mcp import Client

    from mbank.server import build_server

    project = bank_root.parent
    had_journal = (bank_root / ".mbank").exists()
    # Building the server recovers an interrupted write (a write, 03 §14.6); reads come after.
    server = build_server(str(bank_root))
    before = digest(project)
    with read_only(project):
        async with Client(server) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {name for name, _ in READ_TOOL_CALLS} <= tools
            for name, arguments in READ_TOOL_CALLS:
                result = await client.call_tool(name, arguments)
                assert result.is_error == (arguments.get("path") == "../outside.md"), name
            listed = {str(item.uri) for item in (await client.list_resources()).resources}
            assert set(RESOURCES) <= listed
            for uri in RESOURCES:
                contents = (await client.read_resource(uri)).contents
                assert contents and contents[0].text  # type: ignore[union-attr]
    assert digest(project) == before
    assert (bank_root / ".mbank").exists() == had_journal


# --------------------------------------------------------------------------------------------
# The read subcommands
# --------------------------------------------------------------------------------------------

READ_SUBCOMMANDS: list[list[str]] = [
    ["stats"],
    ["route", "what are the retry thresholds for jobs"],
    ["route", "queue", "--layer", "knowledge", "--limit", "25"],
    ["read", "domain/rules.md"],
    ["read", "domain/rules.md", "--section", "Thresholds"],
    ["read", "domain/rules.md", "README.md", "nope.md"],
    ["read", "_inbox/loose.md"],
    ["search", "threshold"],
    ["search", "queue", "--status", "active"],
    ["graph", "README.md"],
    ["graph", "domain/rules.md", "--direction", "both", "--format", "mermaid"],
    ["graph", "domain/rules.md", "--format", "dot"],
    ["changed", "HEAD~1"],
    ["changed", "2026-08-15"],
    ["drift"],
    ["drift", "--scope", "engineering", "--threshold-days", "0"],
    ["validate"],
    ["validate", "--summary"],
    ["validate", "--scope", "domain", "--severity", "error", "--fail-on", "error"],
    ["contract-diff"],
    ["inbox"],
    ["history"],
    ["history", "--path", "domain/rules.md", "--limit", "5"],
]


def test_every_read_subcommand_leaves_the_project_untouched(
    bank_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mbank.cli import main

    project = bank_root.parent
    had_journal = (bank_root / ".mbank").exists()
    before = digest(project)
    with read_only(project):
        for argv in READ_SUBCOMMANDS:
            for form in ([], ["--json"]):
                code = main(["--root", str(bank_root), *form, *argv])
                captured = capsys.readouterr()
                assert code in (0, 1), (argv, captured.err)
                assert captured.out, argv
                if form and "--format" not in argv:  # a picture is printed as it is (04 §9.4)
                    json.loads(captured.out)
    assert digest(project) == before
    assert (bank_root / ".mbank").exists() == had_journal


NOTICE = (
    "mbank: a write was interrupted (20260914T130000Z-dead01); the next write "
    "to this bank rolls it back.\n"
)


@pytest.mark.parametrize(
    "argv",
    READ_SUBCOMMANDS,
    ids=[" ".join(argv)[:40] for argv in READ_SUBCOMMANDS],
)
def test_a_read_subcommand_names_an_interrupted_write_and_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    from mbank.cli import main

    root = build_project(tmp_path)
    with_journal_and_an_interrupted_write(root)
    before = digest(root.parent)
    main(["--root", str(root), *argv])
    assert NOTICE in capsys.readouterr().err
    assert digest(root.parent) == before


# --------------------------------------------------------------------------------------------
# Determinism across processes (07 §3.26)
# --------------------------------------------------------------------------------------------

DETERMINISM_SCRIPT = """
import json, sys
from planners import FIXED_NOW, Clock, Ids
import write_calls
from mbank.changed import changed
from mbank.graph import graph
from mbank.read import PathLookup
from mbank.resources import index_resource
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank
from mbank.validate import validate

root = sys.argv[1]
bank = Bank(root)
snapshot = bank.refresh()
index = SearchIndex()
relative = lambda given: bank.relative(given, snapshot)
out = {
    "route": [route(snapshot, index, q, limit=25) for q in
              ["retry thresholds", "queue choice", "how is logging configured", "правила"]],
    "search": [search(snapshot, index, q, limit=50) for q in ["threshold", "queue cache", "job"]],
    "validate": validate(snapshot),
    "graph": graph(snapshot, "README.md", direction="both", depth=6, limit=300,
                   lookup=PathLookup(relative)),
    "changed": changed(snapshot, "2000-01-01"),
    "index": index_resource(snapshot),
    "plan": write_calls.create(
        bank,
        {"path": "domain/hashing.md", "docKind": "domain", "title": "Hashing",
         "purpose": "How keys are hashed.", "derivedFrom": ["rules.md"], "status": "draft"},
        dry_run=True, clock=Clock(), make_id=Ids(), cwd=root,
    ),
}
sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=1))
"""


def test_two_processes_with_different_hash_seeds_answer_byte_identically(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path / "bank", overlay=True)
    outputs = []
    for seed in ("0", "31337"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO)]),
        }
        completed = subprocess.run(
            [sys.executable, "-c", DETERMINISM_SCRIPT, str(root)],
            capture_output=True,
            check=True,
            env=env,
            timeout=120,
        )
        outputs.append(completed.stdout)
    assert outputs[0] == outputs[1]
    answers = json.loads(outputs[0])
    assert answers["validate"]["total"] > 0 and answers["changed"]["changes"]
    assert answers["plan"]["diff"].startswith("--- /dev/null\n+++ b/domain/hashing.md\n")
    assert not (root / ".mbank").exists() and not (root / "domain" / "hashing.md").exists()
