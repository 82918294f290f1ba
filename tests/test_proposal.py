"""ProposalStep: the graph yields the options, a model only ranks them.

The ranking providers are exercised over real HTTP against ``tests/servers/llm_server.py``,
which speaks the Anthropic Messages and OpenAI chat-completions wire formats.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import URIRef
from servers.llm_server import LlmServer
from trip_proposal import ASK_HUMAN, BOOK_TOOL, PREFIXES, T, answer, book, configure

from horismos import Agent, AuthoringError, UsageError, World
from horismos._proposal import Reply, Unusable, judge_reply, lexical_rank
from horismos._replay import replay
from horismos._vocab import HORIS, PROV

# an MCP stdio server the SDK starts is a zygote child (conftest.py's forked_popen)
pytestmark = pytest.mark.usefixtures("forked_popen")

# Three hotels in the request's city; the airport one is closed, so :Book's precondition drops
# it before any model sees it. The Lisbon hotel is never a candidate.
WORLD = PREFIXES + """
:Request a owl:Class . :Hotel a owl:Class .
:porto a :City . :lisbon a :City .
:req1 a :Request ; rdfs:label "Ada's weekend" ;
    rdfs:comment "Ada wants a quiet room near the beach." ; :city :porto .
:beach a :Hotel ; :city :porto ; :open true ; rdfs:label "Beach hotel" ;
    rdfs:comment "Quiet rooms, two minutes from the beach." .
:central a :Hotel ; :city :porto ; :open true ; rdfs:label "Central hotel" ;
    rdfs:comment "Lively bar downstairs, a tram ride from the beach." .
:airport a :Hotel ; :city :porto ; :open false ; rdfs:label "Airport hotel, quiet beach view" .
:faraway a :Hotel ; :city :lisbon ; :open true ; rdfs:label "Quiet beach hotel in Lisbon" .
"""

TOOL = BOOK_TOOL + """
:Book a horis:ActionStep ;
    horis:tool :t.book ;
    horis:requires "?option :open true ." ;
    horis:bind [ horis:arg "request" ; horis:var "this" ] ,
               [ horis:arg "hotel" ; horis:var "option" ] .
""" + ASK_HUMAN


def proposal(model: str = "lexical:bm25", *, confidence: str | None = "0.6",
             fallback: bool = True, extra: str = "") -> str:
    lines = [
        ":Pick a horis:ProposalStep ;",
        '    horis:candidates [ horis:query """SELECT ?option WHERE {',
        '        ?this :city ?c . ?option a :Hotel ; :city ?c }""" ] ;',
        '    horis:rankBy "what the guest asked for" ;',
        f'    horis:model "{model}" ;',
        '    horis:as "option" ;',
        "    horis:next :Book ;",
    ]
    if confidence is not None:
        lines.append(f"    horis:confidence {confidence} ;")
    if fallback:
        lines.append("    horis:fallback :AskHuman ;")
    lines.append(extra + " .")
    return PREFIXES + TOOL + "\n".join(lines) + "\n"


def setup(tmp_path: Path, definitions: str) -> tuple[Agent, World]:
    (tmp_path / "trip.ttl").write_text(definitions)
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    return agent, World.from_files(tmp_path / "world.ttl")


