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

SHAPES = """\
@prefix :      <http://example.org/claims#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:ClaimShape a sh:NodeShape ; sh:targetClass :Claim ;
    sh:property [ sh:path :assessedAmount ; sh:datatype xsd:decimal ] .
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
    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")


FILES = ("tools.ttl", "workflow.ttl", "shapes.ttl")


def test_the_files_these_tests_edit_are_clean(tmp_path: Path) -> None:
    _written(tmp_path, GOOD)
    defs = load_definitions([tmp_path / f for f in FILES])
    assert [p for p in defs.warnings if "xsd" in str(p)] == []


def test_what_follows_from_a_misbound_xsd_names_it_as_written_and_its_line(
    tmp_path: Path,
) -> None:
    _written(tmp_path, BAD)
    try:
        load_definitions([tmp_path / f for f in FILES])
        raise AssertionError("loaded")
    except AuthoringError as e:
        problems = list(e.problems)
    said = "\n".join(map(str, problems))
    assert "xsd1" not in said, said
    prefix, effect, shaped, argument = problems
    assert (prefix.file, prefix.line) == (str(tmp_path / "tools.ttl"), 5), said
    assert prefix.hint == "write @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .", said
    assert (effect.line, effect.node) == (15, ":claims.assess"), said
    assert effect.message == (
        "asserted property :assessedAmount is an owl:DatatypeProperty (its values are "
        "literals), but horis:type xsd:decimal makes the tool's value a node"), effect.message
    assert effect.hint == BACK.format(term="xsd:decimal", local="decimal"), effect.hint
    # the shape's own xsd:decimal, in a file that binds xsd: rightly, is XML Schema's
    assert shaped.line == 15 and shaped.message.startswith(
        "the effect writes :assessedAmount as a node of xsd:decimal, but shape :ClaimShape "
        "requires sh:datatype xsd:decimal (a literal)"), shaped.message
    assert shaped.hint == BACK.format(term="xsd:decimal", local="decimal"), shaped.hint
    # in the other file, which binds no xsd: of its own: sent back all the same
    assert (argument.file, argument.node) == (str(tmp_path / "workflow.ttl"), ":Assess"), said
    assert "(of class xsd:decimal)" in argument.message, argument.message
    assert argument.hint == BACK.format(term="xsd:decimal", local="decimal"), argument.hint


def test_as_the_modeler_runs_it(tmp_path: Path) -> None:
    _written(tmp_path, BAD)
    done = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "xsd1" not in done.stdout and "write horis:type" not in done.stdout, done.stdout
    assert "tools.ttl:15: error: :claims.assess: asserted property :assessedAmount" in (
        done.stdout), done.stdout
    assert done.stdout.count("as tools.ttl:5 binds xsd:") == 3, done.stdout


def test_a_tool_named_under_a_domain_prefix_bound_elsewhere_is_said_once_at_the_prefix(
    tmp_path: Path,
) -> None:
    """``@prefix : <http://example.org/claims/>`` in the workflow, ``<…claims#>`` beside the
    tools: each step's ``horis:tool`` was "referenced but not declared" with its own hint
    (eight tools of full IRIs to pick from, later the one of the same name), one error a step
    beside the prefix warning that explained them all. It is one error at the ``@prefix``
    line, naming each step and its line, with the @prefix to write."""
    _written(tmp_path, GOOD)
    (tmp_path / "workflow.ttl").write_text(
        WORKFLOW.replace("<http://example.org/claims#>", "<http://example.org/claims/>", 1)
        .replace('horis:var "l" ] .', 'horis:var "l" ] ;\n    horis:next :Reassess .')
        + """
:Reassess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:requires "?this :limit ?l ." ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] , [ horis:arg "limit" ; horis:var "l" ] .
""",
        encoding="utf-8",
    )
    try:
        load_definitions([tmp_path / f for f in FILES])
        raise AssertionError("loaded")
    except AuthoringError as e:
        problems = list(e.problems)
    said = "\n".join(map(str, problems))
    assert "is referenced but not declared" not in said, said
    (prefix,) = [p for p in problems if "horis:tool" in p.message]
    assert (prefix.severity, prefix.file, prefix.line) == (
        "error", str(tmp_path / "workflow.ttl"), 1), said
    assert prefix.message.startswith(
        "the prefix : means <http://example.org/claims/> in this file but "
        "<http://example.org/claims#> in tools.ttl"), said
    assert prefix.message.endswith(
        "So horis:tool :claims.assess of :Assess (line 7) and :Reassess (line 13) names no "
        "declared tool: those steps cannot run"), said
    assert prefix.hint == "write @prefix : <http://example.org/claims#> . as tools.ttl does"
    # as the modeler runs it: one error, at the @prefix, and its fix loads
    done = horismos_forked(tmp_path, "validate", *FILES)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.count("horis:tool") == 1 and "invalid: 1 error" in done.stdout, done.stdout
    (tmp_path / "workflow.ttl").write_text(
        (tmp_path / "workflow.ttl").read_text().replace("claims/>", "claims#>"), encoding="utf-8")
    assert horismos_forked(tmp_path, "validate", *FILES).returncode == 0
