"""What the tests of several processes over one shared triage world share: test_workers
(``run --all`` processes on one ``sparql:`` store), test_distributed (Celery workers) and the
worker tests that read its instances. The repository's triage workflow and EHR ontology, the
triage tools (written beside the ward as ehr_client.py) that keep a ledger of every call, a
ward of patients loaded into the store, and what a test reads back: the ledger, and every
instance per patient. test_distributed imported these from test_workers before.
"""

from __future__ import annotations

from pathlib import Path

from in_process import horismos_load

from horismos import World

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
EHR = "http://example.org/ehr#"

# The triage tools, with a ledger; HOLD_FOR makes a process's calls wait until that many
# processes have called (so every worker gets work: a worker of several threads whose first
# call alone waited drained the queue with the others), at most 60 s, under the timeout of
# held_definitions; HANG_AT makes a process hang in its n-th notify_nurse call (so the test
# can kill it mid-step); ASSIGN_UNTIL keeps it in assign_queue until that file appears (at
# most 60 s, under the timeout of held_definitions).
TOOLS = '''
import itertools, os, time
from pathlib import Path

_notified = itertools.count()
HERE = Path(__file__).parent


def _note(tool, patient):
    with open(HERE / "ledger.txt", "a") as f:
        f.write(f"{os.getpid()} {tool} {patient}\\n")


def _hold():
    want = int(os.environ.get("HOLD_FOR", "0"))
    (HERE / f"started.{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while len(list(HERE.glob("started.*"))) < want and time.monotonic() < deadline:
        time.sleep(0.02)


def assign_queue(patient, queue):
    _hold()
    _note("assign", patient)
    if os.environ.get("SLOW_ASSIGN"):
        (HERE / "assigning").write_text(str(patient))
        time.sleep(float(os.environ["SLOW_ASSIGN"]))
    if os.environ.get("ASSIGN_UNTIL"):  # in the call until the test lets it go
        (HERE / "assigning").write_text(str(patient))
        deadline = time.monotonic() + 60
        while not Path(os.environ["ASSIGN_UNTIL"]).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return {"queueRef": f"Q-{str(queue).rsplit('#', 1)[-1].upper()}-{os.getpid()}"}


def notify_nurse(patient, nurse, ref):
    _note("notify", patient)
    if os.environ.get("HANG_AT") and next(_notified) == int(os.environ["HANG_AT"]):
        (HERE / "hanging").write_text(str(patient))
        time.sleep(3600)
    return {"assignedNurse": nurse}
'''


def load_ward(folder: Path, store: str, patients: int) -> str:
    """A ward of ``patients`` (every third urgent) and a nurse on duty, loaded into ``store``
    with ``horismos load`` from ``folder``, the tools beside it: what the load said."""
    lines = ["@prefix : <http://example.org/ehr#> .",
             ":urgent a :AcuityLevel .", ":routine a :AcuityLevel .",
             ":nurse1 a :Nurse ; :onDuty true ."]
    lines += [f":p{i:02d} a :Patient ; :acuity :{'urgent' if i % 3 == 0 else 'routine'} ."
              for i in range(patients)]
    (folder / "ward.ttl").write_text("\n".join(lines) + "\n")
    (folder / "ehr_client.py").write_text(TOOLS)
    return horismos_load(folder, store, "ward.ttl")


def held_definitions(ward: Path) -> list[str]:
    """The triage definitions with assign_queue's timeout past the failsafe of HOLD_FOR and
    ASSIGN_UNTIL, for a test that holds a call in the tool until the other processes have
    reached it: under load they took longer to start than the 5 s timeout allows."""
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    assert text.count('horis:timeout "5s"') == 1  # assign_queue's
    (ward / "triage.ttl").write_text(text.replace('horis:timeout "5s"', 'horis:timeout "90s"'))
    return [str(ward / "triage.ttl"), DEFINITIONS[1]]


def ledger(ward: Path) -> list[tuple[str, str, str]]:
    path = ward / "ledger.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [tuple(line.split()) for line in lines]  # type: ignore[misc]


def instances(store: str) -> dict[str, list[tuple[str, str]]]:
    """Per patient: (instance, status) of every instance the world holds."""
    world = World.open(store)
    rows = world.store.select("""SELECT ?i ?f ?s WHERE { GRAPH <urn:horismos:instances> {
        ?i horis:focus ?f ; horis:status ?s } }""", {}, {"horis": "https://w3id.org/horismos#"})
    out: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        out.setdefault(str(r["f"]), []).append((str(r["i"]), str(r["s"]).rsplit("#")[-1]))
    world.store.close()
    return out
