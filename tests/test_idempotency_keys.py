"""A catalog call retried with its idempotency key calls nothing: it is answered again.

A client whose answer was lost after the tool acted (a dropped connection, its own timeout)
asks again with the same key; the first call recorded the key with its payload's fingerprint
and its answer, in the same commits as its intent and its effects. Each tool appends to a
ledger (or counts its calls), so a second charge shows; the world lives where processes
share it (``oxigraph:PATH``, ``sparql:`` over ``oxigraph serve``), or in a file (``--out``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import pytest
from charge_ledger import PREFIXES, ledger
from conftest import Build
from forked import Popen
from in_process import horismos_load
from listening import horismos_serving_http
from oxigraph_server import OxigraphServer
from retried_charge import cli, environ, shop, start
from test_in_doubt import ALLOW, CHARGE, Charger, intents

from horismos import NotSent, UsageError
from horismos._idempotency import MCP_META_KEY, read_key
from horismos._intents import CALLING
from horismos._stores.base import WrappedStore

# an MCP stdio server the SDK starts is a zygote child (conftest.py's forked_popen)
pytestmark = pytest.mark.usefixtures("forked_popen")

BILL = ("tools", "call", "t.bill", "pay.ttl", "--tools", "payments.py")
O1 = ("--args", '{"order": ":o1"}')
BILLED = "bill http://example.org/pay#o1"


def replayed(out: str) -> dict:
    """The idempotency key's artifact of a call's JSON envelope."""
    return next(a for a in json.loads(out)["artifacts"] if a["type"] == "idempotency_key")


def test_a_tools_call_retried_with_its_key_bills_once_and_answers_the_first_answer(
        tmp_path) -> None:
    """`tools call` of a tool that is not idempotent, run three times with one key (a script
    retrying after its answer was lost): it billed three times; now once, and the retries
    print the first call's answer, marked replayed, exit 0. The key with other arguments is
    refused, exit 2; a new key bills again."""
    shop(tmp_path)
    (tmp_path / "world.ttl").write_text((tmp_path / "world.ttl").read_text() + ":o2 a :Order .\n")
    store = ("--store", "oxigraph:store")
    horismos_load(tmp_path, store[1], "world.ttl")
    key = ("--idempotency-key", "order-o1-attempt")
    tries = [cli(tmp_path, *BILL, *O1, *store, *key, "--format", "json") for _ in range(3)]
    assert [t.returncode for t in tries] == [0, 0, 0], [t.stdout + t.stderr for t in tries]
    assert ledger(tmp_path) == [BILLED]
    first, *again = (json.loads(t.stdout) for t in tries)
    assert replayed(tries[0].stdout) == {"type": "idempotency_key", "key": "order-o1-attempt"}
    for answer, out in zip(again, tries[1:], strict=True):
        assert replayed(out.stdout)["replayed"] is True
        assert answer["effects"] == first["effects"] and answer["status"] == "completed"
        assert "nothing was called now" in answer["content"][0]["text"]
    text = cli(tmp_path, *BILL, *O1, *store, *key)
    assert text.returncode == 0 and "replayed: the answer of the call first made" in text.stdout

    other = cli(tmp_path, *BILL, "--args", '{"order": ":o2"}', *store, *key)
    assert other.returncode == 2, other.stdout + other.stderr
    assert "refused (idempotency_key_reused)" in other.stdout and "give a new key" in other.stdout
    fresh = cli(tmp_path, *BILL, *O1, *store, "--idempotency-key", "order-o1-second")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert ledger(tmp_path) == [BILLED, BILLED]
    empty = cli(tmp_path, *BILL, *O1, *store, "--idempotency-key", " ")
    assert empty.returncode == 2 and "non-empty string" in empty.stderr
    assert "Traceback" not in empty.stderr


def test_a_key_kept_with_out_answers_the_call_made_from_the_file_written(tmp_path) -> None:
    """A world in memory keeps the key as long as it is written back (--out): the retry from
    the file written is answered the first call's answer, and bills nothing."""
    shop(tmp_path)
    key = ("--idempotency-key", "k-1")
    first = cli(tmp_path, *BILL, *O1, "--world", "world.ttl", "--out", "after.trig", *key)
    assert first.returncode == 0, first.stdout + first.stderr
    again = cli(tmp_path, *BILL, *O1, "--world", "after.trig", *key)
    assert again.returncode == 0 and "replayed" in again.stdout, again.stdout + again.stderr
    assert "landed in" in again.stdout  # with the first call, which the file keeps
    assert ledger(tmp_path) == [BILLED]


