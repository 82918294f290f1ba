"""``World.load_data``: an event's facts land from memory, checked as a file's are, whole or not
at all.

A service running one instance per event received the event as Turtle or JSON-LD text (or
built an rdflib graph) and had no public way to land it: ``World.load`` takes paths only,
``World.commit`` the private ``Change``, and ``world.graph`` refuses writes. It wrote a
temporary file per event.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDF, Dataset, Graph, Literal, Namespace, URIRef

from horismos import Agent, AuthoringError, UsageError, World

EX = Namespace("http://example.org/ehr#")
ROOT = Path(__file__).resolve().parent.parent

EVENT = """\
@prefix : <http://example.org/ehr#> .
:patient99 a :Patient ; :acuity :urgent ; :seenBy [ :name "triage desk" ] .
"""


def tools() -> dict[str, object]:
    return {
        "ehr_client.assign_queue": lambda patient, queue: {"queueRef": "Q-URGENT-1"},
        "ehr_client.notify_nurse": lambda patient, nurse, ref: {"assignedNurse": nurse},
    }


@pytest.fixture(params=["memory", "oxigraph", "journal:PATH"])
def world(request: pytest.FixtureRequest, tmp_path: Path):
    store = str(request.param).replace("PATH", str(tmp_path / "store"))
    with World.open(store) as opened:
        opened.load(ROOT / "examples/triage/world.ttl")
        yield opened


def test_an_event_given_as_turtle_text_lands_and_a_run_acts_on_it(world: World) -> None:
    world.load_data(EVENT)
    agent = Agent.from_files(
        ROOT / "workflows/triage.ttl", ROOT / "ontologies/ehr.ttl", tools=tools()
    )
    run = agent.run(world, workflow=EX.Triage, focus=EX.patient99)
    assert run.status == "completed"
    assert world.graph.value(EX.patient99, EX.queueRef) == Literal("Q-URGENT-1")


def test_text_lands_as_the_same_file_would(world: World, tmp_path: Path) -> None:
    (tmp_path / "event.ttl").write_text(EVENT)
    with World.open("memory") as from_file:
        from_file.load(ROOT / "examples/triage/world.ttl", tmp_path / "event.ttl")
        world.load_data(EVENT)
        # the same quads, blank nodes named the same, literals as the store keeps them
        assert world.canonical() == from_file.canonical()
        assert world.digest() == from_file.digest()
    before = world.digest()
    world.load_data(EVENT)  # the same event again adds nothing
    assert world.digest() == before


def test_json_ld_and_rdflib_graphs_land(world: World) -> None:
    world.load_data(
        '{"@context": {"@vocab": "http://example.org/ehr#"}, '
        '"@id": "http://example.org/ehr#patient98", "@type": "Patient", '
        '"acuity": {"@id": "http://example.org/ehr#routine"}}',
        format="json-ld",
    )
    assert (EX.patient98, RDF.type, EX.Patient) in world.graph
    g = Graph()
    g.add((EX.patient97, RDF.type, EX.Patient))
    world.load_data(g)
    assert (EX.patient97, RDF.type, EX.Patient) in world.graph
    ds = Dataset()
    ds.graph(URIRef("http://example.org/ehr#intake")).add((EX.patient96, EX.acuity, EX.urgent))
    world.load_data(ds)  # its named graph kept
    assert (EX.patient96, EX.acuity, EX.urgent) in world.graph.graph(EX.intake)


def test_text_that_does_not_parse_is_refused_at_its_line_and_lands_nothing(
    world: World,
) -> None:
    before = world.canonical()
    bad = EVENT + ":patient100 a :Patient\n:patient101 a :Patient .\n"
    with pytest.raises(AuthoringError) as e:
        world.load_data(bad)
    (problem,) = e.value.problems
    assert problem.line == 3  # the statement missing its '.', not the line read on to
    assert problem.hint == "end the statement on line 3 with ' .'"
    with pytest.raises(AuthoringError) as e:
        world.load_data("<patient> a <http://example.org/ehr#Patient> .")
    assert "base=" in str(e.value)
    assert world.canonical() == before  # the parsed statements before the error: none landed


@pytest.mark.parametrize(
    "data",
    [
        # an instance of the runtime's, written by hand
        "<urn:horismos:instance:x> a <https://w3id.org/horismos#Instance> .",
        # an approval record: the fingerprint is public, so it would approve any call
        "<http://example.org/a> a <https://w3id.org/horismos#Approval> .",
        # something said of one of the runtime's nodes, in the default graph
        "<http://example.org/g> <http://example.org/p> <urn:horismos:approval:x> .",
    ],
)
def test_runtime_state_is_refused_and_nothing_lands(world: World, data: str) -> None:
    before = world.canonical()
    with pytest.raises(UsageError, match="runtime state"):
        world.load_data(EVENT + data)
    assert world.canonical() == before


def test_a_format_not_known_or_data_of_another_kind_says_what_to_give(world: World) -> None:
    with pytest.raises(UsageError, match="json-ld, n3, nquads, nt, trig, turtle"):
        world.load_data(EVENT, format="rdf/xml")
    with pytest.raises(UsageError, match=r"world\.load\(PATH\)"):
        world.load_data(ROOT / "examples/triage/world.ttl")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="leave format out"):
        world.load_data(Graph(), format="turtle")
