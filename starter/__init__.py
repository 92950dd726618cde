"""The starter set `bank_init` seeds (spec 05 §1): package data, read by `mbank.shipped_files`.

One module, one name: this top-level directory is the package `mbank.starter` (pyproject.toml's
package-dir; in a checkout `mbank/starter` is a symbolic link to it). A checkout on sys.path would
also let it load as a bare `starter`, every module a second time as a different object (so an
`isinstance` across the two fails), so that name is refused.
"""

if __name__ != "mbank.starter":
    raise ImportError(
        f"{__name__} is the checkout's copy of mbank.starter: import mbank.starter instead."
    )
