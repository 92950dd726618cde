"""`bank_changed`: what moved in the bank since a git revision or an ISO date (spec 02 §8).

ISO dates answer from the snapshot's modification times (pure). Revisions are read with dulwich
(no `git` binary): the `.md` blobs of the resolved commit under the bank directory against the
work tree now — tracked files and untracked, not-ignored ones, with their current content, so
unstaged edits count — and deleted/added pairs at least 50% similar become renames.
"""

from __future__ import annotations

import calendar
import os
import re
from typing import Any

from dulwich.diff_tree import CHANGE_ADD, CHANGE_DELETE, CHANGE_RENAME, RenameDetector
from dulwich.ignore import IgnoreFilterManager
from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, ObjectID
from dulwich.repo import Repo

from mbank import gitrepo
from mbank.parse import file_stem
from mbank.paths import refuse
from mbank.projection import Snapshot

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]|$)")
_ISO_PARTS = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$"
)
WALKING_REF = re.compile(r"^(.*?)(?:~(\d+)|\^+)$")
RENAME_THRESHOLD = 50
KIND_ORDER = ("added", "deleted", "modified", "renamed")

MTIME_NOTE = (
    "Modification times cannot tell a new document from an edited one and do not show "
    "deletions. Pass a git ref for an exact delta."
)
EMPTY_REPO_NOTE = "The repository has no commits yet, so every document is listed as added."


def parse_iso_cutoff(since: str) -> int | None:
    """An ISO date or date-time as nanoseconds since the epoch (UTC when no offset), or None.

    A date alone is UTC midnight; **mbank:** a date-time without an offset is UTC too.
    """
    match = _ISO_PARTS.match(since)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        import datetime as dt

        moment = dt.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
        )
    except ValueError:
        return None
    seconds = calendar.timegm(moment.timetuple())
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        seconds -= sign * (hours * 3600 + minutes * 60)
    nanos = int((fraction or "0")[:9].ljust(9, "0"))
    return seconds * 1_000_000_000 + nanos


def _change(snapshot: Snapshot, path: str, kind: str, source: str | None = None) -> dict[str, Any]:
    doc = snapshot.docs.get(path) if kind != "deleted" else None
    change: dict[str, Any] = {
        "path": path,
        "title": doc.title if doc is not None else file_stem(path),
        "changeKind": kind,
    }
    if doc is not None:
        change["docKind"] = doc.doc_kind
        change["layer"] = doc.layer
        change["status"] = doc.status
    if source is not None:
        change["from"] = source
    return change


