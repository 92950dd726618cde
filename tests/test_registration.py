"""Registration (spec 03 §4.7–§4.10): a new entry copies the shape of the index's last link
line and lands right after it, the empty-registry placeholder goes, a new section is entered
in the root index after the last section entry, the nearest index is chosen, and a section
index built on first use derives from what the bank has."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mbank.catalogue import SECTION_PLACEHOLDER, SECTIONS_BY_DIR, root_index, section_index
from mbank.gates.paths import PathOnDisk
from mbank.parse import parse_text
from mbank.reducers.registration import (
    entry_like,
    pick_index,
    plan_section_index,
    register_line,
    register_section,
    remove_placeholder,
    section_derived_from,
)
from mbank.snapshot import Bank, Snapshot

TODAY = "2026-09-14"


def snapshot_of(root: Path, files: dict[str, str | bytes]) -> Snapshot:
    root.mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return Bank(root).refresh()


class AllFree(dict[str, PathOnDisk]):
    """The disk facts of a bank where nothing but the documents exists."""

    def __missing__(self, path: str) -> PathOnDisk:
        return PathOnDisk()


def doc(title: str, doc_function: str = "canonical", extra: str = "") -> str:
    return (
        f"---\ntitle: {title}\ndoc_kind: domain\ndoc_function: {doc_function}\n"
        f"purpose: About {title}.\nstatus: draft\n---\n# {title}\n{extra}"
    )


# --------------------------------------------------------------------------------------------
# register_line (§4.9)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ("- [Rules](rules.md) — Domain rules.", "- [Deploy](deploy.md) — How to ship."),
        ("  * [`Rules`](rules.md) — x", "  * [`Deploy`](deploy.md) — How to ship."),
        ("3. [Rules](rules.md)", "4. [Deploy](deploy.md) — How to ship."),
        (
            "| [`ADR-001`](ADR-001.md) | Queue choice | accepted |",
            "| [`Deploy`](deploy.md) | How to ship. | |",
        ),
        ("| [Only](only.md) |", "| [Deploy](deploy.md) |"),
        ("| [A](a.md) | b |", "| [Deploy](deploy.md) | How to ship. |"),
        ("+ [Rules](rules.md)", "- [Deploy](deploy.md) — How to ship."),
        ("See [the rules](rules.md) first.", "- [Deploy](deploy.md) — How to ship."),
    ],
)
def test_a_new_entry_copies_the_shape_of_the_model_line(model: str, line: str) -> None:
    """The spec's table of models (table row, numbered item, bullet, backticked label)."""
    assert entry_like(model, "Deploy", "deploy.md", "How to ship.") == line


def test_a_url_link_is_not_the_model_and_its_text_never_sets_the_label() -> None:
    text = "# I\n\n- [`Rules`](rules.md) — r\n- [spec](https://example.com/spec.md)\n"
    assert register_line(text, "domain/README.md", "domain/x.md", "X", "About x.") == (
        "# I\n\n- [`Rules`](rules.md) — r\n- [`X`](x.md) — About x.\n"
        "- [spec](https://example.com/spec.md)\n"
    )


def test_the_entry_lands_right_after_the_last_link_line_not_at_the_end() -> None:
    text = (
        "# Index\n\n## Registry\n\n- [A](a.md) — a\n- [B](b.md) — b\n\n## Notes\n\n"
        "Plain prose closes the page.\n"
    )
    assert register_line(text, "domain/README.md", "domain/c.md", "C", "See c.") == (
        "# Index\n\n## Registry\n\n- [A](a.md) — a\n- [B](b.md) — b\n- [C](c.md) — See c.\n\n"
        "## Notes\n\nPlain prose closes the page.\n"
    )


def test_links_inside_fenced_code_are_never_the_model() -> None:
    text = "# I\n\n- [A](a.md) — a\n\n```md\n- [Example](example.md)\n```\n"
    assert register_line(text, "README.md", "b.md", "B", "b") == (
        "# I\n\n- [A](a.md) — a\n- [B](b.md) — b\n\n```md\n- [Example](example.md)\n```\n"
    )


