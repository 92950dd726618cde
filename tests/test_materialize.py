"""`bank_materialize_flows` (spec 03 §13, 04 §2.15, 05 §7 and §8, 07 §3.19): the bank takes
ownership of the shipped templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import write_calls
from document_writes import normalise
from seeded_banks import Seeder, patched, tree_texts

from mbank import shipped_files
from mbank.journal import read_records
from mbank.model import Refusal, RefusalError
from mbank.reducers.materialize_flows import POSTCHECK_HINT, format_materialize
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank
from mbank.validate import findings

POINTER = "flows/templates/README.md"
ADR_TEMPLATE = "flows/templates/adr/ADR-ID.md"
OWNED = (
    "flows/templates/ already holds {n} documents of its own. Refusing to overwrite them; "
    "pass force to override."
)


@pytest.fixture
def seeded(tmp_path: Path) -> Seeder:
    seeder = Seeder(tmp_path / "memory_bank")
    seeder.init()
    return seeder


def shipped() -> dict[str, str]:
    return shipped_files.shipped_templates()


def test_materialising_copies_the_24_templates_and_stays_clean(seeded: Seeder) -> None:
    before = tree_texts(seeded.root)
    result = seeded.materialize()
    assert result["created"] is True and result["directories"] == ["flows/templates"]
    assert result["files"] == sorted(shipped()) and len(result["files"]) == 24
    after = tree_texts(seeded.root)
    assert {path: after[path] for path in shipped()} == shipped()
    assert set(after) == set(before) | set(shipped())
    assert findings(seeded.bank.refresh()) == ()


def test_the_pointer_is_replaced_by_the_templates_index(seeded: Seeder) -> None:
    seeded.materialize()
    assert (seeded.root / POINTER).read_text(encoding="utf-8") == shipped()[POINTER]
    record = read_records(str(seeded.root))[-1]
    kinds = {op.path: op.kind for op in record.ops}
    assert record.tool == "bank_materialize_flows" and record.intent == {}
    assert kinds[POINTER] == "replace" and list(kinds.values()).count("create") == 23
    assert [op.path for op in record.ops] == sorted(shipped())


def test_nothing_but_the_templates_is_touched(seeded: Seeder) -> None:
    before = tree_texts(seeded.root)
    seeded.materialize()
    after = tree_texts(seeded.root)
    assert {p: t for p, t in after.items() if p not in shipped()} == {
        p: t for p, t in before.items() if p not in shipped()
    }
    for flow in ("feature-flow.md", "epic-flow.md", "workflows.md", "README.md"):
        assert after[f"flows/{flow}"] == before[f"flows/{flow}"]


def test_the_result_keys_come_in_the_spec_order(seeded: Seeder) -> None:
    dry = seeded.materialize(dryRun=True)
    assert list(dry) == ["root", "created", "dryRun", "files", "directories", "warnings", "diff"]
    real = seeded.materialize()
    assert list(real)[-1] == "journalId" and real["root"] == str(seeded.root)


def test_a_dry_run_writes_nothing_and_its_diff_gives_the_post_state(
    seeded: Seeder, tmp_path: Path, assert_unchanged: Any
) -> None:
    pre = tree_texts(seeded.root)
    with assert_unchanged(tmp_path):
        dry = seeded.materialize(dryRun=True)
    assert dry["created"] is False and dry["files"] == sorted(shipped())
    seeded.materialize()
    assert patched(pre, dry["diff"]) == tree_texts(seeded.root)


def test_the_materialize_plan_and_its_diff(seeded: Seeder, snapshot: Any) -> None:
    assert seeded.planned("bank_materialize_flows", {}) == snapshot


def test_the_bank_copy_wins_after_an_edit(seeded: Seeder) -> None:
    seeded.materialize()
    template = seeded.root / ADR_TEMPLATE
    text = template.read_text(encoding="utf-8")
    marker = "## Related Links"
    assert marker in text
    template.write_text(
        text.replace(marker, "## Reviewers\n\nName who reviewed the decision.\n\n" + marker, 1),
        encoding="utf-8",
    )
    result = seeded.call(
        write_calls.create,
        {
            "path": "adr/ADR-20260914T120000Z-two-formats.md",
            "title": "Two Formats",
            "purpose": "Why both formats share one model.",
            "docKind": "adr",
            "derivedFrom": ["../product/context.md"],
        },
    )
    assert result["template"] == ADR_TEMPLATE
    written = (seeded.root / "adr/ADR-20260914T120000Z-two-formats.md").read_text("utf-8")
    assert "## Reviewers\n\nName who reviewed the decision." in written


def test_a_second_materialisation_is_refused(seeded: Seeder, assert_unchanged: Any) -> None:
    seeded.materialize()
    with assert_unchanged(seeded.root):
        assert seeded.refusal(write_calls.materialize_flows, {}) == (
            "templates-owned",
            OWNED.format(n=23),
        )


def test_force_overwrites_the_held_templates_with_a_warning(seeded: Seeder) -> None:
    seeded.materialize()
    template = seeded.root / ADR_TEMPLATE
    template.write_text(template.read_text("utf-8") + "\nA local addition.\n", "utf-8")
    dry = seeded.materialize(force=True, dryRun=True)
    assert dry["warnings"] == ["Would overwrite 23 documents that flows/ already held."]
    result = seeded.materialize(force=True)
    assert result["created"] is True
    assert result["warnings"] == ["Overwrote 23 documents that flows/ already held."]
    assert template.read_text("utf-8") == shipped()[ADR_TEMPLATE]
    assert [op.path for op in read_records(str(seeded.root))[-1].ops] == [ADR_TEMPLATE]
    assert findings(seeded.bank.refresh()) == ()


def test_a_forced_materialisation_of_identical_templates_is_a_no_op(seeded: Seeder) -> None:
    seeded.materialize()
    result = seeded.materialize(force=True)
    assert result["created"] is False and "journalId" not in result
    assert result["warnings"] == []
    assert seeded.materialize(force=True, dryRun=True)["diff"] == ""


def test_every_held_document_counts_and_one_without_a_counterpart_is_left_alone(
    seeded: Seeder, assert_unchanged: Any
) -> None:
    own = seeded.root / "flows/templates/house/checklist.md"
    own.parent.mkdir(parents=True)
    own.write_text(
        "---\ntitle: House Checklist\ndoc_kind: governance\ndoc_function: template\n"
        "purpose: A checklist this bank wrote for itself.\nderived_from:\n"
        "  - ../../../dna/governance.md\nstatus: active\n---\n# House Checklist\n",
        encoding="utf-8",
    )
    held = own.read_bytes()
    with assert_unchanged(seeded.root):
        assert seeded.refusal(write_calls.materialize_flows, {}) == (
            "templates-owned",
            OWNED.format(n=1),
        )
    result = seeded.materialize(force=True)
    assert result["warnings"][0] == "Overwrote 1 documents that flows/ already held."
    assert own.read_bytes() == held
    assert all((seeded.root / path).is_file() for path in shipped())


def test_materialising_without_the_starter_dna_is_refused_with_what_to_do(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "README.md").write_text(
        "---\ntitle: Index\ndoc_kind: project\ndoc_function: index\npurpose: The entry.\n"
        "status: active\n---\n# Index\n",
        encoding="utf-8",
    )
    with assert_unchanged(tmp_path):
        reason, message = Seeder(root).refusal(write_calls.materialize_flows, {})
    assert reason == "postcheck"
    lines = message.split("\n")
    assert lines[0].startswith("This write would add ") and lines[0].endswith(
        " validation errors, so nothing was written:"
    )
    assert (
        f"- [broken-derived-from] {ADR_TEMPLATE}: derived_from points at a file that does not "
        "exist: ../../../dna/governance.md"
    ) in lines
    assert lines[-1] == POSTCHECK_HINT
    assert POSTCHECK_HINT == (
        "Pass force to materialise the templates anyway, or restore dna/governance.md (and the "
        "flows the templates derive from) first."
    )


def test_with_force_the_errors_it_adds_are_warnings(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    result = Seeder(root).materialize(force=True)
    assert result["created"] is True
    assert (
        f"New error broken-derived-from on {ADR_TEMPLATE}: derived_from points at a file that "
        "does not exist: ../../../dna/governance.md"
    ) in result["warnings"]
    assert all(warning.startswith("New ") for warning in result["warnings"])


def test_materialising_into_a_missing_root_is_refused(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "nowhere"
    with assert_unchanged(tmp_path), pytest.raises(RefusalError) as refused:
        Seeder(root).materialize(force=True)
    assert refused.value.refusal == Refusal("root-missing", f"The bank root {root} does not exist.")
    assert not root.exists()


def test_a_templates_directory_leading_out_of_the_bank_is_refused(
    seeded: Seeder, tmp_path: Path, assert_unchanged: Any
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (seeded.root / POINTER).unlink()
    (seeded.root / "flows" / "templates").rmdir()
    (seeded.root / "flows" / "templates").symlink_to(outside)
    with assert_unchanged(seeded.root):
        assert seeded.refusal(write_calls.materialize_flows, {"force": True}) == (
            "path-symlink",
            f"Path leads outside the bank through a symbolic link: {POINTER}",
        )


def test_missing_shipped_templates_are_refused(
    seeded: Seeder, assert_unchanged: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shipped_files, "shipped_templates", lambda: {})
    with assert_unchanged(seeded.root):
        assert seeded.refusal(write_calls.materialize_flows, {}) == (
            "templates-missing",
            "The shipped templates were not found. The server package is incomplete.",
        )


def test_a_replaced_crlf_template_stays_crlf(seeded: Seeder) -> None:
    seeded.materialize()
    template = seeded.root / ADR_TEMPLATE
    template.write_bytes(
        (template.read_text("utf-8") + "\nLocal.\n").replace("\n", "\r\n").encode("utf-8")
    )
    seeded.materialize(force=True)
    assert template.read_bytes() == shipped()[ADR_TEMPLATE].replace("\n", "\r\n").encode()


def test_materialised_templates_are_never_routed_or_searched(seeded: Seeder) -> None:
    seeded.materialize()
    snapshot = seeded.bank.refresh()
    wrappers = {path for path, doc in snapshot.docs.items() if doc.doc_function == "template"}
    assert len(wrappers) == 22  # the 24 files less the two indexes, which are navigation
    index = SearchIndex()
    for question in ("adr template options considered", "feature brief template requirements"):
        paths = {hit["path"] for hit in route(snapshot, index, question, limit=25)["results"]}
        assert paths and not paths & wrappers, question
    hits = {hit["path"] for hit in search(snapshot, index, "template", limit=50)["results"]}
    assert hits and not hits & wrappers


def test_the_human_materialize_output(seeded: Seeder) -> None:
    where = f"{seeded.root}/flows/templates"
    dry = format_materialize(seeded.materialize(dryRun=True))
    assert dry.startswith(
        f"WOULD COPY 24 files into {where}\n"
        "The bank would then own its templates, and its copies would win every lookup.\n"
        "--- diff ---\n--- a/flows/templates/README.md\n"
    )
    assert format_materialize(seeded.materialize()) == (
        f"COPIED 24 files into {where}\n"
        "The bank now owns its templates: its copies win every lookup from now on.\n"
        "journal: 20260914T120503Z-000002\n"
    )
    assert format_materialize(seeded.materialize(force=True)) == (
        f"UNCHANGED {where}: the bank's templates already equal the shipped ones.\n"
    )


def test_a_bank_without_journal_can_be_materialised(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    for path, text in shipped_files.seed_files("x", "2026-09-14").items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    assert Seeder(root).materialize()["created"] is True
    assert (root / ".mbank" / ".gitignore").is_file()
    assert findings(Bank(root).refresh()) == ()


# --------------------------------------------------------------------------------------------
# The command line (04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_materialize_flows_copies_and_says_the_bank_owns_them(
    seeded: Seeder, capsys: Any, snapshot: Any
) -> None:
    code, out, err = run_cli(capsys, "materialize-flows", "--root", str(seeded.root))
    assert (code, err) == (0, "")
    assert read_records(str(seeded.root))[-1].via == "cli"
    assert normalise(out, seeded.root) == snapshot


def test_cli_materialize_flows_dry_run_prints_the_diff(
    seeded: Seeder, capsys: Any, assert_unchanged: Any
) -> None:
    with assert_unchanged(seeded.root):
        code, out, _ = run_cli(capsys, "materialize-flows", "--root", str(seeded.root), "--dry-run")
    assert code == 0 and out.startswith(f"WOULD COPY 24 files into {seeded.root}/flows/templates\n")
    assert "\n--- diff ---\n--- a/flows/templates/README.md\n" in out


def test_cli_materialize_flows_json_and_force(seeded: Seeder, capsys: Any) -> None:
    seeded.materialize()
    code, _, err = run_cli(capsys, "materialize-flows", "--root", str(seeded.root))
    assert code == 1 and err == "mbank: " + OWNED.format(n=23) + "\n"
    template = seeded.root / ADR_TEMPLATE
    template.write_text(template.read_text("utf-8") + "\nLocal.\n", "utf-8")
    code, out, _ = run_cli(
        capsys, "materialize-flows", "--root", str(seeded.root), "--force", "--json"
    )
    printed = json.loads(out)
    assert code == 0 and printed["created"] is True
    assert printed["warnings"] == ["Overwrote 23 documents that flows/ already held."]
    assert printed["directories"] == ["flows/templates"] and len(printed["files"]) == 24
