"""A variable named once in a pattern, one slip from a variable the pattern uses: a
replenishment's ``horis:forEach`` step over an item's suppliers, written
``?this :suppliedBy ?supplier . ?suplier :active true .``, validated, and each run ordered
from the inactive supplier too (the tool is not idempotent): ``?suplier`` is a variable of
its own, so the triple held as soon as any supplier was active. Found walking a warehouse
domain with several suppliers; the same slip in a proposal's candidates query offered
options the graph does not allow."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from rdflib.plugins.sparql import prepareQuery

from horismos._lone_variables import lone_variables
from horismos._term_kinds import algebra_triples

FILE = """@prefix :      <http://example.org/repl#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a owl:Class .
:Supplier a owl:Class .
:suppliedBy a owl:ObjectProperty ; rdfs:domain :Item ; rdfs:range :Supplier .
:active a owl:DatatypeProperty ; rdfs:domain :Supplier ; rdfs:range xsd:boolean .
:orderedFrom a owl:ObjectProperty ; rdfs:domain :Item ; rdfs:range :Supplier .

:sup.place_order a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ;
                  horis:arg [ horis:name "supplier" ; horis:type :Supplier ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property :orderedFrom ; horis:type :Supplier ; horis:many true ] ] ;
    horis:binding "python:supplier.place_order" ;
    horis:idempotent false .

:Replenish a horis:Workflow ; horis:focusType :Item ; horis:start :OrderFromSuppliers .

:OrderFromSuppliers a horis:ActionStep ;
    horis:tool :sup.place_order ;
    horis:forEach true ;
    horis:requires \"\"\" ?this :suppliedBy ?supplier .
                       ACTIVE
                       FILTER NOT EXISTS { ?this :orderedFrom GUARD } \"\"\" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


def _validate(tmp_path: Path, active: str = "?supplier :active true .",
              guard: str = "?supplier") -> tuple[list[str], str]:
    text = FILE.replace("ACTIVE", active).replace("GUARD", guard)
    (tmp_path / "repl.ttl").write_text(text, encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", "repl.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if ": warning: " in line], text


def test_the_replenishment_as_written_validates_clean(tmp_path: Path) -> None:
    assert _validate(tmp_path) == ([], _validate(tmp_path)[1])


def test_a_misspelt_variable_named_once_is_said_at_its_line(tmp_path: Path) -> None:
    said, text = _validate(tmp_path, active="?suplier :active true .")
    line = text[: text.index("?suplier")].count("\n") + 1
    assert said == [
        f"repl.ttl:{line}: warning: :OrderFromSuppliers: horis:requires: ?suplier is named "
        "once, beside ?supplier: as written it is a variable of its own, joined with nothing "
        "else, so what the pattern asks of ?suplier holds if any node at all matches it, and "
        "asks nothing of ?supplier — did you mean ?supplier? write ?supplier for ?suplier, or "
        "rename ?suplier if a node of its own is meant"
    ], said


def test_a_misspelt_variable_cutting_the_argument_from_the_focus_is_said(tmp_path: Path) -> None:
    text = FILE.replace("?this :suppliedBy ?supplier", "?this :suppliedBy ?suplier")
    (tmp_path / "repl.ttl").write_text(text.replace("ACTIVE", "?supplier :active true .")
                                       .replace("GUARD", "?o"), encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", "repl.ttl")
    line = text[: text.index("?suplier")].count("\n") + 1
    assert done.stdout.startswith(
        f"repl.ttl:{line}: warning: :OrderFromSuppliers: horis:requires: ?suplier is named once, "
        "beside ?supplier: as written it is a variable of its own, so ?supplier is joined with "
        "nothing the run gives (?this): it matches any node that meets the rest of the "
        "pattern, whatever the focus — did you mean ?supplier?"), done.stdout


def _lone(pattern: str, given: set[str], used: set[str] | None = None) -> list[tuple[str, str]]:
    query = prepareQuery(f"SELECT * WHERE {{ {pattern} }}", initNs={"": "http://example.org/"})
    triples = list(algebra_triples(query.algebra))
    return lone_variables(pattern, triples, given, given if used is None else used)


def test_a_variable_named_once_that_cuts_nothing_is_meant() -> None:
    # a guard's ?t beside ?this, ?a beside ?b, an object of the focus beside a near name
    # that is joined too, and a name in a string, are not slips
    assert _lone("?this :acuity ?queue . FILTER NOT EXISTS { ?this :queuedAt ?t }",
                 {"this"}) == []
    assert _lone("?this :x ?a ; :y ?b . FILTER (?b > 2)", {"this"}) == []
    assert _lone("?this :at ?date . ?this :due ?data . FILTER (?data < NOW())", {"this"}) == []
    assert _lone('?this :note "?suplier" . ?this :s ?supplier . ?supplier :t ?supplier',
                 {"this"}) == []
    assert _lone("?option :operatedBy ?carrier . ?carrier :ok true", {"this", "option"}) == []
    assert _lone("?this :suppliedBy ?supplier . ?suplier :active true .", {"this"},
                 {"this", "supplier"}) == [("suplier", "supplier", True)]


def test_a_misspelt_argument_in_a_tools_own_requires_is_said_once(tmp_path: Path) -> None:
    # the tool's own guard has its own warning for it ("which is no argument of the tool")
    guard = '\n    horis:requires "?suplier :active true" ;'
    tool = ":sup.place_order a horis:Tool ;"
    text = FILE.replace(tool, tool + guard)
    (tmp_path / "repl.ttl").write_text(text.replace("ACTIVE", "").replace("GUARD", "?supplier"),
                                       encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "repl.ttl").stdout
    said = [line for line in out.splitlines() if "?suplier" in line]
    assert len(said) == 1 and "which is no argument of the tool" in said[0], out
