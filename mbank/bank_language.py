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

import os
import re
from collections.abc import Iterable, Iterator
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


def russian_share(headers: Iterable[tuple[str, str]]) -> float | None:
    """The share of `(purpose, title)` headers whose purpose (else title) reads as Russian;
    None if none has a letter in either."""
    russian = counted = 0
    for purpose, title in headers:
        share = cyrillic_share(purpose)
        if share is None:
            share = cyrillic_share(title)
        if share is None:
            continue
        counted += 1
        russian += share >= RUSSIAN_TEXT
    return russian / counted if counted else None


def language_of(headers: Iterable[tuple[str, str]]) -> Language:
    """The language of documents with these `(purpose, title)` headers (English when none)."""
    share = russian_share(headers)
    if share is None or share < MIXED:
        return "English"
    return "Russian" if share >= RUSSIAN else "Russian and English"


def bank_language(docs: Iterable[Doc]) -> Language:
    """The language the bank's documents are written in, as measured (English when empty)."""
    return language_of((doc.purpose, doc.title) for doc in docs)


# --------------------------------------------------------------------------------------------
# Before the handshake: a bounded sample of headers, not a parse of the whole bank
# --------------------------------------------------------------------------------------------

# The instructions go out with the `initialize` answer, before any refresh: parsing a whole
# bank there (0.4–0.5 s on a 250-document bank, seconds at 10,000) would delay every session's
# first answer. A sample of headers read from the top of each file measures the same share.
SAMPLE_FILES = 120
PER_DIRECTORY = 12
HEAD_BYTES = 4096
_FIELD = re.compile(r"^(purpose|title):[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def _sample_paths(root: str) -> Iterator[str]:
    """Up to PER_DIRECTORY markdown files per directory, breadth first, dot-names skipped."""
    queue = [root]
    while queue:
        directory = queue.pop(0)
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        taken = 0
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                queue.append(entry.path)
            elif (
                taken < PER_DIRECTORY
                and entry.name.endswith(".md")
                and entry.is_file(follow_symlinks=False)
            ):
                taken += 1
                yield entry.path


def _header_of(path: str) -> tuple[str, str] | None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    fields = {key: value.strip("'\"") for key, value in _FIELD.findall(head.split("\n---", 1)[0])}
    return fields.get("purpose", ""), fields.get("title", "")


def sampled_language(root: str) -> Language:
    """The bank's language from the headers of a bounded, spread sample of its files."""
    headers: list[tuple[str, str]] = []
    for path in _sample_paths(root):
        header = _header_of(path)
        if header is not None:
            headers.append(header)
        if len(headers) >= SAMPLE_FILES:
            break
    return language_of(headers)
