"""The search index as the projection cache keeps it between processes (issue 17).

`export_state` encodes what `SearchIndex.sync` built; `index_from_state` gives it back as an
index to sync against the current snapshot. Paths are written once and referred to by
position. The body postings — millions of (path, count) pairs at 10,000 documents, most of the
index's memory and of its decoding time — are kept as three packed arrays (`PackedPostings`):
a token's postings become a dict only when something asks for that token.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Union, overload

import msgspec

from mbank.model import Doc
from mbank.parse import split_frontmatter
from mbank.search import (
    DocInfo,
    RouteStats,
    SearchIndex,
    body_counts,
    header_of,
    route_length,
)
from mbank.search import _header_raw_words as header_raw_words

if TYPE_CHECKING:
    from mbank.projection import ParsedDocument, Snapshot

Value = TypeVar("Value")
Default = TypeVar("Default")

# (path ids, one value each): a postings map with its paths as positions in `IndexState.paths`
Ids = list[int]
Postings = dict[str, int]
# Packed unsigned 32-bit integers: an array a build filled, or a file's part read in place
Packed = Union["array[int]", memoryview]
# A part of the cache file as read (bytes) or as written (a view of what is in memory)
Buffer = bytes | memoryview


class Later:
    """A value of a `LazyValues` map that is not made yet: what making it needs."""

    __slots__ = ("what",)

    def __init__(self, what: Any) -> None:
        self.what = what


class LazyValues(dict[str, Value]):
    """A dict whose values are made on first use from a pending value (`make`).

    Every key is present from the start, in its order; a value is made when first looked up
    and then kept, so later edits of it stick. A value is pending while its type is the map's
    `PENDING` (a `Later` unless the map says otherwise; no made value is ever of that type).
    Every dict method the index, route and search use is overridden to make the value first,
    so no caller can see a pending one.
    """

    PENDING: type = Later

    def make(self, key: str, what: Any) -> Value:
        """The value of `key` from its pending value `what`: each kind of map says how
        (`PackedPostings`, `DerivedBodies`; both override this). The base is not an ABC
        because mypy refuses its `__hash__ = None` under `abc.ABC`."""
        raise NotImplementedError(f"{type(self).__name__} does not say how its values are made")

    def later(self, key: str, what: Any) -> None:
        """File `key` with its value made from `what` on first use."""
        later: Any = Later(what)
        dict.__setitem__(self, key, later)

    def _made(self, key: str, value: Any) -> Value:
        if type(value) is self.PENDING:
            value = self.make(key, value)
            dict.__setitem__(self, key, value)
        made: Value = value
        return made

    def pending(self, key: str) -> Any:
        """What `key`'s value will be made from when it was never made, else None."""
        value: Any = dict.__getitem__(self, key)
        return value if type(value) is self.PENDING else None

    def __getitem__(self, key: str) -> Value:
        return self._made(key, dict.__getitem__(self, key))

    @overload
    def get(self, key: str, default: None = None, /) -> Value | None: ...
    @overload
    def get(self, key: str, default: Value | Default, /) -> Value | Default: ...
    def get(self, key: str, default: Any = None, /) -> Any:
        value = dict.get(self, key, _ABSENT)
        return default if value is _ABSENT else self._made(key, value)

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            return dict.pop(self, key, *default)
        value: Any = dict.pop(self, key)
        return self.make(key, value) if type(value) is self.PENDING else value

    def setdefault(self, key: str, default: Any = None, /) -> Value:
        if key in self:
            return self[key]
        dict.__setitem__(self, key, default)
        found: Value = default
        return found

    def made(self) -> dict[str, Value]:
        """A plain dict of every value, each made."""
        return {key: self._made(key, value) for key, value in list(dict.items(self))}

    def items(self) -> Any:
        return self.made().items()

    def values(self) -> Any:
        return self.made().values()

    def copy(self) -> dict[str, Value]:
        return self.made()

    def __eq__(self, other: object) -> bool:
        return self.made() == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} keys)"


_ABSENT: Any = object()
# what a packed-away token's dict is left as while `compact` replaces the whole map
_PACKED_AWAY: dict[str, int] = {}


