"""The walk: list the bank, re-read and re-parse only what moved, hand it to the projection.

`Bank.refresh()` is the only code that reads documents from disk. An unchanged bank costs one
sorted scandir walk with a stat per document and no parse; there is no watcher, so a stale
index cannot happen (ARCHITECTURE.md, "The snapshot").
"""

from __future__ import annotations

import operator
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal

import msgspec

from mbank.model import Doc, sha256_hex
from mbank.parse import parse_document
from mbank.paths import SKIPPED_DIRECTORIES, normalise_caller_path

# Re-exported for the shell's convenience: the value lives in the pure `mbank.projection`.
from mbank.projection import Snapshot as Snapshot
from mbank.projection import build_snapshot as build_snapshot
from mbank.projection_cache import (
    Facts,
    FinishedSnapshot,
    PersistedFile,
    ProjectionCache,
    portable_doc,
)

# A tick of the kernel's coarse clock is 1-10 ms; a file changed less than this before it was
# read is re-read rather than trusted by its stat facts (`is_racy`).
RACY_NS = 50_000_000


class _Cached(msgspec.Struct, frozen=True):
    # (mtime_ns, size, ctime_ns, inode, device) of the file as read
    facts: Facts
    doc: Doc
    text: str
    # changed too close to the read to be trusted by its facts: re-read it next time
    racy: bool = False


def _debug(message: str) -> None:
    if os.environ.get("MBANK_DEBUG"):
        print(f"mbank: {message}", file=sys.stderr)


# One listed directory: its documents (name, stat), its subdirectories (absolute, prefix), and
# its own stat taken before it was listed (None when it could not be listed).
Listing = tuple[list[tuple[str, os.stat_result]], list[tuple[str, str]], os.stat_result | None]


def _entry_kind(entry: os.DirEntry[str], name: str) -> Literal["document", "directory"] | None:
    """What the walk keeps a directory entry as (spec 01 §1.2): a document (a regular `.md`
    file), a subdirectory, or nothing (a hidden name, a surrogate-escaped name that could not
    be addressed in JSON, a symlink, a skipped directory, any other file). The one statement
    of that rule, for the full listing and for the unchanged check; raises OSError for an
    entry gone since the listing."""
    if name.startswith("."):
        return None
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if entry.is_symlink():
        return None
    if entry.is_dir(follow_symlinks=False):
        return None if name in SKIPPED_DIRECTORIES else "directory"
    if name.endswith(".md") and entry.is_file(follow_symlinks=False):
        return "document"
    return None


def _list_directory(directory: str, prefix: str) -> Listing:
    """The documents (name, stat) and subdirectories of one bank directory (spec 01 §1.2).

    The directory is listed through an open descriptor, so each stat is an `fstatat` relative
    to it rather than a lookup of the whole path: on an unchanged bank the walk and one stat
    per document are all a refresh costs.
    """
    documents: list[tuple[str, os.stat_result]] = []
    subdirectories: list[tuple[str, str]] = []
    info: os.stat_result | None = None
    try:
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        _debug(f"cannot list {directory}: {exc}")
        return documents, subdirectories, info
    try:
        # before the listing: any entry that comes or goes after it changes these facts
        info = os.fstat(descriptor)
        with os.scandir(descriptor) as entries:
            listed = list(entries)
        for entry in listed:
            name = entry.name
            try:
                kind = _entry_kind(entry, name)
                if kind == "directory":
                    subdirectories.append((os.path.join(directory, name), prefix + name + "/"))
                elif kind == "document":
                    documents.append((name, entry.stat(follow_symlinks=False)))
            except OSError as exc:  # gone since the listing: as if it had never been there
                _debug(f"cannot stat {os.path.join(directory, name)}: {exc}")
    except OSError as exc:
        _debug(f"cannot list {directory}: {exc}")
        info = None
    finally:
        os.close(descriptor)
    return documents, subdirectories, info


