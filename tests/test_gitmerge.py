"""The pure merges of issue 18: an index by its entries, the journal by record id, and the
driver's shell around them (in process, on temporary files; the real-git tests are in
`test_gitmerge_repos.py`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mbank.catalogue import SECTION_PLACEHOLDER, SECTIONS_BY_DIR, root_index, section_index
from mbank.gitmerge.driver import merge_bytes, run_merge_driver
from mbank.gitmerge.index_merge import merge_index, read_layout
from mbank.gitmerge.journal_merge import merge_journal
from mbank.reducers.registration import register_line, register_section

INDEX = "domain/README.md"
EMPTY = section_index(SECTIONS_BY_DIR["domain"], (), derived_from="../dna/governance.md")


def registered(text: str, *names: str, index: str = INDEX) -> str:
    """`text` with one document per name registered through mbank's own registration."""
    folder = index.rsplit("/", 1)[0] + "/" if "/" in index else ""
    for name in names:
        text = register_line(text, index, f"{folder}{name}.md", name.upper(), f"About {name}.")
    return text


def entry_targets(text: str) -> list[str]:
    """The link targets of the index's registry lines, in order."""
    return re.findall(r"^\s*(?:[-*]|\d+\.|\|)\s*\[[^\]]*\]\(([^)]+)\)", text, re.MULTILINE)


def conflict_blocks(text: str) -> list[str]:
    return re.findall(r"^<{7} ours\n(.*?)^>{7} theirs$", text, re.MULTILINE | re.DOTALL)


# --- the index: entries added, removed, changed ----------------------------------------------


def test_entries_added_on_both_sides_are_all_kept_ours_first_and_the_placeholder_goes() -> None:
    ours = registered(EMPTY, "a", "b")
    theirs = registered(EMPTY, "c", "d")
    merged = merge_index(EMPTY, ours, theirs)
    assert merged is not None
    assert merged.conflicts == 0
    assert entry_targets(merged.text) == ["a.md", "b.md", "c.md", "d.md"]
    assert SECTION_PLACEHOLDER not in merged.text
    assert merged.text == registered(EMPTY, "a", "b", "c", "d")


def test_a_removal_on_one_side_is_honoured_and_an_addition_on_the_other_kept() -> None:
    base = registered(EMPTY, "a", "b", "c")
    ours = base.replace("- [B](b.md) — About b.\n", "")
    theirs = registered(base, "d")
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 0
    assert entry_targets(merged.text) == ["a.md", "c.md", "d.md"]


def test_the_same_entry_changed_differently_is_one_conflict_confined_to_that_entry() -> None:
    base = registered(EMPTY, "a", "b")
    ours = registered(base.replace("About a.", "About a, by ours."), "c")
    theirs = registered(base.replace("About a.", "About a, by theirs."), "d")
    merged = merge_index(base, ours, theirs)
    assert merged is not None
    assert merged.conflicts == 1
    assert conflict_blocks(merged.text) == [
        "- [A](a.md) — About a, by ours.\n=======\n- [A](a.md) — About a, by theirs.\n"
    ]
    outside = re.sub(r"^<{7}.*?^>{7} theirs\n", "", merged.text, flags=re.MULTILINE | re.DOTALL)
    assert entry_targets(outside) == ["b.md", "c.md", "d.md"]


def test_the_same_change_on_both_sides_is_no_conflict() -> None:
    base = registered(EMPTY, "a")
    both = registered(base.replace("About a.", "About a, again."), "b")
    merged = merge_index(base, both, registered(base.replace("About a.", "About a, again."), "c"))
    assert merged is not None and merged.conflicts == 0
    assert entry_targets(merged.text) == ["a.md", "b.md", "c.md"]
    assert "About a, again." in merged.text


def test_an_entry_changed_on_one_side_and_removed_on_the_other_conflicts() -> None:
    base = registered(EMPTY, "a", "b")
    ours = base.replace("About a.", "About a, changed.")
    theirs = base.replace("- [A](a.md) — About a.\n", "")
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 1
    assert conflict_blocks(merged.text) == ["- [A](a.md) — About a, changed.\n=======\n"]


