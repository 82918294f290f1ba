"""A client that asks again: a script retrying `tools call --approval`, an agent retrying
`run_workflow` after a timeout. Each tool appends to a ledger, so a second call shows; the
world lives where processes share it (``oxigraph:PATH``, ``sparql:`` over ``oxigraph serve``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from charge_ledger import PREFIXES, ledger
from in_process import horismos_load
from listening import horismos_serving_http
from oxigraph_server import OxigraphServer
from retried_charge import cli, environ, shop, start

CALL = ("tools", "call", "t.charge", "pay.ttl", "--tools", "payments.py",
        "--args", '{"order": ":o1"}')


def approval(cwd: Path, *world: str) -> str:
    """An approval `tools approve` issued into ``world`` (--store S, or --world F --out F2)."""
    p = cli(cwd, "tools", "approve", "t.charge", "pay.ttl", "--args", '{"order": ":o1"}', *world)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@pytest.mark.parametrize("idempotent", [False, True])
def test_a_retry_loop_given_one_approval_charges_once(tmp_path, idempotent) -> None:
    """Each `tools call` given the same --approval was made: a script retrying three times
    charged three times. The call it allows uses it up, recorded in the world with the call's
    intent (or its effects): the retries are refused, exit 2, saying how to get a fresh one."""
    shop(tmp_path, idempotent)
    store = ("--store", "oxigraph:store")
    horismos_load(tmp_path, store[1], "world.ttl")
    given = approval(tmp_path, *store)
    tries = [cli(tmp_path, *CALL, *store, "--approval", given) for _ in range(3)]
    assert tries[0].returncode == 0, tries[0].stdout + tries[0].stderr
    for again in tries[1:]:
        assert again.returncode == 2, again.stdout + again.stderr
        assert "refused (approval_used)" in again.stdout
        assert "allows one call" in again.stdout and "tools approve t.charge" in again.stdout
        assert "Traceback" not in again.stderr
    assert ledger(tmp_path) == ["charge http://example.org/pay#o1"]
    # discovery, asked with the used approval, no longer says the call is executable
    found = cli(tmp_path, "tools", "discover", "charge", "pay.ttl", "--tools", "payments.py",
                *store, "--focus", ":o1", "--approval", given)
    assert "no executable tool matches" in found.stdout, found.stdout
    # the bare fingerprint, which anyone can compute, approves nothing; a fresh approval does
    bare = given.partition(".")[0]
    assert cli(tmp_path, *CALL, *store, "--approval", bare).returncode == 5
    found = cli(tmp_path, "tools", "discover", "charge", "pay.ttl", "--tools", "payments.py",
                *store, "--focus", ":o1", "--approval", bare)
    assert "no executable tool matches" in found.stdout, found.stdout  # nor does discovery
    assert cli(tmp_path, *CALL, *store, "--approval", approval(tmp_path, *store)).returncode == 0
    assert len(ledger(tmp_path)) == 2


def test_an_approval_kept_with_out_is_used_up_in_the_world_read_back(tmp_path) -> None:
    """A world in memory holds the approval's use as long as it is written back (--out); a
    run from the file written is refused the same approval."""
    shop(tmp_path)
    given = approval(tmp_path, "--world", "world.ttl", "--out", "approved.trig")
    first = cli(tmp_path, *CALL, "--world", "approved.trig", "--out", "after.trig",
                "--approval", given)
    assert first.returncode == 0, first.stdout + first.stderr
    again = cli(tmp_path, *CALL, "--world", "after.trig", "--approval", given)
    assert again.returncode == 2 and "approval_used" in again.stdout, again.stdout
    assert len(ledger(tmp_path)) == 1


def test_two_processes_given_one_approval_at_once_charge_once(tmp_path) -> None:
    """Two `tools call --approval` started together on one `sparql:` world: the first holds
    the order's claim and records the approval's use with its intent; the other is refused
    (busy while the first calls, or the approval used once it has)."""
    shop(tmp_path)
    server = OxigraphServer(tmp_path / "db")
    try:
        store = ("--store", server.store)
        horismos_load(tmp_path, store[1], "world.ttl")
        given = approval(tmp_path, *store)
        both = [start(tmp_path, *CALL, *store, "--approval", given, slow=1.5)
                for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in both]
        codes = sorted(p.returncode for p in both)
        assert codes[0] == 0 and codes[1] in (2, 5), outs
        assert ledger(tmp_path) == ["charge http://example.org/pay#o1"], outs
        late = cli(tmp_path, *CALL, *store, "--approval", given)
        assert late.returncode == 2 and "approval_used" in late.stdout, late.stdout
        assert len(ledger(tmp_path)) == 1
    finally:
        server.stop()


def test_an_agent_retrying_run_workflow_is_answered_with_the_instance_it_started(
        tmp_path) -> None:
    """Two `serve --run-workflow` processes on one `sparql:` world, an agent on each asking to
    run :Pay for :o1 at once, then each asking again (a retry after a timeout). A finished
    instance's focus was run anew, its bill sent again; now the retries are answered with
    the instance as it stands, and only `again: true` bills a second time."""
    from mcp import Client

    shop(tmp_path)
    server = OxigraphServer(tmp_path / "db")
    try:
        horismos_load(tmp_path, server.store, "world.ttl")
        serve = ("pay.ttl", "--tools", "payments.py", "--store", server.store,
                 "--run-workflow")
        with (horismos_serving_http(tmp_path, *serve, env=environ(tmp_path, 1.0)) as one,
              horismos_serving_http(tmp_path, *serve, env=environ(tmp_path, 1.0)) as two):
            urls = [one, two]
            pay = {"workflow": ":Pay", "focus": ":o1"}

            async def ask(url: str, **more: bool) -> dict:
                async with Client(url, cache=None) as client:
                    answer = await client.call_tool("run_workflow", {**pay, **more})
                    return {"error": answer.is_error, "text": answer.content[0].text,
                            **(answer.structured_content or {})}

            async def both() -> list[dict]:
                return list(await asyncio.gather(*(ask(url) for url in urls)))

            first = asyncio.run(both())
            assert ledger(tmp_path) == ["bill http://example.org/pay#o1"], first
            retried = asyncio.run(both())
            assert ledger(tmp_path) == ["bill http://example.org/pay#o1"], retried
            for answer in retried:
                assert answer["status"] == "completed" and answer["ran"] is False, answer
                assert answer["steps"] == [] and '"again": true' in answer["text"]
            started = {a["instance"] for a in [*first, *retried] if "instance" in a}
            assert len(started) == 1, (first, retried)
            again = asyncio.run(ask(urls[0], again=True))
            assert again["status"] == "completed" and again["ran"] is True, again
            assert again["instance"] not in started
            assert len(ledger(tmp_path)) == 2
    finally:
        server.stop()


def test_run_workflow_asked_again_for_a_waiting_instance_answers_its_wait(tmp_path) -> None:
    """Asked again while its instance waits, run_workflow answered an error (running again
    does not settle a wait); now it answers the wait, with its brief, and runs nothing."""
    from rdflib import URIRef

    from horismos import Agent, UsageError, World
    from horismos._serve import ServedTools

    shop(tmp_path)
    (tmp_path / "wait.ttl").write_text(PREFIXES + """