# A directory's (mtime_ns, ctime_ns, inode, device): a name that comes, goes or is renamed in
# it changes its mtime and ctime (POSIX), and it cannot change the facts of its documents.
DirectoryFacts = tuple[int, int, int, int]
_DIRECTORY_FIELDS = operator.attrgetter("st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")
# What the unchanged check trusts of a directory listed before: while its facts are these,
# its entries are those it had (its documents' names and these subdirectories).
DirectoryRecord = tuple[DirectoryFacts, tuple[str, ...]]
_NO_DIRECTORIES: dict[str, DirectoryRecord] = {}


# (directory, bank prefix, its documents, what the unchanged check may trust of it or None)
WalkedDirectory = tuple[str, str, list[tuple[str, os.stat_result]], DirectoryRecord | None]


def _walk_listings(root: str, read_from: int = 0) -> Iterator[WalkedDirectory]:
    """(directory, bank prefix, its documents, its record) of every directory under `root`;
    a record only for a directory not changed too close to `read_from` (`_directory_record`)."""
    stack: list[tuple[str, str]] = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        documents, subdirectories, info = _list_directory(directory, prefix)
        stack.extend(subdirectories)
        names = [sub_prefix[len(prefix) : -1] for _, sub_prefix in subdirectories]
        yield directory, prefix, documents, _directory_record(info, names, read_from)


def walk_documents(root: str) -> Iterator[tuple[str, str]]:
    """Yield (bank path, absolute path) of every document under `root` (spec 01 §1.2)."""
    for directory, prefix, documents, _ in _walk_listings(root):
        for name, _ in documents:
            yield prefix + name, os.path.join(directory, name)


def _directory_record(
    info: os.stat_result | None, subdirectories: Iterable[str], read_from: int
) -> DirectoryRecord | None:
    """What a later unchanged check may trust of a directory listed after `read_from` (its
    facts taken before the listing), or None when it changed too close to that moment for its
    facts to tell a later change apart (`is_racy`, as for a document)."""
    if info is None or is_racy(info.st_ctime_ns, read_from):
        return None
    facts: DirectoryFacts = _DIRECTORY_FIELDS(info)
    return facts, tuple(subdirectories)


# a file's five facts in one C call: the unchanged check reads them once per document on
# every read, so it calls this directly rather than through `_facts`
_FACT_FIELDS = operator.attrgetter("st_mtime_ns", "st_size", "st_ctime_ns", "st_ino", "st_dev")


def _facts(info: os.stat_result) -> Facts:
    facts: Facts = _FACT_FIELDS(info)
    return facts


def _facts_by_directory(records: Iterable[tuple[str, Facts]]) -> dict[str, dict[str, Facts]]:
    """The facts of each (path, facts), by directory prefix, then file name (what
    `_unchanged_against` checks)."""
    grouped: dict[str, dict[str, Facts]] = {}
    for path, facts in records:
        prefix, _, name = path.rpartition("/")
        grouped.setdefault(prefix + "/" if prefix else "", {})[name] = facts
    return grouped


_NO_FACTS: dict[str, Facts] = {}


def _joined(directory: str, name: str) -> str:
    """`os.path.join(directory, name)` for a normalised directory, without its Python cost."""
    return directory + name if directory.endswith("/") else f"{directory}/{name}"


def _read(absolute: str) -> tuple[Facts, bytes] | None:
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
        return _facts(info), b"".join(chunks)
    except OSError as exc:
        _debug(f"cannot read {absolute}: {exc}")
        return None
    finally:
        os.close(descriptor)


def _load(path: str, absolute: str, cached: _Cached | None, read_from: int) -> _Cached | None:
    """Read and parse one document; a racy one re-read with the same bytes keeps its record
    (the snapshot stays as it was). None when it cannot be read."""
    loaded = _read(absolute)
    if loaded is None:
        return None
    facts, raw = loaded
    racy = is_racy(facts[2], read_from)
    if cached is not None and cached.facts == facts and sha256_hex(raw) == cached.doc.sha256:
        return cached if racy else _Cached(facts, cached.doc, cached.text)
    result = parse_document(path, raw, facts[0], facts[1])
    return _Cached(facts, result.doc, result.text, racy)