def test_table_rows_keep_their_shape() -> None:
    base = EMPTY.replace(
        SECTION_PLACEHOLDER, "| Record | Status |\n|---|---|\n| [`ADR-1`](adr-1.md) | accepted |"
    )
    ours = register_line(base, INDEX, "domain/adr-2.md", "ADR-2", "Queue choice.")
    theirs = register_line(base, INDEX, "domain/adr-3.md", "ADR-3", "Cache choice.")
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 0
    assert merged.text.endswith(
        "| [`ADR-1`](adr-1.md) | accepted |\n"
        "| [`ADR-2`](adr-2.md) | Queue choice. |\n"
        "| [`ADR-3`](adr-3.md) | Cache choice. |\n"
    )


def test_numbered_items_that_counted_up_are_counted_again() -> None:
    base = EMPTY.replace(SECTION_PLACEHOLDER, "1. [One](one.md) — First.\n2. [Two](two.md) — Next.")
    ours = register_line(base, INDEX, "domain/a.md", "A", "Ours.")
    theirs = register_line(base, INDEX, "domain/b.md", "B", "Theirs.")
    assert "3. [A](a.md)" in ours and "3. [B](b.md)" in theirs
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 0
    assert merged.text.endswith(
        "1. [One](one.md) — First.\n2. [Two](two.md) — Next.\n"
        "3. [A](a.md) — Ours.\n4. [B](b.md) — Theirs.\n"
    )


def test_the_root_index_merges_two_new_sections_with_their_route_lines() -> None:
    base = root_index("Demo")
    ours = register_section(base, SECTIONS_BY_DIR["epics"])
    theirs = register_section(base, SECTIONS_BY_DIR["prompts"])
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 0
    epics = f"- [`epics/README.md`](epics/README.md)\n  {SECTIONS_BY_DIR['epics'].route}\n"
    prompts = f"- [`prompts/README.md`](prompts/README.md)\n  {SECTIONS_BY_DIR['prompts'].route}\n"
    assert epics + prompts in merged.text
    assert merged.text.count("(epics/README.md)") == 1
    assert "## Task-Specific Routes" in merged.text


def test_two_sides_that_both_create_a_section_index_merge_as_an_addition_on_both() -> None:
    ours = registered(EMPTY, "a")
    theirs = registered(EMPTY, "b")
    merged = merge_index("", ours, theirs)
    assert merged is not None and merged.conflicts == 0
    assert entry_targets(merged.text) == ["a.md", "b.md"]


def test_links_inside_fenced_code_are_not_entries() -> None:
    base = registered(EMPTY, "a") + "\n```\n- [Example](example.md) — shown, not listed.\n```\n"
    layout = read_layout(base)
    assert layout is not None
    assert list(layout.entries()) == [("bullet", "a.md")]


@pytest.mark.parametrize(
    ("why", "ours"),
    [
        ("earlier conflict markers", registered(EMPTY, "a") + "<<<<<<< HEAD\n=======\n>>>>>>> x\n"),
        ("one target listed twice", registered(EMPTY, "a") + "- [Again](a.md) — twice.\n"),
        ("frontmatter never closed", "---\ntitle: x\n- [A](a.md) — a.\n"),
    ],
)
def test_a_version_it_cannot_read_answers_none_for_git_to_merge(why: str, ours: str) -> None:
    assert merge_index(EMPTY, ours, registered(EMPTY, "b")) is None, why


def test_frames_changed_differently_on_both_sides_answer_none() -> None:
    base = registered(EMPTY, "a")
    ours = registered(base.replace("# Domain", "# Our Domain"), "b")
    theirs = registered(base.replace("# Domain", "# Their Domain"), "c")
    assert merge_index(base, ours, theirs) is None


def test_a_frame_changed_on_one_side_is_kept_with_both_sides_entries() -> None:
    base = registered(EMPTY, "a")
    ours = registered(base, "b")
    theirs = registered(base.replace("## Registry", "## Registry\n\nAll domain notes."), "c")
    merged = merge_index(base, ours, theirs)
    assert merged is not None and merged.conflicts == 0
    assert "All domain notes." in merged.text
    assert entry_targets(merged.text) == ["a.md", "b.md", "c.md"]


# --- the property: the result is both sides' changes applied ---------------------------------

NAMES = [f"doc{number}" for number in range(12)]


