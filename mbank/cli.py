"""The command line: subcommands over the same core functions the MCP tools call.

Never imports `mcp` except inside the `serve`/`memo` handlers, so read subcommands start fast
(spec 04 §9.1). Exit codes: 0 success, 1 refusal or runtime error, 2 usage error (§9.4).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from mbank.discovery import discover_root
from mbank.model import RefusalError

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A usage error: printed with the usage line, exit code 2."""


# --------------------------------------------------------------------------------------------
# Root resolution (spec 04 §9.1)
# --------------------------------------------------------------------------------------------


def resolve_root(args: argparse.Namespace, *, required: bool = False) -> str:
    """`--root`, else `MBANK_ROOT`, else discovery (servers require an explicit root)."""
    given = getattr(args, "root", None) or os.environ.get("MBANK_ROOT")
    if given:
        return os.path.abspath(given)
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
        sys.stdout.write(render(result))
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


def _journal_note(root: str) -> Callable[[str], str | None]:
    """The journal's "where did it go" for `Not a document of this bank` (spec 03 §14.9)."""

    def note(path: str) -> str | None:
        from mbank.journal import where_did_it_go

        return where_did_it_go(root, path)

    return note


def _add_read(sub: Any) -> None:
    parser = sub.add_parser("read", help="read documents, whole or one ## section")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="one path, or several (batch)")
    parser.add_argument("--section", help="a level-two heading")
    parser.add_argument(
        "--max-bytes", type=_int_between(1000), help="lower the batch budget (ceiling 40000)"
    )


def _run_read(args: argparse.Namespace) -> int:
    from mbank.read import MAX_BATCH, format_read, read_batch, read_single

    if len(args.paths) > MAX_BATCH:
        raise UsageError(f"read takes at most {MAX_BATCH} paths")
    bank = _read_bank(args)
    snapshot = bank.refresh()

    def relative(given: str) -> str:
        return str(bank.relative(given, snapshot))

    note = _journal_note(bank.root)
    if len(args.paths) == 1:
        result = read_single(
            snapshot,
            args.paths[0],
            section=args.section,
            relative=relative,
            not_a_document_note=note,
        )
    else:
        result = read_batch(
            snapshot,
            args.paths,
            section=args.section,
            max_bytes=args.max_bytes,
            relative=relative,
            not_a_document_note=note,
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
        relative=lambda given: bank.relative(given, snapshot),
        not_a_document_note=_journal_note(bank.root),
    )
    if args.format == "mermaid":
        sys.stdout.write(render_mermaid(result) + "\n")
    elif args.format == "dot":
        sys.stdout.write(render_dot(result) + "\n")
    elif args.json:
        print_json(result)
    else:
        sys.stdout.write(render_text(result) + "\n")
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
    print_result(args, result, lambda found: format_validation(found, summary=args.summary))
    return EXIT_REFUSED if fails(result, args.fail_on) else EXIT_OK


# --------------------------------------------------------------------------------------------
# history (a read) and undo (a write; CLI only): the journal (spec 03 §14.8, §14.10)
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


def _add_undo(sub: Any) -> None:
    parser = sub.add_parser("undo", help="revert the last journaled write (or --id ID)")
    parser.add_argument("--id", dest="record_id", metavar="ID", help="the record to undo")
    _add_dry_run(parser)


def _run_undo(args: argparse.Namespace) -> int:
    from mbank.reducers.undo import format_undo
    from mbank.snapshot import Bank
    from mbank.writes import run_undo

    result = run_undo(Bank(resolve_root(args)), record_id=args.record_id, dry_run=args.dry_run)
    return print_result(args, result, format_undo)


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


def _add_route(sub: Any) -> None:
    parser = sub.add_parser("route", help="which documents answer this question")
    # The MCP schema bounds a question to 1,000 characters; the CLI passes any length on to
    # the same function, which answers normally (07 §4.3).
    parser.add_argument("question", metavar="QUESTION", type=_text_between(2, None))
    parser.add_argument("--limit", type=_int_between(1, 25), default=5)
    parser.add_argument("--kind", help="exact doc_kind filter")
    parser.add_argument("--layer", choices=READ_LAYERS, help="exact layer filter")


def _run_route(args: argparse.Namespace) -> int:
    from mbank.route import format_route, route
    from mbank.search import SearchIndex

    bank = _read_bank(args)
    result = route(
        bank.refresh(),
        SearchIndex(),
        args.question,
        limit=args.limit,
        kind=args.kind,
        layer=args.layer,
    )
    return print_result(args, result, format_route)


