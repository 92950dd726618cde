"""Literal search: true occurrences of a query, and the document that defines it (issue 16).

Upstream's search counted word pieces: `instances.json` reported 121 hits for 7 occurrences,
`FT-` cited a line without "FT-", and a feature that mentions a literal outranked the
domain, ops or engineering document that defines it in 12 of 14 measured misses. Here:

- `is_literal(query)`: a query with punctuation (`FT-`, `instances.json`, `--no-detect`,
  `CHK-*`) is a literal: what it matches must contain it, as written (case aside), and
  word-piece matches come after, labelled. `is_exact`: a literal or a phrase of several
  words, whose holders are ranked first by `definition_score`.
- `occurrences(body, literal)`: the true count — non-overlapping occurrences in the
  lower-cased body; for a single plain word, whole-word occurrences only.
- `definition_score(...)`: how much a document reads as the one that defines the literal —
  its own path naming it (a feature package's folder), a heading that names it, a table row
  or list item that starts with it or gives it after a short label (`- test data: `x``), a
  `literal:` or `literal —` line, ownership through `canonical_for`, the title or purpose, a
  header about the literal's word pieces (`topic_share`), a code span —
  plus the document's layer (knowledge and governance define, delivery mentions) and,
  lightly, how often it says it. An index document, which lists literals without defining
  them, loses a little.
- `literal_excerpt(...)`: the line that shows it, the defining line first, cut around the
  literal when the line is long.

Pure functions of their arguments.
"""

from __future__ import annotations

import functools
import math
import re

from mbank.contract import LAYER_WEIGHTS
from mbank.lang import stem
from mbank.model import INDEX_FUNCTION, Doc

EXCERPT_MAX = 240
# the part of a definition a document's layer carries (see `LayerWeights.defines`)
LAYER_DEFINES: dict[str, float] = {layer: w.defines for layer, w in LAYER_WEIGHTS.items()}
DEFINING_LINE = 3.0
HEADING = 3.0
LEAD_IN = 2.5
OWNS = 3.0
# the document's own path names the literal (`features/FT-042/brief.md` for `FT-042`): it is
# that thing's home, above a registry row that lists it
NAMED_BY_PATH = 4.0
TITLE_OR_PURPOSE = 2.0
CODE_SPAN = 1.0
LAYER = 2.0
INDEX_PENALTY = 1.5
# a literal of several word pieces (`tools/agentscope/test/fixtures/`) names what it is about:
# a document whose title or purpose holds at least two of those pieces (its
# topic is the testing policy) defines it more than one that lists it in passing
TOPIC = 2.0
TOPIC_PIECES = 2
FREQUENCY_CAP = 1.0