def is_racy(ctime_ns: int, read_from_ns: int) -> bool:
    """Whether a file whose status changed at `ctime_ns`, read after `read_from_ns`, could be
    edited again without any stat fact changing: the edit's ctime could fall in the same clock
    tick. File times come from the kernel's coarse clock (a tick lags the wall clock by up to
    `RACY_NS`), and a file system may keep whole milliseconds or seconds (then the unit is
    read off the value's trailing zeros). Such a file is re-read, not trusted, next time."""
    unit = 1
    while unit < 1_000_000_000 and ctime_ns % (unit * 10) == 0:
        unit *= 10
    granularity = 2 * unit if unit > 1 else 0
    return ctime_ns + granularity >= read_from_ns - RACY_NS


def _unchanged_against(
    root: str,
    facts_by_directory: Mapping[str, Mapping[str, Facts]],
    count: int,
    directories: Mapping[str, DirectoryRecord] = _NO_DIRECTORIES,
    learned: dict[str, DirectoryRecord] | None = None,
) -> bool:
    """Whether the documents under `root` are exactly the `count` whose facts
    `facts_by_directory` holds (directory prefix → file name → facts), each with those facts:
    a stat per document and per directory, and a listing only where one is needed.

    A directory whose facts are still those of its record in `directories` has the entries
    it had when it was listed (no name came, went or was renamed there), so its documents
    are stat'ed by name and its recorded subdirectories visited, with no listing. Any other
    directory is listed: a name kept as a document (never hidden, never a surrogate, always
    `.md`) is still one exactly when it is still a regular file (`is_file` without following
    symlinks), only other names are classified in full (`_entry_kind`), and its record goes
    into `learned` for the next check. The five facts are read with one C-level
    `attrgetter` call; any difference answers no.
    """
    stack: list[tuple[str, str]] = [(root, "")]
    checked = 0
    read_from = time.time_ns()
    stat = os.stat
    while stack:
        directory, prefix = stack.pop()
        known = facts_by_directory.get(prefix, _NO_FACTS)
        try:
            descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return False
        try:
            info = os.fstat(descriptor)
            record = directories.get(prefix)
            if record is not None and _DIRECTORY_FIELDS(info) == record[0]:
                for name, expected in known.items():
                    found_facts = _FACT_FIELDS(stat(name, dir_fd=descriptor, follow_symlinks=False))
                    if found_facts != expected:
                        return False
                checked += len(known)
                stack.extend((_joined(directory, name), f"{prefix}{name}/") for name in record[1])
                continue
            subdirectories: list[str] = []
            with os.scandir(descriptor) as entries:
                for entry in entries:
                    name = entry.name
                    facts = known.get(name)
                    if facts is not None and entry.is_file(follow_symlinks=False):
                        if _FACT_FIELDS(entry.stat(follow_symlinks=False)) != facts:
                            return False
                        checked += 1
                    else:
                        kind = _entry_kind(entry, name)
                        if kind == "document":
                            return False  # a document that came, or one turned racy
                        if kind == "directory":
                            subdirectories.append(name)
                            stack.append((_joined(directory, name), prefix + name + "/"))
            found = _directory_record(info, subdirectories, read_from)
            if learned is not None and found is not None:
                learned[prefix] = found
        except OSError:
            return False
        finally:
            os.close(descriptor)
    return checked == count


