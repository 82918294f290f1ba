"""A literal no value of its property equals, written inside a ``FILTER NOT EXISTS`` or a
``MINUS``: the guard finds nothing, so it excludes nothing, and the step acts where the
modeler meant it not to (``FILTER NOT EXISTS { ?b :reserved "true" }`` renewed the loan of a
reserved book; ``{ ?this :renewals "3" }`` renewed a loan for the fourth time). validate
said nothing of it inside the negation, and of a ``MINUS`` it said the opposite of what
happens: that the pattern never holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import ROOT, TRIAGE, edited, problems, the_one

NURSE = "?nurse a :Nurse ; :onDuty true .\n"
ASSIGNED = "FILTER NOT EXISTS { ?this :assignedNurse ?n }"


@pytest.mark.parametrize(("new", "said", "hint"), [
    pytest.param("?nurse a :Nurse . FILTER NOT EXISTS { ?nurse :onDuty \"false\" }\n",
                 ':onDuty has rdfs:range xsd:boolean, but the FILTER NOT EXISTS matches it '
                 'with "false", a string, which no value of :onDuty equals, so the FILTER NOT '
                 "EXISTS never finds it and excludes nothing", "write false without quotes",
                 id="not-exists-triple"),
    pytest.param("?nurse a :Nurse . FILTER (!EXISTS { ?nurse :onDuty \"false\" })\n",
                 "so the FILTER NOT EXISTS never finds it and excludes nothing",
                 "write false without quotes", id="not-exists-written-with-bang"),
    pytest.param("?nurse a :Nurse . MINUS { ?nurse :onDuty \"false\" }\n",
                 ':onDuty has rdfs:range xsd:boolean, but the MINUS matches it with "false", '
                 "a string, which no value of :onDuty equals, so the MINUS never finds it and "
                 "excludes nothing", "write false without quotes", id="minus"),
    pytest.param("?nurse a :Nurse .\n"
                 "FILTER NOT EXISTS { ?nurse :onDuty ?d . FILTER (?d = \"false\") }\n",
                 'the FILTER inside the FILTER NOT EXISTS compares ?d (its value) with "false", '
                 "a string, which is never equal to or ordered with a value of xsd:boolean, so "
                 "the FILTER NOT EXISTS never finds it and excludes nothing",
                 "write false without quotes", id="filter-inside"),
    pytest.param("?nurse a :Nurse . FILTER NOT EXISTS { ?this :acuity \"routine\" }\n",
                 ":acuity's values are nodes, but the FILTER NOT EXISTS matches it with "
                 '"routine", a literal, which no node equals, so the FILTER NOT EXISTS never '
                 "finds it and excludes nothing", "write the node :routine, without quotes",
                 id="node-property"),
])
def test_a_literal_a_negated_group_never_finds_is_a_warning_that_it_excludes_nothing(
    tmp_path: Path, new: str, said: str, hint: str
) -> None:
    path, line = edited(tmp_path, TRIAGE, NURSE, new)
    found = the_one(problems(path, TRIAGE), "warning")
    assert said in found.message, found
    assert "never holds" not in found.message
    assert found.hint == hint
    assert (found.node, found.line) == (":NotifyNurse", line + new[: new.index('"')].count("\n"))


def test_a_literal_a_filter_exists_never_finds_is_a_warning_that_the_pattern_never_holds(
    tmp_path: Path,
) -> None:
    new = "?nurse a :Nurse . FILTER EXISTS { ?nurse :onDuty \"true\" }\n"
    path, line = edited(tmp_path, TRIAGE, NURSE, new)
    found = the_one(problems(path, TRIAGE), "warning")
    assert found.message.endswith(
        ':onDuty has rdfs:range xsd:boolean, but the FILTER EXISTS matches it with "true", a '
        "string, which no value of :onDuty equals, so the FILTER EXISTS never finds it and the "
        "pattern never holds"
    ), found
    assert (found.line, found.hint) == (line, "write true without quotes")


@pytest.mark.parametrize("new", [
    pytest.param("?nurse a :Nurse . FILTER NOT EXISTS { ?nurse :onDuty false }\n", id="boolean"),
    pytest.param("?nurse a :Nurse . MINUS { ?this :acuity :routine }\n", id="node"),
    # a FILTER that excludes where it differs is not one the group needs to match
    pytest.param("?nurse a :Nurse .\n"
                 "FILTER NOT EXISTS { ?nurse :onDuty ?d . FILTER (?d != \"x\" || ?d) }\n",
                 id="not-needed-comparison"),
])
def test_a_negated_group_written_right_is_said_nothing_of(tmp_path: Path, new: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, NURSE, new)
    assert [p for p in problems(path, TRIAGE) if "excludes nothing" in p.message] == []


def test_validate_says_it_before_a_run_pages_the_nurse_the_guard_leaves_out(
    tmp_path: Path,
) -> None:
    """The harm said at the line before the run, where the run then pages the off-duty
    nurse the guard was written to leave out."""
    path, line = edited(tmp_path, TRIAGE, NURSE,
                        "?nurse a :Nurse . FILTER NOT EXISTS { ?nurse :onDuty \"false\" }\n")
    world = tmp_path / "world.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":urgent a :AcuityLevel .\n:p1 a :Patient ; :acuity :urgent .\n"
        ":off a :Nurse ; :onDuty false .\n",
        encoding="utf-8",
    )
    files = (str(path), str(TRIAGE[1]), "--world", str(world))
    checked = horismos_forked(tmp_path, "validate", *files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"triage.ttl:{line}: warning: :NotifyNurse:" in checked.stdout
    assert "the FILTER NOT EXISTS never finds it and excludes nothing" in checked.stdout
    client = str(ROOT / "examples" / "triage" / "ehr_client.py")
    ran = horismos_forked(tmp_path, "run", *files, "--tools", client, "--focus", ":p1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "notify_nurse(nurse=:off" in ran.stdout  # what the warning was about


def test_a_node_no_file_holds_only_inside_a_negation_is_said_to_exclude_nothing(
    tmp_path: Path,
) -> None:
    """``FILTER NOT EXISTS { ?this :acuity :Urgent }`` where the world holds ``:urgent``: it
    was said that "that part of the pattern never matches", the guard's opposite of what
    follows — it never finds the node, so every patient passes."""
    path, line = edited(tmp_path, TRIAGE, NURSE,
                        NURSE + "FILTER NOT EXISTS { ?this :acuity :Urgent }\n")
    world = str(ROOT / "examples" / "triage" / "world.ttl")
    checked = horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]), "--world", world)
    assert (
        f"triage.ttl:{line + 1}: warning: :NotifyNurse: horis:requires names :Urgent, which "
        "neither the definitions nor the world hold, so the FILTER NOT EXISTS never finds it "
        "and excludes nothing" in checked.stdout
    ), checked.stdout
    outside, _ = edited(tmp_path, TRIAGE, NURSE, NURSE + "?this :acuity :Urgent .\n")
    checked = horismos_forked(tmp_path, "validate", str(outside), str(TRIAGE[1]), "--world", world)
    assert "so that part of the pattern never matches" in checked.stdout, checked.stdout