def _add_search(sub: Any) -> None:
    parser = sub.add_parser("search", help="full-text search of document bodies")
    parser.add_argument("query", metavar="QUERY", type=_text_between(2, None))
    parser.add_argument("--limit", type=_int_between(1, 50), default=10)
    parser.add_argument("--kind", help="exact doc_kind filter")
    parser.add_argument("--layer", choices=READ_LAYERS, help="exact layer filter")
    parser.add_argument("--status", help="exact status filter")


def _run_search(args: argparse.Namespace) -> int:
    from mbank.search import SearchIndex, format_search, search

    bank = _read_bank(args)
    index = SearchIndex()
    started = time.perf_counter()
    snapshot = bank.refresh()
    index.sync(snapshot)
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
    return print_result(
        args,
        result,
        lambda found: format_search(found, len(index.indexed), index.term_count(), elapsed_ms),
    )


# --------------------------------------------------------------------------------------------
# edit, update-section, rewrite, set-status, set-field (spec 04 §9.2-9.4): writes to one
# existing document; --dry-run prints the diff and writes nothing
# --------------------------------------------------------------------------------------------


def _inline_or_file(
    arguments: dict[str, Any], inline_key: str, file_key: str, inline: Any, file: Any
) -> None:
    """Put `--body`/`--body-file` (or content) into tool arguments; `-` reads stdin inline.

    Both given are passed through, so the tool answers with its own `file-both` refusal.
    """
    if inline is not None:
        arguments[inline_key] = inline
    if file == "-" and inline is None:
        arguments[inline_key] = sys.stdin.read()
    elif file is not None:
        arguments[file_key] = file


def _run_document_write(
    args: argparse.Namespace,
    tool: str,
    arguments: dict[str, Any],
    format_result: Any,
    *,
    root: str | None = None,
) -> int:
    """Run a write tool's shell (`mbank.write_tools.<tool>`) on the bank and print its result;
    `root` overrides the resolved root (init's fallback)."""
    from mbank import write_tools
    from mbank.snapshot import Bank

    shell = getattr(write_tools, tool)
    bank = Bank(root if root is not None else resolve_root(args))
    result = shell(bank, arguments, dry_run=args.dry_run, via="cli")
    return print_result(args, result, format_result)


def _add_edit(sub: Any) -> None:
    parser = sub.add_parser("edit", help="replace one exact fragment of a document's body")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--find", required=True, metavar="TEXT", help="exact, whitespace included")
    parser.add_argument("--replace", required=True, metavar="TEXT")
    parser.add_argument("--section", metavar="S", help="a ## section that narrows the search")
    _add_dry_run(parser)


def _run_edit(args: argparse.Namespace) -> int:
    from mbank.reducers.edit import format_edit

    arguments: dict[str, Any] = {"path": args.path, "find": args.find, "replace": args.replace}
    if args.section is not None:
        arguments["section"] = args.section
    return _run_document_write(args, "edit", arguments, format_edit)


def _add_update_section(sub: Any) -> None:
    parser = sub.add_parser("update-section", help="replace or append to one ## section")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("section", metavar="SECTION")
    parser.add_argument("--content", metavar="TEXT")
    parser.add_argument("--content-file", metavar="F", help="a file in the project, or - (stdin)")
    parser.add_argument("--mode", choices=("replace", "append"), default="replace")
    _add_dry_run(parser)


def _run_update_section(args: argparse.Namespace) -> int:
    from mbank.reducers.update_section import format_update_section

    arguments: dict[str, Any] = {"path": args.path, "section": args.section, "mode": args.mode}
    _inline_or_file(arguments, "content", "contentFile", args.content, args.content_file)
    return _run_document_write(args, "update_section", arguments, format_update_section)


def _add_rewrite(sub: Any) -> None:
    parser = sub.add_parser("rewrite", help="replace the whole body; frontmatter and index kept")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--body", metavar="TEXT")
    parser.add_argument("--body-file", metavar="F", help="a file in the project, or - (stdin)")
    _add_dry_run(parser)


def _run_rewrite(args: argparse.Namespace) -> int:
    from mbank.reducers.rewrite import format_rewrite

    arguments: dict[str, Any] = {"path": args.path}
    _inline_or_file(arguments, "body", "bodyFile", args.body, args.body_file)
    return _run_document_write(args, "rewrite", arguments, format_rewrite)


def _add_set_status(sub: Any) -> None:
    parser = sub.add_parser("set-status", help="move a document to another lifecycle status")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("status", metavar="STATUS")
    parser.add_argument(
        "--release-canonical",
        action="store_true",
        help="archiving only: give up the canonical_for keys in the same write",
    )
    _add_dry_run(parser)


