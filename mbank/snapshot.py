"""The walk: list the bank, re-read and re-parse only what moved, hand it to the projection.

`Bank.refresh()` is the only code that reads documents from disk. An unchanged bank costs one
sorted scandir walk with a stat per document and no parse; there is no watcher, so a stale
index cannot happen (ARCHITECTURE.md, "The snapshot").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import msgspec

from mbank.model import Doc
from mbank.parse import parse_document
from mbank.paths import SKIPPED_DIRECTORIES, normalise_caller_path

# Re-exported for the shell's convenience: the value lives in the pure `mbank.projection`.
from mbank.projection import Snapshot as Snapshot
from mbank.projection import build_snapshot as build_snapshot


class _Cached(msgspec.Struct, frozen=True):
    key: tuple[int, int]
    doc: Doc
    text: str


def _debug(message: str) -> None:
    if os.environ.get("MBANK_DEBUG"):
        print(f"mbank: {message}", file=sys.stderr)


def _walk_entries(root: str) -> Iterator[tuple[str, str, os.DirEntry[str]]]:
    """Yield (bank path, directory, entry) of every document under `root` (spec 01 §1.2).

    Each directory is listed through an open descriptor, so `entry.stat()` is an `fstatat`
    relative to it rather than a lookup of the whole path: on an unchanged bank the walk and
    one stat per document are all a refresh costs.
    """
    stack: list[tuple[str, str]] = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            _debug(f"cannot list {directory}: {exc}")
            continue
        try:
            with os.scandir(descriptor) as entries:
                listed = list(entries)
            for entry in listed:
                name = entry.name
                if name.startswith("."):
                    continue
                if not name.isascii():
                    try:
                        name.encode("utf-8")
                    except UnicodeEncodeError:
                        continue  # surrogate-escaped name: it could not be addressed in JSON
                try:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if name not in SKIPPED_DIRECTORIES:
                            stack.append((os.path.join(directory, name), prefix + name + "/"))
                        continue
                    if name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        yield prefix + name, directory, entry
                except OSError as exc:
                    _debug(f"cannot stat {os.path.join(directory, name)}: {exc}")
        except OSError as exc:
            _debug(f"cannot list {directory}: {exc}")
        finally:
            os.close(descriptor)


def walk_documents(root: str) -> Iterator[tuple[str, str]]:
    """Yield (bank path, absolute path) of every document under `root` (spec 01 §1.2)."""
    for path, directory, entry in _walk_entries(root):
        yield path, os.path.join(directory, entry.name)


def _read(absolute: str) -> tuple[tuple[int, int], bytes] | None:
    try:
        descriptor = os.open(absolute, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        _debug(f"cannot open {absolute}: {exc}")
        return None
    try:
        info = os.fstat(descriptor)
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return (info.st_mtime_ns, info.st_size), b"".join(chunks)
    except OSError as exc:
        _debug(f"cannot read {absolute}: {exc}")
        return None
    finally:
        os.close(descriptor)


class Bank:
    """One bank root and the cache that makes `refresh()` cheap when nothing moved."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.normpath(os.path.abspath(os.fspath(root)))
        self.real_root = os.path.realpath(self.root)
        self._cache: dict[str, _Cached] = {}
        self._snapshot: Snapshot | None = None
        self._generation = 0
        self.last_refresh_parsed = 0

    def refresh(self) -> Snapshot:
        """Bring the snapshot up to date with the files; parse only what moved."""
        parsed = 0
        changed = self._snapshot is None
        seen: dict[str, _Cached] = {}
        if os.path.isdir(self.root):
            for path, directory, entry in _walk_entries(self.root):
                cached = self._cache.get(path)
                if cached is not None:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if (info.st_mtime_ns, info.st_size) == cached.key:
                        seen[path] = cached
                        continue
                loaded = _read(os.path.join(directory, entry.name))
                if loaded is None:
                    continue
                key, raw = loaded
                result = parse_document(path, raw, key[0], key[1])
                seen[path] = _Cached(key, result.doc, result.text)
                parsed += 1
                changed = True
        if not changed and len(seen) != len(self._cache):
            changed = True  # a document vanished (every path seen was cached and unchanged)
        self._cache = seen
        self.last_refresh_parsed = parsed
        if not changed and self._snapshot is not None:
            return self._snapshot
        self._generation += 1
        self._snapshot = build_snapshot(
            self.root, self.real_root, dict(sorted(seen.items())), self._generation
        )
        return self._snapshot

    @property
    def snapshot(self) -> Snapshot:
        """The last snapshot, refreshing once if there is none yet."""
        return self._snapshot if self._snapshot is not None else self.refresh()

    def relative(self, given: str, snapshot: Snapshot | None = None) -> str:
        """Normalise a caller's path to a bank path, or raise a path refusal (spec 01 §2.2)."""
        current = snapshot if snapshot is not None else self.snapshot
        return normalise_caller_path(
            given,
            self.root,
            self.real_root,
            lambda path: path in current.docs,
            self.has_inner_root_dir,
        )

    def has_inner_root_dir(self) -> bool:
        """Whether `<root>/<root name>/` is a real directory (spec 01 §2.2 step 8)."""
        inner = os.path.join(self.root, os.path.basename(self.root))
        return os.path.isdir(inner) and not os.path.islink(inner)
