"""`bank_search`: full-text search of document bodies, and the index route shares (spec 02 §4).

`SearchIndex` is a cache the caller keeps across calls (one per `Bank`): body postings for
search and, computed in the same pass, each document's header words for route (§3.9: "rebuilt
incrementally with the search index"). `sync(snapshot)` brings it up to date on the same
per-document check the snapshot uses — only documents whose `(mtime_ns, size)` moved are
re-tokenised, vanished ones are dropped — and costs nothing when handed the snapshot it saw
last. Everything else here is a pure function of the snapshot and the index.
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

import msgspec

from mbank.lang import (
    ROUTE_STOP,
    RU_STOP,
    body_form,
    expand_terms,
    has_cyrillic,
    hstem,
    tables_for,
    tokenize,
    translit_key,
    words_of,
)
from mbank.literal import (
    definition_score,
    is_exact,
    is_literal,
    literal_excerpt,
    occurrences,
)
from mbank.model import INBOX_LAYER, TEMPLATE_FUNCTION, Doc
from mbank.pairs import mine_pairs
from mbank.parse import split_frontmatter
from mbank.projection import Snapshot
from mbank.search_meta import SearchMeta

# What a reader derives once per snapshot and index state (`SearchIndex.memoised`).
Memo = TypeVar("Memo")

SEARCH_HINT = "No document body contains these terms. Try bank_route for a topic."

SEARCH_STOP: frozenset[str] = (
    frozenset(
        words_of(
            """the and for that this with from are was were not but its has have had can may
            must when which what where how why"""
        )
    )
    | RU_STOP
)

WHOLE_WEIGHT = 10
TRANSLATION_WEIGHT = 6
PART_WEIGHT = 1
CROSS_LANGUAGE_DISCOUNT = 0.6
# a translation found as a whole word in the literal tier (issue 16): below the typed word
TRANSLATION_DISCOUNT_EXACT = 0.9
EXCERPT_MAX = 240


def round_half_up(value: float, digits: int) -> float:
    """Round half away from zero to `digits` decimals (spec 02 §1); never Python's `round()`.

    For the non-negative scores here this is §1's `floor(x·10ⁿ + 0.5) / 10ⁿ`. The float
    formula is used except within a hair of a tie (or for huge values), where the float
    product or sum can land on the wrong side; there the exact value of `value` decides, so
    the result always equals `decimal.ROUND_HALF_UP` applied to the float (07 §4.4).
    """
    if not math.isfinite(value):
        return float(value)
    scale = 10**digits
    magnitude = abs(value) * scale
    rounded: int
    if magnitude < 1e9 and abs(magnitude - math.floor(magnitude) - 0.5) > 1e-6:
        rounded = math.floor(magnitude + 0.5)
    else:
        rounded = math.floor(abs(Fraction(value)) * scale + Fraction(1, 2))
    result: float = rounded / scale
    return -result if value < 0 else result


# --------------------------------------------------------------------------------------------
# Tokens (spec 02 §4.2)
# --------------------------------------------------------------------------------------------

# A maximal run of word characters trimmed of leading and trailing `-`/`_`, at least two
# characters long: exactly the tokens §4.2's split-strip-filter keeps, found in one pass.
_SEARCH_TOKEN = re.compile(r"[a-z0-9\u0400-\u04ff][a-z0-9_\u0400-\u04ff-]*[a-z0-9\u0400-\u04ff]")
_PARTS_SPLIT = re.compile(r"[-_]+")


def search_tokens(text: str) -> list[str]:
    """Lower-case, split keeping `_`, `-` and Cyrillic, trim `-`/`_`, keep length ≥ 2."""
    return _SEARCH_TOKEN.findall(text.lower())


def token_parts(token: str) -> list[str]:
    """The parts of a token holding `-` or `_`, each of length ≥ 2 (`ft-smd-843` → ft, smd, 843)."""
    if "-" not in token and "_" not in token:
        return []
    return [part for part in _PARTS_SPLIT.split(token) if len(part) >= 2]


def body_counts(body: str) -> Counter[str]:
    """Every token of a body and its parts, each occurrence counted (§4.2)."""
    counts = Counter(search_tokens(body))
    for token, count in [(t, c) for t, c in counts.items() if "-" in t or "_" in t]:
        for part in token_parts(token):
            counts[part] += count
    return counts


# a paragraph ends at a blank line: a list or a table without blank lines inside is one paragraph
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def paragraph_tokens(body: str) -> tuple[frozenset[str], ...]:
    """The indexed tokens (`body_counts`) of each paragraph of a body, in order (issue 16)."""
    return tuple(
        frozenset(body_counts(paragraph))
        for paragraph in _PARAGRAPH_BREAK.split(body)
        if paragraph.strip()
    )


def route_length(counts: Counter[str]) -> int:
    """The §3.3 token count of a body from its search counts: simple tokens, no stop-words.

    A §3.3 token is a search token without `-`/`_` or a part of one, so it is what the counts
    hold minus the whole identifiers and the stop-words.
    """
    total = counts.total()
    for token, count in counts.items():
        if "-" in token or "_" in token:
            total -= count
    for word in ROUTE_STOP:
        total -= counts.get(word, 0)
    return total


# --------------------------------------------------------------------------------------------
# A document's header, as route reads it (spec 02 §3.3, §3.9)
# --------------------------------------------------------------------------------------------


class HeaderField(msgspec.Struct, frozen=True):
    """One header field: its text as written, §3.3 tokens, and those tokens through `hstem`."""

    text: str
    words: tuple[str, ...]
    stems: tuple[str, ...]


class Header(msgspec.Struct, frozen=True):
    """The hand-written header route ranks: canonical keys, purpose, title, `##` titles."""

    keys: tuple[HeaderField, ...]
    purpose: HeaderField
    title: HeaderField
    sections: tuple[HeaderField, ...]


def _field(text: str) -> HeaderField:
    words = tuple(tokenize(text))
    return HeaderField(text, words, tuple(hstem(word) for word in words))


def header_of(doc: Doc) -> Header:
    """The header of a `Doc`, tokenised and stemmed once per document version."""
    return Header(
        keys=tuple(_field(key) for key in doc.canonical_for),
        purpose=_field(doc.purpose),
        title=_field(doc.title),
        sections=tuple(_field(section.title) for section in doc.sections),
    )


def _header_raw_words(header: Header) -> set[str]:
    words: set[str] = set()
    for field in (*header.keys, header.purpose, header.title, *header.sections):
        words.update(field.words)
    return words


class DocInfo(msgspec.Struct, frozen=True):
    """What the index keeps of one document besides its body and postings."""

    key: tuple[int, int, str]
    header: Header
    # §3.9 body length: §3.3 tokens of the body (stop-words dropped)
    length: int


class RouteStats(msgspec.Struct, frozen=True):
    """Corpus figures of the routable documents, recomputed when the index changes."""

    n: int
    avgdl: float
    avg_purpose: float
    avg_title: float


_SIMPLE_TOKEN = re.compile(r"[a-z0-9\u0400-\u04ff]+")
_LATIN_WORD = re.compile(r"[a-z]+")


def route_form(token: str) -> str:
    """The body form of a simple token: its Snowball stem (issue 16), others unchanged."""
    return body_form(token) if _SIMPLE_TOKEN.fullmatch(token) else token


# `route_forms` also files every Cyrillic token under this prefix plus the token itself, so a
# dictionary translation can ask for exactly that word (the prefix is never a token character)
EXACT_PREFIX = "="


def exact_form(token: str) -> str:
    """The `route_forms` key of exactly this Cyrillic token, with no stemming."""
    return EXACT_PREFIX + token


def is_routable(doc: Doc) -> bool:
    """Route considers every text document except templates and inbox notes (§3.9)."""
    return bool(doc.text_ok and doc.doc_function != TEMPLATE_FUNCTION and doc.layer != INBOX_LAYER)


# --------------------------------------------------------------------------------------------
# The index (spec 02 §4.3)
# --------------------------------------------------------------------------------------------


class SearchIndex:
    """Body postings and header words of one bank, synced incrementally against snapshots."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        # the (mtime_ns, size, sha256) each document was indexed at (its `DocInfo.key`), kept
        # apart so that `sync` compares every document without making a `DocInfo` the
        # projection cache has not decoded yet (`mbank.search_state`)
        self.indexed: dict[str, tuple[int, int, str]] = {}
        self.bodies: dict[str, str] = {}
        self.docs: dict[str, DocInfo] = {}
        self.routable: set[str] = set()
        # Header postings of the routable documents, by field kind, over stemmed words:
        # purpose and title -> paths; canonical keys and sections -> path -> positions.
        self.purpose_postings: dict[str, set[str]] = {}
        self.title_postings: dict[str, set[str]] = {}
        self.key_postings: dict[str, dict[str, tuple[int, ...]]] = {}
        self.section_postings: dict[str, dict[str, tuple[int, ...]]] = {}
        # stemmed header word -> number of (routable document, field kind) postings holding it
        self.header_stems: dict[str, int] = {}
        # §3.3 header word (unstemmed) -> paths holding it in any header field (every document)
        self.header_words: dict[str, set[str]] = {}
        self.version = 0
        self._synced: Snapshot | None = None
        self._sorted_tokens: list[str] | None = None
        self._sorted_header_stems: list[str] | None = None
        self._derived_version = -1
        self._route_forms: dict[str, tuple[str, ...]] | None = None
        self._stats: RouteStats | None = None
        self._lengths: dict[str, tuple[int, int, int]] | None = None
        self._vocab_sorted: list[str] | None = None
        self._bridge: dict[str, tuple[str, ...]] | None = None
        self._pairs: dict[str, tuple[str, ...]] | None = None
        self._cyrillic_share: float | None = None
        self._memo_for: tuple[Snapshot | None, int] = (None, -1)
        self._memo: dict[str, Any] = {}
        # token -> route_form(token), filled as tokens are first formed (never stale)
        self.form_of: dict[str, str] = {}

    # -- sync -------------------------------------------------------------------------------

    def sync(self, snapshot: Snapshot) -> int:
        """Re-index what moved since the last sync; return the number of documents touched."""
        if snapshot is self._synced:
            return 0
        touched = 0
        for path in [path for path in self.docs if path not in snapshot.docs]:
            self._remove(path)
            touched += 1
        indexed = self.indexed
        for path, doc in snapshot.docs.items():
            key = (doc.mtime_ns, doc.size, doc.sha256)
            known = indexed.get(path)
            if known != key:
                if known is not None:
                    self._remove(path)
                self._add(path, doc, snapshot.raw.get(path, ""), key)
                touched += 1
            # a layer table edit can make a document (un)routable without touching it
            if is_routable(doc) != (path in self.routable):
                self._set_routable(path, path not in self.routable)
        self._synced = snapshot
        return touched

    def _add(self, path: str, doc: Doc, text: str, key: tuple[int, int, str]) -> None:
        body = split_frontmatter(text).body.lower() if doc.text_ok else ""
        counts = body_counts(body)
        postings = self.postings
        for token, count in counts.items():
            try:
                postings[token][path] = count
            except KeyError:  # a token no document had: rare once the index is warm
                postings[token] = {path: count}
                self._sorted_tokens = None
        length = route_length(counts)
        header = header_of(doc)
        for word in _header_raw_words(header):
            self.header_words.setdefault(word, set()).add(path)
        self.docs[path] = DocInfo(key, header, length)
        self.indexed[path] = key
        self.bodies[path] = body
        self.version += 1

    def _remove(self, path: str) -> None:
        if path in self.routable:
            self._set_routable(path, False)
        info = self.docs.pop(path)
        body = self.bodies.pop(path)
        self.indexed.pop(path, None)
        for token in body_counts(body):
            holders = self.postings.get(token)
            if holders is not None:
                holders.pop(path, None)
                if not holders:
                    del self.postings[token]
                    self._sorted_tokens = None
        for word in _header_raw_words(info.header):
            paths = self.header_words.get(word)
            if paths is not None:
                paths.discard(path)
                if not paths:
                    del self.header_words[word]
        self.version += 1

    def _set_routable(self, path: str, routable: bool) -> None:
        """Add a document's header to the field postings, or take it out."""
        header = self.docs[path].header
        words: list[str] = []
        for paths_of, stems in (
            (self.purpose_postings, header.purpose.stems),
            (self.title_postings, header.title.stems),
        ):
            for word in dict.fromkeys(stems):
                words.append(word)
                if routable:
                    paths_of.setdefault(word, set()).add(path)
                else:
                    holders = paths_of.get(word)
                    if holders is not None:
                        holders.discard(path)
                        if not holders:
                            del paths_of[word]
        for positions_of, fields in (
            (self.key_postings, header.keys),
            (self.section_postings, header.sections),
        ):
            where: dict[str, list[int]] = {}
            for position, field in enumerate(fields):
                for word in dict.fromkeys(field.stems):
                    where.setdefault(word, []).append(position)
            for word, positions in where.items():
                words.append(word)
                if routable:
                    positions_of.setdefault(word, {})[path] = tuple(positions)
                else:
                    by_path = positions_of.get(word)
                    if by_path is not None:
                        by_path.pop(path, None)
                        if not by_path:
                            del positions_of[word]
        counts = self.header_stems
        for word in words:
            count = counts.get(word, 0) + (1 if routable else -1)
            if count > 0:
                if word not in counts:
                    self._sorted_header_stems = None
                counts[word] = count
            else:
                counts.pop(word, None)
                self._sorted_header_stems = None
        if routable:
            self.routable.add(path)
        else:
            self.routable.discard(path)
        self.version += 1

    def memoised(self, snapshot: Snapshot, kind: type[Memo], build: Callable[[], Memo]) -> Memo:
        """The `kind` of figures derived from this snapshot and index state, built at most once.

        Readers keep per-document weights and norms this way; the memo is emptied whenever the
        index changes or a different snapshot is passed, so nothing stale survives.
        """
        owner, version = self._memo_for
        if owner is not snapshot or version != self.version:
            self._memo_for = (snapshot, self.version)
            self._memo = {}
        found = self._memo.get(kind.__name__)
        if not isinstance(found, kind):
            found = build()
            self._memo[kind.__name__] = found
        return found

    # -- lookups ----------------------------------------------------------------------------

    def term_count(self) -> int:
        """The number of distinct tokens with postings."""
        return len(self.postings)

    def sorted_tokens(self) -> list[str]:
        """Every indexed token in code-point order (kept until the token set changes)."""
        if self._sorted_tokens is None:
            self._sorted_tokens = sorted(self.postings)
        return self._sorted_tokens

    def tokens_with_prefix(self, prefix: str) -> list[str]:
        """Every indexed token starting with `prefix`, sorted; `[]` when it is shorter than 3."""
        if len(prefix) < 3:
            return []
        return _with_prefix(self.sorted_tokens(), prefix)

    def header_stems_with_prefix(self, prefix: str) -> list[str]:
        """Every stemmed header word of a routable document starting with `prefix`, sorted."""
        if self._sorted_header_stems is None:
            self._sorted_header_stems = sorted(self.header_stems)
        return _with_prefix(self._sorted_header_stems, prefix)

    def _refresh_derived(self) -> None:
        if self._derived_version != self.version:
            self._derived_version = self.version
            self._route_forms = None
            self._stats = None
            self._lengths = None
            self._vocab_sorted = None
            self._bridge = None
            self._pairs = None
            self._cyrillic_share = None

    def route_forms(self) -> dict[str, tuple[str, ...]]:
        """§3.9 body form → the simple indexed tokens that have it (`filters` → filter)."""
        self._refresh_derived()
        if self._route_forms is None:
            forms: dict[str, list[str]] = {}
            form_of = self.form_of
            for token in self.sorted_tokens():
                if "-" in token or "_" in token or token in ROUTE_STOP:
                    continue
                form = form_of.get(token)
                if form is None:
                    form = form_of[token] = route_form(token)
                forms.setdefault(form, []).append(token)
                if has_cyrillic(token):
                    forms.setdefault(exact_form(token), []).append(token)
            self._route_forms = {form: tuple(tokens) for form, tokens in forms.items()}
        return self._route_forms

    def route_stats(self) -> RouteStats:
        """N, avgdl and the mean purpose and title lengths over the routable documents."""
        self._refresh_derived()
        if self._stats is None:
            n = len(self.routable)
            total = purpose = title = 0
            for path in self.routable:
                info = self.docs[path]
                total += info.length
                purpose += len(info.header.purpose.words)
                title += len(info.header.title.words)
            self._stats = RouteStats(
                n=n,
                avgdl=max(total / n, 1.0) if n else 1.0,
                avg_purpose=max(purpose / n, 1.0) if n else 1.0,
                avg_title=max(title / n, 1.0) if n else 1.0,
            )
        return self._stats

    def route_lengths(self) -> dict[str, tuple[int, int, int]]:
        """(§3.9 body length, purpose words, title words) of every routable document: what
        route's length norms are made of (`route.Figures`), kept with the index state so a
        second session's first route makes no `DocInfo` for them."""
        self._refresh_derived()
        if self._lengths is None:
            docs = self.docs
            self._lengths = {
                path: (info.length, len(info.header.purpose.words), len(info.header.title.words))
                for path in self.routable
                for info in (docs[path],)
            }
        return self._lengths

    def vocabulary(self) -> list[str]:
        """Every raw token of the bank, header and body, sorted (the named-term rule's `vocab`)."""
        self._refresh_derived()
        if self._vocab_sorted is None:
            self._vocab_sorted = sorted(set(self.postings) | set(self.header_words))
        return self._vocab_sorted

    def english_words_by_key(self) -> dict[str, tuple[str, ...]]:
        """Bridge key → the Latin tokens (`^[a-z]{3,}$`, stop-words aside) of the bank with it."""
        self._refresh_derived()
        if self._bridge is None:
            by_key: dict[str, list[str]] = {}
            for word in self.vocabulary():
                if len(word) >= 3 and word not in ROUTE_STOP and _LATIN_WORD.fullmatch(word):
                    key = translit_key(word)
                    if len(key) >= 3:
                        by_key.setdefault(key, []).append(word)
            self._bridge = {key: tuple(words) for key, words in by_key.items()}
        return self._bridge

    def bilingual_pairs(self) -> dict[str, tuple[str, ...]]:
        """Russian stem → English words mined from this bank's mixed headers (`mbank.pairs`)."""
        self._refresh_derived()
        if self._pairs is None:
            self._pairs = mine_pairs(
                (path, info.header.title.text, info.header.purpose.text)
                for path in sorted(self.routable)
                for info in (self.docs[path],)
            )
        return self._pairs

    def cyrillic_share(self) -> float:
        """The share of routable documents whose body or header holds a Cyrillic word."""
        self._refresh_derived()
        if self._cyrillic_share is None:
            holders: set[str] = set()
            for token, counts in self.postings.items():
                if has_cyrillic(token):
                    holders.update(counts)
            for word, paths in self.header_words.items():
                if has_cyrillic(word):
                    holders.update(paths)
            routable = self.routable
            self._cyrillic_share = len(holders & routable) / len(routable) if routable else 0.0
        return self._cyrillic_share

    def english_df(self, word: str) -> int:
        """Routable documents holding `word` in the body, title, purpose or a section title."""
        routable = self.routable
        holders = {path for path in self.postings.get(word, ()) if path in routable}
        for path in self.header_words.get(word, ()):
            if path in routable and path not in holders:
                header = self.docs[path].header
                fields = (header.title, header.purpose, *header.sections)
                if any(word in field.words for field in fields):
                    holders.add(path)
        return len(holders)


