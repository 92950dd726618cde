"""`.mbank/` under attack, counted (issue 13's opening table, for the journal's items).

    python -m bench.hostile_mbank                      # this checkout
    python -m bench.hostile_mbank --source DIR         # another checkout of mbank (before/after)
    python -m bench.hostile_mbank --rounds 3 --json out.json

Every case builds a fresh seeded bank with one real write, makes its `.mbank/` hostile by
hand (links to a file outside the bank, directories where files belong, WAL entries naming
`../../victim.md`, damaged entries, journals without a final newline, a read-only checkout),
then probes it with real processes: a CLI write, a CLI read, a server start. Counted per
family: cases tried, clean refusals (exit 1 and one line on stderr), crashes (a traceback, or
a server that does not answer), bytes lost (accepted writes that end up missing, unregistered
or out of `history`; torn banks left without a word), outside files touched (bytes, bits or
mtime of the files beside the bank), reads that wrote (a server start, `history` or
`surface-cost` that changed anything under the bank, `.mbank/lock` included). Benchmarks
never assert; this prints the table and the machine load beside it.
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mbank.budget import ServerProcess

TODAY = "2026-09-14"


@dataclass
class Tally:
    """One family's counts."""

    cases: int = 0
    clean_refusals: int = 0
    crashes: int = 0
    bytes_lost: int = 0
    outside_touched: int = 0
    reads_wrote: int = 0
    notes: list[str] = field(default_factory=list)


