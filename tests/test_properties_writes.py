"""Property tests of the writes (spec 07 §4.4; invariants 1–3 of 07 §1.1).

- A state machine: from a bank seeded by `bank_init`, random write intents, valid and invalid
  (create, edit, update_section, rewrite, set_status, set_field, promote, discard, undo; real
  runs and dry runs), governance writes (always refused over MCP, issue 14), list-field writes
  and undo chains (N undos restore the bank as it was N writes ago, byte for byte). After
  every step: a refusal, a dry run or a no-op changed no byte
  (`.mbank/` included); the set of error findings never grows (invariant 2); the bank, built
  only through mbank from zero findings, still has zero findings (invariant 1); the journal
  grew by exactly one record per accepted change, carrying the result's `journalId`; no WAL
  entry, no temporary file is left.
- Invariant 2 on the extended fixture bank, which has errors already: random intents that can
  add errors (broken index entries, second owners, statuses without derivation); every applied
  write leaves the error findings a subset of the ones before; every post-check refusal names
  only errors that the full validation of the virtual result really has and the bank before
  did not.
- The journal: random plans (creates in new and existing directories, replaces, deletes) with an
  exception injected at a random boundary of the apply: the disk equals the pre-state or the
  post-state of the same plan applied without a fault — nothing else.

`os.fsync` is a no-op while these run: they test what the journal and the tools decide, not
the disk's durability (the crash tests of `test_crash.py` do that), and the `ci` profile must
stay near 30 s. Examples per test are scaled down from the profile for the same reason; the
`fuzz` profile runs ten times more.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
import write_calls
from fixture_banks import copy_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from planners import Clock, Ids, no_findings, small_bank, tree_bytes
from seeded_banks import Seeder

import mbank.journal as journal
from mbank.gates.postcheck import identity, warning_text
from mbank.model import AnyFileOp, Finding, Intent, Plan, PlanOutcome, RefusalError
from mbank.plan import create_document, delete_document, document_text, replace_document
from mbank.snapshot import Bank, Snapshot
from mbank.validate import findings, findings_for
from mbank.writes import execute, run_undo

FUZZ = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "fuzz"


def scaled(ci: int) -> int:
    """Examples for an expensive property: `ci` under the ci profile, ten times more in fuzz."""
    return ci * 10 if FUZZ else ci


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda descriptor: None)


# --------------------------------------------------------------------------------------------
# Observing a bank
# --------------------------------------------------------------------------------------------


def tree_digest(root: Path) -> dict[str, str]:
    """Every path under root with its bits and bytes' hash, `.mbank/` included (not the lock's
    content, which each lock holder rewrites)."""
    found: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            entry = f"{stat.S_IMODE(info.st_mode):o}"
            if stat.S_ISREG(info.st_mode) and relative != ".mbank/lock":
                entry += " " + hashlib.sha256(path.read_bytes()).hexdigest()
            found[relative] = entry
    return found


def error_identities(snapshot: Snapshot) -> set[tuple[str, ...]]:
    return {identity(f) for f in findings(snapshot) if f.severity == "error"}


def leftovers(root: Path) -> list[str]:
    """WAL entries and temporary files left behind (there must be none)."""
    found = [f".mbank/wal/{name}" for name in os.listdir(root / ".mbank" / "wal")]
    found += [str(path.relative_to(root)) for path in root.rglob(".mbank-*.tmp")]
    return found


TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "create": write_calls.create,
    "edit": write_calls.edit,
    "update_section": write_calls.update_section,
    "rewrite": write_calls.rewrite,
    "set_status": write_calls.set_status,
    "set_field": write_calls.set_field,
    "promote": write_calls.promote,
    "discard": write_calls.discard,
    "set_list": write_calls.set_field,
}

TEXTS = [
    "Plain words about the parser.",
    "A line with: a colon and #hash",
    "See [the context](../product/context.md) first.",
    "- [Ghost](ghost.md) — nothing is there.",
    "## Inner Heading\n\nMore words.",
    "---\nx: 1\n---\nbody",
    "Кириллица и English words.",
    "emoji 🚀 and a tab\tinside",
    " ",
    "",
]
LIST_FIELDS = ["derived_from", "canonical_for", "must_not_define", "anchors", "tags"]
LIST_VALUES = [
    [],
    ["../product/context.md"],
    ["product/context.md"],
    ["missing.md"],
    ["shared_key"],
    ["src/app.py", "docs"],
    ["../../outside"],
    ['["not", "a", "list"]'],
    [" "],
]
VALUES = ["platform", "a: b", "2026-09-14", "'quoted'", "#hash", "two\nlines", "", "Кириллица"]
FIELDS = ["owner", "title", "purpose", "reviewed_on", "status", "canonical_for", "audience"]
STATUSES = ["draft", "active", "deprecated", "archived", "superseded", "bogus"]


def intent_strategy(
    data: st.DataObject, snapshot: Snapshot, tool: str, serial: int
) -> dict[str, Any]:
    """Arguments for `tool` on this bank, valid or not, drawn from small pools."""
    docs = sorted(snapshot.docs)
    inbox = [path for path in docs if path.startswith("_inbox/")]
    path = data.draw(st.sampled_from(docs), label="path")
    doc = snapshot.docs[path]
    if tool == "create":
        inbox_note = data.draw(st.booleans(), label="inbox")
        target = data.draw(
            st.sampled_from(
                [
                    f"domain/n{serial}.md",
                    f"engineering/e{serial}.md",
                    f"sec{serial}/doc.md",
                    f"epics/EP-{serial:03d}/charter.md",
                    "../outside.md",
                    path,
                ]
            ),
            label="target",
        )
        arguments: dict[str, Any] = {
            "path": posixpath.basename(target) if inbox_note else target,
            "docKind": data.draw(st.sampled_from(["domain", "engineering", "epic", "bogus"])),
            "title": data.draw(st.sampled_from([f"Note {serial}", " ", "Title: with colon"])),
            "purpose": data.draw(st.sampled_from(["Why it exists.", "", "Read when: x"])),
            "status": data.draw(st.sampled_from(["draft", "active", "bogus"])),
        }
        depth = target.count("/")
        derived = data.draw(
            st.sampled_from([[], ["../" * max(depth, 1) + "product/context.md"], ["missing.md"]])
        )
        if derived:
            arguments["derivedFrom"] = derived
        if inbox_note:
            arguments["inbox"] = True
        body = data.draw(st.sampled_from([None, *TEXTS]))
        if body is not None:
            arguments["body"] = body
        return arguments
    if tool == "edit":
        lines = [line for line in snapshot.raw[path].split("\n") if line.strip()][-6:]
        find = data.draw(st.sampled_from([*lines, "zz-not-there-zz"]) if lines else st.just("x"))
        replace = data.draw(st.sampled_from([find + " (edited)", *TEXTS]))
        return {"path": path, "find": find, "replace": replace}
    if tool == "update_section":
        titles = [section.title for section in doc.sections] or ["None"]
        return {
            "path": path,
            "section": data.draw(st.sampled_from([*titles, "Nope"])),
            "content": data.draw(st.sampled_from(TEXTS)),
            "mode": data.draw(st.sampled_from(["replace", "append"])),
        }
    if tool == "rewrite":
        body = data.draw(st.sampled_from(["# Fresh\n\n## Part\n\nNew text.\n", *TEXTS]))
        return {"path": path, "body": body}
    if tool == "set_status":
        arguments = {"path": path, "status": data.draw(st.sampled_from(STATUSES))}
        if data.draw(st.booleans()):
            arguments["releaseCanonical"] = True
        return arguments
    if tool == "set_list":
        value: Any = data.draw(st.sampled_from(LIST_VALUES))
        if data.draw(st.booleans(), label="as JSON"):
            value = json.dumps(value)  # the CLI's VALUE
        return {"path": path, "field": data.draw(st.sampled_from(LIST_FIELDS)), "value": value}
    if tool == "set_field":
        return {
            "path": path,
            "field": data.draw(st.sampled_from(FIELDS)),
            "value": data.draw(st.sampled_from(VALUES)),
        }
    if tool == "promote":
        source = data.draw(st.sampled_from(inbox or [path]), label="source")
        arguments = {
            "path": source,
            "to": data.draw(
                st.sampled_from([f"domain/p{serial}.md", "_inbox/elsewhere.md", "domain"])
            ),
        }
        if data.draw(st.booleans()):
            arguments["derivedFrom"] = ["../product/context.md"]
        return arguments
    assert tool == "discard"
    source = data.draw(st.sampled_from(inbox or [path]), label="source")
    return {"path": source, "reason": data.draw(st.sampled_from(["A duplicate.", " "]))}


# --------------------------------------------------------------------------------------------
# The state machine (invariants 1, 2, 3 and one record per accepted change)
# --------------------------------------------------------------------------------------------


class SeededTemplate:
    """One seeded bank made once; every example starts from a copy of it."""

    path: Path | None = None


class WriteSession(RuleBasedStateMachine):
    """Random writes on a bank seeded by `bank_init` (spec 07 §4.4)."""

    # (tool, outcome) → count over a whole run, to check the run did exercise every tool.
    outcomes: ClassVar[Counter[tuple[str, str]]] = Counter()

    def __init__(self) -> None:
        super().__init__()
        assert SeededTemplate.path is not None
        self.base = Path(tempfile.mkdtemp(prefix="mbank-writes-"))
        self.root = self.base / "bank"
        shutil.copytree(SeededTemplate.path, self.root)
        self.bank = Bank(self.root)
        self.clock = Clock()
        self.ids = Ids("s")
        self.serial = 0
        snapshot = self.bank.refresh()
        self.errors = error_identities(snapshot)
        self.clean = findings(snapshot) == ()
        self.records = len(journal.read_records(str(self.root)))
        self.accepted = 0
        # (journal id, the bank before it) of each applied write an id-less undo may revert,
        # newest last: the undo stack as the test sees it (issue 14)
        self.stack: list[tuple[str, dict[str, Any]]] = []
        # The warnings accepted writes announced (`New warning <rule> on <path>: <message>`).
        self.announced: set[str] = set()

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def engine(self) -> dict[str, Any]:
        return {"clock": self.clock, "make_id": self.ids, "cwd": str(self.base)}

    def attempt(
        self, label: str, call: Callable[[bool], dict[str, Any]], dry_run: bool
    ) -> dict[str, Any] | None:
        """Run one write and check the step's invariants; the result of an applied write."""
        before = tree_digest(self.root)
        before_bytes = tree_bytes(self.root)
        try:
            result = call(dry_run)
        except RefusalError:
            self.outcomes[(label, "refused")] += 1
            assert tree_digest(self.root) == before, "a refusal changed the bank"
            assert len(journal.read_records(str(self.root))) == self.records
            return None
        records = journal.read_records(str(self.root))
        outcome = "dry" if dry_run else "applied" if "journalId" in result else "no-op"
        self.outcomes[(label, outcome)] += 1
        if dry_run or "journalId" not in result:
            assert tree_digest(self.root) == before, "a dry run or a no-op changed the bank"
            assert len(records) == self.records
            return None
        assert len(records) == self.records + 1, "not exactly one record for one change"
        assert records[-1].id == result["journalId"]
        self.records += 1
        self.accepted += 1
        self.announced.update(result.get("warnings", ()))
        if label != "undo":
            self.stack.append((result["journalId"], before_bytes))
        return result

    @initialize()
    def start(self) -> None:
        assert self.clean, "a freshly seeded bank has no findings"

    # Undo, a chain of undos and a governance write are three more "tools" beside the nine,
    # so each is drawn as often as each of them; a dry run is one step in four.
    @rule(
        data=st.data(),
        tool=st.sampled_from([*sorted(TOOLS), "undo", "undo_chain", "governance"]),
        dry_run=st.sampled_from([False, False, False, True]),
    )
    def write(self, data: st.DataObject, tool: str, dry_run: bool) -> None:
        self.serial += 1
        if tool == "undo":
            self.undo(data, dry_run)
            return
        if tool == "undo_chain":
            self.undo_chain(data)
            return
        if tool == "governance":
            self.governance_write(data, dry_run)
            return
        arguments = intent_strategy(data, self.bank.refresh(), tool, self.serial)
        self.attempt(
            tool,
            lambda dry: TOOLS[tool](self.bank, dict(arguments), dry_run=dry, **self.engine()),
            dry_run,
        )

    def undo(self, data: st.DataObject, dry_run: bool) -> None:
        """The newest record, or a named one. The seed's own record (`bank_init`) is never
        named: undoing it removes the bank, and an empty directory is no longer "a bank built
        through mbank" (it answers `no-contract`); the newest record is never the seed, since
        the template adds inbox notes after it."""
        record_id = None
        if data.draw(st.booleans(), label="named"):
            ids = [record.id for record in journal.read_records(str(self.root))][1:]
            record_id = data.draw(st.sampled_from([*ids, "20260914T000000Z-ffffff"]))
        self.undo_once(record_id, dry_run)

    def undo_once(self, record_id: str | None, dry_run: bool) -> None:
        """One undo; an id-less one that applies reverts the top of the stack, byte for byte.
        A named undo may re-apply or revert any write, so the stack is forgotten after it."""
        result = self.attempt(
            "undo",
            lambda dry: run_undo(
                self.bank, record_id=record_id, dry_run=dry, clock=self.clock, make_id=self.ids
            ),
            dry_run,
        )
        if result is None:
            return
        if record_id is not None:
            self.stack.clear()
        elif self.stack:
            undone, before = self.stack.pop()
            assert result["undone"] == undone, "an undo reverted another write than the newest"
            assert tree_bytes(self.root) == before, "an undo did not restore the bank"
            self.outcomes[("undo", "restored")] += 1

    def undo_chain(self, data: st.DataObject) -> None:
        """N id-less undos in a row: each restores the bank as it was before its write."""
        for _ in range(data.draw(st.integers(min_value=1, max_value=4), label="depth")):
            self.serial += 1
            self.undo_once(None, dry_run=False)

    def governance_write(self, data: st.DataObject, dry_run: bool) -> None:
        """A write to dna/ arriving over MCP (the runner's default): always refused, with
        nothing written (issue 14)."""
        self.serial += 1
        snapshot = self.bank.refresh()
        path = data.draw(st.sampled_from(sorted(p for p in snapshot.docs if p.startswith("dna/"))))
        sections = [section.title for section in snapshot.docs[path].sections]
        choices: list[tuple[str, dict[str, Any]]] = [
            ("rewrite", {"path": path, "body": "# Anything\n\nAnything goes.\n"}),
            ("set_field", {"path": path, "field": "purpose", "value": f"Whatever {self.serial}."}),
            ("set_list", {"path": path, "field": "canonical_for", "value": [f"k{self.serial}"]}),
            (
                "create",
                {
                    "path": f"dna/extra-{self.serial}.md",
                    "docKind": "governance",
                    "title": "Extra",
                    "purpose": "More rules.",
                },
            ),
        ]
        if sections:
            content = {"section": sections[0], "content": "Anything.", "mode": "append"}
            choices.append(("update_section", {"path": path, **content}))
        tool, arguments = data.draw(st.sampled_from(choices))
        before = tree_digest(self.root)
        with pytest.raises(RefusalError) as caught:
            TOOLS[tool](self.bank, dict(arguments), dry_run=dry_run, **self.engine())
        assert caught.value.refusal.rule == "governance-protected", caught.value.refusal
        assert tree_digest(self.root) == before
        self.outcomes[("governance", "refused")] += 1

    @invariant()
    def errors_never_grow(self) -> None:
        now = error_identities(self.bank.refresh())
        assert now <= self.errors, f"new errors: {sorted(now - self.errors)}"
        self.errors = now

    @invariant()
    def a_clean_bank_stays_clean(self) -> None:
        # Invariant 1 read with the post-check of 03 §1.5: an accepted write may add a
        # warning (an undeclared status, say), and then says so in its result; nothing else
        # may appear.
        if self.clean:
            unannounced = [
                finding
                for finding in findings(self.bank.refresh())
                if warning_text(finding) not in self.announced
            ]
            assert unannounced == []

    @invariant()
    def nothing_is_left_behind(self) -> None:
        assert leftovers(self.root) == []
        assert journal.lock_is_free(str(self.root))


