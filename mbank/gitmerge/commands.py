"""The git-facing subcommands: `mbank merge-driver` and `mbank post-merge`.

Both are run by git (the drivers and the hook that `mbank setup git` installs), not typed by
people; `add_git_merge_commands` registers them with the CLI in one call. The merge code is
imported only when a command runs, so that every other subcommand starts as fast as before.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from mbank.discovery import discover_root
from mbank.gitmerge import KINDS


def _run_merge_driver(args: argparse.Namespace) -> int:
    from mbank.gitmerge.driver import run_merge_driver

    name = args.name if args.name is not None else args.ours
    return run_merge_driver(args.kind, args.base, args.ours, args.theirs, name)


def _run_post_merge(args: argparse.Namespace) -> int:
    from mbank.gitmerge.post_merge import run_post_merge
    from mbank.paths import refuse

    given = getattr(args, "root", None) or os.environ.get("MBANK_ROOT")
    root = os.path.abspath(given) if given else discover_root(os.getcwd())
    if root is None or not os.path.isdir(root):
        raise refuse("post-merge-no-bank", "No bank found here; pass --root BANK.")
    return run_post_merge(root)


def add_git_merge_commands(subparsers: Any) -> None:
    """Register `mbank merge-driver` and `mbank post-merge`."""
    driver = subparsers.add_parser(
        "merge-driver", help="the merge driver git runs for indexes and the journal"
    )
    driver.add_argument("kind", choices=KINDS, help="what the file is")
    driver.add_argument("base", metavar="O", help="the common ancestor's version (git's %%O)")
    driver.add_argument("ours", metavar="A", help="ours, overwritten with the result (%%A)")
    driver.add_argument("theirs", metavar="B", help="theirs (%%B)")
    driver.add_argument("name", metavar="P", nargs="?", help="the file's path, for messages (%%P)")
    driver.set_defaults(handler=_run_merge_driver)
    hook = subparsers.add_parser(
        "post-merge", help="print the validation findings the last merge added (a git hook)"
    )
    hook.add_argument("--root", default=argparse.SUPPRESS, help="the bank directory")
    hook.set_defaults(handler=_run_post_merge)
