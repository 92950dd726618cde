"""`unresolved-rule-reference`: prose that says a rule lives in a path that is not there.

Spec 02 §7.3. The scan is split in two so that a snapshot change re-reads only the documents
it touched: `scan_claims` finds the claims in one document's text (a pure function of the
text), and `unresolved_rule_references` judges them against the documents of a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

# Re-exported: the names the rule forgives are the catalogue's, never a second reading.
from mbank.catalogue import shipped_template_names as shipped_template_names
from mbank.model import TEMPLATE_FUNCTION, Doc, Finding
from mbank.parse import resolve_from
from mbank.validation import file_name, finding

CLAIM = re.compile(
    r"\b([A-Za-z][\w`, -]{4,60}?)\s+(?:is\s+|are\s+)?"
    r"(?:defined|described|specified|owned|governed)\s+(?:by|in)\s+"
    r"(?:\[[^\]]*\]\(([^)\s]+\.md)[^)]*\)|`?([\w./-]+\.md))",
    re.IGNORECASE | re.ASCII,
)
# Every match of CLAIM contains one of these verbs; lines without one are never given to CLAIM,
# whose lazy phrase group would otherwise be tried at every word of every line. They are found
# with bytes.find on the ASCII-lower-cased UTF-8 text (CLAIM is ASCII and case-insensitive).
_VERBS = (b"defined", b"described", b"specified", b"owned", b"governed")


class Claim(msgspec.Struct, frozen=True):
    """One "<phrase> is defined in <path>" statement: 1-based file line, phrase, path as written."""

    line: int
    phrase: str
    raw: str


def scan_claims(text: str) -> tuple[Claim, ...]:
    """Every claim in a document's whole text, line by line, fences and frontmatter included."""
    data = text.encode("utf-8", "surrogatepass")
    lowered = data.lower()  # ASCII letters only, so byte offsets stay put
    starts: set[int] = set()
    for verb in _VERBS:
        at = lowered.find(verb)
        while at >= 0:
            starts.add(lowered.rfind(b"\n", 0, at) + 1)
            at = lowered.find(verb, at + len(verb))
    if not starts:
        return ()
    claims: list[Claim] = []
    counted_to, number = 0, 1  # the line number of offset `counted_to`
    for start in sorted(starts):
        number += data.count(b"\n", counted_to, start)
        counted_to = start
        end = data.find(b"\n", start)
        line = (data[start:] if end < 0 else data[start:end]).decode("utf-8", "surrogatepass")
        for match in CLAIM.finditer(line.removesuffix("\r")):
            raw = match.group(2) or match.group(3)
            phrase = match.group(1).replace("`", "").strip()
            claims.append(Claim(number, phrase, raw))
    return tuple(claims)


def claim_target(path: str, claim: Claim) -> str | None:
    """Where a claim's path resolves inside the bank; None when external or empty."""
    return resolve_from(path, claim.raw).resolved


def claim_name(claim: Claim) -> str:
    """The file name a claim's path ends with (its anchor dropped)."""
    return file_name(claim.raw.split("#", 1)[0])


def unresolved_rule_references(
    doc: Doc,
    claims: tuple[Claim, ...],
    docs: Mapping[str, Doc],
    names: Mapping[str, tuple[str, ...]],
    shipped: frozenset[str],
) -> tuple[Finding, ...]:
    """Rule 6: a warning per claim whose path resolves to no document (spec 02 §7.3).

    `names` maps a file name to the documents carrying it (the "carriers"); `shipped` is
    `mbank.catalogue.shipped_template_names()`. A bare file name is forgiven when it is
    ambiguous (several carriers), when its one carrier is a template, or when nothing carries
    it but a shipped template does. A claim whose path resolves to
    nothing at all (`[x](#a.md)`: only an anchor) is not a path claim and is skipped, like an
    empty `derived_from` entry.
    """
    if not claims or doc.doc_function == TEMPLATE_FUNCTION:
        return ()
    out: list[Finding] = []
    for claim in claims:
        where = resolve_from(doc.path, claim.raw)
        if where.external or where.resolved is None:
            continue
        if where.resolved == doc.path or where.resolved in docs:
            continue
        name = claim_name(claim)
        carriers = names.get(name, ())
        if "/" not in claim.raw and (
            len(carriers) > 1
            or (len(carriers) == 1 and docs[carriers[0]].doc_function == TEMPLATE_FUNCTION)
            or (not carriers and name in shipped)
        ):
            continue
        message = (
            f'Claims "{claim.phrase}" is defined in {claim.raw}, but that path does not '
            f"resolve from this document (tried {where.resolved})."
        )
        if len(carriers) == 1:
            message += f" Did you mean {carriers[0]}?"
        out.append(finding("unresolved-rule-reference", doc.path, message, claim.line))
    return tuple(out)
