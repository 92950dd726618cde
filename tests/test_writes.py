"""The write engine's shell (spec 03 §1.1, §2.5): the intent, bodyFile reading, roots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from planners import FIXED_NOW, Clock, Ids, no_findings, plan_create_registered, small_bank

from mbank.model import FileRead, Intent, Plan, PlanOutcome, RefusalError
from mbank.plan import create_document, replace_bytes, sha256_hex
from mbank.snapshot import Bank, Snapshot
from mbank.writes import execute, read_content_file, read_file_arguments


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """`repo/` is a git work tree (P2); the bank is `repo/docs/bank`, so P1 is `repo/docs`."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    small_bank(repo / "docs" / "bank")
    return repo


def read(project: Path, given: str, *, cwd: Path | None = None) -> FileRead:
    return read_content_file(given, "body", str(project / "docs" / "bank"), str(cwd or project))


def refusal(result: FileRead) -> tuple[str, str]:
    assert result.refusal is not None, result
    return result.refusal.rule, result.refusal.message


def test_a_file_inside_the_project_is_read(project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "body.md").write_text("Body text.\n", encoding="utf-8")
    result = read(project, "src/body.md")
    assert result.text == "Body text.\n"
    assert result.sha256 == sha256_hex(b"Body text.\n") and result.size == 11
    assert read(project, str(project / "src" / "body.md")).text == "Body text.\n"
    assert read(project, "../src/body.md", cwd=project / "docs").text == "Body text.\n"


def test_a_missing_file_cannot_be_read(project: Path) -> None:
    assert refusal(read(project, "nope.md")) == (
        "file-unreadable",
        'bodyFile "nope.md" could not be read (no such file). The path is absolute, or '
        "relative to the server's working directory.",
    )


def test_a_file_outside_the_project_is_refused_naming_the_project(project: Path) -> None:
    assert refusal(read(project, "/etc/passwd")) == (
        "file-outside",
        f'bodyFile "/etc/passwd" is outside this project ({project}). Only files inside the '
        "project can be read.",
    )


def test_without_git_the_project_is_the_bank_roots_parent(tmp_path: Path) -> None:
    small_bank(tmp_path / "p" / "bank")
    (tmp_path / "sibling.md").write_text("x", encoding="utf-8")
    result = read_content_file(
        str(tmp_path / "sibling.md"), "content", str(tmp_path / "p" / "bank"), str(tmp_path)
    )
    assert refusal(result) == (
        "file-outside",
        f'contentFile "{tmp_path / "sibling.md"}" is outside this project ({tmp_path / "p"}). '
        "Only files inside the project can be read.",
    )


def test_a_symlink_leading_out_of_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("secret", encoding="utf-8")
    (project / "link.md").symlink_to(secret)
    assert refusal(read(project, "link.md")) == (
        "file-symlink",
        'bodyFile "link.md" leads outside this project through a symbolic link.',
    )


@pytest.mark.parametrize(
    ("relative", "component"),
    [(".git/config", ".git"), (".env", ".env"), (".github/notes.md", ".github")],
)
def test_hidden_names_are_never_read(project: Path, relative: str, component: str) -> None:
    target = project / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x", encoding="utf-8")
    assert refusal(read(project, relative)) == (
        "file-hidden",
        f'bodyFile "{relative}" is inside a hidden name ({component}). Files under .git/, '
        "other dot-directories and dot-files are never read.",
    )


def test_a_directory_and_a_fifo_are_not_regular_files(project: Path) -> None:
    os.mkfifo(project / "pipe")
    for given in ("docs", "pipe"):
        assert refusal(read(project, given)) == (
            "file-not-regular",
            f'bodyFile "{given}" is not a regular file.',
        )


def test_a_file_past_a_million_bytes_is_refused(project: Path) -> None:
    (project / "big.md").write_bytes(b"x" * 1_000_001)
    (project / "fits.md").write_bytes(b"x" * 1_000_000)
    assert refusal(read(project, "big.md")) == (
        "file-too-large",
        'bodyFile "big.md" is 1000001 bytes, past the 1000000 this accepts. Split it, or '
        "write the document in sections.",
    )
    assert read(project, "fits.md").size == 1_000_000


