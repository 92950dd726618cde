"""The concepts of a routed question (spec 02 §3.9, issue 16): one per distinct query word.

A concept is the word the asker typed plus its equivalents in the other language: dictionary
and colloquial translations (`mbank.lang`), the bilingual pairs this bank itself shows, and,
for a Russian word the tables do not know, the transliteration bridge's guesses at English
words of the bank. `mbank.route` ranks documents by them and `mbank.route_answer` weighs them
as evidence. Pure functions of the snapshot, the index and the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

import msgspec

from mbank.lang import (
    EVERYDAY_KEYS,
    EVIDENCE_STOP,
    ROUTE_STOP,
    bridge_keys,
    has_cyrillic,
    hstem,
    other_spelling,
    ru_light,
    stem,
    tables_for,
    term_for,
    tokenize,
    transliterate,
)
from mbank.projection import Snapshot
from mbank.search import SearchIndex, exact_form, route_form

TRANSLATION_DISCOUNT = 0.9
BRIDGE_WORDS = 2
# how alike (difflib's ratio) a transliterated Russian word and an English bank word must be
# spelled, vowels included, for the bridge to take one for the other (`spelling_agrees`)
BRIDGE_SPELLING = 0.7

# a word of a question, Latin or Cyrillic, as `named_terms` and `route.unfamiliar_words` read it
QUESTION_WORD = re.compile(r"[A-Za-z0-9\u0400-\u04ff]+")
_LATIN_NAME = re.compile(r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*")
_SENTENCE_END = re.compile(r"[.!?]")


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
    # every translation is a transliteration-bridge guess (no dictionary or mined pair)
    guessed: bool = False
    # its dictionary key was found only after stripping a verbal prefix (пере+загрузка -> загрузк)
    stripped: bool = False
    # a Russian word of everyday speech (its key is in `frequent.tsv`)
    everyday: bool = False


def named_terms(question: str) -> list[str]:
    """The names a question uses (§3.9 rule i), as written, without repeats.

    In a question holding Cyrillic: every Latin word (ASCII letters and digits) with at least
    3 letters that is not a stop-word. In an English question: every word with an upper-case
    letter that is not the first word of a sentence, not a stop-word and longer than 1.
    """
    cyrillic = has_cyrillic(question)
    names: dict[str, str] = {}
    previous_end = -1
    for match in QUESTION_WORD.finditer(question):
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


def spelling_agrees(spelled: str, word: str) -> bool:
    """Whether a transliterated Russian word and an English one agree in their vowels as well as
    in their consonants (issue 16, fifth pass).

    The bridge key is a consonant skeleton, and a skeleton of three or four letters is often
    shared by chance: просто "prst" is persist, поправить "prv" is preview, ротируют "rtr" is
    rather, взялось "vsl" is visual. A loanword keeps its vowels too (раннер ranner ~ runner,
    тикет tiket ~ ticket, дашборд dashbord ~ dashboard), so the whole spellings must be at
    least `BRIDGE_SPELLING` alike.
    """
    return SequenceMatcher(None, spelled, word).ratio() >= BRIDGE_SPELLING


def bridge(index: SearchIndex, token: str) -> list[str]:
    """Up to two English bank words a Russian word transliterates to, most frequent first.

    Keys are tried in `bridge_keys` order; the first one shared with an English word of the
    routable documents (document frequency above 0) gives the translations.
    """
    by_key = index.english_words_by_key()
    spelled = transliterate(ru_light(token))
    for key in bridge_keys(token):
        ranked = sorted(
            (-df, word)
            for word in by_key.get(key, ())
            if (df := index.english_df(word)) > 0 and spelling_agrees(spelled, word)
        )
        if ranked:
            return [word for _df, word in ranked[:BRIDGE_WORDS]]
    return []


def unwritten_name(index: SearchIndex, token: str, names: frozenset[str]) -> bool:
    """Whether `token` is a name of the question (`named_terms`, lower-cased) that the bank
    never writes, as a token or a header word, as written or with a plural `s` (issue 16,
    eleventh pass). Snowball takes "coverity" to "cover" and "reviewable" to "review": a
    name is not a word of the bank's prose because its stem is, so such a name is looked for
    as written only."""
    if token not in names or has_cyrillic(token):
        return False
    singular = token[:-1] if token.endswith("s") and len(token) > 4 else token
    return not any(
        form in index.postings or form in index.header_words for form in {token, singular}
    )


def build_concepts(
    snapshot: Snapshot, index: SearchIndex, question: str, names: Sequence[str] | None = None
) -> list[Concept]:
    """One concept per distinct query token, with dictionary and bridge translations; `names` are
    the question's `named_terms` when the caller has them already."""
    tables = tables_for(snapshot.vocabulary)
    named = frozenset(name.lower() for name in (named_terms(question) if names is None else names))
    concepts: list[Concept] = []
    stems: set[str] = set()
    for token in dict.fromkeys(tokenize(question)):
        # one concept per stem (issue 16, fourth pass): «файл … lock-файлы» asks about files
        # once; two concepts counted a common word twice in the ranking and the verdict
        if route_form(token) in stems:
            continue
        stems.add(route_form(token))
        # function words (`lang.EVIDENCE_STOP`) name no topic: as concepts they only matched
        # documents that use "то", "самое" or "after" (issue 16, third pass)
        if token in EVIDENCE_STOP:
            continue
        term = term_for(token, tables)
        # a word the dictionary translates only into function words («умеет» can, «бывают»
        # are, «нужно» need) is one itself (issue 16, fourth pass): its translations are
        # never indexed, so it weighed as a word the bank lacks
        if (
            has_cyrillic(token)
            and term.translations
            and all(word in EVIDENCE_STOP for word in term.translations)
        ):
            continue
        translations = list(term.translations)
        if has_cyrillic(token):
            # pairs this bank itself shows (a Russian purpose over an English title)
            mined = index.bilingual_pairs().get(stem(token), ())
            translations.extend(word for word in mined if word not in translations)
        if (
            term.stem is None
            and has_cyrillic(token)
            and token not in index.postings
            and token not in index.header_words
        ):
            translations.extend(word for word in bridge(index, token) if word != token)
        guessed = len(translations) > len(term.translations) and not term.translations
        if unwritten_name(index, token, named):
            # matched as written: its stem is some other word of the bank ("cover"); a Latin
            # token is never filed under its exact form, so the body variant matches nothing
            concepts.append(
                Concept(
                    token,
                    (Variant(token, 1.0, token),),
                    (Variant(exact_form(token), 1.0, token),),
                )
            )
            continue
        # the same word in the other spelling (behaviour, behavior) is the word itself
        other = other_spelling(token)
        spellings = [token] if other is None else [token, other]
        header = [Variant(hstem(word), 1.0, word) for word in spellings]
        header += [Variant(hstem(t), TRANSLATION_DISCOUNT, t) for t in translations]
        body: dict[str, Variant] = {}
        typed = [(word, 1.0) for word in spellings]
        for shown, discount in [*typed, *((t, TRANSLATION_DISCOUNT) for t in translations)]:
            # a Russian word that translates an English one is a dictionary key, not a word the
            # asker typed: it matches its own form, not every word sharing its Snowball stem
            form = (
                exact_form(shown) if shown != token and has_cyrillic(shown) else route_form(shown)
            )
            if form not in body:
                body[form] = Variant(form, discount, shown)
        concepts.append(
            Concept(
                token,
                tuple(header),
                tuple(body.values()),
                guessed,
                term.prefix_stripped,
                term.stem in EVERYDAY_KEYS,
            )
        )
    return concepts
