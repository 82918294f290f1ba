"""Durable instances: a run on an on-disk store is killed with SIGKILL at each point of a step,
and another process resumes it. Nothing committed is lost, nothing is half-written, and a
non-idempotent tool is never called twice.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from charge_ledger import PREFIXES, ledger
from forked import Popen, horismos_forked
from killed_charge import DEFINITIONS, environ, horismos, project, run_until_killed
from rdflib import Literal, Namespace, URIRef

from horismos import Agent, World
from horismos._stored_instances import read_instance
from horismos._vocab import HORIS
from horismos._world import INSTANCES

P = Namespace("http://example.org/pay#")

@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return project(tmp_path, "o1")


def resume(cwd: Path, *args: str, kind: str = "oxigraph") -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, "resume", "pay.ttl", "--store", f"{kind}:store", "--tools",
                           "payments.py", *args, env=environ(cwd, None), timeout=300)


def inspect(cwd: Path, kind: str = "oxigraph") -> dict[str, object]:
    """What the store holds after the kill, read by this process (the killed one let go)."""
    world = World.open(f"{kind}:{cwd / 'store'}")
    try:
        (iid,) = set(world.graph.graph(INSTANCES).subjects(HORIS.focus, P.o1))
        stored = read_instance(world.store, iid)
        ds = world.graph
        assert stored is not None
        state = ds.graph(INSTANCES)
        # one value for each piece of state: no commit landed half
        for p in (HORIS.status, HORIS.version):
            assert len(list(state.objects(iid, p))) == 1, p
        assert len(list(state.objects(iid, HORIS.currentStep))) <= 1
        effects = [g for g in ds.graphs() if str(g.identifier).startswith("urn:horismos:effect:")]
        intent = list(state.objects(URIRef(f"{iid}:intent"), HORIS.step))
        return {"instance": iid, "status": stored.status, "version": stored.version,
                "current": stored.current, "effects": len(effects), "intent": intent,
                "charge": list(ds.objects(P.o1, P.chargeRef))}
    finally:
        world.store.close()


@pytest.mark.parametrize(("point", "kind"), [("charge-before", "oxigraph"),
                                             ("charge-after", "oxigraph"),
                                             ("charge-after", "journal")])
def test_killed_during_a_non_idempotent_call_is_not_called_again(shop, point, kind) -> None:
    run_until_killed(shop, point, kind=kind)
    after = inspect(shop, kind)
    # the intent was committed before the call; nothing of the call's result was
    assert after["status"] == "running" and after["current"] == P.Charge
    assert after["version"] == 0 and after["effects"] == 0 and after["charge"] == []
    assert after["intent"] == [P.Charge]
    acted = ledger(shop)
    assert acted == ([] if point == "charge-before" else [f"charge {P.o1}"])

    resumed = resume(shop, "--instance", str(after["instance"]), "--trace", "recover.jsonl",
                     kind=kind)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # waits at :Reconcile
    assert "not called again" in resumed.stdout
    assert "check with the payment provider" in resumed.stdout
    # the first message already says the call is held in doubt, and the command that clears it
    assert "further calls of t.charge on :o1 are held in doubt" in resumed.stdout
    assert "horismos tools reconcile t.charge … --args '{\"order\": \":o1\"}'" in resumed.stdout
    assert ledger(shop) == acted  # the charge was not made a second time
    recovered = inspect(shop, kind)
    assert recovered["status"] == "waiting" and recovered["current"] == P.Reconcile
    assert recovered["intent"] == []

    # the operator reconciles: the provider says it went through, with this reference
    done = resume(shop, "--instance", str(after["instance"]), "--facts", ':o1 :chargeRef "CH-1" .',
                  kind=kind)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ledger(shop) == [*acted, f"notify {P.o1}"]

    replayed = horismos_forked(shop, "replay", "recover.jsonl", "pay.ttl", "--tools",
                               "payments.py", env=environ(shop, None), timeout=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_an_approval_a_killed_call_took_is_not_taken_again_by_the_loop_back(shop) -> None:
    """A person approved one charge; its process was killed mid-call, and once the operator
    had cleared the call in doubt the workflow came back to the charge. The approval was used
    up only with the step's commit, which never came: the second charge went out on it."""
    (shop / "pay.ttl").write_text(DEFINITIONS.replace(
        "    horis:idempotent false .", "    horis:idempotent false ;\n"
        "    horis:requiresApproval true .", 1).replace(
        "    horis:onError :Reconcile .", "    horis:onError :Checked .\n"
        ":checked a owl:DatatypeProperty .\n"
        ":Checked a horis:WaitStep ; horis:reason \"Ask the provider.\" ;\n"
        "    horis:wake horis:OperatorInput ; horis:delivery horis:Final ;\n"
        "    horis:until \"?this :checked true .\" ; horis:next :Charge ."))
    asked = horismos_forked(shop, "run", "pay.ttl", "--world", "world.ttl", "--store",
                            "oxigraph:store", "--tools", "payments.py", "--focus", ":o1",
                            env=environ(shop, None), timeout=300)
    assert asked.returncode == 3, asked.stdout + asked.stderr  # waits for approval
    iid = re.search(r"urn:horismos:instance:\w+", asked.stdout)
    fp = re.search(r"Fingerprint: (\w+)", asked.stdout)
    assert iid is not None and fp is not None
    approved = horismos_forked(shop, "approve", "pay.ttl", "--store", "oxigraph:store",
                               "--instance", iid[0], "--fingerprint", fp[1],
                               env=environ(shop, None), timeout=300)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    run_until_killed(shop, "charge-after", "resume", "pay.ttl", "--store", "oxigraph:store",
                     "--tools", "payments.py", "--instance", iid[0])
    assert ledger(shop) == [f"charge {P.o1}"]

    unknown = resume(shop, "--instance", iid[0])
    assert unknown.returncode == 3 and "not called again" in unknown.stdout  # at :Checked
    cleared = horismos_forked(shop, "tools", "reconcile", "t.charge", "pay.ttl", "--store",
                              "oxigraph:store", "--tools", "payments.py", "--args",
                              '{"order": ":o1"}', env=environ(shop, None), timeout=300)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    back = resume(shop, "--instance", iid[0], "--facts", ":o1 :checked true .")
    assert back.returncode == 3, back.stdout + back.stderr
    assert "requires approval" in back.stdout  # a new one: the first was for the first call
    assert ledger(shop) == [f"charge {P.o1}"]


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_killed_after_a_commit_loses_nothing_and_reruns_only_the_idempotent_step(
    shop, kind
) -> None:
    run_until_killed(shop, "notify", kind=kind)
    after = inspect(shop, kind)
    # the charge and the move to :Notify were committed together, and survived the kill
    assert after["status"] == "running" and after["current"] == P.Notify
    assert after["version"] == 1 and after["effects"] == 1
    assert after["charge"] == [Literal("CH-1")] and after["intent"] == []
    assert ledger(shop) == [f"charge {P.o1}"]

    # the killed run's trace replays as far as it was written, and says where it stops
    replayed = horismos_forked(shop, "replay", "killed.jsonl", "pay.ttl",
                               env=environ(shop, None), timeout=300)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("STOPPED   killed.jsonl: 1 step(s) replayed the same")
    assert "no end event" in replayed.stdout
    assert ledger(shop) == [f"charge {P.o1}"]  # replay called nothing

    resumed = resume(shop, "--instance", str(after["instance"]), kind=kind)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert ledger(shop) == [f"charge {P.o1}", f"notify {P.o1}"]
    done = inspect(shop, kind)
    assert done["status"] == "completed" and done["effects"] == 2