class PackedPostings(LazyValues[Postings]):
    """`SearchIndex.postings` (token → {path: count}) held as packed arrays: a token's dict
    is made, as a build would have made it, when something first asks for that token. A
    token not made yet holds its position in `ends` (an int: filing 75,000 of them costs a
    tenth of filing as many `Later`s)."""

    PENDING = int

    def __init__(self, paths: list[str], ends: Packed, ids: Packed, counts: Packed) -> None:
        super().__init__()
        self.paths = paths
        self.ends = ends
        self._path_of = paths.__getitem__
        self.ids = ids
        self.counts = counts

    def span(self, token: str) -> tuple[int, int] | None:
        """Where `token`'s postings are in `ids` and `counts`, when its dict was never made."""
        position = self.pending(token)
        if position is None:
            return None
        return (self.ends[position - 1] if position else 0), self.ends[position]

    def untouched(self) -> bool:
        """Whether every token is as packed: none unpacked, added or removed."""
        values: list[Any] = list(dict.values(self))
        return len(values) == len(self.ends) and all(type(value) is int for value in values)

    def items(self) -> Any:
        """(token, postings) of every token; a token never unpacked comes as a read-only
        view of its packed span, so reading them all (`SearchIndex.cyrillic_share`) makes
        no dict and keeps nothing."""
        found: list[tuple[str, Any]] = list(dict.items(self))
        ends = self.ends
        return [
            (token, PostingsView(self, (ends[value - 1] if value else 0, ends[value])))
            if type(value) is int
            else (token, value)
            for token, value in found
        ]

    def values(self) -> Any:
        return [value for _, value in self.items()]

    def make(self, key: str, what: Any) -> Postings:
        start, end = (self.ends[what - 1] if what else 0), self.ends[what]
        return dict(
            zip(map(self._path_of, self.ids[start:end]), self.counts[start:end], strict=True)
        )


class PostingsView(Mapping[str, int]):
    """One packed token's postings read in place (path → count), made into nothing."""

    def __init__(self, postings: PackedPostings, span: tuple[int, int]) -> None:
        self._postings = postings
        self._start, self._end = span

    def __iter__(self) -> Iterator[str]:
        return map(self._postings.paths.__getitem__, self._postings.ids[self._start : self._end])

    def __len__(self) -> int:
        return self._end - self._start

    def __getitem__(self, path: str) -> int:
        postings = self._postings
        for position in range(self._start, self._end):
            if postings.paths[postings.ids[position]] == path:
                return postings.counts[position]
        raise KeyError(path)


class DerivedBodies(LazyValues[str]):
    """`SearchIndex.bodies` (path → the lower-cased body search scans) made from the
    document's text when first asked for: the text is in the snapshot already, so holding
    every body besides it would double the memory of the bank's text."""

    def make(self, key: str, what: Any) -> str:
        return body_of(what.what)


class LazyDocInfos(LazyValues[DocInfo]):
    """`SearchIndex.docs` as the projection cache gives it back: each document's `DocInfo`
    (its header's fields, words and stems) decoded when first asked for. At 10,000 documents
    decoding them all is 90 ms of a second session, and its first route reads a few: the
    length norms come from `SearchIndex.route_lengths`, kept with the state. The bytes are a
    part of the cache file whose digest was checked before any of it was used."""

    PENDING = msgspec.Raw

    def make(self, key: str, what: Any) -> DocInfo:
        return _DOC_INFO.decode(what)


_DOC_INFO = msgspec.msgpack.Decoder(DocInfo)


class LazyHolders(LazyValues[set[str]]):
    """A header postings map (word → the paths holding it) as the projection cache gives it
    back: a word's set is made from its path ids (a list, as decoded) when first asked for."""

    PENDING = list

    def __init__(self, paths: list[str], held: dict[str, Ids]) -> None:
        pending: Any = held
        super().__init__(pending)
        self._path_of = paths.__getitem__

    def make(self, key: str, what: Any) -> set[str]:
        return set(map(self._path_of, what))