@pytest.fixture(scope="module")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("seeded") / "bank"
    seeder = Seeder(root)
    seeder.init()
    for number, kind in enumerate(["domain", "engineering", "domain"], start=1):
        seeder.call(
            write_calls.create,
            {
                "path": f"captured-{number}.md",
                "docKind": kind,
                "title": f"Captured {number}",
                "purpose": "A note captured before the session.",
                "inbox": True,
                "body": f"## Fact\n\nFact number {number}.\n",
            },
        )
    assert findings(Bank(root).refresh()) == ()
    SeededTemplate.path = root
    yield root
    SeededTemplate.path = None


def test_random_writes_on_a_seeded_bank_keep_every_invariant(seeded_template: Path) -> None:
    WriteSession.outcomes.clear()
    run_state_machine_as_test(
        WriteSession,
        settings=settings(
            max_examples=scaled(80),
            stateful_step_count=25,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    done = WriteSession.outcomes
    print(sorted(done.items()))
    # The run did real work: every tool was applied at least once, and refused at least once.
    for tool in [*TOOLS, "undo"]:
        assert done[(tool, "applied")] >= 1, (tool, sorted(done.items()))
        assert done[(tool, "refused")] >= 1, (tool, sorted(done.items()))
    assert done[("governance", "refused")] >= 1 and done[("governance", "applied")] == 0
    assert done[("undo", "restored")] >= 1


# --------------------------------------------------------------------------------------------
# Invariant 2 on a bank that has errors already
# --------------------------------------------------------------------------------------------


class Recorder:
    """A `findings_for` that answers as the engine's default and keeps the full findings of
    every snapshot it was asked about (before, then the virtual after)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Finding, ...]] = []

    def __call__(self, snapshot: Snapshot, paths: Sequence[str]) -> tuple[Finding, ...]:
        self.seen.append(findings(snapshot))
        return findings_for(snapshot, paths)


RISKY_TEXTS = [
    "- [Ghost](ghost.md) — a registration of nothing.",
    "| [`Ghost`](ghost.md) | nothing | x |",
    "See [rules](rules.md).",
    "The deployment procedure is: push, then pray.",
    "Plain words.",
]


def risky_intent(
    data: st.DataObject, snapshot: Snapshot, serial: int
) -> tuple[str, dict[str, Any]]:
    """An intent likely to add an error if the gates and the post-check let it through."""
    docs = sorted(snapshot.docs)
    indexes = [path for path in docs if path.endswith("README.md")]
    kind = data.draw(
        st.sampled_from(["index-edit", "index-append", "second-owner", "activate", "any"])
    )
    if kind in ("index-edit", "index-append"):
        path = data.draw(st.sampled_from(indexes))
        doc = snapshot.docs[path]
        if kind == "index-append" and doc.sections:
            return "update_section", {
                "path": path,
                "section": data.draw(st.sampled_from([s.title for s in doc.sections])),
                "content": data.draw(st.sampled_from(RISKY_TEXTS)),
                "mode": "append",
            }
        lines = [line for line in snapshot.raw[path].split("\n") if line.startswith(("-", "|"))]
        find = data.draw(st.sampled_from(lines or ["zz"]))
        return "edit", {
            "path": path,
            "find": find,
            "replace": data.draw(st.sampled_from(RISKY_TEXTS)),
        }
    if kind == "second-owner":
        keys = sorted(snapshot.owners) or ["filter_thresholds"]
        return "create", {
            "path": f"domain/owner{serial}.md",
            "docKind": "domain",
            "title": f"Owner {serial}",
            "purpose": "Claims a key.",
            "derivedFrom": ["rules.md"],
            "canonicalFor": [data.draw(st.sampled_from(keys))],
            "status": "draft",
        }
    if kind == "activate":
        return "set_status", {"path": data.draw(st.sampled_from(docs)), "status": "active"}
    tool = data.draw(st.sampled_from(sorted(TOOLS)))
    return tool, intent_strategy(data, snapshot, tool, serial)


@settings(max_examples=scaled(60), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), steps=st.integers(min_value=1, max_value=4))
def test_no_applied_write_adds_an_error_and_every_post_check_refusal_names_a_new_one(
    data: st.DataObject, steps: int
) -> None:
    base = Path(tempfile.mkdtemp(prefix="mbank-invariant2-"))
    try:
        root = copy_fixture(base / "bank", overlay=True)
        bank = Bank(root)
        engine = {"clock": Clock(), "make_id": Ids(), "cwd": str(base)}
        for serial in range(steps):
            snapshot = bank.refresh()
            before = error_identities(snapshot)
            tool, arguments = risky_intent(data, snapshot, serial)
            recorder = Recorder()
            try:
                result = TOOLS[tool](bank, arguments, findings_for=recorder, **engine)
            except RefusalError as exc:
                if exc.refusal.rule != "postcheck":
                    continue
                named = exc.refusal.message.split("\n")[1:]
                assert named, exc.refusal.message
                added = [
                    f
                    for f in recorder.seen[-1]
                    if f.severity == "error" and identity(f) not in before
                ]
                assert named == [f"- [{f.rule}] {f.path}: {f.message}" for f in added]
                continue
            now = error_identities(bank.refresh())
            assert now <= before, f"{tool} {arguments} added {sorted(now - before)}"
            if "journalId" not in result:
                assert now == before
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The journal: a failure at any boundary leaves the pre-state or the post-state
# --------------------------------------------------------------------------------------------

POSSIBLE_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(["domain", "fresh", "fresh/deeper", ""])),
        st.tuples(st.just("replace"), st.sampled_from(["README.md", "domain/README.md"])),
        st.tuples(st.just("replace"), st.just("domain/rules.md")),
        st.tuples(st.just("delete"), st.sampled_from(["domain/rules.md", "old/gone.md"])),
    ),
    min_size=1,
    max_size=6,
)


def plan_of(choices: Sequence[tuple[str, str]]) -> Callable[[Snapshot, Intent], PlanOutcome]:
    """A planner building the chosen ops (each path at most once) on the given snapshot."""

    def gate_and_plan(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        ops: list[AnyFileOp] = []
        used: set[str] = set()
        for number, (kind, where) in enumerate(choices):
            if kind == "create":
                path = posixpath.join(where, f"new{number}.md")
                ops.append(create_document(path, f"# New {number}\n\nCreated.\n"))
            elif where not in used:
                if kind == "replace":
                    text = document_text(snapshot, where) + f"\nLine {number}.\n"
                    ops.append(replace_document(snapshot, where, text))
                else:
                    ops.append(delete_document(snapshot, where))
            else:
                continue
            used.add(ops[-1].path)
        return PlanOutcome(plan=Plan(intent.tool, tuple(ops)))

    return gate_and_plan


def journal_bank(root: Path) -> Path:
    small_bank(root)
    (root / "old").mkdir()
    (root / "old" / "gone.md").write_text("# Gone\n\nSoon.\n", encoding="utf-8")
    (root / "old").chmod(0o750)
    return root


@settings(max_examples=scaled(60), suppress_health_check=[HealthCheck.too_slow])
@given(choices=POSSIBLE_OPS, prune=st.booleans(), data=st.data())
def test_a_failure_at_a_random_boundary_leaves_the_pre_state_or_the_post_state(
    choices: list[tuple[str, str]], prune: bool, data: st.DataObject
) -> None:
    """With `prune`, the apply also removes `old/` once its deletes empty it (what undo asks
    for), so a failure after that must bring the directory back with its bits."""
    base = Path(tempfile.mkdtemp(prefix="mbank-journal-"))
    try:
        planner = plan_of(choices)

        def write(root: Path, **options: Any) -> Any:
            return execute(
                Bank(root),
                "bank_create",
                {},
                planner,
                dry_run=False,
                clock=Clock(),
                make_id=Ids(),
                findings_for=no_findings,
                prune_dirs=(lambda _outcome: ("old",)) if prune else None,
                **options,
            )

        reference = journal_bank(base / "reference")
        pre = tree_bytes(reference)
        ops = len(write(reference).plan.ops)
        post = tree_bytes(reference)
        post_journal = (reference / ".mbank" / "journal.jsonl").read_bytes()

        points = ["wal-written", "wal-synced"]
        points += [
            f"op-{i}-{stage}"
            for i in range(1, ops + 1)
            for stage in ("temp", "swapped", "dirsynced")
        ]
        points += ["journal-partial", "journal-appended", "wal-removed"]
        point = data.draw(st.sampled_from(points), label="fault")

        def inject(name: str) -> None:
            if name == point:
                raise RuntimeError(f"injected at {name}")

        root = journal_bank(base / "bank")
        committed = point in ("journal-appended", "wal-removed")
        if committed:
            write(root, fault=inject)
        else:
            with pytest.raises(RefusalError) as caught:
                write(root, fault=inject)
            assert caught.value.refusal.rule == "apply-failed"
        assert tree_bytes(root) == (post if committed else pre)
        journal_file = root / ".mbank" / "journal.jsonl"
        written = journal_file.read_bytes() if journal_file.exists() else b""
        assert written == (post_journal if committed else b"")
        assert os.listdir(root / ".mbank" / "wal") == []
        assert list(root.rglob(".mbank-*.tmp")) == []
        assert journal.lock_is_free(str(root))
    finally:
        shutil.rmtree(base, ignore_errors=True)
