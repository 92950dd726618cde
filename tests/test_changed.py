"""bank_changed: the delta since a git revision (dulwich, no git binary) or an ISO date
(spec 02 §8, 07 §2.4 step 3 and §3.11)."""

from __future__ import annotations

import calendar
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from git_history import commit_all, copy_fixture, init_repo, set_branch, tag

from mbank import gitrepo
from mbank.changed import MTIME_NOTE, changed, format_changed, parse_iso_cutoff
from mbank.model import RefusalError
from mbank.snapshot import Bank, Snapshot


@pytest.fixture(autouse=True)
def no_git_binary(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test here runs with an empty PATH and a private HOME: dulwich needs neither."""
    empty = tmp_path_factory.mktemp("empty-path")
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    assert shutil.which("git") is None


def snap(root: Path) -> Snapshot:
    return Bank(root).refresh()


def kinds(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["changeKind"], c["path"]) for c in result["changes"]]


def refusal(root: Path, since: str) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        changed(snap(root), since)
    return caught.value.refusal.rule, caught.value.refusal.message


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with the base fixture bank at `memory_bank/` and one commit."""
    root = init_repo(tmp_path / "project")
    copy_fixture(root / "memory_bank", overlay=False)
    write(root / "src" / "app.py", "print('hi')\n")
    commit_all(root, "2026-01-10T12:00:00+00:00", "import the bank")
    return root


def bank_of(project: Path) -> Path:
    return project / "memory_bank"


GLOSSARY = "---\ntitle: Glossary\ndoc_kind: domain\nstatus: draft\n---\n# Glossary\n\nTerms.\n"


# --------------------------------------------------------------------------------------------
# git mode
# --------------------------------------------------------------------------------------------


def test_added_and_modified_since_head(project: Path) -> None:
    bank = bank_of(project)
    write(bank / "domain" / "glossary.md", GLOSSARY)
    readme = bank / "domain" / "README.md"
    readme.write_text(readme.read_text() + "\n- [Glossary](glossary.md)\n", encoding="utf-8")
    result = changed(snap(bank), "HEAD")
    assert result["mode"] == "git"
    assert result["since"] == "HEAD"
    assert result["repo"] == os.path.realpath(project)
    assert "note" not in result
    assert result["changes"] == [
        {
            "path": "domain/glossary.md",
            "title": "Glossary",
            "changeKind": "added",
            "docKind": "domain",
            "layer": "knowledge",
            "status": "draft",
        },
        {
            "path": "domain/README.md",
            "title": "Domain Documentation Index",
            "changeKind": "modified",
            "docKind": "domain",
            "layer": "knowledge",
            "status": "active",
        },
    ]


def test_nothing_changed_gives_no_changes(project: Path) -> None:
    result = changed(snap(bank_of(project)), "HEAD")
    assert result == {
        "since": "HEAD",
        "mode": "git",
        "repo": os.path.realpath(project),
        "changes": [],
    }


def test_deleted_document_has_only_its_file_name_as_title(project: Path) -> None:
    (bank_of(project) / "orphan.md").unlink()
    result = changed(snap(bank_of(project)), "HEAD")
    assert result["changes"] == [{"path": "orphan.md", "title": "orphan", "changeKind": "deleted"}]


def test_a_moved_document_is_renamed_with_from(project: Path) -> None:
    bank = bank_of(project)
    (bank / "notes").mkdir()
    (bank / "orphan.md").rename(bank / "notes" / "sizing.md")
    result = changed(snap(bank), "HEAD")
    assert result["changes"] == [
        {
            "path": "notes/sizing.md",
            "title": "Worker Pool Sizing Notes",
            "changeKind": "renamed",
            "docKind": "engineering",
            "layer": "other",
            "status": "draft",
            "from": "orphan.md",
        }
    ]


def test_a_moved_and_lightly_edited_document_is_still_a_rename(project: Path) -> None:
    bank = bank_of(project)
    text = (bank / "domain" / "rules.md").read_text()
    (bank / "domain" / "rules.md").unlink()
    write(bank / "knowledge" / "rules.md", text + "\nOne more line.\n")
    assert kinds(changed(snap(bank), "HEAD")) == [("renamed", "knowledge/rules.md")]


def test_a_dissimilar_pair_stays_deleted_and_added(project: Path) -> None:
    bank = bank_of(project)
    (bank / "orphan.md").unlink()
    write(bank / "fresh.md", GLOSSARY)
    assert kinds(changed(snap(bank), "HEAD")) == [("added", "fresh.md"), ("deleted", "orphan.md")]


def test_a_pair_exactly_50_percent_similar_is_a_rename(project: Path) -> None:
    bank = bank_of(project)
    write(bank / "half.md", "L1\nL2\n")
    commit_all(project, "2026-02-01T09:00:00+00:00")
    (bank / "half.md").unlink()
    write(bank / "moved.md", "L1\nXX\n")  # one of two 3-byte lines kept: similarity 50
    assert kinds(changed(snap(bank), "HEAD")) == [("renamed", "moved.md")]
    write(bank / "moved.md", "L1\nXXX\n")  # 3 common bytes of 7: below 50
    assert kinds(changed(snap(bank), "HEAD")) == [("added", "moved.md"), ("deleted", "half.md")]


def test_committed_changes_since_an_older_commit(project: Path) -> None:
    bank = bank_of(project)
    write(bank / "domain" / "glossary.md", GLOSSARY)
    (bank / "conflict.md").unlink()
    commit_all(project, "2026-02-01T09:00:00+00:00")
    (bank / "orphan.md").write_text("---\ntitle: Rewritten\n---\nnew\n", encoding="utf-8")
    assert kinds(changed(snap(bank), "HEAD~1")) == [
        ("added", "domain/glossary.md"),
        ("deleted", "conflict.md"),
        ("modified", "orphan.md"),
    ]
    assert kinds(changed(snap(bank), "HEAD")) == [("modified", "orphan.md")]


def test_changes_are_sorted_by_kind_then_path(project: Path) -> None:
    bank = bank_of(project)
    write(bank / "zeta.md", GLOSSARY.replace("Glossary", "Zeta"))
    write(bank / "alpha.md", "---\ntitle: Alpha\n---\nalpha text that is unique\n")
    (bank / "dna" / "README.md").write_text("changed\n", encoding="utf-8")
    (bank / "README.md").write_text("changed too\n", encoding="utf-8")
    (bank / "broken" / "bad-yaml.md").unlink()
    assert kinds(changed(snap(bank), "HEAD")) == [
        ("added", "alpha.md"),
        ("added", "zeta.md"),
        ("deleted", "broken/bad-yaml.md"),
        ("modified", "README.md"),
        ("modified", "dna/README.md"),
    ]


def test_staged_and_unstaged_edits_both_count(project: Path) -> None:
    from dulwich import porcelain

    bank = bank_of(project)
    (bank / "orphan.md").write_text("staged edit\n", encoding="utf-8")
    porcelain.add(str(project), [str(bank / "orphan.md")])
    (bank / "conflict.md").write_text("unstaged edit\n", encoding="utf-8")
    assert kinds(changed(snap(bank), "HEAD")) == [
        ("modified", "conflict.md"),
        ("modified", "orphan.md"),
    ]


def test_untracked_files_count_but_ignored_ones_do_not(project: Path) -> None:
    bank = bank_of(project)
    write(project / ".gitignore", "memory_bank/drafts/\n*.local.md\n")
    write(bank / "drafts" / "idea.md", GLOSSARY)
    write(bank / "notes.local.md", GLOSSARY)
    write(bank / "kept" / "idea.md", GLOSSARY)
    write(project / ".git" / "info" / "exclude", "memory_bank/private.md\n")
    write(bank / "private.md", GLOSSARY)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "ignore"
    write(config, "secret-*.md\n")
    write(bank / "secret-plan.md", GLOSSARY)
    assert kinds(changed(snap(bank), "HEAD")) == [("added", "kept/idea.md")]


def test_a_tracked_file_that_is_now_ignored_still_counts(project: Path) -> None:
    bank = bank_of(project)
    write(project / ".gitignore", "memory_bank/orphan.md\n")
    (bank / "orphan.md").write_text("edited\n", encoding="utf-8")
    assert kinds(changed(snap(bank), "HEAD")) == [("modified", "orphan.md")]


def test_paths_the_walk_never_indexes_are_not_listed(project: Path) -> None:
    bank = bank_of(project)
    for hidden in (".obsidian/x.md", "node_modules/pkg/x.md", "dist/x.md", ".hidden.md"):
        write(bank / hidden, "v1\n")
    commit_all(project, "2026-02-01T09:00:00+00:00")
    for hidden in (".obsidian/x.md", "node_modules/pkg/x.md", "dist/x.md", ".hidden.md"):
        write(bank / hidden, "v2\n")
    write(bank / ".obsidian" / "new.md", "new\n")
    assert changed(snap(bank), "HEAD")["changes"] == []
    assert changed(snap(bank), "HEAD~1")["changes"] == []


def test_files_outside_the_bank_directory_are_not_listed(project: Path) -> None:
    write(project / "docs" / "other.md", "elsewhere\n")
    write(project / "src" / "app.py", "print('changed')\n")
    assert changed(snap(bank_of(project)), "HEAD")["changes"] == []


def test_a_mode_only_change_is_not_a_change(project: Path) -> None:
    os.chmod(bank_of(project) / "orphan.md", 0o755)
    commit_all(project, "2026-02-01T09:00:00+00:00")
    assert changed(snap(bank_of(project)), "HEAD~1")["changes"] == []


def test_a_bank_at_the_top_of_the_repository(tmp_path: Path) -> None:
    bank = copy_fixture(tmp_path / "bank", overlay=False)
    init_repo(bank)
    commit_all(bank, "2026-01-10T12:00:00+00:00")
    write(bank / "domain" / "glossary.md", GLOSSARY)
    result = changed(snap(bank), "HEAD")
    assert result["repo"] == os.path.realpath(bank)
    assert kinds(result) == [("added", "domain/glossary.md")]


def test_a_bank_reached_through_a_symlinked_directory_still_maps_paths(
    project: Path, tmp_path: Path
) -> None:
    link = tmp_path / "linked"
    os.symlink(project, link)
    write(bank_of(project) / "domain" / "glossary.md", GLOSSARY)
    result = changed(snap(link / "memory_bank"), "HEAD")
    assert result["repo"] == os.path.realpath(project)
    assert kinds(result) == [("added", "domain/glossary.md")]


def test_a_non_text_document_is_compared_by_its_bytes(project: Path) -> None:
    bank = bank_of(project)
    (bank / "latin.md").write_bytes(b"title: Caf\xe9\n")
    commit_all(project, "2026-02-01T09:00:00+00:00")
    assert changed(snap(bank), "HEAD")["changes"] == []
    (bank / "latin.md").write_bytes(b"title: Caf\xe9s\n")
    assert changed(snap(bank), "HEAD")["changes"] == [
        {
            "path": "latin.md",
            "title": "latin",
            "changeKind": "modified",
            "docKind": "",
            "layer": "other",
            "status": "",
        }
    ]


# --------------------------------------------------------------------------------------------
# Revisions
# --------------------------------------------------------------------------------------------


@pytest.fixture
def history(project: Path) -> dict[str, str]:
    """Three commits on main (c0 → c1 → c2) and a side branch, with tags."""
    bank = bank_of(project)
    from dulwich.repo import Repo

    with Repo(str(project)) as repo:
        c0 = repo.head().decode()
    write(bank / "one.md", "---\ntitle: One\n---\nfirst\n")
    c1 = commit_all(project, "2026-02-01T09:00:00+00:00")
    write(bank / "two.md", "---\ntitle: Two\n---\nsecond\n")
    c2 = commit_all(project, "2026-03-01T09:00:00+00:00")
    tag(project, "v1.0.0", c1)
    tag(project, "v1.1.0", c1, annotated=True)
    set_branch(project, "side", c1)
    return {"c0": c0, "c1": c1, "c2": c2}


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        ("HEAD", []),
        ("HEAD~1", ["two.md"]),
        ("HEAD^", ["two.md"]),
        ("HEAD~2", ["one.md", "two.md"]),
        ("HEAD^^", ["one.md", "two.md"]),
        ("HEAD~1^", ["one.md", "two.md"]),
        ("HEAD^1~1", ["one.md", "two.md"]),
        ("HEAD^0", []),
        ("HEAD~0", []),
        ("main", []),
        ("side", ["two.md"]),
        ("v1.0.0", ["two.md"]),
        ("v1.1.0", ["two.md"]),
        ("v1.1.0~1", ["one.md", "two.md"]),
        ("c0", ["one.md", "two.md"]),
        ("c1-short", ["two.md"]),
    ],
)
def test_revision_forms_resolve(
    project: Path, history: dict[str, str], since: str, expected: list[str]
) -> None:
    given = {"c0": history["c0"], "c1-short": history["c1"][:7]}.get(since, since)
    result = changed(snap(bank_of(project)), given)
    assert result["since"] == given
    assert [c["path"] for c in result["changes"] if c["changeKind"] == "added"] == expected
    assert "note" not in result


