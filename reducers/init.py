"""Planning `bank_init`: seed the 24 starter documents where there is no bank yet.

Pure (spec 03 §12, 05 §2). The starter set is package data that the tool's shell hands over in
`intent.facts[STARTER_FACT]` (`mbank.shipped_files.starter_files()`), with where it was looked for
under `STARTER_LOCATION_FACT`; the project name and the catalogue's renderers make the ten
generated documents. The plan creates every seed path in path order, or replaces what is
there under `force`.

Choices where the spec is silent:

- A seed path whose current bytes already equal the seed's is left out of the plan: a forced
  init over an identical seeded bank is a no-op (§1.8), and the result still lists all 24
  `files`. The same holds for `bank_materialize_flows`, which shares `plan_seed`. Such a no-op
  carries no "Seeding over N existing documents." warning: nothing was seeded over.
- A replaced document keeps its line-ending style (§1.7: a CRLF file is written CRLF); its
  byte-order mark is not kept, because no part of the old file is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.catalogue import (
    ROOT_INDEX,
    SEEDED_DIRECTORIES,
    SEEDED_SECTIONS,
    STARTER_PATHS,
    TEMPLATES_POINTER,
    seeded_documents,
)
from mbank.gates.init import (
    SeedTarget,
    check_name,
    check_seed_path,
    refuse_bank_not_empty,
    refuse_root_not_directory,
    seeding_over_warning,
)
from mbank.model import AnyFileOp, Intent, Plan, PlanOutcome
from mbank.plan import create_document, encode_text, replace_bytes, sha256_hex
from mbank.projection import Snapshot
from mbank.reducers.report import closing, with_common
from mbank.write_declaration import CliArg, FactPaths, KnownFacts, Published, WriteTool

TOOL = "bank_init"

# Every path init writes: the literal starter files and the ten generated documents (05 §2).
SEED_PATHS = tuple(
    sorted(
        [
            *STARTER_PATHS,
            *(f"{section.dir}/README.md" for section in SEEDED_SECTIONS),
            TEMPLATES_POINTER,
            ROOT_INDEX,
        ]
    )
)


def plan_seed(
    snapshot: Snapshot,
    seed_targets: Mapping[str, SeedTarget],
    files: Mapping[str, str],
    force: bool,
) -> tuple[AnyFileOp, ...]:
    """Create each file in path order, or replace what is there; identical files are skipped.

    Every path passes `gates.init.check_seed_path` first (symbolic links, unindexed files).
    """
    ops: list[AnyFileOp] = []
    for path, text in sorted(files.items()):
        before = check_seed_path(snapshot, seed_targets, path, force)
        if before is None:
            ops.append(create_document(path, text))
            continue
        doc = snapshot.docs.get(path)
        like = snapshot.raw[path] if doc is not None and doc.text_ok else None
        content = encode_text(text, like=like)
        if sha256_hex(content) != before:
            ops.append(replace_bytes(path, content, before))
    return tuple(ops)


class InitArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_init`."""

    name: Annotated[str, Published(min_length=1, max_length=100, words="name", required=True)] = ""
    dry_run: bool = False
    force: Annotated[bool, Published(words="force")] = False


class InitFacts(msgspec.Struct, frozen=True):
    """The outside facts of `bank_init`: whether the root is something other than a
    directory, the package's starter set and where it was looked for, and the disk state of
    every seed path."""

    root_not_directory: bool
    starter: dict[str, str]
    starter_location: str
    seed_targets: dict[str, SeedTarget]


def init_paths(_snapshot: Snapshot, _args: InitArgs, _known: KnownFacts) -> FactPaths:
    """Every path the seed writes."""
    return FactPaths(seed_targets=SEED_PATHS)


def gate_and_plan(snapshot: Snapshot, intent: Intent[InitArgs, InitFacts]) -> PlanOutcome:
    """The gates of §12 in order, then one op per seed path."""
    args, facts = intent.args, intent.facts
    name = args.name
    force = args.force
    check_name(name)
    refuse_root_not_directory(facts.root_not_directory, snapshot.root)
    count = len(snapshot.docs)
    refuse_bank_not_empty(count, force)
    files = seeded_documents(facts.starter, name, facts.starter_location)
    ops = plan_seed(snapshot, facts.seed_targets, files, force)
    warnings = seeding_over_warning(count, force) if ops else ()
    return PlanOutcome(
        plan=Plan(TOOL, ops),
        warnings=warnings,
        result={
            "root": snapshot.root,
            "files": list(files),
            "directories": list(SEEDED_DIRECTORIES),
        },
        force=force,
    )


def init_result(
    result: Mapping[str, Any], applied: bool, common: Mapping[str, Any], warnings: tuple[str, ...]
) -> dict[str, Any]:
    """`InitResult = {root, created, dryRun, files, directories, warnings, diff?, journalId?}`."""
    out: dict[str, Any] = {
        "root": result["root"],
        "created": applied,
        "dryRun": common["dryRun"],
        "files": list(result["files"]),
        "directories": list(result["directories"]),
        "warnings": list(warnings),
    }
    return with_common(out, common)


def format_seeded(result: Mapping[str, Any], lines: list[str]) -> str:
    """Warnings, then the diff (dry run) or the journal line: the tail of init and materialize."""
    return closing([*lines, *(f"warning: {warning}" for warning in result["warnings"])], result)


def format_init(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank init` (spec 04 §9.3)."""
    if result["dryRun"]:
        verb = "WOULD CREATE"
    elif result["created"]:
        verb = "CREATED"
    else:  # a forced init over a bank that already holds exactly the seed
        verb = "UNCHANGED"
    return format_seeded(
        result,
        [
            f"{verb} {result['root']}",
            f"directories: {', '.join(result['directories'])}",
            f"files: {len(result['files'])}",
        ],
    )


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="init",
    help="seed a memory bank where there is none (bank_init)",
    args=InitArgs,
    facts=InitFacts,
    fact_paths=init_paths,
    gate_and_plan=gate_and_plan,
    shape=init_result,
    render=format_init,
    cli=(
        CliArg(("name",), "name", metavar="NAME", help="the project's name (goes into README.md)"),
        CliArg(
            ("--force",), "force", kind="flag", default=False, help="seed over existing documents"
        ),
    ),
    creates_root=True,
    seeds_governance=True,
)