def test_without_a_model_a_bullet_is_appended_after_one_blank_line() -> None:
    assert register_line(
        "# Index\n\nNothing yet.\n\n\n", "ops/README.md", "ops/a.md", "A", "p"
    ) == ("# Index\n\nNothing yet.\n\n- [A](a.md) — p\n")


def test_the_placeholder_and_the_blank_line_after_it_are_removed() -> None:
    text = section_index(SECTIONS_BY_DIR["adr"])
    assert SECTION_PLACEHOLDER in text
    registered = register_line(text, "adr/README.md", "adr/ADR-1.md", "One", "The first.")
    assert SECTION_PLACEHOLDER not in registered
    assert registered.endswith("## Registry\n\n- [One](ADR-1.md) — The first.\n")


def test_every_placeholder_line_goes_even_above_real_entries() -> None:
    """Banks seeded by upstream carried placeholders above real entries (05 §6.1)."""
    placeholder = f"{SECTION_PLACEHOLDER}\n\n" * 6
    text = f"# I\n\n## Registry\n\n{placeholder}- [A](a.md) — a\n"
    assert remove_placeholder(text) == "# I\n\n## Registry\n\n- [A](a.md) — a\n"
    assert register_line(text, "README.md", "b.md", "B", "b") == (
        "# I\n\n## Registry\n\n- [A](a.md) — a\n- [B](b.md) — b\n"
    )


def test_a_placeholder_indented_or_last_in_the_file_still_goes() -> None:
    assert remove_placeholder(f"a\n   {SECTION_PLACEHOLDER}  \nb\n") == "a\nb\n"
    assert remove_placeholder(f"a\n\n{SECTION_PLACEHOLDER}") == "a\n"


def test_the_entry_path_is_relative_to_the_index_directory() -> None:
    text = "# Root\n\n- [A](domain/a.md) — a\n"
    assert register_line(text, "README.md", "domain/sub/b.md", "B", "b").endswith(
        "- [B](domain/sub/b.md) — b\n"
    )
    nested = register_line("# F\n", "features/README.md", "features/FT-1/brief.md", "Brief", "b")
    assert nested.endswith("- [Brief](FT-1/brief.md) — b\n")


def test_line_breaks_in_a_title_or_purpose_do_not_split_the_entry() -> None:
    text = "| Doc | What |\n|-|-|\n| [A](a.md) | a |\n"
    out = register_line(text, "README.md", "b.md", "Two\nLines", "First.\r\n  Second.")
    assert out.endswith("| [Two Lines](b.md) | First. Second. |\n")


def test_the_fixture_table_of_decisions_gets_a_backticked_row(fixture_bank: Path) -> None:
    text = (fixture_bank / "adr/README.md").read_text(encoding="utf-8")
    out = register_line(text, "adr/README.md", "adr/ADR-002-x.md", "Cache", "Why a cache.")
    assert out == text + "| [`Cache`](ADR-002-x.md) | Why a cache. | |\n"


def test_the_fixture_root_index_continues_its_numbered_list(fixture_bank: Path) -> None:
    text = (fixture_bank / "README.md").read_text(encoding="utf-8")
    out = register_line(text, "README.md", "notes.md", "Notes", "Loose notes.")
    assert out == text + "5. [Notes](notes.md) — Loose notes.\n"


@pytest.mark.slow
def test_a_ten_thousand_row_table_gets_its_row_after_the_last_one() -> None:
    rows = "".join(f"| [`R{n}`](r{n}.md) | row {n} | x |\n" for n in range(10_000))
    text = f"# Big\n\n| Doc | What | State |\n|-|-|-|\n{rows}\nAfter the table.\n"
    started = time.perf_counter()
    out = register_line(text, "big/README.md", "big/new.md", "New", "The new row.")
    assert time.perf_counter() - started < 10
    assert out.endswith(
        "| [`R9999`](r9999.md) | row 9999 | x |\n"
        "| [`New`](new.md) | The new row. | |\n\nAfter the table.\n"
    )


# --------------------------------------------------------------------------------------------
# register_section (§4.10)
# --------------------------------------------------------------------------------------------


