"""``horismos`` commands run by the command line's own code in the test's process.

For a step a test takes on the way to its subject, not the subject itself: loading the ward a
later command reads, reading the digest a test compares before and after. A ``horismos``
process spends ~0.3 s of CPU importing before it reads a file, and the suite starts about a
thousand of them. This is the command line's ``main``, run in ``cwd``: the same parsing, the
same opening of the store, the same words; what a command does as a user runs it is tested
with a process of its own.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

from horismos._cli import main


def horismos_in_process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``horismos ARGS`` as if run in ``cwd``: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["horismos", *args], code, out.getvalue(), err.getvalue())


def horismos_load(cwd: Path, store: str, *files: str) -> str:
    """``horismos load FILES --store STORE`` in ``cwd``: what it said on stderr. Any exit but 0
    fails the test."""
    done = horismos_in_process(cwd, "load", *files, "--store", store)
    assert done.returncode == 0, done.stderr
    return done.stderr