:Check a horis:Workflow ; horis:focusType :Order ; horis:start :Ask .
:Ask a horis:WaitStep ; horis:reason "Is the order genuine?" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :genuine true ." .
""")
    agent = Agent.from_files(tmp_path / "pay.ttl", tmp_path / "wait.ttl",
                             tools={"payments.charge": print, "payments.bill": print})
    served = ServedTools(agent, World.from_files(tmp_path / "world.ttl"), run_workflow=True)
    check = {"workflow": ":Check", "focus": ":o1"}

    async def twice() -> list:
        return [await served.call("run_workflow", check) for _ in range(2)]

    first, second = asyncio.run(twice())
    assert first.structured_content["status"] == "waiting", first.content[0].text
    assert not second.is_error, second.content[0].text
    answer = second.structured_content
    assert answer["status"] == "waiting" and answer["ran"] is False
    assert answer["instance"] == first.structured_content["instance"]
    assert "Is the order genuine?" in answer["brief"]
    # the same from Python; a batch has no one instance to answer with
    found = agent.run(served.world, ":Check", ":o1", again=False)
    assert [i.instance for i in found.instances] == [URIRef(answer["instance"])]
    assert found.instances[0].steps == [] and found.instances[0].status == "waiting"
    with pytest.raises(UsageError, match="give a focus, or leave again out"):
        agent.run(served.world, ":Check", all=True, again=False)


def test_run_workflow_says_what_failed_an_instance_and_says_it_again_when_asked_again(
    tmp_path,
) -> None:
    """A failed instance's ``error`` said ``kind: failed`` and words: an agent told a call
    held in doubt from a tool that raised only by parsing them, and asked again it was
    answered a plain error of the stored words. ``error.cause`` is the kind of what failed
    it, the same when answered as it stands."""
    from horismos import Agent, World
    from horismos._serve import ServedTools

    shop(tmp_path)

    def bill(order: object) -> None:
        raise RuntimeError("the billing service said no")

    agent = Agent.from_files(tmp_path / "pay.ttl",
                             tools={"payments.charge": print, "payments.bill": bill})
    served = ServedTools(agent, World.from_files(tmp_path / "world.ttl"), run_workflow=True)
    pay = {"workflow": ":Pay", "focus": ":o1"}

    async def twice() -> list:
        return [await served.call("run_workflow", pay) for _ in range(2)]

    first, second = (r.structured_content for r in asyncio.run(twice()))
    assert first["status"] == "failed" and first["ran"] is True
    assert first["error"]["kind"] == "failed" and first["error"]["cause"] == "tool_error"
    assert second["status"] == "failed" and second["ran"] is False
    assert second["error"]["kind"] == "failed" and second["error"]["cause"] == "tool_error"
    assert "the billing service said no" in second["error"]["message"]
