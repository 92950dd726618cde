"""The write reducers: pure plans from an intent, its facts and a snapshot (ARCHITECTURE.md).

One module, one name: this top-level directory is the package `mbank.reducers` (pyproject.toml's
package-dir; in a checkout `mbank/reducers` is a symbolic link to it). A checkout on sys.path would
also let it load as a bare `reducers`, every module a second time as a different object (so an
`isinstance` across the two fails), so that name is refused.
"""

if __name__ != "mbank.reducers":
    raise ImportError(
        f"{__name__} is the checkout's copy of mbank.reducers: import mbank.reducers instead."
    )
