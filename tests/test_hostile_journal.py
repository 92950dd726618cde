"""`.mbank/` under attack (issue 13 items 1–5, 8–10): no accepted write lost, nothing outside the
bank touched, a sentence for every refusal, and reads that write nothing.

A cloned repository's `.mbank/` is hostile input, so the trees here are built by hand: links to
files outside the bank, directories where files belong, WAL entries naming `../../victim.md`,
damaged entries, journals without a final newline. Real processes where the issue says so:
four `mbank serve` processes writing while a thread deletes `.mbank/lock`, a writer that holds
the lock while the lock file is deleted, SIGKILLed writers, an unprivileged user on a read-only
checkout. Every refusal is asserted exactly, inside `assert_unchanged` where nothing may change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import mbank.journal as journal
from mbank.budget import ServerProcess
from mbank.model import RefusalError
from mbank.shipped_files import seed_files

pytestmark = pytest.mark.concurrency

TESTS = Path(__file__).resolve().parent
WORKTREE = TESTS.parent
TODAY = "2026-09-14"
SERVERS = 4
PER_SERVER = 20

READ_ONLY_WRITE = (
    "This bank cannot be written by this user (permission denied: {name}); reads still work, "
    "and nothing was written."
)


def bad_entry(name: str, found: str, wanted: str) -> str:
    return (
        f"{name} is {found}, not {wanted} as mbank keeps it; move it aside (or delete it) and "
        "try again; nothing was written."
    )


def stopped(reason: str) -> str:
    return (
        f"Writes to this bank are stopped until a person decides: {reason}. Once you have "
        "looked, delete .mbank/quarantine/ to allow writes again; nothing was written."
    )


def tree_state(root: Path) -> dict[str, str]:
    """Every path under root with its kind, bits, mtime and bytes' hash (or link target).

    Like conftest's `tree_digest(with_mtimes=True)`, `.mbank/lock` included; defined here
    because `from conftest import` resolves to whichever conftest pytest loaded first.
    """
    found: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(directory, name)
            info = path.lstat()
            entry = f"{stat.filemode(info.st_mode)} {info.st_mtime_ns}"
            if stat.S_ISREG(info.st_mode):
                entry += " " + sha(path.read_bytes())
            elif stat.S_ISLNK(info.st_mode):
                entry += " -> " + os.readlink(path)
            found[path.relative_to(root).as_posix()] = entry
    return found


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def seed(root: Path) -> Path:
    """A bank as `bank_init("ebook_parser")` seeds it, written straight to disk."""
    for path, text in seed_files("ebook_parser", TODAY).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def env() -> dict[str, str]:
    found = {key: value for key, value in os.environ.items() if not key.startswith("MBANK_")}
    found["PYTHONPATH"] = os.pathsep.join(filter(None, [str(WORKTREE), found.get("PYTHONPATH")]))
    return found


@contextmanager
def serving(
    root: Path, *, cwd: Path | str | None = None, python: str = sys.executable
) -> Iterator[ServerProcess]:
    """A real `mbank --root ROOT serve`, its pipes closed once it has ended."""
    server = ServerProcess(
        ["--root", str(root), "serve"], env=env(), cwd=str(cwd or root.parent), python=python
    )
    try:
        with server:
            yield server
    finally:
        for pipe in (server.process.stdout, server.process.stderr):
            if pipe is not None:
                pipe.close()


def create_args(path: str, title: str = "A note") -> list[str]:
    return [
        "create",
        path,
        "--kind",
        "ops",
        "--title",
        title,
        "--purpose",
        "A document a test writes.",
        "--derived",
        "../dna/governance.md",
    ]


def cli(root: Path, *argv: str, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m mbank --root ROOT ARGV…` as a real process (as `user`'s prefix, when given)."""
    return subprocess.run(
        [*(user or []), sys.executable, "-m", "mbank", "--root", str(root), *argv],
        capture_output=True,
        text=True,
        env=env(),
        cwd=str(root.parent),
        timeout=120,
    )


