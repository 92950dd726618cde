"""The git facts `bank_changed` and `bank_drift` need, read with dulwich (no `git` binary).

Everything here reads a repository and nothing writes one. `last_touched` is the one batched
history walk of spec 02 §9: a single pass over the commits reachable from HEAD, diffing each
non-merge commit's tree against its first parent only along the paths asked for (a trie of
path segments prunes every other subtree), instead of one path-filtered walker per path.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from collections.abc import Iterable, Iterator
from typing import cast

import msgspec
from dulwich.config import StackedConfig
from dulwich.errors import NotGitRepository
from dulwich.objects import Commit, ObjectID, Tree, parse_tree
from dulwich.objectspec import AmbiguousShortId, parse_commit
from dulwich.repo import Repo

from mbank.paths import SKIPPED_DIRECTORIES

_OPERATORS = re.compile(r"(~\d*|\^\d*)")


class TolerantRepo(Repo):
    """A repository whose user and system git config may be unreadable or broken.

    dulwich reads `~/.gitconfig` (and `/etc/gitconfig`) for the index and the ignore rules;
    one that is a directory, unreadable or malformed made every git read a traceback. mbank
    needs nothing from it that changes an answer, so then only the repository's own config is
    used (issue 13, item 8).
    """

    def get_config_stack(self) -> StackedConfig:
        """The usual stack, else the repository's own config alone."""
        try:
            return super().get_config_stack()
        except (OSError, ValueError, UnicodeDecodeError, KeyError):
            local = self.get_config()
            return StackedConfig([local], writable=local)


