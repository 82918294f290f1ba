"""WaitStep and resume: a run stops at a wait, and a later call — or process — continues it."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from rdflib import Graph, Namespace, URIRef
from trip_proposal import BOOK_TOOL

from horismos import Agent, GateRejected, UsageError, World
from horismos import _stored_instances as stored
from horismos import _waits as waits
from horismos._environment import Environment
from horismos._replay import replay
from horismos._trace import read_trace
from horismos._traceview import prov_turtle
from horismos._vocab import HORIS, PROV
from horismos._world import INSTANCES

L = Namespace("http://example.org/leave#")
ROOT = Path(__file__).resolve().parent.parent

PREFIXES = """\
@prefix :      <http://example.org/leave#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

DEFINITIONS = (
    PREFIXES
    + """
:Request a owl:Class . :Manager a owl:Class . :Hotel a owl:Class .

:RequestShape a sh:NodeShape ;
    sh:targetClass :Request ;
    sh:property [ sh:path :approvedBy ; sh:class :Manager ; sh:maxCount 1 ;
                  sh:message "a request is approved by one manager" ] .

:t.file a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type :Request ] ;
                  horis:arg [ horis:name "approver" ; horis:type :Manager ] ] ;
    horis:effect [ horis:subject "request" ;
                   horis:asserts [ horis:property :filedWith ; horis:type :Manager ] ] ;
    horis:binding "python:file_request" .

:Leave a horis:Workflow ; horis:focusType :Request ; horis:start :Approve .

:Approve a horis:WaitStep ;
    horis:reason "A manager approves the leave request." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :approvedBy ?approver ." ;
    horis:timeout "2h" ;
    horis:onTimeout :Escalate ;
    horis:next :File .

:File a horis:ActionStep ;
    horis:tool :t.file ;
    horis:requires "?this :approvedBy ?approver ." ;
    horis:bind [ horis:arg "request" ; horis:var "this" ] .

:Escalate a horis:WaitStep ;
    horis:reason "Nobody approved in time." ;
    horis:wake horis:System ;
    horis:delivery horis:Silent .
"""
)

WORLD = (
    PREFIXES
    + """
:req1 a :Request ; rdfs:label "Ada, 3 days in May" .
:req2 a :Request ; rdfs:label "Brian, 1 day" ; :approvedBy :grace .
:grace a :Manager ; rdfs:label "Grace" .
:intern a :Person .
"""
)


def file_request(request: URIRef, approver: URIRef) -> dict[str, object]:
    return {"filedWith": approver}


