"""`mbank setup git` (issue 18): the `.gitattributes` block, the drivers in the repository's own
config, idempotence, the dry run, the optional post-merge hook, and the refusals."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixture_banks import REPO
from git_repos import git, isolate_git, mbank, mbank_ok, new_repo

from mbank.setup import TARGETS
from mbank.setup.git import (
    BLOCK_END,
    BLOCK_START,
    ONCE_PER_CLONE,
    SETUP_GIT_NOTE,
    attributes_block,
    with_block,
)


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project = new_repo(tmp_path / "project")
    mbank_ok("init", "Demo", "--root", str(project / "memory_bank"))
    return project


def files(project: Path) -> dict[str, bytes]:
    """The bytes of everything `setup git` may write."""
    out = {}
    for name in (".gitattributes", ".git/config", ".git/hooks/post-merge"):
        path = project / name
        if path.exists():
            out[name] = path.read_bytes()
    return out


THIS_MBANK = f"{shlex.quote(sys.executable)} -m mbank"


def test_setup_git_writes_the_attributes_and_registers_the_drivers(
    repo: Path, snapshot: Any
) -> None:
    out = mbank_ok("setup", "git", "--project", str(repo))
    assert out == (
        f"wrote {repo}/.gitattributes\n"
        f"registered the merge drivers in {repo}/.git/config\n"
        f"{ONCE_PER_CLONE}\n"
    )
    assert (repo / ".gitattributes").read_text(encoding="utf-8") == snapshot
    config = git(repo, "config", "--local", "--get-regexp", r"^merge\.").stdout
    assert config == (
        "merge.mbank-index.name mbank: merge a bank index by its entries\n"
        f"merge.mbank-index.driver {THIS_MBANK} merge-driver index %O %A %B %P\n"
        "merge.mbank-journal.name mbank: merge the bank journal by record id\n"
        f"merge.mbank-journal.driver {THIS_MBANK} merge-driver journal %O %A %B %P\n"
    )
    check = git(repo, "check-attr", "merge", "--", "memory_bank/README.md",
                "memory_bank/domain/README.md", "memory_bank/.mbank/journal.jsonl",
                "memory_bank/domain/notes/README.md").stdout  # fmt: skip
    assert check == (
        "memory_bank/README.md: merge: mbank-index\n"
        "memory_bank/domain/README.md: merge: mbank-index\n"
        "memory_bank/.mbank/journal.jsonl: merge: mbank-journal\n"
        "memory_bank/domain/notes/README.md: merge: unspecified\n"
    )


def test_a_second_run_changes_no_byte(repo: Path) -> None:
    mbank_ok("setup", "git", "--project", str(repo), "--post-merge-hook")
    before = files(repo)
    out = mbank_ok("setup", "git", "--project", str(repo), "--post-merge-hook")
    assert files(repo) == before
    assert out == (
        f"git is already set up for the bank in {repo}; nothing to change.\n{ONCE_PER_CLONE}\n"
    )


def test_the_dry_run_prints_the_diff_and_writes_nothing(repo: Path) -> None:
    before = files(repo)
    out = mbank_ok("setup", "git", "--project", str(repo), "--dry-run")
    assert files(repo) == before
    assert out.startswith(
        f"--- a/.gitattributes\n+++ b/.gitattributes\n@@ -0,0 +1,18 @@\n+{BLOCK_START}\n"
    )
    assert "+/memory_bank/.mbank/journal.jsonl merge=mbank-journal\n" in out
    assert "--- a/.git/config\n+++ b/.git/config\n" in out
    assert '+[merge "mbank-index"]\n' in out
    assert f"+\tdriver = {THIS_MBANK} merge-driver index %O %A %B %P\n" in out
    assert out.endswith(f"(dry run: nothing was written)\n{ONCE_PER_CLONE}\n")


def test_the_users_attributes_are_kept_and_the_block_replaced_in_place() -> None:
    block = attributes_block("", ("README.md",))
    first = with_block("*.png binary\n", block)
    assert first == f"*.png binary\n\n{BLOCK_START}\n/README.md merge=mbank-index\n" \
        f"/.mbank/journal.jsonl merge=mbank-journal\n{BLOCK_END}\n"  # fmt: skip
    grown = with_block(first + "*.pdf binary\n", attributes_block("", ("README.md", "a/README.md")))
    assert grown == (
        f"*.png binary\n\n{BLOCK_START}\n/README.md merge=mbank-index\n"
        f"/a/README.md merge=mbank-index\n/.mbank/journal.jsonl merge=mbank-journal\n"
        f"{BLOCK_END}\n*.pdf binary\n"
    )


def test_paths_are_anchored_and_quoted_for_git() -> None:
    block = attributes_block("my bank", ("README.md", "a*b/README.md"))
    assert block[1:3] == [
        '"/my bank/README.md" merge=mbank-index',
        '"/my bank/a\\\\*b/README.md" merge=mbank-index',
    ]


def test_a_bank_below_the_top_gets_prefixed_entries_and_a_new_feature_index(
    tmp_path: Path,
) -> None:
    project = new_repo(tmp_path / "project")
    bank = project / "docs" / "memory_bank"
    mbank_ok("init", "Demo", "--root", str(bank))
    index = bank / "features" / "FT-001" / "README.md"
    index.parent.mkdir()
    index.write_text("---\ntitle: FT-001\ndoc_function: index\n---\n# FT-001\n", encoding="utf-8")
    mbank_ok("setup", "git", "--project", str(project / "docs"))
    text = (project / ".gitattributes").read_text(encoding="utf-8")
    assert "/docs/memory_bank/features/FT-001/README.md merge=mbank-index\n" in text
    assert "/docs/memory_bank/.mbank/journal.jsonl merge=mbank-journal\n" in text


def test_the_post_merge_hook_is_executable_and_runs_this_mbank(repo: Path) -> None:
    mbank_ok("setup", "git", "--project", str(repo), "--post-merge-hook")
    hook = repo / ".git" / "hooks" / "post-merge"
    assert os.access(hook, os.X_OK)
    assert hook.read_text(encoding="utf-8").endswith(
        f"{THIS_MBANK} post-merge --root memory_bank || true\n"
    )


def test_a_hook_mbank_did_not_write_is_never_overwritten(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "post-merge"
    hook.write_text("#!/bin/sh\necho mine\n", encoding="utf-8")
    before = files(repo)
    status, out, err = mbank("setup", "git", "--project", str(repo), "--post-merge-hook")
    assert status == 1 and out == ""
    assert err == (
        f"mbank: {hook} already exists and mbank did not write it; add the line "
        f"`{THIS_MBANK} post-merge --root memory_bank` to it by hand.\n"
    )
    assert files(repo) == before


def test_outside_a_git_work_tree_it_refuses(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    mbank_ok("init", "Demo", "--root", str(plain / "memory_bank"))
    status, _, err = mbank("setup", "git", "--project", str(plain))
    assert status == 1
    assert err == (
        f"mbank: {plain} is not inside a git work tree; run `git init` there first, "
        "or pass --project DIR.\n"
    )
    assert not (plain / ".gitattributes").exists()


@pytest.mark.parametrize("place", ["elsewhere/memory_bank", "project-bank"])
def test_a_bank_outside_the_work_tree_is_refused(tmp_path: Path, place: str) -> None:
    """`project-bank` shares the work tree's name as a string prefix, not as a folder."""
    project = new_repo(tmp_path / "project")
    bank = tmp_path / place
    mbank_ok("init", "Demo", "--root", str(bank))
    status, _, err = mbank("setup", "git", "--project", str(project), "--root", str(bank))
    assert status == 1
    assert err == (
        f"mbank: The bank {bank} is not inside the work tree {project}; "
        "pass --root with the bank of this repository.\n"
    )
    assert not (project / ".gitattributes").exists()