def discover_repo(start: str) -> Repo | None:
    """The repository containing `start` (searching upwards), or None outside git."""
    directory = os.path.abspath(start)
    while not os.path.isdir(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    try:
        return TolerantRepo.discover(directory)
    except (NotGitRepository, OSError):
        return None


class BankRepo(msgspec.Struct, frozen=True):
    """The repository holding a bank: the open repo, its real work tree, the bank's prefix."""

    repo: Repo
    tree: str
    prefix: str


def open_bank_repo(real_root: str) -> BankRepo | None:
    """The repository whose work tree holds the bank (close `.repo` after use), or None."""
    repo = discover_repo(real_root)
    if repo is None:
        return None
    tree = work_tree(repo)
    prefix = prefix_in(real_root, tree)
    if prefix is None:
        repo.close()
        return None
    return BankRepo(repo, tree, prefix)


def work_tree(repo: Repo) -> str:
    """The real path of the repository's work tree."""
    return os.path.realpath(repo.path)


def prefix_in(real_root: str, tree: str) -> str | None:
    """`real_root` relative to the work tree (POSIX, `""` for the top), None when outside."""
    if real_root == tree:
        return ""
    if not real_root.startswith(tree.rstrip("/") + "/"):
        return None
    return os.path.relpath(real_root, tree).replace(os.sep, "/")


def join_repo_path(prefix: str, path: str) -> str:
    """A bank path as a repository path."""
    return f"{prefix}/{path}" if prefix else path


def head_commit(repo: Repo) -> Commit | None:
    """The commit HEAD points at, or None in a repository without commits."""
    try:
        commit = repo[repo.head()]
    except KeyError:
        return None
    return commit if isinstance(commit, Commit) else None


def _base_commit(repo: Repo, name: str) -> Commit | None:
    if not name:
        return None
    try:
        return parse_commit(repo, name.encode("utf-8"))
    except (KeyError, ValueError, AmbiguousShortId, NotImplementedError):
        return None


def resolve_commit(repo: Repo, spec: str) -> Commit | None:
    """A revision as a commit: ids (≥4 hex digits), branches, tags, HEAD, then `~N` `^` `^N`.

    Operators follow git: `~N` goes N first parents back, `^N` takes the Nth parent (`^` is
    `^1`, `^0` the commit itself), in any combination (`main~2^2~1`). None when anything in
    the chain does not exist.
    """
    cut = len(spec)
    for mark in ("~", "^"):
        found = spec.find(mark)
        if found >= 0:
            cut = min(cut, found)
    base, operators = spec[:cut], spec[cut:]
    parts = _OPERATORS.findall(operators)
    if "".join(parts) != operators:
        return None
    commit = _base_commit(repo, base)
    for part in parts:
        if commit is None:
            return None
        count = int(part[1:]) if len(part) > 1 else 1
        if part[0] == "~":
            for _ in range(count):
                if not commit.parents:
                    return None
                commit = _commit(repo, commit.parents[0])
                if commit is None:
                    return None
        elif count > 0:
            if count > len(commit.parents):
                return None
            commit = _commit(repo, commit.parents[count - 1])
    return commit


def _commit(repo: Repo, sha: ObjectID) -> Commit | None:
    try:
        found = repo[sha]
    except KeyError:
        return None
    return found if isinstance(found, Commit) else None


def first_commit(repo: Repo, start: Commit) -> Commit:
    """The root commit reached from `start` by first parents."""
    commit = start
    while commit.parents:
        parent = _commit(repo, commit.parents[0])
        if parent is None:
            break
        commit = parent
    return commit


def indexable(bank_path: str) -> bool:
    """Whether the bank walk would index this path (spec 01 §1.2), symlinks aside."""
    segments = bank_path.split("/")
    if not segments[-1].endswith(".md"):
        return False
    if any(segment.startswith(".") or not segment for segment in segments):
        return False
    return not any(segment in SKIPPED_DIRECTORIES for segment in segments[:-1])


def markdown_blobs(repo: Repo, commit: Commit, prefix: str) -> dict[str, ObjectID]:
    """Bank path → blob id of every indexable regular `.md` file under `prefix` in a commit."""
    store = repo.object_store
    tree_id = commit.tree
    if prefix:
        root_tree = store[commit.tree]
        if not isinstance(root_tree, Tree):
            return {}
        try:
            mode, tree_id = root_tree.lookup_path(store.__getitem__, prefix.encode())
        except KeyError:
            return {}
        if not stat.S_ISDIR(mode):
            return {}
    blobs: dict[str, ObjectID] = {}
    for entry in store.iter_tree_contents(tree_id):
        if entry.path is None or entry.mode is None or entry.sha is None:
            continue
        if not stat.S_ISREG(entry.mode):
            continue  # symlinks and submodules are never documents
        try:
            path = entry.path.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if indexable(path):
            blobs[path] = entry.sha
    return blobs


def iso_time(seconds: int, offset: int) -> str:
    """A commit time as ISO 8601 in the committer's offset, e.g. `2026-07-10T12:00:00+02:00`."""
    zone = dt.timezone(dt.timedelta(seconds=offset))
    return dt.datetime.fromtimestamp(seconds, zone).isoformat()


# --------------------------------------------------------------------------------------------
# The batched history walk (spec 02 §9.2 step 4)
# --------------------------------------------------------------------------------------------


class Touch(msgspec.Struct, frozen=True):
    """The newest non-merge commit that changed a path: committer time and offset."""

    time: int
    offset: int


class _Node:
    __slots__ = ("children", "directory_key", "file_key")

    def __init__(self) -> None:
        self.children: dict[bytes, _Node] = {}
        self.file_key: str | None = None
        self.directory_key: str | None = None


def _trie(files: Iterable[str], directories: Iterable[str]) -> _Node:
    root = _Node()
    for keys, is_directory in ((files, False), (directories, True)):
        for key in keys:
            node = root
            for segment in key.encode("utf-8").split(b"/") if key else []:
                node = node.children.setdefault(segment, _Node())
            if is_directory:
                node.directory_key = key
            else:
                node.file_key = key
    return root


class _TreeCache:
    """Tree id → {name: (mode, sha)} for the trees one walk revisits (parent and child).

    Trees are parsed from their raw bytes with dulwich's native parser: building `Tree`
    objects (which sort their entries) cost most of the walk.
    """

    def __init__(self, repo: Repo) -> None:
        self.store = repo.object_store
        self.sha_length = repo.object_format.oid_length
        self.entries: dict[ObjectID, dict[bytes, tuple[int, ObjectID]]] = {}

    def __call__(self, tree_id: ObjectID | None) -> dict[bytes, tuple[int, ObjectID]]:
        if tree_id is None:
            return {}
        found = self.entries.get(tree_id)
        if found is None:
            type_num, raw = self.store.get_raw(tree_id)
            parsed: dict[bytes, tuple[int, bytes]] = (
                {name: (mode, sha) for name, mode, sha in parse_tree(raw, self.sha_length)}
                if type_num == Tree.type_num
                else {}
            )
            found = cast(dict[bytes, tuple[int, ObjectID]], parsed)  # hex ids, as everywhere
            if len(self.entries) > 4096:
                self.entries.clear()
            self.entries[tree_id] = found
        return found


def _tree_id(entry: tuple[int, ObjectID] | None) -> ObjectID | None:
    return entry[1] if entry is not None and stat.S_ISDIR(entry[0]) else None


def _touched_keys(
    trees: _TreeCache,
    old_id: ObjectID | None,
    new_id: ObjectID | None,
    node: _Node | None,
    covering: tuple[str, ...],
) -> Iterator[str]:
    """Keys of `node`'s trie changed between two trees; `covering` = directory keys above."""
    if old_id == new_id:
        return
    if node is not None and node.directory_key is not None:
        covering = (*covering, node.directory_key)
    old, new = trees(old_id), trees(new_id)
    if covering:
        names: Iterable[bytes] = set(old) | set(new)
    elif node is not None:
        names = node.children
    else:
        return
    for name in names:
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        child = node.children.get(name) if node is not None else None
        if child is None and not covering:
            continue
        before_tree, after_tree = _tree_id(before), _tree_id(after)
        before_file = before is not None and before_tree is None
        after_file = after is not None and after_tree is None
        if before_file or after_file:
            # a file appeared, vanished or changed here (or a file became a tree, or back)
            yield from covering
            if child is not None and child.file_key is not None:
                yield child.file_key
        if before_tree is not None or after_tree is not None:
            yield from _touched_keys(trees, before_tree, after_tree, child, covering)


def last_touched(
    repo: Repo, head: Commit, files: Iterable[str], directories: Iterable[str]
) -> tuple[dict[str, Touch], dict[str, Touch]]:
    """Newest committer time of each file and each directory, in ONE walk from `head`.

    Merge commits are not counted (as in a plain name-only log); a root commit is compared
    with the empty tree; for a directory, any file under it changed by a commit counts,
    deletions included. Returns (times by file path, times by directory path).
    """
    file_keys, directory_keys = set(files), set(directories)
    trie = _trie(file_keys, directory_keys)
    trees = _TreeCache(repo)
    commits = [entry.commit for entry in repo.get_walker(include=[head.id])]
    # every parent of a reachable commit is reachable: its tree is known without a reload
    tree_of: dict[ObjectID, ObjectID] = {commit.id: commit.tree for commit in commits}
    by_file: dict[str, Touch] = {}
    by_directory: dict[str, Touch] = {}
    for commit in commits:
        if len(commit.parents) > 1:
            continue
        parent_tree: ObjectID | None = None
        if commit.parents:
            parent_tree = tree_of.get(commit.parents[0])
            if parent_tree is None:
                parent = _commit(repo, commit.parents[0])
                parent_tree = parent.tree if parent is not None else None
        touch = Touch(commit.commit_time, commit.commit_timezone)
        for key in set(_touched_keys(trees, parent_tree, commit.tree, trie, ())):
            for table, keys in ((by_file, file_keys), (by_directory, directory_keys)):
                if key in keys:
                    known = table.get(key)
                    if known is None or touch.time > known.time:
                        table[key] = touch
    return by_file, by_directory