def _with_prefix(ordered: list[str], prefix: str) -> list[str]:
    start = bisect.bisect_left(ordered, prefix)
    found: list[str] = []
    for token in ordered[start:]:
        if not token.startswith(prefix):
            break
        found.append(token)
    return found


# --------------------------------------------------------------------------------------------
# The query (spec 02 §4.4, §4.5)
# --------------------------------------------------------------------------------------------


def excerpt_of(
    text: str, body_offset: int, terms: list[str], lowered_body: str | None = None
) -> tuple[str, int]:
    """The body line holding the most excerpt terms, and its 1-based line (§4.5).

    `lowered_body` is the lower-cased body (the index keeps it). Each term is found with
    `str.find`, jumping to the next line after a hit, so only lines holding a term are
    scored; blank lines hold none. The first line with the highest score wins.
    """
    body = (
        lowered_body
        if lowered_body is not None
        else "\n".join(text.split("\n")[body_offset:]).lower()
    )
    held: dict[int, int] = {}  # line start offset -> number of terms it contains
    for term in dict.fromkeys(terms):
        if not term:
            continue
        position = body.find(term)
        while position != -1:
            start = body.rfind("\n", 0, position) + 1
            held[start] = held.get(start, 0) + 1
            end = body.find("\n", position)
            if end == -1:
                break
            position = body.find(term, end + 1)
    best_score = 0.0
    best_start = -1
    for start in sorted(held):
        score: float = held[start]
        if body.startswith("#", start) or body[start : start + 64].lstrip().startswith("#"):
            end = body.find("\n", start)
            line = body[start:] if end == -1 else body[start:end]
            if line.lstrip().startswith("#"):
                score *= 0.9
        if score > best_score:
            best_score, best_start = score, start
    if best_start < 0:
        return "", 0
    number = body_offset + body.count("\n", 0, best_start) + 1
    excerpt = text.split("\n")[number - 1].strip()
    if len(excerpt) > EXCERPT_MAX:
        excerpt = excerpt[: EXCERPT_MAX - 3] + "..."
    return excerpt, number