def refused_line(result: subprocess.CompletedProcess[str]) -> str:
    """The CLI's one-line refusal: exit 1, one `mbank: …` line on stderr, no traceback."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0].removeprefix("mbank: ")


def written(root: Path) -> Path:
    """A seeded bank with one real write done (so `.mbank/` exists, as after any use)."""
    seed(root)
    done = cli(root, *create_args("ops/first.md", "First"))
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    return written(tmp_path / "bank")


@pytest.fixture
def victim(tmp_path: Path) -> Iterator[Path]:
    """A file outside the bank that nothing may touch (bytes, bits and mtime checked after)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim.md"
    target.write_text("outside the bank\n", encoding="utf-8")
    (outside / "victim-dir").mkdir()
    before = tree_state(outside)
    yield target
    assert tree_state(outside) == before, "a file outside the bank changed"


# --------------------------------------------------------------------------------------------
# Item 1: mutual exclusion holds whatever happens to .mbank/lock
# --------------------------------------------------------------------------------------------


def _serve_and_create(root: Path, worker: int, results: dict[int, Any]) -> None:
    created: list[str] = []
    busy = 0
    with serving(root) as server:
        server.initialize()
        for number in range(PER_SERVER):
            path = f"ops/s{worker}-{number:02d}.md"
            arguments = {
                "docKind": "ops",
                "path": path,
                "title": f"Server {worker} document {number}",
                "purpose": f"Document {number} written by server {worker}.",
                "derivedFrom": ["../dna/governance.md"],
            }
            while True:
                answer = server.request(
                    "tools/call", {"name": "bank_create", "arguments": arguments}
                )
                text = answer["content"][0]["text"]
                if not answer.get("isError"):
                    created.append(path)
                    break
                assert "Another write to this bank is in progress" in text, text
                busy += 1
        results[worker] = {"created": created, "busy": busy, "stderr": server.stderr}


