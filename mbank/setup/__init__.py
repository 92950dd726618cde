"""`mbank setup TARGET`: wire mbank into the tools around a project, one target at a time.

Each target is a module with `add_arguments(parser)` and `run(args) -> exit code`, listed in
`TARGETS`; `add_setup_commands` turns the table into `mbank setup <target> …`. A new target (an
editor or agent client) is one module and one row here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from mbank.setup import clients, git


class SetupTarget(msgspec.Struct, frozen=True):
    """One thing `mbank setup` can wire: its help line, its options and what it does."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


TARGETS: dict[str, SetupTarget] = {
    **{
        name: SetupTarget(
            client.help, clients.add_client_arguments(name), clients.client_runner(name)
        )
        for name, client in clients.CLIENTS.items()
    },
    "git": SetupTarget(git.HELP, git.add_arguments, git.run),
}


def list_targets(args: argparse.Namespace) -> int:
    """`mbank setup` with no target: what each target writes; exit 0."""
    sys.stdout.write(clients.format_clients())
    return 0


def add_setup_commands(subparsers: Any) -> None:
    """Register `mbank setup <target>` for every target in `TARGETS`."""
    setup = subparsers.add_parser(
        "setup", help="wire a client (claude, cursor, vscode, codex) or git into the project"
    )
    setup.set_defaults(handler=list_targets)
    targets = setup.add_subparsers(dest="setup_target", metavar="TARGET")
    for name, target in TARGETS.items():
        parser = targets.add_parser(name, help=target.help)
        target.add_arguments(parser)
        parser.set_defaults(handler=target.run)
