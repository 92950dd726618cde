"""`mbank hook`: the end-of-session capture hook for Claude Code's Stop event (spec 04 §10).

It asks the agent, at most once per batch of work, to record durable facts as inbox notes. It
imports only the standard library and dulwich (never `mcp`, never the bank parser), and it
never breaks a stop: every path ends with exit code 0. The decision is a pure function of the
facts gathered by `gather`; `run` is the thin shell around it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from mbank.discovery import find_bank

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")

ASK = (
    "Before you finish: if this session settled something durable — a decision that was "
    "accepted, a constraint you discovered, a gotcha that cost time, a contract that changed — "
    "record each one as its own note with bank_create and inbox: true. Give each a one-line "
    "purpose that says when to read it, and point derived_from at the document the fact "
    "belongs under. Keep only what cannot be re-derived from the code. If nothing qualifies, "
    "finish without comment. Never promote anything out of _inbox/ yourself."
)


@dataclass(frozen=True)
class Settings:
    """The hook's tunables, from the environment (MBANK_*, else upstream's MEMORYBANK_*)."""

    cooldown_minutes: float = 30.0
    inbox_limit: int = 8
    stale_days: float = 14.0


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(f"MBANK_{name}")
    if raw is None:
        raw = env.get(f"MEMORYBANK_{name}")
    if raw is None:
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        return default
    return value if value == value and value not in (float("inf"), float("-inf")) else default


def settings_from(env: Mapping[str, str]) -> Settings:
    """Read the three tunables; a non-numeric value falls back to the default."""
    return Settings(
        cooldown_minutes=_number(env, "CAPTURE_COOLDOWN_MIN", 30.0),
        inbox_limit=int(_number(env, "INBOX_LIMIT", 8)),
        stale_days=_number(env, "INBOX_STALE_DAYS", 14.0),
    )


def marker_path(session_id: Any, temp_dir: str) -> str:
    """Where this session's marker lives; a hostile id cannot leave the temp directory."""
    if isinstance(session_id, str) and SESSION_ID.match(session_id):
        name = session_id
    elif isinstance(session_id, str) and session_id:
        # not `model.sha256_hex`: the hook imports only the standard library and dulwich
        name = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    else:
        name = "unknown"
    return os.path.join(temp_dir, f"mbank-hook-{name}.json")


@dataclass(frozen=True)
class Marker:
    """What the last ask (or the session's baseline) recorded."""

    at: float
    fingerprint: str | None
    head: str | None


@dataclass(frozen=True)
class Facts:
    """Everything the decision needs, gathered by the shell."""

    dirty: bool
    head: str | None
    fingerprint: str
    marker: Marker | None
    now: float
    inbox_count: int
    inbox_stale: int


@dataclass(frozen=True)
class Decision:
    """Whether to ask, the text, and the marker to write (None: leave it as it is)."""

    ask: bool
    reason: str | None
    write_marker: Marker | None


def queue_reminder(count: int, stale: int, settings: Settings) -> str | None:
    """The second paragraph when the inbox is full or stale, else None."""
    if count < settings.inbox_limit and stale == 0:
        return None
    days = f"{settings.stale_days:g}"
    waiting = f"{count} captured note{'' if count == 1 else 's'} wait{'s' if count == 1 else ''}"
    older = f" ({stale} older than {days} days)" if stale else ""
    return (
        f"Also tell the user plainly, in one sentence, that {waiting} in the bank's _inbox/"
        f"{older}, and suggest the review-inbox prompt. Do not review, promote or discard "
        "any of them unless asked."
    )


def decide(facts: Facts, settings: Settings) -> Decision:
    """The pure decision of spec 04 §10.2–10.4 once a bank and a git tree were found."""
    marker = facts.marker
    if marker is None:
        if not facts.dirty:
            return Decision(False, None, Marker(0, None, facts.head))
        worked = True
    else:
        worked = facts.dirty or facts.head != marker.head
    if not worked:
        return Decision(False, None, None)
    if marker is not None and marker.fingerprint == facts.fingerprint:
        return Decision(False, None, None)
    if marker is not None and facts.now - marker.at < settings.cooldown_minutes * 60:
        return Decision(False, None, None)
    reason = ASK
    reminder = queue_reminder(facts.inbox_count, facts.inbox_stale, settings)
    if reminder:
        reason += "\n\n" + reminder
    return Decision(True, reason, Marker(facts.now, facts.fingerprint, facts.head))


