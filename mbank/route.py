"""`bank_route`: which documents answer this question (spec 02 §3).

Two rankings live here:

- `route_header_only` — upstream's score of the hand-written header alone (§3.3–§3.7),
  kept as its own function so it can be measured against the final ranking;
- `route` — **mbank:**'s final ranking (§3.9): header evidence (light stemming, field-length
  normalisation) plus body evidence (BM25 over the shared `SearchIndex`'s postings), a lighter
  delivery prior, a transliteration bridge for Russian words the dictionary does not know, and
  two no-answer rules.

The final ranking's query concepts are built in `mbank.route_concepts`; its `answered` verdict
is weighed in `mbank.route_answer`. Both rankings are pure functions of the snapshot (and of
the index, a cache synced on entry).
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from typing import Any

from mbank.contract import BUILTIN_WEIGHTS, LAYER_WEIGHTS, effective_weights
from mbank.lang import (
    EVIDENCE_STOP,
    ROUTE_STOP,
    QueryTerm,
    expand_terms,
    has_cyrillic,
    is_why,
    tables_for,
    tokenize,
)
from mbank.lexicon import is_ordinary_english
from mbank.model import INBOX_LAYER, INDEX_FUNCTION, TEMPLATE_FUNCTION, Doc, LayerMap
from mbank.projection import Snapshot
from mbank.route_answer import Evidence, answer_min, mark_weak
from mbank.route_concepts import (
    QUESTION_WORD,
    TRANSLATION_DISCOUNT,
    Concept,
    build_concepts,
    named_terms,
)
from mbank.search import (
    Header,
    RouteStats,
    SearchIndex,
    js_number,
    paragraph_tokens,
    phrase_holders,
    round_half_up,
    route_form,
)

ROUTE_HINT = "No frontmatter match. Try bank_search for a literal term, or widen the question."
NOTHING_ANSWERS = (
    "Nothing in the bank answers this question; the documents listed (marked weak) came "
    "closest. Say so rather than answering from them."
)

PREFIX_MATCH = 0.6
CANONICAL_WEIGHT = 5
PURPOSE_WEIGHT = 3
TITLE_WEIGHT = 2
SECTION_WEIGHT = 1

STATUS_WEIGHTS: dict[str, float] = {"active": 1.0, "draft": 0.7, "archived": 0.2}
OTHER_STATUS_WEIGHT = 0.9
# An index (`doc_function: index`, a folder's README) lists the documents of its folder with a
# line of each one's words, so it matches many questions nearly as well as the document that
# states the answer; a router should lead to that document, and the index stays listed below it
# (issue 16, tenth pass; §3.9's prior had only the layer and the status). Swept on the eighteen
# development folders (1,086 questions with an answer, 10 of them answered by an index): 0.7
# raised hit@1 0.638 -> 0.649 (Russian) and 0.653 -> 0.665 (English), hit@3 +0.011 in Russian;
# 0.5 and 0.6 gave the same, 0.8 and 0.9 less; 8 of the 10 index answers stay first (9 before).
INDEX_WEIGHT = 0.7
CLOSED_DELIVERY = frozenset({"done", "cancelled"})
WHY_DECISION = 4 / 3
WHY_KNOWLEDGE = 0.8

# §3.9's prior: the delivery weight is 1.0 here (0.6 in the header-only score of §3.5).
ROUTE_LAYER_WEIGHTS: dict[str, float] = {layer: w.route for layer, w in LAYER_WEIGHTS.items()}
K1 = 1.2
B = 0.75
BODY_SHARE = 0.75
# §3.9 rule ii: a best candidate covering less of the question's idf mass answers nothing. Until
# issue 16's tenth pass the result was then empty; now its candidates are listed, all weak, as
# issue 16 asks of every question nothing answers: on the eighteen development folders hit@1
# rose 0.649 -> 0.656 (Russian) and 0.665 -> 0.667 (English), hit@3 0.846 -> 0.857 and 0.860 ->
# 0.866, with the same `answered` on every question. The rule asks it of the first result as
# listed, not of the first before the re-ranking (`stated_together`), which was often a document
# holding one heavy word in its header (engineering/autonomy-boundaries.md for "агент"): on the
# twenty development folders Russian false alarms 0.078 -> 0.065 for no-answer 0.766 -> 0.763,
# English 0.094 -> 0.088 for 0.750 -> 0.745.
COVERAGE_MIN = 0.21
# the first-score candidates re-ranked by how much of the evidence one paragraph states
# (`stated_together`): on the development folders a pool of 10 found as many answers as 20
RERANK_POOL = 10


def status_weight(status: str) -> float:
    """active 1.0, draft 0.7, archived 0.2, anything else (including "") 0.9."""
    return STATUS_WEIGHTS.get(status, OTHER_STATUS_WEIGHT)


def _why_adjusted(weights: dict[str, float], why: bool) -> dict[str, float]:
    if why:
        weights["decision"] = weights.get("decision", 1.0) * WHY_DECISION
        weights["knowledge"] = weights.get("knowledge", 1.0) * WHY_KNOWLEDGE
    return weights


def _empty(hint: str = ROUTE_HINT) -> dict[str, Any]:
    return {"results": [], "hint": hint}


def _excluded(doc: Doc, kind: str | None, layer: str | None) -> bool:
    return (
        doc.doc_function == TEMPLATE_FUNCTION
        or doc.layer == INBOX_LAYER
        or (kind is not None and doc.doc_kind != kind)
        or (layer is not None and doc.layer != layer)
    )


def _result(doc: Doc, score: float, why: list[str]) -> dict[str, Any]:
    return {
        "path": doc.path,
        "title": doc.title,
        "purpose": doc.purpose,
        "docKind": doc.doc_kind,
        "layer": doc.layer,
        "status": doc.status,
        "score": score,
        "why": "; ".join(why),
    }


# --------------------------------------------------------------------------------------------
# The header score alone (spec 02 §3.3–§3.7): upstream's ranking
# --------------------------------------------------------------------------------------------


def match_word(word: str, field_words: list[str] | tuple[str, ...]) -> float:
    """1 for an exact field token; 0.6 when one is a prefix of the other (word ≥ 4); else 0."""
    if word in field_words:
        return 1.0
    if len(word) >= 4:
        for token in field_words:
            if token.startswith(word) or word.startswith(token):
                return PREFIX_MATCH
    return 0.0


def score_field(
    terms: list[QueryTerm], field_words: list[str] | tuple[str, ...]
) -> tuple[float, list[str]]:
    """Each concept once, by its best variant; a translation counts ×0.9 and loses ties."""
    score = 0.0
    hits: list[str] = []
    for term in terms:
        best = match_word(term.literal, field_words)
        winner = term.literal
        for translation in term.translations:
            value = match_word(translation, field_words) * TRANSLATION_DISCOUNT
            if value > best:
                best, winner = value, translation
        if best > 0:
            score += best
            hits.append(winner)
    return score, hits


def route_header_only(
    snapshot: Snapshot,
    question: str,
    *,
    limit: int = 5,
    kind: str | None = None,
    layer: str | None = None,
) -> dict[str, Any]:
    """Upstream's header score (§3.3–§3.7), rounded half-up to 2 decimals; for measurement.

    Weights are the effective layer weights of 01 §8.3 (delivery 0.6 unless declared), with
    the why-intent multipliers, the status weight and the ×0.5 for closed delivery work.
    """
    tokens = tokenize(question)
    if not tokens:
        return _empty()
    terms = expand_terms(tokens, tables_for(snapshot.vocabulary))
    weights = _why_adjusted(dict(effective_weights(snapshot.layers)), is_why(question))
    scored: list[tuple[float, str, list[str]]] = []
    for path, doc in snapshot.docs.items():
        if _excluded(doc, kind, layer):
            continue
        canonical, best_key = 0.0, ""
        for key in doc.canonical_for:
            words = tokenize(key)
            if not words:
                continue
            weighted = score_field(terms, words)[0] / len(words) * CANONICAL_WEIGHT
            if weighted > canonical:
                canonical, best_key = weighted, key
        purpose_score, purpose_hits = score_field(terms, tokenize(doc.purpose))
        title_score, title_hits = score_field(terms, tokenize(doc.title))
        section_score, section_title = 0.0, ""
        for section in doc.sections:
            value = score_field(terms, tokenize(section.title))[0]
            if value > section_score:
                section_score, section_title = value, section.title
        raw = (
            canonical
            + purpose_score * PURPOSE_WEIGHT
            + title_score * TITLE_WEIGHT
            + section_score * SECTION_WEIGHT
        )
        if raw == 0:
            continue
        closed = 0.5 if doc.delivery_status in CLOSED_DELIVERY else 1.0
        score = round_half_up(
            raw * weights.get(doc.layer, 1.0) * status_weight(doc.status) * closed, 2
        )
        why = _why_parts(
            best_key if canonical > 0 else None,
            purpose_hits if purpose_score > 0 else [],
            title_hits if title_score > 0 else [],
            section_title if section_score > 0 else None,
            doc.layer,
        )
        scored.append((score, path, why))
    if not scored:
        return _empty()
    scored.sort(key=lambda item: (-item[0], item[1]))
    return {
        "results": [_result(snapshot.docs[path], score, why) for score, path, why in scored[:limit]]
    }


def _why_parts(
    key: str | None,
    purpose_hits: list[str],
    title_hits: list[str],
    section: str | None,
    layer: str,
) -> list[str]:
    parts: list[str] = []
    if key is not None:
        parts.append(f"owns canonical_for: {key}")
    if purpose_hits:
        parts.append(f'purpose matches "{", ".join(purpose_hits)}"')
    if title_hits:
        parts.append(f'title matches "{", ".join(title_hits)}"')
    if section is not None:
        parts.append(f'has section "{section}"')
    if layer == "delivery":
        parts.append("delivery-layer document, ranked below knowledge")
    return parts


# --------------------------------------------------------------------------------------------
# The final ranking (spec 02 §3.9)
# --------------------------------------------------------------------------------------------


def route_layer_weights(layers: LayerMap) -> dict[str, float]:
    """§3.9's prior layer weights, overridden by the weights a bank declares (01 §8.2).

    A declared weight equal to upstream's built-in weight for that layer (the starter's
    `features | delivery | 0.6` row, which 05 §3.5 says is "identical in effect to the
    built-in map") restates the old default and does not bring the 0.6 delivery damping
    back; any other declared value overrides.
    """
    weights = dict(ROUTE_LAYER_WEIGHTS)
    for layer, value in layers.weight.items():
        if value != BUILTIN_WEIGHTS.get(layer):
            weights[layer] = value
    return weights


_LOWER_LATIN = re.compile(r"[a-z]{3,}")


def unfamiliar_words(index: SearchIndex, question: str) -> list[str]:
    """The lower-case words of an English question that read as names (issue 16, eighth pass):
    letters only, at least 3 of them, not stop-words, in no form in the bank, and not ordinary
    English (`lexicon.is_ordinary_english`): "gofumpt", "justfile", "tmux". Unlike
    `bank_mentions`, a word is in the bank only as one of its tokens or their §3.9 forms:
    "justfile" is not mentioned by a bank that writes "just". The word list is asked last, so a
    question whose words the bank holds never loads it. A question holding Cyrillic has none:
    there every Latin word is a name already (`named_terms`)."""
    if has_cyrillic(question):
        return []
    forms = index.route_forms()
    found: dict[str, None] = {}
    for match in QUESTION_WORD.finditer(question):
        word = match.group()
        if (
            word == word.lower()
            and _LOWER_LATIN.fullmatch(word)
            and word not in EVIDENCE_STOP  # the route stop-words are among them
            and word not in index.postings
            and word not in index.header_words
            and route_form(word) not in forms
            and not is_ordinary_english(word)
        ):
            found[word] = None
    return list(found)


def bank_mentions(index: SearchIndex, name: str) -> bool:
    """Whether the bank contains a name (§3.9 rule i), compared lower-cased.

    Known: equal to a raw token of the bank; or, for names of 4 letters or more, a prefix of
    one, or starting with one of at least 4 letters (shorter tokens like `an` or `is` would
    make every name known).
    """
    word = name.lower()
    if word in index.postings or word in index.header_words:
        return True
    if len(word) < 4:
        return False
    vocabulary = index.vocabulary()
    position = bisect.bisect_left(vocabulary, word)
    if position < len(vocabulary) and vocabulary[position].startswith(word):
        return True
    return any(
        word[:end] in index.postings or word[:end] in index.header_words
        for end in range(4, len(word))
    )


# Latin words written together in a Russian sentence, by hyphens or single spaces: `auto-merge`,
# `GitHub App`, `REST API`
_LATIN_RUN = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[- ][A-Za-z][A-Za-z0-9]*)+(?![\w-])")
_RUN_SPLIT = re.compile(r"[- ]")


def unknown_compounds(index: SearchIndex, question: str) -> list[str]:
    """The compound names of a Russian question that the bank never writes, as written.

    In a question holding Cyrillic every Latin word is a name (§3.9 rule i), and Latin words
    written together (`auto-merge`, `GitHub App`) name one thing: the bank knowing `auto` and
    `merge` apart says nothing about it. The bank writes it if it holds it joined by hyphens
    (a token), by spaces, or by nothing (`automerge`), in a body or a header field. English
    questions are left alone: there a hyphen is ordinary spelling ("command-line" for the
    bank's "command line"), and every word is Latin.
    """
    if not has_cyrillic(question):
        return []
    found: dict[str, str] = {}
    for match in _LATIN_RUN.finditer(question):
        compound = match.group().lower()
        parts = _RUN_SPLIT.split(compound)
        if compound not in found and not _bank_writes(index, parts, compound):
            found[compound] = match.group()
    return list(found.values())


def _bank_writes(index: SearchIndex, parts: list[str], written: str) -> bool:
    """Whether the bank holds the compound joined by hyphens, by nothing, by spaces, or as the
    question writes it (`make release-minor`, a command a runbook quotes; issue 16, seventh
    pass: mixed separators were looked for only all-hyphened or all-spaced)."""
    hyphened, joined, spaced = "-".join(parts), "".join(parts), " ".join(parts)
    if any(form in index.postings or form in index.header_words for form in (hyphened, joined)):
        return True
    phrases = dict.fromkeys((spaced, written))
    # A text writing the spaced name holds its first word as a token, so only the texts holding
    # it are searched (issue 17): a common last word (`app`, a prefix of thousands of tokens at
    # 10,000 documents) sent every body through the substring search, and lower-casing every
    # header cost 60 ms. A word a tokenizer drops (one letter; in headers, a stop-word) narrows
    # nothing.
    first = parts[0]
    bodies = index.postings.get(first, {}) if len(first) > 1 else index.routable
    holders = {path for path in bodies if path in index.routable}
    if any(phrase_holders(index, phrase, holders) for phrase in phrases):
        return True
    kept = len(first) > 1 and first not in ROUTE_STOP
    headed = index.header_words.get(first, ()) if kept else list(index.docs)
    return any(
        spaced in text or hyphened in text or written in text
        for path in headed
        for header in (index.docs[path].header,)
        for text in (
            *(key.text.lower() for key in header.keys),
            header.purpose.text.lower(),
            header.title.text.lower(),
        )
    )


# (value, -variant position, word shown): max() prefers the higher value, then the earlier
# variant, so the typed word wins ties and the first translation beats later ones.
Match = tuple[float, int, str]


def _header_matches(index: SearchIndex, concept: Concept) -> dict[str, Match]:
    """Stemmed header word → the concept's best match on it (§3.4's `match_word` per variant)."""
    matches: dict[str, Match] = {}
    postings = index.header_stems

    def offer(word: str, candidate: Match) -> None:
        current = matches.get(word)
        if current is None or candidate > current:
            matches[word] = candidate

    for position, variant in enumerate(concept.header):
        form = variant.form
        if not form:
            continue
        if form in postings:
            offer(form, (variant.discount, -position, variant.shown))
        if len(form) >= 4:
            partial = (PREFIX_MATCH * variant.discount, -position, variant.shown)
            for word in index.header_stems_with_prefix(form):
                if word != form:
                    offer(word, partial)
            for end in range(1, len(form)):
                if form[:end] in postings:
                    offer(form[:end], partial)
    return matches


def _field_match(stems: tuple[str, ...], matches: dict[str, Match]) -> Match | None:
    best: Match | None = None
    for word in stems:
        found = matches.get(word)
        if found is not None and (best is None or found > best):
            best = found
    return best


class Figures:
    """Per-document figures of one snapshot and index state, computed once and reused.

    Kept in `SearchIndex.memo`, which empties itself when the bank changes: length norms,
    prior weights (plain, why-intent, filtered) and the BM25 values of each body form asked for.
    """

    def __init__(self, snapshot: Snapshot, index: SearchIndex, stats: RouteStats) -> None:
        self.snapshot = snapshot
        self.index = index
        self.stats = stats
        self.forms = index.route_forms()
        lengths = index.route_lengths()
        self.body_norm = {
            path: K1 * (1 - B + B * body / stats.avgdl) for path, (body, _, _) in lengths.items()
        }
        self.purpose_norm = {
            path: 0.75 + 0.25 * purpose / stats.avg_purpose
            for path, (_, purpose, _) in lengths.items()
        }
        self.title_norm = {
            path: 0.75 + 0.25 * title / stats.avg_title for path, (_, _, title) in lengths.items()
        }
        self._priors: dict[tuple[bool, str | None, str | None], dict[str, float]] = {}
        self._bm25: dict[str, tuple[float, dict[str, float]]] = {}
        self._paragraphs: dict[str, tuple[frozenset[str], ...]] = {}

    def paragraphs(self, path: str) -> tuple[frozenset[str], ...]:
        """The indexed tokens of each paragraph of a document's body, tokenised when first asked
        for: `answered` looks at the paragraphs of a few candidates only (`route_answer`)."""
        found = self._paragraphs.get(path)
        if found is None:
            found = paragraph_tokens(self.index.bodies.get(path, ""))
            self._paragraphs[path] = found
        return found

    def priors(self, why: bool, kind: str | None, layer: str | None) -> dict[str, float]:
        """Layer weight × status weight (× `INDEX_WEIGHT` for an index) of every routable
        document passing the filters."""
        key = (why, kind, layer)
        found = self._priors.get(key)
        if found is None:
            weights = _why_adjusted(route_layer_weights(self.snapshot.layers), why)
            found = {}
            for path in sorted(self.index.routable):
                doc = self.snapshot.docs[path]
                if (kind is None or doc.doc_kind == kind) and (layer is None or doc.layer == layer):
                    found[path] = weights.get(doc.layer, 1.0) * status_weight(doc.status)
                    if doc.doc_function == INDEX_FUNCTION:
                        found[path] *= INDEX_WEIGHT
            self._priors[key] = found
        return found

    def bm25(self, form: str) -> tuple[float, dict[str, float]]:
        """idf of a body form and, per routable document holding it, idf·tf·(k1+1)/(tf+norm)."""
        found = self._bm25.get(form)
        if found is None:
            frequencies = _term_frequencies(
                self.index, self.forms.get(form, ()), self.index.routable
            )
            df = len(frequencies)
            idf = math.log(1 + (self.stats.n - df + 0.5) / (df + 0.5))
            weight = idf * (K1 + 1)
            norm = self.body_norm
            found = (
                idf,
                {path: weight * tf / (tf + norm[path]) for path, tf in frequencies.items()},
            )
            self._bm25[form] = found
        return found


def figures(snapshot: Snapshot, index: SearchIndex) -> Figures:
    """The `Figures` of this snapshot, from the index's memo or computed now."""
    return index.memoised(snapshot, Figures, lambda: Figures(snapshot, index, index.route_stats()))


