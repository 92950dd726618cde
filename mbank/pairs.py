"""Bilingual pairs mined from a bank that mixes Russian and English (issue 16).

Some banks write a Russian purpose under an English title (`FT-012: Self-update command` /
«Canonical owner для интерактивной и unattended команды обновления…»). Across such documents
a Russian stem and an English word that keep turning up together are very likely the same
idea, and the pair reaches Russian questions to words the built-in dictionary lacks.

The mining is deliberately strict, because a wrong pair sends a Russian question to the wrong
document:

- one vote per folder: the documents of one feature package repeat its title words over
  near-identical purposes (`FT-012/brief.md` and `FT-012/design.md`), and copies must not
  count as evidence — a pair must recur in `MIN_DOCUMENTS` different folders;
- a pair needs at least `MIN_DOCUMENTS` votes and a Dice association of at least `MIN_DICE`;
- English words that stand in more than `MAX_SHARE` of the mixed titles (`index`, the
  project's own name) say nothing and are left out;
- competitive linking: the strongest pairs are taken first and each Russian stem and each
  English word is linked at most once, so "навигация … index" cannot also claim `index`
  for every other word of those purposes.

A pure function of the headers it is given; the index calls it when the bank changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from mbank.lang import has_cyrillic, stem, tokenize

MIN_DOCUMENTS = 3
MIN_DICE = 0.7
MAX_SHARE = 0.4
# the fewest folders with mixed documents worth mining: below it every co-occurrence is an accident
MIN_MIXED = 6


def _english_words(title: str) -> frozenset[str]:
    return frozenset(
        word
        for word in tokenize(title)
        if len(word) > 2 and word.isascii() and word.isalpha() and not has_cyrillic(word)
    )


def _russian_stems(purpose: str) -> frozenset[str]:
    return frozenset(stem(word) for word in tokenize(purpose) if has_cyrillic(word))


def mine_pairs(headers: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, ...]]:
    """Russian Snowball stem → English title words, from (path, title, purpose) of a bank.

    Only documents with an all-Latin title and a purpose holding Cyrillic words take part.
    Returns an empty map for a bank with fewer than `MIN_MIXED` such documents.
    """
    # per folder: the stems, the words and the (stem, word) pairs of its mixed documents
    folders: dict[str, tuple[set[str], set[str], set[tuple[str, str]]]] = {}
    for path, title, purpose in headers:
        # the cheap test first: most documents of an English bank have no Russian purpose
        if has_cyrillic(title) or not has_cyrillic(purpose):
            continue
        english = _english_words(title)
        russian = _russian_stems(purpose)
        if english and russian:
            folder = folders.setdefault(path.rpartition("/")[0], (set(), set(), set()))
            folder[0].update(russian)
            folder[1].update(english)
            folder[2].update((ru, en) for ru in russian for en in english)
    if len(folders) < MIN_MIXED:
        return {}
    russian_count: Counter[str] = Counter()
    english_count: Counter[str] = Counter()
    together: Counter[tuple[str, str]] = Counter()
    for stems_here, words_here, pairs_here in folders.values():
        russian_count.update(stems_here)
        english_count.update(words_here)
        together.update(pairs_here)
    too_common = {word for word, count in english_count.items() if count > MAX_SHARE * len(folders)}
    candidates = sorted(
        (
            -2 * count / (russian_count[ru] + english_count[en]),
            -count,
            ru,
            en,
        )
        for (ru, en), count in together.items()
        if count >= MIN_DOCUMENTS and en not in too_common
    )
    linked_ru: set[str] = set()
    linked_en: set[str] = set()
    pairs: dict[str, tuple[str, ...]] = {}
    for negative_dice, _count, ru, en in candidates:
        if -negative_dice < MIN_DICE:
            break
        if ru in linked_ru or en in linked_en:
            continue
        linked_ru.add(ru)
        linked_en.add(en)
        pairs[ru] = (en,)
    return pairs
