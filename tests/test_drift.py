"""bank_drift: anchors whose code moved on long after the document, from ONE batched history
walk over dated dulwich commits (spec 02 §9, 07 §3.12)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from dulwich.repo import Repo
from git_history import commit_all, copy_fixture, init_repo, set_branch

from mbank import gitrepo
from mbank.drift import NO_GIT_NOTE, drift, format_drift, normalise_scope
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


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def anchored_doc(title: str, anchors: list[str]) -> str:
    listed = "".join(f"  - {anchor}\n" for anchor in anchors)
    return (
        f"---\ntitle: {title}\ndoc_kind: engineering\ndoc_function: canonical\nstatus: active\n"
        f"derived_from:\n  - ../domain/rules.md\nanchors:\n{listed}---\n# {title}\n"
    )


ANCHORED = {
    "engineering/filtering.md": ("Filtering", ["src/filter.py"]),
    "engineering/api.md": ("Public API", ["src/api"]),
    "engineering/stable.md": ("Stable Module", ["./src/stable.py"]),
    "engineering/gone.md": ("Removed Module", ["src/removed.py", "src/stable.py"]),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The extended fixture at `memory_bank/` with four anchored documents and dated history.

    2026-01-10 (+02:00) everything; 2026-05-10 (UTC) `src/api/handlers.py` changes;
    2026-07-10 (+02:00) `src/filter.py` changes and `src/removed.py` is deleted.
    """
    root = init_repo(tmp_path / "project")
    bank = copy_fixture(root / "memory_bank", overlay=True)
    for path, (title, anchors) in ANCHORED.items():
        write(bank / path, anchored_doc(title, anchors))
    for code in ("src/filter.py", "src/api/handlers.py", "src/stable.py", "src/removed.py"):
        write(root / code, f"# {code}\n")
    commit_all(root, "2026-01-10T12:00:00+02:00", "import")
    write(root / "src/api/handlers.py", "# handlers, revised\n")
    commit_all(root, "2026-05-10T12:00:00+00:00", "api")
    write(root / "src/filter.py", "# filter, revised\n")
    (root / "src/removed.py").unlink()
    commit_all(root, "2026-07-10T12:00:00+02:00", "filter")
    return root


def bank_of(project: Path) -> Path:
    return project / "memory_bank"


def pairs(result: dict[str, Any], key: str) -> list[tuple[str, str]]:
    return [(p["path"], p["anchor"]) for p in result[key]]


def test_code_changed_long_after_its_document_drifts(project: Path) -> None:
    result = drift(snap(bank_of(project)))
    filtering = result["drifted"][0]
    assert filtering == {
        "path": "engineering/filtering.md",
        "title": "Filtering",
        "status": "active",
        "anchor": "src/filter.py",
        "docTouched": "2026-01-10T12:00:00+02:00",
        "codeTouched": "2026-07-10T12:00:00+02:00",
        "aheadDays": 181,
    }
    assert filtering["aheadDays"] > 170


def test_result_shape_counts_and_order(project: Path) -> None:
    result = drift(snap(bank_of(project)))
    assert list(result) == [
        "mode",
        "repo",
        "thresholdDays",
        "anchored",
        "unanchored",
        "drifted",
        "missing",
    ]
    assert result["mode"] == "git"
    assert result["repo"] == os.path.realpath(project)
    assert result["thresholdDays"] == 90
    assert result["anchored"] == 4
    assert result["unanchored"] == 25
    assert pairs(result, "drifted") == [
        ("engineering/filtering.md", "src/filter.py"),
        ("engineering/api.md", "src/api"),
    ]


def test_widest_gap_comes_first(project: Path) -> None:
    days = [p["aheadDays"] for p in drift(snap(bank_of(project)))["drifted"]]
    assert days == sorted(days, reverse=True) == [181, 120]


def test_unchanged_code_is_silent_even_at_threshold_zero(project: Path) -> None:
    result = drift(snap(bank_of(project)), threshold_days=0)
    anchors = pairs(result, "drifted")
    assert ("engineering/stable.md", "./src/stable.py") not in anchors
    assert ("engineering/gone.md", "src/stable.py") not in anchors


def test_a_directory_anchor_takes_the_newest_file_under_it(project: Path) -> None:
    api = next(p for p in drift(snap(bank_of(project)))["drifted"] if p["anchor"] == "src/api")
    assert api["codeTouched"] == "2026-05-10T12:00:00+00:00"
    assert api["aheadDays"] == 120


def test_a_deletion_under_a_directory_anchor_counts(project: Path) -> None:
    write(project / "src/api/old.py", "# old\n")
    commit_all(project, "2026-08-01T00:00:00+00:00")
    (project / "src/api/old.py").unlink()
    commit_all(project, "2026-09-01T00:00:00+00:00")
    api = next(p for p in drift(snap(bank_of(project)))["drifted"] if p["anchor"] == "src/api")
    assert api["codeTouched"] == "2026-09-01T00:00:00+00:00"