def test_two_processes_given_one_key_at_once_bill_once(tmp_path) -> None:
    """Two `tools call` with one key started together on one `sparql:` world: the first holds
    the order's claim and records the key with its intent; the other is refused (busy while
    the first bills) or answered the first's answer; a late retry is answered it too."""
    shop(tmp_path)
    server = OxigraphServer(tmp_path / "db")
    try:
        store = ("--store", server.store)
        horismos_load(tmp_path, store[1], "world.ttl")
        key = ("--idempotency-key", "k-race")
        both = [start(tmp_path, *BILL, *O1, *store, *key, slow=1.5) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in both]
        codes = sorted(p.returncode for p in both)
        assert codes[0] == 0 and codes[1] in (0, 5), outs
        assert ledger(tmp_path) == [BILLED], outs
        late = cli(tmp_path, *BILL, *O1, *store, *key)
        assert late.returncode == 0 and "replayed" in late.stdout, late.stdout + late.stderr
        assert ledger(tmp_path) == [BILLED]
    finally:
        server.stop()


# two processes, one key, two orders: each round both wait at a barrier (a file each), then
# call at once; the tool appends to the ledger, so a second charge under one key shows
RACER = '''
import json, sys, time
from pathlib import Path
import horismos

here, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rounds, store = int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, str(here))
agent = horismos.Agent.from_files(here / "pay.ttl", allow_modules=["payments"])
world = horismos.World.open(store)
seen = []
for r in range(rounds):
    (here / f"ready-{r}-{me}").touch()
    while not (here / f"ready-{r}-{other}").exists():
        time.sleep(0.0005)
    result = agent.catalog.call("t.bill", {"order": f":o{r}{me}"}, world,
                                allow=["ReadOnly", "HostStateWrite", "ExternalCommit"],
                                idempotency_key=f"k-{r}")
    seen.append([result.status, (result.error or {}).get("kind")])
print(json.dumps(seen))
'''