@pytest.fixture
def leave(tmp_path: Path) -> tuple[Agent, World]:
    (tmp_path / "leave.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    return agent, World.from_files(tmp_path / "world.ttl")


class Clock(Environment):
    """The runtime clock, set by the test: the environment is where time comes from."""

    def __init__(self, at: dt.datetime) -> None:
        super().__init__()
        self.at = at

    def now(self) -> dt.datetime:
        self.note("clock", self.at.isoformat())
        return self.at


T0 = dt.datetime(2026, 5, 4, 9, 0, tzinfo=dt.UTC)


def state(world: World, iid: URIRef) -> tuple[URIRef | None, URIRef | None]:
    g = world.graph.graph(INSTANCES)
    return g.value(iid, HORIS.status), g.value(iid, HORIS.currentStep)


# -- waiting ---------------------------------------------------------------------------------


def test_a_wait_publishes_its_brief_with_the_state_and_the_trace_event(leave) -> None:
    agent, world = leave
    run = agent.run(world, ":Leave", ":req1")
    assert run.status == "waiting"
    (rec,) = run.steps
    assert rec.status == "waiting" and rec.brief == run.brief
    assert run.brief.startswith("A manager approves the leave request.")
    assert str(run.instance) in run.brief and "?this :approvedBy ?approver ." in run.brief
    assert "2h" in run.brief and ":Escalate" in run.brief
    # the graph holds the waiting state and the wait's own record, with the same brief
    assert state(world, run.instance) == (HORIS.Waiting, L.Approve)
    wait_graph = world.graph.graph(rec.graph)
    (activity,) = wait_graph.subjects(HORIS.step, L.Approve)
    assert str(wait_graph.value(activity, HORIS.brief)) == run.brief
    assert wait_graph.value(activity, HORIS.provenance) == HORIS.SystemProvenance
    # the trace event carries the brief and the graph the wait committed
    event = [e for e in run.trace.events if e["type"] == "step"][-1]
    assert event["status"] == "waiting" and event["wait"]["brief"] == run.brief
    assert event["graph"] == str(rec.graph)
    assert event["wait"]["started"] == str(wait_graph.value(activity, PROV.startedAtTime))


def test_a_wait_whose_until_already_holds_does_not_wait(leave) -> None:
    agent, world = leave
    run = agent.run(world, ":Leave", ":req2")
    assert run.status == "completed"
    assert [(s.step, s.status) for s in run.steps] == [
        (L.Approve, "completed"),
        (L.File, "completed"),
    ]
    assert run.steps[0].detail["wait"]["outcome"] == "until_held"
    assert (L.req2, L.filedWith, L.grace) in world.graph


# -- resuming --------------------------------------------------------------------------------


def test_resume_lands_the_facts_as_human_input_and_continues(leave) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    run = agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .")
    assert run.status == "completed"
    assert [(s.step, s.status) for s in run.steps] == [
        (L.Approve, "completed"),
        (L.File, "completed"),
    ]
    assert (L.req1, L.filedWith, L.grace) in world.graph
    assert state(world, waiting.instance) == (HORIS.Completed, None)
    resume = next(e for e in run.trace.events if e["type"] == "resume")
    assert resume["facts"] == [f"{L.req1.n3()} {L.approvedBy.n3()} {L.grace.n3()} ."]
    facts_graph = world.graph.graph(URIRef(resume["graph"]))
    assert (L.req1, L.approvedBy, L.grace) in facts_graph
    activity = facts_graph.value(URIRef(resume["graph"]), PROV.wasGeneratedBy)
    assert facts_graph.value(activity, HORIS.provenance) == HORIS.HumanProvenance
    # the wait's activity is closed: it will not be taken for an open wait again
    wait_graph = world.graph.graph(waiting.steps[0].graph)
    assert list(wait_graph.objects(None, PROV.endedAtTime))


def test_the_prov_export_of_a_wait_names_the_activity_the_world_holds(leave, tmp_path) -> None:
    """A wait's record is ``urn:horismos:wait:<id>``, generated by the activity of that id;
    the export took the record for its own activity: the wait generated itself."""
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1", trace=tmp_path / "wait.jsonl")
    export = "".join(prov_turtle(read_trace(tmp_path / "wait.jsonl")))
    g = Graph().parse(data=export, format="turtle")
    record = waiting.steps[0].graph
    (activity,) = g.subjects(PROV.generated, record)
    assert activity != record and (record, PROV.wasGeneratedBy, activity) in g
    assert activity == world.graph.graph(record).value(record, PROV.wasGeneratedBy)
    assert not [s for s, o in g.subject_objects(PROV.generated) if s == o]


def test_a_fresh_agent_resumes_from_the_world_alone(leave, tmp_path) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    saved = tmp_path / "after.trig"
    world.graph.serialize(destination=saved, format="trig")
    # nothing from the first run is kept but the world file: state is read from the graph
    fresh = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    reloaded = World.from_files(saved)
    short = str(waiting.instance).rsplit(":", 1)[-1][:8]
    run = fresh.resume(reloaded, short, facts=":req1 :approvedBy :grace .")
    assert run.status == "completed" and run.instance == waiting.instance
    assert (L.req1, L.filedWith, L.grace) in reloaded.graph


class Ids(Environment):
    """Ids the test chose: the instance ids share a prefix."""

    def __init__(self, *ids: str) -> None:
        super().__init__()
        self.ids = iter(ids)

    def new_id(self) -> str:
        return self.note("ids", next(self.ids))


def test_a_short_id_names_one_instance_or_says_why_it_cannot(leave, tmp_path) -> None:
    """The store finds the instances whose id starts so (two at most), not Python among
    every instance of the world: one is resumed, a prefix of two or of none is refused."""
    agent, world = leave
    (tmp_path / "more.ttl").write_text(PREFIXES + ':req3 a :Request ; rdfs:label "Cy" .\n')
    world.load(tmp_path / "more.ttl")
    asyncio.run(agent.arun(world, ":Leave", ":req1", env=Ids("ab12", "e1", "e2")))
    second = asyncio.run(agent.arun(world, ":Leave", ":req3", env=Ids("ab34", "e3", "e4")))
    assert second.status == "waiting"
    before = world.canonical()
    for prefix, said in [
        ("ab", "more than one instance"),
        ("ab5", "no instance"),
        ("", "no instance"),
        ('ab") } #', "no instance"),
    ]:
        with pytest.raises(UsageError, match=said):
            agent.resume(world, prefix, facts=":req1 :approvedBy :grace .")
    assert world.canonical() == before
    run = agent.resume(world, "ab3", facts=":req3 :approvedBy :grace .")
    assert run.status == "completed" and str(run.instance) == "urn:horismos:instance:ab34"


def test_a_short_id_as_a_run_prints_it_is_one_index_look_up(leave, tmp_path) -> None:
    """``resume SHORTID`` read the id of every instance of the world to find those starting
    so (on disk 0.8 s beside 100,000 instances, bench_short_id.py). Each instance is filed
    under its short id at its creation now, and found by it; one written before, without it,
    is still found by its id, and two filed under the same one are still refused."""
    from rdflib import RDF

    agent, _ = leave
    (tmp_path / "more.ttl").write_text(PREFIXES + ':req3 a :Request ; rdfs:label "Cy" .\n')
    world = World.from_files(tmp_path / "world.ttl", tmp_path / "more.ttl", store="memory")
    asyncio.run(agent.arun(world, ":Leave", ":req1", env=Ids("0123abcd0001", "e1", "e2")))
    second = asyncio.run(agent.arun(world, ":Leave", ":req3", env=Ids("0123abcd0002", "e3", "e4")))
    before = [URIRef(f"urn:horismos:instance:{n:08x}{'0' * 24}") for n in range(1000)]
    world.store.load([(i, RDF.type, HORIS.Instance, INSTANCES) for i in before])
    found, read = _triples_read(world, lambda: stored.find_instance(world.store, "0123abcd0002"))
    assert found == second.instance
    assert read < 10, read  # every instance's id was read: 1,002
    assert stored.find_instance(world.store, f"{7:08x}") == before[7]  # written before the index
    with pytest.raises(UsageError, match="more than one"):  # both filed under 0123abcd
        stored.find_instance(world.store, "0123abcd")
    assert "short" not in world.canonical()  # the world's text does not hold the index


def test_a_short_id_no_instance_has_is_answered_by_the_index_once_it_holds_every_one(
    tmp_path,
) -> None:
    """A short id no instance has (the error path of ``resume``/``approve``), or one of an
    instance written before the index, read every instance's id at every look-up (0.8 s on
    disk beside 100,000, bench_short_id.py). On a store that outlives the process, the first
    such miss files every instance under its short id and stores that the index holds them
    all; a miss is then answered by the index alone — an instance a writer from before the
    index adds later is not seen. A file loaded later (an export holds no index) makes the
    store say so no more."""
    from rdflib import RDF

    before = [URIRef(f"urn:horismos:instance:{n:08x}{'0' * 24}") for n in range(1000)]
    store = f"oxigraph:{tmp_path / 'store'}"
    world = World.open(store)
    world.store.load([(i, RDF.type, HORIS.Instance, INSTANCES) for i in before])
    with pytest.raises(UsageError, match="no instance in this world with the id"):
        stored.find_instance(world.store, "ffffffff")  # once: every instance filed
    assert stored.find_instance(world.store, f"{7:08x}") == before[7]
    unfiled = URIRef("urn:horismos:instance:abcdef0100")
    world.store.load([(unfiled, RDF.type, HORIS.Instance, INSTANCES)])
    with pytest.raises(UsageError, match="no instance in this world with the id"):
        stored.find_instance(world.store, "abcdef01")  # not found: the ids were not read
    world.store.close()
    (tmp_path / "export.nq").write_text(
        f"<urn:horismos:instance:abcdef0200> <{RDF.type}> <{HORIS.Instance}> <{INSTANCES}> .\n"
    )
    loaded = horismos_forked(tmp_path, "load", "export.nq", "--store", store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    world = World.open(store)
    assert str(stored.find_instance(world.store, "abcdef02")) == "urn:horismos:instance:abcdef0200"
    assert stored.find_instance(world.store, "abcdef01") == unfiled  # indexed anew
    world.store.close()
    # a world read from a file, kept by no store, is not indexed: its ids are read, as before
    memory = World.open("memory")
    memory.load(tmp_path / "export.nq")
    assert str(stored.find_instance(memory.store, "abcdef02")) == "urn:horismos:instance:abcdef0200"
    assert not memory.store.select(
        f"SELECT ?i WHERE {{ GRAPH <{stored.SHORT_IDS}> {{ ?i ?p ?o }} }}", {}, {}
    )


def test_a_short_id_missed_while_a_file_loads_leaves_the_index_incomplete(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store was said to index every instance no more only before a file loaded: a
    miss meanwhile (another process's ``resume``, on a shared store) filed the instances held
    so far and said so again, and the file's own were then never found by their short ids."""
    from rdflib import RDF

    from horismos._stores.oxigraph import OxigraphStore

    (tmp_path / "export.nq").write_text(
        f"<urn:horismos:instance:abcdef0300> <{RDF.type}> <{HORIS.Instance}> <{INSTANCES}> .\n"
    )
    world = World.open(f"oxigraph:{tmp_path / 'store'}")
    held = URIRef(f"urn:horismos:instance:{7:08x}{'0' * 24}")
    world.store.load([(held, RDF.type, HORIS.Instance, INSTANCES)])
    load_file = OxigraphStore.load_file

    def missed_meanwhile(self: OxigraphStore, path: Path, progress: object = None) -> int:
        with pytest.raises(UsageError, match="no instance in this world with the id"):
            stored.find_instance(self, "ffffffff")  # files what is held, says it holds all
        return load_file(self, path, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(OxigraphStore, "load_file", missed_meanwhile)
    world.load(tmp_path / "export.nq")
    monkeypatch.undo()
    assert str(stored.find_instance(world.store, "abcdef03")) == "urn:horismos:instance:abcdef0300"
    world.store.close()


def test_a_miss_of_a_complete_index_is_looked_up_once(tmp_path) -> None:
    """Once the store says its index holds every instance, a short id it lacks is one
    look-up of the index and one of that mark (then the message's: is any instance held):
    the index was asked a second time."""
    from rdflib import RDF

    world = World.open(f"oxigraph:{tmp_path / 'store'}")
    held = URIRef(f"urn:horismos:instance:{7:08x}{'0' * 24}")
    world.store.load([(held, RDF.type, HORIS.Instance, INSTANCES)])
    with pytest.raises(UsageError, match="no instance in this world with the id"):
        stored.find_instance(world.store, "ffffffff")  # files every instance, once
    asked: list[str] = []
    select = world.store.select

    def counted(query: str, *args: object) -> list:
        asked.append(query)
        return select(query, *args)  # type: ignore[arg-type]

    world.store.select = counted  # type: ignore[method-assign]
    with pytest.raises(UsageError, match="no instance in this world with the id"):
        stored.find_instance(world.store, "fffffffe")
    del world.store.select
    assert len(asked) == 3, asked  # the index, its mark, and whether any instance is held
    world.store.close()


def test_a_short_id_on_a_store_that_takes_no_writes_is_looked_for_among_the_ids(
    tmp_path,
) -> None:
    """A store that refuses writes (``oxigraph serve-read-only`` behind ``sparql:``) cannot
    be given the index: an instance written before it is still found by its ids, and a miss
    still says there is none."""
    from oxigraph_server import OxigraphServer
    from rdflib import RDF

    before = [URIRef(f"urn:horismos:instance:{n:08x}{'0' * 24}") for n in range(3)]
    writable = OxigraphServer(tmp_path / "db")
    try:
        World.open(writable.store).store.load(
            [(i, RDF.type, HORIS.Instance, INSTANCES) for i in before]
        )
    finally:
        writable.stop()
    read_only = OxigraphServer(tmp_path / "db", "serve-read-only")
    try:
        world = World.open(read_only.store)
        assert stored.find_instance(world.store, f"{2:08x}") == before[2]
        with pytest.raises(UsageError, match="no instance in this world with the id"):
            stored.find_instance(world.store, "ffffffff")
    finally:
        read_only.stop()


@pytest.mark.parametrize(
    ("facts", "error", "words"),
    [
        (":req1 :approvedBy :intern .", GateRejected, "approved by one manager"),
        (":req1 :approvedBy :grace , :ada . :ada a :Manager .", GateRejected, "one manager"),
        (":req1 :approvedBy", UsageError, "not valid Turtle"),
        (":req1 horis:status horis:Completed .", UsageError, "runtime state"),
        (":req2 a horis:Instance .", UsageError, "runtime state"),  # horis: as object
        ("horis:Completed :approvedBy :grace .", UsageError, "runtime state"),  # as subject
        (':req1 rdfs:comment "x"^^horis:T .', UsageError, "runtime state"),  # as datatype
        ("<urn:horismos:instance:x> :approvedBy :grace .", UsageError, "runtime state"),
        (":req1 <urn:horismos:approvedBy> :grace .", UsageError, "runtime state"),
    ],
)
def test_facts_that_cannot_land_change_nothing(leave, facts, error, words) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    before = world.canonical()
    with pytest.raises(error, match=words):
        agent.resume(world, waiting.instance, facts=facts)
    assert world.canonical() == before
    assert state(world, waiting.instance) == (HORIS.Waiting, L.Approve)


def test_facts_may_speak_of_a_node_the_worlds_data_left_blank(tmp_path: Path) -> None:
    """A blank node of the world's data is named when it loads (``urn:horismos:genid:…``);
    it is the world's, and ``World.load_data`` lets data speak of it. Facts answering a wait
    were refused as "runtime state" for it: the two decided separately what is the
    runtime's."""
    (tmp_path / "leave.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(WORLD + ':req1 :attached [ rdfs:label "form A" ] .\n')
    agent = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    world = World.from_files(tmp_path / "world.ttl")
    form = world.graph.value(L.req1, L.attached)
    assert str(form).startswith("urn:horismos:genid:")
    waiting = agent.run(world, ":Leave", ":req1")
    facts = f"<{form}> :signedBy :grace . :req1 :approvedBy :grace ."
    agent.resume(world, waiting.instance, facts=facts)
    assert (form, L.signedBy, L.grace) in world.graph
    assert state(world, waiting.instance)[0] == HORIS.Completed


@pytest.mark.parametrize(
    ("facts", "said"),
    [
        pytest.param(
            ":req1 :aprovedBy :grace .",
            "the facts use :aprovedBy, which neither the definitions nor the world name, so "
            "nothing would read what they say of it: did you mean :approvedBy? (nothing "
            "landed)",
            id="misspelt-property",
        ),
        pytest.param(":grace a :Manger .", "did you mean :Manager?", id="misspelt-class"),
        pytest.param(
            "req1 approvedBy grace",
            "the facts are not valid Turtle: line 1, column 1: req1 is not a valid subject "
            "or graph name, at: req1 approvedBy grace;",
            id="no-prefix",
        ),
    ],
)
def test_facts_with_a_slip_are_refused_saying_what_was_meant_in_the_facts_own_terms(
    leave, facts: str, said: str
) -> None:
    # A misspelt property landed under a term nothing reads and the instance kept waiting,
    # with no did-you-mean; facts with no prefix were "line 1, column 1: Parser error at line
    # 32 …", a line of the prefixes put before the facts, which the modeler never wrote.
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    before = world.canonical()
    with pytest.raises(UsageError) as e:
        agent.resume(world, waiting.instance, facts=facts)
    assert said in str(e.value) and "Parser error" not in str(e.value), e.value
    assert world.canonical() == before
    assert state(world, waiting.instance) == (HORIS.Waiting, L.Approve)


@pytest.mark.parametrize(
    ("facts", "said"),
    [
        pytest.param(
            ':req1 :documentsIn "true" .',
            'the facts give :req1 :documentsIn "true", a literal of xsd:string, where the '
            "rdfs:range of :documentsIn is xsd:boolean: nothing reading :documentsIn as its "
            "range would match it (nothing landed) — write true without quotes",
            id="string-for-boolean",
        ),
        pytest.param(
            ":req1 :documentsIn 1 .", "— write true without quotes", id="number-for-boolean"
        ),
        pytest.param(
            ':req1 :approvedBy "grace" .',
            'the facts give :req1 :approvedBy "grace", a literal, where the values of '
            ":approvedBy are nodes",
            id="literal-for-node",
        ),
    ],
)
def test_facts_of_the_other_kind_than_the_range_are_refused(
    tmp_path: Path, facts: str, said: str
) -> None:
    """``:req1 :documentsIn "true"`` (a string) landed where the range is ``xsd:boolean``:
    the wait's ``horis:until`` never matched it, and the instance kept waiting, "this does
    not hold yet", until its timeout escalated the request the person had answered."""
    typed = DEFINITIONS.replace(
        '"?this :approvedBy ?approver ." ;\n    horis:timeout',
        '"?this :approvedBy ?approver ; :documentsIn true ." ;\n    horis:timeout',
    ) + (
        ":approvedBy a owl:ObjectProperty .\n"
        ":documentsIn a owl:DatatypeProperty ; rdfs:range xsd:boolean .\n"
    )
    (tmp_path / "leave.ttl").write_text(typed)
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    world = World.from_files(tmp_path / "world.ttl")
    waiting = agent.run(world, ":Leave", ":req1")
    before = world.canonical()
    with pytest.raises(UsageError) as e:
        agent.resume(world, waiting.instance, facts=facts)
    assert said in str(e.value), e.value
    assert world.canonical() == before
    # written as the range says, it ends the wait
    done = agent.resume(
        world, waiting.instance, facts=":req1 :approvedBy :grace ; :documentsIn true ."
    )
    assert done.status == "completed", done


def test_an_instance_that_is_not_waiting_cannot_be_resumed(leave) -> None:
    agent, world = leave
    done = agent.run(world, ":Leave", ":req2")
    before = world.canonical()
    with pytest.raises(UsageError, match="is completed, not waiting"):
        agent.resume(world, done.instance, facts=":req2 :approvedBy :grace .")
    with pytest.raises(UsageError, match="no instance"):
        agent.resume(world, "urn:horismos:instance:nope")
    assert world.canonical() == before


def test_facts_answering_another_focus_than_the_instances_are_refused(leave) -> None:
    """:req1's wait answered with `:req3 :approvedBy :grace`: the facts landed, :req1 kept
    waiting, and :req3's own wait, once reached, found its until holding and went on with no
    manager asked. Refused, nothing landed; the same fact beside one of the focus lands."""
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    before = world.canonical()
    with pytest.raises(UsageError) as e:
        agent.resume(world, waiting.instance, facts=":req3 :approvedBy :grace . :req3 a :Request .")
    assert str(e.value) == (
        "the facts give :req3 :approvedBy :grace, which the wait's horis:until reads of ?this, "
        "but this instance waits for :req1: nothing in them ends its wait, and :req3's own "
        "wait would find it answered when reached, with no one asked (nothing landed) — write "
        ":req1 for :req3, or resume the instance of :req3 once it waits")
    assert world.canonical() == before
    assert state(world, waiting.instance) == (HORIS.Waiting, L.Approve)
    run = agent.resume(world, waiting.instance,
                       facts=":req1 :approvedBy :grace . :req3 a :Request ; :approvedBy :grace .")
    assert run.status == "completed", run.error


def test_facts_that_do_not_end_the_wait_land_and_it_keeps_waiting(leave) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    run = agent.resume(world, waiting.instance, facts=':req1 rdfs:comment "asked again" .')
    assert run.status == "waiting" and run.steps[0].detail["wait"]["outcome"] == "still_waiting"
    assert run.brief == waiting.brief
    assert (L.req1, URIRef("http://www.w3.org/2000/01/rdf-schema#comment"), None) in world.graph
    run = agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .")
    assert run.status == "completed"


def test_the_timeout_is_checked_at_resume_against_the_recorded_start(leave) -> None:
    agent, world = leave
    first = asyncio.run(agent.arun(world, ":Leave", ":req1", env=Clock(T0)))
    second = asyncio.run(agent.arun(world, ":Leave", ":req1", env=Clock(T0)))
    # within the 2h: the answer ends the wait
    on_time = asyncio.run(
        agent.aresume(
            world,
            first.instance,
            ":req1 :approvedBy :grace .",
            env=Clock(T0 + dt.timedelta(hours=1)),
        )
    )
    assert [s.step for s in on_time.steps] == [L.Approve, L.File]
    # past it: the wait times out to :Escalate, a silent wait with no brief
    late = asyncio.run(
        agent.aresume(world, second.instance, None, env=Clock(T0 + dt.timedelta(hours=3)))
    )
    assert [(s.step, s.status) for s in late.steps] == [
        (L.Approve, "timed_out"),
        (L.Escalate, "waiting"),
    ]
    assert late.status == "waiting" and late.brief is None
    assert late.steps[1].detail["wait"]["brief"] is None
    assert state(world, second.instance) == (HORIS.Waiting, L.Escalate)


def test_a_resume_trace_replays_the_same(leave, tmp_path) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    agent.resume(
        world, waiting.instance, facts=":req1 :approvedBy :grace .", trace=tmp_path / "resume.jsonl"
    )
    report = replay(tmp_path / "resume.jsonl", agent)
    assert not report.diverged, str(report)


WHO_ANSWERED = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?who WHERE { GRAPH ?g { ?g prov:wasGeneratedBy ?a .
                               ?a prov:wasAssociatedWith ?p . ?p rdfs:label ?who } }
"""


def test_an_answer_names_who_gave_it_and_replays_naming_them(leave, tmp_path) -> None:
    """The facts answering a wait landed with human provenance and no person: a reviewer
    asking who approved the leave read when and what, never who. They name the operator
    (``operator=``, ``--operator``, else the OS user), in the world and in the trace's resume
    event, and the trace replays the same (one recorded before names none, and replays so)."""
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .",
                 trace=tmp_path / "resume.jsonl", operator="grace hopper")
    assert [str(r["who"]) for r in world.store.select(WHO_ANSWERED, {}, {})] == ["grace hopper"]
    events = [json.loads(line) for line in (tmp_path / "resume.jsonl").read_text().splitlines()]
    (resumed,) = [e for e in events if e["type"] == "resume"]
    assert resumed["operator"] == "grace hopper"
    assert not replay(tmp_path / "resume.jsonl", agent).diverged
    shown = horismos_forked(tmp_path, "trace", "show", "resume.jsonl")
    assert "answered (given by grace hopper) by:" in shown.stdout, shown.stdout + shown.stderr


# -- a proposal's choice survives the wait ------------------------------------------------------

CHOICE = (
    PREFIXES
    + """
:Request a owl:Class . :Hotel a owl:Class .
"""
    + BOOK_TOOL
    + """
:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query "SELECT ?option WHERE { ?option a :Hotel }" ] ;
    horis:rankBy "quiet" ; horis:model "lexical:bm25" ; horis:as "hotel" ;
    horis:next :Confirm .
:Confirm a horis:WaitStep ;
    horis:reason "The guest confirms." ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :confirmed true ." ;
    horis:next :Book .
:Book a horis:ActionStep ;
    horis:tool :t.book ;
    horis:requires "?this :confirmed true ." ;
    horis:bind [ horis:arg "request" ; horis:var "this" ] .
"""
)


def test_a_choice_made_before_the_wait_is_bound_after_a_resume_elsewhere(tmp_path) -> None:
    (tmp_path / "trip.ttl").write_text(CHOICE)
    (tmp_path / "world.ttl").write_text(
        PREFIXES
        + """
        :req1 a :Request .
        :quiet a :Hotel ; rdfs:label "Quiet garden hotel" .
        :loud a :Hotel ; rdfs:label "Party hostel" ."""
    )
    booked: list[URIRef] = []

    def book(request: URIRef, hotel: URIRef) -> dict[str, object]:
        booked.append(hotel)
        return {"booked": hotel}

    agent = Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    world = World.from_files(tmp_path / "world.ttl")
    waiting = agent.run(world, ":Trip", ":req1")
    assert waiting.status == "waiting" and "Quiet garden hotel" in waiting.brief
    world.graph.serialize(destination=tmp_path / "after.trig", format="trig")
    fresh = Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    run = fresh.resume(
        World.from_files(tmp_path / "after.trig"), waiting.instance, facts=":req1 :confirmed true ."
    )
    assert run.status == "completed"
    assert booked == [L.quiet]
    assert run.steps[-1].args == [{"request": L.req1.n3(), "hotel": L.quiet.n3()}]


# -- the rebooking example, from the command line --------------------------------------------


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def test_the_rebooking_example_waits_for_an_operator_who_resumes_it(tmp_path) -> None:
    defs = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl")]
    tools = ["--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py")]
    ran = horismos(
        "run",
        *defs,
        "--world",
        str(ROOT / "examples" / "rebooking" / "world.ttl"),
        *tools,
        "--all",
        "--out",
        "after.trig",
        cwd=tmp_path,
    )
    assert ran.returncode == 3, ran.stderr
    assert "proposal: :BA175" in ran.stdout  # Ada asked for the morning: confident
    assert "1 dropped" in ran.stdout  # the carrier that takes no rebooked passengers
    assert "The ranker is not sure" in ran.stdout  # Brian's wish fits both: the brief
    short = re.search(r"\[(\w{8})\] :booking2", ran.stdout).group(1)
    saved = (tmp_path / "after.trig").read_text()

    wrong = horismos(
        "resume",
        *defs,
        "--world",
        "after.trig",
        *tools,
        "--instance",
        short,
        "--facts",
        ":booking2 :operatorChoice :JFK .",
        "--out",
        "after.trig",
        cwd=tmp_path,
    )
    assert wrong.returncode == 2 and "a node of class :Flight" in wrong.stderr
    assert (tmp_path / "after.trig").read_text() == saved

    (tmp_path / "answer.ttl").write_text(":booking2 :operatorChoice :VS3 .\n")
    done = horismos(
        "resume",
        *defs,
        "--world",
        "after.trig",
        *tools,
        "--instance",
        short,
        "--facts",
        "answer.ttl",
        "--out",
        "done.trig",
        "--trace",
        "resume.jsonl",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert ":airline.rebook(booking=:booking2, flight=:VS3)  completed" in done.stdout
    again = horismos("resume", *defs, "--world", "done.trig", "--instance", short, cwd=tmp_path)
    assert again.returncode == 2 and "not waiting" in again.stderr
    same = horismos("replay", "resume.jsonl", *defs, *tools, cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr


def test_a_resume_that_loses_a_race_lands_none_of_its_facts(leave, monkeypatch) -> None:
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    stale = stored.read_instance(world.store, waiting.instance)  # what the loser read
    agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .")  # the winner
    before = world.canonical()
    # the loser's own check ran before the winner's commit, so it saw the instance waiting;
    # only the guard in the facts' commit itself can stop it now
    monkeypatch.setattr(waits, "read_instance", lambda store, iid: stale)
    with pytest.raises(UsageError, match="changed while it was being resumed"):
        agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .")
    assert world.canonical() == before


def test_a_wait_resumes_on_a_shared_world_under_a_held_claim(tmp_path, oxigraph_pool) -> None:
    """On sparql: the resuming process holds the instance's claim while it drives it, and
    gives it back: a later resume or run of that focus is not refused."""
    (tmp_path / "leave.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    world = World.from_files(tmp_path / "world.ttl", store=oxigraph_pool.fresh())
    try:
        waiting = agent.run(world, ":Leave", ":req1")
        assert waiting.status == "waiting"
        done = agent.resume(
            world,
            waiting.instance,
            facts=":req1 :approvedBy :grace .",
            trace=tmp_path / "resume.jsonl",
        )
        assert done.status == "completed"
        claims = world.store.select(
            "SELECT ?c ?w WHERE { GRAPH <urn:horismos:runtime:claims> { ?c "
            "<urn:horismos:runtime:claim#worker> ?w } }",
            {},
            {},
        )
        assert claims == []  # given back
        assert not replay(tmp_path / "resume.jsonl", agent).diverged
    finally:
        oxigraph_pool.release()


def test_a_wait_left_by_run_all_on_a_shared_world_resumes(tmp_path, oxigraph_pool) -> None:
    """On sparql, run --all marks each instance's claim done when it stops, waiting ones too;
    done means no --all worker drives that focus again, not that nobody may: the person's
    resume holds the claim and completes the instance (it was refused as if a live process
    held it, so a wait left by --all on a shared world could never be resumed)."""
    (tmp_path / "leave.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "leave.ttl", tools={"file_request": file_request})
    world = World.from_files(tmp_path / "world.ttl", store=oxigraph_pool.fresh())
    try:
        run = agent.run(world, ":Leave", all=True)
        waiting = [i for i in run.instances if i.status == "waiting"]
        assert waiting
        done = agent.resume(
            world, waiting[0].instance, facts=f"{waiting[0].focus.n3()} :approvedBy :grace ."
        )
        assert done.status == "completed"
        again = agent.run(world, ":Leave", all=True)  # the wait's claim stays done
        assert again.instances == []
    finally:
        oxigraph_pool.release()


def test_resuming_with_facts_reads_of_a_node_only_what_its_shapes_name(tmp_path: Path) -> None:
    """The facts a person gives are judged against the node's shapes after them, as a
    step's result is: from the node's triples those shapes name, not all of them. A request
    holding 2,000 notes was read whole (and its notes counted) for one approvedBy."""
    notes = " ; ".join(f':note "note {i}"' for i in range(2000))
    (tmp_path / "defs.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(WORLD + f":req1 {notes} .\n:req3 a :Request .\n")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"file_request": file_request})
    world = World.from_files(tmp_path / "world.ttl")
    waiting = agent.run(world, ":Leave", ":req1")
    asked: list[tuple[URIRef, frozenset | None]] = []
    outgoing = world.store.outgoing

    def watched(subject, predicates=None):
        asked.append((subject, predicates))
        return outgoing(subject, predicates)

    world.store.outgoing = watched  # type: ignore[method-assign]
    run = agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .")

    assert run.status == "completed"
    on_request = [predicates for subject, predicates in asked if subject == L.req1]
    assert on_request and all(p is not None and L.note not in p for p in on_request)
    other = agent.run(world, ":Leave", ":req3")
    with pytest.raises(GateRejected):  # still judged: an intern is no manager
        agent.resume(world, other.instance, facts=":req3 :approvedBy :intern .")


def _instances_world(
    instances: list[tuple[URIRef, URIRef]], others: list[tuple[URIRef, URIRef]] = ()
) -> World:  # type: ignore[assignment]
    """A ``memory`` world holding one instance of ``L.Leave`` per (focus, status) of
    ``instances``, and one of ``L.Other`` per (focus, status) of ``others``."""
    from rdflib import Literal

    world = World.open("memory")
    quads = []
    of = [L.Leave] * len(instances) + [L.Other] * len(others)
    for n, ((focus, status), workflow) in enumerate(zip([*instances, *others], of, strict=True)):
        i = URIRef(f"urn:horismos:instance:{n:032x}")
        quads += [
            (i, HORIS.workflow, workflow, INSTANCES),
            (i, HORIS.focus, focus, INSTANCES),
            (i, HORIS.status, status, INSTANCES),
            (i, HORIS.version, Literal(1), INSTANCES),
        ]
    world.store.load(quads)
    return world


def _triples_read(world: World, fn):  # type: ignore[no-untyped-def]
    """What ``fn()`` returns, and how many triples the memory store handed its queries."""
    inner = world.store._ds.store  # type: ignore[attr-defined]
    triples, read = inner.triples, [0]

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        for t in triples(*args, **kwargs):
            read[0] += 1
            yield t

    inner.triples = counted
    try:
        return fn(), read[0]
    finally:
        del inner.triples


@pytest.mark.parametrize("case", ["focus run 1,000 times", "1,000 waiting elsewhere"])
def test_a_run_per_event_reads_its_focus_or_the_unfinished_whichever_are_fewer(case) -> None:
    """A run of one focus asks whether that focus has an unfinished instance to continue.
    It read every instance the focus ever had: a focus run once per event for years (5,000
    earlier runs) made each run on disk 8x slower (11 -> 88 ms), nearly all of it this
    question. Before that it read every unfinished instance of the world first (77 ms a run
    on disk beside 9,000 waiting). Each side is counted up to a bound in turn now, so the
    question costs what the smaller side holds, whichever it is."""
    many = [L[f"old{n}"] for n in range(1000)]
    if case == "focus run 1,000 times":
        world = _instances_world(
            [(L.req1, HORIS.Completed)] * 1000 + [(L.req1, HORIS.Waiting), (L.req2, HORIS.Blocked)]
        )
    else:
        world = _instances_world(
            [(f, HORIS.Waiting) for f in many]
            + [(L.req1, HORIS.Completed), (L.req1, HORIS.Waiting)]
        )
    found, read = _triples_read(world, lambda: stored.unfinished(world.store, L.Leave, [L.req1]))
    assert list(found) == [L.req1] and found[L.req1].status == "waiting"
    assert read < 1000, read  # a side of 1,000 instances was read whole: 3,000 and more
    # and a run of many foci finds each one's from the world's unfinished instances
    everyone, _ = _triples_read(world, lambda: stored.unfinished(world.store, L.Leave, many[:3]))
    assert set(everyone) == ({*many[:3]} if case == "1,000 waiting elsewhere" else set())


def test_a_run_of_some_foci_reads_theirs_not_another_workflows_unfinished() -> None:
    """``run --all`` asks which of its foci has an unfinished instance to continue. It read
    every unfinished instance of the world, of every workflow, and kept its own in Python:
    beside 100,000 waiting of another workflow, 2 s a run on disk (bench_unfinished.py).
    Its foci's instances are read when they are fewer; else the world's unfinished ones of
    this workflow only are handed back."""
    others = [(L[f"other{n}"], HORIS.Waiting) for n in range(1000)]
    mine = [L[f"mine{n}"] for n in range(3)]
    world = _instances_world(
        [(f, HORIS.Completed) for f in mine] + [(mine[1], HORIS.Blocked)], others
    )
    found, read = _triples_read(world, lambda: stored.unfinished(world.store, L.Leave, mine))
    assert list(found) == [mine[1]] and found[mine[1]].status == "blocked"
    assert read < 1000, read  # the other workflow's waiting instances were read: 3,000 and more
    # many foci, each run often: the world's unfinished are fewer, and only ours come back
    many = [L[f"case{n}"] for n in range(200)]
    world = _instances_world(
        [(f, HORIS.Completed) for f in many for _ in range(2)] + [(many[7], HORIS.Waiting)],
        others[:300],
    )
    rows: list[int] = []
    select = world.store.select

    def counted(*args):  # type: ignore[no-untyped-def]
        found = select(*args)
        rows.append(sum("f" in row for row in found))  # instances, not the sides' counted ids
        return found

    world.store.select = counted  # type: ignore[method-assign]
    assert list(stored.unfinished(world.store, L.Leave, many)) == [many[7]]
    assert max(rows) < 300, rows  # the other workflow's 300 waiting came back to be filtered


def test_run_all_reads_its_foci_finished_instances_not_the_workflows_history() -> None:
    """``run --all`` leaves out the foci whose instance finished. It read every finished
    instance of the workflow, its whole history, whatever the batch (bench_unfinished.py).
    Its foci's instances are read when they are fewer; else the world's finished ones, of
    which only the batch's come back."""
    history = [(L[f"old{n}"], HORIS.Completed) for n in range(1000)]
    mine = [L[f"mine{n}"] for n in range(3)]
    world = _instances_world(
        [*history, (mine[0], HORIS.Completed), (mine[1], HORIS.Failed), (mine[2], HORIS.Waiting)]
    )
    ended, read = _triples_read(world, lambda: stored.finished_foci(world.store, L.Leave, mine))
    assert ended == {mine[0], mine[1]}
    assert read < 1000, read  # the workflow's 1,000 finished were read: 3,000 and more
    # a batch larger than the finished: those are read, and the batch's alone come back
    many = [L[f"case{n}"] for n in range(300)]
    world = _instances_world(
        [(f, HORIS.Waiting) for f in many for _ in range(2)]
        + [(many[7], HORIS.Completed)]
        + history[:100]
    )
    assert stored.finished_foci(world.store, L.Leave, many) == {many[7]}
    # a focus IRI Oxigraph refuses as query text is still answered
    odd = URIRef("http://example.org/leave#a#b")
    world = World.open("oxigraph")
    world.store.load(_instances_world([(odd, HORIS.Completed)]).store.quads())
    assert stored.finished_foci(world.store, L.Leave, [odd, L.req1]) == {odd}


def test_run_all_counts_its_foci_instances_once(leave) -> None:
    """``run --all`` asks which of its foci has an unfinished instance and which a finished
    one. Each question counted the foci's instances to learn whether their side is the
    smaller: the same ids, counted twice. They are counted once, and read once for both."""
    agent, world = leave
    agent.run(world, all=True)  # req1 waits, req2 completes: history for the rerun to read
    select, counts, reads = world.store.select, [], []

    def counted(text: str, *args: object) -> list:
        counts.append(text.startswith(stored._OF_THE_FOCI.split("%s")[0]))
        reads.append("?s IN" in text)
        return select(text, *args)  # type: ignore[arg-type]

    world.store.select = counted  # type: ignore[method-assign]
    try:
        again = agent.run(world, all=True)
    finally:
        del world.store.select
    assert again.instances == []  # req1 is left waiting for resume, req2 finished
    assert sum(counts) == 1, sum(counts)  # counted for each question: 2
    assert sum(reads) == 1, sum(reads)  # the foci's instances read for each question: 2


def test_an_open_wait_is_read_from_its_instance_not_from_every_step_the_world_ran() -> None:
    """Reaching and resuming a wait ask for the instance's open wait (``open_wait``). On the
    ``memory`` store rdflib's planner took ``?a a horis:StepExecution`` first, as the query's
    text cannot say that the instance and step are bound: every step execution the world
    held was read (5,019 triples beside 5,000 finished instances, bench_history.py --rows).
    The same text is now evaluated bound values first (recorded traces match it by text)."""
    from rdflib import RDF, XSD, Literal

    def execution(n: int, iid: URIRef, ended: bool) -> list[tuple]:
        g, a = URIRef(f"urn:horismos:wait:{n}"), URIRef(f"urn:horismos:activity:{n}")
        started = Literal(f"2026-01-01T00:00:{n % 60:02d}+00:00", datatype=XSD.dateTime)
        t = [
            (g, PROV.wasGeneratedBy, a),
            (a, RDF.type, HORIS.StepExecution),
            (a, HORIS.instance, iid),
            (a, HORIS.step, L.Approve),
            (a, PROV.startedAtTime, started),
        ]
        t += [(a, PROV.endedAtTime, started)] if ended else []
        return [(*x, g) for x in t]

    mine = URIRef("urn:horismos:instance:mine")
    reads = []
    for finished in (100, 1000):
        world = World.open("memory")
        world.store.load(
            [
                q
                for n in range(finished)
                for q in execution(n, URIRef(f"urn:horismos:instance:{n}"), True)
            ]
            + execution(finished, mine, False)
        )
        wait, read = _triples_read(
            world, lambda w=world: stored.open_wait(w.store, mine, L.Approve))
        assert wait is not None and wait.graph == URIRef(f"urn:horismos:wait:{finished}")
        reads.append(read)
    assert reads[0] == reads[1] < 20, reads  # every step execution was read: 100 -> 1,000 and more


def test_the_prov_export_of_a_resume_holds_the_answer_as_the_world_does(leave, tmp_path) -> None:
    """The export passed over the `resume` event: the facts a person gave, the graph they
    landed in and its activity of human provenance, all of which the world holds, were not in
    it, and the wait's completion seemed to follow from nothing."""
    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    agent.resume(world, waiting.instance, facts=":req1 :approvedBy :grace .",
                 trace=tmp_path / "resumed.jsonl")
    events = read_trace(tmp_path / "resumed.jsonl")
    resume = next(e for e in events if e["type"] == "resume")
    g = Graph().parse(data="".join(prov_turtle(events)), format="turtle")
    answer = URIRef(resume["graph"])
    (activity,) = g.subjects(PROV.generated, answer)
    assert activity == world.graph.graph(answer).value(answer, PROV.wasGeneratedBy)
    assert (activity, HORIS.provenance, HORIS.HumanProvenance) in g
    assert (activity, HORIS.instance, waiting.instance) in g
    wait = next(e for e in events if e["type"] == "step" and e["step"] == str(L.Approve))
    (closed,) = g.subjects(PROV.generated, URIRef(wait["graph"]))
    assert (closed, PROV.wasInformedBy, activity) in g


def test_a_resume_an_on_step_handler_stops_closes_its_trace_file(leave, tmp_path) -> None:
    """``on_step`` raising ends a resume there, as it ends a run; the resume's trace file was
    left open behind it (a descriptor held, a ``ResourceWarning`` when collected). Closed,
    the events before the stop readable."""
    import os

    agent, world = leave
    waiting = agent.run(world, ":Leave", ":req1")
    path = tmp_path / "resume.jsonl"

    def stop(inst, record) -> None:
        raise LookupError("the handler's own failure")

    with pytest.raises(LookupError):
        agent.resume(world, waiting.instance, ":req1 :approvedBy :grace .", trace=path,
                     on_step=stop)
    fds = Path("/proc/self/fd")
    assert not [fd for fd in fds.iterdir() if os.path.realpath(fd) == os.path.realpath(path)]
    assert read_trace(path)[0]["type"] == "header"
