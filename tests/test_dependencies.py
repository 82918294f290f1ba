"""Dependencies whose internals Horismos uses are installed within the range pyproject.toml
allows, so a release that moves those internals fails here, by name, not deep in a run."""

from __future__ import annotations

import importlib
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

# package → what of it is used beyond its public API (keep in step with pyproject.toml)
INTERNALS = {
    "pyshacl": "ShapesGraph, SHACLExecutor and DataGraph in horismos/_gate.py; its result "
               "wording, reproduced by horismos/_shacl_report.py and _shacl_constraints.py",
    "mcp": "the private helpers of mcp.client.stdio (spawn, parse, drain, stop) that "
           "horismos/_bindings/mcp_stdio.py reuses to cap each message a stdio server sends, "
           "and the timeouts of mcp.shared._httpx_utils (MCP_DEFAULT_TIMEOUT, "
           "MCP_DEFAULT_SSE_READ_TIMEOUT) that horismos/_bindings/mcp_http.py builds the "
           "capped streamable HTTP client with, as create_mcp_http_client does; that client "
           "also reads a call's context in the task the SDK sends its POST from (the SDK "
           "passes the caller's on: tests/test_mcp_http_gone.py fails, the call held in "
           "doubt, the day it does not)",
    "rdflib": "the private N-Triples quoting helpers of rdflib.plugins.serializers.nt in "
              "horismos/_stores/base.py and horismos/_stores/ox_terms.py, the attributes "
              "a Literal's constructor sets, set directly in horismos/_stamps.py, and the "
              "SPARQL grammar of rdflib.plugins.sparql.parser, copied by "
              "horismos/_sparql_parse.py, and its SPARQL aggregates, which "
              "horismos/_stores/aggregates.py answers as Oxigraph does: accumulators added to "
              "Aggregator.accumulator_classes (a dict, by the algebra node's name), subclasses "
              "of Accumulator, Sum and Average overriding use_row (DISTINCT's test, "
              "dont_care without), update and set_value, calling Sum's and Average's update "
              "and get_value and reading their expr, seen and var, and evalutils._eval, which "
              "reads a literal as itself, and rdflib.term._toPythonMapping, read by "
              "horismos/_negative_durations.py to add its -P1Y1D writer only over rdflib's "
              "own xsd:duration constructor (without it, the writer is not added)",
    "pyparsing": "its elements' attributes (ignoreExprs, the lists and elements they hold), "
                 "through which horismos/_sparql_parse.py copies rdflib's SPARQL grammar",
}

# module → the names Horismos imports or calls from it that its package does not promise
NAMES = {
    "pyshacl.shapes_graph": ("ShapesGraph",),
    "pyshacl.pytypes": ("SHACLExecutor",),
    "pyshacl.graph_abstraction": ("DataGraph",),
    "mcp.client.stdio": ("_get_executable_command", "_create_platform_compatible_process",
                         "_parse_line", "_drain_stdout", "_WRITER_FLUSH_TIMEOUT",
                         "_stop_server_process", "_aclose_all", "get_default_environment"),
    "mcp.shared._httpx_utils": ("MCP_DEFAULT_TIMEOUT", "MCP_DEFAULT_SSE_READ_TIMEOUT"),
    "rdflib.plugins.serializers.nt": ("_quoteLiteral", "_quote_encode"),
    "rdflib.plugins.sparql.parser": ("Query", "expandUnicodeEscapes"),
    "rdflib.plugins.sparql.aggregates": (
        "Aggregator.accumulator_classes", "Accumulator.use_row", "Accumulator.dont_care",
        "Accumulator.set_value", "Sum.update", "Sum.get_value", "Average.update",
        "Average.get_value",
    ),
    "rdflib.plugins.sparql.evalutils": ("_eval",),
    "rdflib.term": ("_toPythonMapping",),
}


def _requirements() -> dict[str, Requirement]:
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    return {r.name: r for r in map(Requirement, deps)}


@pytest.mark.parametrize("package", sorted(INTERNALS))
def test_a_dependency_used_through_its_internals_is_bounded_and_installed_in_range(
        package: str) -> None:
    requirement = _requirements()[package]
    spec = requirement.specifier
    assert any(s.operator in ("<", "<=", "==", "~=") for s in spec), (
        f"{package} is used through its internals ({INTERNALS[package]}), so pyproject.toml "
        f"must bound it from above; it says {requirement}")
    installed = version(package)
    assert spec.contains(installed, prereleases=True), (
        f"{package} {installed} is installed, outside {spec} that pyproject.toml allows: "
        f"Horismos uses {INTERNALS[package]}. Install a version in range "
        f"(pip install '{requirement}') or widen the range once the gate tests pass on it.")


def _has(module: str, dotted: str) -> bool:
    """Whether ``module`` holds ``dotted``, a name or a class's attribute (``Sum.update``)."""
    found: object = importlib.import_module(module)
    for name in dotted.split("."):
        if not hasattr(found, name):
            return False
        found = getattr(found, name)
    return True


@pytest.mark.parametrize("module", sorted(NAMES))
def test_the_internals_horismos_uses_are_still_there(module: str) -> None:
    missing = [n for n in NAMES[module] if not _has(module, n)]
    package = module.partition(".")[0]
    assert not missing, (
        f"{package} {version(package)} has no {', '.join(missing)} in {module}: Horismos uses "
        f"{INTERNALS[package]}. Install a release pyproject.toml allows, or port that code and "
        "move the bound")


def test_rdflib_still_finds_an_aggregate_s_accumulator_by_its_node_s_name() -> None:
    """The ``memory`` store renames ``MIN``, ``MAX``, ``SUM`` and ``AVG``'s nodes and adds its
    accumulators under the new names; an accumulator adds a value by evaluating its ``expr``,
    given the value itself, evaluated once (horismos/_stores/aggregates.py)."""
    from rdflib import Literal, Variable
    from rdflib.plugins.sparql import prepareQuery
    from rdflib.plugins.sparql.aggregates import Aggregator
    from rdflib.plugins.sparql.evalutils import _eval

    from horismos._aggregate_names import AS_OXIGRAPH

    assert isinstance(Aggregator.accumulator_classes, dict)
    assert set(AS_OXIGRAPH) <= set(Aggregator.accumulator_classes)
    one = Literal(1)
    assert _eval(one, None) is one  # type: ignore[arg-type]
    query = prepareQuery("SELECT (SUM(DISTINCT ?o) AS ?d) (SUM(?o) AS ?s) WHERE { }")
    node = query.algebra
    while node.name != "AggregateJoin":
        node = node["p"]
    distinct, plain = Aggregator(node["A"]).accumulators.values()
    assert (distinct.expr, distinct.seen) == (Variable("o"), set())
    assert isinstance(distinct.var, Variable)  # where its value is bound
    assert plain.use_row == plain.dont_care  # DISTINCT's test, not called without