def test_two_processes_given_one_key_for_two_orders_at_once_bill_at_most_once(
        tmp_path) -> None:
    """Two processes call t.bill with one key, each for an order of its own, at the same
    instant, round after round, on one `sparql:` world. Their subjects differ, so the
    orders' claims kept nothing apart, and the commit's "key absent" is judged by the
    Oxigraph server on a snapshot: both landed and both billed. The key is claimed with the
    subject: one bills, the other is refused (the key in flight, or reused), calling
    nothing."""
    rounds = 30
    shop(tmp_path)
    orders = "".join(f":o{r}{who} a :Order .\n" for r in range(rounds) for who in "ab")
    (tmp_path / "world.ttl").write_text(PREFIXES + orders)
    (tmp_path / "racer.py").write_text(RACER)
    server = OxigraphServer(tmp_path / "db")
    try:
        horismos_load(tmp_path, server.store, "world.ttl")
        racers = [
            Popen(
                [sys.executable, "racer.py", str(tmp_path), me, other, str(rounds), server.store],
                cwd=tmp_path, env=environ(tmp_path), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            for me, other in (("a", "b"), ("b", "a"))
        ]
        outs = [p.communicate(timeout=600) for p in racers]
        assert [p.returncode for p in racers] == [0, 0], outs
        seen = [json.loads(out) for out, _ in outs]
        billed = ledger(tmp_path)
        for r in range(rounds):
            charges = [line for line in billed if line.endswith((f"#o{r}a", f"#o{r}b"))]
            assert len(charges) <= 1, (r, charges, seen[0][r], seen[1][r])
            kinds = {seen[0][r][1], seen[1][r][1]}
            assert [seen[0][r][0], seen[1][r][0]].count("completed") == len(charges)
            assert kinds <= {None, "busy", "idempotency_key_reused"}, kinds
    finally:
        server.stop()


def test_an_agent_whose_answer_was_lost_retries_with_its_key_and_is_billed_once(
        tmp_path) -> None:
    """An agent calls t.bill on `horismos serve` over streamable HTTP with a key in the
    request's `_meta`, and gives up before the answer comes (its timeout); the server bills
    and commits. Asked again with the key, it is answered the first call's answer, replayed,
    and bills nothing; without a key the same retry bills again."""
    from mcp import Client

    shop(tmp_path)
    with horismos_serving_http(
            tmp_path, "pay.ttl", "--tools", "payments.py", "--store", "oxigraph:store",
            "--world", "world.ttl", "--allow", "ReadOnly,HostStateWrite,ExternalCommit",
            env=environ(tmp_path, 1.5)) as url:
        order = {"order": ":o1"}

        async def bill(key: str | None, timeout: float | None = None) -> dict | None:
            meta = {MCP_META_KEY: key} if key is not None else None
            async with Client(url, cache=None) as client:
                try:
                    answer = await client.call_tool("t.bill", order, timeout, meta=meta)
                except Exception:  # the client's own timeout: the answer is lost
                    return None
                return {"error": answer.is_error, "text": answer.content[0].text,
                        **(answer.structured_content or {})}

        assert asyncio.run(bill("agent-1", timeout=0.3)) is None
        retried = asyncio.run(bill("agent-1"))  # waits its turn behind the first call
        assert retried is not None and not retried["error"], retried
        assert retried["status"] == "completed" and "replayed" in retried["text"]
        mark = {k: v for k, v in retried["artifacts"][-1].items() if k != "first"}
        assert mark == {"type": "idempotency_key", "key": "agent-1", "replayed": True}
        assert retried["result"]["billRef"], retried
        assert ledger(tmp_path) == [BILLED]

        other = asyncio.run(_other(url))
        assert other["error"] and other["error_kind"] == "idempotency_key_reused", other
        assert asyncio.run(bill(None))["status"] == "completed"  # type: ignore[index]
        assert ledger(tmp_path) == [BILLED, BILLED]


def test_a_request_given_up_while_it_waits_its_turn_calls_nothing(tmp_path) -> None:
    """A client that gives up on a request still queued behind another call (its timeout)
    is not billed once the server's lock frees: only a call whose turn has come is finished
    for a client gone."""
    from mcp import Client

    shop(tmp_path)
    (tmp_path / "world.ttl").write_text((tmp_path / "world.ttl").read_text() + ":o2 a :Order .\n")
    with horismos_serving_http(
            tmp_path, "pay.ttl", "--tools", "payments.py", "--world", "world.ttl", "--allow",
            "ReadOnly,HostStateWrite,ExternalCommit", env=environ(tmp_path, 2.0)) as url:
        async def bill(order: str, timeout: float | None = None, after: float = 0.0) -> bool:
            await asyncio.sleep(after)
            async with Client(url, cache=None) as client:
                try:
                    await client.call_tool("t.bill", {"order": order}, timeout)
                except Exception:  # the client's own timeout: it gave up
                    return False
                return True

        async def both() -> list[bool]:
            return list(await asyncio.gather(bill(":o1"), bill(":o2", timeout=0.3, after=0.5)))

        assert asyncio.run(both()) == [True, False]
        # the server would have billed :o2 once :o1's call ended (~2 s): a third call queued
        # behind both answers only when everything queued before it has ended
        assert asyncio.run(bill(":o1"))
        assert [line for line in ledger(tmp_path) if line.endswith("#o2")] == []


async def _other(url: str) -> dict:
    """A call of another tool with the key agent-1 was given to t.bill."""
    from mcp import Client

    async with Client(url, cache=None) as client:
        answer = await client.call_tool(
            "t.charge", {"order": ":o1"}, meta={MCP_META_KEY: "agent-1"})
        out = answer.structured_content or {}
        return {"error": answer.is_error, "error_kind": (out.get("error") or {}).get("kind")}


def test_serve_no_again_refuses_again_and_runs_a_focus_once(tmp_path) -> None:
    """`serve --run-workflow --no-again` over stdio: `"again": true` is refused, saying so,
    and bills nothing; the focus's instance is answered as it stands."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    shop(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "horismos", "serve", "pay.ttl", "--tools", "payments.py", "--store",
              "oxigraph:store", "--world", "world.ttl", "--run-workflow", "--no-again"],
        cwd=str(tmp_path), env=environ(tmp_path))
    pay = {"workflow": ":Pay", "focus": ":o1"}

    async def session() -> list:
        async with Client(params, cache=None) as client:
            return [await client.call_tool("run_workflow", {**pay, **more})
                    for more in ({}, {"again": True}, {})]

    first, again, retried = asyncio.run(session())
    assert not first.is_error and first.structured_content["ran"] is True
    assert again.is_error and "serve --no-again" in again.content[0].text
    assert retried.structured_content["ran"] is False
    assert "again" not in retried.content[0].text.split("not run again")[1]
    assert ledger(tmp_path) == [BILLED]
    no_flag = cli(tmp_path, "serve", "pay.ttl", "--no-again")
    assert no_flag.returncode == 2 and "--no-again is for --run-workflow" in no_flag.stderr


# -- the Python API, on every store ----------------------------------------------------------


def test_a_key_whose_call_is_in_doubt_answers_that_and_calls_nothing(build: Build) -> None:
    """The first call with a key never answered (in doubt): a retry with the key is refused
    as the call in doubt is, and calls nothing; once reconciled, the key still names that
    call (settled by hand), and a new key calls."""
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    args = {"patient": ":p1"}
    charge.mode = "hang"
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert first.status == "timed_out"
    assert charge.hung.wait(60)
    charge.mode = "answer"
    deadline = time.monotonic() + 10
    while True:  # the abandoned call's claim and note go once its thread has returned
        again = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
        assert again.error is not None
        if again.error["kind"] != "busy" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert again.status == "refused" and again.error["kind"] == "outcome_unknown", again.error
    assert "may already have acted on :p1" in again.error["message"]
    assert len(charge.acted) == 1

    deadline = time.monotonic() + 10
    while CALLING:  # reconcile leaves a call be until its abandoned thread has returned
        assert time.monotonic() < deadline, CALLING
        time.sleep(0.01)
    assert agent.catalog.reconcile("t.charge", args, world) is not None
    assert intents(world) == []
    settled = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert settled.error is not None and settled.error["kind"] == "outcome_unknown"
    assert "cleared by hand" in settled.error["message"]
    assert len(charge.acted) == 1
    fresh = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k2")
    assert fresh.status == "completed" and len(charge.acted) == 2


@pytest.mark.parametrize("idempotent", [False, True])
def test_a_key_records_a_failure_the_tool_answered_and_a_refusal_records_nothing(
        build: Build, idempotent: bool) -> None:
    """A call the tool answers with an error lands its answer under the key (believed: it did
    not act) and a retry is answered that error, calling nothing, as an API with keys does;
    a call refused before it is made (an argument of the wrong type) records no key, which
    then names the next call made with it, whatever its arguments. An idempotent tool,
    which announces no intent, records its key with its effects (or its failure) as surely."""
    charge = Charger()
    defs = CHARGE.replace("idempotent false", "idempotent true") if idempotent else CHARGE
    agent, world = build(defs, tools={"charge": charge})
    args = {"patient": ":p1"}
    charge.mode = "raise"
    failed = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="f")
    assert failed.status == "failed" and failed.error["kind"] == "tool_error"  # type: ignore[index]
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="f")
    assert again.replayed is not None and again.status == "failed"
    assert again.error == failed.error and len(charge.acted) == 1

    charge.mode = "answer"
    nobody = {"patient": ":nobody"}
    refused = agent.catalog.call("t.charge", nobody, world, allow=ALLOW, idempotency_key="r")
    assert refused.status == "refused"
    assert refused.error["kind"] == "argument_type"  # type: ignore[index]
    assert read_key(world.store, "r") is None
    made = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="r")
    assert made.status == "completed" and made.replayed is None
    answered = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="r")
    assert answered.replayed is not None and answered.effects == made.effects
    assert len(charge.acted) == 2
    with pytest.raises(UsageError, match="at most 255"):
        agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="x" * 256)


def test_a_retry_whose_policy_refuses_the_tool_is_refused_not_answered(build: Build) -> None:
    """A key answers a retry only a call the caller's policy would allow: one with ``allow``
    ReadOnly, given the key of a charge (HostStateWrite) that completed, was handed that
    charge's whole answer, replayed (review). It is refused, ``policy``, as the same call
    without the key is, and nothing is called; under the first call's policy the key still
    answers the first call's answer."""
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    args = {"patient": ":p1"}
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert first.status == "completed" and first.replayed is None
    read_only = agent.catalog.call(
        "t.charge", args, world, allow=["ReadOnly"], idempotency_key="k"
    )
    assert read_only.replayed is None and read_only.status == "refused"
    assert read_only.error is not None and read_only.error["kind"] == "policy"
    assert not any(b.get("type") == "json" for b in read_only.content)
    assert len(charge.acted) == 1
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert again.replayed is not None and again.effects == first.effects
    assert len(charge.acted) == 1


def test_an_idempotent_call_that_got_no_answer_leaves_its_key_free(build: Build) -> None:
    """An idempotent tool's call with a key that timed out recorded that answer under the key,
    so every retry with it was answered "timed_out", replayed, and never called again
    (review), though calling an idempotent tool again is safe and a lost answer is what a key
    is for. It records no key (a blocked call's is dropped too): the retry with the key calls
    and lands, and the next is answered that, replayed. One never sent (its binding gone)
    leaves the key free the same way."""
    charge = Charger()
    agent, world = build(
        CHARGE.replace("idempotent false", "idempotent true"), tools={"charge": charge}
    )
    args = {"patient": ":p1"}
    charge.mode = "hang"
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert first.status == "timed_out" and first.error is not None
    assert first.error["kind"] == "timeout"
    assert read_key(world.store, "k") is None
    assert charge.hung.wait(60)
    charge.mode = "answer"
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert again.status == "completed" and again.replayed is None, again.error
    assert len(charge.acted) == 2
    record = read_key(world.store, "k")
    assert record is not None and record.answer is not None
    assert record.answer["status"] == "completed"
    third = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert third.replayed is not None and third.effects == again.effects
    assert len(charge.acted) == 2

    sent: list[str] = []

    def unreachable(patient: Any) -> dict[str, str]:
        sent.append(str(patient))
        if len(sent) == 1:
            raise NotSent("the card network refused the connection (nothing was sent)")
        return {"ref": "R-9"}

    agent, world = build(
        CHARGE.replace("idempotent false", "idempotent true"), tools={"charge": unreachable}
    )
    lost = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="n")
    assert lost.status == "failed" and lost.error is not None
    assert lost.error["kind"] == "not_sent" and read_key(world.store, "n") is None
    made = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="n")
    assert made.status == "completed" and made.replayed is None and len(sent) == 2