@st.composite
def two_sides(draw: st.DrawFn) -> tuple[list[str], set[str], set[str], list[str], list[str]]:
    base = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=8))
    fresh = [name for name in NAMES if name not in base]
    removed_ours = set(draw(st.lists(st.sampled_from(base), unique=True))) if base else set()
    removed_theirs = set(draw(st.lists(st.sampled_from(base), unique=True))) if base else set()
    added = draw(st.lists(st.sampled_from(fresh), unique=True)) if fresh else []
    split = draw(st.integers(0, len(added)))
    both = draw(st.lists(st.sampled_from(added), unique=True)) if added else []
    ours_added = [*added[:split], *(n for n in both if n not in added[:split])]
    theirs_added = [*added[split:], *(n for n in both if n not in added[split:])]
    return base, removed_ours, removed_theirs, ours_added, theirs_added


def _side(base: list[str], removed: set[str], added: list[str], shape: str) -> str:
    text = _start(shape)
    text = registered(text, *base)
    for name in removed:
        text = "\n".join(line for line in text.split("\n") if f"]({name}.md)" not in line)
    return registered(text, *added)


def _start(shape: str) -> str:
    if shape == "table":
        return EMPTY.replace(
            SECTION_PLACEHOLDER, "| Doc | Purpose |\n|---|---|\n| [Seed](seed.md) | s |"
        )
    if shape == "numbered":
        return EMPTY.replace(SECTION_PLACEHOLDER, "1. [Seed](seed.md) — s.")
    return EMPTY


@given(sides=two_sides(), shape=st.sampled_from(["bullet", "table", "numbered"]))
def test_the_merged_entries_are_the_base_with_both_sides_changes_applied(
    sides: tuple[list[str], set[str], set[str], list[str], list[str]], shape: str
) -> None:
    base_names, removed_ours, removed_theirs, ours_added, theirs_added = sides
    base = _side(base_names, set(), [], shape)
    ours = _side(base_names, removed_ours, ours_added, shape)
    theirs = _side(base_names, removed_theirs, theirs_added, shape)
    merged = merge_index(base, ours, theirs)
    assert merged is not None
    assert merged.conflicts == 0
    expected = (
        (set(base_names) - removed_ours - removed_theirs) | set(ours_added) | set(theirs_added)
    )
    targets = entry_targets(merged.text)
    seed = [] if shape == "bullet" else ["seed.md"]
    assert sorted(targets) == sorted(seed + [f"{name}.md" for name in expected])
    kept = [f"{n}.md" for n in base_names if n in expected]
    assert [t for t in targets if t in kept] == kept  # the base's order stands
    if expected or seed:
        assert SECTION_PLACEHOLDER not in merged.text


# --- the journal --------------------------------------------------------------------------------


def record(record_id: str, time: str, tool: str = "bank_create") -> bytes:
    data = {"v": 1, "id": record_id, "time": time, "tool": tool, "via": "cli", "ops": []}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


R1 = record("20260101T000001Z-aaaaaa", "2026-01-01T00:00:01Z")
R2 = record("20260101T000002Z-bbbbbb", "2026-01-01T00:00:02Z")
R3 = record("20260101T000002Z-000000", "2026-01-01T00:00:02Z", "bank_edit")
R4 = record("20260101T000003Z-cccccc", "2026-01-01T00:00:03Z")


def lines(*records: bytes) -> bytes:
    return b"".join(line + b"\n" for line in records)


def test_the_journal_merge_is_the_union_by_id_ordered_by_time_then_id() -> None:
    merged = merge_journal(lines(R1, R4, R2), lines(R1, R3))
    assert merged is not None and merged.conflicts == 0
    assert merged.text == lines(R1, R3, R2, R4)


def test_a_record_kept_on_one_side_is_never_dropped_and_lines_stay_whole() -> None:
    unusual = record("20260101T000005Z-dddddd", "2026-01-01T00:00:05Z", "bank_edit · ü")
    merged = merge_journal(lines(R1, unusual), lines(R2))
    assert merged is not None
    assert merged.text == lines(R1, R2, unusual)


def test_a_last_line_without_its_newline_is_ended() -> None:
    merged = merge_journal(lines(R1) + R2, lines(R1))
    assert merged is not None and merged.text == lines(R1, R2)