class LazyPositions(LazyValues[dict[str, tuple[int, ...]]]):
    """A header postings map with positions (word → path → field positions) as the cache
    gives it back: a word's dict is made from its (path ids, positions) when first asked for."""

    PENDING = tuple

    def __init__(self, paths: list[str], held: dict[str, tuple[Ids, list[tuple[int, ...]]]]):
        pending: Any = held
        super().__init__(pending)
        self._path_of = paths.__getitem__

    def make(self, key: str, what: Any) -> dict[str, tuple[int, ...]]:
        ids, where = what
        return dict(zip(map(self._path_of, ids), where, strict=True))


def body_of(text: str) -> str:
    """The body `SearchIndex` indexes of a text document (`SearchIndex._add`)."""
    return split_frontmatter(text).body.lower()


class IndexState(msgspec.Struct, array_like=True):
    """Everything `SearchIndex.sync` builds, as the projection cache keeps it between
    processes. Each document is keyed by (mtime_ns, size, sha256) in `docs`, so `sync` against
    a snapshot re-indexes exactly what differs: the state can be old, never wrong.

    Paths are written once (`paths`) and referred to by position, so a posting costs a few
    bytes and loading shares one string per path, as a build does.
    """

    paths: list[str]
    # Each document's `DocInfo`, left encoded when read back (`LazyDocInfos` decodes one when
    # it is first asked for); written as a `DocInfo`, or as the bytes it came in if never
    # decoded. Its key is in `indexed`, so `sync` decodes none of them.
    docs: list[msgspec.Raw]
    indexed: list[tuple[int, int, str]]
    routable: Ids
    # The body postings' tokens, in the order a build made them. Their postings are struct-
    # of-arrays, three more parts of the cache file (unsigned 32-bit integers, read in place):
    # token i holds ids/counts [ends[i-1]:ends[i]].
    tokens: list[str]
    purpose_postings: dict[str, Ids]
    title_postings: dict[str, Ids]
    key_postings: dict[str, tuple[Ids, list[tuple[int, ...]]]]
    section_postings: dict[str, tuple[Ids, list[tuple[int, ...]]]]
    header_stems: dict[str, int]
    header_words: dict[str, Ids]
    # Derived, kept because a first route call would spend most of its time rebuilding them:
    # every token's §3.9 form (a pure function of the token), the tokens in order, the form
    # table, the corpus figures and the Cyrillic share (pure functions of the index).
    form_of: dict[str, str]
    sorted_tokens: list[str] | None
    route_forms: dict[str, tuple[str, ...]] | None
    route_stats: RouteStats | None
    cyrillic_share: float | None
    # (body length, purpose words, title words) of the routable documents: route's norms
    route_lengths: tuple[Ids, list[tuple[int, int, int]]] | None
    # the bank's mined Russian → English pairs (`mbank.pairs`): mining reads every header, a
    # third of a second at 10,000 documents, which a session's first Russian question paid
    bilingual_pairs: dict[str, tuple[str, ...]] | None = None


def _packed_postings(
    postings: dict[str, Postings], paths: list[str], consume: bool = False
) -> tuple[list[str], Packed, Packed, Packed]:
    """The postings as (tokens, ends, ids, counts) over `paths`; a token never unpacked is
    copied as it is, without making its dict. `consume` lets each token's dict go as soon as
    it is packed, so packing a build's postings never holds both forms whole."""
    number = {path: position for position, path in enumerate(paths)}.__getitem__
    tokens = list(postings)
    packed = postings if isinstance(postings, PackedPostings) else None
    same_paths = packed is not None and packed.paths == paths
    if packed is not None and same_paths and packed.untouched():
        return tokens, packed.ends, packed.ids, packed.counts  # immutable: shared, not copied
    ends, ids, counts = array("I"), array("I"), array("I")
    for token in tokens:
        span = packed.span(token) if packed is not None else None
        if span is not None and packed is not None:
            held = packed.ids[span[0] : span[1]]
            ids.extend(held if same_paths else map(number, map(packed.paths.__getitem__, held)))
            counts.extend(packed.counts[span[0] : span[1]])
        else:
            holders = postings[token]
            ids.extend(map(number, holders))
            counts.extend(holders.values())
            if consume:
                dict.__setitem__(postings, token, _PACKED_AWAY)
        ends.append(len(ids))
    return tokens, ends, ids, counts