def _sorted(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    unique = {change["path"]: change for change in changes}
    return sorted(unique.values(), key=lambda c: (KIND_ORDER.index(c["changeKind"]), c["path"]))


def _mtime_result(
    snapshot: Snapshot, since: str, cutoff_ns: int | None, note: str
) -> dict[str, Any]:
    changes = [
        _change(snapshot, path, "modified")
        for path, doc in snapshot.docs.items()
        if cutoff_ns is None or doc.mtime_ns > cutoff_ns
    ]
    return {"since": since, "mode": "mtime", "changes": _sorted(changes), "note": note}


def changed(snapshot: Snapshot, since: str) -> dict[str, Any]:
    """`bank_changed`: `{since, mode, repo?, changes, note?}` (spec 02 §8.2)."""
    since = since.strip()
    if not since:
        raise refuse("since-required", "`since` is required: an ISO date or a git ref.")
    if ISO_DATE.match(since):
        cutoff = parse_iso_cutoff(since)
        if cutoff is None:
            raise refuse(
                "since-unusable", f'"{since}" is neither an ISO date nor a usable git ref.'
            )
        return _mtime_result(snapshot, since, cutoff, MTIME_NOTE)
    found = gitrepo.open_bank_repo(snapshot.real_root)
    if found is None:
        if WALKING_REF.match(since):
            note = (
                f'This bank is not inside a git repository, so "{since}" cannot be walked; '
                f"every document is listed. {MTIME_NOTE}"
            )
            # from the epoch: every document, whatever its modification time
            return _mtime_result(snapshot, since, None, note)
        raise refuse(
            "not-in-git",
            f'This bank is not inside a git repository, so "{since}" cannot be resolved. '
            "Pass an ISO date instead.",
        )
    with found.repo:
        return _git_changes(snapshot, found.repo, found.tree, found.prefix, since)


def _git_changes(
    snapshot: Snapshot, repo: Repo, tree: str, prefix: str, since: str
) -> dict[str, Any]:
    result: dict[str, Any] = {"since": since, "mode": "git", "repo": tree}
    if gitrepo.head_commit(repo) is None:
        result["changes"] = _sorted([_change(snapshot, p, "added") for p in snapshot.docs])
        result["note"] = EMPTY_REPO_NOTE
        return result
    notes: list[str] = []
    base = gitrepo.resolve_commit(repo, since)
    if base is None:
        walking = WALKING_REF.match(since)
        start = gitrepo.resolve_commit(repo, walking.group(1) or "HEAD") if walking else None
        if start is None:
            raise refuse(
                "not-a-commit",
                f'"{since}" is not a commit in {tree}. Pass a valid ref or an ISO date.',
            )
        base = gitrepo.first_commit(repo, start)
        notes.append(
            f'"{since}" reaches past the start of this repository, so the delta is measured '
            f"from its first commit ({base.id.decode('ascii')[:8]}) instead."
        )
    then = gitrepo.markdown_blobs(repo, base, prefix)
    now = _work_tree_blobs(snapshot, repo, prefix)
    changes: list[dict[str, Any]] = []
    deleted = {path: sha for path, sha in then.items() if path not in now}
    added = {path: blob for path, blob in now.items() if path not in then}
    for path, blob in now.items():
        if path in then and then[path] != blob.id:
            changes.append(_change(snapshot, path, "modified"))
    changes.extend(_pair_renames(snapshot, repo, deleted, added))
    result["changes"] = _sorted(changes)
    if notes:
        result["note"] = " ".join(notes)
    return result


def _work_tree_blobs(snapshot: Snapshot, repo: Repo, prefix: str) -> dict[str, Blob]:
    """The *now* side: indexed documents that are tracked, or untracked and not ignored."""
    tracked = {path for path in repo.open_index().paths()}
    ignore = IgnoreFilterManager.from_repo(repo)
    now: dict[str, Blob] = {}
    for path, doc in snapshot.docs.items():
        repo_path = gitrepo.join_repo_path(prefix, path)
        if repo_path.encode("utf-8") not in tracked and ignore.is_ignored(repo_path):
            continue
        if doc.text_ok:
            content = snapshot.raw[path].encode("utf-8")
        else:
            try:
                with open(os.path.join(snapshot.real_root, path), "rb") as handle:
                    content = handle.read()
            except OSError:
                continue
        now[path] = Blob.from_string(content)
    return now


def _pair_renames(
    snapshot: Snapshot, repo: Repo, deleted: dict[str, ObjectID], added: dict[str, Blob]
) -> list[dict[str, Any]]:
    """Deleted/added candidates, pairing those ≥50% similar as renames (exact pairs first)."""
    if not deleted or not added:
        return [_change(snapshot, p, "deleted") for p in deleted] + [
            _change(snapshot, p, "added") for p in added
        ]
    store = MemoryObjectStore()
    for sha in deleted.values():
        store.add_object(repo.object_store[sha])
    for blob in added.values():
        store.add_object(blob)
    regular = 0o100644
    old_tree = commit_tree(store, [(p.encode(), sha, regular) for p, sha in deleted.items()])
    new_tree = commit_tree(store, [(p.encode(), b.id, regular) for p, b in added.items()])
    # dulwich pairs a score strictly above its threshold; git's 50% means "at least 50"
    detector = RenameDetector(store, rename_threshold=RENAME_THRESHOLD - 1)
    changes: list[dict[str, Any]] = []
    for change in detector.changes_with_renames(old_tree, new_tree):
        old_path = change.old.path.decode() if change.old and change.old.path else None
        new_path = change.new.path.decode() if change.new and change.new.path else None
        if change.type == CHANGE_RENAME and old_path and new_path:
            changes.append(_change(snapshot, new_path, "renamed", old_path))
        elif change.type == CHANGE_DELETE and old_path:
            changes.append(_change(snapshot, old_path, "deleted"))
        elif new_path and change.type in (CHANGE_ADD, "copy"):
            changes.append(_change(snapshot, new_path, "added"))
    return changes


def format_changed(result: dict[str, Any]) -> str:
    """The human rendering of `bank_changed` (spec 04 §9.3)."""
    header = f"since {result['since']} [{result['mode']}"
    if "repo" in result:
        header += f", {result['repo']}"
    lines = [header + "]"]
    if "note" in result:
        lines.append(f"note: {result['note']}")
    lines.append("")
    for change in result["changes"]:
        line = f"{change['changeKind']:<9} {change['path']}"
        if "from" in change:
            line += f"  <- {change['from']}"
        line += f"  [{change.get('docKind') or '-'} / {change.get('layer') or '-'}]"
        lines.append(line)
    lines.append(f"total: {len(result['changes'])}")
    return "\n".join(lines) + "\n"
