"""The projection: walk the bank, re-parse only what moved, derive the maps every read uses.

`Bank.refresh()` is the only code that reads documents from disk. An unchanged bank costs one
sorted scandir walk with a stat per document and no parse; there is no watcher, so a stale
index cannot happen (ARCHITECTURE.md, "The snapshot").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import msgspec

from mbank.contract import (
    EMPTY_CONTRACT,
    EMPTY_LAYERS,
    layer_of,
    parse_contract,
    parse_layers,
    parse_vocabulary,
)
from mbank.model import Contract, Doc, LayerMap, Link, VocabularyRow
from mbank.parse import parse_document
from mbank.paths import SKIPPED_DIRECTORIES, normalise_caller_path

VOCABULARY_PATH = "dna/vocabulary.md"
INDEX_FUNCTION = "index"


class Snapshot(msgspec.Struct, frozen=True):
    """An immutable projection of one bank at one moment (ARCHITECTURE.md)."""

    root: str
    real_root: str
    docs: dict[str, Doc]
    raw: dict[str, str]
    contract: Contract
    layers: LayerMap
    incoming: dict[str, tuple[str, ...]]
    owners: dict[str, tuple[str, ...]]
    index_links: tuple[Link, ...]
    vocabulary: tuple[VocabularyRow, ...]
    generation: int

    @property
    def paths(self) -> list[str]:
        """Document paths in code-point order (the walk's order)."""
        return list(self.docs)


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


def build_snapshot(root: str, real_root: str, cached: dict[str, Any], generation: int) -> Snapshot:
    """Derive every map of spec 01 §7 from the parsed documents (sorted by path)."""
    base: dict[str, Doc] = {path: entry.doc for path, entry in cached.items()}
    raw: dict[str, str] = {path: entry.text for path, entry in cached.items()}

    incoming_sets: dict[str, set[str]] = {}
    owners_lists: dict[str, list[str]] = {}
    for path, doc in base.items():
        for edge in doc.derived_from:
            if edge.resolved is not None and edge.resolved in base:
                incoming_sets.setdefault(edge.resolved, set()).add(path)
        for key in doc.canonical_for:
            holders = owners_lists.setdefault(key, [])
            if path not in holders:
                holders.append(path)
    incoming = {target: tuple(sorted(paths)) for target, paths in sorted(incoming_sets.items())}
    owners = {key: tuple(paths) for key, paths in owners_lists.items()}

    registered: dict[str, set[str]] = {}
    index_links: list[Link] = []
    for path, doc in base.items():
        if doc.doc_function != INDEX_FUNCTION and path.rsplit("/", 1)[-1] != "README.md":
            continue
        for link in doc.links:
            index_links.append(link)
            if link.to is not None and link.to in base and link.to != path:
                registered.setdefault(link.to, set()).add(path)

    dna_texts = [(path, raw[path]) for path, doc in base.items() if path.startswith("dna/")]
    dna_texts = [(path, text) for path, text in dna_texts if base[path].text_ok]
    if dna_texts:
        contract = parse_contract(dna_texts, "dna/principles.md" in base)
        layers = parse_layers(dna_texts)
    else:
        contract, layers = EMPTY_CONTRACT, EMPTY_LAYERS
    vocabulary_doc = base.get(VOCABULARY_PATH)
    vocabulary = (
        parse_vocabulary(raw[VOCABULARY_PATH])
        if vocabulary_doc is not None and vocabulary_doc.text_ok
        else ()
    )

    docs: dict[str, Doc] = {}
    for path, doc in base.items():
        layer = layer_of(path, layers)
        registered_in = tuple(sorted(registered.get(path, ())))
        if layer != doc.layer or registered_in != doc.registered_in:
            doc = msgspec.structs.replace(doc, layer=layer, registered_in=registered_in)
        docs[path] = doc
    return Snapshot(
        root=root,
        real_root=real_root,
        docs=docs,
        raw=raw,
        contract=contract,
        layers=layers,
        incoming=incoming,
        owners=owners,
        index_links=tuple(index_links),
        vocabulary=vocabulary,
        generation=generation,
    )