def test_without_on_error_an_unknown_outcome_fails_the_instance(shop) -> None:
    (shop / "pay.ttl").write_text(DEFINITIONS.replace(
        "    horis:next :Notify ;\n    horis:onError :Reconcile .", "    horis:next :Notify ."))
    run_until_killed(shop, "charge-after")
    resumed = resume(shop, "--instance", str(inspect(shop)["instance"]))
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    assert "not called again" in resumed.stdout
    after = inspect(shop)
    assert after["status"] == "failed" and after["intent"] == []
    assert ledger(shop) == [f"charge {P.o1}"]


def test_the_intent_is_stored_during_a_non_idempotent_call_only(shop) -> None:
    agent_world: list[World] = []
    seen: dict[str, list] = {}

    def intents() -> list:
        state = agent_world[0].graph.graph(INSTANCES)
        return sorted(state.objects(None, HORIS.tool))

    def charge(order: URIRef) -> dict[str, str]:
        seen["charge"] = intents()
        return {"chargeRef": "CH-1"}

    def notify(order: URIRef) -> dict[str, str]:
        seen["notify"] = intents()
        return {"notice": "sent"}

    agent = Agent.from_files(shop / "pay.ttl", tools={"payments.charge": charge,
                                                     "payments.notify": notify})
    agent_world.append(World.from_files(shop / "world.ttl"))
    run = agent.run(agent_world[0], ":Pay", ":o1")
    assert run.status == "completed"
    assert seen == {"charge": [P["t.charge"]], "notify": []}
    assert intents() == []


