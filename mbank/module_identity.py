"""One module, one name, for the top-level directories that install under `mbank.`.

`gates/`, `reducers/`, `starter/` and `templates/` live at the top of the repository (the
project's declared layout) and install as `mbank.gates`, `mbank.reducers`, `mbank.starter` and
`mbank.templates` (pyproject.toml's package-dir; in a checkout `mbank/<name>` is a symbolic link
to each). A checkout on sys.path would also let one load under its bare name, every module a
second time as a different object (so an `isinstance` across the two fails): each package's
`__init__` refuses that name through `require_name`.
"""

from __future__ import annotations


def require_name(name: str, package: str) -> None:
    """Refuse to import package `package` under any other name (`name` is its `__name__`)."""
    if name != package:
        raise ImportError(f"{name} is the checkout's copy of {package}: import {package} instead.")
