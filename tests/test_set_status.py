"""`bank_set_status` (spec 03 §8, spec 07 §3.16): a lifecycle transition through the gates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, apply_diff, normalise, run_cli

from mbank.reducers.set_status import TOOL, format_set_status, gate_and_plan
from mbank.validate import findings

SET = "bank_set_status"
RULES = "domain/rules.md"


def identities(writer: Writer) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.message) for f in findings(writer.bank.refresh())}


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(before.split("\n"), after.split("\n"), strict=False) if a != b]


@pytest.fixture
def writer(fixture_plus: Path) -> Writer:
    return Writer(fixture_plus)


@pytest.fixture
def base(fixture_bank: Path) -> Writer:
    return Writer(fixture_bank)


def test_archiving_with_release_plans_one_replace_op(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": "conflict.md", "status": "archived", "releaseCanonical": True}
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert [op["kind"] for op in planned["plan"]["ops"]] == ["replace"]
    assert planned["result"]["released"] == ["filter_thresholds"]
    assert planned == snapshot


def test_only_the_status_line_changes(writer: Writer) -> None:
    before = writer.text(RULES)
    writer.call(SET, {"path": RULES, "status": "draft"})
    after = writer.text(RULES)
    assert changed_lines(before, after) == [("status: active", "status: draft")]
    assert len(before) == len(after) + 1


def test_result_has_the_spec_keys_in_order(writer: Writer, snapshot: Any) -> None:
    dry = writer.call(
        SET, {"path": RULES, "status": " archived ", "releaseCanonical": True}, dry_run=True
    )
    assert list(dry) == ["path", "from", "to", "changed", "dryRun", "warnings", "released", "diff"]
    assert dry["released"] == ["filter_thresholds", "humanization_rules"]
    assert dry["to"] == "archived" and dry["changed"] is False
    real = writer.call(SET, {"path": RULES, "status": "draft"})
    assert list(real) == ["path", "from", "to", "changed", "dryRun", "warnings", "journalId"]
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_the_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(writer: Writer) -> None:
    arguments = {"path": RULES, "status": "archived", "releaseCanonical": True}
    before = writer.text(RULES)
    dry = writer.call(SET, arguments, dry_run=True)
    assert writer.text(RULES) == before
    writer.call(SET, arguments)
    assert apply_diff({RULES: before}, dry["diff"])[RULES] == writer.text(RULES)


def test_the_current_status_is_a_no_op(writer: Writer) -> None:
    records = writer.journal_count()
    result = writer.call(SET, {"path": RULES, "status": "active"})
    assert result == {
        "path": RULES,
        "from": "active",
        "to": "active",
        "changed": False,
        "dryRun": False,
        "warnings": [],
    }
    assert writer.journal_count() == records
    assert writer.call(SET, {"path": RULES, "status": "active"}, dry_run=True)["diff"] == ""


def test_activation_without_derived_from_is_refused(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "conflict.md", "status": "active"}) == (
            "derived-from-required",
            "Governance requires every active non-root document to declare derived_from.",
        )


def test_a_root_document_activates_without_derived_from(writer: Writer) -> None:
    writer.governance = True  # the root lives in dna/: a person's change (issue 14)
    writer.call(SET, {"path": "dna/principles.md", "status": "draft"})
    result = writer.call(SET, {"path": "dna/principles.md", "status": "active"})
    assert result["changed"] is True
    assert "status: active" in writer.text("dna/principles.md")


def test_a_pre_existing_ssot_conflict_does_not_block_a_transition(writer: Writer) -> None:
    # domain/rules.md and conflict.md both own filter_thresholds (an ssot-conflict already)
    before = identities(writer)
    writer.call(SET, {"path": RULES, "status": "draft"})
    writer.call(SET, {"path": RULES, "status": "active"})
    assert identities(writer) == before


def test_the_post_check_still_refuses_a_new_error(writer: Writer, assert_unchanged: Any) -> None:
    # a status line inside a multi-line flow sequence: rewriting it breaks the YAML
    (writer.root / "odd.md").write_text(
        "---\ntitle: Odd\ndoc_kind: domain\ndoc_function: canonical\nderived_from:\n"
        "  - domain/rules.md\ntags: [a,\nstatus: x]\n---\n# Odd\n"
    )
    with assert_unchanged(writer.root):
        reason, message = writer.refusal(SET, {"path": "odd.md", "status": "draft"})
    assert reason == "postcheck"
    assert message.startswith(
        "This write would add 1 validation error, so nothing was written:\n"
        "- [invalid-frontmatter] odd.md: YAML frontmatter does not parse ("
    )


def test_an_undeclared_status_some_document_uses_warns(writer: Writer) -> None:
    (writer.root / "old.md").write_text(
        "---\ntitle: Old\ndoc_kind: domain\nstatus: retired\n---\n# Old\n"
    )
    result = writer.call(SET, {"path": "orphan.md", "status": "retired"})
    assert result["warnings"] == [
        'status "retired" is not among the values declared in dna/.',
        'New warning unknown-enum-value on orphan.md: status: "retired" is not among the '
        "values declared in dna/ (active, archived, draft).",
    ]


def test_a_status_neither_declared_nor_used_is_refused(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "orphan.md", "status": "published"}) == (
            "value-not-declared",
            'status "published" is neither declared in dna/ nor used by any document. '
            "Allowed: draft | active | archived. A new value is declared in "
            "dna/frontmatter.md first.",
        )


def test_the_inbox_is_moved_by_promote_or_discard(writer: Writer, assert_unchanged: Any) -> None:
    (writer.root / "_inbox").mkdir()
    (writer.root / "_inbox" / "n.md").write_text("---\ntitle: Note\nstatus: draft\n---\n# Note\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "_inbox/n.md", "status": "active"}) == (
            "inbox-status",
            "_inbox/n.md is in the quarantine, where status is not the thing that moves it. Use "
            "bank_promote to place it and set its status in one step, or bank_discard to drop it.",
        )


def test_document_refusals(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            SET, {"path": "flows/templates/adr/ADR-ID.md", "status": "archived"}
        ) == (
            "template",
            "flows/templates/adr/ADR-ID.md is a template. Templates are edited by hand, not "
            "through the server.",
        )
        assert writer.refusal(SET, {"path": "nowhere.md", "status": "active"}) == (
            "not-a-document",
            "Not a document of this bank: nowhere.md",
        )
        assert writer.refusal(SET, {"path": "broken/latin1.md", "status": "active"}) == (
            "not-text",
            "broken/latin1.md is not UTF-8 text, so mbank does not write to it.",
        )
        assert writer.refusal(SET, {"path": "x.md\x00.txt", "status": "active"}) == (
            "path-nul",
            "Path contains a NUL character.",
        )


def test_status_is_required(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": RULES, "status": "  "}) == (
            "status-required",
            "`status` is required: the lifecycle value to move this document to.",
        )


def test_release_canonical_belongs_to_archiving(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            SET, {"path": RULES, "status": "draft", "releaseCanonical": True}
        ) == (
            "release-not-archiving",
            "`releaseCanonical` belongs to archiving. Ownership is given up when a document "
            "retires, not on any other transition.",
        )


def test_no_frontmatter_means_no_status(writer: Writer, assert_unchanged: Any) -> None:
    (writer.root / "bare.md").write_text("# Bare\n\nNo header.\n")
    (writer.root / "open.md").write_text("---\ntitle: Open\n\n# Open\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": "bare.md", "status": "draft"}) == (
            "no-frontmatter",
            "bare.md has no frontmatter, so it has no status to set.",
        )
        assert writer.refusal(SET, {"path": "open.md", "status": "draft"}) == (
            "no-frontmatter",
            "open.md has no frontmatter, so it has no status to set.",
        )


def test_archiving_an_owner_needs_release_canonical(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(SET, {"path": RULES, "status": "archived"}) == (
            "still-owns",
            'domain/rules.md still owns "filter_thresholds", "humanization_rules". An archived '
            "document that keeps its keys blocks whoever should own them next. Pass "
            "releaseCanonical: true to give them up with this transition, or move them to the "
            "successor document first.",
        )


def test_release_drops_the_keys_and_lets_a_successor_claim_them(writer: Writer) -> None:
    before = writer.text(RULES)
    result = writer.call(SET, {"path": RULES, "status": "archived", "releaseCanonical": True})
    assert result["released"] == ["filter_thresholds", "humanization_rules"]
    after = writer.text(RULES)
    assert after == before.replace(
        "canonical_for:\n  - filter_thresholds\n  - humanization_rules\n", ""
    ).replace("status: active", "status: archived")
    # conflict.md, the other claimant, is now the one owner: the ssot-conflict is gone
    assert not [f for f in findings(writer.bank.refresh()) if f.rule == "ssot-conflict"]
    assert writer.bank.refresh().owners["filter_thresholds"] == ("conflict.md",)


def test_release_drops_inline_and_unindented_forms(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "inline.md").write_text(
        "---\ntitle: Inline\ncanonical_for: [a_key, b_key]\nstatus: active\n---\n# Inline\n"
    )
    (root / "flat.md").write_text(
        "---\ntitle: Flat\ncanonical_for:\n- c_key\n- d_key\nstatus: draft\nowner: me\n"
        "---\n# Flat\n"
    )
    writer = Writer(root)
    inline = writer.call(SET, {"path": "inline.md", "status": "archived", "releaseCanonical": True})
    flat = writer.call(SET, {"path": "flat.md", "status": "archived", "releaseCanonical": True})
    assert inline["released"] == ["a_key", "b_key"] and flat["released"] == ["c_key", "d_key"]
    assert writer.text("inline.md") == "---\ntitle: Inline\nstatus: archived\n---\n# Inline\n"
    assert writer.text("flat.md") == "---\ntitle: Flat\nstatus: archived\nowner: me\n---\n# Flat\n"


def test_release_on_an_archived_owner_keeps_the_status_line(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "old.md").write_text(
        "---\ntitle: Old\nstatus:   archived\ncanonical_for:\n  - k\n---\n# Old\n"
    )
    writer = Writer(root)
    result = writer.call(SET, {"path": "old.md", "status": "archived", "releaseCanonical": True})
    assert result["changed"] is True and result["released"] == ["k"]
    assert writer.text("old.md") == "---\ntitle: Old\nstatus:   archived\n---\n# Old\n"


def test_a_missing_status_line_is_inserted_before_the_closing_fence(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "doc.md").write_text("---\ntitle: Doc\n---\n# Doc\n")
    writer = Writer(root)
    result = writer.call(SET, {"path": "doc.md", "status": "draft"})
    assert result["from"] == ""
    assert writer.text("doc.md") == "---\ntitle: Doc\nstatus: draft\n---\n# Doc\n"


def test_a_status_that_would_not_read_back_plain_is_double_quoted(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: A\nstatus: draft\n---\n# A\n")
    (root / "b.md").write_text("---\ntitle: B\nstatus: >-\n  folded\n  draft\n---\n# B\n")
    writer = Writer(root)
    writer.call(SET, {"path": "a.md", "status": "true"})
    assert writer.text("a.md") == '---\ntitle: A\nstatus: "true"\n---\n# A\n'
    writer.call(SET, {"path": "a.md", "status": "on hold: waiting"})
    assert writer.text("a.md") == '---\ntitle: A\nstatus: "on hold: waiting"\n---\n# A\n'
    result = writer.call(SET, {"path": "b.md", "status": "active"})
    assert result["from"] == "folded draft"
    assert writer.text("b.md") == "---\ntitle: B\nstatus: active\n---\n# B\n"


def test_a_transition_adds_no_error(writer: Writer) -> None:
    before = identities(writer)
    writer.call(SET, {"path": "orphan.md", "status": "archived"})
    writer.call(SET, {"path": "engineering/logging.md", "status": "draft"})
    assert {i for i in identities(writer) if i[0] != "unknown-enum-value"} <= before


def test_a_crlf_file_stays_crlf_and_a_bom_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Notes\nstatus: draft\n---\n# Notes\n"
    (root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (root / "bom.md").write_bytes(("\ufeff" + text).encode())
    writer = Writer(root)
    for path in ("crlf.md", "bom.md"):
        writer.call(SET, {"path": path, "status": "archived"})
    expected = text.replace("draft", "archived")
    assert (root / "crlf.md").read_bytes() == expected.replace("\n", "\r\n").encode()
    assert (root / "bom.md").read_bytes() == ("\ufeff" + expected).encode()


def test_human_output(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": RULES, "status": "archived", "releaseCanonical": True}
    dry = format_set_status(writer.call(SET, arguments, dry_run=True))
    real = format_set_status(writer.call(SET, arguments))
    same = format_set_status(writer.call(SET, {"path": RULES, "status": "archived"}))
    assert dry.startswith("WOULD SET domain/rules.md status: active -> archived\nreleased: ")
    assert real.startswith("SET domain/rules.md status: active -> archived\n")
    assert same == "UNCHANGED domain/rules.md status: archived\n"
    assert normalise({"dry": dry, "real": real, "same": same}, writer.root) == snapshot


def test_the_base_fixture_keeps_its_five_findings_through_transitions(base: Writer) -> None:
    before = identities(base)
    assert len(before) == 5
    base.call(SET, {"path": "conflict.md", "status": "archived", "releaseCanonical": True})
    base.call(SET, {"path": "orphan.md", "status": "archived"})
    after = identities(base)
    assert after <= before and len(after) == 4  # the ssot-conflict is gone with the release


def test_cli_set_status(writer: Writer, capsys: Any, snapshot: Any, assert_unchanged: Any) -> None:
    root = str(writer.root)
    with assert_unchanged(writer.root):
        dry = run_cli(
            ["--root", root, "set-status", RULES, "archived", "--release-canonical", "--dry-run"],
            capsys,
        )
        refused = run_cli(["--root", root, "set-status", RULES, "archived"], capsys)
        same = run_cli(["--root", root, "set-status", RULES, "active"], capsys)
    assert dry[0] == 0 and dry[1].startswith(
        "WOULD SET domain/rules.md status: active -> archived\n"
        "released: filter_thresholds, humanization_rules\n--- diff ---\n"
    )
    assert refused[0] == 1 and refused[2].startswith('mbank: domain/rules.md still owns "')
    assert same == (0, "UNCHANGED domain/rules.md status: active\n", "")
    real = run_cli(["--root", root, "--json", "set-status", RULES, "draft"], capsys)
    data = json.loads(real[1])
    assert data["changed"] is True and data["from"] == "active" and data["to"] == "draft"
    assert normalise({"dry": dry[1], "json": data}, writer.root) == snapshot


GALLERY = {
    "draft-to-active": {"path": "doc.md", "status": "active"},
    "root-activates": {"path": "root.md", "status": "active"},
    "inserted": {"path": "bare.md", "status": "draft"},
    "quoted": {"path": "doc.md", "status": "true"},
    "release-inline": {"path": "inline.md", "status": "archived", "releaseCanonical": True},
    "undeclared": {"path": "doc.md", "status": "retired"},
    "crlf-file": {"path": "crlf.md", "status": "active"},
    "no-op": {"path": "doc.md", "status": "draft"},
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_kind_of_status_plan(base: Writer, snapshot: Any, name: str) -> None:
    root = base.root
    head = "doc_kind: domain\ndoc_function: canonical\n"
    (root / "doc.md").write_text(
        f"---\ntitle: Doc\n{head}derived_from:\n  - dna/principles.md\nstatus: draft\n---\n# Doc\n"
    )
    (root / "bare.md").write_text(f"---\ntitle: Bare\n{head}---\n# Bare\n")
    (root / "inline.md").write_text(
        f"---\ntitle: Inline\n{head}canonical_for: [gallery_key]\nstatus: draft\n---\n# Inline\n"
    )
    crlf = f"---\ntitle: Crlf\n{head}derived_from: [dna/principles.md]\nstatus: draft\n---\n"
    (root / "crlf.md").write_bytes((crlf + "# Crlf\n").replace("\n", "\r\n").encode())
    principles = root / "dna" / "principles.md"
    principles.write_text(principles.read_text().replace("status: active", "status: draft"))
    # issue 14: an undeclared status is accepted (with a warning) only once a document uses it
    (root / "legacy.md").write_text(f'---\ntitle: Legacy\n{head}status: "true"\n---\n# L\n')
    (root / "retired.md").write_text(f"---\ntitle: Retired\n{head}status: retired\n---\n# R\n")
    arguments = GALLERY[name]
    if name == "root-activates":
        # the root lives in dna/: a person's change, which shows its validation delta
        base.governance = True
        arguments = {"path": "dna/principles.md", "status": "active"}
    assert base.planned(gate_and_plan, TOOL, arguments) == snapshot
