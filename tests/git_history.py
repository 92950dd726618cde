"""Build real git repositories with dated commits through dulwich (no `git` binary).

Shared by the `changed`, `drift` and `graph` tests: `init_repo(path)` and `commit_all(path, when)`,
which stages every change in the work tree (additions, edits, deletions; `.gitignore`
respected) and commits it with a fixed committer time and offset; and `copy_fixture`.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

from dulwich import porcelain
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

AUTHOR = b"Test Author <author@example.invalid>"
TESTS = Path(__file__).resolve().parent


def copy_fixture(target: Path, *, overlay: bool) -> Path:
    """Copy the base fixture bank (and the overlay over it) to `target`.

    The same as conftest's helper; importable without `from conftest import`, which resolves
    to whichever conftest module pytest loaded first (tests/memo/ has its own).
    """
    shutil.copytree(TESTS / "fixture-bank", target)
    if overlay:
        shutil.copytree(TESTS / "fixture-overlay", target, dirs_exist_ok=True)
    return target


def init_repo(path: Path) -> Path:
    """An empty repository whose work tree is `path`."""
    path.mkdir(parents=True, exist_ok=True)
    Repo.init(str(path), default_branch=b"main").close()
    return path


def commit_all(
    path: Path,
    when: str,
    message: str = "change",
    *,
    branch: str | None = None,
    merge: list[str] | None = None,
) -> str:
    """Stage the whole work tree as `git add -A` would and commit it at `when` (ISO 8601).

    `branch` commits onto `refs/heads/<branch>` instead of HEAD (its current tip is the
    parent); `merge` adds further parents, making a merge commit.
    """
    moment = dt.datetime.fromisoformat(when)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    offset = moment.utcoffset()
    zone = int(offset.total_seconds()) if offset is not None else 0
    stamp = int(moment.timestamp())
    with Repo(str(path)) as repo:
        porcelain.add(repo)
        index = repo.open_index()
        for name in list(index.paths()):
            if not os.path.lexists(os.path.join(path, os.fsdecode(name))):
                del index[name]
        index.write()
        sha = repo.get_worktree().commit(
            message=message.encode(),
            author=AUTHOR,
            committer=AUTHOR,
            author_timestamp=stamp,
            author_timezone=zone,
            commit_timestamp=stamp,
            commit_timezone=zone,
            ref=Ref(b"refs/heads/" + branch.encode()) if branch else Ref(b"HEAD"),
            merge_heads=[ObjectID(m.encode()) for m in merge or []],
            no_verify=True,
            sign=False,
        )
    return sha.decode("ascii")


def set_branch(path: Path, name: str, sha: str) -> None:
    """Point `refs/heads/<name>` at a commit."""
    with Repo(str(path)) as repo:
        repo.refs[Ref(b"refs/heads/" + name.encode())] = ObjectID(sha.encode())


def tag(path: Path, name: str, sha: str, *, annotated: bool = False) -> None:
    """A lightweight or annotated tag on a commit."""
    with Repo(str(path)) as repo:
        if annotated:
            porcelain.tag_create(
                repo,
                name,
                author=AUTHOR,
                message=b"release",
                annotated=True,
                objectish=sha,
                tag_time=1_767_225_600,
                tag_timezone=0,
                sign=False,
            )
        else:
            repo.refs[Ref(b"refs/tags/" + name.encode())] = ObjectID(sha.encode())
