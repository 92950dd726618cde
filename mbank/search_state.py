"""The search index as the projection cache keeps it between processes (issue 17).

`export_state` encodes what `SearchIndex.sync` built; `index_from_state` gives it back as an
index to sync against the current snapshot. Paths are written once and postings as packed
arrays of path ids, so 10,000 documents' millions of postings decode as one bytes object per
token and share one string per path, as a build does.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import TypeVar

import msgspec

from mbank.search import DocInfo, SearchIndex

Value = TypeVar("Value")

# (path ids, one value each): a postings map with its paths as positions in `IndexState.paths`
Ids = list[int]


class IndexState(msgspec.Struct, array_like=True):
    """Everything `SearchIndex.sync` builds, as the projection cache keeps it between
    processes. Each document is keyed by (mtime_ns, size, sha256) in `docs`, so `sync` against
    a snapshot re-indexes exactly what differs: the state can be old, never wrong.

    Paths are written once (`paths`) and referred to by position, so a posting costs a few
    bytes and loading shares one string per path, as a build does.
    """

    paths: list[str]
    docs: list[DocInfo]
    indexed: list[tuple[int, int]]
    bodies: list[str]
    routable: Ids
    # token -> (path ids, counts), each packed as unsigned 32-bit integers (`array("I")`):
    # millions of postings decode as one bytes object per token
    postings: dict[str, tuple[bytes, bytes]]
    purpose_postings: dict[str, Ids]
    title_postings: dict[str, Ids]
    key_postings: dict[str, tuple[Ids, list[tuple[int, ...]]]]
    section_postings: dict[str, tuple[Ids, list[tuple[int, ...]]]]
    header_stems: dict[str, int]
    header_words: dict[str, Ids]
    # Derived, kept because a first route call would spend most of its time rebuilding them:
    # every token's §3.9 form (a pure function of the token) and the tokens in order.
    form_of: dict[str, str]
    sorted_tokens: list[str] | None


def export_state(index: SearchIndex) -> msgspec.Raw:
    """The index's state, encoded for the projection cache (`IndexState`)."""
    paths = list(index.docs)  # docs, indexed and bodies share their keys and order
    number = {path: position for position, path in enumerate(paths)}.__getitem__

    def ids(holders: Iterable[str]) -> Ids:
        return list(map(number, holders))

    def with_values(by_path: dict[str, Value]) -> tuple[Ids, list[Value]]:
        return ids(by_path), list(by_path.values())

    def packed(by_path: dict[str, int]) -> tuple[bytes, bytes]:
        return array("I", map(number, by_path)).tobytes(), array("I", by_path.values()).tobytes()

    state = IndexState(
        paths,
        list(index.docs.values()),
        [index.indexed[path] for path in paths],
        [index.bodies[path] for path in paths],
        ids(index.routable),
        {token: packed(holders) for token, holders in index.postings.items()},
        {word: ids(holders) for word, holders in index.purpose_postings.items()},
        {word: ids(holders) for word, holders in index.title_postings.items()},
        {word: with_values(where) for word, where in index.key_postings.items()},
        {word: with_values(where) for word, where in index.section_postings.items()},
        index.header_stems,
        {word: ids(holders) for word, holders in index.header_words.items()},
        index.form_of,
        index._sorted_tokens,
    )
    return msgspec.Raw(msgspec.msgpack.encode(state))


def index_from_state(raw: msgspec.Raw) -> SearchIndex | None:
    """An index holding a persisted state (sync it before use), or None if undecodable."""
    try:
        state = msgspec.msgpack.decode(raw, type=IndexState)
        paths = state.paths
        path_of = paths.__getitem__
        if len(state.docs) != len(paths) or len(state.bodies) != len(paths):
            return None
        index = SearchIndex()
        index.docs = dict(zip(paths, state.docs, strict=True))
        index.indexed = dict(zip(paths, state.indexed, strict=True))
        index.bodies = dict(zip(paths, state.bodies, strict=True))
        index.routable = set(map(path_of, state.routable))
        index.postings = {
            token: dict(zip(map(path_of, array("I", held)), array("I", counts), strict=True))
            for token, (held, counts) in state.postings.items()
        }
        index.purpose_postings = {
            word: set(map(path_of, held)) for word, held in state.purpose_postings.items()
        }
        index.title_postings = {
            word: set(map(path_of, held)) for word, held in state.title_postings.items()
        }
        index.key_postings = {
            word: dict(zip(map(path_of, held), where, strict=True))
            for word, (held, where) in state.key_postings.items()
        }
        index.section_postings = {
            word: dict(zip(map(path_of, held), where, strict=True))
            for word, (held, where) in state.section_postings.items()
        }
        index.header_stems = state.header_stems
        index.header_words = {
            word: set(map(path_of, held)) for word, held in state.header_words.items()
        }
    except (msgspec.DecodeError, ValueError, IndexError, RecursionError, OverflowError):
        return None
    index.form_of = state.form_of
    index._sorted_tokens = state.sorted_tokens
    index.version = 1
    return index
