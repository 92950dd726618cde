"""Issue 18 with real git: branches of one bank, each writing through mbank, merged by `git
merge` with the drivers `mbank setup git` registers (git runs them as subprocesses)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from git_repos import commit_all, git, isolate_git, mbank, mbank_ok, new_repo, unmerged

SHARED = "engineering/shared.md"
SHARED_BODY = (
    "## Alpha\n\nAlpha as seeded.\n\n## Beta\n\nBeta as seeded.\n\n## Gamma\n\nGamma as seeded.\n"
)
EDITED_SECTIONS = ("Alpha", "Beta", "Gamma")
JOURNAL = "memory_bank/.mbank/journal.jsonl"


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


KINDS = {"domain": "domain", "engineering": "engineering", "ops": "ops", "prompts": "prompt",
         "prd": "prd"}  # fmt: skip


def create(bank: Path, path: str, title: str, *extra: str) -> None:
    mbank_ok(
        "create", path, "--root", str(bank), "--kind", KINDS[path.split("/")[0]],
        "--title", title, "--purpose", f"What {title} says.", "--derived", "../dna/governance.md",
        *extra,
    )  # fmt: skip


def seeded_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository holding a freshly seeded bank, set up for git, committed and tagged `seed`."""
    repo = new_repo(tmp_path / "project")
    bank = repo / "memory_bank"
    mbank_ok("init", "Demo", "--root", str(bank))
    create(bank, SHARED, "Shared", "--body", SHARED_BODY)
    create(bank, "domain/orders.md", "Orders")
    mbank_ok("setup", "git", "--project", str(repo))
    commit_all(repo, "seed")
    git(repo, "tag", "seed")
    return repo, bank


def journal_ids(repo: Path, revision: str) -> list[str]:
    text = git(repo, "show", f"{revision}:{JOURNAL}").stdout
    return [json.loads(line)["id"] for line in text.splitlines() if line.strip()]


def branch_ids(repo: Path, branch: str) -> list[str]:
    """The ids of the records the branch added to the seed's journal."""
    seed = set(journal_ids(repo, "seed"))
    return [record_id for record_id in journal_ids(repo, branch) if record_id not in seed]


def records(bank: Path) -> dict[str, dict[str, object]]:
    out = mbank_ok("history", "--root", str(bank), "--limit", "1000", "--json")
    return {record["id"]: record for record in json.loads(out)["records"]}


def undo_refusal(bank: Path, record_id: str) -> str:
    status, out, err = mbank("undo", "--root", str(bank), "--id", record_id, "--dry-run")
    assert status == 1, out
    return err


