"""What a process pays before it does anything: one ``horismos`` process per event makes the
fixed cost of starting part of every event's latency (benchmarks/bench_startup.py measures
it). These hold what is not paid: ``import horismos`` does not import the packages only some
commands need, and the shipped vocabulary, read by the faster parser, is the very graph
rdflib's own parser reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib import Graph, Literal

from horismos import _definitions
from horismos._stores.ox_terms import to_ox

DEFERRED = (
    "pyshacl",  # the gate's reference engine: imported when a shape outside the subset is met
    "rdflib.plugins.sparql",  # rdflib's SPARQL parser and engine: at the first query parsed
    "pyparsing",  # the grammar under it
    "numpy",  # the world digest's sums: at the first digest summed
)


def _imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_horismos_leaves_what_only_some_commands_need() -> None:
    """``import horismos`` (and so every command's start) imported pyshacl and rdflib's SPARQL
    package, ~130 ms of each process, whether or not it judged a shape or parsed a query."""
    modules = _imported_by("import horismos")
    assert "horismos._agent" in modules  # the package itself, as before
    assert [m for m in DEFERRED if m in modules] == []


def test_the_library_still_works_once_they_are_needed() -> None:
    """The deferred packages are imported by the first use that needs them: a load of
    definitions with preconditions parses them with rdflib's SPARQL package. pyshacl is not
    needed while every shape compiles (the triage workflow's and the authoring shapes)."""
    modules = _imported_by(
        "from pathlib import Path\n"
        "from horismos import Agent, World\n"
        "root = Path('..').resolve()\n"
        "Agent.from_files(root / 'workflows/triage.ttl', root / 'ontologies/ehr.ttl')"
    )
    assert "rdflib.plugins.sparql" in modules
    assert "pyshacl" not in modules


SPARQL_SHAPE = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ehr: <http://example.org/ehr#> .
ehr:OneQueueShape a sh:NodeShape ;
    sh:targetClass ehr:Patient ;
    sh:sparql [ sh:select "SELECT $this WHERE { $this <http://example.org/ehr#queueRef> ?a }" ] .
"""


def test_pyshacl_is_loaded_for_a_shape_outside_the_compiled_subset(tmp_path: Path) -> None:
    """A SPARQL-based constraint only pyshacl judges: it is loaded when the agent is built
    (its shapes are loaded and judged once then, so a slip in one is said before any step)."""
    (tmp_path / "shape.ttl").write_text(SPARQL_SHAPE, encoding="utf-8")
    modules = _imported_by(
        "from pathlib import Path\n"
        "from horismos import Agent\n"
        "root = Path('..').resolve()\n"
        "Agent.from_files(root / 'workflows/triage.ttl', root / 'ontologies/ehr.ttl', "
        f"Path({str(tmp_path / 'shape.ttl')!r}))"
    )
    assert "pyshacl" in modules


def _canonical(g: Graph) -> set[ox.Quad]:
    """``g``'s triples with its blank nodes labelled by RDF canonicalization (RDFC-1.0, as
    Oxigraph implements it): two graphs are isomorphic when these are equal. rdflib's
    ``isomorphic`` took 2 to 4 s over the shapes file's blank nodes; this takes ~10 ms."""
    dataset = ox.Dataset(ox.Quad(to_ox(s), to_ox(p), to_ox(o)) for s, p, o in g)
    dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
    return set(dataset)


@pytest.mark.parametrize("name", ["horis.ttl", "horis-shapes.ttl"])
def test_the_shipped_vocabulary_is_read_as_rdflib_reads_it(name: str) -> None:
    """Read by Oxigraph's parser: the same triples (blank nodes aside, up to their labels), the
    same literals to the letter (lexical form, datatype, language) and the same prefixes as
    rdflib's Turtle parser gives, so every check and message reading it is unchanged."""
    text = (Path(_definitions.__file__).parent / "ontology" / name).read_text(encoding="utf-8")
    reference = Graph().parse(data=text, format="turtle")
    read = _definitions._package_graph(name)

    def literals(g: Graph) -> list[str]:
        return sorted(repr(o) for o in g.objects() if isinstance(o, Literal))

    assert _canonical(read) == _canonical(reference)
    assert literals(read) == literals(reference)
    assert sorted(read.namespaces()) == sorted(reference.namespaces())