_SEARCH_RUN = re.compile(r"[a-z0-9_\u0400-\u04ff-]+")


def phrase_holders(index: SearchIndex, phrase: str, candidates: set[str]) -> set[str]:
    """The candidates whose lower-cased body contains `phrase` (for the +25 of §4.4 step 5).

    A word run of the phrase with a separator before it starts a token wherever the phrase
    occurs: a body holding the phrase holds that run as a token (trimmed of `-`/`_`), or a
    token starting with it when the run ends the phrase. Every such run must be there, so
    only bodies in the intersection of their holders are scanned; the answer is the same as
    scanning every candidate.
    """
    options: list[set[str]] = []
    for run in _SEARCH_RUN.finditer(phrase):
        word = run.group().strip("-_")
        if run.start() == 0 or len(word) < 2:
            continue
        last = run.end() == len(phrase)
        tokens = _with_prefix(index.sorted_tokens(), word) if last else [word]
        holders: set[str] = set()
        for token in tokens:
            holders.update(index.postings.get(token, ()))
        options.append(holders)
    narrowed = candidates
    for holders in sorted(options, key=len):
        narrowed = narrowed & holders
        if not narrowed:
            break
    bodies = index.bodies
    return {path for path in narrowed if phrase in bodies.get(path, "")}


def _empty() -> dict[str, Any]:
    return {"results": [], "hint": SEARCH_HINT}


