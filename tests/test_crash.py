"""Crash injection at every operation boundary (spec 07 §4.1).

Each multi-file write runs in a subprocess started with `MBANK_FAULT_INJECTION=1` and
`MBANK_FAULT=<point>`, which SIGKILLs itself at that boundary. A fresh process then recovers
(a harmless real write, which recovers first under the lock; or the server-start recovery),
and the bank must equal the pre-state byte for byte — same paths, bytes and permission bits,
directories the write created gone — up to `journal-partial`, and the uncrashed post-state
from `journal-appended` on (the record was in the journal, so the write had finished).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from planners import (
    Clock,
    Ids,
    no_findings,
    plan_create_registered,
    plan_move,
    plan_new_section,
    small_bank,
    stand_in_findings,
    stand_in_findings_for,
    tree_bytes,
)

import mbank.journal as journal
from mbank.snapshot import Bank
from mbank.writes import execute, run_undo

pytestmark = pytest.mark.crash

TESTS = Path(__file__).resolve().parent

SCENARIOS: dict[str, dict[str, Any]] = {
    "create-registered": {
        "tool": "bank_create",
        "planner": "plan_create_registered",
        "arguments": {"path": "domain/pricing.md", "index": "domain/README.md"},
        "ops": 2,
    },
    "create-in-new-section": {
        "tool": "bank_create",
        "planner": "plan_new_section",
        "arguments": {"path": "epics/EP-01/charter.md"},
        "ops": 3,
    },
    "promote": {
        "tool": "bank_promote",
        "planner": "plan_move",
        "arguments": {"from": "_inbox/n.md", "to": "domain/terms.md", "index": "domain/README.md"},
        "ops": 3,
    },
    "undo-of-a-promote": {"tool": "undo", "planner": "undo", "arguments": {}, "ops": 3},
    # The undo removes the two directories the create opened once they are empty (after
    # op 3): a crash from then on must bring them back with the files.
    "undo-of-a-new-section": {"tool": "undo", "planner": "undo", "arguments": {}, "ops": 3},
}

PLANNERS = {
    "plan_create_registered": plan_create_registered,
    "plan_new_section": plan_new_section,
    "plan_move": plan_move,
}

SCRIPT = """
import json, sys
import planners
from mbank.snapshot import Bank
from mbank.writes import execute, run_undo

root, tool, planner, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
bank = Bank(root)
common = dict(clock=planners.Clock(), make_id=planners.Ids("c"),
              findings_for=planners.stand_in_findings_for)
if planner == "undo":
    run_undo(bank, **common)
else:
    execute(bank, tool, arguments, getattr(planners, planner), dry_run=False, **common)
"""

RECOVER_BY_WRITE = """
import sys
import planners
from mbank.snapshot import Bank
from mbank.writes import execute
execute(Bank(sys.argv[1]), "bank_set_status", {}, planners.plan_nothing, dry_run=False,
        findings_for=planners.no_findings)
"""

RECOVER_AT_START = """
import sys
from mbank.journal import recover_at_start
recover_at_start(sys.argv[1])
"""


def points(ops: int) -> list[str]:
    """Every boundary of a plan with `ops` operations, in apply order."""
    return [
        "wal-written",
        "wal-synced",
        *(
            f"op-{i}-{stage}"
            for i in range(1, ops + 1)
            for stage in ("temp", "swapped", "dirsynced")
        ),
        "journal-partial",
        "journal-appended",
        "wal-removed",
    ]


def cases() -> list[tuple[str, str]]:
    return [(name, point) for name, spec in SCENARIOS.items() for point in points(spec["ops"])]


def run_python(
    script: str, *args: str, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MBANK_FAULT")}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if fault is not None:
        env["MBANK_FAULT_INJECTION"] = "1"
        env["MBANK_FAULT"] = fault
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def prepare(root: Path, scenario: str) -> None:
    """The bank before the write under test (for undo: after a promote)."""
    small_bank(root)
    (root / "_inbox").mkdir()
    (root / "_inbox" / "n.md").write_text(
        "---\ntitle: Note\ndoc_kind: domain\npurpose: A note.\nstatus: draft\n---\n# Note\n",
        encoding="utf-8",
    )
    (root / "domain" / "README.md").chmod(0o640)
    if scenario == "undo-of-a-new-section":
        spec = SCENARIOS["create-in-new-section"]
        execute(
            Bank(root),
            spec["tool"],
            spec["arguments"],
            plan_new_section,
            dry_run=False,
            clock=Clock(),
            make_id=Ids("p"),
            findings_for=stand_in_findings_for,
        )
        (root / "epics").chmod(0o750)
    if scenario == "undo-of-a-promote":
        spec = SCENARIOS["promote"]
        execute(
            Bank(root),
            spec["tool"],
            spec["arguments"],
            plan_move,
            dry_run=False,
            clock=Clock(),
            make_id=Ids("p"),
            findings_for=stand_in_findings_for,
        )


def run_uncrashed(root: Path, scenario: str) -> None:
    spec = SCENARIOS[scenario]
    common: dict[str, Any] = {
        "clock": Clock(),
        "make_id": Ids("c"),
        "findings_for": stand_in_findings_for,
    }
    if spec["planner"] == "undo":
        run_undo(Bank(root), **common)
    else:
        execute(
            Bank(root),
            spec["tool"],
            spec["arguments"],
            PLANNERS[spec["planner"]],
            dry_run=False,
            **common,
        )


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Per scenario: the pre-state, the uncrashed post-state, their journals and findings."""
    found: dict[str, dict[str, Any]] = {}
    for scenario in SCENARIOS:
        root = tmp_path_factory.mktemp(scenario) / "bank"
        prepare(root, scenario)
        pre = tree_bytes(root)
        pre_journal = journal.read_records(str(root))
        pre_findings = stand_in_findings(Bank(root).refresh())
        run_uncrashed(root, scenario)
        if scenario == "undo-of-a-new-section":
            assert not (root / "epics").exists()  # the uncrashed undo pruned both directories
        found[scenario] = {
            "pre": pre,
            "pre_records": len(pre_journal),
            "pre_findings": pre_findings,
            "post": tree_bytes(root),
            "post_records": [journal.record_data(r) for r in journal.read_records(str(root))],
            "post_findings": stand_in_findings(Bank(root).refresh()),
        }
    return found