def test_a_new_section_lands_after_the_last_section_entry_before_flows() -> None:
    text = root_index("demo")
    out = register_section(text, SECTIONS_BY_DIR["epics"])
    entry = (
        "- [`processes/README.md`](processes/README.md)\n"
        "  Read when you need how the team works: handoffs, routines, protocols.\n"
        "- [`epics/README.md`](epics/README.md)\n"
        "  Read when you need the goal, sequencing or risks of a larger effort.\n"
        "\n- [`flows/README.md`](flows/README.md)"
    )
    assert entry in out
    assert (
        out.replace(
            "- [`epics/README.md`](epics/README.md)\n"
            "  Read when you need the goal, sequencing or risks of a larger effort.\n",
            "",
        )
        == text
    )


def test_register_section_is_idempotent() -> None:
    once = register_section(root_index("demo"), SECTIONS_BY_DIR["prd"])
    assert register_section(once, SECTIONS_BY_DIR["prd"]) == once


def test_an_unbackticked_model_gives_an_unbackticked_label(fixture_bank: Path) -> None:
    text = (fixture_bank / "README.md").read_text(encoding="utf-8")
    out = register_section(text, SECTIONS_BY_DIR["ops"])
    assert (
        "- [domain/README.md](domain/README.md) — Domain documents and their index.\n"
        "- [ops/README.md](ops/README.md)\n"
        "  Read when you need to deploy, configure, observe or recover the system.\n\n"
        "## Key Documents"
    ) in out


def test_an_index_without_section_entries_is_left_alone() -> None:
    text = "# Root\n\n- [Guide](guide.md) — g\n- [`flows/README.md`](flows/README.md)\n"
    assert register_section(text, SECTIONS_BY_DIR["epics"]) == text


def test_section_entries_inside_fences_do_not_count() -> None:
    text = "# Root\n\n- [`adr/README.md`](adr/README.md)\n\n```md\n- [`ops/README.md`](x)\n```\n"
    out = register_section(text, SECTIONS_BY_DIR["prd"])
    assert out.startswith(
        "# Root\n\n- [`adr/README.md`](adr/README.md)\n- [`prd/README.md`](prd/README.md)\n"
    )


def test_continuation_lines_of_the_last_entry_are_kept_with_it() -> None:
    text = "- [`adr/README.md`](adr/README.md)\n  one\n  two\n- [`flows/README.md`](f)\nx\n"
    out = register_section(text, SECTIONS_BY_DIR["epics"])
    assert out.startswith(
        "- [`adr/README.md`](adr/README.md)\n  one\n  two\n- [`epics/README.md`](epics/README.md)\n"
    )


# --------------------------------------------------------------------------------------------
# pick_index (§4.8)
# --------------------------------------------------------------------------------------------


def test_the_nearest_text_index_above_the_target_is_chosen(tmp_path: Path) -> None:
    snapshot = snapshot_of(
        tmp_path / "bank",
        {
            "README.md": doc("Root", "index"),
            "features/README.md": doc("Features", "index"),
            "features/FT-1/README.md": b"\xff\xfe not text",
        },
    )
    assert pick_index(snapshot, "features/FT-1/brief.md") == "features/README.md"
    assert pick_index(snapshot, "features/FT-2/x/y.md") == "features/README.md"
    assert pick_index(snapshot, "other/x.md") == "README.md"
    assert pick_index(snapshot, "top.md") == "README.md"
    assert pick_index(snapshot, "features/README.md") == "README.md"
    assert pick_index(snapshot, "README.md") is None
    created = frozenset({"features/FT-1/notes/README.md"})
    assert pick_index(snapshot, "features/FT-1/notes/a.md", created) == (
        "features/FT-1/notes/README.md"
    )


# --------------------------------------------------------------------------------------------
# A section index on first use (§4.7)
# --------------------------------------------------------------------------------------------


def test_the_first_document_of_a_section_builds_its_index_and_enters_it_at_the_root(
    tmp_path: Path,
) -> None:
    snapshot = snapshot_of(
        tmp_path / "bank",
        {"README.md": root_index("demo"), "dna/governance.md": doc("Governance")},
    )
    planned = plan_section_index(snapshot, AllFree(), False, "epics/EP-1/charter.md")
    assert planned is not None
    assert planned.path == "epics/README.md"
    assert planned.text == section_index(SECTIONS_BY_DIR["epics"])
    assert planned.root_text == register_section(root_index("demo"), SECTIONS_BY_DIR["epics"])
    assert planned.warning == (
        'Section "epics/README.md" did not exist yet and was created to register this document.'
    )
    dry = plan_section_index(snapshot, AllFree(), True, "epics/EP-1/charter.md")
    assert dry is not None and dry.warning == (
        'Section "epics/README.md" does not exist yet and would be created to register this '
        "document."
    )