class Bank:
    """One bank root and the cache that makes `refresh()` cheap when nothing moved.

    With a `ProjectionCache` (the server and the CLI's reads pass one unless it is switched
    off) the first refresh takes each document whose file facts are unchanged from the
    persisted projection instead of reading and parsing it.
    """

    def __init__(self, root: str | os.PathLike[str], cache: ProjectionCache | None = None) -> None:
        self.root = os.path.normpath(os.path.abspath(os.fspath(root)))
        self.real_root = os.path.realpath(self.root)
        self.cache = cache
        self._cache: dict[str, _Cached] = {}
        # the facts of the records not racy, by directory prefix, then file name (what
        # `_unchanged` checks)
        self._facts_by_directory: dict[str, dict[str, Facts]] = {}
        self._snapshot: Snapshot | None = None
        self._generation = 0
        self.last_refresh_parsed = 0
        # Documents parsed since the projection cache was loaded or last written.
        self.parsed_since_persisted = 0
        # whether the first refresh served the snapshot the cache finished, as it was
        self.finished_used = False
        # what the unchanged check may trust of each directory listed (`DirectoryRecord`)
        self._directories: dict[str, DirectoryRecord] = {}
        # `time.monotonic_ns()` when the walk that proved the snapshot current began (None
        # once this process may have written since): see `refresh(not_before=…)`
        self._walked_at: int | None = None
        self._walk_began = 0

    def _persisted(self) -> Mapping[str, PersistedFile]:
        if self._snapshot is not None or self.cache is None:
            return {}
        return self.cache.files()

    def refresh(self, not_before: int | None = None) -> Snapshot:
        """Bring the snapshot up to date with the files; parse only what moved.

        `not_before` is when the caller's request arrived (`time.monotonic_ns()`): a walk
        that began after that moment saw the files as they were while the request was being
        handled, so its snapshot answers it as a walk of its own would, and is returned as it
        is (a server's first call, waiting for the warm-up that walked meanwhile). A write by
        this process forgets the walk (`forget_walk`)."""
        walked_at = self._walked_at
        if (
            not_before is not None
            and walked_at is not None
            and walked_at >= not_before
            and self._snapshot is not None
        ):
            _debug("refresh: answered by a walk that began after the request arrived")
            self.last_refresh_parsed = 0
            return self._snapshot
        self._walk_began = time.monotonic_ns()
        snapshot = self._refresh()
        # only once the walk is done (one that failed proves nothing), and as of the moment
        # the walk that made the snapshot began (after any decoding of the cache before it)
        self._walked_at = self._walk_began
        return snapshot

    def _refresh(self) -> Snapshot:
        if self._snapshot is not None and self._unchanged():
            self.last_refresh_parsed = 0
            return self._snapshot
        if self._snapshot is None:
            finished = self._finished_from_cache()
            if finished is not None:
                return finished
        parsed = 0
        changed = self._snapshot is None
        persisted = self._persisted()
        self._walk_began = time.monotonic_ns()
        seen: dict[str, _Cached] = {}
        directories: dict[str, DirectoryRecord] = {}
        read_from = time.time_ns()
        if os.path.isdir(self.root):
            for directory, prefix, documents, record in _walk_listings(self.root, read_from):
                if record is not None:
                    directories[prefix] = record
                for name, info in documents:
                    path = prefix + name
                    cached = self._cache.get(path)
                    facts = _facts(info)
                    if cached is not None and facts == cached.facts and not cached.racy:
                        seen[path] = cached
                        continue
                    stored = persisted.get(path) if cached is None else None
                    if stored is not None and facts == stored.facts:
                        seen[path] = _Cached(facts, stored.doc, stored.text, False)
                        changed = True
                        continue
                    loaded = _load(path, os.path.join(directory, name), cached, read_from)
                    if loaded is not None:
                        seen[path] = loaded
                        if loaded.doc is not (cached.doc if cached is not None else None):
                            parsed += 1
                            changed = True
        if not changed and len(seen) != len(self._cache):
            changed = True  # a document vanished (every path seen was cached and unchanged)
        self._cache = seen
        self._directories = directories
        # a racy record is left out, so `_unchanged` sees it as a document that came and says no
        self._facts_by_directory = _facts_by_directory(
            (path, record.facts) for path, record in seen.items() if not record.racy
        )
        self.last_refresh_parsed = parsed
        self.parsed_since_persisted += parsed
        if self.cache is not None and persisted:
            self.cache.reused = len(seen) - parsed
        if not changed and self._snapshot is not None:
            return self._snapshot
        self._generation += 1
        self._snapshot = build_snapshot(
            self.root, self.real_root, dict(sorted(seen.items())), self._generation
        )
        return self._snapshot

    def forget_walk(self) -> None:
        """This process may have changed files since the last walk: the next refresh walks
        whenever its caller arrived (a write calls this once it is done)."""
        self._walked_at = None

    def _unchanged(self) -> bool:
        """Whether every document is as the last refresh left it and none came or went
        (`_unchanged_against` the facts it kept). Any difference, or a racy document, is left
        to the full refresh."""
        learned: dict[str, DirectoryRecord] = {}
        unchanged = _unchanged_against(
            self.root, self._facts_by_directory, len(self._cache), self._directories, learned
        )
        if unchanged and learned:
            self._directories = {**self._directories, **learned}
        return unchanged

    def _finished_from_cache(self) -> Snapshot | None:
        """The snapshot the projection cache finished, when it kept one (`FinishedSnapshot`)
        and every file under the root still has the facts it was persisted with, none come or
        gone: the check every read runs (`_unchanged_against`), against the persisted facts.
        Then nothing is walked twice and nothing derived again; else None (the full refresh
        takes what it can from the cache, document by document)."""
        if self.cache is None:
            return None
        files = self.cache.files()
        finished = self.cache.finished()
        if finished is None or not files:
            return None
        grouped = _facts_by_directory((path, entry.facts) for path, entry in files.items())
        learned: dict[str, DirectoryRecord] = {}
        trusted = finished.directories
        self._walk_began = time.monotonic_ns()
        if not _unchanged_against(self.root, grouped, len(files), trusted, learned):
            return None
        self._directories = {**trusted, **learned}
        ordered = sorted(files.items())
        self._cache = {path: _Cached(entry.facts, entry.doc, entry.text) for path, entry in ordered}
        self._facts_by_directory = grouped
        self.last_refresh_parsed = 0
        self.cache.reused = len(ordered)
        self.finished_used = True
        self._generation += 1
        self._snapshot = msgspec.structs.replace(
            finished.derived,
            root=self.root,
            real_root=self.real_root,
            docs={path: entry.doc for path, entry in ordered},
            raw={path: entry.text for path, entry in ordered},
            generation=self._generation,
        )
        return self._snapshot

    def cache_report(self) -> dict[str, object]:
        """What the projection cache did for this bank (`mbank stats`, `projectionCache`)."""
        if self.cache is None:
            return {"used": False, "status": "off", "reused": 0}
        used = self.cache.status == "used"
        return {"used": used, "status": self.cache.status, "reused": self.cache.reused}

    def persisted_files(self) -> dict[str, PersistedFile]:
        """What the projection cache may keep: every document read long enough after its
        last change (`is_racy`) whose frontmatter travels (`portable_doc`), as parsed."""
        kept: dict[str, PersistedFile] = {}
        # each as the snapshot holds it (its layer and registrations derived): `build_snapshot`
        # derives those again from the rest, so a later build from it is the same, and a
        # finished snapshot (`finished`) is these documents as they are
        docs: Mapping[str, Doc] = self._snapshot.docs if self._snapshot is not None else {}
        for path, cached in self._cache.items():
            doc = None if cached.racy else portable_doc(docs.get(path, cached.doc))
            if doc is not None:
                kept[path] = PersistedFile(path, cached.facts, doc, cached.text)
        return kept

    def finished(self, files: Mapping[str, PersistedFile]) -> FinishedSnapshot | None:
        """The last snapshot's derived maps, when `files` (`persisted_files`) are every
        document of it: a process finding each of them unchanged serves that snapshot as it
        is (`_finished_from_cache`). None when one could not be persisted (racy, or its
        frontmatter does not travel): that process parses it and derives the maps again."""
        snapshot = self._snapshot
        if snapshot is None or len(files) != len(snapshot.docs):
            return None
        return FinishedSnapshot(
            msgspec.structs.replace(snapshot, docs={}, raw={}), self._directories
        )

    @property
    def parsed(self) -> Mapping[str, _Cached]:
        """Each document of the last refresh as parsed, with its text (read-only)."""
        return self._cache

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
