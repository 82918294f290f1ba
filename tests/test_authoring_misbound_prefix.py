"""What follows from ``@prefix xsd: <http://www.w3.org/2001/XMLSchema>`` (its ``#`` left
out): the prefix line is an error, and every ``xsd:decimal`` the file writes names
``<…XMLSchemadecimal>``, no datatype, so a tool's asserted value became a node and an
argument a class. Those errors named ``xsd1:decimal``, a prefix the file never wrote, and
hinted "write horis:type xsd:decimal" — what the modeler had written. Each now names the term
as written and sends the modeler back to the prefix line."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

from horismos import AuthoringError, load_definitions

TOOLS = """\
@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Claim a owl:Class .
:assessedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:limit a owl:DatatypeProperty ; rdfs:domain :Claim .

:claims.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ;
                  horis:arg [ horis:name "limit" ; horis:type xsd:decimal ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :assessedAmount ; horis:type xsd:decimal ] ] ;
    horis:binding "python:assess" .
"""

WORKFLOW = """\
@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .

:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:requires "?this :limit ?l . FILTER NOT EXISTS { ?this :assessedAmount ?a }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] , [ horis:arg "limit" ; horis:var "l" ] .
"""

GOOD = "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> ."
BAD = "@prefix xsd:   <http://www.w3.org/2001/XMLSchema> ."
BACK = (
    "as tools.ttl:5 binds xsd:, {term} names <http://www.w3.org/2001/XMLSchema{local}>, no "
    "term of XML Schema: mend that @prefix (write @prefix xsd: "
    "<http://www.w3.org/2001/XMLSchema#> .) first"
)


def _written(tmp_path: Path, prefix: str) -> None:
    (tmp_path / "tools.ttl").write_text(TOOLS.replace(GOOD, prefix), encoding="utf-8")
    (tmp_path / "workflow.ttl").write_text(WORKFLOW, encoding="utf-8")


def test_the_files_these_tests_edit_are_clean(tmp_path: Path) -> None:
    _written(tmp_path, GOOD)
    defs = load_definitions([tmp_path / "tools.ttl", tmp_path / "workflow.ttl"])
    assert [p for p in defs.warnings if "xsd" in str(p)] == []


def test_what_follows_from_a_misbound_xsd_names_it_as_written_and_its_line(
    tmp_path: Path,
) -> None:
    _written(tmp_path, BAD)
    try:
        load_definitions([tmp_path / "tools.ttl", tmp_path / "workflow.ttl"])
        raise AssertionError("loaded")
    except AuthoringError as e:
        problems = list(e.problems)
    said = "\n".join(map(str, problems))
    assert "xsd1" not in said, said
    prefix, effect, argument = problems
    assert (prefix.file, prefix.line) == (str(tmp_path / "tools.ttl"), 5), said
    assert prefix.hint == "write @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .", said
    assert (effect.line, effect.node) == (15, ":claims.assess"), said
    assert effect.message == (
        "asserted property :assessedAmount is an owl:DatatypeProperty (its values are "
        "literals), but horis:type xsd:decimal makes the tool's value a node"), effect.message
    assert effect.hint == BACK.format(term="xsd:decimal", local="decimal"), effect.hint
    # in the other file, which binds no xsd: of its own: sent back all the same
    assert (argument.file, argument.node) == (str(tmp_path / "workflow.ttl"), ":Assess"), said
    assert "(of class xsd:decimal)" in argument.message, argument.message
    assert argument.hint == BACK.format(term="xsd:decimal", local="decimal"), argument.hint


def test_as_the_modeler_runs_it(tmp_path: Path) -> None:
    _written(tmp_path, BAD)
    done = horismos_forked(tmp_path, "validate", "tools.ttl", "workflow.ttl", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "xsd1" not in done.stdout and "write horis:type" not in done.stdout, done.stdout
    assert "tools.ttl:15: error: :claims.assess: asserted property :assessedAmount" in (
        done.stdout), done.stdout
    assert done.stdout.count("as tools.ttl:5 binds xsd:") == 2, done.stdout