def test_a_key_is_read_in_one_look_up(build: Build) -> None:
    """A retry's key is read by one look-up of its node: on a ``sparql:`` store that is one
    query, where a look-up a property (fingerprint, answer, start) made three round trips
    (review). Counted at the store the call reads through; the record read is the same."""
    agent, world = build(CHARGE, tools={"charge": Charger()})
    args = {"patient": ":p1"}
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    asked: list[str] = []

    class Counted(WrappedStore):
        def objects(self, subject: Any, predicate: Any) -> Any:
            asked.append("objects")
            return self.inner.objects(subject, predicate)

        def outgoing(self, subject: Any, predicates: Any = None) -> Any:
            asked.append("outgoing")
            return self.inner.outgoing(subject, predicates)

    record = read_key(Counted(world.store), "k")
    assert len(asked) == 1, asked
    assert record is not None and record.answer is not None
    assert record.answer["status"] == "completed" and record.answer["effects"]
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW, idempotency_key="k")
    assert again.replayed == record.started and again.effects == first.effects
    assert read_key(Counted(world.store), "never-given") is None


def _settled(call: Any) -> Any:
    """``call()``'s result once no abandoned call's thread keeps its subject held (busy)."""
    deadline = time.monotonic() + 10
    while True:
        result = call()
        if (result.error or {}).get("kind") != "busy" or time.monotonic() > deadline:
            return result
        time.sleep(0.05)


