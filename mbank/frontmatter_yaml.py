"""Loading frontmatter YAML: 1.2 core scalars at libyaml speed, with three guards (spec 01 §4.2).

Split from `mbank.parse` so that PyYAML is imported only when a document is actually parsed:
a server whose documents all come from the projection cache never loads it (issue 17).
`mbank.parse.load_yaml` is the way in.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from mbank.parse import scalar_text

# --------------------------------------------------------------------------------------------
# YAML: 1.2 core scalars at libyaml speed, with three guards (spec 01 §4.2)
# --------------------------------------------------------------------------------------------

FRONTMATTER_MAX_BYTES = 65_536
ALIAS_NODE_LIMIT = 1_000

try:
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML wheels bundle libyaml
    _BaseLoader = yaml.SafeLoader

_RESOLVED_ELSEWHERE = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:merge",
    "tag:yaml.org,2002:value",
}

_INT_DECIMAL = re.compile(r"^[-+]?[0-9]+$", re.ASCII)
_INT_OCTAL = re.compile(r"^0o[0-7]+$", re.ASCII)
_INT_HEX = re.compile(r"^0x[0-9a-fA-F]+$", re.ASCII)


class DuplicateKeyError(Exception):
    """A mapping declares the same key twice (kind `duplicate-key`)."""

    def __init__(self, key: str, line: int) -> None:
        super().__init__(f'duplicate key "{key}"')
        self.key = key
        self.line = line


class YamlLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """CSafeLoader with YAML 1.2 core scalars, text keys and duplicate keys refused."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping node, but found {node.id}", node.start_mark
            )
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                # a list or mapping key has no scalar text (§4.5); PyYAML's own refusal
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                )
            key = self.construct_object(key_node, deep=deep)
            text_key = scalar_text(key) if not isinstance(key, str) else key
            if text_key is None:
                text_key = ""
            if text_key in mapping:
                raise DuplicateKeyError(text_key, key_node.start_mark.line)
            mapping[text_key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_int_12(self, node: Any) -> int:
        value = str(self.construct_scalar(node))
        if _INT_OCTAL.match(value):
            return int(value[2:], 8)
        if _INT_HEX.match(value):
            return int(value[2:], 16)
        return int(value, 10)


def _install_core_schema(loader: type[YamlLoader]) -> None:
    resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    for first, entries in _BaseLoader.yaml_implicit_resolvers.items():
        kept = [entry for entry in entries if entry[0] not in _RESOLVED_ELSEWHERE]
        if kept:
            resolvers[first] = kept
    loader.yaml_implicit_resolvers = resolvers
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
    )
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    # int before float: PyYAML tries the resolvers of a first character in registration order.
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    )
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+.0123456789"),
    )
    loader.add_constructor("tag:yaml.org,2002:int", YamlLoader.construct_yaml_int_12)


_install_core_schema(YamlLoader)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        out: list[Any] = []
        for key_node, value_node in node.value:
            out.append(key_node)
            out.append(value_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def aliases_exceed_limit(root: Any, limit: int = ALIAS_NODE_LIMIT) -> bool:
    """Whether alias references expand past `limit` nodes or the node graph is recursive."""
    cap = limit + 1
    expanded: dict[int, int] = {}
    indegree: dict[int, int] = {}
    state: dict[int, int] = {}  # 1 = on the current path, 2 = finished
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        node_id = id(node)
        if leaving:
            size = 1
            for child in _children(node):
                size = min(cap, size + expanded[id(child)])
            expanded[node_id] = size
            state[node_id] = 2
            continue
        seen = state.get(node_id)
        if seen == 2:
            continue
        if seen == 1:
            return True  # a node reachable from itself
        state[node_id] = 1
        stack.append((node, True))
        for child in _children(node):
            indegree[id(child)] = indegree.get(id(child), 0) + 1
            child_state = state.get(id(child))
            if child_state == 1:
                return True
            if child_state is None:
                stack.append((child, False))
    added = 0
    for node_id, arrivals in indegree.items():
        if arrivals > 1:
            added += (arrivals - 1) * expanded[node_id]
            if added > limit:
                return True
    return False


class YamlOutcome(msgspec.Struct, frozen=True):
    """The result of loading one frontmatter block."""

    data: dict[str, Any] | None
    error: str | None = None
    kind: str | None = None
    line: int | None = None


def load_frontmatter_yaml(yaml_text: str) -> YamlOutcome:
    """Load frontmatter YAML with the core schema and guards; never raises."""
    size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size > FRONTMATTER_MAX_BYTES:
        return YamlOutcome(None, f"frontmatter is {size} bytes", "too-large", 1)
    loader = YamlLoader(yaml_text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlOutcome({})
        # Without a "*" there is no alias reference, so nothing can expand or recurse.
        if "*" in yaml_text and aliases_exceed_limit(node):
            return YamlOutcome(None, "aliases expand past 1000 nodes", "alias-limit", 1)
        value = loader.construct_document(node)
    except DuplicateKeyError as exc:
        return YamlOutcome(None, str(exc), "duplicate-key", exc.line + 2)
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or _first_line(str(exc))
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else 1
        return YamlOutcome(None, problem, "yaml", line)
    except Exception as exc:  # any loader failure is a property of the file, not of mbank
        return YamlOutcome(None, _first_line(str(exc)) or type(exc).__name__, "yaml", 1)
    finally:
        loader.dispose()
    if value is None:
        return YamlOutcome({})
    if not isinstance(value, dict):
        return YamlOutcome(None, "frontmatter is not a mapping", "not-a-mapping", 1)
    return YamlOutcome(value)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
