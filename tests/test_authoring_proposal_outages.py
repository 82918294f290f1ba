"""A ProposalStep that has nowhere to go when its model is out, or no option ever.

An incident workflow's runbook proposal asked ``openai:gpt-4o`` with no ``horis:fallback`` and
no ``horis:onError``: when the provider timed out or refused the connection every instance
failed there, and when its candidates query found no option every instance stopped blocked;
and its query reached the runbooks through ``:appliesTo`` where the world's runbooks say
``:forService``, so no incident ever had a candidate. All of it validated. ``validate`` warns
of the first at the step's ``horis:model``, and, given the world, of the second at the query's
line."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

from horismos import load_definitions

FLOW = """\
@prefix :      <http://example.org/ir#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .

:Incident a owl:Class .
:Runbook a owl:Class .
:Service a owl:Class .
:affects a owl:ObjectProperty ; rdfs:domain :Incident ; rdfs:range :Service .
:appliesTo a owl:ObjectProperty ; rdfs:domain :Runbook ; rdfs:range :Service .
:appliedRunbook a owl:ObjectProperty ; rdfs:range :Runbook .

:ops.apply a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ;
                  horis:arg [ horis:name "runbook" ; horis:type :Runbook ] ] ;
    horis:effect [ horis:subject "incident" ;
                   horis:asserts [ horis:property :appliedRunbook ; horis:type :Runbook ] ] ;
    horis:binding "python:ops.apply" ; horis:idempotent true .

:Respond a horis:Workflow ; horis:focusType :Incident ; horis:start :Pick .

:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query \"\"\"SELECT ?option WHERE {
        ?this :affects ?svc .
        ?option a :Runbook ;
            :appliesTo ?svc . }\"\"\" ] ;
    horis:rankBy "the runbook that fits the incident" ;
    horis:model "MODEL" EXTRA ;
    horis:next :Apply .

:Apply a horis:ActionStep ; horis:tool :ops.apply ;
    horis:requires "?this :affects ?s ." ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] ;
    horis:bind [ horis:arg "runbook" ; horis:var "option" ] .

:AskOperator a horis:WaitStep ;
    horis:reason "no runbook was chosen" ;
    horis:wake horis:OperatorInput ; horis:delivery horis:Final ;
    horis:until "?this :appliedRunbook ?r ." .
"""

WORLD = """\
@prefix : <http://example.org/ir#> .
:i1 a :Incident ; :affects :db .
:db a :Service .
:rb1 a :Runbook ; APPLIES :db .
"""

OUT = (
    'horis:model "openai:gpt-4o" with no horis:fallback and no horis:onError: when the model '
    "does not answer in time or answers an HTTP error or nothing usable, the step has nowhere "
    "to go and the instance fails, and when its endpoint is down (a refused connection) or the "
    "candidates query finds no option the instance stops there, blocked"
)


def _written(tmp_path: Path, model: str = "openai:gpt-4o", extra: str = "") -> Path:
    path = tmp_path / "ir.ttl"
    path.write_text(FLOW.replace("MODEL", model).replace("EXTRA", extra), encoding="utf-8")
    return path


def _said(path: Path, text: str) -> list[str]:
    return [p.message for p in load_definitions([path]).warnings if text in p.message]


def test_a_hosted_model_with_nowhere_to_go_is_a_warning_at_the_model(tmp_path: Path) -> None:
    path = _written(tmp_path)
    (p,) = [p for p in load_definitions([path]).warnings if "no horis:fallback" in p.message]
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "horis:model" in t)
    assert (p.severity, p.line, p.node) == ("warning", line, ":Pick"), p
    assert p.message == OUT, p.message
    assert p.hint == (
        "add horis:fallback :SomeStep, where such an instance goes — typically a "
        "horis:WaitStep where an operator chooses (:AskOperator)"
    ), p.hint


def test_a_fallback_an_error_route_or_the_offline_ranker_is_said_nothing_of(
    tmp_path: Path,
) -> None:
    assert _said(_written(tmp_path, extra="; horis:fallback :AskOperator"), OUT) == []
    assert _said(_written(tmp_path, extra="; horis:onError :AskOperator"), OUT) == []
    assert _said(_written(tmp_path, model="lexical:bm25"), "no horis:fallback") == []


def test_given_the_world_options_reached_through_a_property_it_never_states_are_said(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, extra="; horis:fallback :AskOperator")
    (tmp_path / "world.ttl").write_text(WORLD.replace("APPLIES", ":forService"), "utf-8")
    done = horismos_forked(tmp_path, "validate", "ir.ttl", "--world", "world.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if ":appliesTo ?svc" in t)
    assert (
        f"ir.ttl:{line}: warning: :Pick: the horis:candidates query reaches ?option through "
        ":appliesTo; no tool's effect writes :appliesTo and the world holds no statement of "
        "it, so the proposal has no option for any instance, and every instance goes to its "
        "horis:fallback :AskOperator — load the data that holds :appliesTo, or write in the "
        "query the property the world's data gives the options by\n"
    ) in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    (tmp_path / "world.ttl").write_text(WORLD.replace("APPLIES", ":appliesTo"), "utf-8")
    done = horismos_forked(tmp_path, "validate", "ir.ttl", "--world", "world.ttl")
    assert "candidates query reaches" not in done.stdout, done.stdout