@pytest.mark.parametrize("idempotent", [True, False])
def test_a_keyed_retry_of_an_unanswered_call_may_use_the_approval_it_used(
        build: Build, idempotent: bool) -> None:
    """An idempotent tool that requires approval, called with an approval and a key, times
    out: the approval is used up and the key is left free, so the retry — the same call, with
    the same key and payload — was refused `approval_used`, though the approval authorised
    exactly that call and calling it again is safe. It may use it again; another key, or no
    key, may not (a second call). A tool that is not idempotent stays refused: its call is in
    doubt, and nothing is called."""
    charge = Charger()
    defs = CHARGE.replace(
        "horis:idempotent false",
        f"horis:requiresApproval true ; horis:idempotent {str(idempotent).lower()}",
    )
    agent, world = build(defs, tools={"charge": charge})
    args = {"patient": ":p1"}
    approval = agent.catalog.approve("t.charge", args)

    def call(key: str | None) -> Any:
        return _settled(lambda: agent.catalog.call(
            "t.charge", args, world, allow=ALLOW, approval=approval, idempotency_key=key))

    charge.mode = "hang"
    first = call("k")
    assert first.status == "timed_out", first.error
    assert charge.hung.wait(60)
    charge.mode = "answer"
    for other in ("k2", None):
        refused = call(other)
        assert refused.status == "refused", refused.error
        kind = "approval_used" if idempotent else "outcome_unknown"
        assert refused.error is not None and refused.error["kind"] == kind, refused.error
    assert len(charge.acted) == 1
    again = call("k")
    if not idempotent:
        assert again.status == "refused" and again.error is not None
        assert again.error["kind"] == "outcome_unknown" and len(charge.acted) == 1
        return
    assert again.status == "completed" and again.replayed is None, again.error
    assert len(charge.acted) == 2
    third = call("k")
    assert third.replayed is not None and third.effects == again.effects
    still = call("k3")
    assert still.error is not None and still.error["kind"] == "approval_used"
    assert len(charge.acted) == 2


