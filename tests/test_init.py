"""`bank_init` (spec 03 §12, 04 §2.4, 05 §2 and §8, 07 §3.19): seeding a bank where there is
none, through the tool's shell and the write engine.

What the seeded documents say is proven in test_starter.py (on `shipped_files.seed_files`); here:
what the tool writes, reports and refuses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
import write_calls
from document_writes import normalise
from fixture_banks import TODAY
from planners import Clock, Ids
from seeded_banks import NAME, Seeder, patched, tree_texts

from mbank import catalogue, shipped_files
from mbank.gates.init import SeedTarget
from mbank.journal import read_records
from mbank.model import Intent, RefusalError
from mbank.plan import sha256_hex
from mbank.reducers.init import (
    SEED_PATHS,
    InitArgs,
    InitFacts,
    format_init,
    gate_and_plan,
    seeded_documents,
)
from mbank.snapshot import Bank, Snapshot
from mbank.validate import findings

DIRECTORIES = [
    "adr",
    "dna",
    "domain",
    "engineering",
    "features",
    "flows",
    "ops",
    "processes",
    "product",
    "use-cases",
]


@pytest.fixture
def seeder(tmp_path: Path) -> Seeder:
    return Seeder(tmp_path / "memory_bank")


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def note(title: str, status: str = "active") -> str:
    return (
        f"---\ntitle: {title}\ndoc_kind: domain\ndoc_function: canonical\n"
        f"purpose: A note kept before the bank was seeded.\nstatus: {status}\n---\n# {title}\n"
    )


def files_on_disk(root: Path) -> list[str]:
    return sorted(path for path in tree_texts(root))


# --------------------------------------------------------------------------------------------
# What a successful init writes
# --------------------------------------------------------------------------------------------


def test_init_on_a_missing_root_seeds_the_24_documents_and_validates_clean(seeder: Seeder) -> None:
    result = seeder.init()
    snapshot = seeder.bank.refresh()
    assert result["created"] is True
    assert result["files"] == sorted(SEED_PATHS) and len(result["files"]) == 24
    assert files_on_disk(seeder.root) == result["files"] == list(snapshot.docs)
    assert "flows/templates/adr/ADR-ID.md" not in snapshot.docs
    assert findings(snapshot) == ()
    assert snapshot.contract.present and snapshot.contract.roots == ("dna/principles.md",)
    assert snapshot.contract.requires_derived_from and snapshot.contract.forbids_cycles


def test_init_writes_exactly_the_catalogue_seed(seeder: Seeder) -> None:
    seeder.init()
    assert tree_texts(seeder.root) == shipped_files.seed_files(NAME, TODAY)


def test_the_reducer_seed_is_the_catalogue_seed() -> None:
    starter = shipped_files.starter_files()
    assert seeded_documents(starter, NAME, "here") == shipped_files.seed_files(NAME, TODAY)


def test_init_into_an_existing_empty_directory(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / ".git").mkdir()
    result = Seeder(root).init()
    assert result["created"] is True and len(Bank(root).refresh().docs) == 24


def test_init_result_keys_come_in_the_spec_order(seeder: Seeder) -> None:
    dry = seeder.init(dryRun=True)
    assert list(dry) == ["root", "created", "dryRun", "files", "directories", "warnings", "diff"]
    real = seeder.init()
    assert list(real) == [
        "root",
        "created",
        "dryRun",
        "files",
        "directories",
        "warnings",
        "journalId",
    ]
    assert real["root"] == str(seeder.root) and os.path.isabs(real["root"])
    assert real["dryRun"] is False and real["warnings"] == []


def test_init_reports_the_eight_sections_plus_dna_and_flows(seeder: Seeder) -> None:
    assert seeder.init()["directories"] == DIRECTORIES


def test_init_is_one_journaled_write_with_the_journal_gitignore(seeder: Seeder) -> None:
    result = seeder.init()
    assert (seeder.root / ".mbank" / ".gitignore").read_text() == "wal/\nlock\nobjects/\n"
    (record,) = read_records(str(seeder.root))
    assert record.id == result["journalId"] == "20260914T120501Z-000001"
    assert record.tool == "bank_init" and record.via == "mcp"
    assert record.intent == {"name": NAME}
    assert [op.path for op in record.ops] == sorted(SEED_PATHS)
    assert {op.kind for op in record.ops} == {"create"}
    assert list((seeder.root / ".mbank" / "wal").iterdir()) == []


def test_the_name_is_used_stripped_in_the_root_index(seeder: Seeder) -> None:
    seeder.init("  Ebook Parser  ")
    text = (seeder.root / "README.md").read_text(encoding="utf-8")
    assert "Knowledge base for **Ebook Parser**." in text


def test_a_name_of_exactly_100_characters_is_accepted(seeder: Seeder) -> None:
    name = "n" * 100
    assert seeder.init(name)["created"] is True
    assert f"**{name}**" in (seeder.root / "README.md").read_text(encoding="utf-8")


def test_the_first_create_in_a_fresh_bank_is_clean(seeder: Seeder) -> None:
    seeder.init()
    result = seeder.call(
        write_calls.create,
        {
            "path": "engineering/architecture.md",
            "title": "Architecture",
            "purpose": "How the parser is put together.",
            "docKind": "engineering",
            "derivedFrom": ["../product/context.md"],
        },
    )
    assert result["created"] is True and result["warnings"][0].startswith("No template matched")
    assert findings(seeder.bank.refresh()) == ()


# --------------------------------------------------------------------------------------------
# Dry run
# --------------------------------------------------------------------------------------------


def test_a_dry_run_creates_nothing_not_even_the_root(seeder: Seeder, tmp_path: Path) -> None:
    before = sorted(os.listdir(tmp_path))
    result = seeder.init(dryRun=True)
    assert sorted(os.listdir(tmp_path)) == before and not seeder.root.exists()
    assert result["created"] is False and result["dryRun"] is True
    assert result["files"] == sorted(SEED_PATHS) and result["directories"] == DIRECTORIES
    assert result["diff"].startswith("--- /dev/null\n+++ b/README.md\n@@ -0,0 +1,")


def test_a_dry_run_into_an_existing_directory_writes_nothing(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    with assert_unchanged(tmp_path):
        assert Seeder(root).init(dryRun=True)["created"] is False
    assert not (root / ".mbank").exists()


def test_the_dry_run_diff_applied_to_nothing_gives_the_seeded_bank(seeder: Seeder) -> None:
    diff = seeder.init(dryRun=True)["diff"]
    seeder.init()
    assert patched({}, diff) == tree_texts(seeder.root)


def test_the_init_plan_and_its_diff(seeder: Seeder, snapshot: Any) -> None:
    assert seeder.planned("bank_init", {"name": NAME}) == snapshot


# --------------------------------------------------------------------------------------------
# Refusals, in the spec's order (03 §12)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", "\n", "\t \r\n"])
def test_a_blank_name_is_refused(
    name: str, seeder: Seeder, tmp_path: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(tmp_path):
        assert seeder.refusal(write_calls.init, {"name": name}) == (
            "name-required",
            "`name` is required: it goes into the root index.",
        )
    assert not seeder.root.exists()


def test_a_missing_name_is_refused_like_a_blank_one(seeder: Seeder, tmp_path: Path) -> None:
    assert seeder.refusal(write_calls.init, {})[0] == "name-required"


@pytest.mark.parametrize("name", ["ebook\nparser", "ebook\r\nparser", "ebook\rparser", "a\u2028b"])
def test_a_name_with_a_line_break_is_refused(
    name: str, seeder: Seeder, tmp_path: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(tmp_path):
        assert seeder.refusal(write_calls.init, {"name": name}) == (
            "name-multiline",
            "`name` must fit on one line: it is the project's name.",
        )


def test_a_name_over_100_characters_is_refused(
    seeder: Seeder, tmp_path: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(tmp_path):
        assert seeder.refusal(write_calls.init, {"name": "x" * 101}) == (
            "name-too-long",
            "`name` is 101 characters; keep it to 100 or fewer: it is a heading, not a "
            "description.",
        )


def test_a_root_that_is_a_file_is_refused(tmp_path: Path, assert_unchanged: Any) -> None:
    root = tmp_path / "bank"
    root.write_text("not a directory\n")
    with assert_unchanged(tmp_path):
        assert Seeder(root).refusal(write_calls.init, {"name": NAME}) == (
            "root-not-directory",
            f"The bank root {root} exists and is not a directory.",
        )


def test_a_blank_name_is_refused_before_a_root_that_is_a_file(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.write_text("x")
    assert Seeder(root).refusal(write_calls.init, {"name": " "})[0] == "name-required"


def test_a_bank_with_documents_is_refused_without_force(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    write(root, "notes/a.md", note("A"))
    write(root, "notes/b.md", note("B"))
    with assert_unchanged(tmp_path):
        assert Seeder(root).refusal(write_calls.init, {"name": NAME}) == (
            "bank-not-empty",
            "This bank already holds 2 documents. Refusing to seed over them; pass force to "
            "override.",
        )


def test_a_second_init_is_refused(seeder: Seeder, assert_unchanged: Any) -> None:
    seeder.init()
    with assert_unchanged(seeder.root):
        reason, message = seeder.refusal(write_calls.init, {"name": NAME})
    assert reason == "bank-not-empty"
    assert message.startswith("This bank already holds 24 documents.")


def test_a_name_is_checked_before_the_bank_is_found_not_empty(seeder: Seeder) -> None:
    seeder.init()
    assert seeder.refusal(write_calls.init, {"name": ""})[0] == "name-required"


def test_a_missing_starter_set_is_refused(
    seeder: Seeder, tmp_path: Path, assert_unchanged: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shipped_files, "starter_files", lambda: {})
    with assert_unchanged(tmp_path):
        assert seeder.refusal(write_calls.init, {"name": NAME}) == (
            "starter-missing",
            f"Starter set not found at {shipped_files.starter_location()}. The server package is "
            "incomplete.",
        )


def test_an_incomplete_starter_set_is_refused_after_the_bank_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starter = shipped_files.starter_files()
    del starter["dna/governance.md"]
    monkeypatch.setattr(shipped_files, "starter_files", lambda: starter)
    root = tmp_path / "bank"
    write(root, "notes/a.md", note("A"))
    assert Seeder(root).refusal(write_calls.init, {"name": NAME})[0] == "bank-not-empty"
    assert Seeder(root).refusal(write_calls.init, {"name": NAME, "force": True})[0] == (
        "starter-missing"
    )


def test_a_seed_directory_leading_out_of_the_bank_is_refused(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    outside = tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "dna").symlink_to(outside)
    with assert_unchanged(tmp_path):
        assert Seeder(root).refusal(write_calls.init, {"name": NAME}) == (
            "path-symlink",
            "Path leads outside the bank through a symbolic link: dna/README.md",
        )


def test_a_symbolic_link_at_a_seed_path_is_refused_even_with_force(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    write(root, "notes/target.md", note("Target"))
    (root / "README.md").symlink_to(root / "notes" / "target.md")
    with assert_unchanged(tmp_path):
        assert Seeder(root).refusal(write_calls.init, {"name": NAME, "force": True}) == (
            "path-symlink",
            "Path leads outside the bank through a symbolic link: README.md",
        )


def test_a_directory_at_a_seed_path_is_never_overwritten(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    (root / "README.md").mkdir(parents=True)
    for force in (False, True):
        with assert_unchanged(tmp_path):
            assert Seeder(root).refusal(write_calls.init, {"name": NAME, "force": force}) == (
                "exists-unindexed",
                "A file already exists at README.md but is not indexed. Refusing to overwrite it.",
            )


class Free(dict[str, SeedTarget]):
    """Seed targets where nothing exists but what a test names."""

    def __missing__(self, path: str) -> SeedTarget:
        return SeedTarget()


def _intent(arguments: dict[str, Any], targets: dict[str, SeedTarget]) -> Intent[Any, Any]:
    facts = InitFacts(
        root_not_directory=False,
        starter=shipped_files.starter_files(),
        starter_location="here",
        seed_targets=Free(targets),
    )
    return Intent(
        tool="bank_init",
        args=msgspec.convert(arguments, InitArgs),
        facts=facts,
        today=TODAY,
        now=f"{TODAY}T12:05:01Z",
        journal_id=None,
        dry_run=True,
    )


def _empty_snapshot(tmp_path: Path) -> Snapshot:
    return Bank(tmp_path / "nowhere").refresh()


def test_an_unindexed_file_at_a_seed_path_is_replaced_only_with_force(tmp_path: Path) -> None:
    pre = sha256_hex(b"unreadable to the walk")
    facts = {"dna/README.md": SeedTarget(exists=True, sha256=pre)}
    snapshot = _empty_snapshot(tmp_path)
    with pytest.raises(RefusalError) as refused:
        gate_and_plan(snapshot, _intent({"name": NAME}, facts))
    assert refused.value.refusal.rule == "exists-unindexed"
    outcome = gate_and_plan(snapshot, _intent({"name": NAME, "force": True}, facts))
    (replaced,) = [op for op in outcome.plan.ops if op.kind == "replace"]
    assert replaced.path == "dna/README.md" and replaced.before == pre
    assert len(outcome.plan.ops) == 24 and outcome.force is True


def test_an_unreadable_file_at_a_seed_path_is_never_overwritten(tmp_path: Path) -> None:
    facts = {"README.md": SeedTarget(exists=True, sha256=None)}
    with pytest.raises(RefusalError) as refused:
        gate_and_plan(_empty_snapshot(tmp_path), _intent({"name": NAME, "force": True}, facts))
    assert refused.value.refusal.rule == "exists-unindexed"


# --------------------------------------------------------------------------------------------
# force
# --------------------------------------------------------------------------------------------


def _bank_with_notes(root: Path) -> None:
    write(root, "README.md", note("An Old Root", status="draft"))
    write(root, "notes/plan.md", note("Plan"))


def test_force_seeds_over_existing_documents_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    _bank_with_notes(root)
    plan_before = (root / "notes" / "plan.md").read_bytes()
    result = Seeder(root).init(force=True)
    assert result["created"] is True and len(result["files"]) == 24
    assert result["warnings"][0] == "Seeding over 2 existing documents."
    assert (root / "notes" / "plan.md").read_bytes() == plan_before
    assert (root / "README.md").read_text(encoding="utf-8") == catalogue.root_index(NAME)
    (record,) = read_records(str(root))
    kinds = {op.path: op.kind for op in record.ops}
    assert kinds["README.md"] == "replace" and list(kinds.values()).count("create") == 23


def test_errors_a_forced_seed_adds_to_existing_documents_are_warnings(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    _bank_with_notes(root)
    result = Seeder(root).init(force=True)
    assert (
        "New error missing-derived-from on notes/plan.md: Governance requires every active "
        "non-root document to declare derived_from."
    ) in result["warnings"]
    assert all(w.startswith("New ") for w in result["warnings"][1:])
    errors = [f for f in findings(Bank(root).refresh()) if f.severity == "error"]
    assert [(f.rule, f.path) for f in errors] == [("missing-derived-from", "notes/plan.md")]


def test_the_forced_init_plan_and_its_diff(tmp_path: Path, snapshot: Any) -> None:
    root = tmp_path / "bank"
    _bank_with_notes(root)
    seeder = Seeder(root)
    planned = seeder.planned("bank_init", {"name": NAME, "force": True})
    assert [op["kind"] for op in planned["plan"]["ops"]].count("replace") == 1
    assert planned == snapshot


def test_the_forced_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(
    tmp_path: Path,
) -> None:
    root = tmp_path / "bank"
    _bank_with_notes(root)
    seeder = Seeder(root)
    pre = tree_texts(root)
    diff = seeder.init(force=True, dryRun=True)["diff"]
    seeder.init(force=True)
    assert patched(pre, diff) == tree_texts(root)


def test_a_forced_init_over_the_same_seed_is_a_no_op(seeder: Seeder, tmp_path: Path) -> None:
    seeder.init()
    result = seeder.init(force=True)
    assert result["created"] is False and "journalId" not in result
    assert result["warnings"] == []
    assert seeder.init(force=True, dryRun=True)["diff"] == ""
    assert len(read_records(str(seeder.root))) == 1


def test_force_on_an_empty_bank_gives_no_warning(seeder: Seeder) -> None:
    assert seeder.init(force=True)["warnings"] == []


def test_a_replaced_crlf_document_stays_crlf(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "README.md").write_bytes(note("Old").replace("\n", "\r\n").encode())
    Seeder(root).init(force=True)
    written = (root / "README.md").read_bytes()
    assert written == catalogue.root_index(NAME).replace("\n", "\r\n").encode()


def test_a_replaced_document_with_a_byte_order_mark_loses_it(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "README.md").write_bytes(b"\xef\xbb\xbf" + note("Old").encode())
    seeder = Seeder(root)
    pre = tree_texts(root)
    diff = seeder.init(force=True, dryRun=True)["diff"]
    seeder.init(force=True)
    assert (root / "README.md").read_bytes() == catalogue.root_index(NAME).encode()
    assert patched(pre, diff) == tree_texts(root)


def test_a_forced_init_replaces_a_non_text_document(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "README.md").write_bytes(b"\xff\xfe not utf-8 \x00")
    seeder = Seeder(root)
    dry = seeder.init(force=True, dryRun=True)
    assert dry["diff"].startswith("Binary file README.md changed\n--- /dev/null\n")
    result = seeder.init(force=True)
    assert result["warnings"] == ["Seeding over 1 existing documents."]
    assert (root / "README.md").read_text(encoding="utf-8") == catalogue.root_index(NAME)
    assert findings(Bank(root).refresh()) == ()


# --------------------------------------------------------------------------------------------
# Output for people (04 §9.3)
# --------------------------------------------------------------------------------------------


def test_the_human_init_output(seeder: Seeder) -> None:
    dry = format_init(seeder.init(dryRun=True))
    assert dry.startswith(
        f"WOULD CREATE {seeder.root}\n"
        "directories: adr, dna, domain, engineering, features, flows, ops, processes, product, "
        "use-cases\n"
        "files: 24\n"
        "--- diff ---\n"
        "--- /dev/null\n"
    )
    assert format_init(seeder.init()) == (
        f"CREATED {seeder.root}\n"
        "directories: adr, dna, domain, engineering, features, flows, ops, processes, product, "
        "use-cases\n"
        "files: 24\n"
        "journal: 20260914T120502Z-000001\n"
    )


def test_the_human_output_of_a_forced_init_lists_its_warnings(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    _bank_with_notes(root)
    text = format_init(Seeder(root).init(force=True))
    assert "\nwarning: Seeding over 2 existing documents.\n" in text


def test_the_journal_ids_and_times_come_from_the_injected_clock(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    clock, ids = Clock(), Ids()
    result = write_calls.init(Bank(root), {"name": NAME}, clock=clock, make_id=ids)
    (record,) = read_records(str(root))
    assert result["journalId"] == record.id and record.time == "2026-09-14T12:05:01Z"
    assert json.loads(json.dumps(result)) == result


# --------------------------------------------------------------------------------------------
# The command line (04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_init_creates_the_bank_and_prints_the_summary(
    tmp_path: Path, capsys: Any, snapshot: Any
) -> None:
    root = tmp_path / "bank"
    code, out, err = run_cli(capsys, "init", NAME, "--root", str(root))
    assert (code, err) == (0, "")
    assert len(Bank(root).refresh().docs) == 24
    (record,) = read_records(str(root))
    assert record.via == "cli" and record.intent == {"name": NAME, "force": False}
    assert normalise(out, root) == snapshot


def test_cli_init_dry_run_prints_the_diff_and_writes_nothing(
    tmp_path: Path, capsys: Any, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    with assert_unchanged(tmp_path):
        code, out, _ = run_cli(capsys, "init", NAME, "--root", str(root), "--dry-run")
    assert code == 0 and out.startswith(f"WOULD CREATE {root}\n")
    assert "\n--- diff ---\n--- /dev/null\n+++ b/README.md\n" in out


def test_cli_init_json_is_the_tool_result(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "bank"
    code, out, _ = run_cli(capsys, "--json", "init", NAME, "--root", str(root))
    printed = json.loads(out)
    assert code == 0 and printed["created"] is True and printed["root"] == str(root)
    assert list(printed) == [
        "root",
        "created",
        "dryRun",
        "files",
        "directories",
        "warnings",
        "journalId",
    ]
    assert printed["journalId"] == read_records(str(root))[0].id


def test_cli_init_refusal_goes_to_stderr_with_exit_code_1(
    tmp_path: Path, capsys: Any, assert_unchanged: Any
) -> None:
    root = tmp_path / "bank"
    write(root, "notes/a.md", note("A"))
    with assert_unchanged(tmp_path):
        code, out, err = run_cli(capsys, "init", NAME, "--root", str(root))
    assert (code, out) == (1, "")
    assert err == (
        "mbank: This bank already holds 1 documents. Refusing to seed over them; pass force to "
        "override.\n"
    )


def test_cli_init_force_warns(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "bank"
    write(root, "notes/a.md", note("A", status="draft"))
    code, out, _ = run_cli(capsys, "init", NAME, "--root", str(root), "--force")
    assert code == 0 and "\nwarning: Seeding over 1 existing documents.\n" in out


def test_cli_init_without_a_bank_found_uses_memory_bank_here(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MBANK_ROOT", raising=False)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    code, out, _ = run_cli(capsys, "init", NAME)
    assert code == 0 and out.startswith(f"CREATED {project / 'memory_bank'}\n")
    assert len(Bank(project / "memory_bank").refresh().docs) == 24


def test_cli_init_finds_an_existing_bank_first(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MBANK_ROOT", raising=False)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "memory-bank", "notes/a.md", note("A"))
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    code, _, err = run_cli(capsys, "init", NAME)
    assert code == 1 and "already holds 1 documents" in err
    assert not (project / "src" / "memory_bank").exists()


def test_cli_init_without_a_name_is_a_usage_error(tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli(capsys, "init", "--root", str(tmp_path / "bank"))
    assert exited.value.code == 2
