"""A new user's walk on a fresh machine: the README's commands, the guides', and the slips a
first week makes (a store named, a module that does not import, files given in the wrong
place). Each test is a command that printed a traceback or did not say what to change.
"""

from __future__ import annotations

from pathlib import Path

from test_cli import TOOLS, TRIAGE, WORLD, horismos, no_traceback


def test_run_all_on_the_memory_store_with_no_focus_node_ends_in_words(tmp_path: Path) -> None:
    """`run … --all --store memory` without --world: the definitions are the world, and hold
    no :Patient. rdflib read the empty VALUES of the batch's look-up as a list and raised
    AttributeError, a traceback, exit 1; the default store said "0 instances", exit 0."""
    p = horismos("run", *TRIAGE, *TOOLS, "--all", "--store", "memory", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 instances" in p.stdout
    assert "no node of :Patient (horis:focusType) is in the world" in p.stderr


def test_a_tools_module_calling_sys_exit_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """A tools file written as a script (`sys.exit(main())` not under `if __name__ ==
    "__main__"`): its exit code became the command's, silent — 3, which reads "waiting"."""
    (tmp_path / "script.py").write_text(
        "import sys\n\ndef assign_queue(patient, queue):\n    return {}\n\nsys.exit(3)\n"
    )
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "script.py", "--focus", ":patient42",
                 cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
    assert "--tools script.py: importing it called sys.exit(3) at " in p.stderr
    assert "script.py:6; fix the module" in p.stderr


def _bound_to(tmp_path: Path, module: str) -> str:
    """The triage workflow with its tools bound to ``module`` (for --allow-module)."""
    text = Path(TRIAGE[0]).read_text().replace("python:ehr_client.", f"python:{module}.")
    (tmp_path / "triage.ttl").write_text(text)
    return "triage.ttl"


def test_an_allowed_module_that_raises_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """`--allow-module M` where importing M raises (a setting it reads at import): the
    binding's import let the exception out, a traceback ending in the module's error."""
    (tmp_path / "ehr_live.py").write_text(
        "import os\n\nURL = os.environ['EHR_URL']\n\ndef assign_queue(patient, queue):\n"
        "    return {}\n"
    )
    p = horismos("run", _bound_to(tmp_path, "ehr_live"), TRIAGE[1], *WORLD,
                 "--allow-module", "ehr_live", "--focus", ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "importing 'ehr_live' raised KeyError: 'EHR_URL' at " in p.stderr
    assert "ehr_live.py:3; fix the module" in p.stderr


def test_an_allowed_module_calling_sys_exit_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """The same module exiting instead (`sys.exit("set EHR_URL")`): its text was printed
    and the command exited 1, "failed", before any step."""
    (tmp_path / "ehr_live.py").write_text("import sys\n\nsys.exit('set EHR_URL first')\n")
    p = horismos("run", _bound_to(tmp_path, "ehr_live"), TRIAGE[1], *WORLD,
                 "--allow-module", "ehr_live", "--focus", ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "importing 'ehr_live' called sys.exit('set EHR_URL first') at " in p.stderr
