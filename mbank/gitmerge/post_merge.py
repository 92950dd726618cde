"""`mbank post-merge [--root BANK]`: the validation findings a merge added (issue 18).

Run by the `post-merge` hook that `mbank setup git --post-merge-hook` installs. Both branches
may each be clean and still disagree once merged — each made a document `canonical_for` the same
key, or created the same path — so the hook validates the merged bank and prints the findings
that the bank at `ORIG_HEAD` (ours, before the merge) did not have. The bank as it was is read
from git (`git archive` of its `.md` files into a scratch directory); nothing in the work tree
is written. Findings are compared without their line numbers, which a merge shifts.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from typing import Any

from mbank.model import Finding
from mbank.snapshot import Bank
from mbank.validate import format_validation, summarise, validate

PREVIOUS = "ORIG_HEAD"


def _key(finding: dict[str, Any]) -> tuple[str, str, str, str]:
    return finding["rule"], finding["severity"], finding["path"], finding["message"]


def _git(directory: str, *arguments: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            ["git", "-C", directory, *arguments], capture_output=True, check=False
        )
    except OSError:
        return None


def _previous_findings(root: str) -> list[dict[str, Any]]:
    """The findings of the bank at ORIG_HEAD; none when there is no ORIG_HEAD or no bank."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return []
    work_tree = os.fsdecode(top.stdout.strip())
    prefix = os.path.relpath(os.path.realpath(root), os.path.realpath(work_tree))
    pattern = "**/*.md" if prefix == os.curdir else f"{prefix}/**/*.md"
    archive = _git(work_tree, "archive", "--format=tar", PREVIOUS, "--", f":(glob){pattern}")
    if archive is None or archive.returncode != 0:
        return []
    with tempfile.TemporaryDirectory(prefix="mbank-post-merge-") as scratch:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as bundle:
            bundle.extractall(scratch, filter="data")
        bank = os.path.join(scratch, prefix)
        if not os.path.isdir(bank):
            return []
        findings: list[dict[str, Any]] = validate(Bank(bank).refresh())["findings"]
        return findings


def added_findings(root: str) -> dict[str, Any]:
    """The `validate` result of the findings the bank has now and did not have at ORIG_HEAD."""
    before = {_key(finding) for finding in _previous_findings(root)}
    now = validate(Bank(root).refresh())
    added = [
        Finding(f["rule"], f["severity"], f["path"], f["message"], f.get("line"))
        for f in now["findings"]
        if _key(f) not in before
    ]
    return summarise(added)


def run_post_merge(root: str) -> int:
    """Print the findings the merge added; always exit 0 (a hook cannot undo a merge)."""
    result = added_findings(root)
    if not result["findings"]:
        sys.stdout.write("mbank: the merge added no validation findings.\n")
        return 0
    count = result["total"]
    noun = "finding" if count == 1 else "findings"
    sys.stdout.write(
        f"mbank: the merge added {count} validation {noun}; run `mbank validate` for all:\n"
    )
    sys.stdout.write(format_validation(result))
    return 0
