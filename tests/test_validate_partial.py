"""Partial validation for the write post-check agrees with two full validations (spec 03 §1.5).

For every document of the fixture banks and many kinds of single-plan change (delete, body
edit, frontmatter changes, create beside it, close a loop through it, rename, fill a dangling
reference), the snapshot after the change is built virtually, exactly as the post-check builds
it, and:

- comparing `findings_for(S, touched)` with `findings_for(S', touched)` gives the same new
  findings — and the same resolved ones — as comparing two full validations from scratch;
- the incrementally derived `findings(S')` equals a validation of `S'` from scratch.

The same check runs on both real banks in `test_validate_corpus.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from validate_edits import (
    Change,
    apply_virtually,
    creations_for,
    identity,
    new_findings,
    plans_for,
)

from mbank.model import Finding
from mbank.snapshot import Bank, Snapshot
from mbank.validate import clear_cache, findings, findings_for, findings_uncached


def agreement_failures(snapshot: Snapshot, changes: list[Change]) -> list[str]:
    """Every change for which partial and full validation disagree, described."""
    failures: list[str] = []
    full_before = findings_uncached(snapshot)
    for change in changes:
        touched = sorted(change)
        after = apply_virtually(snapshot, change)
        full_after = findings_uncached(after)
        part_before = findings_for(snapshot, touched)
        part_after = findings_for(after, touched)
        expected_new = new_findings(full_before, full_after)
        expected_gone = new_findings(full_after, full_before)
        got_new = new_findings(part_before, part_after)
        got_gone = new_findings(part_after, part_before)
        if [identity(f) for f in got_new] != [identity(f) for f in expected_new]:
            failures.append(f"{touched}: new {_ids(got_new)} != {_ids(expected_new)}")
        if {identity(f) for f in got_gone} != {identity(f) for f in expected_gone}:
            failures.append(f"{touched}: resolved {_ids(got_gone)} != {_ids(expected_gone)}")
        if findings(after) != full_after:
            failures.append(f"{touched}: incremental findings differ from a full run")
    return failures


def _ids(items: list[Finding]) -> list[tuple[str, str, str]]:
    return [identity(item) for item in items]


def every_change(snapshot: Snapshot, *, thorough: bool = True) -> list[Change]:
    """The changes of `plans_for` around every document, and the creates of `creations_for`."""
    changes = [
        change for path in snapshot.docs for change in plans_for(snapshot, path, thorough=thorough)
    ]
    changes.extend(creations_for(snapshot))
    return changes


@pytest.mark.parametrize("bank", ["fixture_bank", "fixture_plus"])
def test_partial_validation_agrees_with_full_validation_on_the_fixture_banks(
    bank: str, request: pytest.FixtureRequest
) -> None:
    root: Path = request.getfixturevalue(bank)
    snapshot = Bank(root).refresh()
    changes = every_change(snapshot)
    assert len(changes) > 200
    assert agreement_failures(snapshot, changes) == []


def test_partial_validation_agrees_on_a_bank_without_dna(fixture_plus: Path) -> None:
    snapshot = Bank(fixture_plus / "domain").refresh()
    assert agreement_failures(snapshot, every_change(snapshot)) == []


def test_partial_validation_agrees_without_a_cached_state(fixture_plus: Path) -> None:
    snapshot = Bank(fixture_plus).refresh()
    for change in every_change(snapshot, thorough=False)[:40]:
        clear_cache()
        after = apply_virtually(snapshot, change)
        touched = sorted(change)
        expected = new_findings(findings_uncached(snapshot), findings_uncached(after))
        clear_cache()
        got_after = findings_for(after, touched)  # built from scratch, nothing cached
        got_before = findings_for(snapshot, touched)  # derived from `after`, backwards
        assert _ids(new_findings(got_before, got_after)) == _ids(expected), touched


def test_a_dna_change_returns_every_finding(fixture_plus: Path) -> None:
    snapshot = Bank(fixture_plus).refresh()
    assert findings_for(snapshot, ["dna/governance.md"]) == findings(snapshot)
    text = snapshot.raw["dna/governance.md"].replace("Cyclic dependencies are forbidden.", "")
    after = apply_virtually(snapshot, {"dna/governance.md": text})
    gone = new_findings(findings_for(after, ["dna/governance.md"]), findings(snapshot))
    assert [item.rule for item in gone] == ["cycle-in-derived-from"]


def test_partial_validation_selects_the_touched_documents_and_their_neighbours(
    fixture_bank: Path,
) -> None:
    snapshot = Bank(fixture_bank).refresh()
    # the broken edge of the architecture page points at missing/nowhere.md
    selected = findings_for(snapshot, ["missing/nowhere.md"])
    assert [(item.rule, item.path) for item in selected] == [
        ("broken-derived-from", "engineering/architecture.md"),
        ("unregistered-doc", "orphan.md"),
        ("ssot-conflict", "conflict.md"),
    ]
    # nothing points at the bad YAML page, so only its own finding and the global ones remain
    selected = findings_for(snapshot, ["broken/bad-yaml.md"])
    assert [(item.rule, item.path) for item in selected] == [
        ("invalid-frontmatter", "broken/bad-yaml.md"),
        ("unregistered-doc", "orphan.md"),
        ("ssot-conflict", "conflict.md"),
    ]


def test_the_post_check_sees_a_new_error_and_not_an_old_one(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    text = snapshot.raw["orphan.md"].replace("status: draft", "status: draft\nstatus: active")
    after = apply_virtually(snapshot, {"orphan.md": text})
    added = new_findings(findings_for(snapshot, ["orphan.md"]), findings_for(after, ["orphan.md"]))
    # the duplicate key is new; so is the missing derived_from of the recovered "active" status
    assert [(item.rule, item.path) for item in added] == [
        ("invalid-frontmatter", "orphan.md"),
        ("missing-derived-from", "orphan.md"),
    ]
    # the orphan's old warning is still there, so it is not new
    assert "unregistered-doc" in {item.rule for item in findings_for(after, ["orphan.md"])}


def test_a_repeated_call_on_the_same_snapshot_is_served_from_the_cache(
    fixture_bank: Path,
) -> None:
    snapshot = Bank(fixture_bank).refresh()
    assert findings(snapshot) is findings(snapshot)


def test_a_document_deriving_from_a_cycle_member_moves_the_cycle_finding(
    fixture_plus: Path,
) -> None:
    """The spec's cycle identity depends on where the walk enters the loop (02 §7.4), so a
    new draft that merely derives from a cycle member, and sorts before it, re-reports the
    old loop from the other node: full validation, and so the post-check, sees a new error.
    Partial validation reproduces that faithfully; the spec consequence is reported to the
    lead (a canonical loop rotation would avoid it)."""
    snapshot = Bank(fixture_plus).refresh()
    text = "---\ntitle: Alerts\nstatus: draft\nderived_from:\n  - config.md\n---\n# Alerts\n"
    touched = ["ops/AAA-alerts.md"]
    after = apply_virtually(snapshot, {touched[0]: text})
    added = new_findings(findings_for(snapshot, touched), findings_for(after, touched))
    assert identity(added[0]) == (
        "cycle-in-derived-from",
        "ops/README.md",
        "Cyclic derived_from: ops/config.md -> ops/README.md -> ops/config.md.",
    )
    assert _ids(added) == _ids(new_findings(findings_uncached(snapshot), findings_uncached(after)))
