"""Whether a word is ordinary English, for `bank_route`'s `answered` (issue 16, eighth pass).

A question written in English names the thing it asks about. A capitalised name ("PagerDuty")
is caught by `route.named_terms`, but developers type tool names in lower case: "does the fix
stage run gofumpt", "a justfile", "tmux", "junit reports". When such a word is absent from the
bank, it is what the question is about, and it should weigh as a name the bank never mentions
(`route_answer.UNKNOWN_NAME_WEIGHT`), not as one ordinary word among five. Telling "gofumpt"
from "halfway" (an everyday word the bank happens not to use, which says nothing about the
topic) needs a list of English words, and a good one has to be large: `pyspellchecker`'s English
frequency list (160,000 words with their inflections, MIT-licensed, pure Python) is a
well-kept one, so mbank uses it rather than a list of its own.

The list holds names that are English words too ("bun", "yarn", "helm", "rust"): for them
`lang_data/tool_names.tsv` wins (ninth pass), since a developer's question means the tool.

Loading the list costs about 0.3 s, so it is loaded on the first question that needs it (an
English question holding a lower-case word the bank holds in no form) and kept for the process.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from mbank.lang import data_rows, other_spelling

if TYPE_CHECKING:
    from spellchecker import SpellChecker

# a British -ise form the list may hold only in its -ize spelling (categorised, categorized)
_BRITISH_ISE = re.compile(r"is(e|ed|es|ing|ation|ations)$")


# names that are English words too, which a developer's question means as the tool (tool_names.tsv)
TOOL_NAMES = frozenset(row[0] for row in data_rows("tool_names"))


@functools.cache
def everyday_ranks() -> dict[str, int]:
    """The 5,000 most frequent everyday English words (`lang_data/en_everyday.tsv`), each with
    its 0-based rank; read on the first question that asks."""
    return {row[0]: rank for rank, row in enumerate(data_rows("en_everyday"))}


@functools.cache
def _english() -> SpellChecker:
    # imported here: importing the package alone costs 6 ms of every start
    from spellchecker import SpellChecker

    # distance 1: the checker's correction candidates are never asked for, only membership
    return SpellChecker(language="en", distance=1)


def is_ordinary_english(word: str) -> bool:
    """Whether `word` (lower case, letters only) is in the English word list, in its British or
    American spelling (`lang.other_spelling`, and any -ise form as -ize), and not a tool's name
    (`TOOL_NAMES`)."""
    if word in TOOL_NAMES:
        return False
    english = _english()
    if word in english or _BRITISH_ISE.sub(r"iz\1", word) in english:
        return True
    other = other_spelling(word)
    return other is not None and other in english