class Probe:
    """Runs mbank from `source` as real processes."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MBANK_")}
        self.env["PYTHONPATH"] = str(source)

    def cli(
        self, root: Path, *argv: str, env: dict[str, str] | None = None, user: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*user, sys.executable, "-m", "mbank", "--root", str(root), *argv],
            capture_output=True,
            text=True,
            env=env or self.env,
            cwd=str(root.parent),
            timeout=120,
        )

    def server(self, root: Path, user: Sequence[str] = ()) -> ServerProcess:
        """A real `mbank --root ROOT serve` (as `user`'s prefix, when given)."""
        python = sys.executable
        if user:
            wrapper = Path(tempfile.mkdtemp()) / "as-user"
            wrapper.write_text(f'#!/bin/sh\nexec {" ".join(user)} {sys.executable} "$@"\n')
            wrapper.chmod(0o755)
            wrapper.parent.chmod(0o755)
            python = str(wrapper)
        return ServerProcess(
            ["--root", str(root), "serve"], env=self.env, cwd=str(root.parent), python=python
        )

    def serve_answers(self, root: Path, user: Sequence[str] = ()) -> bool:
        """A server start that answers `initialize` and `tools/list`, with no traceback."""
        try:
            with self.server(root, user) as server:
                server.initialize()
                server.request("tools/list")
        except (RuntimeError, TimeoutError):
            return False
        return "Traceback" not in server.stderr


def create_args(path: str) -> list[str]:
    return [
        "create",
        path,
        "--kind",
        "ops",
        "--title",
        "A note",
        "--purpose",
        "A document the benchmark writes.",
        "--derived",
        "../dna/governance.md",
    ]


def digest(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    if not root.exists():
        return found
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(directory, name)
            info = path.lstat()
            entry = f"{stat.S_IMODE(info.st_mode):o} {info.st_mtime_ns}"
            if stat.S_ISREG(info.st_mode):
                entry += " " + hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                entry += " -> " + os.readlink(path)
            found[path.relative_to(root).as_posix()] = entry
    return found


def seed(root: Path, probe: Probe) -> Path:
    from mbank.shipped_files import seed_files

    for path, text in seed_files("ebook_parser", TODAY).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    done = probe.cli(root, *create_args("ops/first.md"))
    assert done.returncode == 0, done.stderr
    return root


def refused_cleanly(result: subprocess.CompletedProcess[str]) -> bool:
    return (
        result.returncode == 1
        and "Traceback" not in result.stderr
        and len(result.stderr.strip().splitlines()) == 1
    )


def crashed(result: subprocess.CompletedProcess[str]) -> bool:
    return "Traceback" in result.stderr or result.returncode not in (0, 1)


# --------------------------------------------------------------------------------------------
# Hostile trees
# --------------------------------------------------------------------------------------------


def _replace(place: Path) -> None:
    if place.is_symlink() or place.is_file():
        place.unlink()
    elif place.is_dir():
        shutil.rmtree(place)


def tree_cases(outside: Path) -> dict[str, Callable[[Path], None]]:
    victim, victim_dir = outside / "victim.md", outside / "victim-dir"

    def link(name: str, target: Path) -> Callable[[Path], None]:
        def make(bank: Path) -> None:
            place = bank / ".mbank" / name if name else bank / ".mbank"
            _replace(place)
            place.symlink_to(target)

        return make

    def kind(name: str, directory: bool) -> Callable[[Path], None]:
        def make(bank: Path) -> None:
            place = bank / ".mbank" / name if name else bank / ".mbank"
            _replace(place)
            if directory:
                place.mkdir()
            else:
                place.write_text("garbage\n")

        return make

    def entry_dir(bank: Path) -> None:
        (bank / ".mbank" / "wal" / "20260914T120501Z-d1r000.json").mkdir()

    return {
        "lock -> outside file": link("lock", victim),
        "journal.jsonl -> outside file": link("journal.jsonl", victim),
        ".mbank -> outside dir": link("", victim_dir),
        "wal -> outside dir": link("wal", victim_dir),
        "objects -> outside dir": link("objects", victim_dir),
        "lock is a directory": kind("lock", True),
        "journal.jsonl is a directory": kind("journal.jsonl", True),
        "wal is a file": kind("wal", False),
        "objects is a file": kind("objects", False),
        "a WAL entry is a directory": entry_dir,
    }


def hostile_wal_cases(outside: Path) -> dict[str, Callable[[Path], None]]:
    victim = outside / "victim.md"

    def entry(path_of: Callable[[Path], str], kind: str, dirs: bool) -> Callable[[Path], None]:
        def make(bank: Path) -> None:
            content = victim.read_bytes()
            digest_ = hashlib.sha256(content).hexdigest()
            op = {
                "path": path_of(bank),
                "kind": kind,
                "before": None if kind == "create" else hashlib.sha256(b"x").hexdigest(),
                "after": digest_ if kind == "create" else None,
                "preimage": None if kind == "create" else "eA==",
            }
            data = {
                "id": "20260914T120501Z-bad001",
                "tool": "bank_create",
                "time": "2026-09-14T12:05:01Z",
                "ops": [op],
                "dirs": [os.path.relpath(outside / "victim-dir", bank)] if dirs else [],
            }
            (bank / ".mbank" / "wal" / "20260914T120501Z-bad001.json").write_text(json.dumps(data))

        return make

    def hostile_record(bank: Path) -> None:
        line = json.loads((bank / ".mbank" / "journal.jsonl").read_text().splitlines()[0])
        line["id"] = "20260914T130000Z-bad002"
        line["ops"] = [
            {
                "path": os.path.relpath(victim, bank),
                "kind": "create",
                "before": None,
                "after": hashlib.sha256(victim.read_bytes()).hexdigest(),
            }
        ]
        with (bank / ".mbank" / "journal.jsonl").open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    return {
        "../victim create + ../victim-dir": entry(
            lambda b: os.path.relpath(victim, b), "create", True
        ),
        "absolute path to victim": entry(lambda b: str(victim), "create", False),
        "ops/../../victim": entry(
            lambda b: "ops/../" + os.path.relpath(victim, b), "create", False
        ),
        ".git/hooks/post-checkout restore": entry(
            lambda b: ".git/hooks/post-checkout", "delete", False
        ),
        "undo of a record naming ../victim": hostile_record,
    }


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------


def family_trees(
    probe: Probe, work: Path, cases: dict[str, Callable[[Path], None]], tally: Tally
) -> None:
    for name in cases:
        place = Path(tempfile.mkdtemp(dir=work))
        outside = place / "outside"
        outside.mkdir()
        (outside / "victim.md").write_text("outside the bank\n")
        (outside / "victim-dir").mkdir()
        bank = seed(place / "bank", probe)
        for case_name, case in {**tree_cases(outside), **hostile_wal_cases(outside)}.items():
            if case_name == name:
                case(bank)
        before_outside = digest(outside)
        tally.cases += 1
        before = digest(bank)
        read = probe.cli(bank, "history")
        served = probe.serve_answers(bank)
        if digest(bank) != before:
            tally.reads_wrote += 1
            tally.notes.append(f"{name}: a read or a start wrote")
        write = (
            probe.cli(bank, "undo")
            if name.startswith("undo")
            else probe.cli(bank, *create_args("ops/after.md"))
        )
        if crashed(write) or crashed(read) or not served:
            tally.crashes += 1
            tally.notes.append(
                f"{name}: crash ({(write.stderr or read.stderr).strip().splitlines()[-1:]})"
            )
        elif refused_cleanly(write):
            tally.clean_refusals += 1
        else:
            tally.notes.append(f"{name}: accepted ({write.returncode})")
        if digest(outside) != before_outside:
            tally.outside_touched += 1
            tally.notes.append(f"{name}: touched a file outside the bank")


def family_lock_deletion(
    probe: Probe, work: Path, tally: Tally, servers: int = 4, per: int = 20
) -> None:
    bank = seed(Path(tempfile.mkdtemp(dir=work)) / "bank", probe)
    stop = threading.Event()

    def delete() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.unlink(bank / ".mbank" / "lock")
            time.sleep(0.001)

    accepted: list[str] = []
    refused: list[str] = []
    crashes: list[str] = []

    def serve(worker: int) -> None:
        with probe.server(bank) as server:
            server.initialize()
            for number in range(per):
                arguments = {
                    "docKind": "ops",
                    "path": f"ops/s{worker}-{number:02d}.md",
                    "title": f"S {worker} {number}",
                    "purpose": "A document the benchmark writes.",
                    "derivedFrom": ["../dna/governance.md"],
                }
                while True:
                    answer = server.request(
                        "tools/call", {"name": "bank_create", "arguments": arguments}
                    )
                    text = answer["content"][0]["text"]
                    if not answer.get("isError"):
                        accepted.append(arguments["path"])
                        break
                    if "Another write to this bank is in progress" not in text:
                        refused.append(text)
                        break
        if "Traceback" in server.stderr:
            crashes.append(server.stderr)

    deleter = threading.Thread(target=delete, daemon=True)
    deleter.start()
    threads = [threading.Thread(target=serve, args=(worker,)) for worker in range(servers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    deleter.join()
    index = (bank / "ops" / "README.md").read_text()
    linked = set(re.findall(r"\]\((s\d-\d\d\.md)\)", index))
    history = probe.cli(bank, "history", "--json", "--limit", "1000").stdout
    in_history = set(re.findall(r'"path": "(ops/s\d-\d\d\.md)"', history))
    lost = [
        path
        for path in accepted
        if not (bank / path).is_file() or path[4:] not in linked or path not in in_history
    ]
    dangling = [name for name in linked if not (bank / "ops" / name).is_file()]
    tally.cases += servers * per
    tally.crashes += len(crashes)
    tally.bytes_lost += len(lost) + len(dangling)
    tally.notes.append(
        f"{len(accepted)} accepted, {len(refused)} refused, {len(lost)} lost, "
        f"{len(dangling)} dangling index lines"
    )


def family_journal_tail(probe: Probe, work: Path, tally: Tally) -> None:
    for tail in (b"", b'{"v":1,"id":"2026'):
        bank = seed(Path(tempfile.mkdtemp(dir=work)) / "bank", probe)
        path = bank / ".mbank" / "journal.jsonl"
        data = path.read_bytes()
        path.write_bytes(data + tail if tail else data.rstrip(b"\n"))
        tally.cases += 1
        done = probe.cli(bank, *create_args("ops/second.md"), "--json")
        if crashed(done):
            tally.crashes += 1
            continue
        new_id = json.loads(done.stdout)["journalId"]
        shown = json.loads(probe.cli(bank, "history", "--json").stdout)["records"]
        undone = probe.cli(bank, "undo", "--json")
        ok = (
            bool(shown)
            and shown[0]["id"] == new_id
            and undone.returncode == 0
            and (json.loads(undone.stdout)["undone"] == new_id)
        )
        if not ok:
            tally.bytes_lost += 1
            tally.notes.append(f"tail {tail!r}: the record was swallowed")


def _crash(probe: Probe, bank: Path, point: str) -> Path:
    env = {**probe.env, "MBANK_FAULT_INJECTION": "1", "MBANK_FAULT": point}
    killed = probe.cli(bank, *create_args("ops/torn.md"), env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    return next((bank / ".mbank" / "wal").glob("*.json"))


def family_damaged_wal(probe: Probe, work: Path, tally: Tally) -> None:
    def readable(entry: Path) -> None:
        data = json.loads(entry.read_bytes())
        for op in data["ops"]:
            op["preimage"] = None
        entry.write_bytes(json.dumps(data).encode()[:-1] + b', "tool": ')

    def middle(entry: Path) -> None:
        data = entry.read_bytes()
        entry.write_bytes(data[: data.index(b'{"path":"ops/README.md"')] + b"\x00")

    def gone(entry: Path) -> None:
        data = json.loads(entry.read_bytes())
        readme = next(op for op in data["ops"] if op["path"] == "ops/README.md")
        readme["preimage"] = None
        entry.write_text(json.dumps(data))
        shutil.rmtree(entry.parent.parent / "objects" / readme["before"][:2])

    for damage in (readable, middle, gone):
        bank = seed(Path(tempfile.mkdtemp(dir=work)) / "bank", probe)
        damage(_crash(probe, bank, "op-2-swapped"))
        tally.cases += 1
        done = probe.cli(bank, *create_args("ops/after.md"))
        torn = (bank / "ops" / "torn.md").exists() or "torn.md" in (
            bank / "ops" / "README.md"
        ).read_text()
        if crashed(done):
            tally.crashes += 1
        elif refused_cleanly(done):
            tally.clean_refusals += 1
        elif torn:
            tally.bytes_lost += 1
            tally.notes.append(f"{damage.__name__}: torn bank, no message")


def family_read_only(probe: Probe, work: Path, tally: Tally) -> None:
    user: list[str] = []
    if os.geteuid() == 0:
        user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        if (
            shutil.which("setpriv") is None
            or probe.cli(Path("/"), "--help", user=user).returncode != 0
        ):
            tally.notes.append("skipped: no unprivileged user can run this Python")
            return
    for used in (True, False):
        place = Path(tempfile.mkdtemp(dir=work))
        place.chmod(0o755)
        bank = seed(place / "bank", probe)
        if not used:
            shutil.rmtree(bank / ".mbank")
        for directory, dirnames, filenames in os.walk(bank, topdown=False):
            for name in filenames:
                os.chmod(os.path.join(directory, name), 0o444)
            for name in dirnames:
                os.chmod(os.path.join(directory, name), 0o555)
        bank.chmod(0o555)
        tally.cases += 1
        served = probe.serve_answers(bank, user)
        done = probe.cli(bank, *create_args("ops/after.md"), user=user)
        if not served or crashed(done):
            tally.crashes += 1
            tally.notes.append(
                f"read-only ({'used' if used else 'fresh'}): serve {served}, "
                f"write {done.stderr.strip()[-120:]}"
            )
        elif refused_cleanly(done):
            tally.clean_refusals += 1
        for directory, dirnames, _ in os.walk(place):
            for name in dirnames:
                os.chmod(os.path.join(directory, name), 0o755)


def family_reads_write(probe: Probe, work: Path, tally: Tally) -> None:
    for read in ("serve", "surface-cost"):
        bank = seed(Path(tempfile.mkdtemp(dir=work)) / "bank", probe)
        _crash(probe, bank, "op-1-swapped")
        before = digest(bank)
        tally.cases += 1
        if read == "serve":
            probe.serve_answers(bank)
        else:
            probe.cli(bank, "surface-cost")
        if digest(bank) != before:
            tally.reads_wrote += 1
            tally.notes.append(f"{read}: wrote under the bank")


def run(source: Path, rounds: int) -> dict[str, Tally]:
    probe = Probe(source)
    tallies: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory(prefix="mbank-hostile-") as scratch:
        work = Path(scratch)
        work.chmod(0o755)
        for _ in range(rounds):
            family_lock_deletion(
                probe, work, tallies.setdefault("1 lock deleted under 4 servers", Tally())
            )
        family_journal_tail(
            probe, work, tallies.setdefault("2 journal without final newline", Tally())
        )
        family_damaged_wal(
            probe, work, tallies.setdefault("3 damaged WAL entry after swaps", Tally())
        )
        outside = work / "names"
        family_trees(
            probe,
            work,
            hostile_wal_cases(outside),
            tallies.setdefault("4 paths outside in .mbank/", Tally()),
        )
        trees = tree_cases(outside)
        family_trees(
            probe,
            work,
            {k: v for k, v in trees.items() if "->" in k},
            tallies.setdefault("5 links in .mbank/", Tally()),
        )
        family_trees(
            probe,
            work,
            {k: v for k, v in trees.items() if "->" not in k},
            tallies.setdefault("8 garbage in .mbank/", Tally()),
        )
        family_read_only(probe, work, tallies.setdefault("9 read-only checkout (nobody)", Tally()))
        family_reads_write(probe, work, tallies.setdefault("10 reads write", Tally()))
    return tallies


def markdown(tallies: dict[str, Tally], label: str) -> str:
    load = os.getloadavg()
    lines = [
        f"`.mbank/` under attack — {label}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "",
        "| item | cases | clean refusals | crashes | bytes lost | outside touched | reads wrote |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, tally in tallies.items():
        lines.append(
            f"| {name} | {tally.cases} | {tally.clean_refusals} | {tally.crashes} | "
            f"{tally.bytes_lost} | {tally.outside_touched} | {tally.reads_wrote} |"
        )
    lines.append("")
    for name, tally in tallies.items():
        for note in tally.notes:
            lines.append(f"- {name}: {note}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile_mbank")
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--rounds", type=int, default=1, help="lock-deletion runs")
    parser.add_argument("--json", type=Path, help="also write the counts here")
    args = parser.parse_args(argv)
    tallies = run(args.source.resolve(), args.rounds)
    sys.stdout.write(markdown(tallies, str(args.source)))
    if args.json is not None:
        args.json.write_text(json.dumps({k: asdict(v) for k, v in tallies.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
