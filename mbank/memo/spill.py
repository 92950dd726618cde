"""The bridge into the bank: open items rendered as one quarantined `_inbox/` note (06 §13).

The memo side chooses the items and renders the note's path, title, purpose and body. The
write itself goes through the bank's create pipeline (`bank_create` with `inbox: true`), which
is reached through an injected `InboxWriter` so the memory never writes files itself.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from mbank.memo.graph import blockers_of
from mbank.memo.model import OPEN, SPILL_BODY_CHARS, Node
from mbank.memo.reducer import MemoState
from mbank.memo.salience import salience


class SpillRefused(Exception):
    """The bank refused the handoff note; `str(self)` is the bank's refusal text."""


class InboxWriter(Protocol):
    """`create_inbox_note(bank_root, path, title, purpose, body)` through the bank's create.

    Applied: returns the journal id. `dry_run=True`: writes nothing and returns the diff.
    A refusal raises `SpillRefused` with the bank's text.
    """

    def __call__(
        self,
        bank_root: Path,
        path: str,
        title: str,
        purpose: str,
        body: str,
        *,
        dry_run: bool = False,
    ) -> str:
        """Create the note (or plan it, on a dry run)."""
        ...


def bank_inbox_writer(
    bank_root: Path, path: str, title: str, purpose: str, body: str, *, dry_run: bool = False
) -> str:
    """The real bridge: `bank_create` with `inbox: true` on the bank at `bank_root`.

    Same gates, lock, post-check and journal as any `bank_create` (the record says
    `via: "mcp"`), so `mbank history`, `mbank undo` and "where did it go" work for the note.
    """
    from mbank.model import RefusalError
    from mbank.reducers.create import WRITE_TOOL as CREATE
    from mbank.snapshot import Bank
    from mbank.writes import run_write

    arguments = {
        "docKind": "engineering",
        "path": path,
        "title": title,
        "purpose": purpose,
        "body": body,
        "inbox": True,
    }
    try:
        result = run_write(CREATE, Bank(bank_root), arguments, dry_run=dry_run)
    except RefusalError as refused:
        raise SpillRefused(refused.refusal.message) from refused
    answer = result.get("diff") if dry_run else result.get("journalId")
    if not isinstance(answer, str):
        raise SpillRefused(f"the bank wrote nothing for {path}")
    return answer


def spill_items(
    state: MemoState, session: str | None, limit: int, now: float, half_life_h: float
) -> tuple[list[Node], int]:
    """Open items (of `session` when given), salience descending then id; and how many match."""
    pool = [
        n
        for n in state.nodes.values()
        if n.status in OPEN and (session is None or n.session == session)
    ]
    chosen = heapq.nsmallest(
        limit,
        pool,
        key=lambda n: (-salience(n, state.degree(n.id), now, half_life_h), n.id),
    )
    return chosen, len(pool)


def spill_path(now: float, taken: Callable[[str], bool]) -> str:
    """`_inbox/memo-<YYYYMMDDTHHMMSSZ>.md`, then `-2`, `-3` … while the path is taken."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    path = f"_inbox/memo-{stamp}.md"
    suffix = 2
    while taken(path):
        path = f"_inbox/memo-{stamp}-{suffix}.md"
        suffix += 1
    return path


def spill_title(now: float, session: str | None) -> str:
    """`Working memory handoff <YYYY-MM-DD HH:MM> UTC` (+ ` — session <s>`)."""
    title = "Working memory handoff " + time.strftime("%Y-%m-%d %H:%M", time.gmtime(now)) + " UTC"
    if session is not None:
        title += f" — session {session}"
    return title


def spill_purpose(count: int) -> str:
    """The note's purpose sentence."""
    return (
        f"Read when resuming this work: {count} open items carried over from a "
        "working-memory session."
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def spill_body(state: MemoState, items: list[Node], omitted: int) -> str:
    """The note's body (no H1: `bank_create` puts `# <title>` above it)."""
    noun = "item" if len(items) == 1 else "items"
    left_out = "none" if omitted == 0 else str(omitted)
    lines = [
        f"{len(items)} open {noun}, highest salience first; {left_out} left out by the limit. "
        "Captured from mbank's working memory and not yet reviewed.",
        "",
        "## Items",
    ]
    included = {n.id for n in items}
    for node in items:
        meta = (
            f"- id: `{node.id}` · kind: {node.kind} · status: {node.status} · "
            f"priority: {node.priority}"
        )
        if node.tags:
            meta += " · tags: " + ", ".join(node.tags)
        if node.session is not None:
            meta += f" · session: {node.session}"
        lines += ["", f"### {_one_line(node.title)}", "", meta]
        blockers = blockers_of(state, node.id)
        if blockers:
            lines.append(
                "- blocked by: "
                + ", ".join(f"{_one_line(state.nodes[b].title)} (`{b}`)" for b in blockers)
            )
        body = node.body.strip()
        if body:
            if len(body) > SPILL_BODY_CHARS:
                body = body[:SPILL_BODY_CHARS].rstrip() + " …"
            lines += ["", body]
    links = [
        f"- `{edge.src}` {edge.kind} `{edge.dst}`"
        for node in items
        for (_, _), edge in sorted(state.out[node.id].items())
        if not edge.auto and edge.dst in included
    ]
    if links:
        lines += ["", "## Links", "", *links]
    return "\n".join(lines) + "\n"
