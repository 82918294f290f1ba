"""Loading a project of many files: each pattern read with what it names, parsed as rdflib would.

A project of N files binds about N namespaces (each file its own ``:``). A pattern prepared
with every prefix of the project was handed all of them at load and at each query (Oxigraph
reads a query's prefix map on every call: ~1 ms for 800 prefixes, ~60 µs for one); rdflib's
parse of a pattern without a comment is read by a copy of its grammar without the comment
rule (``_sparql_parse``), which must give the very query rdflib gives, and its very errors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rdflib import URIRef
from rdflib.plugins.sparql import prepareQuery

from horismos import load_definitions
from horismos._preconditions import Pattern, Precondition
from horismos._sparql_parse import prepare_query
from horismos._stores.sparql_reads import compatible

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


TEXTS = [
    "ASK WHERE { FILTER NOT EXISTS { ?this :done true }\n}",
    "ASK WHERE { ?this :value ?v ; a ?kind .\n ?kind :criticalAbove ?limit .\n"
    " FILTER (?v > ?limit) }",
    "SELECT * WHERE { { ?x :p/:q* ?y } UNION { ?y ^:r ?x OPTIONAL { ?x :s ?z "
    "BIND(xsd:integer(?z) + 1 AS ?w) } } VALUES ?x { :a :b } MINUS { ?x :t 'x\\u0041' } }",
    "SELECT ?o (COUNT(?x) AS ?n) WHERE { ?x :p ?o . FILTER(regex(str(?o), '^a', 'i') && "
    "lang(?o) = 'en') } GROUP BY ?o HAVING (COUNT(?x) > 1) ORDER BY DESC(?n) LIMIT 5",
    "ASK WHERE { ?x :p ?y # a comment, read by rdflib's own grammar\n }",
    "ASK WHERE { ?x <http://example.org/e#p> ?y }",
    "ASK WHERE { ?x :p '''a # not a comment''' }",
    "ASK WHERE { ?x :p \\u0023 }",  # an escaped '#': a comment once rdflib expands it
    # errors: the same exception, the same words
    "ASK WHERE { ?x :p }",
    "ASK WHERE { ?x nope:p ?y }",
    "ASK WHERE { ?x :p ?y } } UNION { ?a ?b ?c }",
    "ASK WHERE { FILTER(?x > ) }",
    "ASK WHERE { ?x :p ?y # unclosed\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_query_is_prepared_as_rdflib_prepares_it(text: str) -> None:
    ns = {"": "http://example.org/e#", "xsd": "http://www.w3.org/2001/XMLSchema#"}
    try:
        expected = prepareQuery(text, initNs=ns)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            prepare_query(text, ns)
        assert str(got.value) == str(e)
        return
    query = prepare_query(text, ns)
    assert query.algebra == expected.algebra
    assert str(query.algebra) == str(expected.algebra)
    assert query.prologue.namespace_manager.store.namespace("") == URIRef(ns[""])


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
    assert compatible(pre, (one, other)) == [one]


def test_a_grammar_that_cannot_be_copied_still_loads_patterns(monkeypatch) -> None:
    """A pyparsing whose elements cannot be copied without their comment rule costs speed,
    never a project: the pattern is read by rdflib's own grammar, to the same query."""
    from horismos import _sparql_parse

    def refuse() -> None:
        raise AttributeError("elements built otherwise")

    monkeypatch.setattr(_sparql_parse, "_copied_without_comments", refuse)
    _sparql_parse._uncommented.cache_clear()
    try:
        text = "SELECT ?x WHERE { ?x <http://example.org/p> 1 }"
        assert str(prepare_query(text, {}).algebra) == str(prepareQuery(text).algebra)
    finally:
        _sparql_parse._uncommented.cache_clear()


