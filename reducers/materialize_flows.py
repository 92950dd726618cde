"""Planning `bank_materialize_flows`: copy the shipped templates into `flows/templates/`.

Pure (spec 03 §13, 05 §7). The shipped templates are package data the tool's shell hands over
in its facts (`templates`, already addressed as `flows/templates/<dir>/<file>`). The plan
creates each template file in path order, or replaces what is there under `force` — the seeded
pointer `flows/templates/README.md` is always replaced by the real templates index, since it is
not counted as a held template. Documents under `flows/templates/` that the shipped set lacks,
and the prose flows, are never touched. From then on the bank's copies win every template
lookup (§4.4).

Choices where the spec is silent:

- A template file whose bytes already equal the shipped one is left out of the plan (as in
  `reducers.init.plan_seed`); `files` still lists all 24. When nothing is left to write, the
  "Overwrote N documents" warning is not given either: nothing was overwritten.
- An empty shipped set (a broken install) is refused with `templates-missing`, the analogue of
  init's `starter-missing`, rather than planning nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.catalogue import TEMPLATES_DIR
from mbank.gates.init import (
    SeedTarget,
    overwrote_warning,
    owned_templates,
    refuse_templates_owned,
)
from mbank.model import Intent, Plan, PlanOutcome
from mbank.paths import refuse
from mbank.projection import Snapshot
from mbank.reducers.init import format_seeded, init_result, plan_seed
from mbank.write_declaration import CliArg, FactPaths, KnownFacts, Published, WriteTool

TOOL = "bank_materialize_flows"
# Added to the post-check's refusal (§13): what to do when the bank lacks the templates' sources.
POSTCHECK_HINT = (
    "Pass force to materialise the templates anyway, or restore dna/governance.md (and the "
    "flows the templates derive from) first."
)


class MaterializeArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_materialize_flows`."""

    force: Annotated[bool, Published(words="materializeForce")] = False
    dry_run: bool = False


class MaterializeFacts(msgspec.Struct, frozen=True):
    """The outside facts of `bank_materialize_flows`: the shipped templates and the disk
    state of every path they would be copied to."""

    templates: dict[str, str]
    seed_targets: dict[str, SeedTarget]


def materialize_paths(_snapshot: Snapshot, _args: MaterializeArgs, known: KnownFacts) -> FactPaths:
    """Every path a shipped template would be copied to."""
    return FactPaths(seed_targets=tuple(known.templates))


def gate_and_plan(
    snapshot: Snapshot, intent: Intent[MaterializeArgs, MaterializeFacts]
) -> PlanOutcome:
    """The gates of §13 in order, then one op per shipped template file."""
    force = intent.args.force
    count = owned_templates(snapshot)
    refuse_templates_owned(count, force)
    templates = dict(intent.facts.templates)
    if not templates:
        raise refuse(
            "templates-missing",
            "The shipped templates were not found. The server package is incomplete.",
        )
    ops = plan_seed(snapshot, intent.facts.seed_targets, templates, force)
    warnings = overwrote_warning(count, force, intent.dry_run) if ops else ()
    return PlanOutcome(
        plan=Plan(TOOL, ops),
        warnings=warnings,
        result={"root": snapshot.root, "files": sorted(templates), "directories": [TEMPLATES_DIR]},
        force=force,
    )


def format_materialize(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank materialize-flows` (spec 04 §9.3)."""
    where = f"{result['root']}/{TEMPLATES_DIR}"
    count = len(result["files"])
    if result["dryRun"]:
        lines = [
            f"WOULD COPY {count} files into {where}",
            "The bank would then own its templates, and its copies would win every lookup.",
        ]
    elif result["created"]:
        lines = [
            f"COPIED {count} files into {where}",
            "The bank now owns its templates: its copies win every lookup from now on.",
        ]
    else:
        lines = [f"UNCHANGED {where}: the bank's templates already equal the shipped ones."]
    return format_seeded(result, lines)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="materialize-flows",
    help="copy the shipped templates into flows/templates/",
    args=MaterializeArgs,
    facts=MaterializeFacts,
    fact_paths=materialize_paths,
    gate_and_plan=gate_and_plan,
    shape=init_result,
    render=format_materialize,
    cli=(
        CliArg(
            ("--force",), "force", kind="flag", default=False, help="overwrite the bank's templates"
        ),
    ),
    postcheck_hint=POSTCHECK_HINT,
    seeds_governance=True,
)
