"""The shipped templates (spec 05 §7): package data, read by `mbank.shipped_files`.

One module, one name: this top-level directory is the package `mbank.templates` (pyproject.toml's
package-dir; in a checkout `mbank/templates` is a symbolic link to it). A checkout on sys.path would
also let it load as a bare `templates`, every module a second time as a different object (so an
`isinstance` across the two fails), so that name is refused.
"""

if __name__ != "mbank.templates":
    raise ImportError(
        f"{__name__} is the checkout's copy of mbank.templates: import mbank.templates instead."
    )