def _add_into(total: dict[Any, float], values: dict[Any, float]) -> None:
    if not total:
        total.update(values)
        return
    get = total.get
    for key, value in values.items():
        total[key] = get(key, 0.0) + value


def _header_values(
    index: SearchIndex, fig: Figures, all_matches: list[dict[str, Match]]
) -> dict[str, float]:
    """H = C + 3P + 2T + S of every routable document with a header match (§3.9 step 1)."""
    purpose_sum: dict[str, float] = {}
    title_sum: dict[str, float] = {}
    key_sum: dict[tuple[str, int], float] = {}
    section_sum: dict[tuple[str, int], float] = {}
    for matches in all_matches:
        if not matches:
            continue
        # ascending, so a higher value (or an earlier variant on a tie) overwrites: the max
        ordered = sorted(matches.items(), key=lambda item: item[1])
        purpose: dict[str, float] = {}
        title: dict[str, float] = {}
        keys: dict[tuple[str, int], float] = {}
        sections: dict[tuple[str, int], float] = {}
        for word, (value, _position, _shown) in ordered:
            holders = index.purpose_postings.get(word)
            if holders:
                purpose.update(dict.fromkeys(holders, value))
            holders = index.title_postings.get(word)
            if holders:
                title.update(dict.fromkeys(holders, value))
            for positions_of, target in (
                (index.key_postings, keys),
                (index.section_postings, sections),
            ):
                by_path = positions_of.get(word)
                if by_path:
                    for path, positions in by_path.items():
                        for position in positions:
                            target[(path, position)] = value
        _add_into(purpose_sum, purpose)
        _add_into(title_sum, title)
        _add_into(key_sum, keys)
        _add_into(section_sum, sections)

    purpose_norm, title_norm = fig.purpose_norm, fig.title_norm
    values = {
        path: PURPOSE_WEIGHT * total / purpose_norm[path] for path, total in purpose_sum.items()
    }
    get = values.get
    for path, total in title_sum.items():
        values[path] = get(path, 0.0) + TITLE_WEIGHT * total / title_norm[path]
    best_key: dict[str, float] = {}
    docs = index.docs
    for (path, position), total in key_sum.items():
        value = total / len(docs[path].header.keys[position].stems) * CANONICAL_WEIGHT
        if value > best_key.get(path, 0.0):
            best_key[path] = value
    best_section: dict[str, float] = {}
    for (path, _position), total in section_sum.items():
        if total > best_section.get(path, 0.0):
            best_section[path] = total * SECTION_WEIGHT
    for extra in (best_key, best_section):
        for path, value in extra.items():
            values[path] = get(path, 0.0) + value
    return values


