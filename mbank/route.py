"""`bank_route`: which documents answer this question (spec 02 §3).

Two rankings live here:

- `route_header_only` — upstream's score of the hand-written header alone (§3.3–§3.7),
  kept as its own function so it can be measured against the final ranking;
- `route` — **mbank:**'s final ranking (§3.9): header evidence (light stemming, field-length
  normalisation) plus body evidence (BM25 over the shared `SearchIndex`'s postings), a lighter
  delivery prior, a transliteration bridge for Russian words the dictionary does not know, and
  two no-answer rules.

Both are pure functions of the snapshot (and of the index, a cache synced on entry).
"""

from __future__ import annotations

import bisect
import math
import re
from typing import Any

import msgspec

from mbank.contract import BUILTIN_WEIGHTS, effective_weights
from mbank.lang import (
    ROUTE_STOP,
    QueryTerm,
    bridge_keys,
    expand_terms,
    has_cyrillic,
    hstem,
    is_why,
    tables_for,
    term_for,
    tokenize,
)
from mbank.model import Doc, LayerMap
from mbank.search import (
    INBOX_LAYER,
    TEMPLATE_FUNCTION,
    FieldRef,
    Header,
    RouteStats,
    SearchIndex,
    js_number,
    round_half_up,
    route_form,
)
from mbank.snapshot import Snapshot

ROUTE_HINT = "No frontmatter match. Try bank_search for a literal term, or widen the question."

TRANSLATION_DISCOUNT = 0.9
PREFIX_MATCH = 0.6
CANONICAL_WEIGHT = 5
PURPOSE_WEIGHT = 3
TITLE_WEIGHT = 2
SECTION_WEIGHT = 1

STATUS_WEIGHTS: dict[str, float] = {"active": 1.0, "draft": 0.7, "archived": 0.2}
OTHER_STATUS_WEIGHT = 0.9
CLOSED_DELIVERY = frozenset({"done", "cancelled"})
WHY_DECISION = 4 / 3
WHY_KNOWLEDGE = 0.8

# §3.9's prior: the delivery weight is 1.0 here (0.6 in the header-only score of §3.5).
ROUTE_LAYER_WEIGHTS: dict[str, float] = {
    "dna": 1.0,
    "knowledge": 1.5,
    "decision": 1.2,
    "delivery": 1.0,
    "flow": 1.0,
    "inbox": 0.2,
    "other": 1.0,
}
K1 = 1.2
B = 0.75
BODY_SHARE = 0.75
COVERAGE_MIN = 0.21
BRIDGE_WORDS = 2


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


class Variant(msgspec.Struct, frozen=True):
    """One form a concept is looked for in: the matched form, its discount, the word shown."""

    form: str
    discount: float
    shown: str


class Concept(msgspec.Struct, frozen=True):
    """A query word with its header variants (`hstem`) and body variants (`en_light`)."""

    literal: str
    header: tuple[Variant, ...]
    body: tuple[Variant, ...]


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