def test_four_servers_lose_no_write_while_a_thread_deletes_the_lock_every_millisecond(
    bank: Path,
) -> None:
    stop = threading.Event()
    deletions = 0

    def delete_the_lock() -> None:
        nonlocal deletions
        while not stop.is_set():
            try:
                os.unlink(bank / ".mbank" / "lock")
                deletions += 1
            except FileNotFoundError:
                pass
            time.sleep(0.001)

    deleter = threading.Thread(target=delete_the_lock, daemon=True)
    deleter.start()
    results: dict[int, Any] = {}
    servers = [
        threading.Thread(target=_serve_and_create, args=(bank, worker, results))
        for worker in range(SERVERS)
    ]
    try:
        for thread in servers:
            thread.start()
        for thread in servers:
            thread.join(timeout=600)
    finally:
        stop.set()
        deleter.join()
    assert sorted(results) == list(range(SERVERS)), "a server did not finish"
    accepted = [path for result in results.values() for path in result["created"]]
    assert len(accepted) == SERVERS * PER_SERVER
    assert deletions > 0

    index = (bank / "ops" / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((s\d-\d\d\.md)\)", index))
    missing = [path for path in accepted if not (bank / path).is_file()]
    unregistered = [path for path in accepted if path.removeprefix("ops/") not in linked]
    dangling = [name for name in linked if not (bank / "ops" / name).is_file()]
    assert (missing, unregistered, dangling) == ([], [], [])
    records = journal.read_records(str(bank))
    assert len(records) == 1 + SERVERS * PER_SERVER
    assert len({record.id for record in records}) == len(records)
    last_after: dict[str, str | None] = {}
    for record in records:
        for op in record.ops:
            last_after[op.path] = op.after
    for path, after in last_after.items():
        assert sha((bank / path).read_bytes()) == after, path
    assert journal.pending_wal_ids(str(bank)) == []
    assert all("rolled back" not in result["stderr"] for result in results.values())


HOLD_THE_LOCK = """
import sys, time
import mbank.journal as journal
with journal.bank_lock(sys.argv[1], "holder"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_writer_holding_the_lock_keeps_it_when_the_lock_file_is_deleted(
    bank: Path, assert_unchanged: Any
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(bank)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        (bank / ".mbank" / "lock").unlink()  # a person removing a "stale" lock
        assert not journal.lock_is_free(str(bank))
        with (
            assert_unchanged(bank),
            pytest.raises(RefusalError) as caught,
            journal.bank_lock(str(bank), "second", timeout=0.3),
        ):
            pass  # pragma: no cover - the lock must stay held
        assert caught.value.refusal.rule == "lock-busy"
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()
    assert journal.lock_is_free(str(bank))


# --------------------------------------------------------------------------------------------
# Item 2: a journal whose last line has no newline
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tail",
    [pytest.param(b"", id="a-whole-record"), pytest.param(b'{"v":1,"id":"2026', id="garbage")],
)
def test_a_journal_without_a_final_newline_does_not_swallow_the_next_record(
    bank: Path, tail: bytes
) -> None:
    journal_file = bank / ".mbank" / "journal.jsonl"
    data = journal_file.read_bytes()
    if tail:
        journal_file.write_bytes(data + tail)
    else:
        journal_file.write_bytes(data.rstrip(b"\n"))  # a hand edit dropped the newline
    first_id = journal.read_records(str(bank))[0].id
    done = cli(bank, *create_args("ops/second.md", "Second"), "--json")
    assert done.returncode == 0, done.stderr
    new_id = json.loads(done.stdout)["journalId"]
    shown = json.loads(cli(bank, "history", "--json").stdout)
    assert [record["id"] for record in shown["records"]] == [new_id, first_id]
    undone = cli(bank, "undo", "--json")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["undone"] == new_id
    assert not (bank / "ops" / "second.md").exists()
    assert (bank / "ops" / "first.md").is_file()


# --------------------------------------------------------------------------------------------
# Item 3: a WAL entry damaged after some of its swaps were applied
# --------------------------------------------------------------------------------------------


def crashed_write(bank: Path, point: str) -> Path:
    """SIGKILL a real `mbank create` at `point`; the WAL entry it leaves behind."""
    crash_env = {**env(), "MBANK_FAULT_INJECTION": "1", "MBANK_FAULT": point}
    killed = subprocess.run(
        [sys.executable, "-m", "mbank", "--root", str(bank), *create_args("ops/torn.md")],
        capture_output=True,
        env=crash_env,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    entries = list((bank / ".mbank" / "wal").glob("*.json"))
    assert len(entries) == 1
    return entries[0]


def bank_files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".mbank" not in path.relative_to(root).parts
    }


def test_a_damaged_entry_whose_ops_still_read_is_rolled_back_from_the_objects(
    bank: Path,
) -> None:
    pre = bank_files(bank)
    entry = crashed_write(bank, "op-2-swapped")  # both files swapped, no record
    data = json.loads(entry.read_bytes())
    for op in data["ops"]:
        op["preimage"] = None  # the pre-images only in objects/ now
    entry.write_bytes(json.dumps(data).encode()[:-1] + b', "tool": ')  # and it no longer parses
    again = cli(bank, *create_args("ops/after.md", "After"))
    assert again.returncode == 0, again.stderr
    assert again.stderr.startswith(
        f"mbank: rolled back an interrupted write from its damaged entry ({data['id']}).\n"
    )
    after = bank_files(bank)
    assert "ops/torn.md" not in after
    assert after["ops/README.md"] != pre["ops/README.md"]  # now with after.md registered
    assert after["ops/README.md"].count(b"torn.md") == 0


def test_a_damaged_entry_with_swaps_it_cannot_name_stops_writes_loudly(
    bank: Path, assert_unchanged: Any
) -> None:
    entry = crashed_write(bank, "op-2-swapped")
    data = entry.read_bytes()
    second_op = data.index(b'{"path":"ops/README.md"')
    entry.write_bytes(data[:second_op] + b"\x00garbage")
    name = entry.name
    reason = (
        f"the write-ahead entry {name} is damaged and may belong to a half-applied write "
        "(ops/torn.md were restored; the files named in its damaged part are unknown)"
    )
    first = cli(bank, *create_args("ops/after.md", "After"))
    assert refused_line(first) == stopped(reason)
    assert not (bank / "ops" / "torn.md").exists() and not (bank / "ops" / "after.md").exists()
    assert sorted(os.listdir(bank / ".mbank" / "quarantine")) == [name, f"{name}.reason"]
    with assert_unchanged(bank):
        assert refused_line(cli(bank, *create_args("ops/after.md", "After"))) == stopped(reason)
        assert cli(bank, "history").stderr == (
            "mbank: writes to this bank are stopped until a person checks .mbank/quarantine/ "
            "(a write-ahead entry recovery could not settle).\n"
        )
    shutil.rmtree(bank / ".mbank" / "quarantine")  # the person decides
    assert cli(bank, *create_args("ops/after.md", "After")).returncode == 0


def test_an_entry_whose_pre_image_is_gone_stops_writes_and_names_the_file(
    bank: Path, assert_unchanged: Any
) -> None:
    entry = crashed_write(bank, "op-2-swapped")
    data = json.loads(entry.read_bytes())
    readme = next(op for op in data["ops"] if op["path"] == "ops/README.md")
    readme["preimage"] = None
    entry.write_text(json.dumps(data), encoding="utf-8")
    shutil.rmtree(bank / ".mbank" / "objects" / readme["before"][:2])
    reason = (
        f"the interrupted write {data['id']} could not be rolled back: the earlier content of "
        "ops/README.md is gone"
    )
    assert refused_line(cli(bank, *create_args("ops/after.md"))) == stopped(reason)
    assert not (bank / "ops" / "torn.md").exists()  # what could be restored was
    with assert_unchanged(bank):
        assert refused_line(cli(bank, *create_args("ops/after.md"))) == stopped(reason)


# --------------------------------------------------------------------------------------------
# Item 4: paths read from .mbank/ are confined like a tool argument
# --------------------------------------------------------------------------------------------


def hostile_entry(bank: Path, victim: Path, **overrides: Any) -> str:
    content = victim.read_bytes()
    entry: dict[str, Any] = {
        "id": "20260914T120501Z-bad001",
        "tool": "bank_create",
        "time": "2026-09-14T12:05:01Z",
        "ops": [
            {
                "path": os.path.relpath(victim, bank),
                "kind": "create",
                "before": None,
                "after": sha(content),
                "preimage": None,
            }
        ],
        "dirs": [os.path.relpath(victim.parent / "victim-dir", bank)],
    }
    entry.update(overrides)
    name = f"{entry['id']}.json"
    (bank / ".mbank" / "wal" / name).write_text(json.dumps(entry), encoding="utf-8")
    return name


@pytest.mark.parametrize("start", ["serve", "write"])
def test_an_entry_naming_paths_outside_the_bank_is_quarantined_never_applied(
    bank: Path, victim: Path, start: str
) -> None:
    name = hostile_entry(bank, victim)
    relative = os.path.relpath(victim, bank)
    if start == "serve":
        before = tree_state(bank)
        with serving(bank) as server:
            server.initialize()
            assert len(server.request("tools/list")["tools"]) > 0
        assert tree_state(bank) == before  # a start writes nothing
    reason = (
        f"the write-ahead entry {name} names what no write makes (Path must stay inside the "
        f"bank: {relative}), so it was not applied"
    )
    assert refused_line(cli(bank, *create_args("ops/after.md"))) == stopped(reason)
    assert victim.is_file() and (victim.parent / "victim-dir").is_dir()


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        (
            ".git/hooks/post-checkout",
            "Path goes through a hidden (dot) name, which the bank does not index: "
            ".git/hooks/post-checkout",
        ),
        ("/etc/passwd", "Path must stay inside the bank: /etc/passwd"),
        ("ops/../../victim.md", "Path must stay inside the bank: ops/../../victim.md"),
        ("ops//x.md", "Path is not in its normal form: ops//x.md"),
    ],
)
def test_an_entry_with_any_path_a_write_could_not_make_is_quarantined(
    bank: Path, victim: Path, path: str, problem: str
) -> None:
    name = hostile_entry(
        bank,
        victim,
        ops=[{"path": path, "kind": "delete", "before": "0" * 64, "after": None, "preimage": ""}],
        dirs=[],
    )
    reason = (
        f"the write-ahead entry {name} names what no write makes ({problem}), so it was not applied"
    )
    assert refused_line(cli(bank, *create_args("ops/after.md"))) == stopped(reason)


def test_undo_of_a_hand_edited_record_never_touches_a_file_outside_the_bank(
    bank: Path, victim: Path, assert_unchanged: Any
) -> None:
    record = journal.read_records(str(bank))[0]
    hostile = journal.record_data(record)
    hostile["id"] = "20260914T130000Z-bad002"
    hostile["ops"] = [
        {
            "path": os.path.relpath(victim, bank),
            "kind": "create",
            "before": None,
            "after": sha(victim.read_bytes()),
        }
    ]
    with (bank / ".mbank" / "journal.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(hostile) + "\n")
    with assert_unchanged(bank):
        assert refused_line(cli(bank, "undo")) == (
            "Cannot undo 20260914T130000Z-bad002: these files changed after it was applied: "
            "../outside/victim.md."
        )


def test_undo_never_removes_a_directory_outside_the_bank_that_a_record_names(
    bank: Path, victim: Path
) -> None:
    journal_file = bank / ".mbank" / "journal.jsonl"
    record = json.loads(journal_file.read_text(encoding="utf-8"))
    record["dirs"] = [os.path.relpath(victim.parent / "victim-dir", bank), "ops/../.."]
    journal_file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    undone = cli(bank, "undo")
    assert undone.returncode == 0, undone.stderr
    assert not (bank / "ops" / "first.md").exists()
    assert (victim.parent / "victim-dir").is_dir()


# --------------------------------------------------------------------------------------------
# Items 5 and 8: links and garbage in .mbank/
# --------------------------------------------------------------------------------------------


def _link(target: Path) -> Any:
    def make(place: Path) -> None:
        if place.is_dir() and not place.is_symlink():
            shutil.rmtree(place)
        elif place.exists() or place.is_symlink():
            place.unlink()
        place.symlink_to(target)

    return make


def _directory(place: Path) -> None:
    if place.is_dir():
        shutil.rmtree(place)
    elif place.exists():
        place.unlink()
    place.mkdir()


def _file(place: Path) -> None:
    if place.is_dir():
        shutil.rmtree(place)
    place.write_text("not what mbank keeps here\n", encoding="utf-8")


GARBAGE = [
    # (name under the bank, what to put there, the name refused, found, wanted)
    ("lock", "link-file", ".mbank/lock", "a symbolic link", "a file"),
    ("journal.jsonl", "link-file", ".mbank/journal.jsonl", "a symbolic link", "a file"),
    ("", "link-dir", ".mbank", "a symbolic link", "a directory"),
    ("wal", "link-dir", ".mbank/wal", "a symbolic link", "a directory"),
    ("objects", "link-dir", ".mbank/objects", "a symbolic link", "a directory"),
    ("lock", "dir", ".mbank/lock", "a directory", "a file"),
    ("journal.jsonl", "dir", ".mbank/journal.jsonl", "a directory", "a file"),
    ("wal", "file", ".mbank/wal", "a file", "a directory"),
    ("objects", "file", ".mbank/objects", "a file", "a directory"),
    ("", "file", ".mbank", "a file", "a directory"),
]


@pytest.mark.parametrize(("where", "what", "name", "found", "wanted"), GARBAGE)
def test_garbage_in_mbank_is_refused_with_a_sentence_and_nothing_outside_is_touched(
    bank: Path,
    victim: Path,
    assert_unchanged: Any,
    where: str,
    what: str,
    name: str,
    found: str,
    wanted: str,
) -> None:
    place = bank / ".mbank" / where if where else bank / ".mbank"
    make = {
        "link-file": _link(victim),
        "link-dir": _link(victim.parent / "victim-dir"),
        "dir": _directory,
        "file": _file,
    }[what]
    make(place)
    with assert_unchanged(bank):
        assert refused_line(cli(bank, *create_args("ops/after.md"))) == bad_entry(
            name, found, wanted
        )
        history = cli(bank, "history")
        assert history.returncode == 0 and "Traceback" not in history.stderr
        with serving(bank) as server:
            server.initialize()
            answer = server.request(
                "tools/call",
                {
                    "name": "bank_create",
                    "arguments": {
                        "docKind": "ops",
                        "path": "ops/mcp.md",
                        "title": "Mcp",
                        "purpose": "A document a test writes.",
                        "derivedFrom": ["../dna/governance.md"],
                    },
                },
            )
        assert answer.get("isError") and answer["content"][0]["text"].endswith(
            bad_entry(name, found, wanted)
        )
    assert os.listdir(victim.parent / "victim-dir") == []


def test_a_wal_entry_that_is_a_directory_does_not_stop_serve_and_stops_writes_with_a_sentence(
    bank: Path, assert_unchanged: Any
) -> None:
    name = "20260914T120501Z-d1r000.json"
    (bank / ".mbank" / "wal" / name).mkdir()
    with assert_unchanged(bank):
        with serving(bank) as server:
            server.initialize()
            assert len(server.request("tools/list")["tools"]) > 0
        assert cli(bank, "history").returncode == 0
    reason = f"the write-ahead entry {name} is a directory, not a file"
    assert refused_line(cli(bank, *create_args("ops/after.md"))) == stopped(reason)
    assert (bank / ".mbank" / "quarantine" / name).is_dir()


def test_a_dangling_mbank_link_is_refused_and_nothing_is_created_at_its_target(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = seed(tmp_path / "bank")
    target = tmp_path / "elsewhere"
    (root / ".mbank").symlink_to(target)
    with assert_unchanged(root):
        assert refused_line(cli(root, *create_args("ops/after.md"))) == bad_entry(
            ".mbank", "a symbolic link", "a directory"
        )
    assert not target.exists()


# --------------------------------------------------------------------------------------------
# Item 9: a read-only checkout, as an unprivileged user
# --------------------------------------------------------------------------------------------


def unprivileged() -> list[str]:
    """The prefix that runs a command as an unprivileged user here, or skip with the reason."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is missing: no unprivileged user to run as")
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import mbank.cli"],
        capture_output=True,
        env=env(),
        cwd="/",
        timeout=60,
    )
    if probe.returncode != 0:
        pytest.skip(f"the user nobody cannot run this Python: {probe.stderr[-200:]!r}")
    return prefix