def test_the_same_id_with_two_lines_is_a_conflict_for_that_record() -> None:
    other = R2.replace(b'"cli"', b'"mcp"')
    merged = merge_journal(lines(R1, R2), lines(R1, other, R4))
    assert merged is not None and merged.conflicts == 1
    assert merged.text == lines(R1, b"<<<<<<< ours", R2, b"=======", other, b">>>>>>> theirs", R4)


@pytest.mark.parametrize(
    "bad", [b"{not json", b'{"id": 3, "time": "x"}', b"<<<<<<< ours", b'{"time": "t"}']
)
def test_a_line_that_is_no_record_answers_none(bad: bytes) -> None:
    assert merge_journal(lines(R1, bad), lines(R2)) is None


# --- the driver's shell ------------------------------------------------------------------------


def write_three(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> tuple[str, str, str]:
    paths = []
    for name, data in (("O", base), ("A", ours), ("B", theirs)):
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    return paths[0], paths[1], paths[2]


def test_the_driver_writes_the_merge_into_ours_and_exits_0(tmp_path: Path) -> None:
    base, ours, theirs = write_three(
        tmp_path, EMPTY.encode(), registered(EMPTY, "a").encode(), registered(EMPTY, "b").encode()
    )
    assert run_merge_driver("index", base, ours, theirs, INDEX) == 0
    assert Path(ours).read_text(encoding="utf-8") == registered(EMPTY, "a", "b")


def test_the_driver_exits_1_on_an_entry_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_text = registered(EMPTY, "a")
    base, ours, theirs = write_three(
        tmp_path,
        base_text.encode(),
        base_text.replace("About a.", "Ours.").encode(),
        base_text.replace("About a.", "Theirs.").encode(),
    )
    assert run_merge_driver("index", base, ours, theirs, INDEX) == 1
    assert capsys.readouterr().err == (
        "mbank: domain/README.md: 1 entry changed on both sides; see the markers.\n"
    )
    assert len(conflict_blocks(Path(ours).read_text(encoding="utf-8"))) == 1


def test_the_driver_falls_back_to_git_merge_file_with_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, ours, theirs = write_three(tmp_path, lines(R1), lines(R1, b"{broken"), lines(R1, R2))
    assert run_merge_driver("journal", base, ours, theirs, ".mbank/journal.jsonl") == 1
    assert capsys.readouterr().err == (
        "mbank: .mbank/journal.jsonl could not be merged by records (a version mbank cannot "
        "read); git's line merge decides, with conflict markers where the sides differ.\n"
    )
    merged = Path(ours).read_bytes()
    assert merged == lines(R1, b"<<<<<<< ours", b"{broken", b"=======", R2, b">>>>>>> theirs")


def test_an_index_that_is_not_utf8_goes_to_git_merge_file() -> None:
    assert merge_bytes("index", b"", b"\xff\xfe", b"x") is None


LINES = st.sampled_from(
    [
        "",
        "# Index",
        "## Registry",
        "prose with a [link](x.md) inside",
        SECTION_PLACEHOLDER,
        "```",
        "- [A](a.md) — a.",
        "- [B](b.md) — b.",
        "  continued",
        "1. [C](c.md) — c.",
        "| [D](d.md) | d |",
        "| Name | Purpose |",
        "---",
        "title: x",
        "<<<<<<< ours",
        "* [E](e.md) — e.",
        "- [A](a.md) — a, changed.",
    ]
)
TEXTS = st.lists(LINES, max_size=12).map(lambda lines: "\n".join(lines) + "\n")


@given(base=TEXTS, ours=TEXTS, theirs=TEXTS)
def test_any_three_texts_merge_or_go_to_git_and_no_added_entry_is_lost(
    base: str, ours: str, theirs: str
) -> None:
    merged = merge_index(base, ours, theirs)
    assert merge_index(base, ours, ours) == merge_index(base, base, ours)
    if merged is None:
        return
    for side in (ours, theirs):
        layout = read_layout(side)
        if layout is None or side == base:
            continue
        before = read_layout(base)
        old = before.entries() if before is not None else {}
        for key in layout.entries():
            if key[0] != "placeholder" and key not in old:
                assert f"]({key[1]})" in merged.text, key