def test_simply_rerunning_a_killed_run_never_calls_again_nor_piles_up_instances(shop) -> None:
    """A user who reruns `run --all` after a crash, without reading about resume: the running
    instance is continued (its open intent settles as OutcomeUnknown, never a second charge),
    no second instance starts for its focus, and reruns keep one instance per focus: a focus
    whose instance finished is left out (it used to get a new one, blocked here only by the
    charge's precondition)."""
    (shop / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n:o2 a :Order .\n")
    proc = Popen(
        horismos("run", "pay.ttl", "--world", "world.ttl", "--store", "oxigraph:store",
                 "--tools", "payments.py", "--all"),
        cwd=shop, env=environ(shop, "charge-after"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    marker = shop / "at-charge-after"
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ledger(shop) == [f"charge {P.o1}"]

    def rerun(trace: str) -> subprocess.CompletedProcess[str]:  # each its own: never over one
        return horismos_forked(shop, "run", "pay.ttl", "--store", "oxigraph:store", "--tools",
                               "payments.py", "--all", "--trace", trace,
                               env=environ(shop, None), timeout=300)

    first = rerun("rerun.jsonl")
    assert first.returncode == 3, first.stdout + first.stderr  # o1 waits at :Reconcile
    assert "not called again" in first.stdout
    assert ledger(shop) == [f"charge {P.o1}", f"charge {P.o2}", f"notify {P.o2}"]
    replayed = horismos_forked(shop, "replay", "rerun.jsonl", "pay.ttl",
                               env=environ(shop, None), timeout=300)
    assert replayed.stdout.startswith("same"), replayed.stdout + replayed.stderr

    for n in range(2):  # o1 still waits for its operator; o2 is done: nothing new to do
        again = rerun(f"again-{n}.jsonl")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "no instance was run" in again.stderr  # o2 finished: left out, as on sparql:
    assert ledger(shop) == [f"charge {P.o1}", f"charge {P.o2}", f"notify {P.o2}"]
    world = World.open(f"oxigraph:{shop / 'store'}")
    try:
        state = world.graph.graph(INSTANCES)
        per_focus = {o: set(state.subjects(HORIS.focus, o)) for o in (P.o1, P.o2)}
        stale = [s for s in state.subjects(HORIS.tool, None) if str(s).endswith(":intent")]
    finally:
        world.store.close()
    assert len(per_focus[P.o1]) == 1  # the killed instance itself, waiting: never a second
    assert stale == []
    assert len(per_focus[P.o2]) == 1  # the completed one: --all starts no other for its focus


def test_rerunning_a_killed_single_focus_run_continues_its_instance(shop) -> None:
    """The same for a run per event: `run --focus :o1` again finds o1's unfinished instance
    (asked for that focus alone) and settles it; no second charge, no second instance."""
    run_until_killed(shop, "charge-after")
    again = horismos_forked(shop, "run", "pay.ttl", "--store", "oxigraph:store", "--tools",
                            "payments.py", "--focus", ":o1", env=environ(shop, None),
                            timeout=300)
    assert again.returncode == 3, again.stdout + again.stderr  # waits at :Reconcile
    assert "not called again" in again.stdout
    assert ledger(shop) == [f"charge {P.o1}"]
    after = inspect(shop)  # exactly one instance for :o1 (inspect unpacks a single one)
    assert after["status"] == "waiting" and after["intent"] == []


def test_a_run_killed_mid_call_holds_off_a_catalog_call_on_its_subject(shop) -> None:
    """The call found nothing of the killed run's charge in the world and charged again. It
    is refused while the instance's intent is open, and once the instance is continued (the
    step fails with OutcomeUnknown) the charge stays in doubt until it is reconciled."""
    run_until_killed(shop, "charge-after")
    call = ["tools", "call", "t.charge", "pay.ttl", "--store", "oxigraph:store", "--tools",
            "payments.py", "--allow", "ReadOnly,HostStateWrite,ExternalCommit",
            "--args", '{"order": ":o1"}']

    def tools(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(shop, *args, env=environ(shop, None), timeout=300)

    refused = tools(*call)
    assert refused.returncode == 5, refused.stdout + refused.stderr
    assert "is calling t.charge on :o1" in refused.stdout
    assert ledger(shop) == [f"charge {P.o1}"]
    reconcile = ["tools", "reconcile", "t.charge", "pay.ttl", "--store", "oxigraph:store",
                 "--args", '{"order": ":o1"}']
    early = tools(*reconcile)  # the instance still has its call open: continue it first
    assert early.returncode == 2 and "continue the instance" in early.stderr, early.stderr
    assert "Traceback" not in early.stderr

    resumed = resume(shop, "--instance", str(inspect(shop)["instance"]))
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # waits at :Reconcile
    still = tools(*call)
    assert still.returncode == 5 and "may already have acted on :o1" in still.stdout
    assert ledger(shop) == [f"charge {P.o1}"]

    cleared = tools(*reconcile)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert tools(*call).returncode == 0
    assert ledger(shop) == [f"charge {P.o1}", f"charge {P.o1}"]


# Each call takes a while on either side of its act, so a kill lands before, during or after it
CHAOS_PAYMENTS = '''
import os, random, time
from pathlib import Path

LEDGER = Path(os.environ["LEDGER"])

def _act(what):
    with open(LEDGER, "a") as f:
        f.write(what + "\\n")
        f.flush()
        os.fsync(f.fileno())

def charge(order):
    time.sleep(random.uniform(0, 0.15))
    _act(f"charge {order}")
    time.sleep(random.uniform(0, 0.15))
    return {"chargeRef": "CH-1"}

def notify(order):
    return {"notice": "sent"}
'''


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_killed_at_random_moments_and_run_again_each_order_is_charged_once(shop, kind) -> None:
    """``run --all`` killed with SIGKILL at random moments, again and again, then run once to
    its end, then an operator does what the docs say for each order left at :Reconcile: what
    the provider charged is recorded, what it did not is reconciled and charged by a catalog
    call. Every order ends charged exactly once, and none was dropped unsaid."""
    orders = [P[f"o{i}"] for i in range(8)]
    (shop / "world.ttl").write_text(PREFIXES + "".join(f"{o.n3()} a :Order .\n" for o in orders))
    (shop / "payments.py").write_text(CHAOS_PAYMENTS)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(shop, *args, env=environ(shop, None), timeout=300)

    store = ("--store", f"{kind}:store")
    assert cli("load", "world.ttl", *store).returncode == 0
    run_all = horismos("run", "pay.ttl", *store, "--tools", "payments.py", "--all", "-q")
    moments = random.Random(20261204)
    for _ in range(6):  # each killed a moment after a charge acted: before, in or after a call
        before = len(ledger(shop))
        proc = Popen(run_all, cwd=shop, env=environ(shop, None),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(ledger(shop)) == before and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(moments.uniform(0, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    last = cli(*run_all[3:])
    assert last.returncode in (0, 3, 4), last.stdout + last.stderr

    def charges() -> dict[URIRef, int]:
        lines = ledger(shop)
        return {o: lines.count(f"charge {o}") for o in orders}

    assert max(charges().values()) <= 1, charges()
    waiting = json.loads(cli("instances", "pay.ttl", *store, "--status", "waiting",
                             "--format", "json").stdout)
    for inst in waiting:  # each is a call in doubt, left at :Reconcile for its operator
        assert inst["step"] == str(P.Reconcile), inst
        focus = URIRef(inst["focus"])
        args = json.dumps({"order": focus.n3()})
        cleared = cli("tools", "reconcile", "t.charge", "pay.ttl", *store, "--args", args)
        assert cleared.returncode == 0, cleared.stdout + cleared.stderr
        if charges()[focus]:  # the provider has it: record it
            done = cli("resume", "pay.ttl", *store, "--tools", "payments.py", "--instance",
                       inst["instance"], "--facts",
                       PREFIXES + f'{focus.n3()} :chargeRef "checked" .')
        else:  # it never went out: charge it now
            done = cli("tools", "call", "t.charge", "pay.ttl", *store, "--tools", "payments.py",
                       "--args", args)
        assert done.returncode == 0, done.stdout + done.stderr
    assert cli("wake", "pay.ttl", *store, "--tools", "payments.py").returncode == 0

    assert charges() == {o: 1 for o in orders}
    final = json.loads(cli("instances", "pay.ttl", *store, "--format", "json").stdout)
    for o in orders:
        statuses = {i["status"] for i in final if i["focus"] == str(o)}
        assert "completed" in statuses and statuses <= {"completed", "blocked"}, (o, final)


def _unguarded_batch(shop: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Two orders whose charge no precondition guards, in ``shop``: what runs ``horismos run
    pay.ttl`` there with the arguments it is given."""
    pay = (shop / "pay.ttl").read_text()
    guard = " FILTER NOT EXISTS { ?this :chargeRef ?ref }"
    assert guard in pay
    (shop / "pay.ttl").write_text(pay.replace(guard, ""))
    (shop / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n:o2 a :Order .\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(shop, "run", "pay.ttl", "--tools", "payments.py", *args,
                               env=environ(shop, None), timeout=300)

    return run


def test_run_all_again_from_its_own_out_file_starts_no_focus_twice(shop) -> None:
    """A batch kept in files: `run --all --world W --out W2`, then again from W2. The second
    leaves out each order the first finished — it started each anew and, with no
    precondition guarding the charge, charged every order a second time — and `run --focus`
    still starts another instance when asked to."""
    run = _unguarded_batch(shop)
    first = run("--world", "world.ttl", "--all", "--out", "w1.trig")
    assert first.returncode == 0, first.stdout + first.stderr
    charged = [f"charge {P.o1}", f"notify {P.o1}", f"charge {P.o2}", f"notify {P.o2}"]
    assert ledger(shop) == charged
    again = run("--world", "w1.trig", "--all", "--out", "w2.trig")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no instance was run" in again.stderr
    assert ledger(shop) == charged
    on_purpose = run("--world", "w2.trig", "--focus", ":o1")
    assert on_purpose.returncode == 0, on_purpose.stdout + on_purpose.stderr
    assert ledger(shop) == [*charged, f"charge {P.o1}", f"notify {P.o1}"]


def test_run_all_again_from_its_own_out_file_leaves_a_waiting_instance_to_resume(shop) -> None:
    """A batch kept in files whose orders wait after their charge: `run --all` again from its
    `--out` leaves each waiting instance to `resume`, as on a store kept on disk. It started
    each order a new instance, and with no precondition guarding the charge, charged it a
    second time."""
    pay = (shop / "pay.ttl").read_text()
    (shop / "pay.ttl").write_text(pay.replace(
        "    horis:next :Notify ;\n    horis:onError :Reconcile .",
        "    horis:next :Confirm ;\n    horis:onError :Reconcile .\n\n"
        ":Confirm a horis:WaitStep ; horis:reason \"Confirm the shipment.\" ;\n"
        "    horis:wake horis:OperatorInput ; horis:delivery horis:Final ;\n"
        "    horis:until \"?this :shipped true .\" ; horis:next :Notify ."))
    run = _unguarded_batch(shop)
    first = run("--world", "world.ttl", "--all", "--out", "w1.trig")
    assert first.returncode == 3, first.stdout + first.stderr  # both wait at :Confirm
    charged = [f"charge {P.o1}", f"charge {P.o2}"]
    assert ledger(shop) == charged
    again = run("--world", "w1.trig", "--all", "--out", "w2.trig")
    assert "Traceback" not in again.stderr
    assert ledger(shop) == charged, again.stdout + again.stderr
    assert "waiting for `horismos resume`" in again.stderr


def test_run_focus_again_from_its_own_out_file_leaves_a_waiting_instance_to_resume(
        shop) -> None:
    """An order kept in a file, waiting after its charge: `run --focus` again from the run's
    `--out` refuses, naming the instance that waits, as on a store kept on disk (and as
    `run --all` from the file leaves it). It started the order a second instance and charged
    it a second time; a blocked instance so rerun piled up a second blocked record."""
    pay = (shop / "pay.ttl").read_text()
    guard = " FILTER NOT EXISTS { ?this :chargeRef ?ref }"
    assert guard in pay
    (shop / "pay.ttl").write_text(pay.replace(guard, "").replace(
        "    horis:next :Notify ;\n    horis:onError :Reconcile .",
        "    horis:next :Confirm ;\n    horis:onError :Reconcile .\n\n"
        ":Confirm a horis:WaitStep ; horis:reason \"Confirm the shipment.\" ;\n"
        "    horis:wake horis:OperatorInput ; horis:delivery horis:Final ;\n"
        "    horis:until \"?this :shipped true .\" ; horis:next :Notify ."))
    (shop / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(shop, "run", "pay.ttl", "--tools", "payments.py", *args,
                               env=environ(shop, None), timeout=300)

    first = run("--world", "world.ttl", "--focus", ":o1", "--out", "w1.trig")
    assert first.returncode == 3, first.stdout + first.stderr  # it waits at :Confirm
    assert ledger(shop) == [f"charge {P.o1}"]
    again = run("--world", "w1.trig", "--focus", ":o1", "--out", "w2.trig")
    assert again.returncode == 2, again.stdout + again.stderr
    assert "Traceback" not in again.stderr
    assert "has an instance waiting at :Confirm" in again.stderr, again.stderr
    assert ledger(shop) == [f"charge {P.o1}"], again.stdout + again.stderr
