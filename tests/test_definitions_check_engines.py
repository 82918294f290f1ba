"""The check of the definitions against the authoring shapes runs on the compiled SHACL subset
(:mod:`horismos._shacl_graph`), not pyshacl: importing and running pyshacl was half of every
command's start. pyshacl is the reference: on the shipped definitions and on randomly broken
copies of them, both engines must give the same results, word for word, and a load must say
the same problems whichever engine judged it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path

import pyshacl
import pytest
import rdflib
from rdflib import Graph, Literal, URIRef
from rdflib.compare import to_canonical_graph

import horismos._term_checks as term_checks
from horismos import AuthoringError, Definitions, load_definitions
from horismos._shacl_graph import compiled_all, judged_by_compiled, report_results
from horismos._shipped_vocabulary import authoring_shapes, vocabulary_graph
from horismos._vocab import NS

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = [
    [ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"],
    [ROOT / "workflows" / "lab_review.ttl", ROOT / "ontologies" / "lab.ttl"],
    [ROOT / "workflows" / "rebooking.ttl", ROOT / "ontologies" / "travel.ttl"],
    [ROOT / "examples" / "mcp" / "clinic.ttl"],
]


def _graph(files: list[Path]) -> Graph:
    """The files' graph, its blank nodes named canonically: a seed breaks the same statements
    at every run."""
    g = Graph()
    for f in files:
        g.parse(f, format="turtle")
    out = Graph()
    for t in to_canonical_graph(g):
        out.add(t)
    return out


def _broken(g: Graph, rng: random.Random) -> Graph:
    """``g`` with a few of its ``horis:`` statements broken as authors break them: one left
    out, one given twice, a string given a language tag or a number, a node given a literal."""
    out = Graph()
    for t in g:
        out.add(t)
    ours = sorted((t for t in g if str(t[1]).startswith(NS)), key=str)
    for s, p, o in rng.sample(ours, k=min(3, len(ours))):
        how = rng.choice(["drop", "twice", "tagged", "number", "literal", "iri"])
        if how != "twice":
            out.remove((s, p, o))
        if how == "twice":
            out.add((s, p, Literal("another") if isinstance(o, Literal) else URIRef(f"{o}2")))
        elif how == "tagged":
            out.add((s, p, Literal(str(o), lang="en")))
        elif how == "number":
            out.add((s, p, Literal(7)))
        elif how == "literal":
            out.add((s, p, Literal(str(o), datatype=rdflib.XSD.string)))
        elif how == "iri":
            out.add((s, p, URIRef(f"{NS}Nothing")))
    return out


def _both(data: Graph) -> tuple[set[tuple], set[tuple]]:
    """The results of both engines on ``data`` with the vocabulary, as the load checks it."""
    shapes = authoring_shapes()
    assert shapes is not None
    for t in vocabulary_graph():
        data.add(t)
    compiled = judged_by_compiled(data, shapes, compiled_all(shapes))
    assert compiled is not None, "an authoring shape fell out of the compiled subset"
    _, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none")
    return {astuple(r) for r in compiled}, {astuple(r) for r in report_results(report)}


def test_every_authoring_shape_compiles() -> None:
    shapes = authoring_shapes()
    assert shapes is not None and compiled_all(shapes) is not None


@pytest.mark.parametrize("files", SHIPPED, ids=lambda fs: fs[0].name)
def test_both_engines_find_the_shipped_definitions_sound(files: list[Path]) -> None:
    compiled, reference = _both(_graph(files))
    assert compiled == reference == set()


@pytest.mark.parametrize("seed", range(16))
def test_both_engines_say_the_same_of_broken_definitions(seed: int) -> None:
    rng = random.Random(seed)
    files = SHIPPED[seed % len(SHIPPED)]
    compiled, reference = _both(_broken(_graph(files), rng))
    assert compiled == reference
    if seed == 0:
        assert compiled, "a broken copy the shapes found nothing wrong in proves little"


def _problems(files: list[Path]) -> list[str] | Definitions:
    try:
        return load_definitions(files)
    except AuthoringError as e:
        return sorted(str(p) for p in e.problems)


AUTHORING = sorted((ROOT / "tests" / "fixtures" / "authoring").glob("*.ttl"))


@pytest.mark.parametrize("file", AUTHORING, ids=lambda f: f.stem)
def test_a_load_says_the_same_problems_whichever_engine_judged(
        file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = [file, ROOT / "ontologies" / "ehr.ttl"]
    fast = _problems(files)
    monkeypatch.setattr(term_checks, "compiled_authoring_shapes", lambda: None)
    reference = _problems(files)
    if isinstance(fast, Definitions):
        assert isinstance(reference, Definitions)
        assert fast.warnings == reference.warnings
    else:
        assert fast == reference


def test_a_command_that_judges_no_shape_outside_the_subset_never_imports_pyshacl(
        tmp_path: Path) -> None:
    """``horismos validate workflows ontologies``: the definitions' check and the domain
    shapes all compile (a property path's own node, ``[ sh:zeroOrMorePath rdf:rest ]`` in
    the authoring shapes, is no shape), so pyshacl (0.35 s to import) is not loaded at all."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['horismos', 'validate', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('horismos', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "print('pyshacl' in sys.modules, code)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(ROOT / "workflows"),
                           str(ROOT / "ontologies")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.stdout.strip().splitlines()[-1] == "False 0", done.stdout + done.stderr