def _body_values(fig: Figures, concepts: list[Concept]) -> tuple[dict[str, float], list[float]]:
    """B = Σ_c B_c per routable document (§3.9 step 2), and each concept's idf_c."""
    total: dict[str, float] = {}
    concept_idf: list[float] = []
    for concept in concepts:
        best: dict[str, float] | None = None
        shared = False
        idf_concept = 0.0
        for variant in concept.body:
            idf, values = fig.bm25(variant.form)
            idf_concept = max(idf_concept, idf)
            if not values:
                continue
            if variant.discount != 1.0:
                values = {path: value * variant.discount for path, value in values.items()}
            if best is None:
                best, shared = values, variant.discount == 1.0
                continue
            if shared:
                best, shared = dict(best), False
            get = best.get
            for path, value in values.items():
                if value > get(path, 0.0):
                    best[path] = value
        concept_idf.append(idf_concept)
        if best:
            _add_into(total, best)
    return total, concept_idf


def route(
    snapshot: Snapshot,
    index: SearchIndex,
    question: str,
    *,
    limit: int = 5,
    kind: str | None = None,
    layer: str | None = None,
) -> dict[str, Any]:
    """The `bank_route` result (spec 02 §3.2) ranked by mbank's final ranking (§3.9).

    Syncs `index` first. Scores are rounded half-up to 4 decimals (§3.9 step 5; §3.2's "at
    most 2 decimals" describes the header-only score). The first `RERANK_POOL` documents of that
    score are then re-ranked, and scored, by it times the share of the evidence one of their
    paragraphs states (`stated_together`, issue 16's eighth pass). `answered` (issue 16) is
    false when no listed candidate's evidence (`mbank.route_answer`) clears `answer_min`, every
    name the question uses is unknown to the bank, or the first result covers less than
    `COVERAGE_MIN` of the question (§3.9 rule ii, which listed nothing before issue 16's tenth
    pass); the candidates stay listed, each marked `weak`, and the hint says plainly that nothing
    answers. A `hint` also accompanies an empty list (no document matches any word), and a
    non-empty one when every name the question uses is unknown to the bank.
    """
    index.sync(snapshot)
    names = named_terms(question)
    compounds = unknown_compounds(index, question)
    # the words of a compound the bank never writes are unknown (`unknown_compounds`)
    parts = frozenset(word for compound in compounds for word in _RUN_SPLIT.split(compound.lower()))
    unknown = [name for name in names if name.lower() in parts or not bank_mentions(index, name)]
    # lower-case names ("gofumpt") weigh as names the bank never mentions; unlike a capitalised
    # name, they alone do not make the question unanswered (`names_unknown`): the word list can
    # lack a real word ("dotfile"), and a name's weight already outweighs one such word
    unfamiliar = unfamiliar_words(index, question)
    shown = compounds + [name for name in unknown if name.lower() not in parts] + unfamiliar
    never = f"The bank never mentions: {', '.join(shown)}." if shown else ""
    empty = {
        "results": [],
        "answered": False,
        "hint": f"{ROUTE_HINT} {never}" if never else ROUTE_HINT,
    }

    concepts = build_concepts(snapshot, index, question, names)
    stats = index.route_stats()
    if not concepts or stats.n == 0:
        return empty
    fig = figures(snapshot, index)

    all_matches = [_header_matches(index, concept) for concept in concepts]
    header_value = _header_values(index, fig, all_matches)
    body_value, concept_idf = _body_values(fig, concepts)
    idf_total = sum(concept_idf)

    prior = fig.priors(is_why(question), kind, layer)
    header_scale = 1 / (11 * len(concepts))
    body_scale = BODY_SHARE / ((K1 + 1) * idf_total)
    header_get, body_get = header_value.get, body_value.get
    raw = {
        path: (header_get(path, 0.0) * header_scale + body_get(path, 0.0) * body_scale) * weight
        for path in header_value.keys() | body_value.keys()
        if (weight := prior.get(path)) is not None
    }
    if not raw:
        return empty
    pool = _top(raw, max(limit, RERANK_POOL))

    def coverage(path: str) -> float:
        """The share of the question's idf mass this document covers (§3.9 rule ii)."""
        return (
            sum(
                concept_idf[position]
                for position, concept in enumerate(concepts)
                if _covers(index, fig.forms, concept, all_matches[position], path)
            )
            / idf_total
        )

    if limit <= 0:
        return empty
    names_unknown = bool(names) and len(unknown) == len(names)
    listed = [path for _, path in pool]
    evidence = Evidence(index, fig, concepts, all_matches, names + unfamiliar, parts, listed)
    results = [
        _result(
            snapshot.docs[path],
            score,
            _final_why(index, fig, concepts, all_matches, snapshot.docs[path]),
        )
        for score, path in stated_together(evidence, pool)[:limit]
    ]
    # the verdict weighs a translated-only word as known only where a listed result holds it
    shown_paths = [item["path"] for item in results]
    if evidence.translated_only and shown_paths != listed:
        evidence.relist(shown_paths)
    # a first result covering less than COVERAGE_MIN of the question is no answer (§3.9 rule
    # ii); the candidates are still listed, weak, as for any question nothing answers (issue 16)
    uncovered = coverage(shown_paths[0]) < COVERAGE_MIN
    mark_weak(evidence, results, names_unknown or uncovered, answer_min(question))
    answered = any("weak" not in item for item in results)
    outcome: dict[str, Any] = {"results": results, "answered": answered}
    if not answered:
        outcome["hint"] = f"{NOTHING_ANSWERS} {never}" if never else NOTHING_ANSWERS
    elif names_unknown:
        outcome["hint"] = never
    return outcome


