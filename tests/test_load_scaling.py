"""Loading a project of many files: each pattern read with the prefixes it names.

A project of N files binds about N namespaces (each file its own ``:``). A pattern prepared
with every prefix of the project was handed all of them at load and at each query (Oxigraph
reads a query's prefix map on every call: ~1 ms for 800 prefixes, ~60 µs for one).
"""

from __future__ import annotations

from pathlib import Path

from rdflib import URIRef
from rdflib.plugins.sparql import prepareQuery

from horismos import load_definitions
from horismos._preconditions import Pattern, Precondition
from horismos._stores.sparql import _compatible

_MODULE = """\
@prefix :      <http://example.org/{name}#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a owl:Class .
:done a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:boolean .

:{name}.mark a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:asserts [ horis:property :done ; horis:value true ] ] ;
    horis:binding "python:mark" ;
    horis:idempotent true .

:Flow a horis:Workflow ; horis:focusType :Item ; horis:start :Mark .

:Mark a horis:ActionStep ;
    horis:tool :{name}.mark ;
    horis:requires "FILTER NOT EXISTS {{ ?this :done true }}" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


def test_a_pattern_carries_the_prefixes_it_names_not_every_one_the_files_bind(
    tmp_path: Path,
) -> None:
    paths = []
    for i in range(3):
        path = tmp_path / f"m{i}.ttl"
        path.write_text(_MODULE.format(name=f"m{i}"), encoding="utf-8")
        paths.append(path)
    defs = load_definitions(paths)
    for i in range(3):
        step = defs.steps[URIRef(f"http://example.org/m{i}#Mark")]
        assert step.requires is not None
        assert step.requires.prefixes == (("", f"http://example.org/m{i}#"),)


def _pre(text: str, prefixes: tuple[tuple[str, str], ...]) -> Precondition:
    select = prepareQuery(f"SELECT * WHERE {{ {text} }}", initNs=dict(prefixes))
    return Precondition(
        (Pattern(text),), select, f"SELECT * WHERE {{ {text} }}", prefixes, frozenset({"x"})
    )


def test_patterns_sent_in_one_request_agree_on_every_prefix_they_share() -> None:
    # Each carries only the prefixes it names: two may each agree with the step's own
    # pattern (which names no ':') and not with each other.
    pre = _pre("?x a <http://example.org/T>", ())
    one = _pre("?x :p ?y", (("", "http://example.org/one#"),))
    other = _pre("?x :q ?y", (("", "http://example.org/other#"),))
    assert _compatible(pre, (one, other)) == [one]
