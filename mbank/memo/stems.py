"""English and Spanish word stems for the memo's intent router (issue 19), by Snowball.

`snowballstemmer` is the reference implementation of the Snowball stemmers in pure Python.
Two Spanish facts it leaves to us, both needed by verbs an agent types in the imperative:
stem-changing verbs (`recuerda`/`recordar`, `cierra`/`cerrar`: the stressed `ue`/`ie` of the
stem is folded to `o`/`e` on both sides) and attached pronouns (`bórralo` → `borra`).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]

_ENGLISH = snowballstemmer.stemmer("english")
_SPANISH = snowballstemmer.stemmer("spanish")
_LOCK = threading.Lock()  # a Snowball stemmer object keeps state between calls
_WORD = re.compile(r"\w+")
_CLITICS = ("los", "las", "les", "nos", "lo", "la", "le", "me", "te", "se")


def folded_words(text: str) -> list[str]:
    """Lower-case words of at least two letters, accents dropped (`decisión` → `decision`)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return [w for w in _WORD.findall(text) if len(w) > 1 and not w.isdigit()]


@lru_cache(maxsize=4096)
def english_stem(word: str) -> str:
    """The Snowball English stem of a folded word."""
    with _LOCK:
        stem: str = _ENGLISH.stemWord(word)
    return stem


@lru_cache(maxsize=4096)
def spanish_stem(word: str) -> str:
    """The Snowball Spanish stem of a folded word, its stressed diphthong folded."""
    with _LOCK:
        stem: str = _SPANISH.stemWord(word)
    return stem.replace("ue", "o").replace("ie", "e")


@lru_cache(maxsize=4096)
def spanish_stems(word: str) -> frozenset[str]:
    """`spanish_stem(word)`, plus the stem of the word without an attached pronoun when it
    ends with one (`borralo` → `borr`): what a typed word may mean."""
    stems = {spanish_stem(word)}
    for clitic in _CLITICS:
        if word.endswith(clitic) and len(word) - len(clitic) >= 4:
            stems.add(spanish_stem(word[: -len(clitic)]))
            break
    return frozenset(stems)