def assert_clean_merge(repo: Path, branch: str) -> None:
    merged = git(repo, "merge", "--no-edit", branch, check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert git(repo, "status", "--porcelain").stdout == ""


def no_markers(repo: Path) -> bool:
    return git(repo, "grep", "-n", "-E", "^(<<<<<<<|>>>>>>>) ", check=False).returncode == 1


# --- N branches x M creates, plus edits of different sections of one document --------------


def test_branches_of_creates_and_section_edits_merge_in_every_order(tmp_path: Path) -> None:
    repo, bank = seeded_repo(tmp_path)
    branches = ("b0", "b1", "b2")
    created: list[str] = []
    for number, branch in enumerate(branches):
        git(repo, "checkout", "-q", "-b", branch, "seed")
        for doc in range(3):
            path = f"domain/{branch}-doc{doc}.md"
            create(bank, path, f"{branch} doc {doc}")
            created.append(path)
        section = EDITED_SECTIONS[number]
        mbank_ok(
            "update-section", SHARED, section, "--root", str(bank),
            "--content", f"{section} as {branch} wrote it.",
        )  # fmt: skip
        if branch == "b2":  # a write no other branch touches: undoable after any merge
            create(bank, "ops/runbook.md", "Runbook")
        commit_all(repo, f"{branch}: three documents and the {section} section")
    ids = {branch: branch_ids(repo, branch) for branch in branches}
    runbook_id = ids["b2"][-1]
    seed_ids = set(journal_ids(repo, "seed"))

    for order in itertools.permutations(branches):
        git(repo, "checkout", "-q", "-B", "trial", "seed")
        for branch in order:
            assert_clean_merge(repo, branch)
        assert no_markers(repo)
        index = (bank / "domain/README.md").read_text(encoding="utf-8")
        for path in created:
            assert index.count(f"]({path.removeprefix('domain/')})") == 1, (order, path)
        assert index.count("](orders.md)") == 1
        shared = (bank / SHARED).read_text(encoding="utf-8")
        for number, branch in enumerate(branches):
            assert f"{EDITED_SECTIONS[number]} as {branch} wrote it." in shared
        assert mbank_ok("validate", "--root", str(bank)) == "total: 0\n"

        history = records(bank)
        assert set(history) == seed_ids | {i for branch in branches for i in ids[branch]}
        for branch in branches:
            for record_id in ids[branch]:
                if record_id == runbook_id:
                    continue
                changed = (
                    SHARED
                    if history[record_id]["tool"] == "bank_update_section"
                    else ("domain/README.md")
                )
                assert undo_refusal(bank, record_id) == (
                    f"mbank: Cannot undo {record_id}: these files changed after it was applied: "
                    f"{changed}.\n"
                ), (order, record_id)
        undo = json.loads(
            mbank_ok("undo", "--root", str(bank), "--id", runbook_id, "--dry-run", "--json")
        )
        assert undo["files"] == [
            {"path": "ops/README.md", "action": "restored"},
            {"path": "ops/runbook.md", "action": "deleted"},
        ]


# --- the four-branch scenario of the issue --------------------------------------------------


FOUR = ("agent-1", "agent-2", "agent-3", "agent-4")


def test_four_branches_of_five_creates_merge_into_main_cleanly(tmp_path: Path) -> None:
    repo, bank = seeded_repo(tmp_path)
    for branch in FOUR:
        git(repo, "checkout", "-q", "-b", branch, "seed")
        for doc in range(5):
            create(bank, f"domain/{branch}-{doc}.md", f"{branch} {doc}")
        commit_all(repo, f"{branch}: five governed documents")
    everything = {i for branch in FOUR for i in branch_ids(repo, branch)}
    assert len(everything) == 20
    for order in itertools.permutations(FOUR):  # all 24: the "in any order"
        git(repo, "checkout", "-q", "-B", "main", "seed")
        for branch in order:
            assert_clean_merge(repo, branch)
        index = (bank / "domain/README.md").read_text(encoding="utf-8")
        listed = re.findall(r"^- \[[^\]]*\]\(([^)]+)\)", index, re.MULTILINE)
        assert sorted(listed) == sorted(
            ["orders.md"] + [f"{branch}-{doc}.md" for branch in FOUR for doc in range(5)]
        )
        journal = (repo / JOURNAL).read_text(encoding="utf-8").splitlines()
        times = [(json.loads(line)["time"], json.loads(line)["id"]) for line in journal]
        assert times == sorted(times)
        assert everything <= set(records(bank))
        assert mbank_ok("validate", "--root", str(bank), "--fail-on", "error") == "total: 0\n"


# --- conflicts stay where they belong -------------------------------------------------------


def test_two_branches_changing_the_same_entry_conflict_on_that_entry_alone(
    tmp_path: Path,
) -> None:
    repo, bank = seeded_repo(tmp_path)
    for branch, words in (("ours", "Our purpose."), ("theirs", "Their purpose.")):
        git(repo, "checkout", "-q", "-b", branch, "seed")
        mbank_ok("set-field", "domain/orders.md", "purpose", words, "--root", str(bank))
        create(bank, f"domain/{branch}-new.md", f"{branch} new")
        commit_all(repo, f"{branch}: a purpose and a document")
    git(repo, "checkout", "-q", "ours")
    merged = git(repo, "merge", "--no-edit", "theirs", check=False)
    assert merged.returncode == 1
    assert unmerged(repo) == ["memory_bank/domain/README.md", "memory_bank/domain/orders.md"]
    index = (bank / "domain/README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^<{7} .*?^>{7} .*?$", index, re.MULTILINE | re.DOTALL)
    assert blocks == [
        "<<<<<<< ours\n- [Orders](orders.md) — Our purpose.\n=======\n"
        "- [Orders](orders.md) — Their purpose.\n>>>>>>> theirs"
    ]
    outside = index.replace(blocks[0], "")
    assert outside.count("](ours-new.md)") == 1 and outside.count("](theirs-new.md)") == 1
    assert "<<<<<<<" not in (repo / JOURNAL).read_text(encoding="utf-8")


def test_a_corrupted_journal_line_on_one_side_gets_git_markers_and_loses_no_record(
    tmp_path: Path,
) -> None:
    repo, bank = seeded_repo(tmp_path)
    git(repo, "checkout", "-q", "-b", "broken", "seed")
    create(bank, "domain/broken-a.md", "Broken A")
    with (repo / JOURNAL).open("a", encoding="utf-8") as journal:
        journal.write('{"id": "this line is no record\n')
    create(bank, "domain/broken-b.md", "Broken B")
    commit_all(repo, "broken: two documents and a damaged journal line")
    git(repo, "checkout", "-q", "-b", "sound", "seed")
    create(bank, "domain/sound.md", "Sound")
    commit_all(repo, "sound: one document")
    every = set(journal_ids_lenient(repo, "broken")) | set(journal_ids(repo, "sound"))
    merged = git(repo, "merge", "--no-edit", "broken", check=False)
    assert merged.returncode == 1
    assert unmerged(repo) == [JOURNAL]
    text = (repo / JOURNAL).read_text(encoding="utf-8")
    assert text.count("<<<<<<< ours\n") == 1 and text.count(">>>>>>> theirs\n") == 1
    assert '{"id": "this line is no record' in text
    assert all(f'"id":"{record_id}"' in text for record_id in every)
    index = (bank / "domain/README.md").read_text(encoding="utf-8")
    assert all(f"]({n}.md)" in index for n in ("broken-a", "broken-b", "sound"))


def journal_ids_lenient(repo: Path, revision: str) -> list[str]:
    text = git(repo, "show", f"{revision}:{JOURNAL}").stdout
    return re.findall(r'"id":"(\d{8}T\d{6}Z-[0-9a-f]{6})"', text)


def test_two_branches_that_each_start_a_section_merge_its_new_index_and_the_root(
    tmp_path: Path,
) -> None:
    repo, bank = seeded_repo(tmp_path)
    for branch in ("x", "y"):
        git(repo, "checkout", "-q", "-b", branch, "seed")
        create(bank, f"prompts/{branch}.md", f"Prompt {branch}")
        if branch == "y":
            create(bank, "prd/PRD-y.md", "Requirements y")
        commit_all(repo, f"{branch}: the first prompt")
    git(repo, "checkout", "-q", "x")
    assert_clean_merge(repo, "y")
    prompts = (bank / "prompts/README.md").read_text(encoding="utf-8")
    assert prompts.count("](x.md)") == 1 and prompts.count("](y.md)") == 1
    root = (bank / "README.md").read_text(encoding="utf-8")
    assert root.count("(prompts/README.md)") == 1 and root.count("(prd/README.md)") == 1
    assert mbank_ok("validate", "--root", str(bank)) == "total: 0\n"


# --- the post-merge hook --------------------------------------------------------------------


def test_the_post_merge_hook_prints_the_findings_the_merge_added(tmp_path: Path) -> None:
    repo, bank = seeded_repo(tmp_path)
    mbank_ok("setup", "git", "--project", str(repo), "--post-merge-hook")
    for branch in ("x", "y"):
        git(repo, "checkout", "-q", "-b", branch, "seed")
        create(bank, f"domain/{branch}-owner.md", f"Owner {branch}", "--canonical", "billing")
        commit_all(repo, f"{branch}: an owner of billing")
    assert mbank_ok("validate", "--root", str(bank)) == "total: 0\n"
    git(repo, "checkout", "-q", "x")
    merged = git(repo, "merge", "--no-edit", "y")
    assert "mbank: the merge added 1 validation finding; run `mbank validate` for all:" in (
        merged.stdout + merged.stderr
    )
    status, out, _ = mbank("post-merge", "--root", str(bank))
    assert status == 0
    assert out.startswith("mbank: the merge added 1 validation finding;")
    assert "billing" in out


def test_branches_written_in_linked_worktrees_merge_cleanly(tmp_path: Path) -> None:
    repo, bank = seeded_repo(tmp_path)
    for name in ("left", "right"):
        tree = tmp_path / f"worktree-{name}"
        git(repo, "worktree", "add", "-q", "-b", name, str(tree), "seed")
        for doc in range(2):
            create(tree / "memory_bank", f"domain/{name}-{doc}.md", f"{name} {doc}")
        commit_all(tree, f"{name}: two documents, written in its own worktree")
    git(repo, "checkout", "-q", "-B", "main", "seed")
    for name in ("left", "right"):
        assert_clean_merge(repo, name)
    index = (bank / "domain/README.md").read_text(encoding="utf-8")
    assert all(index.count(f"]({n}-{d}.md)") == 1 for n in ("left", "right") for d in range(2))
    assert mbank_ok("validate", "--root", str(bank)) == "total: 0\n"