# a word of a lower-cased text; a query or literal that is one whole word is "plain"
_WORD = re.compile(r"[a-z0-9\u0400-\u04ff]+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# the same mark matched from a line start inside a body (`match(body, pos)` ignores `^`)
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_DECORATION = "`*_\"'[ "
# a list item's short label before the literal it gives: `- committed test data: `x``
# (the literal right after the colon and its spaces: `**Verification:** `x`` is a log line)
_LABEL = re.compile(r"[^:\n`|]{1,40}:[ \t]*[`*_\"'\[]*")


_SPACED = re.compile(r"[a-z0-9\u0400-\u04ff]+(?:\s+[a-z0-9\u0400-\u04ff]+)*")


def is_literal(query: str) -> bool:
    """True for a query holding punctuation (`FT-`, `instances.json`, `--no-detect`)."""
    text = query.strip().lower()
    return bool(text) and not _SPACED.fullmatch(text)


def is_exact(query: str) -> bool:
    """True for a literal or a phrase of several words: looked for as written, first."""
    text = query.strip().lower()
    return bool(text) and not _WORD.fullmatch(text)


def occurrences(body: str, literal: str) -> int:
    """How many times the lower-cased `body` holds `literal` (whole words for a plain word)."""
    if not literal:
        return 0
    if _WORD.fullmatch(literal):
        return len(_whole_word(literal).findall(body))
    return body.count(literal)


@functools.lru_cache(maxsize=256)
def _whole_word(word: str) -> re.Pattern[str]:
    """`word` not inside a longer word, compiled once per word (a search counts it in every
    matching document)."""
    return re.compile(rf"(?<![a-z0-9\u0400-\u04ff]){re.escape(word)}(?![a-z0-9\u0400-\u04ff])")


def _starts_with(text: str, literal: str) -> bool:
    """Whether `text`, its decoration (backticks, bold, quotes) aside, begins with `literal`."""
    stripped = text.lstrip().lstrip(_DECORATION)
    return stripped.startswith(literal)


def line_kind(line: str, literal: str) -> float:
    """How strongly one lower-cased line defines `literal` (0 when it only mentions it)."""
    if literal not in line:
        return 0.0
    stripped = line.lstrip()
    if stripped.startswith("#"):
        # the H1 is the title, which `definition_score` counts once; a deeper heading names
        # a section about the literal
        return HEADING if stripped.startswith("##") else 0.0
    if stripped.startswith("|"):
        # a row whose first cell is the literal (not a path or sentence that holds it)
        cells = stripped.strip("|").split("|")
        return DEFINING_LINE if cells and _starts_with(cells[0], literal) else 0.0
    item = _LIST_MARK.match(line)
    if item is not None:
        rest = line[item.end() :]
        label = _LABEL.match(rest)
        if _starts_with(rest, literal) or (
            label is not None and rest[label.end() :].startswith(literal)
        ):
            return DEFINING_LINE
    if _starts_with(line, literal):
        rest = line.lstrip().lstrip(_DECORATION)[len(literal) :].lstrip(_DECORATION)
        if rest[:1] in (":", "—", "–", "=", "-", "("):
            return LEAD_IN
    return 0.0


def defining_shapes(literal: str) -> tuple[str, str, str]:
    """`line_kind`'s three shapes as patterns of one line, each from its start: a row or
    list item that starts with `literal`, a deeper heading that names it, a line that leads
    in with it."""
    lit = re.escape(literal)
    decoration = r"[`*_\"'\[ \t]*"
    return (
        rf"[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+|\|){decoration}{lit}",
        rf"[ \t]*##[^\n]*{lit}",
        rf"{decoration}{lit}[`*_\"'\] \t]*[:—–=(-]",
    )


@functools.lru_cache(maxsize=256)
def _line_pattern(literal: str) -> re.Pattern[str]:
    """The three shapes in one pattern, the lead-in last as group `lead`: one `match` per
    line tells a defining line (no `lead`) from a line that only leads in."""
    row_or_item, heading, lead_in = defining_shapes(literal)
    return re.compile(rf"(?:{row_or_item}|{heading})|(?P<lead>{lead_in})")


def _best_line(body: str, literal: str) -> float:
    """`DEFINING_LINE` when a line of `body` defines `literal` (a row or list item that starts
    with it, a deeper heading that names it, a label before it), else `LEAD_IN` when a line
    leads in with it, else 0.

    Each shape can match only from the start of a line where an occurrence of the literal
    starts (what comes before the literal never holds a newline), so only those lines are
    tried, each from its start, every occurrence counted (overlapping ones too): the same
    answer as a multi-line search of the whole body, without its scan of every line, which
    was half of a search's time at 10,000 documents. The label check (`labelled_at`) looks
    at the non-overlapping occurrences, as `find` steps through them.
    """
    pattern = _line_pattern(literal)
    leads_in = False
    tried = -1
    labels_from = 0
    item = False
    one_line = "\n" not in literal
    at = body.find(literal)
    while at >= 0:
        start = body.rfind("\n", 0, at) + 1
        if start != tried:
            tried = start
            shaped = pattern.match(body, start)
            if shaped is not None:
                if shaped.group("lead") is None:
                    return DEFINING_LINE
                leads_in = True
            item = _ITEM.match(body, start) is not None
        if not item and one_line:
            # only a list item's occurrence can be labelled, and every shape of this line was
            # tried: go on from the next line (a 20 MB body of one word repeated took 5 s)
            end = body.find("\n", at)
            at = body.find(literal, end + 1) if end >= 0 else -1
            continue
        if at >= labels_from:
            if labelled_at(body, start, at):
                return DEFINING_LINE
            labels_from = at + len(literal)
        at = body.find(literal, at + 1)
    return LEAD_IN if leads_in else 0.0


def labelled_at(body: str, start: int, at: int) -> bool:
    """Whether the line of `body` from `start` is a list item giving the literal at `at` after
    a short label (`- test data: `x``)."""
    item = _ITEM.match(body, start, at)
    return item is not None and _LABEL.fullmatch(body, item.end(), at) is not None


@functools.lru_cache(maxsize=4096)
def _pieces(text: str) -> frozenset[str]:
    """The stems of the words of 3 letters or more (digits aside) of a lower-cased text."""
    return frozenset(
        stem(word) for word in _WORD.findall(text) if len(word) >= 3 and not word.isdigit()
    )


def topic_share(doc: Doc, literal: str) -> float:
    """The share of the literal's word pieces that the document's header is about (0 when
    fewer than `TOPIC_PIECES` of them are there)."""
    pieces = _pieces(literal)
    if len(pieces) < TOPIC_PIECES:
        return 0.0
    header = _pieces(f"{doc.title} {doc.purpose}".lower())
    shared = len(pieces & header)
    return shared / len(pieces) if shared >= TOPIC_PIECES else 0.0


@functools.lru_cache(maxsize=256)
def _literal_forms(literal: str) -> tuple[str, str, str]:
    """The forms of `literal` `definition_score` compares with every holder, made once per
    literal: its last path segment, that segment without `.md`, and its words joined by `_`
    (a `canonical_for` key's form)."""
    stem = literal.strip("/").rsplit("/", 1)[-1]
    return stem, stem.removesuffix(".md"), "_".join(_WORD.findall(literal))


def definition_score(doc: Doc, body: str, literal: str, count: int) -> float:
    """How much `doc` reads as the document that defines `literal` (lower-cased)."""
    score = _best_line(body, literal)  # 0 when the body does not hold it
    stem, bare_stem, key_form = _literal_forms(literal)
    segments = [part.lower().removesuffix(".md") for part in doc.path.split("/")]
    if stem and (stem in segments or bare_stem in segments):
        score += NAMED_BY_PATH
    if key_form and any(key_form in key.lower() for key in doc.canonical_for):
        score += OWNS
    if literal in doc.title.lower() or literal in doc.purpose.lower():
        score += TITLE_OR_PURPOSE
    if f"`{literal}" in body:
        score += CODE_SPAN
    score += TOPIC * topic_share(doc, literal)
    score += LAYER * LAYER_DEFINES.get(doc.layer, 0.4)
    if doc.doc_function == INDEX_FUNCTION:
        score -= INDEX_PENALTY
    score += min(math.log2(1 + count) / 2, FREQUENCY_CAP)
    return max(score, 0.0)


def literal_excerpt(
    raw_lines: list[str], body_offset: int, body: str, literal: str
) -> tuple[str, int]:
    """The line that shows `literal`, preferring the one that defines it, and its 1-based line.

    A line longer than `EXCERPT_MAX` is cut to a window around the literal, so the excerpt
    always contains it. `("", 0)` when the body does not hold it.
    """
    lines = body.split("\n")
    chosen, strength = -1, -1.0
    for number, line in enumerate(lines):
        if literal in line:
            kind = line_kind(line, literal)
            if kind > strength:
                chosen, strength = number, kind
            if kind >= DEFINING_LINE:
                break
    if chosen < 0:
        return "", 0
    file_line = body_offset + chosen + 1
    text = raw_lines[file_line - 1].strip() if file_line - 1 < len(raw_lines) else lines[chosen]
    if len(text) > EXCERPT_MAX:
        at = max(text.lower().find(literal), 0)
        start = max(0, min(at - 80, len(text) - (EXCERPT_MAX - 6)))
        window = text[start : start + EXCERPT_MAX - 6]
        text = (
            ("..." if start > 0 else "")
            + window
            + ("..." if start + len(window) < len(text) else "")
        )
    return text, file_line