def test_without_a_bank_it_refuses(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "empty")
    status, _, err = mbank("setup", "git", "--project", str(project))
    assert status == 1
    assert err == (
        f"mbank: No bank found in {project}; run `mbank init NAME` first, or pass --root BANK.\n"
    )


def test_setup_alone_lists_the_registered_targets() -> None:
    status, out, err = mbank("setup")
    assert (status, err) == (0, "")
    assert list(TARGETS) == ["claude", "cursor", "vscode", "codex", "git"]
    assert [line.split()[0] for line in out.splitlines()[2:]] == list(TARGETS)


def test_init_in_a_git_work_tree_says_to_run_setup_git(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "project")
    out = mbank_ok("init", "Demo", "--root", str(project / "memory_bank"))
    assert out.endswith(SETUP_GIT_NOTE + "\n")
    plain = mbank_ok("init", "Demo", "--root", str(tmp_path / "plain" / "memory_bank"))
    assert SETUP_GIT_NOTE not in plain


def test_the_pre_commit_hook_runs_the_validate_gate(tmp_path: Path) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == ["mbank-validate"]
    entry = shlex.split(hooks[0]["entry"])
    assert entry == ["mbank", "validate", "--fail-on", "error"]
    project = tmp_path / "project"
    mbank_ok("init", "Demo", "--root", str(project / "memory_bank"))
    command = [sys.executable, "-m", "mbank", *entry[1:]]
    clean = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert (clean.returncode, clean.stdout) == (0, "total: 0\n")
    broken = project / "memory_bank" / "domain" / "broken.md"
    broken.write_text(
        "---\ntitle: Broken\ndoc_kind: domain\ndoc_function: canonical\npurpose: p.\n"
        "derived_from:\n  - ../dna/missing.md\nstatus: active\n---\n# Broken\n",
        encoding="utf-8",
    )
    failing = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert failing.returncode == 1
    assert "ERROR" in failing.stdout


def test_run_in_a_linked_worktree_it_registers_the_drivers_for_every_worktree(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "seed")
    tree = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(tree))
    out = mbank_ok("setup", "git", "--project", str(tree))
    assert f"registered the merge drivers in {repo}/.git/config\n" in out
    assert (tree / ".gitattributes").exists() and not (repo / ".gitattributes").exists()
    driver = git(repo, "config", "--get", "merge.mbank-journal.driver").stdout
    assert driver == f"{THIS_MBANK} merge-driver journal %O %A %B %P\n"