def search_meta(snapshot: Snapshot, index: SearchIndex) -> SearchMeta:
    """The `SearchMeta` of this snapshot, from the index's memo or gathered now."""
    return index.memoised(snapshot, SearchMeta, lambda: SearchMeta(snapshot))


def _best(scores: dict[str, float], count: int) -> list[tuple[float, str]]:
    """The first `count` of (score rounded to 1 place, path), by score then path.

    Rounding is monotonic: only scores reaching the rounded `count`-th best minus one unit of
    the last place can tie with or beat it, so only those are rounded and sorted.
    """
    if count <= 0 or not scores:
        return []
    floor = round_half_up(heapq.nlargest(count, scores.values())[-1], 1) - 0.1
    near = [(round_half_up(value, 1), path) for path, value in scores.items() if value >= floor]
    near.sort(key=lambda item: (-item[0], item[1]))
    return near[:count]


def search(
    snapshot: Snapshot,
    index: SearchIndex,
    query: str,
    *,
    limit: int = 10,
    kind: str | None = None,
    layer: str | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """The `bank_search` result for `query` (spec 02 §4): `{"results": [...], "hint"?}`.

    Syncs `index` against `snapshot` first. Documents holding a variant of every query concept
    come before documents holding only some (**mbank:**); within each group by score, then path.
    """
    index.sync(snapshot)
    everything = search_tokens(query)
    if not everything:
        return _empty()
    primary = [token for token in everything if token not in SEARCH_STOP] or everything
    phrase = query.strip().lower()
    tables = tables_for(snapshot.vocabulary)
    postings = index.postings

    weighted: list[tuple[str, int]] = []
    concepts: list[list[str]] = []
    translated: list[str] = []
    for term in expand_terms(primary, tables):
        variants = [term.literal]
        weighted.append((term.literal, WHOLE_WEIGHT))
        for translation in term.translations:
            forms = (
                [translation] if translation in postings else index.tokens_with_prefix(translation)
            )
            for form in forms:
                weighted.append((form, TRANSLATION_WEIGHT))
                variants.append(form)
                translated.append(form)
        if term.stem is not None:
            for token in index.tokens_with_prefix(term.stem):
                if token != term.literal:
                    weighted.append((token, TRANSLATION_WEIGHT))
                    variants.append(token)
        if term.literal not in postings:
            for part in token_parts(term.literal):
                weighted.append((part, PART_WEIGHT))
                variants.append(part)
        concepts.append(variants)

    meta = search_meta(snapshot, index)
    allowed = meta.allowed(kind, layer, status)
    # a single Russian word reaches the English documents that hold its translations
    single = expand_terms(primary, tables) if len(primary) == 1 else []
    alternatives = tuple(single[0].translations) if single and single[0].stem is not None else ()
    literal_hits, taken = _exact_tier(snapshot, index, meta, phrase, allowed, limit, alternatives)
    counts: dict[str, int] = {}
    for token, weight in weighted:
        holders = postings.get(token)
        if not holders:
            continue
        if not counts:
            counts = {path: count * weight for path, count in holders.items() if path in allowed}
            continue
        get = counts.get
        for path, count in holders.items():
            if path in allowed:
                counts[path] = get(path, 0) + count * weight
    if not counts and not literal_hits:
        return _empty()

    holders_of: list[set[str]] = []
    for variants in concepts:
        found: set[str] = set()
        for variant in variants:
            found.update(postings.get(variant, ()))
        holders_of.append(found)
    complete = set.intersection(*holders_of) & counts.keys()

    base = {path: count / 10 for path, count in counts.items()}
    for field, whole, translated_bonus in (
        ("title", 15.0, 15 * CROSS_LANGUAGE_DISCOUNT),
        ("purpose", 10.0, 10 * CROSS_LANGUAGE_DISCOUNT),
    ):
        exact = meta.containing(field, phrase)
        for path in exact & base.keys():
            base[path] += whole
        if translated:
            crossing: set[str] = set()
            for form in dict.fromkeys(translated):
                crossing.update(meta.containing(field, form))
            for path in (crossing - exact) & base.keys():
                base[path] += translated_bonus
    if " " in phrase:
        # `phrase_holders(index, phrase, set(base))`, known already: a phrase with a space is
        # exact, so `_exact_tier` took every allowed body holding it (it occurs there at
        # least once), and `base` holds allowed paths only
        for path in taken & base.keys():
            base[path] += 25
    factor = {path: 0.3 for path in meta.archived & base.keys()}

    results = literal_hits
    ranked: list[tuple[float, str]] = []
    for group in (complete - taken, base.keys() - complete - taken):
        need = max(limit, 0) - len(results) - len(ranked)
        if need <= 0:
            break
        ranked += _best({path: base[path] * factor.get(path, 1.0) for path in group}, need)
    if not ranked and not results:
        return _empty()

    excerpt_terms = list(dict.fromkeys(term.lower() for term in (*primary, *translated)))
    pieces = is_literal(query)
    for score, path in ranked:
        doc = snapshot.docs[path]
        excerpt, line = excerpt_of(
            snapshot.raw.get(path, ""),
            doc.body_offset,
            excerpt_terms,
            index.bodies.get(path),
        )
        hit = search_hit(path, doc, score, excerpt, line, int(round_half_up(counts[path] / 10, 0)))
        if pieces:
            # the literal itself is not in this body: it matched by its words or parts
            hit["match"] = "word-pieces"
        results.append(hit)
    return {"results": results}


def _exact_tier(
    snapshot: Snapshot,
    index: SearchIndex,
    meta: SearchMeta,
    literal: str,
    allowed: set[str],
    limit: int,
    alternatives: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], set[str]]:
    """The documents whose body holds the query as written, defining document first.

    Issue 16: the query is looked for as written (a plain word as a whole word, a literal or
    a phrase as a substring);
    `hits` is its true count, the excerpt the line that shows it (the defining line first),
    and the order `definition_score` (× 0.3 when archived), then path. A plain Russian word
    also looks for its dictionary translations as whole words (`alternatives`, × 0.9), so
    `модель` ranks the English documents as `model` does. Returns the first `limit` hits
    and every holder (the word-piece tier leaves them out).
    """
    if not literal:
        return [], set()
    exact = is_exact(literal)
    if exact:
        holders = phrase_holders(index, literal, allowed)
    elif literal in SEARCH_STOP:
        return [], set()
    else:
        # a plain word: the documents holding it as a whole word, counted by its postings
        holders = set(index.postings.get(literal, ())) & allowed
    forms = [(literal, 1.0)]
    if not exact:
        for word in alternatives:
            if word != literal and word in index.postings:
                forms.append((word, TRANSLATION_DISCOUNT_EXACT))
                holders |= set(index.postings[word]) & allowed
    scored: list[tuple[float, str, int, str]] = []
    for path in holders:
        body = index.bodies.get(path, "")
        best: tuple[float, int, str] | None = None
        for form, discount in forms:
            count = occurrences(body, form) if exact else index.postings.get(form, {}).get(path, 0)
            if count == 0:
                continue
            value = definition_score(snapshot.docs[path], body, form, count) * discount
            if best is None or value > best[0]:
                best = (value, count, form)
            if form == literal:
                break  # the word as typed, when the body holds it, is what it is ranked by
        if best is None:
            continue
        score = best[0] * (0.3 if path in meta.archived else 1.0)
        scored.append((round_half_up(score, 1), path, best[1], best[2]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    hits: list[dict[str, Any]] = []
    for score, path, count, form in scored[: max(limit, 0)]:
        doc = snapshot.docs[path]
        raw_lines = snapshot.raw.get(path, "").split("\n")
        excerpt, line = literal_excerpt(raw_lines, doc.body_offset, index.bodies[path], form)
        hits.append(search_hit(path, doc, score, excerpt, line, count))
    return hits, {item[1] for item in scored}


def format_search(result: dict[str, Any], documents: int, terms: int, elapsed_ms: float) -> str:
    """The human rendering of a search result (spec 04 §9.3)."""
    lines = [f"indexed {documents} documents, {terms} terms, {elapsed_ms:.1f} ms"]
    if not result["results"]:
        lines.append("(no matches)")
    for hit in result["results"]:
        pieces = "  (word pieces, not the literal)" if hit.get("match") == "word-pieces" else ""
        lines.append(
            f"{js_number(hit['score']):>7}  {hit['path']}:{hit['line']}  "
            f"[{hit['docKind']} / {hit['layer']}]  x{hit['hits']}{pieces}"
        )
        if hit["excerpt"]:
            lines.append(" " * 9 + hit["excerpt"])
    return "\n".join(lines) + "\n"


def js_number(value: float) -> str:
    """A number as JavaScript's `String()` writes it here: `18`, `16.2`, `0.1234`."""
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def search_hit(
    path: str, doc: Doc, score: float, excerpt: str, line: int | None, hits: int
) -> dict[str, Any]:
    """One search result in the spec's key order (02 §4.5)."""
    return {
        "path": path,
        "title": doc.title,
        "docKind": doc.doc_kind,
        "layer": doc.layer,
        "status": doc.status,
        "score": score,
        "excerpt": excerpt,
        "line": line,
        "hits": hits,
    }
