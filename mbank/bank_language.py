"""The language a bank is written in, measured from its own words (issue 15).

The server's instructions tell the agent what language the documents are in (spec 04 §5), so
that it passes questions as asked and reads answers in the right language. A fixed "English"
misdescribes a bank written in Russian. The measure: the share of the
documents whose purpose (the one hand-written sentence every governed document has; its title
when it has none) is Russian, meaning at least a fifth of its letters are Cyrillic. A Russian
sentence keeps English identifiers and terms, so letters alone undercount it; reading bodies
would cost a read of every file at startup. Only English and Russian are told apart: those are
the two languages routing understands (`mbank.lang`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from mbank.model import Doc

Language = Literal["English", "Russian", "Russian and English"]

# A text is Russian from this share of Cyrillic letters; a bank from these shares of texts.
RUSSIAN_TEXT = 0.2
RUSSIAN = 0.6
MIXED = 0.15


def cyrillic_share(text: str) -> float | None:
    """Cyrillic letters over all letters in `text`; None when it has no letter."""
    cyrillic = letters = 0
    for char in text:
        if char.isalpha():
            letters += 1
            if "\u0400" <= char <= "\u04ff":
                cyrillic += 1
    return cyrillic / letters if letters else None


def russian_share(docs: Iterable[Doc]) -> float | None:
    """The share of documents whose purpose (else title) reads as Russian; None if none has
    a letter in either."""
    russian = counted = 0
    for doc in docs:
        share = cyrillic_share(doc.purpose)
        if share is None:
            share = cyrillic_share(doc.title)
        if share is None:
            continue
        counted += 1
        russian += share >= RUSSIAN_TEXT
    return russian / counted if counted else None


def bank_language(docs: Iterable[Doc]) -> Language:
    """The language the bank's documents are written in, as measured (English when empty)."""
    share = russian_share(docs)
    if share is None or share < MIXED:
        return "English"
    return "Russian" if share >= RUSSIAN else "Russian and English"
