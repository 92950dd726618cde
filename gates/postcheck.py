"""The post-check: no write may add a validation error that was not already there.

Pure (spec 03 §1.5; ARCHITECTURE.md invariant 2). It compares the findings of the snapshot
before a plan with those of the virtual snapshot after it. A finding's identity is
`(rule, path, message)`; its line is ignored, because lines move under edits. New errors
refuse the write (reason `postcheck`) unless the write is forced (init / materialize), in which
case they become warnings like the new warnings: `New <severity> <rule> on <path>: <message>`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from mbank.model import Finding
from mbank.paths import refuse
from mbank.projection import Snapshot

FindingsFor = Callable[[Snapshot, Sequence[str]], tuple[Finding, ...]]

ERROR = "error"
WARNING = "warning"


CYCLE_RULE = "cycle-in-derived-from"
CYCLE_PREFIX = "Cyclic derived_from: "


def identity(finding: Finding) -> tuple[str, ...]:
    """What makes two findings the same finding: rule, path and message (not the line).

    A `cycle-in-derived-from` finding is the same finding as long as it names the same loop.
    Which node reports a loop depends on where the path-ordered walk enters it (spec 02
    §7.4), so a harmless new document that derives from a loop member and sorts before it
    moves the report to another node of the same loop. Comparing (rule, path, message) would
    then refuse that write for an error that was already there, against the post-check's
    purpose (spec 03 §1.5: only errors the write would add block it). The loop's identity is
    its set of nodes, the same key the walk itself uses to report each loop once.
    """
    if finding.rule == CYCLE_RULE and finding.message.startswith(CYCLE_PREFIX):
        chain = finding.message[len(CYCLE_PREFIX) :].removesuffix(".")
        return (finding.rule, ">".join(sorted(set(chain.split(" -> ")))))
    return (finding.rule, finding.path, finding.message)


def new_findings(
    before: Sequence[Finding], after: Sequence[Finding], severity: str
) -> list[Finding]:
    """Findings of `severity` in `after` whose identity is not among `before`'s, in order."""
    known = {identity(finding) for finding in before if finding.severity == severity}
    return [
        finding
        for finding in after
        if finding.severity == severity and identity(finding) not in known
    ]


def refusal_text(errors: Sequence[Finding]) -> str:
    """The `postcheck` refusal: the count, then one `- [rule] path: message` line per error."""
    count = len(errors)
    plural = "" if count == 1 else "s"
    lines = [f"This write would add {count} validation error{plural}, so nothing was written:"]
    lines.extend(f"- [{error.rule}] {error.path}: {error.message}" for error in errors)
    return "\n".join(lines)


def warning_text(finding: Finding) -> str:
    """A new finding as a result warning: `New <severity> <rule> on <path>: <message>`."""
    return f"New {finding.severity} {finding.rule} on {finding.path}: {finding.message}"


def compare_findings(
    before: Sequence[Finding], after: Sequence[Finding], *, force: bool = False
) -> tuple[str, ...]:
    """Refuse new errors (unless `force`), and return the warnings the write adds.

    Without `force` the warnings are the new warnings in validation order. With `force` the
    new errors join them, each at its place in validation order.
    """
    errors = new_findings(before, after, ERROR)
    if errors and not force:
        raise refuse("postcheck", refusal_text(errors))
    reported = {id(finding) for finding in errors}
    reported.update(id(finding) for finding in new_findings(before, after, WARNING))
    return tuple(warning_text(finding) for finding in after if id(finding) in reported)


def default_findings_for() -> FindingsFor:
    """The validation module's partial validation (`mbank.validate.findings_for`)."""
    from mbank.validate import findings_for  # type: ignore[import-not-found,unused-ignore]

    resolved: FindingsFor = findings_for
    return resolved


def post_check(
    before: Snapshot,
    after: Snapshot,
    paths: Sequence[str],
    *,
    force: bool = False,
    findings_for: FindingsFor | None = None,
) -> tuple[str, ...]:
    """Validate what a plan touches before and after it; refuse new errors, return warnings.

    `paths` are the plan's paths; `findings_for(snapshot, paths)` must return, for the
    comparison, what a full validation would (spec 03 §1.5: full validation is the reference).
    """
    validate = findings_for if findings_for is not None else default_findings_for()
    return compare_findings(validate(before, paths), validate(after, paths), force=force)


# --------------------------------------------------------------------------------------------
# Governance writes (issue 14): the validation delta across the bank
# --------------------------------------------------------------------------------------------


def _keyed(finding: Finding) -> tuple[str, ...]:
    return (finding.severity, *identity(finding))


def _plain(finding: Finding) -> dict[str, str]:
    return {
        "severity": finding.severity,
        "rule": finding.rule,
        "path": finding.path,
        "message": finding.message,
    }


def validation_delta(
    before: Sequence[Finding], after: Sequence[Finding]
) -> dict[str, list[dict[str, str]]]:
    """`{appear, disappear}`: the findings, of any severity, that the write adds across the
    bank (in `after`'s order) and those it clears (in `before`'s order). A governance change
    can legalise or outlaw many documents at once; this says which."""
    known_before = {_keyed(finding) for finding in before}
    known_after = {_keyed(finding) for finding in after}
    return {
        "appear": [_plain(f) for f in after if _keyed(f) not in known_before],
        "disappear": [_plain(f) for f in before if _keyed(f) not in known_after],
    }


def delta_text(delta: Mapping[str, Sequence[Mapping[str, str]]]) -> str:
    """The validation delta as lines for a person and for the dry-run diff."""
    appear, disappear = delta["appear"], delta["disappear"]
    lines = [f"validation delta: {len(appear)} appear, {len(disappear)} disappear"]
    for sign, found in (("+", appear), ("-", disappear)):
        lines.extend(
            f"{sign} {item['severity']} [{item['rule']}] {item['path']}: {item['message']}"
            for item in found
        )
    return "\n".join(lines) + "\n"


def governed_post_check(
    before: Sequence[Finding], after: Sequence[Finding], paths: Sequence[str]
) -> tuple[str, ...]:
    """The post-check of a governance write made by a person (the CLI with --governance).

    New errors on the files the write touches still refuse it, as for any write; new errors
    elsewhere are what the new rules make of the other documents, which is the point of the
    change: they are reported (as warnings, and in the validation delta), not refused.
    """
    touched = frozenset(paths)
    own = [error for error in new_findings(before, after, ERROR) if error.path in touched]
    if own:
        raise refuse("postcheck", refusal_text(own))
    return compare_findings(before, after, force=True)
