"""Real git repositories for the merge tests: the `git` binary, isolated from the machine.

`isolate_git(monkeypatch, home)` points git's global and system config at nothing and HOME at
a scratch directory, so no test reads or writes the developer's git config; each repository
sets its own user.name/email. `mbank(...)` runs the real CLI in process (the same `main` the
console script runs); git itself runs the merge drivers as subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

import pytest

from mbank.cli import main

GIT_ISOLATION = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_DATE": "",
    "GIT_COMMITTER_DATE": "",
}


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Keep every git call of the test away from the user's and the system's config."""
    home.mkdir(parents=True, exist_ok=True)
    for key, value in GIT_ISOLATION.items():
        if value:
            monkeypatch.setenv(key, value)
        else:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MBANK_ROOT", raising=False)


def git(repo: Path, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `repo`; with `check`, a failure raises with git's own output."""
    completed = subprocess.run(
        ["git", "-C", str(repo), *arguments], capture_output=True, text=True, check=False
    )
    if check and completed.returncode != 0:
        raise AssertionError(
            f"git {' '.join(arguments)} failed ({completed.returncode}):\n"
            f"{completed.stdout}{completed.stderr}"
        )
    return completed


def new_repo(path: Path) -> Path:
    """An empty repository on branch main with a local user."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Merge Test")
    git(path, "config", "user.email", "merge-test@example.invalid")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def mbank(*argv: str) -> tuple[int, str, str]:
    """Run `mbank ARGV` in process; its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def mbank_ok(*argv: str) -> str:
    """`mbank ARGV`, which must succeed; its stdout."""
    status, out, err = mbank(*argv)
    assert status == 0, f"mbank {' '.join(argv)} failed ({status}): {err}{out}"
    return out


def unmerged(repo: Path) -> list[str]:
    """The paths git lists as unmerged after a merge."""
    return git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
