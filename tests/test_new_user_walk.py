"""A new user's walk on a fresh machine: the README's commands, the guides', and the slips a
first week makes (a store named, a module that does not import, files given in the wrong
place). Each test is a command that printed a traceback or did not say what to change.
"""

from __future__ import annotations

from pathlib import Path

from test_cli import TOOLS, TRIAGE, horismos, no_traceback


def test_run_all_on_the_memory_store_with_no_focus_node_ends_in_words(tmp_path: Path) -> None:
    """`run … --all --store memory` without --world: the definitions are the world, and hold
    no :Patient. rdflib read the empty VALUES of the batch's look-up as a list and raised
    AttributeError, a traceback, exit 1; the default store said "0 instances", exit 0."""
    p = horismos("run", *TRIAGE, *TOOLS, "--all", "--store", "memory", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 instances" in p.stdout
    assert "no node of :Patient (horis:focusType) is in the world" in p.stderr