def test_a_bad_ref_is_not_a_commit(project: Path) -> None:
    repo = os.path.realpath(project)
    assert refusal(bank_of(project), "not-a-ref") == (
        "not-a-commit",
        f'"not-a-ref" is not a commit in {repo}. Pass a valid ref or an ISO date.',
    )
    for bad in ("deadbeef", "HEAD^2", "HEAD~1~", "main:README.md", "nope~3"):
        assert refusal(bank_of(project), bad)[0] == "not-a-commit"


def test_a_walking_ref_past_the_first_commit_falls_back_with_the_note(
    project: Path, history: dict[str, str]
) -> None:
    result = changed(snap(bank_of(project)), "HEAD~20")
    assert [c["path"] for c in result["changes"]] == ["one.md", "two.md"]
    assert result["note"] == (
        '"HEAD~20" reaches past the start of this repository, so the delta is measured from its '
        f"first commit ({history['c0'][:8]}) instead."
    )
    side = changed(snap(bank_of(project)), "side^^^")
    assert side["note"].startswith('"side^^^" reaches past the start')
    assert [c["path"] for c in side["changes"]] == ["one.md", "two.md"]


def test_a_repository_without_commits_lists_everything_as_added(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "fresh")
    bank = copy_fixture(root / "memory_bank", overlay=False)
    result = changed(snap(bank), "HEAD~20")
    assert result["mode"] == "git"
    assert result["note"] == (
        "The repository has no commits yet, so every document is listed as added."
    )
    assert len(result["changes"]) == 17
    assert {c["changeKind"] for c in result["changes"]} == {"added"}
    assert changed(snap(bank), "whatever")["changes"] == result["changes"]


