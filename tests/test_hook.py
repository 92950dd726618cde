"""The Stop hook (spec 04 §10, 07 §3.28), driven with real hook JSON in real git repositories."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from mbank import hook


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    markers = tmp_path / "tmp"
    markers.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(markers))
    return markers


def make_project(tmp_path: Path, bank_dir: str = "memory_bank") -> Path:
    project = tmp_path / "project"
    (project / bank_dir).mkdir(parents=True)
    (project / bank_dir / "README.md").write_text("# Bank\n", encoding="utf-8")
    repo = Repo.init(str(project))
    repo.close()
    porcelain.add(str(project), paths=[str(project / bank_dir / "README.md")])
    porcelain.commit(
        str(project), message=b"first", author=b"T <t@example.com>", committer=b"T <t@example.com>"
    )
    return project


def commit_all(project: Path, message: bytes) -> None:
    porcelain.add(str(project))
    porcelain.commit(
        str(project), message=message, author=b"T <t@example.com>", committer=b"T <t@example.com>"
    )


def stop(
    cwd: Path,
    *,
    session: str = "s1",
    active: bool = False,
    root: str | None = None,
    env: dict[str, str] | None = None,
    now: float | None = None,
    raw: str | None = None,
) -> tuple[int, str, str]:
    payload = (
        raw
        if raw is not None
        else json.dumps({"session_id": session, "cwd": str(cwd), "stop_hook_active": active})
    )
    out, err = io.StringIO(), io.StringIO()
    code = hook.run(io.StringIO(payload), out, err, root=root, env=env or {}, now=now)
    return code, out.getvalue(), err.getvalue()


def asked(output: str) -> dict[str, Any]:
    data = json.loads(output)
    assert set(data) == {"decision", "reason"}
    assert data["decision"] == "block"
    return data


def test_stays_silent_when_the_stop_hook_is_already_active(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "new.txt").write_text("x")
    assert stop(project, active=True) == (0, "", "")


def test_stays_silent_without_a_bank(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    Repo.init(str(project)).close()
    (project / "new.txt").write_text("x")
    assert stop(project) == (0, "", "")


def test_stays_silent_outside_git(tmp_path: Path) -> None:
    project = tmp_path / "nogit"
    (project / "memory_bank").mkdir(parents=True)
    (project / "new.txt").write_text("x")
    assert stop(project) == (0, "", "")


def test_a_clean_tree_without_marker_writes_the_baseline_and_stays_silent(
    tmp_path: Path, private_tempdir: Path
) -> None:
    project = make_project(tmp_path)
    assert stop(project) == (0, "", "")
    marker = json.loads((private_tempdir / "mbank-hook-s1.json").read_text())
    with Repo(str(project)) as repo:
        assert marker == {"at": 0, "fingerprint": None, "head": repo.head().decode()}


def test_asks_on_a_dirty_tree_the_first_time(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "src.py").write_text("print(1)\n")
    code, out, err = stop(project)
    assert code == 0 and err == ""
    assert asked(out)["reason"] == hook.ASK


def test_the_same_fingerprint_is_not_asked_twice(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "src.py").write_text("print(1)\n")
    assert stop(project, now=1_000_000)[1]
    assert stop(project, now=1_000_000 + 7200) == (0, "", "")


def test_stays_silent_within_the_cooldown_even_after_new_changes(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "src.py").write_text("print(1)\n")
    assert stop(project, now=1_000_000)[1]
    (project / "src.py").write_text("print(2)\n")
    assert stop(project, now=1_000_000 + 29 * 60) == (0, "", "")


def test_asks_again_for_new_changes_after_the_cooldown(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "src.py").write_text("print(1)\n")
    assert stop(project, now=1_000_000)[1]
    (project / "src.py").write_text("print(2)\n")  # same status line, new content
    assert asked(stop(project, now=1_000_000 + 31 * 60)[1])


def test_commits_since_the_baseline_count_as_work_on_a_clean_tree(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert stop(project) == (0, "", "")  # baseline
    (project / "src.py").write_text("print(1)\n")
    commit_all(project, b"work")
    assert asked(stop(project)[1])


def test_a_clean_tree_with_no_new_commit_after_the_baseline_stays_silent(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert stop(project) == (0, "", "")
    assert stop(project) == (0, "", "")


def test_finds_a_bank_named_memory_dash_bank(tmp_path: Path) -> None:
    project = make_project(tmp_path, bank_dir="memory-bank")
    (project / "src.py").write_text("x\n")
    assert asked(stop(project)[1])


def test_finds_the_bank_in_a_parent_of_cwd(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    sub = project / "pkg" / "deep"
    sub.mkdir(parents=True)
    (sub / "mod.py").write_text("x\n")
    assert asked(stop(sub)[1])


def test_root_option_names_the_bank_relative_to_cwd(tmp_path: Path) -> None:
    project = make_project(tmp_path, bank_dir="docs/bank")
    (project / "src.py").write_text("x\n")
    assert stop(project) == (0, "", "")  # not discoverable by name
    assert asked(stop(project, session="s2", root="docs/bank")[1])


def test_invalid_json_is_silent(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert stop(project, raw="{not json") == (0, "", "")


def test_an_internal_error_prints_one_stderr_line_and_exits_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)

    def broken(cwd: str) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(hook, "git_state", broken)
    code, out, err = stop(project)
    assert (code, out) == (0, "")
    assert err.count("\n") == 1 and "boom" in err


def write_notes(project: Path, count: int, *, age_days: float = 0) -> None:
    inbox = project / "memory_bank" / "_inbox"
    inbox.mkdir(exist_ok=True)
    (inbox / "README.md").write_text("# Inbox\n")
    for index in range(count):
        note = inbox / f"note-{index}.md"
        note.write_text("x\n")
        if age_days:
            past = time.time() - age_days * 86400
            os.utime(note, (past, past))


def test_queue_reminder_when_the_inbox_reaches_the_limit(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_notes(project, 8)
    reason = asked(stop(project)[1])["reason"]
    assert reason.startswith(hook.ASK + "\n\n")
    assert "8 captured notes wait" in reason and "review-inbox" in reason


def test_no_queue_reminder_below_the_limit_and_readme_is_not_counted(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_notes(project, 7)
    assert asked(stop(project)[1])["reason"] == hook.ASK


def test_queue_reminder_for_a_stale_note(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_notes(project, 1, age_days=20)
    reason = asked(stop(project)[1])["reason"]
    assert "1 captured note waits" in reason and "(1 older than 14 days)" in reason


def test_environment_overrides_and_upstream_fallbacks(tmp_path: Path) -> None:
    assert hook.settings_from({"MBANK_INBOX_LIMIT": "3"}).inbox_limit == 3
    assert hook.settings_from({"MEMORYBANK_INBOX_LIMIT": "4"}).inbox_limit == 4
    assert (
        hook.settings_from({"MBANK_INBOX_LIMIT": "5", "MEMORYBANK_INBOX_LIMIT": "4"}).inbox_limit
        == 5
    )
    assert hook.settings_from({"MBANK_CAPTURE_COOLDOWN_MIN": "lots"}).cooldown_minutes == 30
    assert hook.settings_from({"MEMORYBANK_INBOX_STALE_DAYS": "2"}).stale_days == 2
    project = make_project(tmp_path)
    write_notes(project, 2)
    reason = asked(stop(project, env={"MBANK_INBOX_LIMIT": "2"})[1])["reason"]
    assert "2 captured notes wait" in reason


def test_cooldown_from_the_environment(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "a.py").write_text("1\n")
    env = {"MEMORYBANK_CAPTURE_COOLDOWN_MIN": "1"}
    assert stop(project, env=env, now=1_000_000)[1]
    (project / "a.py").write_text("2\n")
    assert asked(stop(project, env=env, now=1_000_000 + 61)[1])


def test_a_hostile_session_id_cannot_escape_the_temp_directory(
    tmp_path: Path, private_tempdir: Path
) -> None:
    path = hook.marker_path("../../x", str(private_tempdir))
    assert Path(path).parent == private_tempdir
    assert Path(path).name.startswith("mbank-hook-") and ".." not in Path(path).name
    assert hook.marker_path(None, "/t") == "/t/mbank-hook-unknown.json"
    project = make_project(tmp_path)
    (project / "a.py").write_text("1\n")
    assert asked(stop(project, session="../../x")[1])
    assert [p.name for p in private_tempdir.iterdir()] == [Path(path).name]


def test_real_process_without_git_or_jq_and_without_mcp(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "a.py").write_text("1\n")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    env = {
        "PATH": str(empty_bin),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    code = (
        "import sys\n"
        "from mbank.cli import main\n"
        "status = main(['hook'])\n"
        "assert 'mcp' not in sys.modules, 'the hook imported mcp'\n"
        "sys.exit(status)\n"
    )
    payload = json.dumps({"session_id": "real", "cwd": str(project), "stop_hook_active": False})
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert asked(done.stdout)["reason"] == hook.ASK
