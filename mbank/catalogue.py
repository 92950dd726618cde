"""The starter set and the shipped templates as data (spec 05).

Pure: the table of the eleven known sections (05 §5), the paths of the starter set and of the
shipped templates, and the renderers of the three generated documents — a section index
(§6.1), the root index (§6.2) and the templates pointer (§6.3). Every function here returns the
same text for the same arguments. The package files themselves (`mbank.starter`,
`mbank.templates`) are read by the shell in `mbank.shipped_files` and handed to the reducers as
facts, so nothing a reducer reaches reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from mbank.frontmatter_writer import frontmatter_block
from mbank.parse import parse_text
from mbank.paths import refuse

# Shipped templates are addressed, reported and materialised under this bank path (05 §1).
TEMPLATES_DIR = "flows/templates"
TEMPLATES_POINTER = "flows/templates/README.md"
ROOT_INDEX = "README.md"
GOVERNANCE = "dna/governance.md"
AUDIENCE = "humans_and_agents"

# The marker line of an empty registry. Registration (03 §4.9) recognises it by this exact text.
SECTION_PLACEHOLDER = "Empty. A first document of this kind is registered here."
# The closing sentence of every seeded draft's purpose (05 §4.9).
SEEDED_DRAFT_SENTENCE = "Seeded as a draft: complete it before anything else."

# The 14 literal files of starter/ (05 §1), in the order 05 §2 lists them.
STARTER_PATHS = (
    "dna/README.md",
    "dna/principles.md",
    "dna/governance.md",
    "dna/frontmatter.md",
    "dna/lifecycle.md",
    "dna/cross-references.md",
    "dna/glossary.md",
    "dna/changelog.md",
    "product/context.md",
    "engineering/testing-policy.md",
    "flows/README.md",
    "flows/feature-flow.md",
    "flows/epic-flow.md",
    "flows/workflows.md",
)

# The 24 files of templates/ (05 §7.2), relative to flows/templates/, in catalogue order.
TEMPLATE_PATHS = (
    "README.md",
    "adr/ADR-ID.md",
    "epic/README.md",
    "epic/charter.md",
    "epic/roadmap.md",
    "epic/decision-log.md",
    "epic/subissues.md",
    "epic/risks.md",
    "feature/README.md",
    "feature/brief.md",
    "feature/design.md",
    "feature/implementation-plan.md",
    "feature/short.md",
    "feature/large.md",
    "feature/support/runtime-surfaces.md",
    "feature/support/ui-reference.md",
    "feature/support/use-cases.md",
    "prd/PRD-ID.md",
    "process/README.md",
    "process/process-card.md",
    "process/session-handoff.md",
    "process/lifecycle-protocol.md",
    "prompt/PROMPT-ID.md",
    "use-case/UC-XXX.md",
)


# The file name of every shipped template (03 §4.4: a rule may name one bare). The package
# files are read by the shell (`mbank.shipped_files`); tests/test_templates.py proves they are
# exactly TEMPLATE_PATHS, so the core can know the names without reading them.
SHIPPED_TEMPLATE_NAMES = frozenset(path.rsplit("/", 1)[-1] for path in TEMPLATE_PATHS)


class KnownSection(msgspec.Struct, frozen=True):
    """One of the eleven known sections: its directory, kind, index title and wording (05 §5)."""

    dir: str
    doc_kind: str
    title: str
    purpose: str
    route: str
    seeded: bool


# In root-index order (05 §5).
SECTIONS = (
    KnownSection(
        "product",
        "product",
        "Product Documentation Index",
        "Navigation for product documents: why the project exists, whom it serves and how "
        "success is judged.",
        "Read when you need the problem, the users, the constraints or the goals.",
        True,
    ),
    KnownSection(
        "domain",
        "domain",
        "Domain Documentation Index",
        "Navigation for the domain model: the entities, rules and terms of the problem space.",
        "Read when you need a business rule, a domain term or how entities relate.",
        True,
    ),
    KnownSection(
        "engineering",
        "engineering",
        "Engineering Documentation Index",
        "Navigation for engineering documents: architecture, conventions, testing and tooling.",
        "Read when you need how the system is built, tested or extended.",
        True,
    ),
    KnownSection(
        "ops",
        "ops",
        "Operations Documentation Index",
        "Navigation for operations: deployment, environments, monitoring and recovery.",
        "Read when you need to deploy, configure, observe or recover the system.",
        True,
    ),
    KnownSection(
        "adr",
        "adr",
        "Decision Records Index",
        "Navigation for architecture decision records, one record per decision.",
        "Read when you need why something was decided and which options lost.",
        True,
    ),
    KnownSection(
        "use-cases",
        "use_case",
        "Use Cases Index",
        "Navigation for use cases: actors, flows and the rules they exercise.",
        "Read when you need what a user does and what the system must answer.",
        True,
    ),
    KnownSection(
        "features",
        "feature",
        "Feature Registry",
        "Registry of feature packages and their delivery status.",
        "Read when you need a feature's brief, design or plan, or what is in flight.",
        True,
    ),
    KnownSection(
        "epics",
        "epic",
        "Epic Registry",
        "Registry of epics: efforts spanning several features, each with a charter, roadmap "
        "and risks.",
        "Read when you need the goal, sequencing or risks of a larger effort.",
        False,
    ),
    KnownSection(
        "prd",
        "prd",
        "PRD Registry",
        "Registry of product requirement documents.",
        "Read when you need the requirements a product increment must meet.",
        False,
    ),
    KnownSection(
        "processes",
        "process",
        "Process Registry",
        "Registry of team processes: cards, handoffs and lifecycle protocols.",
        "Read when you need how the team works: handoffs, routines, protocols.",
        True,
    ),
    KnownSection(
        "prompts",
        "prompt",
        "Prompt Registry",
        "Registry of maintained prompts with their variables and model notes.",
        "Read when you need a maintained prompt instead of writing a new one.",
        False,
    ),
)
SECTIONS_BY_DIR = {section.dir: section for section in SECTIONS}
SEEDED_SECTIONS = tuple(section for section in SECTIONS if section.seeded)
# What `init` reports as `directories`: the seeded sections plus dna and flows, sorted (05 §2).
SEEDED_DIRECTORIES = tuple(sorted([*(s.dir for s in SEEDED_SECTIONS), "dna", "flows"]))

# The two root-index entries after the sections (05 §6.2 step 3), each (index path, route).
FLOWS_ENTRY = (
    "flows/README.md",
    "Read when you create a feature or an epic, pass a lifecycle gate or instantiate a template.",
)
DNA_ENTRY = (
    "dna/README.md",
    "Read when you need the single source of truth rules, the contract this bank is checked "
    "against, or its governance.",
)
# The rows of the root index's task table (05 §6.2 step 4), each (task, target).
TASK_ROUTES = (
    ("Starting a feature", "flows/feature-flow.md"),
    ("Recording a decision", "adr/README.md"),
    ("Choosing how much documentation a task needs", "flows/workflows.md"),
)


class RegistryEntry(msgspec.Struct, frozen=True):
    """A document listed in a section index: file relative to the index, title, purpose."""

    file: str
    title: str
    purpose: str


def section_for(path: str) -> KnownSection | None:
    """The known section a bank path lies in (its first segment), or None (05 §5)."""
    if "/" not in path:
        return None
    return SECTIONS_BY_DIR.get(path.split("/", 1)[0])


# --------------------------------------------------------------------------------------------
# The generated documents (05 §6)
# --------------------------------------------------------------------------------------------


def registry_line(entry: RegistryEntry) -> str:
    """A seeded registry entry: backticked title, relative link, em dash, purpose (05 §6.1)."""
    return f"- [`{entry.title}`]({entry.file}) — {entry.purpose}"


def section_index(
    section: KnownSection,
    seeds: Sequence[RegistryEntry] = (),
    derived_from: str | None = "../" + GOVERNANCE,
) -> str:
    """The text of `<dir>/README.md` for a section (05 §6.1).

    With no seeds the registry holds the placeholder line. `derived_from` is the single source
    the index names; None omits the key (03 §4.7: a bank without `dna/governance.md` and
    without a contract root).
    """
    fields: dict[str, str | list[str]] = {
        "title": section.title,
        "doc_kind": section.doc_kind,
        "doc_function": "index",
        "purpose": section.purpose,
    }
    if derived_from is not None:
        fields["derived_from"] = [derived_from]
    fields |= {"status": "active", "audience": AUDIENCE}
    registry = "\n".join(registry_line(seed) for seed in seeds) if seeds else SECTION_PLACEHOLDER
    body = f"# {section.title}\n\n{section.route}\n\n## Registry\n\n{registry}\n"
    return frontmatter_block(fields) + body


def root_section_entry(index_path: str, route: str) -> str:
    """One two-line entry of the root index's Annotated Index (05 §6.2 step 3)."""
    return f"- [`{index_path}`]({index_path})\n  {route}"