def test_two_keyed_calls_at_once_in_one_process_call_once(build: Build) -> None:
    """An application awaiting two `acall`s at once (asyncio.gather) with one key and two
    patients, of an idempotent tool: the key is recorded with the effects, after the call,
    so both were called, and the second was refused `idempotency_key_reused` after its tool
    had acted. A key being called in this process is held: the other is refused `busy`,
    calling nothing."""
    called: list[str] = []

    def charge(patient: Any) -> dict[str, str]:
        called.append(str(patient))
        time.sleep(0.05)  # in flight while the other call is checked
        return {"ref": f"R-{len(called)}"}

    agent, world = build(
        CHARGE.replace("idempotent false", "idempotent true"), tools={"charge": charge}
    )

    async def both() -> list[Any]:
        return list(await asyncio.gather(*(
            agent.catalog.acall("t.charge", {"patient": p}, world, allow=ALLOW,
                                idempotency_key="one")
            for p in (":p1", ":p2"))))

    results = asyncio.run(both())
    assert len(called) == 1, (called, [r.error for r in results])
    assert sorted(r.status for r in results) == ["completed", "refused"]
    refused = next(r for r in results if r.status == "refused")
    assert refused.error is not None and refused.error["kind"] == "busy", refused.error
    again = asyncio.run(both())
    assert len(called) == 1  # the key answers one and refuses the other's payload
    assert sorted((r.error or {}).get("kind") or "" for r in again) == [
        "", "idempotency_key_reused"]


def _slow_charge(acted: list[str]) -> Any:
    def charge(patient: Any) -> dict[str, str]:
        acted.append(str(patient))
        time.sleep(0.3)
        return {"ref": "R-1"}  # the clinic shape allows it: a refused constant is not called

    return charge