def _postings_from(
    paths: list[str],
    tokens: list[str],
    ends: Packed,
    ids: Packed,
    counts: Packed,
) -> PackedPostings:
    # the arrays come from a file whose digest proved it is what `export_state` wrote
    if len(ends) != len(tokens) or len(ids) != len(counts) or (ends and ends[-1] != len(ids)):
        raise ValueError("postings arrays of different lengths")
    postings = PackedPostings(paths, ends, ids, counts)
    dict.update(postings, zip(tokens, range(len(tokens)), strict=True))
    return postings


def compact(index: SearchIndex, snapshot: Snapshot) -> None:
    """Hold `index`'s postings packed and its bodies as the snapshot's texts (made again on
    first use): at 10,000 documents the dicts and copies a build makes are most of the
    process's memory. `index` must be synced with `snapshot`."""
    paths = list(index.docs)
    if not isinstance(index.bodies, DerivedBodies):  # first: packing grows into its memory
        index.bodies = _derived_bodies(paths, snapshot.docs, snapshot.raw)
    if not isinstance(index.postings, PackedPostings):
        tokens, ends, ids, counts = _packed_postings(index.postings, paths, consume=True)
        index.postings = _postings_from(paths, tokens, ends, ids, counts)


def build_packed(index: SearchIndex, snapshot: Snapshot) -> None:
    """Index every document of `snapshot` into the empty `index` as `SearchIndex.sync` would,
    with the postings packed as they are made and the bodies left to `DerivedBodies`: at
    10,000 documents a build that made the postings' dicts first would hold the dicts, the
    bodies and the packed copy at once (above 0.1.0's peak memory; issue 17)."""
    if index.docs:
        raise ValueError("build_packed fills an empty index")
    paths = list(snapshot.docs)
    held: dict[str, tuple[array[int], array[int]]] = {}
    header_words = index.header_words
    for number, (path, doc) in enumerate(snapshot.docs.items()):
        text = snapshot.raw.get(path, "") if doc.text_ok else ""
        counts = body_counts(body_of(text)) if doc.text_ok else Counter[str]()
        for token, count in counts.items():
            found = held.get(token)
            if found is None:
                found = held[token] = (array("I"), array("I"))
            found[0].append(number)
            found[1].append(count)
        header = header_of(doc)
        for word in header_raw_words(header):
            header_words.setdefault(word, set()).add(path)
        index.docs[path] = DocInfo(
            (doc.mtime_ns, doc.size, doc.sha256), header, route_length(counts)
        )
        index.indexed[path] = (doc.mtime_ns, doc.size, doc.sha256)
    index.bodies = _derived_bodies(paths, snapshot.docs, snapshot.raw)
    tokens = list(held)
    ends, ids, posting_counts = array("I"), array("I"), array("I")
    for token in tokens:
        token_ids, token_counts = held.pop(token)
        ids.extend(token_ids)
        posting_counts.extend(token_counts)
        ends.append(len(ids))
    index.postings = _postings_from(paths, tokens, ends, ids, posting_counts)
    index._sorted_tokens = None
    index.version += 1
    index.sync(snapshot)  # the routable documents' header postings, as a build adds them


def _derived_bodies(
    paths: list[str], docs: Mapping[str, Doc], texts: Mapping[str, str]
) -> DerivedBodies:
    bodies = DerivedBodies()
    for path in paths:
        doc = docs[path]
        if doc.text_ok:
            bodies.later(path, texts[path])
        else:
            dict.__setitem__(bodies, path, "")
    return bodies


def _unsigned(data: Buffer) -> Packed:
    """The native unsigned 32-bit integers of `data`, read in place (no copy)."""
    return memoryview(data).cast("B").cast("I")


