"""Several ``horismos run --all --store sparql:URL`` processes on one real Oxigraph server.

They split the focus nodes through claims kept in the store, no instance runs twice, and
when a worker is killed with SIGKILL another continues its instances once its lease expires.
The tools write a ledger line per call (process id, tool, patient), so a test sees exactly
which process called what.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from forked import Popen, horismos_forked
from in_process import horismos_load
from leave_files import LEAVE_HEAD
from oxigraph_server import OxigraphServer
from rdflib import URIRef
from triage_ward import DEFINITIONS, EHR, held_definitions, instances, ledger, load_ward

from horismos import Agent, UsageError, World, replay
from horismos._claims import Worker

PATIENTS = 24


@pytest.fixture
def ward(tmp_path: Path, server: OxigraphServer) -> Path:
    """A ward of patients loaded into the server with ``horismos load``; the tools beside it."""
    said = load_ward(tmp_path, server.store, PATIENTS)
    assert f"loaded {4 + PATIENTS * 2} quads" in said
    return tmp_path


def worker(ward: Path, store: str, definitions: list[str] = DEFINITIONS,
           **env: str) -> subprocess.Popen[str]:
    return Popen(
        [sys.executable, "-m", "horismos", "run", *definitions, "--all", "--store", store,
         "--tools", str(ward / "ehr_client.py"), "-q"],
        cwd=ward, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)


def values(store: str, prop: str) -> Counter[str]:
    world = World.open(store)
    found = Counter(str(r["p"]) for r in world.store.select(
        f"SELECT ?p ?v WHERE {{ ?p <{EHR}{prop}> ?v }}", {}, {}))
    world.store.close()
    return found


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_two_workers_split_the_patients_and_none_runs_twice(ward, server):
    """Two --all workers on one world: each patient is queued once, by one of them, and both
    do a share. Each call is held until both processes have called (it was held at most 4 s,
    under the 5 s timeout: under load the second could start later, and the first then
    drain the queue alone)."""
    definitions = held_definitions(ward)
    a, b = (worker(ward, server.store, definitions, HOLD_FOR="2") for _ in range(2))
    outs = [p.communicate(timeout=120)[0] for p in (a, b)]

    assert [a.returncode, b.returncode] == [0, 0], outs
    calls = ledger(ward)
    assigned = Counter(patient for _, tool, patient in calls if tool == "assign")
    assert sorted(assigned) == [f"{EHR}p{i:02d}" for i in range(PATIENTS)]
    assert set(assigned.values()) == {1}  # no patient queued twice
    assert {pid for pid, _, _ in calls} == {str(a.pid), str(b.pid)}  # both did a share
    held = instances(server.store)
    assert len(held) == PATIENTS
    assert all(len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held
    assert set(values(server.store, "queueRef").values()) == {1}


def test_a_killed_workers_instances_are_continued_when_its_lease_expires(ward, server):
    lease = {"HORISMOS_LEASE": "1.5"}
    a = worker(ward, server.store, HANG_AT="3", **lease)
    hanging = ward / "hanging"
    deadline = time.monotonic() + 60
    while not hanging.exists():
        assert a.poll() is None and time.monotonic() < deadline, a.communicate()[0]
        time.sleep(0.05)
    hung = hanging.read_text()
    held_by_a = instances(server.store)[hung]
    os.kill(a.pid, signal.SIGKILL)
    a.wait()

    b = worker(ward, server.store, **lease)
    out = b.communicate(timeout=120)[0]

    assert b.returncode == 0, out
    held = instances(server.store)
    assert len(held) == PATIENTS
    assert all(len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held
    assert held[hung][0][0] == held_by_a[0][0]  # A's own instance, continued by B
    calls = ledger(ward)
    assert Counter(p for _, t, p in calls if t == "assign") == Counter(
        {f"{EHR}p{i:02d}": 1 for i in range(PATIENTS)})  # nobody queued twice
    notified = Counter((pid, p) for pid, t, p in calls if t == "notify")
    assert notified[str(a.pid), hung] == 1 and notified[str(b.pid), hung] == 1
    assert set(values(server.store, "queueRef").values()) == {1}
    assert set(values(server.store, "assignedNurse").values()) == {1}
    assert URIRef(hung) in {URIRef(p) for p in values(server.store, "notifiedAt")}


def test_every_workers_trace_replays_same_or_stopped(ward, server):
    """Three workers with traces, one killed mid-call: each trace replays what that worker
    drove — the instances it claimed, and those it continued for the dead one."""
    lease = {"HORISMOS_LEASE": "1.5"}

    def start(n: int, **extra: str) -> subprocess.Popen[str]:
        return Popen(
            [sys.executable, "-m", "horismos", "run", *DEFINITIONS, "--all", "--store",
             server.store, "--tools", str(ward / "ehr_client.py"), "-q",
             "--trace", str(ward / f"w{n}.jsonl")],
            cwd=ward, env={**os.environ, **lease, **extra}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)

    procs = [start(0, HANG_AT="0")]  # hangs in its first notify_nurse call
    hanging = ward / "hanging"
    deadline = time.monotonic() + 60
    while not hanging.exists():
        assert procs[0].poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    procs += [start(1), start(2)]
    os.kill(procs[0].pid, signal.SIGKILL)
    procs[0].wait()
    outs = [p.communicate(timeout=120)[0] for p in procs[1:]]
    assert [p.returncode for p in procs[1:]] == [0, 0], "\n".join(outs)
    held = instances(server.store)
    assert all(len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held

    continued = 0
    for n in range(3):
        trace = ward / f"w{n}.jsonl"
        continued += trace.read_text().count('"continued_at"')
        done = horismos_forked(".", "replay", str(trace), *DEFINITIONS, timeout=120)
        first = done.stdout.split()[0] if done.stdout else ""
        assert first == ("STOPPED" if n == 0 else "same"), done.stdout + done.stderr
    assert continued >= 1  # the dead worker's instance was continued, and replays so


def test_an_instance_a_live_process_drives_is_never_taken_over(ward, server):
    """A single-focus run sits in a slow call when an --all worker starts on the same world:
    the worker leaves that focus to it (its claim is live), so the call is made once and the
    instance completes in the process that started it. The call is held in the tool until
    the worker has queued every other patient (it was a 3 s sleep, which under load ended
    before the worker had started)."""
    definitions, release = held_definitions(ward), ward / "release"
    a = Popen(
        [sys.executable, "-m", "horismos", "run", *definitions, "--focus", f"<{EHR}p00>",
         "--store", server.store, "--tools", str(ward / "ehr_client.py"), "-q"],
        cwd=ward, env={**os.environ, "ASSIGN_UNTIL": str(release), "HORISMOS_LEASE": "1.5"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for(ward / "assigning", a)
    b = worker(ward, server.store, definitions, HORISMOS_LEASE="1.5")
    deadline = time.monotonic() + 60
    while sum(pid == str(b.pid) for pid, tool, _ in ledger(ward) if tool == "assign") < (
            PATIENTS - 1) and b.poll() is None:
        assert time.monotonic() < deadline, "the worker queued not every other patient"
        time.sleep(0.02)
    release.touch()
    out_b = b.communicate(timeout=120)[0]
    out_a = a.communicate(timeout=120)[0]

    assert a.returncode == 0, out_a
    assert b.returncode == 0, out_b
    calls = ledger(ward)
    assert [pid for pid, tool, p in calls if tool == "assign" and p == f"{EHR}p00"] == [
        str(a.pid)]
    held = instances(server.store)
    assert held[f"{EHR}p00"] == [(held[f"{EHR}p00"][0][0], "Completed")]
    assert all(len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held


def test_a_lone_worker_marks_nothing_and_only_an_evicted_owners_claim_waits(ward, server,
                                                                              monkeypatch):
    """A worker that, once its claims landed, sees no other live worker and no other owner of
    them neither waits nor marks them decided: any worker joining later claims on a snapshot
    that holds its claims. It claims a second, larger batch with its first. Beside another
    live worker it marks its claim decided (what keeps two workers apart) and waits no
    settle: it waited 0.2 s a claim, so two one-thread queue workers did half the work of
    one. A claim a worker that is gone still owns waits the settle, for that worker's last
    commit to land; one the --all run finished, and so gave back, does not."""
    from rdflib import RDF

    from horismos import Agent
    from horismos._claims import SETTLE, Worker

    company: list[tuple[bool, bool]] = []  # per verify: (others in the picture, evicted owner)
    decided: list[int] = []  # per decide: how many claims it marked
    slept: list[float] = []
    asked, decide, verify, sleep = Worker._owners, Worker._decide, Worker._verify, asyncio.sleep
    sizes: list[int] = []

    def watched_owners(self, work, claims):
        seen = asked(self, work, claims)
        company.append((seen.company, seen.evicted))
        return seen

    def in_company(worker, focus):  # what a verify of focus would read, asked alone
        from horismos._claims import _claim_iri
        seen = asked(worker, agent.workflow(), {_claim_iri(agent.workflow().iri, focus): focus})
        return seen.company, seen.evicted

    def watched_decide(self, won):
        decided.append(len(won))
        return decide(self, won)

    async def watched(self, workflow, batch, claimed_at, **kw):
        sizes.append(len(batch))
        return await verify(self, workflow, batch, claimed_at, **kw)

    async def watched_sleep(seconds, *args):
        slept.append(seconds)
        return await sleep(seconds, *args)

    monkeypatch.setattr(Worker, "_owners", watched_owners)
    monkeypatch.setattr(Worker, "_decide", watched_decide)
    monkeypatch.setattr(Worker, "_verify", watched)
    monkeypatch.setattr(asyncio, "sleep", watched_sleep)
    monkeypatch.syspath_prepend(str(ward))
    agent = Agent.from_files(*DEFINITIONS, allow_modules=["ehr_client"])
    world = World.open(server.store)
    try:
        run = agent.run(world, all=True)
        lone, lone_decided, lone_slept = list(company), list(decided), list(slept)
        company.clear()
        decided.clear()
        slept.clear()
        new = URIRef(f"{EHR}n0")
        world.store.load([(new, RDF.type, URIRef(f"{EHR}Patient"), None),
                          (new, URIRef(f"{EHR}acuity"), URIRef(f"{EHR}urgent"), None)])
        other = Worker.join(world)  # alive beside the next run, claiming nothing
        try:
            beside = agent.run(world, focus=str(new))
            beside_company, beside_slept = list(company), list(slept)
        finally:
            other.leave()
        # a claim another worker owned and never gave back (its lease gone, as if evicted)
        gone = Worker.join(world)
        gone._claim(agent.workflow(), [URIRef(f"{EHR}p00")], reopen=True)
        gone.leave()  # its lease dropped; the claim it took is not one it holds
        later = Worker.join(world)
        try:
            owned_before = in_company(later, URIRef(f"{EHR}p00"))
            finished_before = in_company(later, URIRef(f"{EHR}p01"))
            slept.clear()
            held = asyncio.run(later._verify(agent.workflow(), [URIRef(f"{EHR}p00")],
                                             later._claim(agent.workflow(),
                                                          [URIRef(f"{EHR}p00")], reopen=True),
                                             reopen=True))
        finally:
            later.leave()
    finally:
        world.store.close()

    assert run.status == "completed"
    assert sorted(str(i.focus) for i in run.instances) == [
        f"{EHR}p{i:02d}" for i in range(PATIENTS)]
    assert sizes[:2] == [8, (PATIENTS - 8) // 2 + 1]
    assert lone and lone == [(False, False)] * len(lone)  # alone at every verify
    assert lone_decided == [] and not [s for s in lone_slept if s >= SETTLE / 2]
    assert beside.status == "completed"
    assert beside_company == [(True, False)] and decided[:1] == [1]  # another alive: marked
    assert not [s for s in beside_slept if s >= SETTLE / 2]  # ... and no settle waited
    assert owned_before == (True, True) and finished_before == (False, False)
    assert held[0] == [URIRef(f"{EHR}p00")] and max(slept) >= SETTLE / 2  # evicted: waited
    assert set(values(server.store, "queueRef").values()) == {1}


def test_a_later_run_all_claims_nothing_an_earlier_one_finished(ward, server, monkeypatch):
    """A second --all over a grown world claims only the new foci: each batch of finished
    ones used to be claimed and waited out for nothing (a settle, 0.2 s, per 8 foci). And a
    finished focus is not refused to run --focus as if a live process held it: a done claim
    means no --all worker drives it again, not that nobody may (it starts another instance,
    here blocked, the patient being queued already)."""
    from rdflib import RDF

    from horismos import Agent
    from horismos._claims import Worker

    claimed: list[str] = []
    verify = Worker._verify

    async def watched(self, workflow, batch, claimed_at, **kw):
        claimed.extend(str(f) for f in batch)
        return await verify(self, workflow, batch, claimed_at, **kw)

    monkeypatch.setattr(Worker, "_verify", watched)
    monkeypatch.syspath_prepend(str(ward))
    agent = Agent.from_files(*DEFINITIONS, allow_modules=["ehr_client"])
    world = World.open(server.store)
    try:
        assert agent.run(world, all=True).status == "completed"
        first = set(claimed)
        claimed.clear()
        new = [URIRef(f"{EHR}n{i}") for i in range(3)]
        world.store.load(
            [
                q
                for n in new
                for q in (
                    (n, RDF.type, URIRef(f"{EHR}Patient"), None),
                    (n, URIRef(f"{EHR}acuity"), URIRef(f"{EHR}urgent"), None),
                )
            ]
        )
        again = agent.run(world, all=True)
        second = list(claimed)
        again_focus = agent.run(world, focus=f"{EHR}p00")
    finally:
        world.store.close()

    assert len(first) == PATIENTS
    assert sorted(second) == sorted(str(n) for n in new)
    assert sorted(str(i.focus) for i in again.instances) == sorted(str(n) for n in new)
    assert again_focus.status == "blocked"  # ran, and stopped at QueuePatient's precondition
    assert "queuedAt" in again_focus.instances[0].blocked_by


def test_two_processes_calling_a_tool_on_one_subject_call_it_once(ward, server):
    """Two `horismos tools call` processes on one shared world ask for the same
    non-idempotent call at once (QueuePatient's tool). One calls it; the other is refused
    while the first holds the patient: the tool acts once, and the world holds one queue
    reference. The first is held in the tool until the other has answered or called too
    (it was a 1 s sleep: under load the second process started after the first had
    finished, and a call made after another has answered is a call of its own)."""
    release = ward / "release"
    call = [sys.executable, "-m", "horismos", "tools", "call", "ehr.assign_queue",
            *held_definitions(ward), "--store", server.store, "--tools",
            str(ward / "ehr_client.py"),
            "--args", f'{{"patient": "<{EHR}p01>", "queue": "<{EHR}routine>"}}']
    env = {**os.environ, "ASSIGN_UNTIL": str(release)}
    procs = [Popen(call, cwd=ward, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    deadline = time.monotonic() + 60
    while all(p.poll() is None for p in procs) and sum(
            tool == "assign" for _, tool, _ in ledger(ward)) < 2:
        assert time.monotonic() < deadline, "neither call answered nor called"
        time.sleep(0.02)
    release.touch()
    outs = [p.communicate(timeout=120)[0] for p in procs]

    assigned = [p for _, tool, p in ledger(ward) if tool == "assign"]
    assert assigned == [f"{EHR}p01"], outs  # called once, by one of them
    assert sorted(p.returncode for p in procs)[0] == 0, outs
    assert values(server.store, "queueRef")[f"{EHR}p01"] == 1
    assert all("Traceback" not in out for out in outs)


def test_a_claim_landing_after_the_settle_never_lets_two_workers_win(server):
    """Two workers claim one focus on the same snapshot, and the server holds one's update up
    past the settle (a busy server): the other claims, waits the settle, reads itself the
    only owner and wins; then the late claim lands, its worker reads both owners, and it is
    the least. Reading the same settled owners was all that kept them apart: it won too, and
    the focus ran twice. A winner now marks its claim decided and reads the others' marks:
    the late one sees the first's mark and stands back."""
    from horismos._claims import CLAIMS, C, _claim_iri

    class Triage:
        iri = URIRef(f"{EHR}Triage")

    focus = URIRef(f"{EHR}p00")
    world = World.open(server.store)
    first, late = sorted((Worker.join(world), Worker.join(world)), key=lambda w: str(w.iri),
                         reverse=True)  # the late one is the least: it wins any tie of reads
    try:
        # the late worker's claim was judged on a snapshot where nobody owned the focus ...
        claim = _claim_iri(Triage.iri, focus)
        won_first = asyncio.run(first._verify(Triage, [focus], first._claim(Triage, [focus])))
        # ... and lands only now, as that update would have
        world.store.update(f"""INSERT DATA {{ GRAPH <{CLAIMS}> {{
            <{claim}> <{C}workflow> <{Triage.iri}> ; <{C}focus> <{focus}> ;
                <{C}worker> <{late.iri}> }} }}""")
        won_late = asyncio.run(late._verify(Triage, [focus], time.monotonic()))
    finally:
        first.leave()
        late.leave()
        world.store.close()

    assert won_first[0] == [focus]
    assert won_late == ([], True)  # it stood back: one worker drives the focus


def test_a_worker_whose_lease_was_evicted_lands_nothing_though_nothing_else_moved(server):
    """Every commit of a worker also expects its own lease. Evicted (its heartbeat stopped
    past the lease, and another worker dropped its ``alive``), a commit whose own guards all
    still hold, since nothing else moved, is refused with LeaseLost and lands nothing. The
    frozen-worker test cannot show the lease's part alone: there the instance's version
    refuses the late commit too."""
    from rdflib import Literal

    from horismos import LeaseLost
    from horismos._claims import CLAIMS, C
    from horismos._stores.base import Change

    world = World.open(server.store)
    worker = Worker.join(world)
    note = URIRef(f"{EHR}note")
    try:
        worker.world.commit(Change(add=[(URIRef(f"{EHR}p00"), note, Literal("alive"), None)]))
        world.store.update(  # what another worker's eviction of a lapsed lease does
            f"DELETE DATA {{ GRAPH <{CLAIMS}> {{ <{worker.iri}> <{C}alive> true }} }}"
        )
        before = world.canonical()
        with pytest.raises(LeaseLost, match="lost its lease"):
            worker.world.commit(
                Change(add=[(URIRef(f"{EHR}p00"), note, Literal("evicted"), None)])
            )
        assert world.canonical() == before
        assert [str(o) for o in world.store.objects(URIRef(f"{EHR}p00"), note)] == ["alive"]
    finally:
        worker.leave()
        world.store.close()


def test_a_hold_landing_after_the_settle_never_lets_two_steps_call(server):
    """Two steps of two processes hold one doubt node (a patient neither run has as its
    focus) on the same snapshot, and one's hold lands past the settle: the first reads itself
    the only holder and calls; the late one then reads both holders, is the least, and
    called too. Now the first marks that it calls before it does, and the late one, reading
    that mark, yields to it."""
    from horismos._intents import held, holding_at, settling_at, yields_to

    node = URIRef("urn:horismos:doubt:charge-p00")
    first_i, late_i = URIRef("urn:horismos:instance:b"), URIRef("urn:horismos:instance:a")
    world = World.open(server.store)
    first, late = Worker.join(world), Worker.join(world)  # each sees the other alive
    long_ago = time.monotonic() - 1  # the settles are over: no waiting here
    try:
        world.store.load([*holding_at(node, first_i), settling_at(node, first_i)])
        first_read = asyncio.run(first.settled_holders([node], long_ago, first_i))
        # the late hold was judged on a snapshot without the first's, and lands only now
        world.store.load([q for q in holding_at(node, late_i) if q != held(node)]
                         + [settling_at(node, late_i)])
        late_read = asyncio.run(late.settled_holders([node], long_ago, late_i))
    finally:
        first.leave()
        late.leave()
        world.store.close()

    assert yields_to(first_read[0], str(first_i)) is None  # it went first, and called
    assert yields_to(late_read[0], str(late_i)) == str(first_i)  # the late one stands back


def test_two_holds_that_tie_stand_back_and_one_takes_the_focus_on_retry(server):
    """Two processes hold one focus (`run --focus`, `resume`) at the same moment: the greater
    worker reads itself the only owner (the other's claim, judged on the same snapshot, lands
    after its read), the least reads both and is the least; both mark their claim decided,
    and each reads the other's mark. Neither may drive the focus then: both stand back. Had
    they kept it, the focus ran twice; had both given up, neither ran and both users were
    told another process drives it. `hold` tries again, apart in time: one holds the focus,
    the other is refused."""
    import threading

    from horismos._claims import CLAIMS, C, _claim_iri
    from horismos._errors import UsageError

    class Triage:
        iri = URIRef(f"{EHR}Triage")

    focus = URIRef(f"{EHR}p00")
    claim = _claim_iri(Triage.iri, focus)
    worlds = [World.open(server.store), World.open(server.store)]
    least, greater = sorted((Worker.join(worlds[0]), Worker.join(worlds[1])),
                            key=lambda w: str(w.iri))
    greater_read = threading.Event()
    marked, read = threading.Barrier(2, timeout=30), threading.Barrier(2, timeout=30)
    first_decisions: dict[str, set] = {}

    def first_owners_read(worker, original):
        def owners(*a, **kw):
            found = original(*a, **kw)
            worker._owners = original  # the first read only
            greater_read.set()
            return found
        return owners

    def late_first_claim(worker, original):
        def claim_late(workflow, batch, **kw):
            worker._claim = original
            # judged on the snapshot where nobody owned the focus, landing after the other's
            # read: an update the server held up
            assert greater_read.wait(30)
            worker.store.update(f"""INSERT DATA {{ GRAPH <{CLAIMS}> {{
                <{claim}> <{C}workflow> <{Triage.iri}> ; <{C}focus> <{focus}> ;
                    <{C}worker> <{worker.iri}> }} }}""")
            return time.monotonic()
        return claim_late

    def marks_read_together(worker, original):
        def decide(won):
            store_select = worker.store.select

            def select(query, *a, **kw):  # both marks land before either is read, and
                worker.store.select = store_select  # both are read before either stands back
                marked.wait()
                rows = store_select(query, *a, **kw)
                read.wait()
                return rows

            worker.store.select = select
            worker._decide = original
            beaten = original(won)
            first_decisions[str(worker.iri)] = beaten
            return beaten
        return decide

    greater._owners = first_owners_read(greater, greater._owners)
    least._claim = late_first_claim(least, least._claim)
    for w in (least, greater):
        w._decide = marks_read_together(w, w._decide)
    outcome: dict[str, str] = {}

    def hold(worker):
        try:
            asyncio.run(worker.hold(Triage, focus))
            outcome[str(worker.iri)] = "holds"
        except UsageError as e:
            outcome[str(worker.iri)] = f"refused: {e}"

    try:
        threads = [threading.Thread(target=hold, args=(w,)) for w in (greater, least)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        owners = {str(r["w"]) for r in worlds[0].store.select(
            f"SELECT ?w WHERE {{ GRAPH <{CLAIMS}> {{ <{claim}> <{C}worker> ?w }} }}", {}, {})}
    finally:
        least.leave()
        greater.leave()
        for world in worlds:
            world.store.close()

    # the tie happened: each stood back from the other's mark
    assert first_decisions == {str(least.iri): {focus}, str(greater.iri): {focus}}
    assert sorted(o.split(":")[0] for o in outcome.values()) == ["holds", "refused"], outcome
    winner = next(w for w, o in outcome.items() if o == "holds")
    assert owners == {winner}  # one process drives the focus
    refused = next(o for o in outcome.values() if o != "holds")
    assert "another live process is driving" in refused


GUARDIAN_DEFS = """@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
:guardian a owl:ObjectProperty .
:ref a owl:DatatypeProperty .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:charge" ;
    horis:idempotent false .
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :ChargeSelf .
:ChargeSelf a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "FILTER NOT EXISTS { ?this :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:next :ChargeGuardian .
:ChargeGuardian a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "?this :guardian ?g . FILTER NOT EXISTS { ?g :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "g" ] .
"""


def _a_late_hold_lands_with(world: World, node: URIRef, by: URIRef) -> None:
    """Have ``world``'s next commit holding ``node`` followed by the hold of ``by`` (a step
    in another process charging it as not its focus), judged on the same snapshot and landing
    just after, and by its mark that it calls: it settled, read itself the only holder, and
    calls now."""
    from horismos._claims import CLAIMS, C
    from horismos._intents import held, holding_at, settling_at

    apply = world.store.apply

    def landing(change):
        delta = apply(change)
        if held(node) in change.add:
            world.store.load([*(q for q in holding_at(node, by) if q != held(node)),
                              settling_at(node, by)])
            world.store.update(
                f"INSERT DATA {{ GRAPH <{CLAIMS}> {{ <{node}> <{C}calling> <{by}> }} }}")
        return delta

    world.store.apply = landing


def _bill(tmp_path: Path, server: OxigraphServer, defs: str):
    """``defs`` over :p1 on the server, with a tool that notes whom it charged: the agent,
    the world, the charges."""
    (tmp_path / "bill.ttl").write_text(defs)
    charged: list[str] = []

    def charge(patient):
        charged.append(str(patient))
        return {"ref": "R-1"}

    agent = Agent.from_files(tmp_path / "bill.ttl", tools={"charge": charge})
    world = World.open(server.store)
    world.store.update("INSERT DATA { <http://example.org/clinic#p1> a "
                       "<http://example.org/clinic#Patient> }")
    return agent, world, charged


def _bill_beside_a_late_hold(tmp_path: Path, server: OxigraphServer):
    """GUARDIAN_DEFS over :p1 on the server, with a tool that notes whom it charged, another
    process alive, and a ward's step's hold on :p1's charge landing late
    (:func:`_a_late_hold_lands_with`): the agent, the world, the charges, the other process."""
    from horismos._stores.base import doubt_node

    ns = "http://example.org/clinic#"
    agent, world, charged = _bill(tmp_path, server, GUARDIAN_DEFS)
    other_process = Worker.join(World.open(server.store))
    _a_late_hold_lands_with(world, doubt_node(URIRef(f"{ns}t.charge"), URIRef(f"{ns}p1")),
                            URIRef("urn:horismos:instance:ward-run"))
    return agent, world, charged, other_process


def test_a_step_on_its_focus_yields_to_a_late_hold_of_a_step_charging_that_focus_elsewhere(
        tmp_path, server):
    """One workflow charges its focus, then the focus's guardian. In another process, the
    run of a ward whose guardian is :p1 holds :p1's charge (not its focus: it settles, reads
    itself the only holder, marks that it calls, calls); its hold was judged on the snapshot
    the run of :p1 judged its own on, and lands just after that one. The run of :p1 relied on
    its claim on :p1 — which the other run does not touch — and called too: :p1 charged
    twice. Its step now settles and reads back as well, sees the other's mark, and yields."""
    ns = "http://example.org/clinic#"
    agent, world, charged, other_process = _bill_beside_a_late_hold(tmp_path, server)
    assert agent.definitions.tools_off_focus == {URIRef(f"{ns}t.charge")}
    try:
        run = agent.run(world, workflow=f"{ns}Bill", focus=f"{ns}p1",
                        trace=tmp_path / "p1.jsonl")
    finally:
        other_process.leave()
        world.store.close()
    assert charged == []  # the ward's run charges :p1; this one did not
    assert run.status == "blocked", run.status
    assert "is calling t.charge" in run.steps[-1].blocked_by
    # who held the node, as the run read it, is in its trace: it replays the same
    report = replay(tmp_path / "p1.jsonl", agent)
    assert not report.diverged, report


def test_a_catalog_call_yields_to_a_late_hold_of_a_step_charging_its_subject(tmp_path, server):
    """A `horismos tools call t.charge` on :p1 while, in another process, a ward's run charges
    :p1 as its guardian (not its focus: it settles, reads back, marks, calls), both holds
    judged on one snapshot, the step's landing just after the call's. The call never read
    back — its claim on :p1 keeps runs *on* :p1 off, not that one — and charged too. Where a
    step may charge a node that is not its focus, the call's hold settles and marks as the
    step's does, and the call, seeing the step's mark, is refused without calling."""
    agent, world, charged, other_process = _bill_beside_a_late_hold(tmp_path, server)
    try:
        result = agent.catalog.call("t.charge", {"patient": ":p1"}, world,
                                    allow=["HostStateWrite"])
    finally:
        other_process.leave()
        world.store.close()
    assert charged == []
    assert result.status == "refused", result
    assert result.error is not None and result.error["kind"] == "outcome_unknown"
    assert "workflow instance" in result.error["message"], result.error


def test_an_approval_a_step_gave_back_on_yielding_is_used_when_the_focus_is_run_again(
        tmp_path, server):
    """On a shared world, a step that needs approval was approved, then yielded its call to
    a ward's step charging the same patient at that moment: it never called, so the approval
    is given back, and the instance is blocked. Run again, the instance goes on (as on a
    store of one process: a rerun continues what was left, it does not start another) and
    the one approval makes the one charge; running again while an instance waits is
    refused, as it is there."""
    from horismos._stores.base import doubt_node

    ns = "http://example.org/clinic#"
    agent, world, charged = _bill(tmp_path, server, GUARDIAN_DEFS.replace(
        "horis:idempotent false .", "horis:idempotent false ; horis:requiresApproval true ."))
    bill = {"workflow": f"{ns}Bill", "focus": f"{ns}p1"}
    try:
        waiting = agent.run(world, **bill)
        assert waiting.status == "waiting"
        with pytest.raises(UsageError, match="running again does not settle a wait"):
            agent.run(world, **bill)
        agent.approve(world, waiting.instance,
                      agent.catalog.approve("t.charge", {"patient": f"{ns}p1"}))
        node = doubt_node(URIRef(f"{ns}t.charge"), URIRef(f"{ns}p1"))
        ward = URIRef("urn:horismos:instance:ward-run")
        other_process, apply = Worker.join(World.open(server.store)), world.store.apply
        _a_late_hold_lands_with(world, node, ward)
        try:
            yielded = agent.resume(world, waiting.instance)
        finally:
            world.store.apply = apply
            other_process.leave()
        assert yielded.status == "blocked" and charged == []
        # the ward's call is over, and charged nobody (its tool failed, say)
        world.store.update(
            f"DELETE WHERE {{ GRAPH <urn:horismos:instances> {{ <{node}> ?p ?o }} }}")
        again = agent.run(world, **bill)
    finally:
        world.store.close()
    assert again.instances[0].instance == waiting.instance  # the same instance went on
    first = again.steps[0]
    assert (str(first.step), first.status) == (f"{ns}ChargeSelf", "completed")
    assert charged == [f"{ns}p1"]  # one approval, one charge, no second approval asked


def test_a_catalog_call_during_a_runs_step_on_its_focus_is_refused(ward, server):
    """A run's instance on p01 is inside the non-idempotent assign_queue when a `horismos
    tools call` asks for the same call on p01 in another process. The call claimed the
    patient under its own work and checked the precondition, which still held: the tool
    acted twice. Now the run's claim on its focus holds the call off (busy); the tool acts
    once and the world holds one queue reference."""
    release = ward / "release"  # the run stays in the tool until the call has answered
    definitions = held_definitions(ward)
    run = Popen(
        [sys.executable, "-m", "horismos", "run", *definitions, "--focus", f"{EHR}p01",
         "--store", server.store, "--tools", str(ward / "ehr_client.py"), "-q"],
        cwd=ward, env={**os.environ, "ASSIGN_UNTIL": str(release)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    _wait_for(ward / "assigning", run)
    call = horismos_forked(ward, "tools", "call", "ehr.assign_queue", *definitions, "--store",
                           server.store, "--tools", str(ward / "ehr_client.py"), "--args",
                           f'{{"patient": "<{EHR}p01>", "queue": "<{EHR}routine>"}}', timeout=120)
    release.touch()
    out = run.communicate(timeout=120)[0]

    assert run.returncode == 0, out
    assert call.returncode != 0 and "busy" in call.stdout + call.stderr, call
    assert [p for _, tool, p in ledger(ward) if tool == "assign"] == [f"{EHR}p01"]
    assert values(server.store, "queueRef")[f"{EHR}p01"] == 1
    assert "Traceback" not in call.stdout + call.stderr + out


def test_a_run_waits_out_a_catalog_call_on_its_focus(ward, server):
    """The other way round: a `tools call` is inside assign_queue for p01 when runs start.
    `run --focus p01` is refused, naming the catalog call; `run --all` leaves p01 until the
    call has finished, then finds it queued (blocked at QueuePatient). The tool acts on p01
    once, and every other patient is queued as usual. The call is held in the tool until
    both runs have started and `--all` has queued another patient of p01's batch: `--all`
    reaches p01 while the call is still in it."""
    release, definitions = ward / "release", held_definitions(ward)
    call = Popen(
        [sys.executable, "-m", "horismos", "tools", "call", "ehr.assign_queue", *definitions,
         "--store", server.store, "--tools", str(ward / "ehr_client.py"),
         "--args", f'{{"patient": "<{EHR}p01>", "queue": "<{EHR}routine>"}}'],
        cwd=ward, env={**os.environ, "ASSIGN_UNTIL": str(release)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    _wait_for(ward / "assigning", call)
    focus_run = Popen(
        [sys.executable, "-m", "horismos", "run", *definitions, "--focus", f"{EHR}p01",
         "--store", server.store, "--tools", str(ward / "ehr_client.py"), "-q"],
        cwd=ward, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    everyone = worker(ward, server.store, definitions)
    deadline = time.monotonic() + 60
    while not any(p == f"{EHR}p00" for _, tool, p in ledger(ward) if tool == "assign"):
        assert everyone.poll() is None and time.monotonic() < deadline, "--all queued no one"
        time.sleep(0.02)
    focus_err = focus_run.communicate(timeout=120)[1]
    release.touch()
    focus = subprocess.CompletedProcess(focus_run.args, focus_run.returncode, "", focus_err)
    outs = [call.communicate(timeout=120)[0], everyone.communicate(timeout=120)[0]]

    assert focus.returncode != 0 and "a catalog call on" in focus.stderr, focus
    assert [call.returncode, everyone.returncode] == [0, 4], outs  # 4: p01 blocked
    assigned = Counter(p for _, tool, p in ledger(ward) if tool == "assign")
    assert assigned == Counter(f"{EHR}p{i:02d}" for i in range(PATIENTS)), assigned
    assert values(server.store, "queueRef")[f"{EHR}p01"] == 1
    p01 = instances(server.store)[f"{EHR}p01"]
    assert [status for _, status in p01] == ["Blocked"], p01
    assert all("Traceback" not in text for text in [*outs, focus.stderr])


ROUNDS_DEFS = """@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdf:   <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a rdfs:Class . :NurseA a rdfs:Class . :NurseB a rdfs:Class .
:covers a rdf:Property . :ref a rdf:Property .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:charge" ;
    horis:timeout "5s" ;
    horis:idempotent false .
:RoundsA a horis:Workflow ; horis:focusType :NurseA ; horis:start :ChargeA .
:ChargeA a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "?this :covers ?p . FILTER NOT EXISTS { ?p :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "p" ] .
:RoundsB a horis:Workflow ; horis:focusType :NurseB ; horis:start :ChargeB .
:ChargeB a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "?this :covers ?p . FILTER NOT EXISTS { ?p :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "p" ] .
"""

# each process runs its own workflow for nurse i of its side at the same moments as the other
ROUNDS_RUN = '''
import sys, time
from pathlib import Path
from horismos import Agent, World
side, store, t0, rounds = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
here = Path(__file__).parent

def charge(patient):
    with open(here / "ledger.txt", "a") as f:
        f.write(f"{side} charge {patient}\\n")
    time.sleep(0.3)
    return {"ref": f"R-{side}"}

agent = Agent.from_files(here / "rounds.ttl", tools={"charge": charge})
world = World.open(store)
if t0 < 0:  # the first round's moment is given once both sides are ready
    print("ready", flush=True)
    t0 = float(sys.stdin.readline())
for i in range(rounds):
    time.sleep(max(0.0, t0 + 0.6 * i - time.time()))
    run = agent.run(world, workflow=f"http://example.org/clinic#Rounds{side}",
                    focus=f"http://example.org/clinic#n{side}{i}", trace=here / f"{side}{i}.jsonl")
    print(i, run.status, flush=True)
'''


def race(tmp_path: Path, server: OxigraphServer, defs: str, script: str, world: list[str],
         rounds: int) -> list[str]:
    """Load ``world`` into the server, run ``script`` as sides A and B in two processes that
    start each round at the same moments, and check each patient was charged once; what
    each side printed."""
    (tmp_path / "rounds.ttl").write_text(defs)
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n" + "\n".join(world) + "\n")
    (tmp_path / "rounds.py").write_text(script)
    horismos_load(tmp_path, server.store, "world.ttl")
    procs = [Popen([sys.executable, "rounds.py", side, server.store, "-1",
                               str(rounds)], cwd=tmp_path, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for side in "AB"]
    ready = [p.stdout.readline() for p in procs]
    assert ready == ["ready\n"] * 2, ready + [p.communicate(timeout=60)[0] for p in procs]
    t0 = time.time() + 0.2  # both sides loaded and their world open: the rounds start
    for p in procs:
        p.stdin.write(f"{t0}\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=180)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    charged = Counter(p for _, _, p in ledger(tmp_path))
    assert charged == Counter({f"http://example.org/clinic#p{i}": 1 for i in range(rounds)}), outs
    return outs


def test_two_workflows_charging_one_patient_at_once_charge_it_once(tmp_path, server):
    """Two processes, each running its own workflow whose step charges a patient that is
    not its focus, at the same moments. Each step's hold on the patient's doubt node was an
    update that Oxigraph judged on a snapshot: both landed, and both charged (7 patients of
    40 charged twice when found). Holds settle now, and the least holder calls; the other
    step is blocked."""
    rounds = 20
    nurses = [f":n{side}{i} a :Nurse{side} ; :covers :p{i} ."
              for i in range(rounds) for side in "AB"]
    patients = [f":p{i} a :Patient ." for i in range(rounds)]
    outs = race(tmp_path, server, ROUNDS_DEFS, ROUNDS_RUN, nurses + patients, rounds)
    one_went_on_each_round(tmp_path, outs, rounds)


def test_a_step_whose_hold_lands_after_another_process_charged_its_node_does_not_charge_it(
        tmp_path, server):
    """Side B's step reads its precondition (:p0 has no :ref yet); before its hold on :p0
    lands, another process (side A, a real process running its own workflow) holds :p0,
    charges it and lets go. B's hold then lands on a node nobody holds, B reads itself the
    only holder, and it charged :p0 a second time on the precondition it read before: what
    the two-workflow race did when its rounds drifted apart on a loaded machine (1 patient
    of 20, 4 races of 10). A step now reads its precondition again once its hold has
    settled, and is blocked."""
    from horismos._intents import held
    from horismos._stores.base import doubt_node

    ns = "http://example.org/clinic#"
    (tmp_path / "rounds.ttl").write_text(ROUNDS_DEFS)
    (tmp_path / "rounds.py").write_text(ROUNDS_RUN)
    world = World.open(server.store)
    world.store.update(f"INSERT DATA {{ <{ns}nA0> a <{ns}NurseA> ; <{ns}covers> <{ns}p0> . "
                       f"<{ns}nB0> a <{ns}NurseB> ; <{ns}covers> <{ns}p0> . "
                       f"<{ns}p0> a <{ns}Patient> }}")
    node = doubt_node(URIRef(f"{ns}t.charge"), URIRef(f"{ns}p0"))
    apply, others = world.store.apply, []

    def landing(change):  # B's hold on :p0, held up until side A has charged it, then landing
        if held(node) in change.add and not others:
            others.append(subprocess.run(
                [sys.executable, "rounds.py", "A", server.store, str(time.time()), "1"],
                cwd=tmp_path, capture_output=True, text=True, timeout=120))
        return apply(change)

    world.store.apply = landing

    def charge(patient):
        with open(tmp_path / "ledger.txt", "a") as f:
            f.write(f"B charge {patient}\n")
        return {"ref": "R-B"}

    agent = Agent.from_files(tmp_path / "rounds.ttl", tools={"charge": charge})
    try:
        run = agent.run(world, workflow=f"{ns}RoundsB", focus=f"{ns}nB0",
                        trace=tmp_path / "B0.jsonl")
    finally:
        world.store.close()

    assert [o.stdout for o in others] == ["0 completed\n"], others
    assert [line.split()[0] for line in (tmp_path / "ledger.txt").read_text().splitlines()] \
        == ["A"]  # charged once, by side A
    assert run.status == "blocked", run.instances[0].steps[-1]
    refs = World.open(server.store)
    assert [str(r["r"]) for r in refs.store.select(
        f"SELECT ?r WHERE {{ <{ns}p0> <{ns}ref> ?r }}", {}, {})] == ["R-A"]
    refs.store.close()
    report = replay(tmp_path / "B0.jsonl",
                    Agent.from_files(tmp_path / "rounds.ttl", tools={"charge": charge}))
    assert not report.diverged, report


def one_went_on_each_round(tmp_path: Path, outs: list[str], rounds: int) -> None:
    """Of the two sides, one completed and the other was blocked each round; who held the
    patient, as each run found it, is in its trace, so each replays the same."""
    statuses = Counter(line.split()[1] for out in outs for line in out.splitlines())
    assert statuses == Counter({"completed": rounds, "blocked": rounds}), outs
    agent = Agent.from_files(tmp_path / "rounds.ttl", tools={"charge": lambda patient: {}})
    for trace in sorted(tmp_path.glob("[AB]*.jsonl")):
        report = replay(trace, agent)
        assert not report.diverged, report


LEAVE_WAIT = LEAVE_HEAD + """\
:Approve a horis:WaitStep ;
    horis:reason "A manager approves the leave request." ;
    horis:wake horis:Timer ; horis:delivery horis:Silent ;
    horis:timeout "1ms" ; horis:onTimeout :Escalate .
:Escalate a horis:WaitStep ;
    horis:reason "Nobody approved in time." ; horis:wake horis:System ;
    horis:delivery horis:Silent .
"""


def test_wake_skips_a_wait_another_process_drives_and_wakes_the_others(tmp_path, server):
    """A cron `horismos wake` on a shared world: one due instance is being driven by another
    live process. It used to stop there with an error, leaving every later due wait asleep."""
    (tmp_path / "leave.ttl").write_text(LEAVE_WAIT)
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/leave#> .\n"
                                        ":req1 a :Request .\n:req2 a :Request .\n")
    common = ["leave.ttl", "--store", server.store]
    for command in (["load", "world.ttl", "--store", server.store], ["run", *common, "--all"]):
        horismos_forked(tmp_path, *command, timeout=120)
    world = World.open(server.store)
    agent = Agent.from_files(tmp_path / "leave.ttl")
    other = Worker.join(world)  # another process, driving req1 right now
    try:
        asyncio.run(other.hold(agent.workflow(), URIRef("http://example.org/leave#req1")))
        woke = horismos_forked(tmp_path, "wake", *common, timeout=120)
    finally:
        other.leave()
    assert woke.returncode == 0, woke.stdout + woke.stderr
    assert ":req2" in woke.stdout and "wait timed out -> :Escalate" in woke.stdout
    assert "skipped: another live process is driving" in woke.stderr
    assert ":req1" not in woke.stdout and "Traceback" not in woke.stderr
    again = horismos_forked(tmp_path, "wake", *common, timeout=120)
    assert ":req1" in again.stdout and "wait timed out -> :Escalate" in again.stdout
    world.store.close()


# the same two sides, each running its own workflow whose step charges its focus, the patient
FOCUS_DEFS = (ROUNDS_DEFS
              .replace("horis:focusType :NurseA", "horis:focusType :Patient")
              .replace("horis:focusType :NurseB", "horis:focusType :Patient")
              .replace('"?this :covers ?p . FILTER NOT EXISTS { ?p :ref ?r }"',
                       '"FILTER NOT EXISTS { ?this :ref ?r }"')
              .replace('horis:var "p"', 'horis:var "this"'))
FOCUS_RUN = ROUNDS_RUN.replace('focus=f"http://example.org/clinic#n{side}{i}"',
                               'focus=f"http://example.org/clinic#p{i}"')


def test_two_workflows_charging_their_common_focus_at_once_charge_it_once(tmp_path, server):
    """Two processes, each running its own workflow on the same patient at the same moments,
    each workflow's step charging its focus. Each run held its own workflow's claim on the
    patient, and a step on its focus relied on that claim: both charged (3 of 4 twenty-round
    races). A tool that steps of several workflows call now settles its hold on the focus
    too, and the least holder calls; the other step is blocked."""
    assert FOCUS_DEFS.count("horis:focusType :Patient") == 2
    assert FOCUS_DEFS.count('horis:var "this"') == 2 and "clinic#p{i}" in FOCUS_RUN
    rounds = 20
    outs = race(tmp_path, server, FOCUS_DEFS, FOCUS_RUN,
                [f":p{i} a :Patient ." for i in range(rounds)], rounds)
    one_went_on_each_round(tmp_path, outs, rounds)


@pytest.mark.parametrize("lease", ["abc", "0", "-3", "inf", "nan", "0.01", "1e9"])
def test_a_mistyped_lease_is_a_usage_error_not_a_traceback(ward, server, lease):
    """``HORISMOS_LEASE`` is read when a worker joins: a value that is not a positive number
    of seconds stops the command with exit 2 saying what to write, before any patient is
    claimed (it was parsed at import: a ``ValueError`` traceback, exit 1)."""
    proc = worker(ward, server.store, HORISMOS_LEASE=lease)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 2, out
    assert "Traceback" not in out
    assert f"HORISMOS_LEASE is {lease!r}: give a number of seconds from 0.1 to" in out
    assert ledger(ward) == []
