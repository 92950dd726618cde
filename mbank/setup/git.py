"""`mbank setup git [--project DIR] [--dry-run] [--post-merge-hook]` (issue 18).

Parallel branches of one bank conflict on the section indexes and the journal, because every
write appends to them at the same place. This target routes those files to mbank's merge
drivers: a marked block in the repository's `.gitattributes` (committed, shared) names each
registry and `.mbank/journal.jsonl`, and the repository's own git config (never committed:
git takes no driver command from a file in the tree) says which command merges them. Each clone
runs it once. Optionally a `post-merge` hook prints the validation findings a merge added.

Which files are registries: the root index, the index of each of the eleven known sections
(also those built on first use, which two branches may both create), of every directory the
bank's layer table declares, and every document whose `doc_function` is `index`. A registry made
later (a new feature package) is covered by running the command again.

Only the standard library is imported with the CLI; the bank's modules load when the command
runs. Running it twice changes no byte; `--dry-run` prints the diff of every file it would
change and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING

import msgspec

from mbank.discovery import discover_root
from mbank.model import INDEX_FUNCTION
from mbank.setup.file_changes import FileChange, read_text, show_or_write, write_text

if TYPE_CHECKING:
    from mbank.snapshot import Snapshot

HELP = "merge the bank's indexes and journal by entries in git (once per clone)"
INDEX_DRIVER = "mbank-index"
JOURNAL_DRIVER = "mbank-journal"
BLOCK_START = "# >>> mbank: merge drivers (written by `mbank setup git`; run it again to refresh)"
BLOCK_END = "# <<< mbank"
HOOK_MARKER = "# mbank post-merge hook (written by `mbank setup git --post-merge-hook`)"
NOT_INDEXED_DIRS = frozenset({"_inbox"})
SETUP_GIT_NOTE = (
    "This bank is in a git work tree: run `mbank setup git` once in each clone, so that "
    "parallel branches merge its indexes and journal without conflicts."
)
ONCE_PER_CLONE = (
    "Each clone runs `mbank setup git` once: git never takes driver commands from a committed file."
)


class GitPlace(msgspec.Struct, frozen=True):
    """Where the repository keeps what this command writes."""

    top: str
    config: str
    hooks: str
    prefix: str  # the bank's directory relative to `top`, "" at the top


# --------------------------------------------------------------------------------------------
# Pure: what the files should say
# --------------------------------------------------------------------------------------------


def registry_paths(snapshot: Snapshot) -> tuple[str, ...]:
    """The bank paths merged by `mbank merge-driver index`, in code-point order."""
    from mbank.catalogue import ROOT_INDEX, SECTIONS

    directories = {section.dir for section in SECTIONS}
    directories.update(d for d in snapshot.layers.by_dir if d not in NOT_INDEXED_DIRS)
    paths = {ROOT_INDEX, *(f"{directory}/{ROOT_INDEX}" for directory in directories)}
    paths.update(
        path
        for path, doc in snapshot.docs.items()
        if doc.doc_function == INDEX_FUNCTION and doc.text_ok
    )
    return tuple(sorted(paths))


def _pattern(path: str) -> str:
    """A path as a gitattributes pattern: literal, quoted the way git reads quoted names."""
    # The leading slash anchors the pattern: a bare `README.md` would match at every depth.
    escaped = "/" + "".join(f"\\{char}" if char in "*?[\\" else char for char in path)
    if any(char.isspace() or char == '"' for char in escaped):
        return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def attributes_block(prefix: str, registries: tuple[str, ...]) -> list[str]:
    """The lines of the marked `.gitattributes` block for a bank at `prefix`."""
    from mbank.journal import JOURNAL_FILE, MBANK_DIR

    join = (lambda path: f"{prefix}/{path}") if prefix else (lambda path: path)
    lines = [BLOCK_START]
    lines += [f"{_pattern(join(path))} merge={INDEX_DRIVER}" for path in registries]
    lines.append(f"{_pattern(join(f'{MBANK_DIR}/{JOURNAL_FILE}'))} merge={JOURNAL_DRIVER}")
    lines.append(BLOCK_END)
    return lines


def with_block(current: str | None, block: list[str]) -> str:
    """`.gitattributes` with mbank's block replaced in place, or appended when absent."""
    text = current or ""
    lines = text.split("\n")
    if BLOCK_START in lines:
        start = lines.index(BLOCK_START)
        end = lines.index(BLOCK_END, start) if BLOCK_END in lines[start:] else start
        lines[start : end + 1] = block
        return "\n".join(lines)
    if text and not text.endswith("\n"):
        text += "\n"
    separator = "\n" if text.strip() else ""
    return text + separator + "\n".join(block) + "\n"


def driver_settings(command: str) -> dict[str, str]:
    """The git config keys that define the two drivers, for `command` (how to run mbank)."""
    return {
        f"merge.{INDEX_DRIVER}.name": "mbank: merge a bank index by its entries",
        f"merge.{INDEX_DRIVER}.driver": f"{command} merge-driver index %O %A %B %P",
        f"merge.{JOURNAL_DRIVER}.name": "mbank: merge the bank journal by record id",
        f"merge.{JOURNAL_DRIVER}.driver": f"{command} merge-driver journal %O %A %B %P",
    }


