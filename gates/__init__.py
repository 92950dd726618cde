"""The gates: pure checks a write plan must pass (ARCHITECTURE.md).

One module, one name: this top-level directory is the package `mbank.gates` (pyproject.toml's
package-dir; in a checkout `mbank/gates` is a symbolic link to it). A checkout on sys.path would
also let it load as a bare `gates`, every module a second time as a different object (so an
`isinstance` across the two fails), so that name is refused.
"""

if __name__ != "mbank.gates":
    raise ImportError(
        f"{__name__} is the checkout's copy of mbank.gates: import mbank.gates instead."
    )