# --------------------------------------------------------------------------------------------
# The shell: stdin, git (dulwich), the marker file, stdout
# --------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


def git_state(cwd: str) -> tuple[str, str | None, bool, str] | None:
    """(work tree top, HEAD id, dirty, fingerprint) of the repository around cwd, or None."""
    from dulwich import porcelain
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo.discover(cwd)
    except NotGitRepository:
        return None
    with repo:
        top = repo.path
        try:
            head: str | None = repo.head().decode("ascii")
        except KeyError:
            head = None
        status = porcelain.status(repo, untracked_files="all")
    lines: list[str] = []
    paths: list[str] = []
    for state, names in (
        ("added", status.staged.get("add", [])),
        ("deleted", status.staged.get("delete", [])),
        ("modified", status.staged.get("modify", [])),
    ):
        for name in names:
            lines.append(f"staged-{state} {_text(name)}")
            paths.append(_text(name))
    for name in status.unstaged:
        lines.append(f"unstaged {_text(name)}")
        paths.append(_text(name))
    for name in status.untracked:
        lines.append(f"untracked {_text(name)}")
        paths.append(_text(name))
    digest = hashlib.sha256()
    digest.update((head or "").encode())
    for line in sorted(lines):
        digest.update(b"\n" + line.encode("utf-8", "surrogateescape"))
    for path in sorted(set(paths)):
        absolute = os.path.join(top, path)
        if os.path.isfile(absolute) and not os.path.islink(absolute):
            with open(absolute, "rb") as handle:
                digest.update(hashlib.sha256(handle.read()).digest())
    return top, head, bool(lines), digest.hexdigest()[:12]


def inbox_counts(bank: str, now: float, stale_days: float) -> tuple[int, int]:
    """(notes waiting, notes older than stale_days) directly inside `<bank>/_inbox/`."""
    inbox = os.path.join(bank, "_inbox")
    count = stale = 0
    try:
        entries = list(os.scandir(inbox))
    except OSError:
        return 0, 0
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name == "README.md":
            continue
        if not entry.is_file(follow_symlinks=False):
            continue
        count += 1
        if now - entry.stat(follow_symlinks=False).st_mtime > stale_days * 86400:
            stale += 1
    return count, stale


def read_marker(path: str) -> Marker | None:
    """The marker left by an earlier stop of this session, or None."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return Marker(float(data.get("at") or 0), data.get("fingerprint"), data.get("head"))
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def write_marker(path: str, marker: Marker) -> None:
    """Record the marker atomically (a temp file renamed over it)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"at": marker.at, "fingerprint": marker.fingerprint, "head": marker.head}, handle)
    os.replace(temporary, path)


def run(
    stdin: IO[str],
    stdout: IO[str],
    stderr: IO[str],
    *,
    root: str | None = None,
    env: Mapping[str, str] | None = None,
    now: float | None = None,
) -> int:
    """Read the Stop payload, maybe ask; always exit 0."""
    environment = os.environ if env is None else env
    try:
        try:
            payload = json.loads(stdin.read())
        except ValueError:
            return 0
        if not isinstance(payload, dict) or payload.get("stop_hook_active") is True:
            return 0
        given_cwd = payload.get("cwd")
        cwd = given_cwd if isinstance(given_cwd, str) and given_cwd else os.getcwd()
        state = git_state(cwd)
        if state is None:
            return 0
        top, head, dirty, fingerprint = state
        bank = os.path.join(cwd, root) if root else find_bank(cwd, top)
        if bank is None or not os.path.isdir(bank):
            return 0
        settings = settings_from(environment)
        moment = time.time() if now is None else now
        count, stale = inbox_counts(bank, moment, settings.stale_days)
        marker_file = marker_path(payload.get("session_id"), tempfile.gettempdir())
        facts = Facts(dirty, head, fingerprint, read_marker(marker_file), moment, count, stale)
        decision = decide(facts, settings)
        if decision.write_marker is not None:
            write_marker(marker_file, decision.write_marker)
        if decision.ask:
            stdout.write(json.dumps({"decision": "block", "reason": decision.reason}) + "\n")
        return 0
    except Exception as exc:  # the hook must never break an agent's stop
        stderr.write(f"mbank hook: {type(exc).__name__}: {exc}\n")
        return 0


def main(root: str | None = None) -> int:
    """Entry point used by `mbank hook`."""
    return run(sys.stdin, sys.stdout, sys.stderr, root=root)
