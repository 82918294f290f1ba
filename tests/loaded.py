"""World data loaded into a store by ``horismos load``'s own code, in the test's process.

For a test whose subject is what a later command does with the data, not the load itself: a
``horismos`` process spends ~0.3 s of CPU importing before it reads a file, and the suite
starts about a thousand of them. This is the command line's load (``main(["load", …])``): the
same opening for writing, the same marks, the same parser; the tests of ``load`` itself run it
as a user does, in a process of its own.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from horismos._cli import main


def horismos_load(cwd: Path, store: str, *files: str) -> str:
    """``horismos load FILES --store STORE`` as if run in ``cwd`` (a relative store path or
    file resolved against it): what it said on stderr. Any exit but 0 fails the test."""
    kind, sep, path = store.partition(":")
    if sep and kind in ("oxigraph", "journal") and not Path(path).is_absolute():
        store = f"{kind}:{cwd / path}"
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = main(["load", *(str(cwd / f) for f in files), "--store", store])
    assert code == 0, said.getvalue()
    return said.getvalue()
