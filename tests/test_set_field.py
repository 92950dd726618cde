"""`bank_set_field` (spec 03 §9, spec 07 §3.17, §4.4): one scalar value that reads back."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, apply_diff, normalise, run_cli
from hypothesis import given
from hypothesis import strategies as st

from mbank.model import RefusalError
from mbank.parse import load_yaml, scalar_text
from mbank.read import read as read_documents
from mbank.reducers.set_field import TOOL, format_set_field, gate_and_plan, value_line
from mbank.validate import findings

SET = "bank_set_field"
RULES = "domain/rules.md"
GLOSSARY = "domain/glossary.md"


def identities(writer: Writer) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.message) for f in findings(writer.bank.refresh())}


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(before.split("\n"), after.split("\n"), strict=False) if a != b]


def one_doc(tmp_path: Path, frontmatter: str, body: str = "# Doc\n") -> Writer:
    root = tmp_path / "bank"
    root.mkdir(exist_ok=True)
    (root / "doc.md").write_text(f"---\n{frontmatter}---\n{body}")
    return Writer(root)


@pytest.fixture
def writer(fixture_plus: Path) -> Writer:
    return Writer(fixture_plus)


# --------------------------------------------------------------------------------------------
# plans, results, diffs
# --------------------------------------------------------------------------------------------


def test_a_title_plans_the_document_then_each_index(writer: Writer, snapshot: Any) -> None:
    ops_index = writer.root / "ops" / "README.md"
    ops_index.write_text(
        ops_index.read_text()
        + "\n- [`Domain Rules`](../domain/rules.md) — Filter thresholds and humanization rules "
        "for incoming jobs.\n"
    )
    planned = writer.planned(
        gate_and_plan, TOOL, {"path": RULES, "field": "title", "value": "Intake Rules"}
    )
    assert [(op["kind"], op["path"]) for op in planned["plan"]["ops"]] == [
        ("replace", RULES),
        ("replace", "domain/README.md"),
        ("replace", "ops/README.md"),
    ]
    assert planned["result"]["indexes"] == ["domain/README.md", "ops/README.md"]
    assert planned["result"]["heading"] is True
    assert planned == snapshot


def test_a_purpose_plans_the_document_and_the_index_that_repeats_it(
    writer: Writer, snapshot: Any
) -> None:
    arguments = {"path": GLOSSARY, "field": "purpose", "value": "Read when: a word is unclear"}
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert planned["result"]["indexes"] == ["domain/README.md"]
    assert planned == snapshot


def test_result_has_the_spec_keys_in_order(writer: Writer, snapshot: Any) -> None:
    dry = writer.call(SET, {"path": RULES, "field": "title", "value": "Intake Rules"}, dry_run=True)
    assert list(dry) == [
        "path",
        "field",
        "from",
        "to",
        "changed",
        "dryRun",
        "line",
        "indexes",
        "heading",
        "diff",
    ]
    real = writer.call(SET, {"path": RULES, "field": "owner", "value": "  platform team  "})
    assert list(real) == [
        "path",
        "field",
        "from",
        "to",
        "changed",
        "dryRun",
        "line",
        "indexes",
        "journalId",
    ]
    assert real["from"] is None and real["to"] == "platform team" and real["changed"] is True
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_the_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(writer: Writer) -> None:
    paths = [RULES, "domain/README.md"]
    before = {path: writer.text(path) for path in paths}
    arguments = {"path": RULES, "field": "title", "value": "Intake Rules"}
    dry = writer.call(SET, arguments, dry_run=True)
    assert {path: writer.text(path) for path in paths} == before
    writer.call(SET, arguments)
    assert apply_diff(before, dry["diff"]) == {path: writer.text(path) for path in paths}


def test_a_dry_run_writes_nothing_but_reports_indexes_and_heading(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        result = writer.call(
            SET, {"path": RULES, "field": "title", "value": "Intake Rules"}, dry_run=True
        )
    assert result["changed"] is False and result["dryRun"] is True
    assert result["indexes"] == ["domain/README.md"] and result["heading"] is True


# --------------------------------------------------------------------------------------------
# the line and its quoting
# --------------------------------------------------------------------------------------------


def test_a_purpose_change_leaves_every_other_byte(writer: Writer) -> None:
    before = writer.text(RULES)
    result = writer.call(SET, {"path": RULES, "field": "purpose", "value": "Intake numbers."})
    assert changed_lines(before, writer.text(RULES)) == [
        (
            "purpose: Filter thresholds and humanization rules for incoming jobs.",
            "purpose: Intake numbers.",
        )
    ]
    assert result["line"] == "purpose: Intake numbers."
    assert result["indexes"] == []  # the index's hand-written summary does not repeat it


def test_a_colon_space_is_double_quoted(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "title: Doc\npurpose: Old text\n")
    result = writer.call(
        SET, {"path": "doc.md", "field": "purpose", "value": "Read when: the build breaks"}
    )
    assert result["line"] == 'purpose: "Read when: the build breaks"'
    assert (
        writer.text("doc.md")
        == '---\ntitle: Doc\npurpose: "Read when: the build breaks"\n---\n# Doc\n'
    )


def test_single_quotes_are_kept_and_doubled(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "purpose: 'Read before the release.'\n")
    result = writer.call(
        SET, {"path": "doc.md", "field": "purpose", "value": "Read before the owner's release."}
    )
    assert result["line"] == "purpose: 'Read before the owner''s release.'"
    assert result["from"] == "Read before the release."


def test_double_quotes_are_kept_with_json_escapes(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, 'title: "First"\n', "# First\n")
    result = writer.call(SET, {"path": "doc.md", "field": "title", "value": 'Read "second".'})
    assert result["line"] == 'title: "Read \\"second\\"."'
    assert result["heading"] is True
    assert writer.text("doc.md") == '---\ntitle: "Read \\"second\\"."\n---\n# Read "second".\n'


def test_a_new_date_like_value_is_quoted_to_stay_a_string(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "title: Doc\nstatus: draft\n")
    result = writer.call(SET, {"path": "doc.md", "field": "reviewed_on", "value": "2026-09-14"})
    assert result["from"] is None
    assert (
        writer.text("doc.md")
        == '---\ntitle: Doc\nstatus: draft\nreviewed_on: "2026-09-14"\n---\n# Doc\n'
    )


def test_dates_and_numbers_stay_unquoted(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "date: 2026-09-01\nversion: 3\nratio: 0.5\nflag: true\n")
    writer.call(SET, {"path": "doc.md", "field": "date", "value": "2026-09-14"})
    writer.call(SET, {"path": "doc.md", "field": "version", "value": "4"})
    writer.call(SET, {"path": "doc.md", "field": "ratio", "value": "0.75"})
    writer.call(SET, {"path": "doc.md", "field": "flag", "value": "false"})
    assert writer.text("doc.md") == (
        "---\ndate: 2026-09-14\nversion: 4\nratio: 0.75\nflag: false\n---\n# Doc\n"
    )
    data = writer.bank.refresh().docs["doc.md"].data
    assert data == {"date": dt.date(2026, 9, 14), "version": 4, "ratio": 0.75, "flag": False}


def test_a_date_given_a_non_date_becomes_a_string(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "date: 2026-09-01\n")
    result = writer.call(SET, {"path": "doc.md", "field": "date", "value": "soon"})
    assert result["line"] == "date: soon"
    writer.call(SET, {"path": "doc.md", "field": "date", "value": "12"})
    assert writer.text("doc.md") == '---\ndate: "12"\n---\n# Doc\n'


def test_yes_and_no_are_strings_under_yaml_1_2(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "owner: yes\n")
    result = writer.call(SET, {"path": "doc.md", "field": "owner", "value": "no"})
    assert result["line"] == "owner: no"


def test_a_folded_value_collapses_to_one_line(tmp_path: Path) -> None:
    writer = one_doc(
        tmp_path,
        "title: Doc\npurpose: >-\n  A long purpose\n\n  folded over lines.\nstatus: draft\n",
    )
    result = writer.call(SET, {"path": "doc.md", "field": "purpose", "value": "Short."})
    assert result["from"] == "A long purpose\nfolded over lines."
    assert writer.text("doc.md") == "---\ntitle: Doc\npurpose: Short.\nstatus: draft\n---\n# Doc\n"


def test_a_blank_line_not_followed_by_an_indented_one_is_kept(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "purpose: Old\n  continued\n\nstatus: draft\n")
    writer.call(SET, {"path": "doc.md", "field": "purpose", "value": "New"})
    assert writer.text("doc.md") == "---\npurpose: New\n\nstatus: draft\n---\n# Doc\n"


def test_a_new_key_goes_just_before_the_closing_fence(writer: Writer) -> None:
    before = writer.text(RULES)
    writer.call(SET, {"path": RULES, "field": "owner", "value": "intake team"})
    assert writer.text(RULES) == before.replace(
        "audience: humans_and_agents\n---\n",
        "audience: humans_and_agents\nowner: intake team\n---\n",
    )


def test_the_current_value_is_a_no_op(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        result = writer.call(
            SET, {"path": RULES, "field": "audience", "value": " humans_and_agents"}
        )
    assert result == {
        "path": RULES,
        "field": "audience",
        "from": "humans_and_agents",
        "to": "humans_and_agents",
        "changed": False,
        "dryRun": False,
        "line": "audience: humans_and_agents",
        "indexes": [],
    }
    dry = writer.call(
        SET, {"path": RULES, "field": "audience", "value": "humans_and_agents"}, dry_run=True
    )
    assert dry["diff"] == ""


def test_a_value_that_cannot_read_back_is_refused(tmp_path: Path, assert_unchanged: Any) -> None:
    writer = one_doc(tmp_path, "title: Doc\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "doc.md", "field": "note", "value": "a\x85b"}) == (
            "value-unwritable",
            '"a\x85b" cannot be written as a frontmatter value that reads back unchanged.',
        )


def test_a_write_that_breaks_the_surrounding_yaml_is_refused(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    # `title: x}` closes a flow mapping opened on the line before: replacing it breaks the YAML
    writer = one_doc(tmp_path, "meta: {a: 1,\ntitle: x}\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "doc.md", "field": "title", "value": "y"}) == (
            "readback-failed",
            "Setting title would leave doc.md with frontmatter that does not read back. Nothing "
            "was written.",
        )


def test_a_document_with_broken_yaml_can_be_repaired(writer: Writer) -> None:
    before = identities(writer)
    path = "broken/bad-yaml.md"
    recovered = "Defines the retry layer: backoff, jitter, and give-up rules."
    # the leniently recovered value is the current one: setting it again is a no-op (§9 step 2)
    same = writer.call(SET, {"path": path, "field": "purpose", "value": recovered})
    assert same["changed"] is False
    result = writer.call(
        SET, {"path": path, "field": "purpose", "value": "Retry layer: backoff and give-up rules."}
    )
    assert result["line"] == 'purpose: "Retry layer: backoff and give-up rules."'
    after = identities(writer)
    assert after < before
    assert not [i for i in after if i[1] == path]


# --------------------------------------------------------------------------------------------
# title and purpose follow into the H1 and the index entries
# --------------------------------------------------------------------------------------------


def test_the_index_entry_follows_the_purpose(writer: Writer) -> None:
    before = writer.text("domain/README.md")
    result = writer.call(
        SET, {"path": GLOSSARY, "field": "purpose", "value": "Words and their meaning."}
    )
    assert result["indexes"] == ["domain/README.md"]
    assert changed_lines(before, writer.text("domain/README.md")) == [
        (
            "- [Domain Glossary](glossary.md) — Terms used across the service and what each one "
            "means.",
            "- [Domain Glossary](glossary.md) — Words and their meaning.",
        )
    ]


def test_a_hand_written_summary_is_left_alone(writer: Writer, assert_unchanged: Any) -> None:
    before = writer.text("domain/README.md")
    result = writer.call(SET, {"path": RULES, "field": "purpose", "value": "Intake numbers."})
    assert result["indexes"] == []
    assert writer.text("domain/README.md") == before


def test_a_title_renames_the_h1_and_the_index_links(writer: Writer) -> None:
    ops_index = writer.root / "ops" / "README.md"
    ops_index.write_text(
        ops_index.read_text() + "\n- [`Domain Rules`](../domain/rules.md) — the numbers.\n\n"
        "```\n- [Domain Rules](../domain/rules.md) — inside a fence\n```\n"
    )
    result = writer.call(SET, {"path": RULES, "field": "title", "value": "Intake Rules"})
    assert result["heading"] is True
    assert result["indexes"] == ["domain/README.md", "ops/README.md"]
    assert "\n# Intake Rules\n" in writer.text(RULES)
    assert "- [Intake Rules](rules.md) — The intake rules" in writer.text("domain/README.md")
    ops = writer.text("ops/README.md")
    assert "- [`Intake Rules`](../domain/rules.md) — the numbers." in ops
    assert "- [Domain Rules](../domain/rules.md) — inside a fence" in ops
    assert read_documents(writer.bank.refresh(), RULES)["title"] == "Intake Rules"


def test_an_h1_with_other_text_is_left_alone(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "title: Doc\n", "# Something Else\n\n# Doc\n")
    result = writer.call(SET, {"path": "doc.md", "field": "title", "value": "New"})
    assert "heading" not in result
    assert writer.text("doc.md") == "---\ntitle: New\n---\n# Something Else\n\n# Doc\n"


def test_an_h1_in_a_fence_is_not_the_first_h1(tmp_path: Path) -> None:
    writer = one_doc(tmp_path, "title: Doc\n", "```\n# Doc\n```\n\n# Doc\n")
    writer.call(SET, {"path": "doc.md", "field": "title", "value": "New"})
    assert writer.text("doc.md") == "---\ntitle: New\n---\n```\n# Doc\n```\n\n# New\n"


def test_a_table_row_entry_follows_the_title(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "README.md").write_text(
        "---\ntitle: Index\ndoc_function: index\n---\n# Index\n\n| Doc | What |\n|---|---|\n"
        "| [`Old Name`](doc.md) | Old purpose. |\n"
    )
    (root / "doc.md").write_text("---\ntitle: Old Name\npurpose: Old purpose.\n---\n# Old Name\n")
    writer = Writer(root)
    writer.call(SET, {"path": "doc.md", "field": "title", "value": "New Name"})
    writer.call(SET, {"path": "doc.md", "field": "purpose", "value": "New purpose."})
    assert writer.text("README.md").endswith("| [`New Name`](doc.md) | New purpose. |\n")


# --------------------------------------------------------------------------------------------
# refusals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "reason", "message"),
    [
        (
            "status",
            "field-status",
            "status is where the gates are. Use bank_set_status, which runs them.",
        ),
        (
            "doc_kind",
            "field-identity",
            "doc_kind decides the template, the section index and the gates. Changing it is "
            "re-creating the document, not editing a value.",
        ),
        (
            "doc_function",
            "field-identity",
            "doc_function decides whether this is a document or a template. Changing it is "
            "re-creating the document, not editing a value.",
        ),
        (
            "derived_from",
            "value-not-list",
            "derived_from is a list: pass value as a list of strings (on the command line, a JSON "
            'array such as \'["a.md", "b.md"]\').',
        ),
        (
            "canonical_for",
            "value-not-list",
            "canonical_for is a list: pass value as a list of strings (on the command line, a JSON "
            'array such as \'["a.md", "b.md"]\').',
        ),
        (
            "must_not_define",
            "value-not-list",
            "must_not_define is a list: pass value as a list of strings (on the command line, "
            'a JSON array such as \'["a.md", "b.md"]\').',
        ),
        (
            "anchors",
            "value-not-list",
            "anchors is a list: pass value as a list of strings (on the command line, a JSON "
            'array such as \'["a.md", "b.md"]\').',
        ),
        ("bad key", "not-a-key", '"bad key" is not a frontmatter key.'),
        ("ключ", "not-a-key", '"ключ" is not a frontmatter key.'),
        ("1st", "not-a-key", '"1st" is not a frontmatter key.'),
        ("", "not-a-key", '"" is not a frontmatter key.'),
    ],
)
def test_refused_fields(
    writer: Writer, assert_unchanged: Any, field: str, reason: str, message: str
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": RULES, "field": field, "value": "x"}) == (
            reason,
            message,
        )


def test_values_must_be_one_non_blank_line(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": RULES, "field": "owner", "value": "  "}) == (
            "value-required",
            "`value` is empty. To remove a field, edit the document by hand and say so.",
        )
        for value in ("two\nlines", "two\rlines", "two\r\nlines"):
            assert writer.refusal(SET, {"path": RULES, "field": "owner", "value": value}) == (
                "value-multiline",
                "`value` must fit on one line: frontmatter values here are single scalars.",
            )


def test_an_undeclared_lifecycle_value_is_refused(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            SET,
            {"path": "features/FT-001/brief.md", "field": "delivery_status", "value": "shipped"},
        ) == (
            "value-not-declared",
            'delivery_status "shipped" is neither declared in dna/ nor used by any document. '
            "Allowed: planned | in_progress | done | cancelled. A new value is declared in "
            "dna/frontmatter.md first.",
        )
        assert writer.refusal(
            SET,
            {"path": "adr/ADR-001-queue-choice.md", "field": "decision_status", "value": "maybe"},
        ) == (
            "value-not-declared",
            'decision_status "maybe" is neither declared in dna/ nor used by any document. '
            "Allowed: proposed | accepted | superseded | rejected | pending. A new value is "
            "declared in "
            "dna/frontmatter.md first.",
        )
    result = writer.call(
        SET, {"path": "features/FT-001/brief.md", "field": "delivery_status", "value": "cancelled"}
    )
    assert result["line"] == "delivery_status: cancelled"


def test_lists_and_mappings_are_not_one_value(tmp_path: Path, assert_unchanged: Any) -> None:
    # issue 14: a key holding a list takes a list; a mapping is not written at all
    writer = one_doc(tmp_path, "title: Doc\ntags:\n  - a\nmeta: {x: 1}\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "doc.md", "field": "tags", "value": "x"}) == (
            "value-not-list",
            "tags is a list: pass value as a list of strings (on the command line, a JSON "
            'array such as \'["a.md", "b.md"]\').',
        )
        assert writer.refusal(SET, {"path": "doc.md", "field": "meta", "value": "x"}) == (
            "value-holds-mapping",
            "meta in doc.md holds a mapping, which this tool does not write: it sets one "
            "value, or a list field to a list.",
        )
        assert writer.refusal(SET, {"path": "doc.md", "field": "title", "value": ["x"]}) == (
            "value-holds-scalar",
            "title in doc.md holds one value, not a list. Pass value as a string to set it.",
        )


def test_no_frontmatter_means_no_field(tmp_path: Path, assert_unchanged: Any) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "bare.md").write_text("# Bare\n")
    (root / "open.md").write_text("---\ntitle: Open\n# Open\n")
    writer = Writer(root)
    with assert_unchanged(root):
        assert writer.refusal(SET, {"path": "bare.md", "field": "owner", "value": "x"}) == (
            "no-frontmatter",
            "bare.md has no frontmatter, so it has no owner to set.",
        )
        assert writer.refusal(SET, {"path": "open.md", "field": "title", "value": "x"}) == (
            "no-frontmatter",
            "open.md has no frontmatter, so it has no title to set.",
        )


def test_document_refusals(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            SET, {"path": "flows/templates/feature/brief.md", "field": "purpose", "value": "x"}
        ) == (
            "template",
            "flows/templates/feature/brief.md is a template. Templates are edited by hand, not "
            "through the server.",
        )
        assert writer.refusal(SET, {"path": "missing.md", "field": "purpose", "value": "x"}) == (
            "not-a-document",
            "Not a document of this bank: missing.md",
        )
        assert writer.refusal(
            SET, {"path": "broken/latin1.md", "field": "title", "value": "x"}
        ) == (
            "not-text",
            "broken/latin1.md is not UTF-8 text, so mbank does not write to it.",
        )
        assert writer.refusal(SET, {"path": "dir\\x.md", "field": "title", "value": "x"}) == (
            "path-backslash",
            'Path contains a backslash; bank paths use "/": dir\\x.md',
        )


def test_the_gates_run_in_the_spec_order(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        # a template beats a bad key; a bad key beats an empty value; status beats a blank value
        assert (
            writer.refusal(
                SET, {"path": "flows/templates/adr/ADR-ID.md", "field": "bad key", "value": ""}
            )[0]
            == "template"
        )
        assert (
            writer.refusal(SET, {"path": RULES, "field": "bad key", "value": ""})[0] == "not-a-key"
        )
        assert (
            writer.refusal(SET, {"path": RULES, "field": "status", "value": ""})[0]
            == "field-status"
        )
        assert writer.refusal(SET, {"path": RULES, "field": "owner", "value": "a\nb"})[0] == (
            "value-multiline"
        )


# --------------------------------------------------------------------------------------------
# encodings, findings, human output
# --------------------------------------------------------------------------------------------


def test_a_crlf_file_stays_crlf_and_a_bom_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Notes\npurpose: Old.\n---\n# Notes\n"
    (root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (root / "bom.md").write_bytes(("\ufeff" + text).encode())
    writer = Writer(root)
    for path in ("crlf.md", "bom.md"):
        writer.call(SET, {"path": path, "field": "purpose", "value": "New."})
        writer.call(SET, {"path": path, "field": "title", "value": "Renamed"})
    expected = text.replace("Old.", "New.").replace("Notes", "Renamed")
    assert (root / "crlf.md").read_bytes() == expected.replace("\n", "\r\n").encode()
    assert (root / "bom.md").read_bytes() == ("\ufeff" + expected).encode()


def test_set_field_adds_no_finding(writer: Writer) -> None:
    before = identities(writer)
    writer.call(SET, {"path": RULES, "field": "title", "value": "Intake Rules"})
    writer.call(SET, {"path": GLOSSARY, "field": "purpose", "value": "Words: what they mean."})
    writer.call(SET, {"path": RULES, "field": "reviewed_on", "value": "2026-09-14"})
    assert identities(writer) == before


def test_human_output(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": RULES, "field": "title", "value": "Intake Rules"}
    dry = format_set_field(writer.call(SET, arguments, dry_run=True))
    real = format_set_field(writer.call(SET, arguments))
    same = format_set_field(writer.call(SET, arguments))
    added = format_set_field(writer.call(SET, {"path": RULES, "field": "owner", "value": "me"}))
    assert dry.startswith(
        "WOULD SET domain/rules.md title: Domain Rules -> Intake Rules\nline: title: Intake Rules\n"
        "indexes: domain/README.md\nheading renamed\n--- diff ---\n"
    )
    assert real.startswith("SET domain/rules.md title: Domain Rules -> Intake Rules\n")
    assert same == "UNCHANGED domain/rules.md title: Intake Rules\n"
    assert added.startswith(
        "SET domain/rules.md owner: (absent) -> me\nline: owner: me\nindexes: (none)\n"
    )
    assert (
        normalise({"dry": dry, "real": real, "same": same, "added": added}, writer.root) == snapshot
    )


# --------------------------------------------------------------------------------------------
# the line writer, as a property (spec 07 §4.4)
# --------------------------------------------------------------------------------------------

ONE_LINE = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(bool)
)
TRICKY = st.sampled_from(
    [
        "yes",
        "No",
        "on",
        "012",
        "1_000",
        "1:30",
        "2026-09-14",
        "true",
        "null",
        "~",
        "1e3",
        "<<",
        "=",
        "- item",
        "#x",
        "a #b",
        "a: b",
        "key:",
        "'q'",
        '"q"',
        "[a]",
        "{a: 1}",
        "&a",
        "*a",
        "!tag",
        "|",
        ">",
        "%x",
        "@x",
        "`x`",
        "0x1F",
        "0o17",
        ".inf",
        "-.inf",
        ".nan",
        "2026-09-14T10:00:00Z",
        "a\tb",
        "\x85",
        "a\u2028b",
        "\ufeffx",
        "é",
        "ü: x",
    ]
)
STYLES = st.sampled_from([None, "x", "'x'", '"x"', ">-"])


def _check_line(line: str, to: str, current: Any) -> None:
    loaded = load_yaml(line)
    assert loaded.error is None, line
    assert loaded.data is not None
    value = loaded.data["note"]
    if isinstance(value, str):
        assert value == to
    else:
        assert type(value) is type(current) and scalar_text(value) == to


@given(to=st.one_of(ONE_LINE, TRICKY), inline=STYLES)
def test_any_one_line_string_is_refused_or_reads_back_identically(
    to: str, inline: str | None
) -> None:
    to = to.strip()
    if not to:
        return
    try:
        line = value_line("note", to, inline, "x" if inline is not None else None)
    except RefusalError as exc:
        assert exc.refusal.rule == "value-unwritable"
        return
    _check_line(line, to, None)


@given(
    current=st.one_of(
        st.dates(min_value=dt.date(1000, 1, 1)),
        st.integers(min_value=-(10**12), max_value=10**12),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.booleans(),
    ),
    new=st.one_of(
        st.dates(min_value=dt.date(1000, 1, 1)),
        st.integers(min_value=-(10**12), max_value=10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
    ),
)
def test_a_typed_value_keeps_its_type_when_the_new_text_has_it(current: Any, new: Any) -> None:
    to = scalar_text(new)
    assert to is not None
    line = value_line("note", to, scalar_text(current), current)
    _check_line(line, to, current)
    value = load_yaml(line).data["note"]  # type: ignore[index]
    if type(new) is type(current):
        assert type(value) is type(current) and value == new


def test_cli_set_field(writer: Writer, capsys: Any, snapshot: Any, assert_unchanged: Any) -> None:
    root = str(writer.root)
    with assert_unchanged(writer.root):
        dry = run_cli(
            ["--root", root, "set-field", RULES, "title", "Intake Rules", "--dry-run"], capsys
        )
        refused = run_cli(["--root", root, "set-field", RULES, "status", "draft"], capsys)
        same = run_cli(
            ["--root", root, "set-field", RULES, "audience", "humans_and_agents"], capsys
        )
    assert dry[0] == 0 and dry[1].startswith(
        "WOULD SET domain/rules.md title: Domain Rules -> Intake Rules\n"
    )
    assert refused == (
        1,
        "",
        "mbank: status is where the gates are. Use bank_set_status, which runs them.\n",
    )
    assert same == (0, "UNCHANGED domain/rules.md audience: humans_and_agents\n", "")
    real = run_cli(["--root", root, "--json", "set-field", RULES, "title", "Intake Rules"], capsys)
    data = json.loads(real[1])
    assert data["changed"] is True and data["indexes"] == ["domain/README.md"]
    assert normalise({"dry": dry[1], "json": data}, writer.root) == snapshot


def test_cli_set_field_needs_three_arguments(writer: Writer, capsys: Any) -> None:
    with pytest.raises(SystemExit) as caught:
        run_cli(["--root", str(writer.root), "set-field", RULES, "title"], capsys)
    assert caught.value.code == 2


GALLERY = {
    "new-key-date-like": {"path": "doc.md", "field": "reviewed_on", "value": "2026-09-14"},
    "date-stays-date": {"path": "doc.md", "field": "date", "value": "2026-09-14"},
    "single-quotes-doubled": {"path": "doc.md", "field": "purpose", "value": "The owner's notes."},
    "double-quotes-escaped": {"path": "doc.md", "field": "title", "value": 'Read "second".'},
    "folded-collapsed": {"path": "doc.md", "field": "summary", "value": "Short."},
    "colon-quoted": {"path": RULES, "field": "purpose", "value": "Read when: intake changes"},
    "crlf-file": {"path": "crlf.md", "field": "title", "value": "Renamed"},
    "no-op": {"path": "doc.md", "field": "owner", "value": "yes"},
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_kind_of_field_plan(writer: Writer, snapshot: Any, name: str) -> None:
    (writer.root / "doc.md").write_text(
        "---\ntitle: \"First\"\npurpose: 'The notes.'\ndate: 2026-09-01\nowner: yes\n"
        "summary: >-\n  Folded\n  over lines.\n---\n# First\n"
    )
    (writer.root / "crlf.md").write_bytes(b"---\r\ntitle: Crlf\r\n---\r\n# Crlf\r\n")
    assert writer.planned(gate_and_plan, TOOL, GALLERY[name]) == snapshot