@pytest.mark.parametrize("content", [b"caf\xe9\n", b"a\x00b"])
def test_a_file_that_is_not_utf8_text_is_refused(project: Path, content: bytes) -> None:
    (project / "bad.md").write_bytes(content)
    assert refusal(read(project, "bad.md")) == (
        "file-not-utf8",
        'bodyFile "bad.md" is not UTF-8 text.',
    )


def test_file_arguments_the_gate_refuses_first_are_not_read(project: Path) -> None:
    bank_root = str(project / "docs" / "bank")
    assert read_file_arguments({"body": "x", "bodyFile": "nope.md"}, bank_root, "/") == {}
    assert read_file_arguments({"bodyFile": "  "}, bank_root, "/") == {}
    assert read_file_arguments({"contentFile": "a\x00b"}, bank_root, "/") == {}
    found = read_file_arguments({"contentFile": "nope.md"}, bank_root, str(project))
    assert found["contentFile"].refusal is not None
    assert found["contentFile"].refusal.message.startswith('contentFile "nope.md"')


# --------------------------------------------------------------------------------------------
# The intent and the engine's handling of roots
# --------------------------------------------------------------------------------------------


def test_the_intent_carries_today_now_the_journal_id_and_the_tools_facts(
    tmp_path: Path,
) -> None:
    root = small_bank(tmp_path / "bank")
    seen: list[Intent] = []

    def spy(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        seen.append(intent)
        return plan_create_registered(snapshot, intent)

    arguments = {"path": "domain/x.md", "index": "domain/README.md"}
    common: dict[str, Any] = {"findings_for": no_findings, "clock": Clock(), "make_id": Ids()}
    execute(Bank(root), "bank_create", arguments, spy, dry_run=True, **common)
    execute(
        Bank(root),
        "bank_create",
        arguments,
        spy,
        dry_run=False,
        gather_facts=lambda snapshot: {"documents": len(snapshot.docs)},
        **common,
    )
    dry, first_pass, locked_pass = seen
    assert dry.journal_id is None and dry.dry_run
    assert dry.today == "2026-09-14" and dry.now == "2026-09-14T12:05:01Z"
    assert first_pass.journal_id == locked_pass.journal_id == "20260914T120502Z-000001"
    assert locked_pass.facts == {"documents": 3}
    assert locked_pass.args == arguments  # untyped planners get the arguments as given
    assert FIXED_NOW.tzinfo is not None


def test_a_write_to_a_missing_root_creates_it_only_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "new-bank"

    def seed(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        return PlanOutcome(plan=Plan(intent.tool, (create_document("README.md", "# Bank\n"),)))

    with pytest.raises(RefusalError) as caught:
        execute(Bank(root), "bank_create", {}, seed, dry_run=False, findings_for=no_findings)
    assert caught.value.refusal.rule == "root-missing"
    assert not root.exists()
    dry = execute(
        Bank(root), "bank_init", {}, seed, dry_run=True, create_root=True, findings_for=no_findings
    )
    assert dry.diff and not root.exists()
    done = execute(
        Bank(root), "bank_init", {}, seed, dry_run=False, create_root=True, findings_for=no_findings
    )
    assert done.applied and (root / "README.md").read_text(encoding="utf-8") == "# Bank\n"
    assert (root / ".mbank" / ".gitignore").exists()


def test_a_dry_run_diff_reads_pre_images_of_non_document_files(tmp_path: Path) -> None:
    root = small_bank(tmp_path / "bank")
    (root / "notes.txt").write_bytes(b"old\n")

    def force_replace(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        op = replace_bytes("notes.txt", b"new\n", sha256_hex(b"old\n"))
        return PlanOutcome(plan=Plan(intent.tool, (op,)), force=True)

    outcome = execute(
        Bank(root), "bank_init", {}, force_replace, dry_run=True, findings_for=no_findings
    )
    assert outcome.diff == ("--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-old\n+new\n")
