"""Concurrent writers (spec 07 §4.2): the lock serialises processes; nothing torn or lost."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from planners import (
    no_findings,
    plan_create_registered,
    small_bank,
    stand_in_findings,
)

import mbank.journal as journal
from mbank.model import RefusalError
from mbank.snapshot import Bank
from mbank.writes import execute

pytestmark = pytest.mark.concurrency

TESTS = Path(__file__).resolve().parent
WORKERS = 4
PER_WORKER = 50

WORKER = """
import os, sys, time
import planners
from mbank.model import RefusalError
from mbank.snapshot import Bank
from mbank.writes import execute

root, worker, barrier, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
while not os.path.exists(barrier):
    time.sleep(0.002)
bank = Bank(root)
retries = 0
for number in range(count):
    arguments = {
        "path": f"domain/w{worker}-{number:02d}.md",
        "index": "domain/README.md",
        "title": f"Worker {worker} document {number}",
        "purpose": f"Document {number} written by worker {worker}.",
        "derived": ["rules.md"],
    }
    while True:
        try:
            execute(bank, "bank_create", arguments, planners.plan_create_registered,
                    dry_run=False, findings_for=planners.stand_in_findings_for)
            break
        except RefusalError as refusal:
            if refusal.refusal.rule != "lock-busy":
                raise
            retries += 1
print(retries)
"""


def env() -> dict[str, str]:
    found = {key: value for key, value in os.environ.items() if not key.startswith("MBANK_FAULT")}
    found["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), found.get("PYTHONPATH")]))
    return found


def test_four_processes_writing_fifty_plans_each_lose_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = small_bank(tmp_path / "bank")
    barrier = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), str(n), str(barrier), str(PER_WORKER)],
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    time.sleep(0.5)  # let every worker import and wait at the barrier
    started = time.perf_counter()
    barrier.write_text("go")
    outputs = [worker.communicate(timeout=300) for worker in workers]
    elapsed = time.perf_counter() - started
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    retries = sum(int(out.strip() or 0) for out, _err in outputs)

    expected = {f"domain/w{w}-{n:02d}.md" for w in range(WORKERS) for n in range(PER_WORKER)}
    snapshot = Bank(root).refresh()
    assert expected <= set(snapshot.docs)
    index_text = (root / "domain" / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\((w\d-\d\d\.md)\)", index_text)
    assert sorted(linked) == sorted(path.removeprefix("domain/") for path in expected)
    assert all(snapshot.docs[path].registered_in == ("domain/README.md",) for path in expected)
    assert all(snapshot.docs[path].parse_error is None for path in snapshot.docs)
    assert stand_in_findings(snapshot) == ()

    records = journal.read_records(str(root))
    assert len(records) == WORKERS * PER_WORKER
    assert len({record.id for record in records}) == len(records)
    last_after: dict[str, str | None] = {}
    for record in records:
        for op in record.ops:
            last_after[op.path] = op.after
    for path, after in last_after.items():
        assert hashlib.sha256((root / path).read_bytes()).hexdigest() == after, path
    assert [p for p in root.rglob(".mbank-*.tmp")] == []
    assert os.listdir(root / ".mbank" / "wal") == []
    assert journal.lock_is_free(str(root))
    with capsys.disabled():
        print(f"\n  {WORKERS}x{PER_WORKER} writes in {elapsed:.1f} s, {retries} lock-busy retries")


def test_a_lock_held_past_ten_seconds_refuses_the_writer(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = small_bank(tmp_path / "bank")
    execute(
        Bank(root),
        "bank_create",
        {"path": "domain/first.md", "index": "domain/README.md"},
        plan_create_registered,
        dry_run=False,
        findings_for=no_findings,
    )
    writer = (
        "import sys\nimport planners\nfrom mbank.model import RefusalError\n"
        "from mbank.snapshot import Bank\nfrom mbank.writes import execute\n"
        "try:\n"
        "    execute(Bank(sys.argv[1]), 'bank_create', {'path': 'domain/x.md', "
        "'index': 'domain/README.md'}, planners.plan_create_registered, dry_run=False, "
        "findings_for=planners.no_findings)\n"
        "except RefusalError as refusal:\n"
        "    print(refusal.refusal.rule + ': ' + refusal.refusal.message)\n"
    )
    with journal.bank_lock(str(root), "held from outside"), assert_unchanged(root):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", writer, str(root)],
            env=env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        waited = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "lock-busy: Another write to this bank is in progress (.mbank/lock is held); nothing "
        "was written. Try again.\n"
    )
    assert waited >= 10.0


def test_another_process_changing_a_target_between_check_and_swap_wins(tmp_path: Path) -> None:
    root = small_bank(tmp_path / "bank")
    index = root / "domain" / "README.md"
    other_writer = (
        "import sys\nfrom pathlib import Path\n"
        "p = Path(sys.argv[1])\np.write_bytes(p.read_bytes() + b'- [Theirs](theirs.md)\\n')\n"
    )

    def race(point: str) -> None:
        if point == "op-2-temp":
            subprocess.run([sys.executable, "-c", other_writer, str(index)], check=True)

    with pytest.raises(RefusalError) as caught:
        execute(
            Bank(root),
            "bank_create",
            {"path": "domain/mine.md", "index": "domain/README.md"},
            plan_create_registered,
            dry_run=False,
            findings_for=no_findings,
            fault=race,
        )
    assert caught.value.refusal.rule == "changed-on-disk"
    assert caught.value.refusal.message == (
        "domain/README.md changed on disk by someone else since it was read; nothing was written."
    )
    assert index.read_text(encoding="utf-8").endswith("- [Theirs](theirs.md)\n")
    assert not (root / "domain" / "mine.md").exists()
    assert journal.read_records(str(root)) == []