def test_no_section_index_for_unknown_dirs_root_files_existing_indexes_or_the_index_itself(
    tmp_path: Path,
) -> None:
    snapshot = snapshot_of(tmp_path / "bank", {"ops/README.md": doc("Ops", "index")})
    assert plan_section_index(snapshot, AllFree(), False, "scratch/x.md") is None
    assert plan_section_index(snapshot, AllFree(), False, "x.md") is None
    assert plan_section_index(snapshot, AllFree(), False, "ops/x.md") is None
    assert plan_section_index(snapshot, AllFree(), False, "prd/README.md") is None
    planned = plan_section_index(snapshot, AllFree(), False, "prd/PRD-1-x.md")
    assert planned is not None and planned.root_text is None


def test_a_section_index_derives_from_governance_else_the_root_else_nothing(
    tmp_path: Path,
) -> None:
    with_governance = snapshot_of(tmp_path / "a", {"dna/governance.md": doc("Governance")})
    assert section_derived_from(with_governance) == "../dna/governance.md"
    with_root = snapshot_of(
        tmp_path / "b",
        {"dna/rules.md": doc("Rules", extra="\nThe root document is `base.md`.\n")},
    )
    assert section_derived_from(with_root) == "../dna/base.md"
    bare = snapshot_of(tmp_path / "c", {"notes.md": doc("Notes")})
    assert section_derived_from(bare) is None
    planned = plan_section_index(bare, AllFree(), False, "adr/x.md")
    assert planned is not None and "derived_from" not in planned.text


# --------------------------------------------------------------------------------------------
# Property (spec 07 §4.4): one link to the new document, every previous link still resolves
# --------------------------------------------------------------------------------------------

WORD = st.text(
    alphabet=st.characters(
        blacklist_characters="[]()\r\n\\`|", blacklist_categories=("Cs", "Cc", "Zl", "Zp")
    ),
    min_size=1,
    max_size=20,
).filter(lambda text: text.strip() != "")
NAME = st.from_regex(r"\A[a-z][a-z0-9-]{0,8}\Z")
LINE = st.one_of(
    st.builds(lambda w, n: f"- [{w}]({n}.md) — {w}", WORD, NAME),
    st.builds(lambda w, n: f"  * [`{w}`]({n}.md)", WORD, NAME),
    st.builds(lambda w, n, k: f"{k}. [{w}]({n}.md) — x", WORD, NAME, st.integers(1, 99)),
    st.builds(lambda w, n: f"| [{w}]({n}.md) | {w} | y |", WORD, NAME),
    st.builds(lambda w, n: f"See [{w}](../{n}.md) and [x](https://e.org/{n}.md).", WORD, NAME),
    st.builds(lambda n: f"```\n- [fenced]({n}.md)\n```", NAME),
    st.just(SECTION_PLACEHOLDER),
    st.just(""),
    WORD,
)


@given(st.lists(LINE, max_size=12), WORD, WORD)
def test_registration_adds_exactly_one_link_and_keeps_every_other(
    lines: list[str], title: str, purpose: str
) -> None:
    index_path, new_doc = "guide/README.md", "guide/zz-new-document.md"
    text = "---\ntitle: Guide\ndoc_function: index\n---\n# Guide\n\n" + "\n".join(lines) + "\n"
    before = [link.to for link in parse_text(index_path, text).links]
    after_text = register_line(text, index_path, new_doc, title.strip(), purpose.strip())
    after = [link.to for link in parse_text(index_path, after_text).links]
    assert after.count(new_doc) == 1
    remaining = list(after)
    remaining.remove(new_doc)
    assert sorted(remaining, key=str) == sorted(before, key=str)
    assert SECTION_PLACEHOLDER not in after_text
    assert after_text.endswith("\n")
