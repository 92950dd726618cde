"""The post-check (spec 03 §1.5): no write adds a validation error that was not there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from planners import (
    Clock,
    Ids,
    document,
    plan_create_registered,
    small_bank,
    stand_in_findings_for,
)

from mbank.gates.postcheck import compare_findings, post_check, refusal_text, warning_text
from mbank.model import Finding, Intent, Plan, PlanOutcome, RefusalError
from mbank.plan import apply_virtually, create_document, replace_document
from mbank.snapshot import Bank, Snapshot
from mbank.writes import execute

E1 = Finding("broken-derived-from", "error", "a.md", "derived_from points at x.md", 4)
E2 = Finding("ssot-conflict", "error", "b.md", 'canonical_for "k" is claimed by 2 documents', None)
W1 = Finding(
    "unregistered-doc",
    "warning",
    "ops/runbook.md",
    "No index links to this document, so navigation cannot reach it.",
)


def test_one_new_error_refuses_with_the_exact_text() -> None:
    with pytest.raises(RefusalError) as caught:
        compare_findings([], [E1])
    assert caught.value.refusal.rule == "postcheck"
    assert caught.value.refusal.message == (
        "This write would add 1 validation error, so nothing was written:\n"
        "- [broken-derived-from] a.md: derived_from points at x.md"
    )


def test_several_new_errors_are_counted_in_the_plural_one_line_each() -> None:
    assert refusal_text([E1, E2]) == (
        "This write would add 2 validation errors, so nothing was written:\n"
        "- [broken-derived-from] a.md: derived_from points at x.md\n"
        '- [ssot-conflict] b.md: canonical_for "k" is claimed by 2 documents'
    )


def test_pre_existing_errors_never_block_a_write() -> None:
    assert compare_findings([E1, E2], [E1, E2]) == ()
    assert compare_findings([E1, E2], [E2]) == ()


def test_the_line_is_not_part_of_a_findings_identity() -> None:
    moved = Finding(E1.rule, E1.severity, E1.path, E1.message, 40)
    assert compare_findings([E1], [moved]) == ()


def test_a_known_warning_does_not_excuse_an_error_with_the_same_text() -> None:
    as_warning = Finding(E1.rule, "warning", E1.path, E1.message)
    with pytest.raises(RefusalError):
        compare_findings([as_warning], [E1])


def test_new_warnings_are_reported_in_validation_order_with_the_exact_text() -> None:
    other = Finding("unknown-enum-value", "warning", "a.md", 'status: "x" is not declared')
    assert compare_findings([other], [W1, other]) == (
        "New warning unregistered-doc on ops/runbook.md: "
        "No index links to this document, so navigation cannot reach it.",
    )
    assert warning_text(W1) == compare_findings([], [W1])[0]


def test_a_forced_write_reports_its_new_errors_as_warnings_in_validation_order() -> None:
    assert compare_findings([], [E1, W1, E2], force=True) == (
        "New error broken-derived-from on a.md: derived_from points at x.md",
        "New warning unregistered-doc on ops/runbook.md: "
        "No index links to this document, so navigation cannot reach it.",
        'New error ssot-conflict on b.md: canonical_for "k" is claimed by 2 documents',
    )


def _snapshot(tmp_path: Path) -> Snapshot:
    return Bank(small_bank(tmp_path / "bank")).refresh()


def test_post_check_validates_the_virtual_post_snapshot(tmp_path: Path) -> None:
    before = _snapshot(tmp_path)
    plan = Plan(
        "bank_create",
        (create_document("domain/new.md", document("New", "Unregistered.", ["missing.md"])),),
    )
    after = apply_virtually(before, plan)
    with pytest.raises(RefusalError) as caught:
        post_check(before, after, plan.paths, findings_for=stand_in_findings_for)
    assert caught.value.refusal.message == (
        "This write would add 1 validation error, so nothing was written:\n"
        "- [broken-derived-from] domain/new.md: "
        "derived_from points at a file that does not exist: missing.md"
    )
    warnings = post_check(before, after, plan.paths, force=True, findings_for=stand_in_findings_for)
    assert warnings == (
        "New error broken-derived-from on domain/new.md: "
        "derived_from points at a file that does not exist: missing.md",
        "New warning unregistered-doc on domain/new.md: "
        "No index links to this document, so navigation cannot reach it.",
    )


def test_the_partial_validation_is_asked_about_the_plans_paths(tmp_path: Path) -> None:
    before = _snapshot(tmp_path)
    plan = Plan("t", (create_document("domain/x.md", "# X\n"),))
    asked: list[tuple[int, tuple[str, ...]]] = []

    def findings_for(snapshot: Snapshot, paths: Any) -> tuple[Finding, ...]:
        asked.append((snapshot.generation, tuple(paths)))
        return ()

    post_check(before, apply_virtually(before, plan), plan.paths, findings_for=findings_for)
    assert asked == [(before.generation, ("domain/x.md",)), (-1, ("domain/x.md",))]


def test_a_write_refused_by_the_post_check_leaves_no_trace(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = small_bank(tmp_path / "bank")
    arguments = {"path": "domain/new.md", "index": "domain/README.md", "derived": ["nope.md"]}
    with assert_unchanged(root), pytest.raises(RefusalError) as caught:
        execute(
            Bank(root),
            "bank_create",
            arguments,
            plan_create_registered,
            dry_run=False,
            findings_for=stand_in_findings_for,
            clock=Clock(),
            make_id=Ids(),
        )
    assert caught.value.refusal.rule == "postcheck"
    assert not (root / ".mbank").exists()


def test_post_check_warnings_follow_the_tools_warnings_in_the_result(tmp_path: Path) -> None:
    root = small_bank(tmp_path / "bank")

    def unregistered(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        text = document("Lonely", "Nobody links here.")
        readme = replace_document(
            snapshot, "README.md", snapshot.raw["README.md"].replace("# Root", "# Root!")
        )
        return PlanOutcome(
            plan=Plan(intent.tool, (create_document("lonely.md", text), readme)),
            warnings=("a tool warning",),
        )

    outcome = execute(
        Bank(root),
        "bank_create",
        {},
        unregistered,
        dry_run=True,
        findings_for=stand_in_findings_for,
    )
    assert outcome.warnings == (
        "a tool warning",
        "New warning unregistered-doc on lonely.md: "
        "No index links to this document, so navigation cannot reach it.",
    )


# --------------------------------------------------------------------------------------------
# With the real validation (mbank.validate, the engine's default)
# --------------------------------------------------------------------------------------------


def _create(path: str, text: str) -> Any:
    def planner(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        return PlanOutcome(plan=Plan(intent.tool, (create_document(path, text),)))

    return planner


def test_the_engine_reports_a_new_warning_found_by_the_real_validation(
    fixture_bank: Path,
) -> None:
    text = document("Runbook", "How to run the service.", ["../domain/rules.md"])
    outcome = execute(
        Bank(fixture_bank), "bank_create", {}, _create("ops/runbook.md", text), dry_run=True
    )
    assert outcome.warnings == (
        "New warning unregistered-doc on ops/runbook.md: "
        "No index links to this document, so navigation cannot reach it.",
    )


def test_the_engine_refuses_a_new_error_found_by_the_real_validation(
    fixture_bank: Path, assert_unchanged: Any
) -> None:
    text = document("Orphan Edge", "Derives from nothing real.", ["../nowhere/at-all.md"])
    with assert_unchanged(fixture_bank), pytest.raises(RefusalError) as caught:
        execute(Bank(fixture_bank), "bank_create", {}, _create("ops/edge.md", text), dry_run=False)
    assert caught.value.refusal.message == (
        "This write would add 1 validation error, so nothing was written:\n"
        "- [broken-derived-from] ops/edge.md: "
        "derived_from points at a file that does not exist: ../nowhere/at-all.md"
    )


def test_a_loop_reported_from_another_node_is_not_a_new_error(fixture_plus: Path) -> None:
    """A draft deriving from a member of the overlay's existing ops/ loop, sorting before it,
    makes the path-ordered walk report the same loop from the other node (02 §7.4). It is the
    same error, so the post-check lets the write through (loop identity = its node set)."""
    from mbank.validate import findings_for

    before = Bank(fixture_plus).refresh()
    text = "---\ntitle: Alerts\nstatus: draft\nderived_from:\n  - config.md\n---\n# Alerts\n"
    plan = Plan("bank_create", (create_document("ops/AAA-alerts.md", text),))
    after = apply_virtually(before, plan)
    moved = [f for f in findings_for(after, plan.paths) if f.rule == "cycle-in-derived-from"]
    assert [f.path for f in moved] == ["ops/README.md"]  # the report did move
    warnings = post_check(before, after, plan.paths, findings_for=findings_for)
    assert not any("cycle-in-derived-from" in warning for warning in warnings)


def test_a_genuinely_new_loop_is_still_refused(fixture_plus: Path) -> None:
    from mbank.validate import findings_for

    before = Bank(fixture_plus).refresh()
    glossary = before.raw["domain/glossary.md"].replace(
        "status: active", "status: active\nderived_from:\n  - pricing.md", 1
    )
    pricing = before.raw["domain/pricing.md"].replace("- rules.md", "- glossary.md", 1)
    plan = Plan(
        "bank_edit",
        (
            replace_document(before, "domain/glossary.md", glossary),
            replace_document(before, "domain/pricing.md", pricing),
        ),
    )
    after = apply_virtually(before, plan)
    with pytest.raises(RefusalError) as refused:
        post_check(before, after, plan.paths, findings_for=findings_for)
    assert "[cycle-in-derived-from]" in refused.value.refusal.message
