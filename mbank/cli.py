"""The command line: subcommands over the same core functions the MCP tools call.

Never imports `mcp` except inside the `serve`/`memo` handlers, so read subcommands start fast
(spec 04 §9.1). Exit codes: 0 success, 1 refusal or runtime error, 2 usage error (§9.4).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mbank.cli_writes import CliArgumentError
from mbank.discovery import discover_root, git_top
from mbank.gitmerge.commands import add_git_merge_commands
from mbank.model import RefusalError
from mbank.paths import terminal_text
from mbank.setup import add_setup_commands
from mbank.setup.git import SETUP_GIT_NOTE

if TYPE_CHECKING:  # the CLI imports these lazily, so a read starts fast
    from mbank.read import PathLookup
    from mbank.search import SearchIndex
    from mbank.snapshot import Bank, Snapshot

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A usage error: printed with the usage line, exit code 2."""


Command = tuple[Callable[[Any], None], Callable[[argparse.Namespace], int]]


# --------------------------------------------------------------------------------------------
# Root resolution (spec 04 §9.1)
# --------------------------------------------------------------------------------------------


def no_bank_at(root: str) -> RefusalError:
    """A named root that does not exist: every command but `init` (and the server, which
    offers `bank_init` there) refuses, so a mistyped root never passes a commit gate."""
    from mbank.paths import refuse

    return refuse(
        "no-bank",
        f"No bank at {root}: make one with `mbank init NAME --root {root}`, or pass --root "
        "(or MBANK_ROOT) with the directory of an existing bank.",
    )


def resolve_root(
    args: argparse.Namespace, *, required: bool = False, must_exist: bool = True
) -> str:
    """`--root`, else `MBANK_ROOT`, else discovery (servers require an explicit root)."""
    given = getattr(args, "root", None) or os.environ.get("MBANK_ROOT")
    if given:
        root = os.path.abspath(given)
        if must_exist and not os.path.isdir(root):
            raise no_bank_at(root)
        return root
    if required:
        raise UsageError("--root is required")
    found = discover_root(os.getcwd())
    if found is None:
        raise UsageError("no bank found; pass --root")
    return found