def root_index(name: str) -> str:
    """The root `README.md` of a new bank named `name` (05 §6.2).

    The name is used with surrounding whitespace removed (it sits between `**` markers, where
    a leading space would break the bold). init refuses blank, multi-line and over-long names
    before this is called.
    """
    project = name.strip()
    fields = {
        "title": "Documentation Index",
        "doc_kind": "project",
        "doc_function": "index",
        "purpose": f"Root navigation for the {project} memory bank: start here to see how the "
        "knowledge base is laid out.",
        "derived_from": [GOVERNANCE],
        "status": "active",
        "audience": AUDIENCE,
    }
    sections = "\n".join(
        root_section_entry(f"{section.dir}/README.md", section.route) for section in SEEDED_SECTIONS
    )
    routes = "\n".join(f"| {task} | [`{target}`]({target}) |" for task, target in TASK_ROUTES)
    body = (
        "# Documentation Index\n"
        "\n"
        f"Knowledge base for **{project}**.\n"
        "\n"
        "## Start Here\n"
        "\n"
        "Read [dna/README.md](dna/README.md) first: it leads to the single source of truth "
        "rules, the contract this bank is checked against, and the rest of its governance.\n"
        "\n"
        "## Annotated Index\n"
        "\n"
        f"{sections}\n"
        "\n"
        f"{root_section_entry(*FLOWS_ENTRY)}\n"
        "\n"
        f"{root_section_entry(*DNA_ENTRY)}\n"
        "\n"
        "## Task-Specific Routes\n"
        "\n"
        "| Task | Route |\n"
        "|-|-|\n"
        f"{routes}\n"
    )
    return frontmatter_block(fields) + body