# --------------------------------------------------------------------------------------------
# Outside git and ISO dates (mtime mode)
# --------------------------------------------------------------------------------------------


def stamp(root: Path, when: str, paths: list[str] | None = None) -> None:
    """Set the mtime of every document (or of `paths`) to an ISO moment."""
    cutoff = parse_iso_cutoff(when)
    assert cutoff is not None
    targets = paths if paths is not None else [p for p in snap(root).docs]
    for path in targets:
        os.utime(root / path, ns=(cutoff, cutoff))


@pytest.fixture
def loose(tmp_path: Path) -> Path:
    """The extended fixture outside any repository, all documents dated 2026-01-01."""
    bank = copy_fixture(tmp_path / "bank", overlay=True)
    assert gitrepo.discover_repo(str(bank)) is None, "tmp_path must not be inside git"
    stamp(bank, "2026-01-01T00:00:00Z")
    stamp(bank, "2026-09-01T08:30:00Z", ["domain/rules.md", "adr/ADR-002-cache-layer.md"])
    return bank


def test_outside_git_a_walking_ref_lists_every_document_with_the_note(loose: Path) -> None:
    result = changed(snap(loose), "HEAD~20")
    assert result["mode"] == "mtime"
    assert result["since"] == "HEAD~20"
    assert "repo" not in result
    assert len(result["changes"]) == 25
    assert {c["changeKind"] for c in result["changes"]} == {"modified"}
    assert result["note"] == (
        'This bank is not inside a git repository, so "HEAD~20" cannot be walked; every '
        "document is listed. Modification times cannot tell a new document from an edited "
        "one and do not show deletions. Pass a git ref for an exact delta."
    )