def hook_text(command: str, prefix: str) -> str:
    """The `post-merge` hook: the findings the merge added, from the work tree's top."""
    root = shlex.quote(prefix or ".")
    return (
        "#!/bin/sh\n"
        f"{HOOK_MARKER}\n"
        "# Prints the validation findings the merge added; never fails the merge.\n"
        f"{command} post-merge --root {root} || true\n"
    )


def running_mbank() -> str:
    """A shell command that runs this very mbank: its executable, else this Python `-m mbank`."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "mbank" and os.path.isfile(script):
        return shlex.quote(os.path.abspath(script))
    return f"{shlex.quote(sys.executable)} -m mbank"


# --------------------------------------------------------------------------------------------
# The shell: asking git where things are, and writing them
# --------------------------------------------------------------------------------------------


def _git(directory: str, *arguments: str) -> str | None:
    try:
        completed = subprocess.run(
            ["git", "-C", directory, *arguments], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


def git_place(project: str, bank_root: str) -> GitPlace:
    """The repository around `project`, or a refusal naming the fix."""
    from mbank.paths import is_within, refuse

    if shutil.which("git") is None:
        raise refuse("setup-no-git", "git is not installed; install git, then run this again.")
    top = _git(project, "rev-parse", "--show-toplevel")
    common = _git(project, "rev-parse", "--path-format=absolute", "--git-common-dir")
    hooks = _git(project, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
    if top is None or common is None or hooks is None:
        raise refuse(
            "setup-not-a-repository",
            f"{project} is not inside a git work tree; run `git init` there first, "
            "or pass --project DIR.",
        )
    real_bank, real_top = os.path.realpath(bank_root), os.path.realpath(top)
    if not is_within(real_bank, real_top):
        raise refuse(
            "setup-bank-outside",
            f"The bank {bank_root} is not inside the work tree {top}; "
            "pass --root with the bank of this repository.",
        )
    prefix = os.path.relpath(real_bank, real_top)
    prefix = "" if prefix == os.curdir else prefix.replace(os.sep, "/")
    return GitPlace(top, os.path.join(common, "config"), hooks, prefix)


def config_change(config: str, settings: dict[str, str], label: str) -> FileChange:
    """The git config file after setting `settings`, computed by git on a copy."""
    before = read_text(config)
    with tempfile.TemporaryDirectory(prefix="mbank-setup-") as scratch:
        copy = os.path.join(scratch, "config")
        if before is not None:
            shutil.copyfile(config, copy)
        for key, value in settings.items():
            if _git(scratch, "config", "--file", copy, "--get", key) != value:
                _git(scratch, "config", "--file", copy, key, value)
        after = read_text(copy) or ""
    return FileChange(config, label, before, after)


def planned_changes(args: argparse.Namespace) -> tuple[GitPlace, list[FileChange]]:
    """Every file `setup git` would write, before and after."""
    from mbank.paths import refuse
    from mbank.snapshot import Bank

    project = os.path.abspath(args.project or os.getcwd())
    given = getattr(args, "root", None) or os.environ.get("MBANK_ROOT")
    bank_root = os.path.abspath(given) if given else discover_root(project)
    if bank_root is None or not os.path.isdir(bank_root):
        raise refuse(
            "setup-no-bank",
            f"No bank found in {project}; run `mbank init NAME` first, or pass --root BANK.",
        )
    place = git_place(project, bank_root)
    snapshot = Bank(bank_root).refresh()
    command = running_mbank()
    attributes = os.path.join(place.top, ".gitattributes")
    current = read_text(attributes)
    block = attributes_block(place.prefix, registry_paths(snapshot))
    changes = [FileChange(attributes, ".gitattributes", current, with_block(current, block))]
    config_label = os.path.relpath(place.config, place.top).replace(os.sep, "/")
    changes.append(config_change(place.config, driver_settings(command), config_label))
    if args.post_merge_hook:
        hook = os.path.join(place.hooks, "post-merge")
        existing = read_text(hook)
        if existing is not None and HOOK_MARKER not in existing:
            raise refuse(
                "setup-hook-exists",
                f"{hook} already exists and mbank did not write it; add the line "
                f"`{command} post-merge --root {shlex.quote(place.prefix or '.')}` to it by hand.",
            )
        changes.append(
            FileChange(hook, "post-merge hook", existing, hook_text(command, place.prefix))
        )
    return place, changes


def run(args: argparse.Namespace) -> int:
    """`mbank setup git`: write (or, with --dry-run, show) every change; exit 0."""
    place, changes = planned_changes(args)
    settings = driver_settings(running_mbank())

    def apply(change: FileChange) -> str:
        if change.path != place.config:
            write_text(change.path, change.after, executable=change.label == "post-merge hook")
            return f"wrote {change.path}\n"
        for key, value in settings.items():
            if _git(place.top, "config", "--file", change.path, "--get", key) != value:
                _git(place.top, "config", "--file", change.path, key, value)
        return f"registered the merge drivers in {change.path}\n"

    unchanged = f"git is already set up for the bank in {place.top}; nothing to change.\n"
    out = show_or_write(changes, dry_run=args.dry_run, apply=apply, unchanged=unchanged)
    out.append(ONCE_PER_CLONE + "\n")
    sys.stdout.write("".join(out))
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `mbank setup git`."""
    parser.add_argument("--project", metavar="DIR", help="the git work tree (default: here)")
    parser.add_argument("--root", default=argparse.SUPPRESS, help="the bank (default: found)")
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    parser.add_argument(
        "--post-merge-hook",
        action="store_true",
        help="also install a post-merge hook that prints the findings a merge added",
    )