def test_placing_a_warning_per_property_shape_reads_its_lines_not_the_whole_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node shape of N property shapes, each requiring a property nothing declares: a
    warning each, placed at its ``sh:path``. Each was placed by searching every line of the
    shape's description, then scoring every ``sh:property`` in it: loading grew with N²
    (bench_load.py --properties: 300 -> 1,000 shapes, 2.0 -> 13.7 s). Lines are found now
    from an index of the file's words, built once, so a warning reads what its terms touch."""
    from horismos import _sources

    found = _sources.ParsedFile.find
    searched = [0]

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        searched[0] += 1
        return found(self, *args, **kwargs)

    monkeypatch.setattr(_sources.ParsedFile, "find", counted)
    per_warning = []
    for n in (40, 400):
        text = _MODULE.format(name="req") + "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        text += ":ItemShape a sh:NodeShape ;\n    sh:targetClass :Item"
        text += "".join(f" ;\n    sh:property [\n        sh:path :p{i} ;\n"
                        "        sh:minCount 1\n    ]" for i in range(n))
        path = tmp_path / f"shape{n}.ttl"
        path.write_text(text + " .\n", encoding="utf-8")
        lines = text.splitlines()
        searched[0] = 0
        defs = load_definitions([path])
        assert len(defs.warnings) == n
        for w in defs.warnings:  # each at its own property shape's sh:path
            named = re.search(r":p\d+\b", w.message)
            assert named and w.line and lines[w.line - 1].strip() == f"sh:path {named[0]} ;"
        per_warning.append(searched[0] / n)
    assert per_warning[1] < 2 * per_warning[0] < 40, per_warning  # 210 -> 2,009 a warning


@pytest.mark.parametrize("others", [1, 40])  # scored each, and found by the word index
def test_a_statement_is_placed_where_its_predicate_line_writes_its_value(
    tmp_path: Path, others: int
) -> None:
    """``<o>`` under ``@base`` is not a way the index finds ``ex:o``; the ``ex:o`` of a later
    statement (``ex:r ex:o``, in the text of the last ``ex:p`` statement, which runs to the
    next ``ex:p``) is. Only the statements writing it were scored: the value went to the last
    ``ex:p`` line, not the first one, where scoring every statement placed it (review)."""
    from horismos._read_sources import read_sources

    text = "@base <http://ex/> .\n@prefix ex: <http://ex/> .\nex:s ex:p <o> ;\n"
    text += "".join(f"     ex:p ex:x{i} ;\n" for i in range(others))
    text += "     ex:r ex:o .\n"
    path = tmp_path / "base.ttl"
    path.write_text(text, encoding="utf-8")
    ex = "http://ex/"
    sources = read_sources([path])
    assert sources.locate_statement(URIRef(ex + "s"), URIRef(ex + "p"), URIRef(ex + "o")) == (
        str(path),
        3,
    )
    assert sources.locate_statement(URIRef(ex + "s"), URIRef(ex + "p"), URIRef(ex + "x0"))[1] == 4
    last = URIRef(ex + f"x{others - 1}")
    assert sources.locate_statement(URIRef(ex + "s"), URIRef(ex + "p"), last)[1] == 3 + others


def test_the_word_index_places_every_statement_where_scoring_each_does(monkeypatch) -> None:
    """Scoring only the statements the word index says may hold a value's marks, from the
    most marks down, places every statement of these files where scoring each one does."""
    from horismos._read_sources import read_sources
    from horismos._sources import Sources

    root = Path(__file__).parent
    paths = [
        *sorted((root / "fixtures").rglob("*.ttl"))[::4],
        *(root.parent / "examples").rglob("*.ttl"),
    ]
    checked = 0
    for path in paths:
        try:
            sources = read_sources([path])
        except Exception:  # a fixture that does not load alone
            continue
        triples = list(sources.graph)
        monkeypatch.setattr(Sources, "_FEW", 0)
        bounded = [sources.locate_statement(*t) for t in triples]
        sources._where.clear()
        monkeypatch.setattr(Sources, "_FEW", 10**9)
        assert [sources.locate_statement(*t) for t in triples] == bounded, path
        checked += len(bounded)
    assert checked > 1000, checked


def test_blank_nodes_that_open_one_another_are_placed_without_endless_recursion(
    tmp_path: Path,
) -> None:
    """``_:p2 sh:zeroOrMorePath ( _:p2 )`` (as a W3C SHACL test writes it): placing a blank
    node places the statement that opens it, which placed the list's node, which placed
    ``_:p2`` again, until Python's recursion limit (review)."""
    from horismos._read_sources import read_sources

    path = tmp_path / "cycle.ttl"
    path.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\n_:p2 sh:zeroOrMorePath ( _:p2 ) .\n",
        encoding="utf-8",
    )
    fixture = Path(__file__).parent / "fixtures/w3c_shacl_core/path/path-unused-001-shapes.ttl"
    for file in (path, fixture):
        sources = read_sources([file])
        placed = [sources.locate_statement(s, p, o) for s, p, o in sources.graph]
        assert all(file_ in (None, str(file)) for file_, _ in placed)
