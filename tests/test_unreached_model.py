"""A ProposalStep whose ranking model is asked over HTTP and is down when the step runs (the
connection refused: nothing was sent). With neither ``horis:fallback`` nor ``horis:onError``
its instance is blocked there (``not_sent``), not failed for good, as an action step's is
when its endpoint is down, and ``resume`` asks the model again once it answers. A declared
fallback is still taken. A real scripted model server (tests/servers/llm_server.py) on
127.0.0.1, stopped and started again on its port.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from listening import dropping
from servers.llm_server import LlmServer
from trip_proposal import ASK_HUMAN, BOOK_TOOL, PREFIXES, T, answer, book, configure

from horismos import Agent, Unreachable, World
from horismos._replay import replay

DEFS = PREFIXES + BOOK_TOOL + """
:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query \"\"\"SELECT ?option WHERE {
        ?this :city ?c . ?option a :Hotel ; :city ?c }\"\"\" ] ;
    horis:rankBy "what the guest asked for" ;
    horis:model "openai:local-model" ;
    horis:as "option" ;
    horis:timeout "5s" ;
    horis:next :Book FALLBACK .

:Book a horis:ActionStep ;
    horis:tool :t.book ;
    horis:bind [ horis:arg "request" ; horis:var "this" ] ,
               [ horis:arg "hotel" ; horis:var "option" ] .
""" + ASK_HUMAN

WORLD = PREFIXES + """
:Request a owl:Class . :Hotel a owl:Class .
:req1 a :Request ; rdfs:label "Ada's weekend" ; :city :porto .
:beach a :Hotel ; :city :porto ; rdfs:label "Beach hotel" .
:central a :Hotel ; :city :porto ; rdfs:label "Central hotel" .
"""

CHOSEN = answer([T.central, T.beach], 0.9)


def down_model(monkeypatch: pytest.MonkeyPatch) -> int:
    """The port of a model server stopped before the step runs; the environment points there."""
    with LlmServer() as gone:
        assert configure(monkeypatch, "openai", gone) == "openai:local-model"
        return int(gone.url.rsplit(":", 1)[1])


def setup(tmp_path: Path, fallback: bool, timeout: str = "5s") -> tuple[Agent, World]:
    (tmp_path / "trip.ttl").write_text(
        DEFS.replace("FALLBACK", "; horis:fallback :AskHuman" if fallback else "")
        .replace('horis:timeout "5s"', f'horis:timeout "{timeout}"')
    )
    (tmp_path / "world.ttl").write_text(WORLD)
    agent = Agent.from_files(tmp_path / "trip.ttl", tools={"book": book})
    return agent, World.from_files(tmp_path / "world.ttl")


def test_a_model_down_blocks_and_resume_asks_it_once_it_answers(tmp_path, monkeypatch) -> None:
    port = down_model(monkeypatch)
    agent, world = setup(tmp_path, fallback=False)
    run = agent.run(world, ":Trip", ":req1", trace=tmp_path / "run.jsonl")
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert step.status == "blocked" and isinstance(step.error, Unreachable)
    said = str(step.error)
    assert "nothing was sent" in said and "blocked, not failed" in said
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    assert not replay(tmp_path / "run.jsonl", agent).diverged  # the same, not asked
    assert agent.resume(world, run.instance).status == "blocked"  # still down
    with LlmServer([CHOSEN], key="test-key", port=port) as server:
        done = agent.resume(world, run.instance)
    assert done.status == "completed", done.error
    assert len(server.requests) == 1
    assert (T.req1, T.booked, T.central) in world.graph


def test_a_declared_fallback_is_still_taken_when_the_model_is_down(tmp_path, monkeypatch) -> None:
    down_model(monkeypatch)
    agent, world = setup(tmp_path, fallback=True)
    run = agent.run(world, ":Trip", ":req1")
    assert run.status == "waiting"
    assert [s.step for s in run.steps] == [T.Pick, T.AskHuman]
    assert run.steps[0].status == "completed"


def test_a_model_whose_connection_is_never_made_blocks_whichever_timeout_comes_first(
        tmp_path, monkeypatch) -> None:
    # A host that drops what is sent to it: the step's 200 ms ran out while the connection
    # was still being made (before httpx's own connect timeout, of the same length, which
    # starts later), and the step failed for good, "did not answer in time"; had httpx's
    # come first, the same outage was a ConnectTimeout, and blocked. Nothing was sent.
    with dropping() as port:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        agent, world = setup(tmp_path, fallback=False, timeout="200ms")
        run = agent.run(world, ":Trip", ":req1", trace=tmp_path / "run.jsonl")
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert step.status == "blocked" and isinstance(step.error, Unreachable), step.error
    said = str(step.error)
    assert "nothing was sent" in said and "blocked, not failed" in said
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    assert not replay(tmp_path / "run.jsonl", agent).diverged  # the reply recorded, not asked