@pytest.fixture
def read_only_place() -> Iterator[Path]:
    """A directory every user can enter (pytest's own temp dirs are private to root)."""
    place = Path(tempfile.mkdtemp(prefix="mbank-read-only-"))
    place.chmod(0o755)
    try:
        yield place
    finally:
        for directory, dirnames, _files in os.walk(place):
            for name in dirnames:
                os.chmod(os.path.join(directory, name), 0o755)
        shutil.rmtree(place)


def make_read_only(root: Path) -> None:
    for directory, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) & ~0o222)
        for name in dirnames:
            os.chmod(os.path.join(directory, name), 0o555)
    root.chmod(0o555)


@pytest.mark.parametrize("used", [True, False], ids=["with-mbank", "never-written"])
def test_a_read_only_checkout_serves_reads_and_refuses_writes_with_a_sentence(
    read_only_place: Path, assert_unchanged: Any, used: bool
) -> None:
    user = unprivileged()
    root = written(read_only_place / "bank") if used else seed(read_only_place / "bank")
    make_read_only(root)
    name = ".mbank/lock" if used else ".mbank"
    with assert_unchanged(root):
        result = cli(root, *create_args("ops/after.md"), user=user)
        assert refused_line(result) == READ_ONLY_WRITE.format(name=name)
        assert cli(root, "history", user=user).returncode == 0
        script = read_only_place / "as-user"
        script.write_text(f'#!/bin/sh\nexec {" ".join(user)} {sys.executable} "$@"\n')
        script.chmod(0o755)
        with serving(root, cwd="/", python=str(script)) as server:
            server.initialize()
            assert len(server.request("tools/list")["tools"]) > 0
            journal_text = server.request("resources/read", {"uri": "memorybank://journal"})
            answer = server.request(
                "tools/call",
                {
                    "name": "bank_create",
                    "arguments": {
                        "docKind": "ops",
                        "path": "ops/mcp.md",
                        "title": "Mcp",
                        "purpose": "A document a test writes.",
                        "derivedFrom": ["../dna/governance.md"],
                    },
                },
            )
        assert "Traceback" not in server.stderr, server.stderr
        script.unlink()
    assert journal_text["contents"]
    assert answer.get("isError")
    assert answer["content"][0]["text"].endswith(READ_ONLY_WRITE.format(name=name))


# --------------------------------------------------------------------------------------------
# Item 10: reads write nothing — no lock, no recovery at a server start or in surface-cost
# --------------------------------------------------------------------------------------------


def test_a_server_start_and_surface_cost_leave_a_pending_entry_and_the_lock_alone(
    bank: Path,
) -> None:
    crashed_write(bank, "op-1-swapped")
    (bank / ".mbank" / "lock").write_text("12345 someone\n", encoding="utf-8")
    before = tree_state(bank)
    lock_before = (bank / ".mbank" / "lock").read_bytes()
    with serving(bank) as server:
        server.initialize()
        server.request("tools/list")
        server.request("resources/read", {"uri": "memorybank://journal"})
    assert "a write was interrupted" in server.stderr
    cost = cli(bank, "surface-cost")
    assert cost.returncode == 0, cost.stderr
    assert tree_state(bank) == before
    assert (bank / ".mbank" / "lock").read_bytes() == lock_before
    # The first write rolls it back.
    done = cli(bank, *create_args("ops/after.md"))
    assert done.returncode == 0 and "rolled back an interrupted write" in done.stderr
    assert not (bank / "ops" / "torn.md").exists()
