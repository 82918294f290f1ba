"""A pattern naming a term of a closed vocabulary — ``horis:``, ``rdf:``, ``rdfs:``, ``owl:``,
``xsd:`` — that the vocabulary does not define: a rule ``?this horis:risk :high`` (the domain's
``:risk`` written under ``horis:``) never held, so every high-risk change took
``horis:otherwise`` and was deployed unapproved; a guard ``FILTER NOT EXISTS { ?this
horis:deployedAt ?t }`` never held a step back. It validated: the check of terms declared
nowhere passed over every term of these namespaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

from horismos import AuthoringError, Problem, load_definitions

FILE = """\
@prefix :      <http://example.org/change#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdf:   <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Change a owl:Class .
:Risk a owl:Class . :high a :Risk . :low a :Risk .
:risk a owl:ObjectProperty ; rdfs:domain :Change ; rdfs:range :Risk .
:deployedAt a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:dateTime .

:cm.deploy a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :deployedAt ; horis:value horis:now ] ] ;
    horis:binding "python:deploy" ; horis:idempotent false .

:cm.review a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:binding "python:review" ; horis:idempotent true .

:ChangeApproval a horis:Workflow ; horis:focusType :Change ; horis:start :ByRisk .

:ByRisk a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
        horis:requires \"\"\"
            RULE \"\"\" ;
        horis:next :Review ] ;
    horis:otherwise :Deploy .

:Review a horis:ActionStep ;
    horis:tool :cm.review ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .

:Deploy a horis:ActionStep ;
    horis:tool :cm.deploy ;
    horis:requires "FILTER NOT EXISTS { ?this :deployedAt ?t }" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .
"""

SAID = "which is not a term of"


def _written(tmp_path: Path, rule: str, text: str = FILE) -> tuple[Path, int]:
    path = tmp_path / "change.ttl"
    path.write_text(text.replace("RULE", rule), encoding="utf-8")
    return path, text[: text.index("RULE")].count("\n") + 1


def _said(path: Path) -> list[Problem]:
    try:
        found = load_definitions([path]).warnings
    except AuthoringError as e:
        found = e.problems
    return [p for p in found if SAID in p.message]


def test_a_horis_term_the_vocabulary_lacks_is_a_warning_with_the_domains_term(
        tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this horis:risk :high .")
    (p,) = _said(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":ByRisk"), p
    assert p.message == (
        "horis:requires uses horis:risk, which is not a term of Horismos's vocabulary: no "
        "loaded file uses it, the runtime writes only the terms it defines, and an answer may "
        "write none, so the pattern cannot match"), p.message
    assert p.hint == (
        "did you mean :risk (in <http://example.org/change#>, not "
        "<https://w3id.org/horismos#>)?"), p.hint


def test_in_a_guard_it_never_holds_the_step_back(tmp_path: Path) -> None:
    text = FILE.replace("FILTER NOT EXISTS { ?this :deployedAt ?t }",
                        "FILTER NOT EXISTS { ?this horis:deployedAt ?t }")
    path, _ = _written(tmp_path, "?this :risk :high .", text)
    (p,) = _said(path)
    assert p.node == ":Deploy" and p.message.endswith(
        "so its FILTER NOT EXISTS never finds it and never holds the step back"), p


def test_a_misspelt_rdfs_term_gets_the_one_meant(tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :risk :high ; rdfs:lable ?l .")
    (p,) = _said(path)
    assert p.line == line and "rdfs:lable, which is not a term of RDF Schema" in p.message, p
    assert p.hint == "did you mean rdfs:label?", p.hint


@pytest.mark.parametrize("rule", [
    "?this :risk :high .",
    "?this rdfs:label ?l ; rdf:type/rdfs:subClassOf* :Change .",
    "?i horis:focus ?this ; horis:status horis:Waiting .",  # runtime state, as written
    "?this rdf:_1 ?first .",
])
def test_terms_the_vocabularies_define_are_clean(tmp_path: Path, rule: str) -> None:
    assert _said(_written(tmp_path, rule)[0]) == []


def test_run_deploys_the_high_risk_change_unreviewed_and_validate_says_why(
        tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this horis:risk :high .")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/change#> .\n:c1 a :Change ; :risk :high .\n",
        encoding="utf-8")
    (tmp_path / "tools.py").write_text(
        "def deploy(change):\n    print('DEPLOYED', flush=True)\n    return {}\n"
        "def review(change):\n    print('REVIEWED', flush=True)\n    return {}\n",
        encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", path.name, "--world", "world.ttl", timeout=120)
    assert f"change.ttl:{line}: warning: :ByRisk: horis:requires uses horis:risk" in (
        done.stdout), done.stdout + done.stderr
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":c1",
                          "--tools", "tools.py", timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "DEPLOYED" in ran.stdout and "REVIEWED" not in ran.stdout, ran.stdout
    assert "horis:risk" in ran.stderr, ran.stderr  # said before the first step