@pytest.mark.parametrize("since", ["v1.2.0", "deadbeef", "HEAD", "main"])
def test_outside_git_other_refs_are_refused(loose: Path, since: str) -> None:
    assert refusal(loose, since) == (
        "not-in-git",
        f'This bank is not inside a git repository, so "{since}" cannot be resolved. '
        "Pass an ISO date instead.",
    )


def test_an_iso_date_lists_documents_modified_after_it(loose: Path, snapshot: Any) -> None:
    result = changed(snap(loose), "2026-08-01")
    assert result["mode"] == "mtime"
    assert kinds(result) == [
        ("modified", "adr/ADR-002-cache-layer.md"),
        ("modified", "domain/rules.md"),
    ]
    assert result["note"] == MTIME_NOTE
    assert result == snapshot


@pytest.mark.parametrize(
    ("since", "listed"),
    [
        ("2026-09-01", True),
        ("2026-09-01T08:30:00Z", False),  # strictly after the cutoff
        ("2026-09-01T08:29:59.999Z", True),
        ("2026-09-01 08:30", False),  # no offset: UTC
        ("2026-09-01T10:29+02:00", True),
        ("2026-09-01T10:30:00+02:00", False),
        ("2026-09-01T04:29:00-04:00", True),
        ("2026-09-02", False),
    ],
)
def test_iso_date_times_are_utc_unless_they_carry_an_offset(
    loose: Path, since: str, listed: bool
) -> None:
    paths = [c["path"] for c in changed(snap(loose), since)["changes"]]
    assert ("domain/rules.md" in paths) is listed


