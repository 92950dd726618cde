"""Section matching and section spans, shared by `bank_read` and the section-scoped writes.

Spec 01 §5.2–§5.3: a section is a top-level `##` heading; a caller names it loosely and the
match is Unicode-aware (NFC, casefold, runs of non-letters/digits collapsed), exact before a
unique "contains", and an ambiguous or empty name is refused instead of silently taking the
first heading, as upstream's ASCII-only normalisation did for Cyrillic titles.
"""

from __future__ import annotations

import re
import unicodedata

from mbank.model import Doc, Section
from mbank.paths import refuse

_NOT_WORD = re.compile(r"[\W_]+")


def norm(text: str) -> str:
    """The comparison form of a heading or a target (spec 01 §5.3 step 1)."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


def _titles(sections: tuple[Section, ...] | list[Section]) -> str:
    return " | ".join(section.title for section in sections) if sections else "(none)"


def match_section(doc: Doc, target: str) -> Section:
    """The section of `doc` that `target` names, or a `section-not-found`/`-ambiguous` refusal."""
    wanted = norm(target)
    if wanted:
        for section in doc.sections:
            if norm(section.title) == wanted:
                return section
        containing = [section for section in doc.sections if wanted in norm(section.title)]
        if len(containing) == 1:
            return containing[0]
        if len(containing) > 1:
            raise refuse(
                "section-ambiguous",
                f'Section "{target}" matches several sections in {doc.path}: '
                f"{_titles(containing)}. Give the full heading.",
            )
    raise refuse(
        "section-not-found",
        f'Section "{target}" not found in {doc.path}. Available: {_titles(doc.sections)}',
    )


def _line_offsets(text: str) -> list[int]:
    """Character offset at which each `\\n`-separated line starts, plus one past the end."""
    offsets = [0]
    position = text.find("\n")
    while position >= 0:
        offsets.append(position + 1)
        position = text.find("\n", position + 1)
    offsets.append(len(text) + 1)
    return offsets


def section_span(text: str, doc: Doc, section: Section) -> tuple[int, int]:
    """Character offsets `[start, end)` of a section in `text` (spec 01 §5.2).

    `start` is the beginning of the heading line; `end` is the beginning of the next section's
    heading line, or `len(text)`. H1 and H3+ headings inside the span belong to it. The span of
    a document's last section therefore includes the file's trailing newline, if any.
    """
    offsets = _line_offsets(text)
    last_line = len(offsets) - 1  # number of lines
    start_line = min(section.line, last_line) - 1
    start = offsets[start_line]
    end = len(text)
    for other in doc.sections:
        if other.line > section.line:
            if other.line - 1 < last_line:
                end = offsets[other.line - 1]
            break
    return start, min(end, len(text))


def section_text(text: str, doc: Doc, section: Section) -> str:
    """The section's lines, heading included, trailing whitespace stripped (spec 02 §5.2)."""
    start, end = section_span(text, doc, section)
    return text[start:end].rstrip()