def _run_set_status(args: argparse.Namespace) -> int:
    from mbank.reducers.set_status import format_set_status

    arguments: dict[str, Any] = {"path": args.path, "status": args.status}
    if args.release_canonical:
        arguments["releaseCanonical"] = True
    return _run_document_write(args, "set_status", arguments, format_set_status)


def _add_set_field(sub: Any) -> None:
    parser = sub.add_parser("set-field", help="change one scalar value in the frontmatter")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("field", metavar="FIELD")
    parser.add_argument("value", metavar="VALUE")
    _add_dry_run(parser)


def _run_set_field(args: argparse.Namespace) -> int:
    from mbank.reducers.set_field import format_set_field

    arguments = {"path": args.path, "field": args.field, "value": args.value}
    return _run_document_write(args, "set_field", arguments, format_set_field)


# --------------------------------------------------------------------------------------------
# create, promote, discard (spec 04 §9.2-9.4): governed documents and the quarantine; inbox
# lists the quarantine (a read)
# --------------------------------------------------------------------------------------------


def _list_values(values: list[str] | None) -> list[str] | None:
    """Comma-separated, repeatable list flags, concatenated; None when the flag is absent."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _extra(pairs: list[str] | None, as_json: str | None) -> dict[str, Any] | None:
    """`--extra-json` (an object) overlaid by each `--extra KEY=VALUE` in order (strings)."""
    extra: dict[str, Any] = {}
    if as_json is not None:
        try:
            loaded = json.loads(as_json)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--extra-json is not JSON: {exc.msg}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--extra-json must be a JSON object")
        extra.update(loaded)
    for pair in pairs or []:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise UsageError(f"--extra takes KEY=VALUE, not {pair!r}")
        extra[key.strip()] = value
    return extra if pairs or as_json is not None else None


def _set_lists(arguments: dict[str, Any], args: argparse.Namespace) -> None:
    for key, flag in (
        ("derivedFrom", args.derived),
        ("canonicalFor", args.canonical),
        ("mustNotDefine", args.must_not_define),
    ):
        values = _list_values(flag)
        if values is not None:
            arguments[key] = values


def _add_list_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--derived", action="append", metavar="A,B", help="derived_from entries")
    parser.add_argument("--canonical", action="append", metavar="K1,K2", help="canonical_for keys")
    parser.add_argument("--must-not-define", action="append", metavar="K1,K2")


def _add_create(sub: Any) -> None:
    parser = sub.add_parser("create", help="create a governed document (bank_create)")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--kind", default="engineering", help="doc_kind (default engineering)")
    parser.add_argument("--title", help="default: the path")
    parser.add_argument("--purpose", help="when to read it; routing ranks on this")
    _add_list_flags(parser)
    parser.add_argument("--status", default="draft")
    parser.add_argument("--body", metavar="TEXT")
    parser.add_argument("--body-file", metavar="F", help="a file in the project, or - (stdin)")
    parser.add_argument("--extra", action="append", metavar="KEY=VALUE", help="repeatable")
    parser.add_argument("--extra-json", metavar="JSON", help="an object of more frontmatter")
    parser.add_argument("--inbox", action="store_true", help="quarantine: into _inbox/")
    _add_dry_run(parser)


def _run_create(args: argparse.Namespace) -> int:
    from mbank.reducers.create import format_create

    arguments: dict[str, Any] = {
        "docKind": args.kind,
        "path": args.path,
        "title": args.title if args.title is not None else args.path,
    }
    if args.purpose is not None:
        arguments["purpose"] = args.purpose
    _set_lists(arguments, args)
    arguments["status"] = args.status
    _inline_or_file(arguments, "body", "bodyFile", args.body, args.body_file)
    extra = _extra(args.extra, args.extra_json)
    if extra is not None:
        arguments["extra"] = extra
    if args.inbox:
        arguments["inbox"] = True
    return _run_document_write(args, "create", arguments, format_create)


def _add_promote(sub: Any) -> None:
    parser = sub.add_parser("promote", help="move a note out of _inbox/ (bank_promote)")
    parser.add_argument("path", metavar="PATH", help="the quarantined note")
    parser.add_argument("--to", required=True, metavar="DEST", help="destination outside _inbox/")
    parser.add_argument("--kind", help="doc_kind (default: the note's)")
    parser.add_argument("--title", help="default: the note's")
    parser.add_argument("--purpose", help="default: the note's")
    _add_list_flags(parser)
    parser.add_argument("--status", help="default active")
    _add_dry_run(parser)


def _run_promote(args: argparse.Namespace) -> int:
    from mbank.reducers.promote import format_promote

    arguments: dict[str, Any] = {"path": args.path, "to": args.to}
    for key, value in (
        ("docKind", args.kind),
        ("title", args.title),
        ("purpose", args.purpose),
        ("status", args.status),
    ):
        if value is not None:
            arguments[key] = value
    _set_lists(arguments, args)
    return _run_document_write(args, "promote", arguments, format_promote)


def _add_discard(sub: Any) -> None:
    parser = sub.add_parser("discard", help="drop a note from _inbox/, on the record")
    parser.add_argument("path", metavar="PATH", help="the quarantined note")
    parser.add_argument("--reason", required=True, metavar="TEXT", help="kept in the journal")
    _add_dry_run(parser)


def _run_discard(args: argparse.Namespace) -> int:
    from mbank.reducers.discard import format_discard

    arguments = {"path": args.path, "reason": args.reason}
    return _run_document_write(args, "discard", arguments, format_discard)


def _add_inbox(sub: Any) -> None:
    sub.add_parser("inbox", help="the notes waiting in _inbox/, oldest first")


def _run_inbox(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from mbank.inbox import format_inbox, inbox_listing

    result = inbox_listing(_read_bank(args).refresh(), datetime.now(UTC))
    return print_result(args, result, format_inbox)


# --------------------------------------------------------------------------------------------
# init, materialize-flows (writes: spec 03 §12-13) and contract-diff (a read: 04 §2.19)
# --------------------------------------------------------------------------------------------


def _add_init(sub: Any) -> None:
    parser = sub.add_parser("init", help="seed a memory bank where there is none (bank_init)")
    parser.add_argument("name", metavar="NAME", help="the project's name (goes into README.md)")
    parser.add_argument("--force", action="store_true", help="seed over existing documents")
    _add_dry_run(parser)


def _run_init(args: argparse.Namespace) -> int:
    from mbank.reducers.init import format_init

    try:
        root = resolve_root(args)
    except UsageError:  # no bank found: init makes one here (spec 04 §9.1)
        root = os.path.abspath("memory_bank")
    arguments = {"name": args.name, "force": args.force}
    return _run_document_write(args, "init", arguments, format_init, root=root)


def _add_materialize_flows(sub: Any) -> None:
    parser = sub.add_parser(
        "materialize-flows", help="copy the shipped templates into flows/templates/"
    )
    parser.add_argument("--force", action="store_true", help="overwrite the bank's templates")
    _add_dry_run(parser)


def _run_materialize_flows(args: argparse.Namespace) -> int:
    from mbank.reducers.materialize_flows import format_materialize

    arguments = {"force": args.force}
    return _run_document_write(args, "materialize_flows", arguments, format_materialize)


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
    from mbank.server import serve

    root = resolve_root(args, required=True)
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


def _run_memo(args: argparse.Namespace) -> int:
    from mbank.memo.server import main as memo_main

    return memo_main(list(getattr(args, "memo_args", [])))


def _add_surface_cost(sub: Any) -> None:
    sub.add_parser(
        "surface-cost",
        help="what each surface costs on every request (spawns mbank serve; spec 04 §7)",
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

Subparsers = "argparse._SubParsersAction[argparse.ArgumentParser]"
Command = tuple[Callable[[Any], None], Callable[[argparse.Namespace], int]]

# One entry per subcommand: (adds its parser, runs it). Order is the order of `--help`.
COMMANDS: dict[str, Command] = {
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
    "init": (_add_init, _run_init),
    "create": (_add_create, _run_create),
    "edit": (_add_edit, _run_edit),
    "update-section": (_add_update_section, _run_update_section),
    "rewrite": (_add_rewrite, _run_rewrite),
    "set-status": (_add_set_status, _run_set_status),
    "set-field": (_add_set_field, _run_set_field),
    "promote": (_add_promote, _run_promote),
    "discard": (_add_discard, _run_discard),
    "materialize-flows": (_add_materialize_flows, _run_materialize_flows),
    "undo": (_add_undo, _run_undo),
    "hook": (_add_hook, _run_hook),
    "serve": (_add_serve, _run_serve),
    "memo": (_add_memo, _run_memo),
    "surface-cost": (_add_surface_cost, _run_surface_cost),
    "demo": (_add_demo, _run_demo),
}

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
        return COMMANDS[args.command][1](args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"mbank: {exc}\n")
        return EXIT_USAGE
    except RefusalError as exc:
        sys.stderr.write(f"mbank: {exc.refusal.message}\n")
        return EXIT_REFUSED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