def test_an_iso_date_works_inside_git_too(project: Path) -> None:
    bank = bank_of(project)
    stamp(bank, "2026-01-01T00:00:00Z")
    assert changed(snap(bank), "2026-08-01")["changes"] == []


@pytest.mark.parametrize("since", ["2026-13-45", "2026-02-30", "2026-08-01T", "2026-08-01 25:00"])
def test_an_unparseable_date_is_refused(loose: Path, since: str) -> None:
    assert refusal(loose, since) == (
        "since-unusable",
        f'"{since}" is neither an ISO date nor a usable git ref.',
    )


@pytest.mark.parametrize("since", ["", "   "])
def test_since_is_required(loose: Path, since: str) -> None:
    assert refusal(loose, since) == (
        "since-required",
        "`since` is required: an ISO date or a git ref.",
    )


def test_iso_cutoff_parsing() -> None:
    midnight = calendar.timegm((2026, 8, 1, 0, 0, 0)) * 1_000_000_000
    assert parse_iso_cutoff("2026-08-01") == midnight
    assert parse_iso_cutoff("2026-08-01T00:00:00.5Z") == midnight + 500_000_000
    assert parse_iso_cutoff("2026-08-01T02:00+02:00") == midnight
    assert parse_iso_cutoff("yesterday") is None


def test_changed_never_writes(project: Path, assert_unchanged: Any) -> None:
    write(bank_of(project) / "domain" / "glossary.md", GLOSSARY)
    with assert_unchanged(project):
        changed(snap(bank_of(project)), "HEAD")
        changed(snap(bank_of(project)), "HEAD~5")