def export_state(index: SearchIndex) -> list[Buffer]:
    """The index's state as the projection cache keeps it: the encoded `IndexState`, then
    the postings' ends, ids and counts as they are in memory."""
    paths = list(index.docs)  # docs, indexed and bodies share their keys and order
    number = {path: position for position, path in enumerate(paths)}.__getitem__

    def ids(holders: Iterable[str]) -> Ids:
        return list(map(number, holders))

    def with_values(by_path: dict[str, Value]) -> tuple[Ids, list[Value]]:
        return ids(by_path), list(by_path.values())

    tokens, ends, posting_ids, counts = _packed_postings(index.postings, paths)
    derived = index._derived_version == index.version
    lengths = index._lengths if derived else None
    # a `DocInfo` never decoded is written as the bytes it was read as (the same encoding)
    docs: list[Any] = list(dict.values(index.docs))
    state = IndexState(
        paths,
        docs,
        [index.indexed[path] for path in paths],
        ids(index.routable),
        tokens,
        {word: ids(holders) for word, holders in index.purpose_postings.items()},
        {word: ids(holders) for word, holders in index.title_postings.items()},
        {word: with_values(where) for word, where in index.key_postings.items()},
        {word: with_values(where) for word, where in index.section_postings.items()},
        index.header_stems,
        {word: ids(holders) for word, holders in index.header_words.items()},
        index.form_of,
        index._sorted_tokens,
        index._route_forms if derived else None,
        index._stats if derived else None,
        index._cyrillic_share if derived else None,
        None if lengths is None else with_values(lengths),
        index._pairs if derived else None,
    )
    return [
        msgspec.msgpack.encode(state),
        memoryview(ends),
        memoryview(posting_ids),
        memoryview(counts),
    ]


def index_from_state(
    parts: Sequence[Buffer], *sources: Mapping[str, ParsedDocument]
) -> SearchIndex | None:
    """An index holding a persisted state (sync it before use), or None if undecodable or if
    some indexed version's text is in none of `sources` (its body could not be made again).

    Bodies are not kept in the state: each is made from the text of the version the index
    holds (the sha256 of its key in `indexed`), found in the first of `sources` that has it.
    """
    if len(parts) != 4:
        return None
    try:
        state = msgspec.msgpack.decode(parts[0], type=IndexState)
        paths = state.paths
        path_of = paths.__getitem__
        if len(state.docs) != len(paths) or len(state.indexed) != len(paths):
            return None
        bodies = _bodies_of(paths, state.indexed, sources)
        if bodies is None:
            return None
        index = SearchIndex()
        encoded: Any = zip(paths, state.docs, strict=True)  # each pending: its `Raw` bytes
        index.docs = LazyDocInfos(encoded)
        index.indexed = dict(zip(paths, state.indexed, strict=True))
        index.bodies = bodies
        index.routable = set(map(path_of, state.routable))
        index.postings = _postings_from(
            paths,
            state.tokens,
            _unsigned(parts[1]),
            _unsigned(parts[2]),
            _unsigned(parts[3]),
        )
        # each word's holders made when first asked for (`LazyHolders`, `LazyPositions`)
        index.purpose_postings = LazyHolders(paths, state.purpose_postings)
        index.title_postings = LazyHolders(paths, state.title_postings)
        index.key_postings = LazyPositions(paths, state.key_postings)
        index.section_postings = LazyPositions(paths, state.section_postings)
        index.header_stems = state.header_stems
        index.header_words = LazyHolders(paths, state.header_words)
    except (msgspec.DecodeError, ValueError, TypeError, IndexError, RecursionError, OverflowError):
        return None
    index.form_of = state.form_of
    index._sorted_tokens = state.sorted_tokens
    index.version = 1
    if state.route_forms is not None and state.route_stats is not None:
        # the derived figures of exactly this state: valid until the index changes
        index._derived_version = index.version
        index._route_forms = state.route_forms
        index._stats = state.route_stats
        index._cyrillic_share = state.cyrillic_share
        index._pairs = state.bilingual_pairs
        if state.route_lengths is not None:
            held, lengths = state.route_lengths
            index._lengths = dict(zip(map(paths.__getitem__, held), lengths, strict=True))
    return index


def _bodies_of(
    paths: list[str],
    keys: list[tuple[int, int, str]],
    sources: tuple[Mapping[str, ParsedDocument], ...],
) -> DerivedBodies | None:
    bodies = DerivedBodies()
    for path, key in zip(paths, keys, strict=True):
        sha256 = key[2]
        for source in sources:
            found = source.get(path)
            if found is not None and found.doc.sha256 == sha256:
                if found.doc.text_ok:
                    bodies.later(path, found.text)
                else:
                    dict.__setitem__(bodies, path, "")
                break
        else:
            return None
    return bodies