def choices(world: World) -> list[dict[str, object]]:
    """Each recorded proposal: its choice, confidence, ranking and the graph it landed in."""
    rows = world.graph.query("""
        SELECT ?g ?a ?c ?value ?conf ?error WHERE { GRAPH ?g {
            ?a horis:provenance horis:ModelProvenance .
            OPTIONAL { ?a horis:error ?error }
            OPTIONAL { ?c prov:wasGeneratedBy ?a ; horis:confidence ?conf .
                       OPTIONAL { ?c horis:value ?value } } } }""",
                             initNs={"horis": HORIS._NS, "prov": PROV})
    out = []
    for r in rows:
        ranking = []
        if r.c is not None:
            seq = world.graph.value(r.c, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#value"))
            n = 1
            while (node := world.graph.value(seq, URIRef(
                    f"http://www.w3.org/1999/02/22-rdf-syntax-ns#_{n}"))) is not None:
                ranking.append(node)
                n += 1
        out.append({"graph": r.g, "value": r.value,
                    "confidence": r.conf.toPython() if r.conf is not None else None,
                    "ranking": ranking, "error": str(r.error) if r.error else None})
    return out


def step_event(run, kind: str) -> dict:
    return next(e for e in run.trace.events if e.get("type") == "step" and e["kind"] == kind)


# -- the offline lexical ranker --------------------------------------------------------------


def test_lexical_ranker_orders_by_overlap_and_says_how_clear_the_winner_is() -> None:
    docs = {"a": "quiet rooms near the beach", "b": "lively bar in the old town",
            "c": "quiet courtyard"}
    r = lexical_rank("a quiet beach", docs)
    assert r.ids == ("a", "c", "b")
    assert 0.5 < r.confidence < 1
    tie = lexical_rank("quiet", {"x": "quiet rooms", "y": "quiet rooms"})
    assert tie.ids == ("x", "y") and tie.confidence == 0.5
    assert lexical_rank("sauna", docs).confidence == 0.0
    assert lexical_rank("beach", {"only": "by the beach"}).confidence == 1.0


def test_graph_candidates_are_ranked_and_the_choice_reaches_the_next_step(tmp_path) -> None:
    agent, world = setup(tmp_path, proposal())
    run = agent.run(world, ":Trip", ":req1")
    assert run.status == "completed"
    pick, booking = run.steps
    assert pick.kind == "ProposalStep" and pick.next == T.Book
    # the later step saw the choice as ?option and bound it to the tool's argument
    assert booking.args == [{"request": T.req1.n3(), "hotel": T.beach.n3()}]
    assert (T.req1, T.booked, T.beach) in world.graph
    # only the graph's options, minus the one the next step would refuse
    event = step_event(run, "ProposalStep")["proposal"]
    assert [c["node"] for c in event["candidates"]] == [T.beach.n3(), T.central.n3()]
    assert event["dropped"] == [{"id": str(T.airport), "node": T.airport.n3(),
                                 "failing": "?option :open true ."}]
    assert event["choice"] == T.beach.n3() and event["outcome"] == "chosen"
    assert event["ranking"] == [T.beach.n3(), T.central.n3()]
    # the graph records it with model provenance, in a named graph of its own
    (recorded,) = choices(world)
    assert recorded["value"] == T.beach and recorded["ranking"] == [T.beach, T.central]
    assert recorded["confidence"] == event["confidence"] >= 0.6
    assert str(recorded["graph"]).startswith("urn:horismos:proposal:")
    assert recorded["graph"] == pick.graph
    # and the instance state keeps the variable for a later process
    var = URIRef(f"{run.instance}:variable:option")
    assert (run.instance, HORIS.variable, var) in world.graph
    assert (var, HORIS.value, T.beach) in world.graph


def test_low_lexical_confidence_takes_the_fallback_and_binds_nothing(tmp_path) -> None:
    agent, world = setup(tmp_path, proposal(confidence="0.99"))
    run = agent.run(world, ":Trip", ":req1")
    assert run.status == "waiting"
    assert [s.step for s in run.steps] == [T.Pick, T.AskHuman]
    (recorded,) = choices(world)
    assert recorded["value"] is None and recorded["ranking"] == [T.beach, T.central]
    assert "option" not in run.instances[0].variables
    assert "under the step's horis:confidence 0.99" in run.brief


@pytest.mark.parametrize("hotel", ["faraway", "airport"])
def test_an_operator_answer_naming_no_legal_option_is_refused(tmp_path, hotel) -> None:
    """At the fallback, the person answers; an option the graph did not give (Lisbon's hotel)
    or one the next step's precondition dropped (the closed one) is refused, naming the legal
    ones, and nothing lands."""
    agent, world = setup(tmp_path, proposal(confidence="0.99"))
    run = agent.run(world, ":Trip", ":req1")
    assert run.status == "waiting"
    before = world.canonical()
    with pytest.raises(UsageError) as e:
        agent.resume(world, str(run.instance), f":req1 :booked :{hotel} .")
    message = str(e.value)
    assert f":{hotel}" in message and "not one of the options" in message
    assert ":beach" in message and ":central" in message
    assert world.canonical() == before
    # a legal option is taken
    done = agent.resume(world, str(run.instance), ":req1 :booked :central .")
    assert done.status == "completed"
    assert (T.req1, T.booked, T.central) in world.graph


def test_cli_resume_with_an_illegal_option_exits_2_listing_the_legal_ones(tmp_path) -> None:

    (tmp_path / "trip.ttl").write_text(proposal(confidence="0.99"))
    (tmp_path / "world.ttl").write_text(WORLD)
    (tmp_path / "trip_tools.py").write_text("def book(request, hotel):\n"
                                            "    return {'booked': hotel}\n")

    def horismos(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(tmp_path, *args, timeout=120)

    first = horismos("run", "trip.ttl", "--world", "world.ttl", "--tools", "trip_tools",
                     "--focus", ":req1", "--out", "after.trig")
    assert first.returncode == 3, first.stdout + first.stderr   # waiting
    iid = next(w for w in (first.stdout + first.stderr).split()
               if w.startswith("urn:horismos:instance:"))
    refused = horismos("resume", "trip.ttl", "--world", "after.trig", "--tools", "trip_tools",
                       "--instance", iid, "--facts", ":req1 :booked :faraway .")
    out = refused.stdout + refused.stderr
    assert refused.returncode == 2 and "Traceback" not in out, out
    assert "not one of the options" in out and ":beach" in out and ":central" in out


def test_no_candidates_without_fallback_blocks(tmp_path) -> None:
    agent, world = setup(tmp_path, proposal(fallback=False))
    (tmp_path / "empty.ttl").write_text(PREFIXES + ":req2 a :Request ; :city :faro .")
    world.load(tmp_path / "empty.ttl")
    run = agent.run(world, ":Trip", ":req2")
    assert run.status == "blocked"
    assert "gives no option" in run.blocked_by


# -- judging what a model answers ------------------------------------------------------------


@pytest.mark.parametrize(("text", "reason"), [
    ("I would pick the beach hotel.", "malformed"),
    ('{"ranking": "a", "confidence": 0.9}', "malformed"),
    ('{"ranking": ["a", "a"], "confidence": 0.9}', "malformed"),
    ('{"ranking": ["a"], "confidence": 1.5}', "malformed"),
    ('{"ranking": ["a"], "confidence": true}', "malformed"),
    ('{"ranking": ["a", "z"], "confidence": 0.9}', "invented"),
])
def test_unusable_answers_are_named(text: str, reason: str) -> None:
    with pytest.raises(Unusable) as e:
        judge_reply(Reply(text=text), ["a", "b"])
    assert e.value.reason == reason


def test_an_answer_in_a_code_fence_is_read() -> None:
    r = judge_reply(Reply(text='```json\n{"ranking": ["b", "a"], "confidence": 0.7}\n```'),
                    ["a", "b"])
    assert r.ids == ("b", "a") and r.confidence == 0.7


# -- the HTTP providers against a local server -----------------------------------------------

PROVIDERS = ["anthropic", "openai"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_ranking_decides_the_choice(tmp_path, monkeypatch, provider) -> None:
    # The model prefers the central hotel, which the lexical ranker would not: its answer rules.
    with LlmServer([answer([T.central, T.beach], 0.9)], key="test-key") as server:
        model = configure(monkeypatch, provider, server)
        agent, world = setup(tmp_path, proposal(model))
        run = agent.run(world, ":Trip", ":req1")
    assert run.status == "completed"
    assert (T.req1, T.booked, T.central) in world.graph
    (recorded,) = choices(world)
    assert recorded["value"] == T.central and recorded["confidence"] == 0.9
    assert recorded["ranking"] == [T.central, T.beach]
    (request,) = server.requests
    body = json.dumps(request["body"])
    # the model saw the candidates' ids, labels and descriptions, the criterion and the focus
    assert str(T.beach) in body and "Quiet rooms, two minutes from the beach." in body
    assert "what the guest asked for" in body and "Ada wants a quiet room" in body
    assert str(T.airport) not in body and str(T.faraway) not in body
    assert request["body"]["model"] == model.partition(":")[2]
    event = step_event(run, "ProposalStep")
    assert event["rankings"] == [answer([T.central, T.beach], 0.9)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_model_asks_of_one_run_share_one_connection(tmp_path, monkeypatch, provider) -> None:
    # Each ask built an HTTP client of its own (a TLS context read from the CA bundle, ~27 ms
    # of CPU) and opened a new connection, inside the step's horis:timeout: a short timeout
    # could run out before the request left, said as "no connection was made" of a healthy
    # server. A run's asks of one endpoint now go through one client, kept for the run.
    with LlmServer(repeat=answer([T.central, T.beach], 0.9), key="test-key") as server:
        model = configure(monkeypatch, provider, server)
        agent, _ = setup(tmp_path, proposal(model))
        (tmp_path / "world.ttl").write_text(
            WORLD + ':req2 a :Request ; rdfs:comment "A lively bar." ; :city :porto .\n')
        world = World.from_files(tmp_path / "world.ttl")
        run = agent.run(world, ":Trip", all=True)
        assert [i.status for i in run.instances] == ["completed", "completed"]
        assert len(server.requests) == 2
        assert server.connections == 1  # the second ask opened none


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("behaviour", "outcome"), [
    ({"text": "Sure! The central hotel is best."}, "malformed"),
    ({"text": json.dumps({"ranking": [str(T.faraway), str(T.beach)], "confidence": 0.95})},
     "invented"),
    ({"text": json.dumps({"ranking": [str(T.airport)], "confidence": 0.95})}, "invented"),
    ({"text": json.dumps({"ranking": [str(T.central), str(T.beach)], "confidence": 0.3})},
     "low_confidence"),
    ({"status": 500, "body": "overloaded"}, "error"),
    ({"stall": True}, "timeout"),
])
def test_an_unusable_answer_goes_to_the_fallback(tmp_path, monkeypatch, provider, behaviour,
                                                 outcome) -> None:
    with LlmServer([behaviour], key="test-key") as server:
        model = configure(monkeypatch, provider, server)
        agent, world = setup(tmp_path, proposal(model, extra='    horis:timeout "1s"'))
        run = agent.run(world, ":Trip", ":req1")
    assert run.status == "waiting"
    assert [s.step for s in run.steps] == [T.Pick, T.AskHuman]
    event = step_event(run, "ProposalStep")["proposal"]
    assert event["outcome"] == outcome and event["choice"] is None
    assert not list(world.graph.objects(T.req1, T.booked))
    (recorded,) = choices(world)
    assert recorded["value"] is None  # nothing was chosen, whatever the model said
    if outcome == "low_confidence":
        assert recorded["ranking"] == [T.central, T.beach] and recorded["confidence"] == 0.3
    else:
        assert recorded["ranking"] == [] and recorded["error"]
    assert run.brief and "The proposal did not decide" in run.brief


def test_unusable_answer_without_fallback_fails_the_instance(tmp_path, monkeypatch) -> None:
    with LlmServer([{"text": "no idea"}], key="test-key") as server:
        model = configure(monkeypatch, "openai", server)
        agent, world = setup(tmp_path, proposal(model, fallback=False))
        run = agent.run(world, ":Trip", ":req1")
    assert run.status == "failed"
    assert "declares no horis:fallback" in str(run.error)


def test_a_wrong_key_is_a_call_failure_that_falls_back(tmp_path, monkeypatch) -> None:
    with LlmServer([answer([T.beach], 0.9)], key="right-key") as server:
        configure(monkeypatch, "anthropic", server)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong-key")
        agent, world = setup(tmp_path, proposal("anthropic:claude-test"))
        run = agent.run(world, ":Trip", ":req1")
    event = step_event(run, "ProposalStep")["proposal"]
    assert event["outcome"] == "error" and "401" in event["message"]


def test_a_base_url_without_v1_is_said_to_be_misconfigured_not_a_model_failure(
        tmp_path, monkeypatch) -> None:
    """``OPENAI_BASE_URL`` without ``/v1``: an OpenAI-compatible server answers HTTP 404 for
    ``/chat/completions``, and the step took its fallback as if the model had failed, every
    instance sent to an operator with nothing saying the URL was wrong. It still falls back
    (the docs promise that of an HTTP error), and the trace and the command line say the
    endpoint is misconfigured, which URL was asked and the URL meant; a 500 is not."""
    with LlmServer(repeat=answer([T.central, T.beach], 0.9), key="test-key") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # no /v1
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        agent, world = setup(tmp_path, proposal("openai:local-model"))
        run = agent.run(world, ":Trip", ":req1", trace=tmp_path / "run.jsonl")
        assert run.status == "waiting" and [s.step for s in run.steps] == [T.Pick, T.AskHuman]
        assert [r["path"] for r in server.requests] == ["/chat/completions"]
        event = step_event(run, "ProposalStep")
        said = event["proposal"]["message"]
        assert event["proposal"]["outcome"] == "error" and event["proposal"]["misconfigured"]
        assert f"{server.url}/chat/completions answered HTTP 404 (no such endpoint)" in said
        assert "the model's endpoint is misconfigured, not a model that failed to answer" in said
        assert f"OPENAI_BASE_URL is {server.url}: did you mean {server.url}/v1?" in said
        assert event["rankings"][0]["misconfigured"] is True
        assert not replay(tmp_path / "run.jsonl", agent).diverged  # as recorded, not asked

        # the command line says it on stderr, once a run, even --quiet
        (tmp_path / "trip_tools.py").write_text("def book(request, hotel):\n"
                                                "    return {'booked': hotel}\n")
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test-key"}
        p = horismos_forked(tmp_path, "run", "trip.ttl", "--world", "world.ttl", "--tools",
                            "trip_tools", "--focus", ":req1", "--quiet", env=env, timeout=120)
        assert p.returncode == 3, p.stdout + p.stderr  # waiting at the fallback
        assert "Traceback" not in p.stderr
        assert (f"horismos: warning: :Pick took its fallback -> :AskHuman: the model could not "
                f"be asked: {server.url}/chat/completions answered HTTP 404") in p.stderr
        assert f"did you mean {server.url}/v1?" in p.stderr and p.stderr.count("warning") == 1

    # a wrong key is one too; a server error is not: a retry may answer
    with LlmServer([answer([T.beach], 0.9)], key="right-key") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
        agent, world = setup(tmp_path, proposal("openai:local-model"))
        event = step_event(agent.run(world, ":Trip", ":req1"), "ProposalStep")["proposal"]
    assert event["misconfigured"] and "HTTP 401 (the key was not accepted)" in event["message"]
    assert "check OPENAI_API_KEY" in event["message"]
    with LlmServer([{"status": 500, "body": "overloaded"}], key="test-key") as server:
        configure(monkeypatch, "openai", server)
        agent, world = setup(tmp_path, proposal("openai:local-model"))
        event = step_event(agent.run(world, ":Trip", ":req1"), "ProposalStep")["proposal"]
    assert event["outcome"] == "error" and "misconfigured" not in event


def test_a_server_error_names_the_model_url_without_its_credentials(
        tmp_path, monkeypatch) -> None:
    """A base URL through a proxy that takes a password in its user info: an HTTP 500 was
    said, in the trace and the run's error, with the password in the URL; the 401/404 message
    already hid it."""
    with LlmServer([{"status": 500, "body": "overloaded"}]) as server:  # the proxy's auth
        monkeypatch.setenv("OPENAI_BASE_URL",
                           server.url.replace("http://", "http://proxy:s3cret-pw@") + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        agent, world = setup(tmp_path, proposal("openai:local-model"))
        run = agent.run(world, ":Trip", ":req1", trace=tmp_path / "run.jsonl")
    said = step_event(run, "ProposalStep")["proposal"]["message"]
    host = server.url.removeprefix("http://")
    assert f"http://***@{host}/v1/chat/completions answered HTTP 500" in said
    assert "s3cret-pw" not in said + (tmp_path / "run.jsonl").read_text()


@pytest.mark.parametrize(("model", "needs"), [
    ("anthropic:claude-test", "ANTHROPIC_API_KEY"),
    ("openai:gpt-test", "OPENAI_API_KEY"),
])
def test_a_model_that_cannot_be_asked_is_refused_before_any_step(
        tmp_path, monkeypatch, model, needs) -> None:
    """A model whose key the environment lacks failed the step when it was reached, after
    the steps before it had acted (tests/test_authoring_model_keys.py shows the CLI's)."""
    from horismos import NotSent

    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    agent, world = setup(tmp_path, proposal(model))
    before = world.canonical()
    with pytest.raises(NotSent) as refused:
        agent.run(world, ":Trip", ":req1")
    assert needs in str(refused.value) and "refused before any step" in str(refused.value)
    assert world.canonical() == before


@pytest.mark.parametrize("model", ["mystery:model", "anthropic", "lexical:"])
def test_a_model_no_provider_can_answer_is_an_authoring_error(tmp_path, model) -> None:
    (tmp_path / "trip.ttl").write_text(proposal(model))
    with pytest.raises(AuthoringError) as e:
        Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    [problem] = [p for p in e.value.problems if "horis:model" in p.message]
    assert problem.file and problem.file.endswith("trip.ttl")
    assert problem.line == proposal(model).splitlines().index(
        f'    horis:model "{model}" ;') + 1
    assert "lexical, anthropic, openai" in (problem.hint or "")


def test_replay_serves_the_recorded_ranking_and_never_asks_the_model(tmp_path,
                                                                     monkeypatch) -> None:
    with LlmServer([answer([T.central, T.beach], 0.9)], key="test-key") as server:
        model = configure(monkeypatch, "openai", server)
        agent, world = setup(tmp_path, proposal(model))
        run = agent.run(world, ":Trip", ":req1", trace=tmp_path / "run.jsonl")
    assert run.status == "completed"
    # the server is gone: a replay that asked the model would get no answer and fall back
    report = replay(tmp_path / "run.jsonl", agent)
    assert not report.diverged, report
    assert len(server.requests) == 1


def test_replay_judges_the_recorded_reply_against_the_definitions_in_force(
        tmp_path, monkeypatch) -> None:
    with LlmServer([answer([T.central, T.beach], 0.9)], key="test-key") as server:
        model = configure(monkeypatch, "openai", server)
        agent, world = setup(tmp_path, proposal(model))
        run = agent.run(world, ":Trip", ":req1")
    # a stricter threshold since the recording: the recorded 0.9 now falls back
    (tmp_path / "strict.ttl").write_text(proposal(model, confidence="0.95"))
    strict = Agent.from_files(tmp_path / "strict.ttl", tools={"book": book})
    report = replay(run.trace, strict)
    assert report.diverged and report.definitions_changed
    assert report.first_divergence.field in ("next", "proposal", "result")
    assert len(server.requests) == 1


def test_a_lexical_ranker_other_than_bm25_is_an_authoring_error(tmp_path) -> None:
    """"lexical:bm42" ranked as bm25, and the trace named a model that never ranked."""
    (tmp_path / "trip.ttl").write_text(proposal("lexical:bm42"))
    with pytest.raises(AuthoringError) as e:
        Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    [problem] = [p for p in e.value.problems if "horis:model" in p.message]
    assert problem.line == proposal("lexical:bm42").splitlines().index(
        '    horis:model "lexical:bm42" ;') + 1
    assert 'write "lexical:bm25"' in (problem.hint or "")


# -- the host policy holds for the model's endpoint, as for an HTTP binding ----------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_whose_host_is_not_allowed_is_never_asked(tmp_path, monkeypatch,
                                                           provider) -> None:
    """A run given allowed hosts sent the candidates to whatever ``ANTHROPIC_BASE_URL`` /
    ``OPENAI_BASE_URL`` named. The model's endpoint is held to them as an HTTP binding's URL
    is: refused before any step fires, naming the host and the flag to add."""
    from horismos import NotSent

    with LlmServer([answer([T.central, T.beach], 0.9)], key="test-key") as server:
        model = configure(monkeypatch, provider, server)
        agent, world = setup(tmp_path, proposal(model))
        before = world.canonical()
        elsewhere = Agent(agent.definitions, tools={"book": book},
                          allow_hosts=["api.example.org"])
        with pytest.raises(NotSent) as refused:
            elsewhere.run(world, ":Trip", ":req1")
        assert server.requests == []
        assert world.canonical() == before
        assert ("host 127.0.0.1 is not in the allowed hosts (api.example.org); add it with "
                "--allow-host 127.0.0.1") in str(refused.value)
        assert f"the ranking model {model}" in str(refused.value)
        allowed = Agent(agent.definitions, tools={"book": book}, allow_hosts=["127.0.0.1"])
        assert allowed.run(world, ":Trip", ":req1").status == "completed"
        assert len(server.requests) == 1


def waiting_first() -> str:
    """The trip workflow asking ``openai:local-model``, after a 1 ms timer wait (so ``wake``
    resumes it)."""
    return proposal("openai:local-model").replace(
        ":Trip a horis:Workflow ; horis:focusType :Request ; horis:start :Pick .",
        ":Trip a horis:Workflow ; horis:focusType :Request ; horis:start :Hold .\n"
        ':Hold a horis:WaitStep ; horis:reason "a moment" ; horis:wake horis:Timer ;\n'
        '    horis:delivery horis:Silent ; horis:timeout "1ms" ; horis:next :Pick .')


def openai_cli(tmp_path: Path, server: LlmServer) -> Callable[..., subprocess.CompletedProcess]:
    """``python -m horismos ARGS`` in ``tmp_path``, the OpenAI provider pointed at ``server``."""
    env = {**os.environ, "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "test-key"}

    def horismos(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(tmp_path, *args, env=env, timeout=120)

    return horismos


def test_every_cli_lane_holds_the_model_to_the_allowed_hosts(tmp_path) -> None:
    """``run``, ``resume`` and ``wake`` each take ``--allow-host``: a model outside it gets no
    request and the command says why (exit 2, no traceback); allowed, it is asked."""
    import time

    waits_first = waiting_first()
    (tmp_path / "trip.ttl").write_text(waits_first)
    (tmp_path / "world.ttl").write_text(WORLD + ":req2 a :Request ; :city :porto .\n")
    (tmp_path / "trip_tools.py").write_text("def book(request, hotel):\n"
                                            "    return {'booked': hotel}\n")
    with LlmServer(repeat=answer([T.central, T.beach], 0.9), key="test-key") as server:
        horismos = openai_cli(tmp_path, server)

        store = ("--store", "oxigraph:store")
        assert horismos("load", "world.ttl", *store).returncode == 0
        tools = ("--tools", "trip_tools")
        waiting = horismos("run", "trip.ttl", *store, *tools, "--focus", ":req1")
        assert waiting.returncode == 3, waiting.stdout + waiting.stderr
        listed = horismos("instances", "trip.ttl", *store, "--format", "json")
        (iid,) = [i["instance"] for i in json.loads(listed.stdout)]
        time.sleep(0.01)  # the wait's 1ms timeout is past
        elsewhere = ("--allow-host", "api.example.org")
        for lane in (("run", "trip.ttl", *store, *tools, "--focus", ":req2", *elsewhere),
                     ("resume", "trip.ttl", *store, *tools, "--instance", iid, *elsewhere),
                     ("wake", "trip.ttl", *store, *tools, *elsewhere)):
            refused = horismos(*lane)
            said = refused.stdout + refused.stderr
            assert refused.returncode == (4 if lane[0] == "wake" else 2), (lane[0], said)
            assert "Traceback" not in said
            assert ("the ranking model openai:local-model at http://127.0.0.1:"
                    in refused.stderr), (lane[0], said)
            assert "add it with --allow-host 127.0.0.1" in refused.stderr, (lane[0], said)
            assert server.requests == [], lane[0]
        woken = horismos("wake", "trip.ttl", *store, *tools, "--allow-host", "127.0.0.1")
        assert woken.returncode == 0, woken.stdout + woken.stderr
        assert len(server.requests) == 1


def test_serve_run_workflow_holds_the_model_to_the_allowed_hosts(tmp_path) -> None:
    """``serve --run-workflow --allow-host`` drives a proposal step for an agent: a model
    outside the allowed hosts gets no request, and the agent is told why; allowed, it is
    asked."""
    import asyncio
    import os

    from mcp import Client, StdioServerParameters, stdio_client

    (tmp_path / "trip.ttl").write_text(proposal("openai:local-model"))
    (tmp_path / "world.ttl").write_text(WORLD)
    (tmp_path / "trip_tools.py").write_text("def book(request, hotel):\n"
                                            "    return {'booked': hotel}\n")
    with LlmServer(repeat=answer([T.central, T.beach], 0.9), key="test-key") as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "test-key"}

        async def run_workflow(host: str) -> Any:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "horismos", "serve", "trip.ttl", "--world", "world.ttl", "--tools",
                      "trip_tools", "--run-workflow", "--allow-host", host],
                cwd=str(tmp_path), env=env)
            async with Client(stdio_client(params), cache=None) as client:
                return await client.call_tool("run_workflow",
                                              {"workflow": ":Trip", "focus": ":req1"})

        refused = asyncio.run(run_workflow("api.example.org"))
        said = "\n".join(c.text for c in refused.content)
        assert refused.is_error, said
        assert "add it with --allow-host 127.0.0.1" in said and "Traceback" not in said
        assert server.requests == []
        allowed = asyncio.run(run_workflow("127.0.0.1"))
        assert allowed.structured_content["status"] == "completed", allowed.content
        assert len(server.requests) == 1


def test_a_worker_refuses_to_start_with_a_model_outside_the_allowed_hosts(tmp_path) -> None:
    """``worker --allow-host`` checks every workflow before it takes a task: a proposal's model
    outside the allowed hosts stops it (exit 2, saying why), and the model gets no request."""
    import os

    from oxigraph_server import OxigraphServer

    (tmp_path / "trip.ttl").write_text(proposal("openai:local-model"))
    (tmp_path / "world.ttl").write_text(WORLD)
    (tmp_path / "trip_tools.py").write_text("def book(request, hotel):\n"
                                            "    return {'booked': hotel}\n")
    store = OxigraphServer(tmp_path / "db")
    try:
        with LlmServer(repeat=answer([T.beach], 0.9), key="test-key") as server:
            env = {**os.environ, "OPENAI_BASE_URL": server.url + "/v1",
                   "OPENAI_API_KEY": "test-key"}
            worker = horismos_forked(tmp_path, "worker", "trip.ttl", "--tools", "trip_tools",
                                     "--store", store.store, "--broker", "redis://127.0.0.1:1/0",
                                     "--allow-host", "api.example.org", env=env, timeout=120)
            assert worker.returncode == 2, worker.stderr
            assert "add it with --allow-host 127.0.0.1" in worker.stderr, worker.stderr
            assert "Traceback" not in worker.stderr and server.requests == []
    finally:
        store.stop()


def test_wake_wakes_the_others_and_writes_out_when_one_model_is_refused(tmp_path) -> None:
    """A due instance whose model is outside ``--allow-host`` ended the whole ``wake``: the
    other due instances were not woken, and with ``--out`` the world was never written, though
    instances woken before it had called their tools, so the next pass (from the same file)
    called a tool that is not idempotent again. Now the refused instance is said (blocked, not
    woken, exit 4), the others are woken, and ``--out`` holds what they did."""
    import time

    trip = waiting_first()
    simple = """
:Guest a owl:Class . :logged a owl:DatatypeProperty . :booked a owl:ObjectProperty .
:t.log a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "guest" ; horis:type :Guest ] ] ;
    horis:effect [ horis:asserts [ horis:property :logged ; horis:type xsd:string ] ] ;
    horis:binding "python:trip_tools.log" ;
    horis:idempotent false .
:Simple a horis:Workflow ; horis:focusType :Guest ; horis:start :Nap .
:Nap a horis:WaitStep ; horis:reason "a moment" ; horis:wake horis:Timer ;
    horis:delivery horis:Silent ; horis:timeout "1ms" ; horis:next :Log .
:Log a horis:ActionStep ; horis:tool :t.log ;
    horis:bind [ horis:arg "guest" ; horis:var "this" ] .
"""
    (tmp_path / "trip.ttl").write_text(trip + simple)
    (tmp_path / "world.ttl").write_text(WORLD + ":g1 a :Guest . :g2 a :Guest .\n")
    (tmp_path / "trip_tools.py").write_text(
        "def book(request, hotel):\n    return {'booked': hotel}\n\n"
        "def log(guest):\n"
        "    with open('calls.log', 'a') as f:\n        f.write(guest + '\\n')\n"
        "    return {'logged': 'yes'}\n")
    calls = tmp_path / "calls.log"
    with LlmServer(repeat=answer([T.central, T.beach], 0.9), key="test-key") as server:
        horismos = openai_cli(tmp_path, server)

        tools = ("--tools", "trip_tools")
        elsewhere = ("--allow-host", "api.example.org")
        memory = ("--store", "memory")
        for wf, world, out in ((":Simple", "world.ttl", "s1.trig"), (":Trip", "s1.trig",
                                                                      "s2.trig")):
            started = horismos("run", "trip.ttl", *memory, "--world", world, *tools,
                               "--workflow", wf, "--all", "--out", out)
            assert started.returncode == 3, started.stdout + started.stderr  # waiting
        time.sleep(0.01)  # the waits' 1ms timeouts are past
        for _ in range(2):  # a cron job run twice: the second pass goes on from --out
            woke = horismos("wake", "trip.ttl", *memory, *tools, *elsewhere,
                            "--world", "s3.trig" if (tmp_path / "s3.trig").exists()
                            else "s2.trig", "--out", "s3.trig")
            said = woke.stdout + woke.stderr
            assert woke.returncode == 4, said
            assert "Traceback" not in said
            assert "blocked, not woken: " in woke.stderr, said
            assert "the ranking model openai:local-model" in woke.stderr, said
        assert sorted(calls.read_text().split()) == [str(T.g1), str(T.g2)]  # once each
        assert server.requests == []

        calls.unlink()  # the same on a persistent store: the others woken, once
        store = ("--store", "oxigraph:store")
        assert horismos("load", "world.ttl", *store).returncode == 0
        for wf in (":Simple", ":Trip"):
            started = horismos("run", "trip.ttl", *store, *tools, "--workflow", wf, "--all")
            assert started.returncode == 3, started.stdout + started.stderr
        time.sleep(0.01)
        woke = horismos("wake", "trip.ttl", *store, *tools, *elsewhere)
        assert woke.returncode == 4, woke.stdout + woke.stderr
        assert sorted(calls.read_text().split()) == [str(T.g1), str(T.g2)]
        listed = json.loads(horismos("instances", "trip.ttl", *store, "--format",
                                     "json").stdout)
        assert sorted(i["status"] for i in listed) == ["completed", "completed", "waiting"]
        assert server.requests == []
