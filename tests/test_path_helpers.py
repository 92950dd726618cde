"""The one helper each for what mbank used to write several times (issue 12): whether a path
lies inside another, and the walk up to the git work tree's top."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mbank.discovery import git_top
from mbank.paths import is_within


def test_is_within_goes_by_whole_segments() -> None:
    assert is_within("/a/b", "/a/b")
    assert is_within("/a/b/c", "/a/b")
    assert is_within("/a/b/c", "/a/b/")
    assert not is_within("/a/bc", "/a/b")
    assert not is_within("/a", "/a/b")
    assert is_within("/x", "/")


segments = st.lists(st.sampled_from(["a", "b", "ab", "b.", ".."]), min_size=1, max_size=5)


@given(segments, segments)
def test_is_within_is_a_segment_prefix(path: list[str], parent: list[str]) -> None:
    assert is_within("/" + "/".join(path), "/" + "/".join(parent)) == (
        path[: len(parent)] == parent
    )


def test_git_top_finds_a_git_directory_or_file_upwards(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "repo" / "sub" / "worktree").mkdir()
    (tmp_path / "repo" / "sub" / "worktree" / ".git").write_text("gitdir: elsewhere\n")
    assert git_top(str(tmp_path / "repo" / "sub" / "deep")) == str(tmp_path / "repo")
    assert git_top(str(tmp_path / "repo" / "sub" / "worktree")) == str(
        tmp_path / "repo" / "sub" / "worktree"
    )


def test_a_dangling_git_link_makes_no_work_tree(tmp_path: Path) -> None:
    # The two copies disagreed here (exists / lexists); git and dulwich both pass a `.git`
    # that leads nowhere, so the one walk does too.
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "inner"
    inner.mkdir()
    os.symlink(tmp_path / "missing", inner / ".git")
    assert git_top(str(inner)) == str(tmp_path)
