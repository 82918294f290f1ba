"""An argument, or a proposal's options, joined with nothing of ?this by two names of one
node: ``?this :affects ?svc . ?option a :Runbook ; :appliesTo ?service .`` offered every
runbook of every service, whatever the incident; the ranker chose one for a service the
incident did not touch and the rollback (not idempotent, approved from a payload that looked
right) acted on it. ``?svc`` and ``?service`` are each named once, and are not near enough
for the lone-variable check. Found walking an incident-response domain."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/ops#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Incident a owl:Class .
:Service a owl:Class .
:Runbook a owl:Class .
:Engineer a owl:Class .
:affects a owl:ObjectProperty ; rdfs:domain :Incident ; rdfs:range :Service .
:appliesTo a owl:ObjectProperty ; rdfs:domain :Runbook ; rdfs:range :Service .
:owner a owl:ObjectProperty ; rdfs:domain :Service ; rdfs:range :Engineer .
:appliedRunbook a owl:ObjectProperty ; rdfs:domain :Incident ; rdfs:range :Runbook .
:pagedEngineer a owl:ObjectProperty ; rdfs:domain :Incident ; rdfs:range :Engineer .

:ops.apply a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ;
                  horis:arg [ horis:name "runbook" ; horis:type :Runbook ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :appliedRunbook ; horis:type :Runbook ] ] ;
    horis:binding "python:ops.apply" ;
    horis:idempotent false .

:ops.page a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ;
                  horis:arg [ horis:name "engineer" ; horis:type :Engineer ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :pagedEngineer ; horis:type :Engineer ] ] ;
    horis:binding "python:ops.page" ;
    horis:idempotent false .

:Respond a horis:Workflow ; horis:focusType :Incident ; horis:start :Pick .

:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query \"\"\" ?this :affects ?svc .
        CANDIDATES \"\"\" ] ;
    horis:as "option" ;
    horis:next :Apply .

:Apply a horis:ActionStep ;
    horis:tool :ops.apply ;
    horis:requires "FILTER NOT EXISTS { ?this :appliedRunbook ?r }" ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] ,
               [ horis:arg "runbook" ; horis:var "option" ] ;
    horis:next :Page .

:Page a horis:ActionStep ;
    horis:tool :ops.page ;
    horis:requires \"\"\" ?this :affects ?s .
        OWNER
        FILTER NOT EXISTS { ?this :pagedEngineer ?e } \"\"\" ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] .
"""

JOINED = ("?option a :Runbook ; :appliesTo ?svc .", "?s :owner ?engineer .")


def _warnings(tmp_path: Path, candidates: str, owner: str) -> tuple[list[str], str]:
    text = FILE.replace("CANDIDATES", candidates).replace("OWNER", owner)
    (tmp_path / "ops.ttl").write_text(text, encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", "ops.ttl", timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return [x for x in done.stdout.splitlines() if ": warning: " in x], text


def _line(text: str, written: str) -> int:
    return next(i for i, x in enumerate(text.splitlines(), 1) if written in x)


def test_the_incident_workflow_as_written_validates_clean(tmp_path: Path) -> None:
    assert _warnings(tmp_path, *JOINED)[0] == []


def test_options_cut_from_the_focus_by_two_names_of_one_node_are_a_warning(
        tmp_path: Path) -> None:
    said, text = _warnings(tmp_path, "?option a :Runbook ; :appliesTo ?service .", JOINED[1])
    assert said == [
        f"ops.ttl:{_line(text, ':appliesTo ?service')}: warning: :Pick: horis:query: the "
        "options, ?option, are joined with nothing of ?this: ?service is named once beside "
        "it and ?svc once beside ?this, so they are two variables, and ?option is any node "
        "that meets the rest of the pattern, whatever the focus — if one node is meant, write "
        "one name for both (?svc for ?service); else link ?option to ?this in the pattern"
    ], said


def test_an_argument_cut_from_the_focus_so_is_a_warning(tmp_path: Path) -> None:
    said, text = _warnings(tmp_path, JOINED[0], "?service :owner ?engineer .")
    assert said == [
        f"ops.ttl:{_line(text, '?service :owner')}: warning: :Page: horis:requires: "
        "?engineer, an argument of :ops.page, is joined with nothing of ?this: ?service is "
        "named once beside it and ?s once beside ?this, so they are two variables, and "
        "?engineer is any node that meets the rest of the pattern, whatever the focus — if "
        "one node is meant, write one name for both (?s for ?service); else link ?engineer "
        "to ?this in the pattern"
    ], said


@pytest.mark.parametrize(("candidates", "owner"), [
    # any runbook, any engineer on the rota: nothing is named once beside them
    pytest.param("?option a :Runbook .", JOINED[1], id="any-runbook"),
    pytest.param(JOINED[0], "?engineer a :Engineer .", id="any-engineer"),
    # joined by a FILTER: each name is written twice
    pytest.param("?option :appliesTo ?service . FILTER (?service = ?svc)", JOINED[1],
                 id="joined-by-a-filter"),
])
def test_what_is_meant_to_be_any_node_is_not_said(
        tmp_path: Path, candidates: str, owner: str) -> None:
    said, _ = _warnings(tmp_path, candidates, owner)
    assert [x for x in said if "joined with nothing of ?this" in x] == [], said