_WORD = re.compile(r"[A-Za-z0-9\u0400-\u04ff]+")
_LATIN_NAME = re.compile(r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*")
_SENTENCE_END = re.compile(r"[.!?]")


def named_terms(question: str) -> list[str]:
    """The names a question uses (§3.9 rule i), as written, without repeats.

    In a question holding Cyrillic: every Latin word (ASCII letters and digits) with at least
    3 letters that is not a stop-word. In an English question: every word with an upper-case
    letter that is not the first word of a sentence, not a stop-word and longer than 1.
    """
    cyrillic = has_cyrillic(question)
    names: dict[str, str] = {}
    previous_end = -1
    for match in _WORD.finditer(question):
        word = match.group()
        sentence_start = previous_end < 0 or bool(
            _SENTENCE_END.search(question, previous_end, match.start())
        )
        previous_end = match.end()
        lower = word.lower()
        if lower in ROUTE_STOP or not _LATIN_NAME.fullmatch(word):
            continue
        if cyrillic:
            if sum(char.isalpha() for char in word) < 3:
                continue
        elif sentence_start or len(word) < 2 or word == lower:
            continue
        names.setdefault(lower, word)
    return list(names.values())


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


def _bridge(index: SearchIndex, token: str) -> list[str]:
    by_key = index.english_words_by_key()
    for key in bridge_keys(token):
        words = by_key.get(key)
        if words:
            ranked = sorted(words, key=lambda word: (-index.english_df(word), word))
            return ranked[:BRIDGE_WORDS]
    return []


def build_concepts(snapshot: Snapshot, index: SearchIndex, question: str) -> list[Concept]:
    """One concept per distinct query token, with dictionary and bridge translations."""
    tables = tables_for(snapshot.vocabulary)
    concepts: list[Concept] = []
    for token in dict.fromkeys(tokenize(question)):
        term = term_for(token, tables)
        translations = list(term.translations)
        if (
            term.stem is None
            and has_cyrillic(token)
            and token not in index.postings
            and token not in index.header_words
        ):
            translations.extend(word for word in _bridge(index, token) if word != token)
        header = [Variant(hstem(token), 1.0, token)]
        header += [Variant(hstem(t), TRANSLATION_DISCOUNT, t) for t in translations]
        body: dict[str, Variant] = {}
        for shown, discount in [(token, 1.0), *((t, TRANSLATION_DISCOUNT) for t in translations)]:
            form = route_form(shown)
            if form not in body:
                body[form] = Variant(form, discount, shown)
        concepts.append(Concept(token, tuple(header), tuple(body.values())))
    return concepts


# (value, -variant position, word shown): max() prefers the higher value, then the earlier
# variant, so the typed word wins ties and the first translation beats later ones.
Match = tuple[float, int, str]


def _header_matches(index: SearchIndex, concept: Concept) -> dict[str, Match]:
    """Stemmed header word → the concept's best match on it (§3.4's `match_word` per variant)."""
    matches: dict[str, Match] = {}
    postings = index.header_postings

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


class Scored(msgspec.Struct, frozen=True):
    """A routed document before it becomes a result."""

    path: str
    score: float


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
    most 2 decimals" describes the header-only score). A `hint` accompanies an empty list,
    and also a non-empty one when every name the question uses is unknown to the bank.
    """
    index.sync(snapshot)
    names = named_terms(question)
    unknown = [name for name in names if not bank_mentions(index, name)]
    never = f"The bank never mentions: {', '.join(unknown)}." if unknown else ""
    empty = _empty(f"{ROUTE_HINT} {never}" if never else ROUTE_HINT)

    concepts = build_concepts(snapshot, index, question)
    stats = index.route_stats()
    if not concepts or stats.n == 0:
        return empty
    routable = index.routable
    docs = index.docs

    # Header evidence: Σ_c v_c per (document, field), through the header postings.
    field_sums: dict[tuple[str, FieldRef], float] = {}
    all_matches: list[dict[str, Match]] = []
    for concept in concepts:
        matches = _header_matches(index, concept)
        all_matches.append(matches)
        best: dict[tuple[str, FieldRef], float] = {}
        for word, (value, _position, _shown) in matches.items():
            for path, refs in index.header_postings[word].items():
                if path not in routable:
                    continue
                for ref in refs:
                    slot = (path, ref)
                    if value > best.get(slot, 0.0):
                        best[slot] = value
        for slot, value in best.items():
            field_sums[slot] = field_sums.get(slot, 0.0) + value

    header_parts: dict[str, list[float]] = {}  # path -> [C, P, T, S]
    for (path, (field_kind, position)), total in field_sums.items():
        parts = header_parts.setdefault(path, [0.0, 0.0, 0.0, 0.0])
        header = docs[path].header
        if field_kind == "k":
            value = total / len(header.keys[position].stems) * CANONICAL_WEIGHT
            parts[0] = max(parts[0], value)
        elif field_kind == "p":
            norm = 0.75 + 0.25 * len(header.purpose.words) / stats.avg_purpose
            parts[1] = total / norm
        elif field_kind == "t":
            norm = 0.75 + 0.25 * len(header.title.words) / stats.avg_title
            parts[2] = total / norm
        else:
            parts[3] = max(parts[3], total)

    # Body evidence: BM25 over the search postings, each concept by its best variant.
    forms = index.route_forms()
    idf_total = 0.0
    body_total: dict[str, float] = {}
    variant_idf: list[list[float]] = []
    for concept in concepts:
        idf_concept = 0.0
        idfs: list[float] = []
        best_body: dict[str, float] = {}
        for variant in concept.body:
            frequencies = _term_frequencies(index, forms.get(variant.form, ()), routable)
            df = len(frequencies)
            idf = math.log(1 + (stats.n - df + 0.5) / (df + 0.5))
            idfs.append(idf)
            idf_concept = max(idf_concept, idf)
            weight = variant.discount * idf * (K1 + 1)
            for path, tf in frequencies.items():
                norm = K1 * (1 - B + B * docs[path].length / stats.avgdl)
                value = weight * tf / (tf + norm)
                if value > best_body.get(path, 0.0):
                    best_body[path] = value
        variant_idf.append(idfs)
        idf_total += idf_concept
        for path, value in best_body.items():
            body_total[path] = body_total.get(path, 0.0) + value
    concept_idf = [max(idfs) for idfs in variant_idf]

    why_intent = is_why(question)
    weights = _why_adjusted(route_layer_weights(snapshot.layers), why_intent)
    n = len(concepts)
    scored: list[Scored] = []
    for path in header_parts.keys() | body_total.keys():
        doc = snapshot.docs[path]
        if _excluded(doc, kind, layer):
            continue
        found = header_parts.get(path)
        header_value = (
            found[0] + PURPOSE_WEIGHT * found[1] + TITLE_WEIGHT * found[2] + found[3]
            if found is not None
            else 0.0
        )
        evidence = header_value / (11 * n) + BODY_SHARE * body_total.get(path, 0.0) / (
            (K1 + 1) * idf_total
        )
        if evidence <= 0:
            continue
        prior = weights.get(doc.layer, 1.0) * status_weight(doc.status)
        scored.append(Scored(path, round_half_up(evidence * prior, 4)))
    if not scored:
        return empty
    scored.sort(key=lambda item: (-item.score, item.path))

    top = scored[0].path
    covered = sum(
        concept_idf[position]
        for position, concept in enumerate(concepts)
        if _covers(index, forms, concept, all_matches[position], top)
    )
    if covered < COVERAGE_MIN * idf_total:
        return empty

    results = [
        _result(
            snapshot.docs[item.path],
            item.score,
            _final_why(
                index, forms, concepts, all_matches, variant_idf, stats, snapshot.docs[item.path]
            ),
        )
        for item in scored[: max(limit, 0)]
    ]
    outcome: dict[str, Any] = {"results": results}
    if not results:
        return empty
    if names and len(unknown) == len(names):
        outcome["hint"] = never
    return outcome


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
    forms: dict[str, tuple[str, ...]],
    concepts: list[Concept],
    all_matches: list[dict[str, Match]],
    variant_idf: list[list[float]],
    stats: RouteStats,
    doc: Doc,
) -> list[str]:
    """§3.7's parts for one routed document, plus `body matches "<terms>"` (§3.9 step 7)."""
    path = doc.path
    info = index.docs[path]
    header: Header = info.header

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
    for position, concept in enumerate(concepts):
        best_value, shown = 0.0, ""
        for variant, idf in zip(concept.body, variant_idf[position], strict=True):
            tf = _tf_in(index, forms.get(variant.form, ()), path)
            if tf == 0:
                continue
            norm = K1 * (1 - B + B * info.length / stats.avgdl)
            value = variant.discount * idf * tf * (K1 + 1) / (tf + norm)
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
    for item in result["results"]:
        lines.append(f"{js_number(item['score']):>7}  {item['path']}")
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
        lines.append("hint: " + result["hint"].split(ROUTE_HINT)[-1].strip())
    return "\n".join(lines) + "\n"
