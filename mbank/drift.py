"""`bank_drift`: documents whose `anchors:` code moved on in git long after the document did.

Spec 02 §9. Anchors are repository-relative code paths written by hand; nothing is inferred.
The commit dates come from ONE batched walk over the history reachable from HEAD
(`gitrepo.last_touched`) for every anchor and every anchored document at once, never one
walker per path. Whether an anchor still exists is asked of the work tree.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from mbank import gitrepo
from mbank.model import Doc
from mbank.paths import in_scope
from mbank.paths import normalise_scope as normalise_scope
from mbank.projection import Snapshot

DEFAULT_THRESHOLD_DAYS = 90
MAX_THRESHOLD_DAYS = 3650
DAY = 86_400

NO_GIT_NOTE = (
    "This bank is not inside a git repository, so there are no commit dates to compare. "
    "File modification times would answer a different question."
)


def _no_anchors_note(scope: str | None) -> str:
    where = f"under {scope}/" if scope is not None else "in this bank"
    return (
        f"No document {where} declares anchors:, so there is nothing to compare. Add anchors: "
        "with repository-relative code paths (files or directories) to the documents that "
        "describe code; they are the only thing bank_drift reads."
    )


def _anchor_path(anchor: str) -> str | None:
    """The anchor as a normalised repository path, or None when it escapes the repository."""
    if anchor.startswith("/"):
        return None
    normal = posixpath.normpath(anchor)
    if normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal


def _pair(doc: Doc, anchor: str) -> dict[str, Any]:
    return {"path": doc.path, "title": doc.title, "status": doc.status, "anchor": anchor}


def drift(
    snapshot: Snapshot,
    *,
    threshold_days: int = DEFAULT_THRESHOLD_DAYS,
    scope: str | None = None,
) -> dict[str, Any]:
    """`bank_drift`: `{mode, repo?, thresholdDays, anchored, unanchored, drifted, missing, note?}`.

    `threshold_days` outside 0–3650 raises ValueError (the surface's schema bounds it first).
    """
    if not 0 <= threshold_days <= MAX_THRESHOLD_DAYS:
        raise ValueError("thresholdDays must be between 0 and 3650")
    where = normalise_scope(scope)
    docs = [doc for path, doc in snapshot.docs.items() if in_scope(path, where)]
    anchored = [doc for doc in docs if doc.anchors]
    result: dict[str, Any] = {"mode": "none", "thresholdDays": threshold_days}
    counts = {"anchored": len(anchored), "unanchored": len(docs) - len(anchored)}
    empty: dict[str, Any] = {**counts, "drifted": [], "missing": []}
    if not anchored:
        return {**result, **empty, "note": _no_anchors_note(where)}
    found = gitrepo.open_bank_repo(snapshot.real_root)
    if found is None:
        return {**result, **empty, "note": NO_GIT_NOTE}
    with found.repo as repo:
        wanted: dict[str, str | None] = {
            anchor: _anchor_path(anchor) for doc in anchored for anchor in doc.anchors
        }
        doc_paths = {doc.path: gitrepo.join_repo_path(found.prefix, doc.path) for doc in anchored}
        code_paths = {path for path in wanted.values() if path is not None}
        head = gitrepo.head_commit(repo)
        by_file: dict[str, gitrepo.Touch] = {}
        by_directory: dict[str, gitrepo.Touch] = {}
        if head is not None:
            by_file, by_directory = gitrepo.last_touched(
                repo, head, code_paths | set(doc_paths.values()), code_paths
            )
    drifted: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for doc in anchored:
        doc_touch = by_file.get(doc_paths[doc.path])
        for anchor in doc.anchors:
            path = wanted[anchor]
            if path is None or not os.path.exists(os.path.join(found.tree, path)):
                missing.append({**_pair(doc, anchor), "missing": True})
                continue
            code_touch = by_file.get(path) or by_directory.get(path)
            if code_touch is None or doc_touch is None:
                continue
            gap = code_touch.time - doc_touch.time
            if gap > threshold_days * DAY:
                drifted.append(
                    {
                        **_pair(doc, anchor),
                        "docTouched": gitrepo.iso_time(doc_touch.time, doc_touch.offset),
                        "codeTouched": gitrepo.iso_time(code_touch.time, code_touch.offset),
                        "aheadDays": gap // DAY,
                    }
                )
    drifted.sort(key=lambda pair: (-pair["aheadDays"], pair["path"], pair["anchor"]))
    missing.sort(key=lambda pair: (pair["path"], pair["anchor"]))
    return {
        "mode": "git",
        "repo": found.tree,
        "thresholdDays": threshold_days,
        **counts,
        "drifted": drifted,
        "missing": missing,
    }


def format_drift(result: dict[str, Any]) -> str:
    """The human rendering of `bank_drift` (spec 04 §9.3).

    `drifted:` and `missing:` head their blocks even when empty, so the shape never changes;
    dates are the calendar dates of the ISO times (in the committer's offset).
    """
    mode = result["mode"] + (f", {result['repo']}" if "repo" in result else "")
    lines = [
        f"drift [{mode}]  threshold {result['thresholdDays']} days  "
        f"anchored {result['anchored']}, unanchored {result['unanchored']}"
    ]
    if "note" in result:
        lines.append(f"note: {result['note']}")
    lines.append("drifted:")
    for pair in result["drifted"]:
        lines.append(
            f"{pair['aheadDays']:>5}d  {pair['path']}  anchor {pair['anchor']}  "
            f"(doc {pair['docTouched'][:10]}, code {pair['codeTouched'][:10]})"
        )
    lines.append("missing:")
    for pair in result["missing"]:
        lines.append(f"  {pair['path']}  anchor {pair['anchor']}  (no longer exists)")
    lines.append(f"total: {len(result['drifted']) + len(result['missing'])}")
    return "\n".join(lines) + "\n"