def temp_files(root: Path) -> list[str]:
    return [
        str(p) for p in root.rglob("*") if p.name.startswith(".mbank-") and p.name.endswith(".tmp")
    ]


@pytest.mark.parametrize(("scenario", "point"), cases())
def test_a_crash_at_any_boundary_leaves_the_pre_state_or_the_finished_write(
    tmp_path: Path, references: dict[str, dict[str, Any]], scenario: str, point: str
) -> None:
    reference = references[scenario]
    spec = SCENARIOS[scenario]
    root = tmp_path / "bank"
    prepare(root, scenario)
    assert tree_bytes(root) == reference["pre"]

    import json

    crashed = run_python(
        SCRIPT, str(root), spec["tool"], spec["planner"], json.dumps(spec["arguments"]), fault=point
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr

    # Recovery in a fresh process: by turns the server-start path and a harmless real write.
    recovery = (
        RECOVER_AT_START if sorted(cases()).index((scenario, point)) % 2 else RECOVER_BY_WRITE
    )
    recovered = run_python(recovery, str(root))
    assert recovered.returncode == 0, recovered.stderr

    committed = point in ("journal-appended", "wal-removed")
    expected = reference["post"] if committed else reference["pre"]
    assert tree_bytes(root) == expected
    assert temp_files(root) == []
    assert os.listdir(root / ".mbank" / "wal") == []
    assert journal.lock_is_free(str(root))
    raw = (
        (root / ".mbank" / "journal.jsonl").read_bytes()
        if (root / ".mbank" / "journal.jsonl").exists()
        else b""
    )
    assert raw == b"" or raw.endswith(b"\n")
    records = [journal.record_data(r) for r in journal.read_records(str(root))]
    if committed:
        assert records == reference["post_records"]
        assert stand_in_findings(Bank(root).refresh()) == reference["post_findings"]
    else:
        assert len(records) == reference["pre_records"]
        assert records == reference["post_records"][: reference["pre_records"]]
        assert stand_in_findings(Bank(root).refresh()) == reference["pre_findings"]
        # The same write, re-run without a fault, succeeds and gives the uncrashed post-state.
        run_uncrashed(root, scenario)
        assert tree_bytes(root) == reference["post"]
        assert [journal.record_data(r) for r in journal.read_records(str(root))] == reference[
            "post_records"
        ]


def test_recovery_reports_what_it_rolled_back_on_stderr(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    prepare(root, "promote")
    spec = SCENARIOS["promote"]
    import json

    crashed = run_python(
        SCRIPT,
        str(root),
        spec["tool"],
        spec["planner"],
        json.dumps(spec["arguments"]),
        fault="op-2-swapped",
    )
    assert crashed.returncode == -signal.SIGKILL
    notice = run_python(
        "import sys\nfrom mbank.journal import interrupted_notices\n"
        "print('\\n'.join(interrupted_notices(sys.argv[1])))",
        str(root),
    )
    assert notice.stdout == (
        "mbank: a write was interrupted (20260914T120501Z-c00001); the next write "
        "to this bank rolls it back.\n"
    )
    recovered = run_python(RECOVER_BY_WRITE, str(root))
    assert recovered.stderr == (
        "mbank: rolled back an interrupted write (20260914T120501Z-c00001, bank_promote).\n"
    )


def test_without_the_switch_the_fault_variable_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    prepare(root, "promote")
    spec = SCENARIOS["promote"]
    import json

    env_script = "import os\nos.environ['MBANK_FAULT'] = 'op-1-temp'\n" + SCRIPT
    done = run_python(
        env_script, str(root), spec["tool"], spec["planner"], json.dumps(spec["arguments"])
    )
    assert done.returncode == 0, done.stderr
    assert (root / "domain" / "terms.md").exists()


def test_a_fault_name_without_the_switch_does_nothing_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MBANK_FAULT_INJECTION", raising=False)
    monkeypatch.setenv("MBANK_FAULT", "op-1-temp")
    root = small_bank(tmp_path / "bank")
    outcome = execute(
        Bank(root),
        "bank_create",
        {"path": "domain/x.md", "index": "domain/README.md"},
        plan_create_registered,
        dry_run=False,
        findings_for=no_findings,
    )
    assert outcome.applied