def test_a_deleted_anchor_is_missing_at_any_threshold(project: Path) -> None:
    for threshold in (0, 90, 3650):
        result = drift(snap(bank_of(project)), threshold_days=threshold)
        assert result["missing"] == [
            {
                "path": "engineering/gone.md",
                "title": "Removed Module",
                "status": "active",
                "anchor": "src/removed.py",
                "missing": True,
            }
        ]


def test_the_threshold_is_honoured(project: Path) -> None:
    current = snap(bank_of(project))
    # the API gap is 120 days and 2 hours; the filtering gap exactly 181 days
    assert len(drift(current, threshold_days=120)["drifted"]) == 2
    assert pairs(drift(current, threshold_days=121), "drifted") == [
        ("engineering/filtering.md", "src/filter.py")
    ]
    assert pairs(drift(current, threshold_days=180), "drifted") == [
        ("engineering/filtering.md", "src/filter.py")
    ]
    assert drift(current, threshold_days=181)["drifted"] == []
    assert drift(current, threshold_days=3650)["drifted"] == []


def test_threshold_out_of_bounds_raises(project: Path) -> None:
    for bad in (-1, 3651):
        with pytest.raises(ValueError):
            drift(snap(bank_of(project)), threshold_days=bad)


def test_a_document_edited_after_its_code_is_silent(project: Path) -> None:
    doc = bank_of(project) / "engineering" / "filtering.md"
    doc.write_text(doc.read_text() + "\nUpdated.\n", encoding="utf-8")
    commit_all(project, "2026-08-01T00:00:00+00:00")
    assert ("engineering/filtering.md", "src/filter.py") not in pairs(
        drift(snap(bank_of(project))), "drifted"
    )


def test_an_uncommitted_document_or_code_file_is_skipped(project: Path) -> None:
    write(bank_of(project) / "engineering/new.md", anchored_doc("New", ["src/filter.py"]))
    write(project / "src/untracked.py", "# new\n")
    write(bank_of(project) / "engineering/fresh.md", anchored_doc("Fresh", ["src/untracked.py"]))
    result = drift(snap(bank_of(project)), threshold_days=0)
    assert result["anchored"] == 6
    listed = pairs(result, "drifted") + pairs(result, "missing")
    assert not [p for p in listed if p[0] in ("engineering/new.md", "engineering/fresh.md")]


def test_anchors_escaping_the_repository_are_missing(project: Path) -> None:
    write(project.parent / "outside.py", "# outside\n")
    write(
        bank_of(project) / "engineering/escape.md",
        anchored_doc("Escape", ["../outside.py", "src/../../outside.py", "src/nowhere"]),
    )
    result = drift(snap(bank_of(project)))
    assert [p["anchor"] for p in result["missing"] if p["path"] == "engineering/escape.md"] == [
        "../outside.py",
        "src/../../outside.py",
        "src/nowhere",
    ]


def test_merge_commits_are_not_counted(project: Path) -> None:
    with Repo(str(project)) as repo:
        main_tip = repo.head().decode()
    set_branch(project, "side", main_tip)
    write(project / "src/stable.py", "# stable, changed on a branch\n")
    side = commit_all(project, "2026-03-01T00:00:00+00:00", "side", branch="side")
    commit_all(project, "2026-08-01T00:00:00+00:00", "merge side", merge=[side])
    result = drift(snap(bank_of(project)), threshold_days=30)
    stable = next(p for p in result["drifted"] if p["path"] == "engineering/stable.md")
    # the branch commit's date counts, not the later merge that brought it in
    assert stable["codeTouched"] == "2026-03-01T00:00:00+00:00"
    assert stable["aheadDays"] == 49