_POINTER_BODY = """\
# Document Templates

The document templates are not copied into this bank. They ship with mbank, and bank_create
instantiates them as though they were stored here: ask it for a document of a given kind, and the
new document starts from the matching template.

The flows that use the templates are one level up: the [Feature Flow](../feature-flow.md), the
[Epic Flow](../epic-flow.md) and [Workflows](../workflows.md).

## Why They Are Not Copied

Every bank used to receive its own copy of all 24 template files. The copies were identical from
one bank to the next, they fell behind the shipped set as soon as mbank improved it, and none of
four banks measured had customised a single one. Leaving them in the package gives every bank the
current templates at no cost.

## Taking Ownership

A bank that wants to edit its templates copies them in with

```sh
mbank materialize-flows --root <this bank>
```

or with the bank_materialize_flows tool. From then on the bank's own copies always win over the
shipped ones, and this page is replaced by the full templates index.
"""


def templates_pointer() -> str:
    """The text of `flows/templates/README.md` in a bank that has not materialised (05 §6.3)."""
    fields = {
        "title": "Document Templates",
        "doc_kind": "governance",
        "doc_function": "index",
        "purpose": "Read this when you look for the document templates and need to know where "
        "they live and how to bring them into this bank.",
        "derived_from": ["../../" + GOVERNANCE],
        "status": "active",
        "audience": AUDIENCE,
    }
    return frontmatter_block(fields) + _POINTER_BODY


def section_seeds(section: KnownSection, starter: dict[str, str]) -> tuple[RegistryEntry, ...]:
    """The starter documents directly in a section, as its registry entries (05 §5)."""
    prefix = section.dir + "/"
    seeds: list[RegistryEntry] = []
    for path, text in sorted(starter.items()):
        name = path.removeprefix(prefix)
        if not path.startswith(prefix) or "/" in name or name == "README.md":
            continue
        doc = parse_text(path, text)
        seeds.append(RegistryEntry(name, doc.title, doc.purpose))
    return tuple(seeds)


def seeded_documents(starter: Mapping[str, str], name: str, location: str) -> dict[str, str]:
    """The 24 documents of 05 §2 for a project `name`, bank path → text, sorted by path.

    `starter` is a starter set (bank path → text); an incomplete one is refused with
    `starter-missing` (03 §12 gate 4), naming `location`.
    """
    if any(path not in starter for path in STARTER_PATHS):
        raise refuse(
            "starter-missing",
            f"Starter set not found at {location}. The server package is incomplete.",
        )
    seeded = {path: starter[path] for path in STARTER_PATHS}
    for section in SEEDED_SECTIONS:
        seeded[f"{section.dir}/README.md"] = section_index(section, section_seeds(section, seeded))
    seeded[TEMPLATES_POINTER] = templates_pointer()
    seeded[ROOT_INDEX] = root_index(name)
    return dict(sorted(seeded.items()))


def shipped_template_names() -> frozenset[str]:
    """The file name of every `.md` anywhere under the shipped templates (03 §4.4)."""
    return SHIPPED_TEMPLATE_NAMES
