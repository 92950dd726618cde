"""The three-way merge of an index file by its entries (issue 18).

An index (a section's `README.md`, the root `README.md`) is read as a *frame* — every line that
is not an entry — with *runs* of entries in it. An entry is one table row, bullet or numbered
item that links a `.md` file (spec 03 §4.9's shapes), with a bullet's indented continuation
lines (the root index's route lines); its key is its shape and its first link's target. The
empty-registry placeholder is an entry of its own, so removing it does not change the frame.

The merge decides each entry by its key, as git decides each line: added on one side → kept;
removed on one side and unchanged on the other → removed; changed on one side → that change;
changed differently on both sides (or changed on one and removed on the other) → a conflict
for that entry alone, between git's markers. The result keeps the layout of the side whose
frame it keeps, and slots the other side's new entries after the entry they follow there (a run
sharing no entry goes by the frame lines around it), ours before theirs; numbered runs that
counted up are counted again; the placeholder goes once any entry exists.

`merge_index` answers None when it cannot merge by entries — a version it cannot read (not a
text it recognises, conflict markers already in it, one target linked twice in one shape),
frames changed differently on both sides, or a new entry with nothing to place it by — and the
driver then falls back to git's ordinary merge. It never drops a line it did not decide to.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

import msgspec

from mbank.catalogue import SECTION_PLACEHOLDER
from mbank.parse import URL_SCHEME, scan_body, split_frontmatter

TABLE = "table"
BULLET = "bullet"
NUMBERED = "numbered"
PLACEHOLDER = "placeholder"
MARKER_SIZE = 7

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md(?:#[^)\s]*)?)\)")
_NUMBERED = re.compile(r"^(\s*)(\d+)([.)]\s)")
_BULLET = re.compile(r"^\s*[-*+]\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s|$)")
_CONFLICT_MARKER = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?:\s|$)")


class Entry(msgspec.Struct, frozen=True):
    """One entry of an index: its key, its lines, and its text as compared across versions.

    `same` is the text with a numbered item's number blanked, so that renumbering alone is not
    a change.
    """

    key: tuple[str, str]
    lines: tuple[str, ...]
    same: tuple[str, ...]


class Layout(msgspec.Struct, frozen=True):
    """An index as its frame (every line that is no entry) and its runs of entries.

    Each run sits in a *gap* of the frame: gap `g` is just before frame line `g` (gap
    `len(frame)` is the end). Keying runs by gap, not by their order, keeps a run's place when
    one side emptied it or another side filled it.
    """

    frame: tuple[str, ...]
    runs: dict[int, tuple[Entry, ...]]

    def entries(self) -> dict[tuple[str, str], Entry]:
        """Every entry by its key."""
        return {entry.key: entry for run in self.runs.values() for entry in run}


class IndexMerge(msgspec.Struct, frozen=True):
    """The merged text and how many entries conflict (each between git's markers)."""

    text: str
    conflicts: int


class _Item(msgspec.Struct, frozen=True):
    """One place in a merged run: a decided entry, or a conflict with both sides' lines."""

    key: tuple[str, str]
    lines: tuple[str, ...]
    numbered: bool
    conflict: bool = False


class _Decision(msgspec.Struct, frozen=True):
    keep: Entry | None
    ours: Entry | None = None
    theirs: Entry | None = None

    @property
    def conflict(self) -> bool:
        return self.keep is None and (self.ours is not None or self.theirs is not None)


# --------------------------------------------------------------------------------------------
# Reading an index
# --------------------------------------------------------------------------------------------


def _first_target(line: str) -> str | None:
    for match in _LINK.finditer(line):
        if not URL_SCHEME.match(match.group(1)):
            return match.group(1)
    return None


def _shape(line: str) -> str | None:
    if line.strip().startswith("|"):
        return TABLE
    if _NUMBERED.match(line):
        return NUMBERED
    if _BULLET.match(line):
        return BULLET
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _entry_at(
    lines: Sequence[str], index: int, fenced: set[int], placeholders: int
) -> tuple[Entry, int] | None:
    """The entry starting at `lines[index]` and the index after it, or None for a frame line."""
    line = lines[index]
    if index in fenced:
        return None
    if line.strip() == SECTION_PLACEHOLDER:
        # The blank line after it goes with it, as registration removes both (spec 03 §4.9).
        end = index + 1
        if end < len(lines) - 1 and not lines[end].strip():
            end += 1
        taken = tuple(lines[index:end])
        return Entry((PLACEHOLDER, str(placeholders)), taken, taken), end
    target = _first_target(line)
    shape = _shape(line) if target is not None else None
    if target is None or shape is None:
        return None
    end = index + 1
    if shape != TABLE:
        while (
            end < len(lines)
            and end not in fenced
            and lines[end].strip()
            and _indent(lines[end]) > _indent(line)
            and not _LIST_ITEM.match(lines[end])
        ):
            end += 1
    taken = tuple(lines[index:end])
    first = _NUMBERED.sub(r"\1#\3", taken[0]) if shape == NUMBERED else taken[0]
    return Entry((shape, target), taken, (first, *taken[1:])), end


def read_layout(text: str) -> Layout | None:
    """The frame and runs of an index's text, or None when it cannot be merged by entries."""
    lines = text.split("\n")
    if any(_CONFLICT_MARKER.match(line) for line in lines):
        return None
    split = split_frontmatter(text)
    if split.unclosed:
        return None
    fenced: set[int] = set()
    for start, end in scan_body(split.body).fences:
        fenced.update(range(start + split.body_offset, end + split.body_offset))
    frame: list[str] = list(lines[: split.body_offset])
    runs: dict[int, tuple[Entry, ...]] = {}
    run: list[Entry] = []
    seen: set[tuple[str, str]] = set()
    placeholders = 0
    index = split.body_offset
    while index < len(lines):
        found = _entry_at(lines, index, fenced, placeholders)
        if found is not None:
            entry, index = found
            if entry.key in seen:
                return None
            seen.add(entry.key)
            placeholders += entry.key[0] == PLACEHOLDER
            run.append(entry)
            continue
        if run:
            runs[len(frame)] = tuple(run)
            run = []
        frame.append(lines[index])
        index += 1
    if run:
        runs[len(frame)] = tuple(run)
    return Layout(tuple(frame), runs)


# --------------------------------------------------------------------------------------------
# Deciding each entry
# --------------------------------------------------------------------------------------------


def _decide(base: Entry | None, ours: Entry | None, theirs: Entry | None) -> _Decision:
    """git's three-way rule, applied to one entry."""
    if ours is not None and theirs is not None:
        if ours.same == theirs.same:
            return _Decision(ours)
        if base is not None and ours.same == base.same:
            return _Decision(theirs)
        if base is not None and theirs.same == base.same:
            return _Decision(ours)
        return _Decision(None, ours, theirs)
    one = ours if ours is not None else theirs
    if one is None:
        return _Decision(None)
    if base is None:
        return _Decision(one)
    if one.same == base.same:
        return _Decision(None)  # removed on the other side
    return _Decision(None, ours, theirs)  # changed on one side, removed on the other


def _decisions(base: Layout, ours: Layout, theirs: Layout) -> dict[tuple[str, str], _Decision]:
    entries = (base.entries(), ours.entries(), theirs.entries())
    keys = {key for side in entries for key in side}
    return {key: _decide(*(side.get(key) for side in entries)) for key in keys}


def _item(decision: _Decision) -> _Item | None:
    if decision.keep is not None:
        entry = decision.keep
        return _Item(entry.key, entry.lines, entry.key[0] == NUMBERED)
    if not decision.conflict:
        return None
    side = decision.ours if decision.ours is not None else decision.theirs
    assert side is not None
    return _Item(side.key, (), False, conflict=True)


# --------------------------------------------------------------------------------------------
# Laying the merged runs out
# --------------------------------------------------------------------------------------------

Runs = dict[int, list[_Item]]


def gap_map(source: Sequence[str], target: Sequence[str]) -> dict[int, int]:
    """Where each gap of frame `source` is in frame `target`, for the gaps that can be told.

    A gap is told when the lines on both sides of it lie next to each other in a stretch the
    two frames share (the start and the end count as such lines); blank lines repeat too often
    for one neighbour alone to say where a run goes.
    """
    matcher = difflib.SequenceMatcher(None, source, target, autojunk=False)
    line_to = {-1: -1, len(source): len(target)}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            line_to[block.a + offset] = block.b + offset
    return {
        gap: line_to[gap]
        for gap in range(len(source) + 1)
        if gap in line_to and gap - 1 in line_to and line_to[gap - 1] == line_to[gap] - 1
    }


def _run_holding(runs: Runs, entries: Sequence[Entry]) -> int | None:
    """The gap of the merged run that already holds one of `entries`, if any."""
    keys = {entry.key for entry in entries}
    for gap, run in runs.items():
        if any(item.key in keys for item in run):
            return gap
    return None


def _position(run: list[_Item], key: tuple[str, str]) -> int | None:
    for position, item in enumerate(run):
        if item.key == key:
            return position
    return None


def _slot_other(
    runs: Runs,
    other: Layout,
    gaps: Mapping[int, int],
    items: Mapping[tuple[str, str], _Item],
    skip: frozenset[tuple[str, str]],
) -> bool:
    """Insert the other side's entries not yet laid out; False when one has no place."""
    placed = {item.key for run in runs.values() for item in run}
    for gap, entries in other.runs.items():
        missing = [e for e in entries if e.key not in placed and e.key in items]
        if not missing:
            continue
        # Best placed beside an entry the run shares with ours; else by the frame around it.
        target = _run_holding(runs, entries)
        if target is None:
            target = gaps.get(gap)
        if target is None:
            return False
        run = runs.setdefault(target, [])
        after: int | None = None
        for number, entry in enumerate(entries):
            found = _position(run, entry.key)
            if found is not None:
                after = found + 1
                continue
            if entry.key in placed or entry.key not in items:
                continue
            if after is None:
                ahead = (_position(run, e.key) for e in entries[number + 1 :])
                after = next((p for p in ahead if p is not None), 0)
            while after < len(run) and run[after].key in skip:
                after += 1
            run.insert(after, items[entry.key])
            placed.add(entry.key)
            after += 1
    return True


def _counting_from(run: Sequence[Entry]) -> int | None:
    """The first number of a run of numbered items that counts up by one, else None."""
    numbers = [int(m.group(2)) for e in run if (m := _NUMBERED.match(e.lines[0]))]
    if not numbers or len(numbers) != len(run):
        return None
    return numbers[0] if numbers == list(range(numbers[0], numbers[0] + len(run))) else None


def _renumber(run: list[_Item], start: int) -> list[_Item]:
    renumbered: list[_Item] = []
    number = start
    for item in run:
        match = _NUMBERED.match(item.lines[0]) if item.numbered and not item.conflict else None
        if match is not None:
            first = f"{match.group(1)}{number}{match.group(3)}{item.lines[0][match.end() :]}"
            item = _Item(item.key, (first, *item.lines[1:]), True)
            number += 1
        renumbered.append(item)
    return renumbered


def _conflict_lines(decision: _Decision, labels: tuple[str, str]) -> list[str]:
    ours = list(decision.ours.lines) if decision.ours is not None else []
    theirs = list(decision.theirs.lines) if decision.theirs is not None else []
    return [
        "<" * MARKER_SIZE + f" {labels[0]}",
        *ours,
        "=" * MARKER_SIZE,
        *theirs,
        ">" * MARKER_SIZE + f" {labels[1]}",
    ]


def _render(
    frame: Sequence[str],
    runs: Runs,
    decisions: Mapping[tuple[str, str], _Decision],
    labels: tuple[str, str],
) -> str:
    lines: list[str] = []
    for gap in range(len(frame) + 1):
        for item in runs.get(gap, ()):
            if item.conflict:
                lines.extend(_conflict_lines(decisions[item.key], labels))
            else:
                lines.extend(item.lines)
        if gap < len(frame):
            lines.append(frame[gap])
    return "\n".join(lines)


def merge_index(
    base: str, ours: str, theirs: str, labels: tuple[str, str] = ("ours", "theirs")
) -> IndexMerge | None:
    """The merge of two versions of an index with their common ancestor, or None (see above)."""
    if ours == theirs or base == theirs:
        return IndexMerge(ours, 0)
    if base == ours:
        return IndexMerge(theirs, 0)
    base_layout, ours_layout, theirs_layout = (read_layout(t) for t in (base, ours, theirs))
    if base_layout is None or ours_layout is None or theirs_layout is None:
        return None
    if ours_layout.frame == theirs_layout.frame or theirs_layout.frame == base_layout.frame:
        kept, other, kept_is_ours = ours_layout, theirs_layout, True
    elif ours_layout.frame == base_layout.frame:
        kept, other, kept_is_ours = theirs_layout, ours_layout, False
    else:
        return None
    decisions = _decisions(base_layout, ours_layout, theirs_layout)
    items = {key: item for key, d in decisions.items() if (item := _item(d)) is not None}
    runs: Runs = {
        gap: [items[e.key] for e in run if e.key in items] for gap, run in kept.runs.items()
    }
    # Ours before theirs: theirs' new entries go after ours' new entries at the same place.
    base_keys, other_keys = base_layout.entries(), other.entries()
    skip = frozenset(
        key
        for key in kept.entries()
        if kept_is_ours and key not in base_keys and key not in other_keys
    )
    gaps = gap_map(other.frame, kept.frame)
    if not _slot_other(runs, other, gaps, items, skip):
        return None
    if any(item.key[0] != PLACEHOLDER for run in runs.values() for item in run):
        runs = {gap: [i for i in run if i.key[0] != PLACEHOLDER] for gap, run in runs.items()}
    counted = {gaps[g]: run for g, run in other.runs.items() if g in gaps} | dict(kept.runs)
    for gap, source in counted.items():
        start = _counting_from(source)
        if start is not None and gap in runs:
            runs[gap] = _renumber(runs[gap], start)
    conflicts = sum(item.conflict for run in runs.values() for item in run)
    return IndexMerge(_render(kept.frame, runs, decisions, labels), conflicts)
