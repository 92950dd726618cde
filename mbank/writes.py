"""The write engine: the one shell helper every write tool runs through (spec 03 §1.1).

A tool supplies a pure `gate_and_plan(snapshot, intent) -> PlanOutcome` (its gates and its
reducer); `execute` does everything around it: the lock and crash recovery, the refresh, the
intent's outside facts (today, now, the journal id, the content of `bodyFile`/`contentFile`
read under the project confinement of §2.5), the post-check, and then either the dry-run
diff or the journal apply. It returns the fields every write result shares (§1.3).

A bank without `.mbank/` (never written by mbank, or `bank_init` on a missing root) is planned
and checked once without the lock; only a write that passes creates the root (when asked)
and `.mbank/`, takes the lock and plans again under it, so a refused write leaves no trace.
A dry run takes no lock, recovers nothing and creates nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, get_args, get_type_hints

import msgspec

from mbank.discovery import git_top
from mbank.gates.governance import require_governance_allowed
from mbank.gates.postcheck import (
    FindingsFor,
    default_findings_for,
    delta_text,
    governed_post_check,
    post_check,
    validation_delta,
)
from mbank.journal import (
    LOCK_TIMEOUT,
    RECORD_VERSION,
    FaultHook,
    apply_plan,
    bank_lock,
    changed_on_disk,
    compact_intent,
    created_dirs,
    ensure_journal_dir,
    fresh_journal_id,
    has_journal_dir,
    mbank_version,
    random_journal_id,
    record_ops,
    recover,
)
from mbank.journal.tree import BadEntry, open_directory, open_file
from mbank.model import (
    CreateFile,
    FileRead,
    Intent,
    JournalRecord,
    Plan,
    PlanOutcome,
    Refusal,
    RefusalError,
    sha256_hex,
)
from mbank.paths import is_within, refuse
from mbank.plan import apply_virtually, plan_diff, snapshot_pre_image
from mbank.snapshot import Bank, Snapshot
from mbank.write_declaration import TEXT_LIMIT, Published, WriteTool

GateAndPlan = Callable[[Snapshot, Intent[Any, Any]], PlanOutcome]
GatherFacts = Callable[[Snapshot], Any]
Clock = Callable[[], datetime]
MakeId = Callable[[datetime], str]

FILE_LIMIT = 1_000_000
# file argument → (the inline argument it excludes, the `<what>` of its messages)
FILE_ARGUMENTS = {"bodyFile": ("body", "body"), "contentFile": ("content", "content")}


def utc_now() -> datetime:
    """The current UTC time (the engine's default clock)."""
    return datetime.now(UTC)


class WriteOutcome(msgspec.Struct, frozen=True):
    """What `execute` returns: the tool's outcome plus the fields every write result has.

    `applied` is the done-flag's value: a real run that changed at least one file.
    `warnings` are the tool's warnings followed by the post-check's. `snapshot` is the bank
    after the write (refreshed), or the one planned on for a dry run or a no-op.
    """

    tool: str
    dry_run: bool
    applied: bool
    plan: Plan
    result: dict[str, Any]
    warnings: tuple[str, ...]
    diff: str | None
    journal_id: str | None
    record: JournalRecord | None
    snapshot: Snapshot
    # a governance write's findings that appear and disappear across the bank (issue 14)
    validation_delta: dict[str, Any] | None = None

    def common_fields(self) -> dict[str, Any]:
        """`{dryRun, diff?, journalId?, validationDelta?}` (spec 03 §1.3; the delta of a
        governance write, issue 14), for the tool to place in its result."""
        fields: dict[str, Any] = {"dryRun": self.dry_run}
        if self.diff is not None:
            fields["diff"] = self.diff
        if self.journal_id is not None:
            fields["journalId"] = self.journal_id
        if self.validation_delta is not None:
            fields["validationDelta"] = self.validation_delta
        return fields


# --------------------------------------------------------------------------------------------
# bodyFile / contentFile (spec 03 §2.5, rules 5-11)
# --------------------------------------------------------------------------------------------


def read_content_file(given: str, what: str, bank_root: str, cwd: str) -> FileRead:
    """Read a `bodyFile`/`contentFile` under mbank's project confinement (§2.5 rules 5–11).

    The project is the bank root's parent directory (P1) and the work tree of the git
    repository holding the bank (P2), by real path. A relative `given` resolves against
    `cwd`. Rules 1–4 (both given, blank, NUL) are checks on the arguments, left to the gate.
    """
    label = f'{what}File "{given}"'

    def refusal(rule: str, message: str) -> FileRead:
        return FileRead(refusal=Refusal(rule, message))

    def unreadable(exc: OSError | None) -> FileRead:
        """`file-unreadable`, with the OS's reason; None is a file gone while it was resolved."""
        if exc is None or exc.errno == errno.ENOENT:
            why = "no such file"
        else:
            why = (exc.strerror or str(exc)).lower()
        return refusal(
            "file-unreadable",
            f"{label} could not be read ({why}). The path is absolute, or relative to the "
            "server's working directory.",
        )

    lexical = os.path.normpath(os.path.join(cwd, given))
    try:
        info = os.stat(lexical)
    except OSError as exc:
        return unreadable(exc)
    bank_lexical = os.path.abspath(bank_root)
    lexical_p1 = os.path.dirname(bank_lexical)
    p1 = os.path.realpath(lexical_p1)
    lexical_p2 = git_top(bank_lexical)
    p2 = os.path.realpath(lexical_p2) if lexical_p2 is not None else None
    try:
        real = os.path.realpath(lexical)
    except OSError:  # a link vanished while it was being resolved (a racing rename)
        return unreadable(None)
    real_bases = [base for base in (p1, p2) if base is not None]
    if not any(is_within(real, base) for base in real_bases):
        lexical_bases = [*real_bases, lexical_p1, *([lexical_p2] if lexical_p2 else [])]
        if any(is_within(lexical, base) for base in lexical_bases):
            return refusal(
                "file-symlink", f"{label} leads outside this project through a symbolic link."
            )
        project = p2 if p2 is not None else p1
        return refusal(
            "file-outside",
            f"{label} is outside this project ({project}). Only files inside the project can "
            "be read.",
        )
    base = p1 if is_within(real, p1) else (p2 or p1)
    relative = os.path.relpath(real, base)
    hidden = next(
        (part for part in relative.split(os.sep) if part.startswith(".") and part != "."),
        None,
    )
    if hidden is not None:
        return refusal(
            "file-hidden",
            f"{label} is inside a hidden name ({hidden}). Files under .git/, other "
            "dot-directories and dot-files are never read.",
        )
    if not stat.S_ISREG(info.st_mode):
        return refusal("file-not-regular", f"{label} is not a regular file.")
    if info.st_size > FILE_LIMIT:
        return refusal(
            "file-too-large",
            f"{label} is {info.st_size} bytes, past the {FILE_LIMIT} this accepts. Split it, "
            "or write the document in sections.",
        )
    try:
        descriptor = open_confined(base, relative, label)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return refusal("file-not-regular", f"{label} is not a regular file.")
            content = os.read(descriptor, FILE_LIMIT + 1)
        finally:
            os.close(descriptor)
    except RefusalError as exc:
        return FileRead(refusal=exc.refusal)
    except OSError as exc:
        return unreadable(exc)
    if len(content) > FILE_LIMIT:
        return refusal(
            "file-too-large",
            f"{label} is {len(content)} bytes, past the {FILE_LIMIT} this accepts. Split it, "
            "or write the document in sections.",
        )
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        return refusal("file-not-utf8", f"{label} is not UTF-8 text.")
    return FileRead(text=text, sha256=sha256_hex(content), size=len(content))


def open_confined(base: str, relative: str, label: str) -> int:
    """A read descriptor for `base/relative`, opened one component at a time from `base`'s
    descriptor without following a single link (issue 13 item 6).

    The confinement check above looked at real paths; a directory swapped for a symbolic link
    after that check would otherwise send the open outside the project. Here a component that
    has become a link refuses `file-symlink`, so what is opened is what was checked.
    """
    parts = [part for part in relative.split(os.sep) if part not in ("", ".")]
    parent = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for directory in parts[:-1]:
            inner = open_directory(parent, directory, directory)
            os.close(parent)
            parent = inner
        return open_file(parent, parts[-1], parts[-1], os.O_RDONLY | os.O_NONBLOCK)
    except BadEntry as bad:
        # A directory that is not one, or a name whose kind changed under the open (the race
        # of item 6: `bad.found` is read after the failed open), is the swapped link.
        if bad.wanted == "a directory" or bad.found not in ("a directory", "a special file"):
            raise refuse(
                "file-symlink", f"{label} leads outside this project through a symbolic link."
            ) from None
        raise refuse("file-not-regular", f"{label} is not a regular file.") from None
    finally:
        os.close(parent)


def read_file_arguments(
    arguments: Mapping[str, Any], bank_root: str, cwd: str
) -> dict[str, FileRead]:
    """Read every `bodyFile`/`contentFile` argument whose gate will get as far as reading it.

    Not read (the gate refuses first, §2.5 rules 1, 3, 4): a file given together with its
    inline argument, a blank path, a path with a NUL character.
    """
    reads: dict[str, FileRead] = {}
    for key, (inline, what) in FILE_ARGUMENTS.items():
        given = arguments.get(key)
        if not isinstance(given, str) or not given.strip() or "\x00" in given:
            continue
        if arguments.get(inline) is not None:
            continue
        reads[key] = read_content_file(given, what, bank_root, cwd)
    return reads


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


def build_intent(
    snapshot: Snapshot,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    args: Any,
    now: datetime,
    journal_id: str | None,
    dry_run: bool,
    gather_facts: GatherFacts | None = None,
    cwd: str | None = None,
) -> Intent[Any, Any]:
    """The intent of spec 03 §1.1 step 4: the typed arguments plus every outside fact a gate
    may need (`arguments` is the caller's input as given, for the file arguments)."""
    return Intent(
        tool=tool,
        args=args,
        facts=gather_facts(snapshot) if gather_facts is not None else None,
        today=now.astimezone(UTC).date().isoformat(),
        now=now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        journal_id=journal_id,
        dry_run=dry_run,
        files=read_file_arguments(arguments, snapshot.root, cwd or os.getcwd()),
    )


class GovernancePolicy(msgspec.Struct, frozen=True):
    """Who may change the bank's governance folder in this write (issue 14).

    `allowed`: the caller is a person who asked to (the CLI with --governance); every MCP
    call is refused. `seeds`: the tool seeds governance by design (init, materialize), so
    the rule does not apply to it.
    """

    allowed: bool = False
    seeds: bool = False


class _Checked(msgspec.Struct, frozen=True):
    intent: Intent[Any, Any]
    outcome: PlanOutcome
    warnings: tuple[str, ...]
    delta: dict[str, Any] | None = None


def _plan_and_check(
    snapshot: Snapshot,
    intent: Intent[Any, Any],
    gate_and_plan: GateAndPlan,
    findings_for: FindingsFor | None,
    policy: GovernancePolicy,
) -> _Checked:
    outcome = gate_and_plan(snapshot, intent)
    warnings = tuple(outcome.warnings)
    if not outcome.plan.ops:
        return _Checked(intent, outcome, warnings)
    governed = (
        () if policy.seeds else require_governance_allowed(outcome.plan, allowed=policy.allowed)
    )
    after = apply_virtually(snapshot, outcome.plan)
    if not governed:
        warnings += post_check(
            snapshot,
            after,
            outcome.plan.paths,
            force=outcome.force,
            findings_for=findings_for,
        )
        return _Checked(intent, outcome, warnings)
    # A governance write: validate both snapshots once (a dna/ path makes the partial
    # validation a full one), for the post-check and for the delta the person is shown.
    validate = findings_for if findings_for is not None else default_findings_for()
    paths = outcome.plan.paths
    before_findings, after_findings = validate(snapshot, paths), validate(after, paths)
    warnings += governed_post_check(before_findings, after_findings, paths)
    return _Checked(intent, outcome, warnings, validation_delta(before_findings, after_findings))


def _disk_pre_images(root: str, snapshot: Snapshot, plan: Plan) -> dict[str, bytes]:
    """Pre-images the snapshot does not hold (non-document or non-text files), read now."""
    found: dict[str, bytes] = {}
    for op in plan.ops:
        if isinstance(op, CreateFile) or snapshot_pre_image(snapshot, op.path) is not None:
            continue
        absolute = os.path.join(root, *op.path.split("/"))
        try:
            descriptor = os.open(absolute, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            raise changed_on_disk(op.path) from None
        try:
            chunks = []
            while chunk := os.read(descriptor, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(descriptor)
        found[op.path] = b"".join(chunks)
    return found


def _outcome(
    tool: str,
    checked: _Checked,
    snapshot: Snapshot,
    *,
    dry_run: bool,
    diff: str | None = None,
    record: JournalRecord | None = None,
) -> WriteOutcome:
    return WriteOutcome(
        tool=tool,
        dry_run=dry_run,
        applied=record is not None,
        plan=checked.outcome.plan,
        result=dict(checked.outcome.result),
        warnings=checked.warnings,
        diff=diff,
        journal_id=record.id if record is not None else None,
        record=record,
        snapshot=snapshot,
        validation_delta=checked.delta,
    )


def execute(
    bank: Bank,
    tool: str,
    arguments: Mapping[str, Any],
    gate_and_plan: GateAndPlan,
    *,
    dry_run: bool,
    args: Any = None,
    via: str = "mcp",
    gather_facts: GatherFacts | None = None,
    create_root: bool = False,
    clock: Clock = utc_now,
    make_id: MakeId = random_journal_id,
    findings_for: FindingsFor | None = None,
    fault: FaultHook | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    cwd: str | None = None,
    prune_dirs: Callable[[PlanOutcome], Sequence[str]] | None = None,
    governance: bool = False,
    seeds_governance: bool = False,
    journal_tool: str | None = None,
) -> WriteOutcome:
    """Run one write through the pipeline of spec 03 §1.1 and return its common outcome.

    Raises `RefusalError` for every refusal (gates, post-check, lock, preconditions, a failed
    apply); nothing is written then. `create_root` lets `bank_init` create a missing root
    once its write has passed every check; any other write to a missing root is refused
    (`root-missing`). `args` is the tool's typed arguments (default: `arguments` as given).
    `findings_for` defaults to the validation module's partial validation.
    `prune_dirs(outcome)` names directories the apply removes when the plan leaves them
    empty (undo), asked under the lock once the plan is checked.
    A plan touching the governance folder is refused (`governance-protected`) unless the
    caller is the CLI (`via="cli"`) with `governance` (its --governance flag) or the tool
    `seeds_governance` (init, materialize); such a write shows its validation delta and its
    record carries `governance: true`. `journal_tool` is the record's tool name (default
    `tool`).
    """
    root = bank.root
    policy = GovernancePolicy(allowed=via == "cli" and governance, seeds=seeds_governance)

    def checked_on(snapshot: Snapshot, journal_id: str | None, now: datetime) -> _Checked:
        intent = build_intent(
            snapshot,
            tool,
            arguments,
            args=dict(arguments) if args is None else args,
            now=now,
            journal_id=journal_id,
            dry_run=dry_run,
            gather_facts=gather_facts,
            cwd=cwd,
        )
        return _plan_and_check(snapshot, intent, gate_and_plan, findings_for, policy)

    if dry_run:
        snapshot = bank.refresh()
        checked = checked_on(snapshot, None, clock())
        plan = checked.outcome.plan
        diff = plan_diff(snapshot, plan, _disk_pre_images(root, snapshot, plan))
        if checked.delta is not None:
            diff += delta_text(checked.delta)
        return _outcome(tool, checked, snapshot, dry_run=True, diff=diff)

    first: tuple[datetime, str] | None = None
    if not has_journal_dir(root):
        snapshot = bank.refresh()
        now = clock()
        first = (now, make_id(now))
        checked = checked_on(snapshot, first[1], now)
        if not checked.outcome.plan.ops:
            return _outcome(tool, checked, snapshot, dry_run=False)
        if not os.path.isdir(root):
            if not create_root:
                raise refuse("root-missing", f"The bank root {root} does not exist.")
            os.makedirs(root, exist_ok=True)
        ensure_journal_dir(root)

    with bank_lock(root, tool, timeout=lock_timeout):
        recover(root)
        snapshot = bank.refresh()
        # The second pass of a first write keeps the first pass's time and id, so that both
        # passes plan from the same intent.
        now = first[0] if first is not None else clock()
        journal_id = fresh_journal_id(root, now, make_id, first[1] if first else None)
        checked = checked_on(snapshot, journal_id, now)
        plan = checked.outcome.plan
        if not plan.ops:
            return _outcome(tool, checked, snapshot, dry_run=False)
        ensure_journal_dir(root)
        intent, objects = compact_intent(arguments, checked.intent.files)
        notes = checked.outcome.notes
        record = JournalRecord(
            v=RECORD_VERSION,
            id=journal_id,
            time=checked.intent.now,
            tool=journal_tool or tool,
            via=via,
            mbank=mbank_version(),
            intent=intent,
            ops=record_ops(plan),
            warnings=checked.warnings,
            reason=notes.reason,
            title=notes.title,
            purpose=notes.purpose,
            from_=notes.from_,
            to=notes.to,
            undo_of=notes.undo_of,
            governance=checked.delta is not None,
        )
        record = apply_plan(
            root,
            bank.real_root,
            plan,
            record,
            objects=objects,
            fault=fault,
            prune=prune_dirs(checked.outcome) if prune_dirs is not None else (),
        )
    return _outcome(tool, checked, bank.refresh(), dry_run=False, record=record)


# --------------------------------------------------------------------------------------------
# undo from the CLI (spec 03 §14.10; over MCP it is the declared tool bank_undo)
# --------------------------------------------------------------------------------------------


def run_undo(
    bank: Bank,
    *,
    record_id: str | None = None,
    dry_run: bool = False,
    **engine: Any,
) -> dict[str, Any]:
    """`mbank undo [--id ID]` as a library call: the declared `bank_undo` run with
    `via="cli"` (unless `engine` says otherwise); `UndoResult`.

    The directories the undone write created (its record's `dirs`) are removed with its
    files once the undo leaves them empty, deepest first (`WriteTool.prunes_dirs_of`).
    `engine` is the engine's options as `execute` takes them (clock, make_id, findings_for,
    fault, lock_timeout, governance).
    """
    from mbank.reducers.undo import WRITE_TOOL

    arguments: dict[str, Any] = {} if record_id is None else {"id": record_id}
    engine.setdefault("via", "cli")
    return run_write(WRITE_TOOL, bank, arguments, dry_run=dry_run, **engine)


# --------------------------------------------------------------------------------------------
# Every declared write tool (mbank.reducers.registry), from the MCP server or the CLI
# --------------------------------------------------------------------------------------------


def _length_bounds(args: type[Any]) -> dict[str, int]:
    """`{argument name as given: TEXT_LIMIT}` for the tool's text arguments bound by it."""
    hints = get_type_hints(args, include_extras=True)
    bounds: dict[str, int] = {}
    for field in msgspec.structs.fields(args):
        metadata = get_args(hints[field.name])[1:] if field.name in hints else ()
        for item in metadata:
            # the 1,000,000 bound of text and content; a smaller bound (a name, a reason) has
            # its tool's own gate and message, which the CLI reaches as before
            if isinstance(item, Published) and item.max_length == TEXT_LIMIT:
                bounds[field.encode_name] = item.max_length
    return bounds


def refuse_too_long(tool: WriteTool[Any, Any], given: Mapping[str, Any]) -> None:
    """Refuse a text argument past the bound MCP's schema publishes (issue 13 item 11).

    MCP refuses it before the call; the CLI (`--body`, `--body-file -`, …) and a library call
    reach the engine directly, so the same bound is held here for them.
    """
    for name, bound in _length_bounds(tool.args).items():
        value = given.get(name)
        if isinstance(value, str) and len(value) > bound:
            raise refuse(
                "text-too-long",
                f"`{name}` is longer than the {bound} characters it accepts; shorten it, or "
                "write the document in sections.",
            )


def convert_arguments(tool: WriteTool[Any, Any], given: Mapping[str, Any]) -> Any:
    """The tool's arguments Struct from the caller's input, or an `invalid-arguments` refusal.

    A null argument is an absent one (the engine's own reading, §1.1), so the Struct's default
    applies and the gates answer as they would for an argument never given.
    """
    present = {key: value for key, value in given.items() if value is not None}
    refuse_too_long(tool, present)
    try:
        return msgspec.convert(present, tool.args)
    except msgspec.ValidationError as exc:
        raise refuse(
            "invalid-arguments",
            f"The arguments of {tool.name} do not fit its schema: {exc}. Pass them as the "
            "tool's input schema describes.",
        ) from None


def _pruner(tool: WriteTool[Any, Any], bank: Bank) -> Callable[[PlanOutcome], Sequence[str]] | None:
    """The `prune_dirs` of a tool that removes the directories a record created (undo)."""
    key = tool.prunes_dirs_of
    if key is None:
        return None
    return lambda planned: created_dirs(bank.root, planned.result[key])


def write_outcome(
    tool: WriteTool[Any, Any],
    bank: Bank,
    arguments: Mapping[str, Any],
    *,
    dry_run: bool = False,
    **engine: Any,
) -> WriteOutcome:
    """Run a declared write tool through the engine: its arguments converted once, its facts
    gathered, its `gate_and_plan` planned and checked; a `dryRun` argument joins `dry_run`."""
    from mbank.write_facts import gather_facts

    args = convert_arguments(tool, arguments)
    dry = dry_run or bool(getattr(args, "dry_run", False))
    # the journal keeps the arguments as given, less the dry-run flag (03 §14.2)
    given = {key: value for key, value in arguments.items() if key != "dryRun"}
    try:
        return execute(
            bank,
            tool.name,
            given,
            tool.gate_and_plan,
            dry_run=dry,
            args=args,
            gather_facts=lambda snapshot: gather_facts(tool, bank, snapshot, args),
            create_root=tool.creates_root,
            seeds_governance=tool.seeds_governance,
            journal_tool=tool.journal_name,
            prune_dirs=_pruner(tool, bank),
            **engine,
        )
    except RefusalError as exc:
        if tool.postcheck_hint is None or exc.refusal.rule != "postcheck":
            raise
        raise refuse("postcheck", f"{exc.refusal.message}\n{tool.postcheck_hint}") from None


def run_write(
    tool: WriteTool[Any, Any],
    bank: Bank,
    arguments: Mapping[str, Any],
    *,
    dry_run: bool = False,
    **engine: Any,
) -> dict[str, Any]:
    """A declared write tool's full result (spec 03 §1.3), as MCP and the CLI return it."""
    outcome = write_outcome(tool, bank, arguments, dry_run=dry_run, **engine)
    return tool.shape(outcome.result, outcome.applied, outcome.common_fields(), outcome.warnings)