def test_history_is_read_in_one_batched_walk(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    original = Repo.get_walker

    def counting(self: Repo, *args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Repo, "get_walker", counting)
    drift(snap(bank_of(project)))
    assert len(calls) == 1
    assert calls[0].get("paths") is None


def test_a_scope_keeps_only_documents_under_it(project: Path) -> None:
    result = drift(snap(bank_of(project)), scope="./engineering/")
    assert result["anchored"] == 4
    assert result["unanchored"] == 2  # architecture.md and logging.md
    assert len(result["drifted"]) == 2


def test_a_scope_without_anchors_gives_mode_none_and_the_note(project: Path) -> None:
    result = drift(snap(bank_of(project)), scope="/domain")
    assert result == {
        "mode": "none",
        "thresholdDays": 90,
        "anchored": 0,
        "unanchored": 4,  # README, glossary, pricing, rules
        "drifted": [],
        "missing": [],
        "note": "No document under domain/ declares anchors:, so there is nothing to compare. "
        "Add anchors: with repository-relative code paths (files or directories) to the "
        "documents that describe code; they are the only thing bank_drift reads.",
    }


def test_an_unannotated_bank_says_so(fixture_plus: Path) -> None:
    result = drift(snap(fixture_plus))
    assert result["mode"] == "none"
    assert result["anchored"] == 0
    assert result["unanchored"] == 25
    assert result["note"].startswith("No document in this bank declares anchors:")
    assert "repository-relative code paths" in result["note"]


def test_outside_git_there_are_no_dates_to_compare(tmp_path: Path) -> None:
    bank = copy_fixture(tmp_path / "bank", overlay=False)
    assert gitrepo.discover_repo(str(bank)) is None, "tmp_path must not be inside git"
    write(bank / "engineering/filtering.md", anchored_doc("Filtering", ["src/filter.py"]))
    result = drift(snap(bank))
    assert result == {
        "mode": "none",
        "thresholdDays": 90,
        "anchored": 1,
        "unanchored": 17,
        "drifted": [],
        "missing": [],
        "note": NO_GIT_NOTE,
    }
    assert NO_GIT_NOTE == (
        "This bank is not inside a git repository, so there are no commit dates to compare. "
        "File modification times would answer a different question."
    )


def test_a_repository_without_commits_reports_only_missing_anchors(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "fresh")
    bank = root / "memory_bank"
    write(bank / "a.md", anchored_doc("A", ["src/here.py", "src/gone.py"]))
    write(root / "src/here.py", "# here\n")
    result = drift(snap(bank))
    assert result["mode"] == "git"
    assert result["drifted"] == []
    assert pairs(result, "missing") == [("a.md", "src/gone.py")]


def test_drift_reads_through_a_symlinked_directory(project: Path, tmp_path: Path) -> None:
    link = tmp_path / "linked"
    os.symlink(project, link)
    result = drift(snap(link / "memory_bank"))
    assert result["repo"] == os.path.realpath(project)
    assert len(result["drifted"]) == 2


def test_drift_never_writes(project: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(project):
        drift(snap(bank_of(project)), threshold_days=0)


@pytest.mark.parametrize(
    ("given", "expected"),
    [(None, None), ("", None), ("/", None), ("./", None), ("./a/b/", "a/b"), ("/a", "a")],
)
def test_scope_normalisation(given: str | None, expected: str | None) -> None:
    assert normalise_scope(given) == expected


def normalised(result: dict[str, Any], project: Path) -> dict[str, Any]:
    assert result["repo"] == os.path.realpath(project)
    return {**result, "repo": "<ROOT>"}


def test_snapshot_of_drift_with_a_dulwich_repository(project: Path, snapshot: Any) -> None:
    assert normalised(drift(snap(bank_of(project))), project) == snapshot


def test_human_output(project: Path) -> None:
    text = format_drift(drift(snap(bank_of(project))))
    assert text == (
        f"drift [git, {os.path.realpath(project)}]  threshold 90 days  anchored 4, unanchored 25\n"
        "drifted:\n"
        "  181d  engineering/filtering.md  anchor src/filter.py  "
        "(doc 2026-01-10, code 2026-07-10)\n"
        "  120d  engineering/api.md  anchor src/api  (doc 2026-01-10, code 2026-05-10)\n"
        "missing:\n"
        "  engineering/gone.md  anchor src/removed.py  (no longer exists)\n"
        "total: 3\n"
    )


def test_human_output_with_a_note(fixture_plus: Path) -> None:
    text = format_drift(drift(snap(fixture_plus), threshold_days=30))
    assert text.splitlines()[0] == "drift [none]  threshold 30 days  anchored 0, unanchored 25"
    assert text.splitlines()[1].startswith("note: No document in this bank declares anchors:")
    assert text.splitlines()[2:] == ["drifted:", "missing:", "total: 0"]


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_drift_human_output(
    project: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    root = str(bank_of(project))
    real = os.path.realpath(project)
    outputs = {
        "default": run_cli(capsys, "--root", root, "drift"),
        "threshold": run_cli(capsys, "--root", root, "drift", "--threshold-days", "150"),
        "scope": run_cli(capsys, "--root", root, "drift", "--scope", "domain"),
    }
    normalised_outputs = {
        name: [code, out.replace(real, "<ROOT>"), err] for name, (code, out, err) in outputs.items()
    }
    assert normalised_outputs["default"][1] == format_drift(drift(snap(bank_of(project)))).replace(
        real, "<ROOT>"
    )
    assert normalised_outputs == snapshot


def test_cli_drift_json_and_bounds(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    root = str(bank_of(project))
    code, out, _ = run_cli(capsys, "--root", root, "--json", "drift", "--threshold-days", "0")
    assert code == 0
    assert json.loads(out) == drift(snap(bank_of(project)), threshold_days=0)
    for bad in ("-1", "3651", "ninety"):
        with pytest.raises(SystemExit) as caught:
            run_cli(capsys, "--root", root, "drift", "--threshold-days", bad)
        assert caught.value.code == 2


@pytest.mark.corpus
def test_corpus_banks_answer_drift(corpus: dict[str, Path], assert_unchanged: Any) -> None:
    for name, root in corpus.items():
        with assert_unchanged(root):
            result = drift(snap(root))
            assert result["mode"] in ("git", "none"), name
            assert result["anchored"] + result["unanchored"] == len(snap(root).docs), name