def stated_together(evidence: Evidence, pool: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The pool re-ranked by score × the share of the question's evidence that one paragraph of
    the document holds, its header counting in every paragraph (`Evidence.together`; issue 16,
    eighth pass), rounded to 4 places, then by the first score and path.

    The first score adds up matches wherever they are, so a feature's README or a long runbook
    that mentions every word once outranks the document whose one paragraph states the answer;
    an answer is stated in one place. On the twelve development folders this moved hit@1 from
    0.601 to 0.687 (English) and 0.577 to 0.659 (Russian); ordering by the share alone, or by
    its square, did less.
    """
    scored = [
        (round_half_up(score * evidence.together(path), 4), score, path) for score, path in pool
    ]
    scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
    return [(final, path) for final, _, path in scored]


def _top(raw: dict[str, float], count: int) -> list[tuple[float, str]]:
    """The first `count` of (score rounded to 4 places, path), by score then path.

    Rounding is monotonic, so only documents whose raw score reaches the rounded `count`-th
    best minus one unit of the last place can tie with or beat it; only those are rounded.
    """
    best = heapq.nlargest(count, raw.values())
    floor = round_half_up(best[-1], 4) - 0.0001
    near = [(round_half_up(value, 4), path) for path, value in raw.items() if value >= floor]
    near.sort(key=lambda item: (-item[0], item[1]))
    return near[:count]


def _term_frequencies(
    index: SearchIndex, tokens: tuple[str, ...], routable: set[str]
) -> dict[str, int]:
    """tf of one §3.9 body form per routable document: the sum over its indexed tokens."""
    if len(tokens) == 1:
        holders = index.postings.get(tokens[0], {})
        return {path: tf for path, tf in holders.items() if path in routable}
    merged: dict[str, int] = {}
    for token in tokens:
        for path, tf in index.postings.get(token, {}).items():
            if path in routable:
                merged[path] = merged.get(path, 0) + tf
    return merged


def _tf_in(index: SearchIndex, tokens: tuple[str, ...], path: str) -> int:
    return sum(index.postings.get(token, {}).get(path, 0) for token in tokens)


def _covers(
    index: SearchIndex,
    forms: dict[str, tuple[str, ...]],
    concept: Concept,
    matches: dict[str, Match],
    path: str,
) -> bool:
    header = index.docs[path].header
    for field in (*header.keys, header.purpose, header.title, *header.sections):
        if any(word in matches for word in field.stems):
            return True
    return any(_tf_in(index, forms.get(variant.form, ()), path) > 0 for variant in concept.body)


def _final_why(
    index: SearchIndex,
    fig: Figures,
    concepts: list[Concept],
    all_matches: list[dict[str, Match]],
    doc: Doc,
) -> list[str]:
    """§3.7's parts for one routed document, plus `body matches "<terms>"` (§3.9 step 7)."""
    header: Header = index.docs[doc.path].header

    def field(stems: tuple[str, ...]) -> tuple[float, list[str]]:
        total = 0.0
        hits: list[str] = []
        for matches in all_matches:
            found = _field_match(stems, matches)
            if found is not None:
                total += found[0]
                hits.append(found[2])
        return total, hits

    key_value, best_key = 0.0, None
    for key_field in header.keys:
        if not key_field.stems:
            continue
        value = field(key_field.stems)[0] / len(key_field.stems)
        if value > key_value:
            key_value, best_key = value, key_field.text
    purpose_value, purpose_hits = field(header.purpose.stems)
    title_value, title_hits = field(header.title.stems)
    section_value, section_title = 0.0, None
    for section in header.sections:
        value = field(section.stems)[0]
        if value > section_value:
            section_value, section_title = value, section.text
    body_terms: list[str] = []
    for concept in concepts:
        best_value, shown = 0.0, ""
        for variant in concept.body:
            value = fig.bm25(variant.form)[1].get(doc.path, 0.0) * variant.discount
            if value > best_value:
                best_value, shown = value, variant.shown
        if best_value > 0:
            body_terms.append(shown)
    parts = _why_parts(
        best_key,
        purpose_hits if purpose_value > 0 else [],
        title_hits if title_value > 0 else [],
        section_title,
        doc.layer,
    )
    if body_terms:
        parts.append(f'body matches "{", ".join(body_terms)}"')
    return parts


def format_route(result: dict[str, Any]) -> str:
    """The human rendering of a route result (spec 04 §9.3)."""
    lines: list[str] = []
    if result["results"] and result.get("answered") is False:
        lines.append("Nothing in the bank answers this question. Closest (weak):")
        lines.append("")
    for item in result["results"]:
        weak = "  (weak)" if item.get("weak") else ""
        lines.append(f"{js_number(item['score']):>7}  {item['path']}{weak}")
        lines.append(
            " " * 9 + f"{item['title']} [{item['docKind'] or '?'} / {item['layer']} / "
            f"{item['status'] or '?'}]"
        )
        lines.append(" " * 9 + f"why: {item['why']}")
        lines.append(" " * 9 + f"purpose: {item['purpose'][:120]}")
        lines.append("")
    if not result["results"]:
        lines.append("(no matches)")
    if "hint" in result and "The bank never mentions" in result["hint"]:
        names = result["hint"].split(ROUTE_HINT)[-1].split(NOTHING_ANSWERS)[-1]
        lines.append("hint: " + names.strip())
    return "\n".join(lines) + "\n"