def print_json(value: Any) -> None:
    """Print a result object as the `--json` flag promises: 2-space indent, UTF-8 unescaped."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def print_result(args: argparse.Namespace, result: Any, render: Callable[[Any], str]) -> int:
    """Print a result: the object as JSON with `--json`, else its human rendering; exit 0."""
    if args.json:
        print_json(result)
    else:
        sys.stdout.write(terminal_text(render(result)))
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# stats (CLI only)
# --------------------------------------------------------------------------------------------


def _add_stats(sub: Any) -> None:
    sub.add_parser("stats", help="what the bank holds: documents, contract, edges, layers")


def _run_stats(args: argparse.Namespace) -> int:
    from mbank.stats import bank_stats, format_stats

    bank = _read_bank(args)
    started = time.perf_counter()
    snapshot = bank.refresh()
    elapsed_ms = (time.perf_counter() - started) * 1000
    result = bank_stats(snapshot, elapsed_ms, bank.cache_report())
    return print_result(args, result, format_stats)


# --------------------------------------------------------------------------------------------
# hook (the Stop hook, spec 04 §10): stdlib and dulwich only
# --------------------------------------------------------------------------------------------


def _add_hook(sub: Any) -> None:
    sub.add_parser("hook", help="the end-of-session capture hook (reads Stop JSON)")


def _run_hook(args: argparse.Namespace) -> int:
    from mbank.hook import main as hook_main

    return hook_main(getattr(args, "root", None))


# --------------------------------------------------------------------------------------------
# read, graph, changed, drift (spec 04 §9.2): reads, never write, not even .mbank/
# --------------------------------------------------------------------------------------------


def _add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")


def _int_between(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high]; anything else is a usage error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"{low}-{high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range ({bound})")
        return value

    return parse


def _read_bank(args: argparse.Namespace) -> Any:
    """The bank for a read subcommand, after the interrupted-write notices (spec 04 §9.4)."""
    from mbank.journal import interrupted_notices
    from mbank.projection_cache import cache_for
    from mbank.snapshot import Bank

    root = resolve_root(args)
    bank = Bank(root, cache=cache_for(os.path.realpath(root)))
    for notice in interrupted_notices(bank.root):
        sys.stderr.write(notice + "\n")
    return bank


def _path_lookup(bank: Bank, snapshot: Snapshot) -> PathLookup:
    """How `read` and `graph` name a document: the bank's caller-path rule, and the journal's
    "where did it go" for `Not a document of this bank` (spec 03 §14.9), imported only when a
    path turns out to be no document."""
    from mbank.read import PathLookup

    def note(path: str) -> str | None:
        from mbank.journal import where_did_it_go

        return where_did_it_go(bank.root, path)

    return PathLookup(lambda given: str(bank.relative(given, snapshot)), note)


def _add_read(sub: Any) -> None:
    parser = sub.add_parser("read", help="read documents, whole or one ## section")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="one path, or several (batch)")
    parser.add_argument("--section", help="a level-two heading")
    parser.add_argument(
        "--max-bytes", type=_int_between(1000), help="lower the batch budget (ceiling 40000)"
    )
    parser.add_argument(
        "--frontmatter",
        action="store_true",
        help="with --section, also return the frontmatter and the section list",
    )


def _run_read(args: argparse.Namespace) -> int:
    from mbank.read import MAX_BATCH, format_read, read

    if len(args.paths) > MAX_BATCH:
        raise UsageError(f"read takes at most {MAX_BATCH} paths")
    bank = _read_bank(args)
    snapshot = bank.refresh()
    paths = args.paths[0] if len(args.paths) == 1 else args.paths
    result = read(
        snapshot,
        paths,
        section=args.section,
        max_bytes=args.max_bytes,
        lookup=_path_lookup(bank, snapshot),
        frontmatter=args.frontmatter,
    )
    return print_result(args, result, format_read)


def _add_graph(sub: Any) -> None:
    parser = sub.add_parser("graph", help="walk derived_from up, down or both from a document")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--direction", choices=("up", "down", "both"), default="down")
    parser.add_argument("--depth", type=_int_between(1, 6), default=2)
    parser.add_argument("--limit", type=_int_between(1, 300), default=60)
    parser.add_argument(
        "--no-neighbours", action="store_true", help="do not read across the bank boundary"
    )
    parser.add_argument("--format", choices=("text", "mermaid", "dot"), default="text")


def _run_graph(args: argparse.Namespace) -> int:
    from mbank.graph import graph, render_dot, render_mermaid, render_text

    bank = _read_bank(args)
    snapshot = bank.refresh()
    result = graph(
        snapshot,
        args.path,
        direction=args.direction,
        depth=args.depth,
        limit=args.limit,
        neighbours=not args.no_neighbours,
        lookup=_path_lookup(bank, snapshot),
    )
    if args.format == "mermaid":
        sys.stdout.write(terminal_text(render_mermaid(result)) + "\n")
    elif args.format == "dot":
        sys.stdout.write(terminal_text(render_dot(result)) + "\n")
    elif args.json:
        print_json(result)
    else:
        sys.stdout.write(terminal_text(render_text(result)) + "\n")
    return EXIT_OK


def _add_changed(sub: Any) -> None:
    parser = sub.add_parser("changed", help="what moved since a git ref or an ISO date")
    parser.add_argument("since", metavar="SINCE", help="a git ref (HEAD~5, a tag) or 2026-08-01")


def _run_changed(args: argparse.Namespace) -> int:
    from mbank.changed import changed, format_changed

    result = changed(_read_bank(args).refresh(), args.since)
    return print_result(args, result, format_changed)


def _add_drift(sub: Any) -> None:
    parser = sub.add_parser("drift", help="documents whose anchored code moved on without them")
    parser.add_argument("--threshold-days", type=_int_between(0, 3650), default=90)
    parser.add_argument("--scope", metavar="DIR", help="only documents under this directory")


def _run_drift(args: argparse.Namespace) -> int:
    from mbank.drift import drift, format_drift

    snapshot = _read_bank(args).refresh()
    result = drift(snapshot, threshold_days=args.threshold_days, scope=args.scope)
    return print_result(args, result, format_drift)


# --------------------------------------------------------------------------------------------
# validate (spec 04 §9.2-9.4): a read; `--fail-on` lets it gate a commit
# --------------------------------------------------------------------------------------------


def _add_validate(sub: Any) -> None:
    from mbank.validation import RULES, SEVERITIES

    parser = sub.add_parser("validate", help="check the bank against the rules its dna/ declares")
    parser.add_argument("--scope", metavar="DIR", help="only findings under this directory")
    parser.add_argument("--severity", choices=SEVERITIES, help="keep only this severity")
    parser.add_argument("--rule", choices=RULES, metavar="ID", help="keep only this rule")
    parser.add_argument("--summary", action="store_true", help="print only the totals")
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        help="exit 1 when a finding of this severity (or worse) is reported",
    )


def _run_validate(args: argparse.Namespace) -> int:
    from mbank.validate import fails, format_validation, validate

    snapshot = _read_bank(args).refresh()
    result = validate(snapshot, scope=args.scope, severity=args.severity, rule=args.rule)
    grouped = args.rule is None  # `--rule R` asks for every finding of R
    print_result(
        args, result, lambda found: format_validation(found, summary=args.summary, grouped=grouped)
    )
    return EXIT_REFUSED if fails(result, args.fail_on) else EXIT_OK


# --------------------------------------------------------------------------------------------
# history (a read): the journal (spec 03 §14.8); undo is a declared write tool
# --------------------------------------------------------------------------------------------


def _add_history(sub: Any) -> None:
    parser = sub.add_parser("history", help="the journal of applied writes, newest first")
    parser.add_argument("--path", metavar="P", help="records touching P (source or destination)")
    parser.add_argument("--limit", type=_int_between(1, 1000), default=20)


def _run_history(args: argparse.Namespace) -> int:
    from mbank.journal import format_history, history, interrupted_notices
    from mbank.snapshot import Bank

    bank = Bank(resolve_root(args))
    path = None
    if args.path is not None:
        path = bank.relative(args.path, bank.refresh())
    for notice in interrupted_notices(bank.root):
        sys.stderr.write(notice + "\n")
    result = history(bank.root, path=path, limit=args.limit)
    return print_result(args, result, format_history)


# --------------------------------------------------------------------------------------------
# route and search (spec 04 §9.2-9.4): reads; the index lives for this one invocation
# --------------------------------------------------------------------------------------------

READ_LAYERS = ("dna", "knowledge", "decision", "delivery", "flow", "other")


def _text_between(low: int, high: int | None) -> Callable[[str], str]:
    """An argparse type: a string of `low` to `high` characters (no ceiling when None)."""

    def parse(text: str) -> str:
        if len(text) < low or (high is not None and len(text) > high):
            bound = f"{low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"needs {bound} characters")
        return text

    return parse


def _add_filters(parser: argparse.ArgumentParser) -> None:
    """route's and search's exact filters."""
    parser.add_argument("--kind", help="exact doc_kind filter")
    parser.add_argument("--layer", choices=READ_LAYERS, help="exact layer filter")


def _add_route(sub: Any) -> None:
    parser = sub.add_parser("route", help="which documents answer this question")
    # The MCP schema bounds a question to 1,000 characters; the CLI passes any length on to
    # the same function, which answers normally (07 §4.3).
    parser.add_argument("question", metavar="QUESTION", type=_text_between(2, None))
    parser.add_argument("--limit", type=_int_between(1, 25), default=5)
    _add_filters(parser)


def _indexed(bank: Bank) -> tuple[Snapshot, SearchIndex]:
    """The bank's snapshot and search index as a server's warm-up makes them: from the
    projection cache where it can be, which is then written back if anything moved (outside
    the project). A route at 10,000 documents took 8 s rebuilding the index every time."""
    from mbank.projection_cache import warm_start
    from mbank.search import SearchIndex

    index, pending = warm_start(bank, SearchIndex())
    if pending is not None and bank.cache is not None:
        bank.cache.write(pending)
    return bank.snapshot, index  # the snapshot `warm_start` refreshed, not a second walk


def _run_route(args: argparse.Namespace) -> int:
    from mbank.route import format_route, route

    snapshot, index = _indexed(_read_bank(args))
    result = route(
        snapshot,
        index,
        args.question,
        limit=args.limit,
        kind=args.kind,
        layer=args.layer,
    )
    return print_result(args, result, format_route)


def _add_search(sub: Any) -> None:
    parser = sub.add_parser(
        "search",
        help="full-text search of document bodies",
        description="Full-text search of document bodies. A query with punctuation is a "
        "literal: the documents holding it as written come first (the defining one first), "
        "word-piece matches after, labelled.",
        epilog="A query that starts with '-' goes after '--', options before it: "
        "mbank search --limit 3 -- --no-detect",
    )
    parser.add_argument("query", metavar="QUERY", type=_text_between(2, None))
    parser.add_argument("--limit", type=_int_between(1, 50), default=10)
    _add_filters(parser)
    parser.add_argument("--status", help="exact status filter")


def _run_search(args: argparse.Namespace) -> int:
    from mbank.search import format_search, search

    bank = _read_bank(args)
    started = time.perf_counter()
    snapshot, index = _indexed(bank)
    elapsed_ms = (time.perf_counter() - started) * 1000
    result = search(
        snapshot,
        index,
        args.query,
        limit=args.limit,
        kind=args.kind,
        layer=args.layer,
        status=args.status,
    )

    def render(found: Any) -> str:
        # the timing line is for the person at the terminal, not for a pipe (issue 15)
        text = format_search(found, len(index.indexed), index.term_count(), elapsed_ms)
        timing, _, hits = text.partition("\n")
        sys.stderr.write(timing + "\n")
        return hits

    return print_result(args, result, render)


# --------------------------------------------------------------------------------------------
# The write subcommands: one per declared write tool (mbank.reducers.registry, 04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def _write_command(tool: Any) -> Command:
    """(adds its parser, runs it) for one declared write tool; `--dry-run` prints the diff."""
    from mbank.cli_writes import add_write_command, write_arguments

    def add(sub: Any) -> None:
        add_write_command(sub, tool)

    def run(args: argparse.Namespace) -> int:
        from mbank.snapshot import Bank
        from mbank.writes import run_write

        arguments = write_arguments(tool, args)
        try:
            root = resolve_root(args, must_exist=not tool.creates_root)
        except UsageError:
            if not tool.creates_root:
                raise
            root = os.path.abspath("memory_bank")  # no bank found: init makes one here (§9.1)
        if tool.creates_root:
            refuse_nested_bank(root)
        governance = getattr(args, "governance", False)  # the flag of mbank.cli_writes
        result = run_write(
            tool, Bank(root), arguments, dry_run=args.dry_run, via="cli", governance=governance
        )
        status = print_result(args, result, tool.render)
        # a new bank in a git work tree: each clone registers the merge drivers once (issue 18)
        if tool.creates_root and not args.json and not args.dry_run and git_top(root) is not None:
            sys.stdout.write(SETUP_GIT_NOTE + "\n")
        return status

    return add, run


def refuse_nested_bank(root: str) -> None:
    """`init` of a second bank inside a bank, or beside one in the same git work tree, is
    refused naming the bank there (issue 15): one repository, one bank."""
    from mbank.discovery import BANK_MARK, upwards
    from mbank.paths import refuse

    parent = os.path.dirname(root)
    in_repository = discover_root(parent) if git_top(parent) is not None else None
    around = (d for d in upwards(parent) if os.path.isdir(os.path.join(d, BANK_MARK)))
    found = in_repository or next(around, None)
    if found is not None and os.path.abspath(found) != root:
        raise refuse(
            "bank-exists-here",
            f"This repository already has a bank at {found}; use it (--root {found}) "
            "instead of making a second one inside it.",
        )


def _add_inbox(sub: Any) -> None:
    sub.add_parser("inbox", help="the notes waiting in _inbox/, oldest first")


def _run_inbox(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from mbank.inbox import format_inbox, inbox_listing

    result = inbox_listing(_read_bank(args).refresh(), datetime.now(UTC))
    return print_result(args, result, format_inbox)


# --------------------------------------------------------------------------------------------
# contract-diff (a read: 04 §2.19)
# --------------------------------------------------------------------------------------------


def _add_contract_diff(sub: Any) -> None:
    parser = sub.add_parser(
        "contract-diff", help="compare this bank's dna/ contract with another bank's"
    )
    parser.add_argument(
        "other",
        nargs="?",
        metavar="OTHER_BANK",
        help="a bank root, relative to the project (the bank's parent); default: the starter",
    )


def _run_contract_diff(args: argparse.Namespace) -> int:
    from mbank.contract_diff import contract_diff, format_contract_diff

    result = contract_diff(_read_bank(args).refresh(), args.other)
    return print_result(args, result, format_contract_diff)


# --------------------------------------------------------------------------------------------
# serve (and the bare form), memo: the MCP servers (spec 04 §9.6, 06); `mcp` is imported only
# inside these handlers
# --------------------------------------------------------------------------------------------


def _add_serve(sub: Any) -> None:
    parser = sub.add_parser("serve", help="serve the bank over MCP (stdio)")
    parser.add_argument(
        "--off",
        action="append",
        dest="serve_off",
        default=[],
        metavar="PATH",
        help="serve nothing when the bank lies under PATH (repeatable)",
    )


def _run_serve(args: argparse.Namespace) -> int:
    import gc

    from mbank.projection_cache import prefetch_for

    # The cyclic collector would walk the SDK's freshly imported heap again and again and
    # find next to nothing (70-180 ms of a server's start, issue 17): it waits until the
    # server is up and warm (`mbank.server.serve` turns it back on).
    gc.disable()
    root = resolve_root(args, required=True, must_exist=False)
    prefetch_for(os.path.realpath(root))  # read beside the SDK's import (issue 17)
    from mbank.server import serve

    off = [*getattr(args, "off", []), *getattr(args, "serve_off", [])]
    return serve(root, off)


def _add_memo(sub: Any) -> None:
    parser = sub.add_parser("memo", help="the working-memory MCP server (its own options)")

    def pass_through(
        arguments: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # everything after `memo` belongs to the memo server's own parser
        return argparse.Namespace(memo_args=list(arguments or [])), []

    setattr(parser, "parse_known_args", pass_through)  # noqa: B010 - replaces a method


MINILM_MISSING = (
    "mbank memo: --embedder minilm needs the optional `semantic` extra (sentence-transformers), "
    "which is not installed; install it with `pip install '.[semantic]'` in a clone of mbank, "
    "or leave the option out to use the built-in hashing embedder."
)


def _asks_for_minilm(memo_args: Sequence[str]) -> bool:
    pairs = itertools.pairwise(memo_args)  # each option with the word after it
    return "--embedder=minilm" in memo_args or ("--embedder", "minilm") in pairs


def _run_memo(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    from mbank.memo.server import main as memo_main

    memo_args = list(getattr(args, "memo_args", []))
    # the embedder imports its extra only once the server starts: say so before, in one line
    if _asks_for_minilm(memo_args) and find_spec("sentence_transformers") is None:
        sys.stderr.write(MINILM_MISSING + "\n")
        return EXIT_USAGE
    return memo_main(memo_args)


def _add_surface_cost(sub: Any) -> None:
    sub.add_parser(
        "surface-cost",
        help="what each surface costs on every request (spawns mbank serve)",
    )


def _run_surface_cost(args: argparse.Namespace) -> int:
    from mbank.budget import format_surface_cost, surface_cost
    from mbank.surface import has_bank

    root = resolve_root(args)
    if not has_bank(root):
        raise UsageError(f"no bank at {root}: the full surface is measured on an existing bank")
    result = surface_cost(root)
    return print_result(args, result, format_surface_cost)


def _add_demo(sub: Any) -> None:
    parser = sub.add_parser(
        "demo", help="seed a temporary bank and walk an agent's session through the server"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary bank")


def _run_demo(args: argparse.Namespace) -> int:
    from mbank.demo import main as demo_main

    return demo_main(keep=args.keep)


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------


def _commands() -> dict[str, Command]:
    """One entry per subcommand: (adds its parser, runs it). Order is the order of `--help`;
    the write subcommands come from the registry of write tools, after `history`."""
    from mbank.reducers.registry import WRITE_TOOLS

    commands: dict[str, Command] = {}
    for name, command in _OTHER_COMMANDS.items():
        commands[name] = command
        if name == "history":
            commands.update({tool.command: _write_command(tool) for tool in WRITE_TOOLS})
    return commands


_OTHER_COMMANDS: dict[str, Command] = {
    "stats": (_add_stats, _run_stats),
    "route": (_add_route, _run_route),
    "read": (_add_read, _run_read),
    "search": (_add_search, _run_search),
    "graph": (_add_graph, _run_graph),
    "changed": (_add_changed, _run_changed),
    "drift": (_add_drift, _run_drift),
    "validate": (_add_validate, _run_validate),
    "contract-diff": (_add_contract_diff, _run_contract_diff),
    "inbox": (_add_inbox, _run_inbox),
    "history": (_add_history, _run_history),
    "hook": (_add_hook, _run_hook),
    "serve": (_add_serve, _run_serve),
    "memo": (_add_memo, _run_memo),
    "surface-cost": (_add_surface_cost, _run_surface_cost),
    "demo": (_add_demo, _run_demo),
}

COMMANDS = _commands()

UPSTREAM_FLAGS = {
    "--stats": "stats",
    "--route": "route",
    "--read": "read",
    "--validate": "validate",
    "--graph": "graph",
    "--search": "search",
    "--changed": "changed",
    "--create": "create",
    "--promote": "promote",
    "--list-inbox": "inbox",
    "--init": "init",
    "--materialize-flows": "materialize-flows",
}


# The arguments of the running `main()` call, for the upstream-flag hint in usage errors.
_ARGUMENTS_SEEN: list[str] = []

# Frontmatter may nest ~1,000 levels deep (libyaml's own limit); turning such data into JSON
# recurses once per level, past Python's default limit of 1,000 frames (spec 07 §4.3).
RECURSION_LIMIT = 10_000


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's hook for usage errors
        self.print_usage(sys.stderr)
        hint = ""
        for flag, command in UPSTREAM_FLAGS.items():
            if flag in _ARGUMENTS_SEEN:
                hint = f"\nmbank: {flag} is now a subcommand: mbank {command} …"
                break
        sys.stderr.write(f"mbank: error: {message}{hint}\n")
        raise SystemExit(EXIT_USAGE)


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--root", default=default, help="the bank directory")
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print the result object as JSON",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="do not use or write the projection cache (also MBANK_NO_CACHE=1)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The `mbank` argument parser with every registered subcommand."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own_version = version("mbank")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        own_version = "0+unknown"
    parser = _Parser(prog="mbank", description="A governed markdown memory bank for agents.")
    parser.add_argument("--version", action="version", version=f"mbank {own_version}")
    _global_options(parser, suppress=False)
    parser.add_argument(
        "--off", action="append", default=[], help="serve nothing for this bank (repeatable)"
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for add, _run in COMMANDS.values():
        add(sub)
    add_setup_commands(sub)  # mbank setup <target> (mbank/setup/)
    add_git_merge_commands(sub)  # mbank merge-driver, mbank post-merge (mbank/gitmerge/)
    for name, subparser in sub.choices.items():
        if name in COMMANDS:
            _global_options(subparser, suppress=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `mbank` console script."""
    parser = build_parser()
    _ARGUMENTS_SEEN[:] = list(sys.argv[1:] if argv is None else argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    args = parser.parse_args(argv)
    if args.no_cache:
        from mbank.projection_cache import turn_off

        turn_off()
    try:
        if args.command is None:
            if "serve" in COMMANDS:
                return COMMANDS["serve"][1](args)
            parser.print_usage(sys.stderr)
            return EXIT_USAGE
        if hasattr(args, "handler"):  # subcommands registered by a module's add_*_commands
            return int(args.handler(args))
        return COMMANDS[args.command][1](args)
    except (UsageError, CliArgumentError) as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"mbank: {exc}\n")
        return EXIT_USAGE
    except RefusalError as exc:
        sys.stderr.write(f"mbank: {terminal_text(exc.refusal.message)}\n")
        return EXIT_REFUSED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