def test_a_keyed_call_cancelled_while_it_closes_gives_its_key_and_claims_back(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call cancelled by an anyio cancel scope (as an MCP server's request handler is), whose
    close awaits (an MCP session's does): the cancel is raised again at that await, and the
    key (and on a shared world the subject's and key's claims) stayed held for the life of
    the process, every retry refused busy."""
    import anyio

    from horismos._runner import Runner

    acted: list[str] = []
    agent, world = build(CHARGE.replace("idempotent false", "idempotent true"),
                         tools={"charge": _slow_charge(acted)})
    closing = Runner.aclose

    async def aclose(self: Runner) -> None:  # a close that awaits: a checkpoint
        await anyio.sleep(0)
        await closing(self)

    monkeypatch.setattr(Runner, "aclose", aclose)

    async def cancelled() -> None:
        with anyio.move_on_after(0.1):
            await agent.catalog.acall("t.charge", {"patient": ":p1"}, world, allow=ALLOW,
                                      idempotency_key="c")

    anyio.run(cancelled)
    monkeypatch.setattr(Runner, "aclose", closing)
    again = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW,
                               idempotency_key="c")
    assert (again.error or {}).get("kind") != "busy", again.error


def test_one_key_on_two_worlds_at_once_calls_on_both(build: Build) -> None:
    """A key names a call in its world: two worlds served by one process (two tenants) whose
    callers both use the key "order-1" each get their call (the second was refused busy)."""
    acted: list[str] = []
    definitions = CHARGE.replace("idempotent false", "idempotent true")
    a1, w1 = build(definitions, tools={"charge": _slow_charge(acted)})
    a2, w2 = build(definitions, tools={"charge": _slow_charge(acted)})
    if w1.store.shared:
        pytest.skip("one shared world: the key is one key there")

    async def both() -> list[Any]:
        return list(await asyncio.gather(
            a1.catalog.acall("t.charge", {"patient": ":p1"}, w1, allow=ALLOW,
                             idempotency_key="order-1"),
            a2.catalog.acall("t.charge", {"patient": ":p1"}, w2, allow=ALLOW,
                             idempotency_key="order-1"),
        ))

    results = asyncio.run(both())
    assert [(r.error or {}).get("kind") for r in results].count("busy") == 0, results
    assert len(acted) == 2


def test_a_mistyped_lease_refuses_a_shared_call_before_anything_lands(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog call on a shared world with ``HORISMOS_LEASE=abc`` is a usage error, and the
    world is as it was: the definitions' individuals used to be placed first, and left."""
    agent, world = build(CHARGE + "\n:someWard a :Ward .\n",
                         tools={"charge": lambda patient: {"ref": "R-1"}})
    if not world.store.shared:
        pytest.skip("a lease is taken on a shared world only")
    everything = "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"
    before = len(world.store.select(everything, {}, {}))
    monkeypatch.setenv("HORISMOS_LEASE", "abc")
    with pytest.raises(UsageError, match="HORISMOS_LEASE is 'abc'"):
        agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert len(world.store.select(everything, {}, {})) == before


def test_keyed_calls_on_a_shared_world_leave_no_claims_behind(build: Build) -> None:
    """Each keyed call on a shared world claims its subject and its key, and gave both back
    keeping their ``c:workflow`` and ``c:focus``: two triples a key, for good, in a graph the
    claim queries read. Now the claims graph is as it was after twelve keyed calls on three
    subjects (one replayed, one refused by the policy once held)."""
    from horismos._claims import CLAIMS

    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    if not world.store.shared:
        pytest.skip("claims are taken on a shared world only")
    claims = f"SELECT * WHERE {{ GRAPH <{CLAIMS}> {{ ?s ?p ?o }} }}"
    before = world.store.select(claims, {}, {})
    results = [
        agent.catalog.call("t.charge", {"patient": f":p{1 + n % 3}"}, world, allow=ALLOW,
                           idempotency_key=f"k{n}")
        for n in range(10)
    ]
    results.append(agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW,
                                      idempotency_key="k0"))  # replayed
    results.append(agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=[],
                                      idempotency_key="k-refused"))
    assert [r.status for r in results].count("completed") == 11, [r.error for r in results]
    assert results[-2].replayed is not None and results[-1].status == "refused"
    assert world.store.select(claims, {}, {}) == before
