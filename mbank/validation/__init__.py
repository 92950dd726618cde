"""The twelve validation rules of `bank_validate` (spec 02 §7), one small function each.

The rules live in modules named after their family (spec 02 §7.2, column "kind"):

- `structural.py` — rules that run in any bank: invalid frontmatter, broken `derived_from`,
  unregistered documents, `canonical_for` conflicts, `must_not_define` violations, dangling
  index entries;
- `references.py` — `unresolved-rule-reference`, the prose scan of §7.3;
- `contract_rules.py` — rules that gate themselves on what `dna/` declares: missing
  `derived_from`, cycles, undeclared enum values;
- `declaration.py` — findings about the declarations themselves: unknown layer values and the
  missing contract.

Every rule is a pure function of documents and snapshot maps returning `Finding`s in emission
order. `mbank.validate` runs them, caches the result per snapshot and sorts it.
"""

from __future__ import annotations

from mbank.model import Finding

ERROR = "error"
WARNING = "warning"

# Output order (spec 02 §7.2): rule id -> severity.
RULE_SEVERITY: dict[str, str] = {
    "invalid-frontmatter": ERROR,
    "broken-derived-from": ERROR,
    "missing-derived-from": ERROR,
    "cycle-in-derived-from": ERROR,
    "unregistered-doc": WARNING,
    "unresolved-rule-reference": WARNING,
    "unknown-enum-value": WARNING,
    "ssot-conflict": ERROR,
    "must-not-define-violated": ERROR,
    "dangling-index-entry": ERROR,
    "unknown-layer-value": WARNING,
    "no-contract": WARNING,
}
RULES: tuple[str, ...] = tuple(RULE_SEVERITY)
RULE_ORDER: dict[str, int] = {rule: index for index, rule in enumerate(RULES)}
SEVERITIES: tuple[str, ...] = (ERROR, WARNING)


def finding(rule: str, path: str, message: str, line: int | None = None) -> Finding:
    """A finding of `rule` with the rule's severity."""
    return Finding(rule=rule, severity=RULE_SEVERITY[rule], path=path, message=message, line=line)


def file_name(path: str) -> str:
    """The last segment of a slash-separated path."""
    return path.rsplit("/", 1)[-1]