# --------------------------------------------------------------------------------------------
# Human output (spec 04 §9.3)
# --------------------------------------------------------------------------------------------


def test_human_output_in_git_mode(project: Path) -> None:
    bank = bank_of(project)
    write(bank / "domain" / "glossary.md", GLOSSARY)
    (bank / "orphan.md").rename(bank / "sizing.md")
    (bank / "conflict.md").unlink()
    text = format_changed(changed(snap(bank), "HEAD"))
    assert text == (
        f"since HEAD [git, {os.path.realpath(project)}]\n"
        "\n"
        "added     domain/glossary.md  [domain / knowledge]\n"
        "deleted   conflict.md  [- / -]\n"
        "renamed   sizing.md  <- orphan.md  [engineering / other]\n"
        "total: 3\n"
    )


def test_human_output_in_mtime_mode(loose: Path) -> None:
    text = format_changed(changed(snap(loose), "2026-08-01"))
    assert text == (
        "since 2026-08-01 [mtime]\n"
        f"note: {MTIME_NOTE}\n"
        "\n"
        "modified  adr/ADR-002-cache-layer.md  [adr / decision]\n"
        "modified  domain/rules.md  [domain / knowledge]\n"
        "total: 2\n"
    )


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_changed_in_mtime_mode(
    loose: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    outputs = {
        "date": run_cli(capsys, "--root", str(loose), "changed", "2026-08-01"),
        "walking-ref": run_cli(capsys, "--root", str(loose), "changed", "HEAD~20"),
        "refused": run_cli(capsys, "--root", str(loose), "changed", "v1.2.0"),
    }
    assert outputs["date"][1] == format_changed(changed(snap(loose), "2026-08-01"))
    assert outputs["refused"] == (
        1,
        "",
        'mbank: This bank is not inside a git repository, so "v1.2.0" cannot be resolved. '
        "Pass an ISO date instead.\n",
    )
    assert {name: list(value) for name, value in outputs.items()} == snapshot


def test_cli_changed_in_git_mode_and_json(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    bank = bank_of(project)
    write(bank / "domain" / "glossary.md", GLOSSARY)
    code, out, err = run_cli(capsys, "--root", str(bank), "changed", "HEAD")
    assert (code, err) == (0, "")
    assert out.replace(os.path.realpath(project), "<ROOT>") == (
        "since HEAD [git, <ROOT>]\n\nadded     domain/glossary.md  [domain / knowledge]\ntotal: 1\n"
    )
    code, out, _ = run_cli(capsys, "--root", str(bank), "--json", "changed", "HEAD")
    assert json.loads(out) == changed(snap(bank), "HEAD")


@pytest.mark.corpus
def test_corpus_banks_answer_changed_in_mtime_mode(
    corpus: dict[str, Path], assert_unchanged: Any
) -> None:
    for name, root in corpus.items():
        with assert_unchanged(root):
            result = changed(snap(root), "1970-01-02")
            assert result["mode"] == "mtime", name
            assert len(result["changes"]) == len(snap(root).docs), name


@pytest.mark.parametrize("broken", ["a directory", "malformed", "unreadable"])
def test_a_broken_user_gitconfig_does_not_break_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    project = init_repo(tmp_path / "project")
    bank = copy_fixture(project / "memory_bank", overlay=False)
    commit_all(project, "2026-09-01T10:00:00Z")
    (bank / "orphan.md").write_text((bank / "orphan.md").read_text() + "\nMore.\n")
    home = tmp_path / "home"
    home.mkdir()
    config = home / ".gitconfig"
    if broken == "a directory":
        config.mkdir()
    else:
        config.write_text("[user\n bad" if broken == "malformed" else "[user]\n")
        if broken == "unreadable":
            config.chmod(0)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    result = changed(Bank(str(bank)).refresh(), "HEAD")
    assert [change["path"] for change in result["changes"]] == ["orphan.md"]
