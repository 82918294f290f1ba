"""An approval record in ``--world`` data given beside a persistent store is refused by every
command that takes approvals: ``run``, ``resume``, ``wake`` and ``serve``, as ``tools call``
refused it already.

On a persistent store, the approvals a command counts are the store's record of who approved
what. A resume given ``--world F`` holding a few hand-written triples (the fingerprint is
public) ran a tool nobody approved; a run left F in the store for the next plain resume to
use; serve completed such a call for any client. Each is now refused before anything lands.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from forked import horismos_forked
from rdflib import RDF
from test_tools_store_lanes import digest

from horismos import World
from horismos._policy import fingerprint
from horismos._vocab import HORIS

DEFS = """\
@prefix : <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
:Patient a owl:Class .
:chargeRef a owl:DatatypeProperty .
:t.charge a horis:Tool ;
  horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
  horis:effect [ horis:subject "patient" ;
                 horis:asserts [ horis:property :chargeRef ; horis:type xsd:string ] ] ;
  horis:binding "python:charge" ; horis:requiresApproval true ; horis:idempotent false .
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
  horis:requires "FILTER NOT EXISTS { ?this :chargeRef ?r }" ;
  horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""

TOOLS = ('def charge(patient):\n    open("calls.log", "a").write(patient + "\\n")\n'
         '    return {"chargeRef": "C-1"}\n')

P2 = "http://example.org/clinic#p2"


def forged(instance: str) -> str:
    """The record ``horismos approve`` would write, written by hand."""
    fp = fingerprint("http://example.org/clinic#t.charge", {"patient": P2})
    return f"""\
@prefix horis: <https://w3id.org/horismos#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<urn:x:g> {{ <urn:x:g> prov:wasGeneratedBy <urn:x:a> .
  <urn:x:a> a horis:Approval ; horis:instance <{instance}> ; horis:fingerprint "{fp}" ;
    prov:startedAtTime "2020-01-01T00:00:00+00:00"^^xsd:dateTime . }}
"""


@pytest.fixture(params=["oxigraph", "journal"])
def waiting(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[list[str], str]:
    """``--store S`` holding a run of :Bill on :p2 waiting for approval, and the instance."""
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p2 a :Patient .\n", encoding="utf-8")
    store = ["--store", f"{request.param}:{tmp_path / 'S'}"]
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--tools", "tools.py", *store,
                          "--workflow", ":Bill", "--focus", ":p2", "-q", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr  # waiting for approval
    listed = horismos_forked(tmp_path, "instances", *store, "--format", "json", timeout=120)
    (instance,) = [i["instance"] for i in json.loads(listed.stdout)]
    return store, instance


def test_an_approval_in_world_data_beside_a_store_approves_nothing(
        tmp_path: Path, waiting: tuple[list[str], str]) -> None:
    store, instance = waiting
    (tmp_path / "forged.trig").write_text(forged(instance), encoding="utf-8")
    # a relative IRI first: a scan of its own, parsing without the file's base, stopped there
    (tmp_path / "sneaky.trig").write_text("<rel> <rel2> <rel3> .\n" + forged(instance),
                                         encoding="utf-8")
    before = digest(store, tmp_path)
    tools = ("defs.ttl", "--tools", "tools.py")
    for command in (
        ("resume", *tools, *store, "--world", "forged.trig", "--instance", instance),
        ("resume", *tools, *store, "--world", "sneaky.trig", "--instance", instance),
        ("run", *tools, *store, "--world", "forged.trig", "--all"),
        ("wake", *tools, *store, "--world", "forged.trig"),
        ("serve", *tools, *store, "--world", "forged.trig"),  # stdio: refused before it
        # they only read, and landed F in the store all the same, for the next resume
        ("instances", *store, "--world", "forged.trig"),
        ("validate", "defs.ttl", *store, "--world", "forged.trig"),
    ):
        p = horismos_forked(tmp_path, *command, timeout=120)
        assert p.returncode == 2, (command, p.stdout + p.stderr)
        given = command[command.index("--world") + 1]
        assert f"--world {given}: holds an approval record" in p.stderr, p.stderr
        assert "approvals are issued with `horismos approve" in p.stderr, p.stderr
        assert "Nothing was loaded" in p.stderr and "Traceback" not in p.stderr
        assert digest(store, tmp_path) == before, command  # nothing landed
    assert not (tmp_path / "calls.log").exists()
    # as it is meant: a person approves in the store, and the resume runs the tool once
    fp = fingerprint("http://example.org/clinic#t.charge", {"patient": P2})
    approved = horismos_forked(tmp_path, "approve", "defs.ttl", *store, "--instance", instance,
                               "--fingerprint", fp, timeout=120)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    resumed = horismos_forked(tmp_path, "resume", *tools, *store, "--instance", instance,
                              timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (tmp_path / "calls.log").read_text() == P2 + "\n"


def test_world_data_from_a_pipe_beside_a_store_is_read_once(
        tmp_path: Path, waiting: tuple[list[str], str]) -> None:
    """Scanned for approval records, then loaded, a named pipe was opened twice: its writer
    was gone after the first, and the command waited for another forever."""
    store, _ = waiting
    pipe = tmp_path / "more.ttl"
    os.mkfifo(pipe)
    text = "@prefix : <http://example.org/clinic#> .\n:p3 a :Patient .\n"

    def write() -> None:
        with pipe.open("w", encoding="utf-8") as f:
            f.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    p = horismos_forked(tmp_path, "instances", *store, "--world", "more.ttl", timeout=60)
    writer.join(5)
    assert p.returncode == 0, p.stdout + p.stderr


def test_world_data_naming_an_approval_the_store_holds_approves_nothing(
        tmp_path: Path) -> None:
    """An approval is found by what its node says, so the record need not be forged whole: two
    triples beside the store — ``<an approval given for :p1> horis:instance <the :p2
    instance> ; horis:fingerprint "<:p2's payload>"`` — no ``a horis:Approval`` among them,
    passed the scan, and the resume charged :p2, which nobody approved, with :p1's approval.
    A completed ``tools call`` given them kept them in the store for the next plain resume.
    Now such data is refused like a whole record, and :p1's approval still charges :p1."""
    (tmp_path / "defs.ttl").write_text(DEFS + """
:t.look a horis:Tool ; horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
  horis:binding "python:look" ; horis:sideEffect horis:ReadOnly ; horis:idempotent true .
""", encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS + "def look(patient):\n    return {}\n",
                                       encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p1 a :Patient .\n:p2 a :Patient .\n",
        encoding="utf-8")
    store = ["--store", f"oxigraph:{tmp_path / 'S'}"]
    tools = ("defs.ttl", "--tools", "tools.py")
    assert horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=120).returncode == 0
    ran = horismos_forked(tmp_path, "run", *tools, *store, "--workflow", ":Bill", "--all",
                          "-q", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr  # both wait for approval
    listed = horismos_forked(tmp_path, "instances", *store, "--format", "json", timeout=120)
    by_focus = {i["focus"]: i["instance"] for i in json.loads(listed.stdout)}
    p1, p2 = by_focus[P2.replace("p2", "p1")], by_focus[P2]
    fp1 = fingerprint("http://example.org/clinic#t.charge", {"patient": P2.replace("p2", "p1")})
    approved = horismos_forked(tmp_path, "approve", "defs.ttl", *store, "--instance", p1,
                               "--fingerprint", fp1, timeout=120)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    with World.open(store[1], create=False) as world:
        (node,) = set(world.graph.subjects(RDF.type, HORIS.Approval))
    fp2 = fingerprint("http://example.org/clinic#t.charge", {"patient": P2})
    (tmp_path / "moved.ttl").write_text(
        f'<{node}> <{HORIS.instance}> <{p2}> ; <{HORIS.fingerprint}> "{fp2}" .\n',
        encoding="utf-8")
    (tmp_path / "pointed.trig").write_text(  # a second graph made by it: counted twice
        f"<urn:x:g2> {{ <urn:x:g2> <http://www.w3.org/ns/prov#wasGeneratedBy> <{node}> . }}\n",
        encoding="utf-8")
    before = digest(store, tmp_path)
    for command in (
        ("resume", *tools, *store, "--world", "moved.ttl", "--instance", p2),
        ("run", *tools, *store, "--world", "moved.ttl", "--workflow", ":Bill", "--focus", ":p2"),
        ("tools", "call", "t.look", *tools, *store, "--world", "moved.ttl", "--args",
         '{"patient": ":p1"}'),
        ("instances", *store, "--world", "pointed.trig"),
    ):
        p = horismos_forked(tmp_path, *command, timeout=120)
        assert p.returncode == 2, (command, p.stdout + p.stderr)
        assert "holds an approval record" in p.stderr and "Nothing was loaded" in p.stderr
        assert digest(store, tmp_path) == before, command  # nothing landed
    resumed = horismos_forked(tmp_path, "resume", *tools, *store, "--instance", p2,
                              timeout=120)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # still waiting
    assert not (tmp_path / "calls.log").exists()
    resumed = horismos_forked(tmp_path, "resume", *tools, *store, "--instance", p1,
                              timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (tmp_path / "calls.log").read_text() == P2.replace("p2", "p1") + "\n"


def test_hydrate_beside_a_store_lands_no_approval_record(tmp_path: Path,
                                                          waiting: tuple[list[str], str]) -> None:
    """``hydrate --store S --world F`` loaded F into S first, unchecked, and F stayed there
    though the hydration failed: a hand-written approval in F then let the next plain resume
    charge a patient nobody approved. It is refused as by every command but ``load``."""
    store, instance = waiting
    (tmp_path / "forged.trig").write_text(forged(instance), encoding="utf-8")
    (tmp_path / "adapter.ttl").write_text(
        "@prefix horis: <https://w3id.org/horismos#> .\n"
        '<http://example.org/clinic#ehr> a horis:Adapter ; '
        'horis:baseUrl "http://127.0.0.1:9/fhir" ; horis:grantedScope "system/*.read" .\n',
        encoding="utf-8")
    before = digest(store, tmp_path)
    p = horismos_forked(tmp_path, "hydrate", "adapter.ttl", *store, "--world", "forged.trig",
                        "--id", "Patient/x", timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "holds an approval record" in p.stderr and "Nothing was loaded" in p.stderr
    assert digest(store, tmp_path) == before
    resumed = horismos_forked(tmp_path, "resume", "defs.ttl", "--tools", "tools.py", *store,
                              "--instance", instance, timeout=120)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # still waiting
    assert not (tmp_path / "calls.log").exists()


def test_a_request_for_approval_shows_the_payload_its_fingerprint_approves(
        tmp_path: Path, waiting: tuple[list[str], str]) -> None:
    """``approve`` shows and records the payload the instance's request keeps, and a request
    is a node in the store like any other: a second ``rdfs:comment`` on it, given beside the
    store as ``--world`` data to any command, had ``approve`` say "approved … {"patient":
    ":p1"}" for the fingerprint of the call on :p2, which the resume then made. World data
    saying anything of a request is now refused like an approval record, and ``approve``
    refuses a request whose payload is not its fingerprint's, however the store came by it
    (``horismos load`` writes what an operator gives it)."""
    store, instance = waiting
    fp = fingerprint("http://example.org/clinic#t.charge", {"patient": P2})
    with World.open(store[1], create=False) as world:
        (request,) = {s for s, _, o in world.graph.triples((None, HORIS.fingerprint, None))
                      if str(o) == fp}
    shown = json.dumps({fp: {"patient": P2.replace("p2", "p1")}})
    (tmp_path / "shown.nt").write_text(
        f"<{request}> <http://www.w3.org/2000/01/rdf-schema#comment> {json.dumps(shown)} .\n",
        encoding="utf-8")
    (tmp_path / "later.trig").write_text(f"""\
@prefix horis: <https://w3id.org/horismos#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<urn:horismos:approval:later> {{ <urn:horismos:approval:later> prov:wasGeneratedBy <urn:x:r> .
  <urn:x:r> horis:instance <{instance}> ; horis:step <http://example.org/clinic#Charge> ;
    horis:tool <http://example.org/clinic#t.charge> ; horis:fingerprint "{fp}" ;
    prov:startedAtTime "2999-01-01T00:00:00+00:00"^^xsd:dateTime ;
    rdfs:comment {json.dumps(shown)} . }}
""", encoding="utf-8")
    before = digest(store, tmp_path)
    for given in ("shown.nt", "later.trig"):
        p = horismos_forked(tmp_path, "instances", *store, "--world", given, timeout=120)
        assert p.returncode == 2 and "holds an approval record" in p.stderr, p.stdout + p.stderr
        assert digest(store, tmp_path) == before
    loaded = horismos_forked(tmp_path, "load", "later.trig", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    approved = horismos_forked(tmp_path, "approve", "defs.ttl", *store, "--instance", instance,
                               "--fingerprint", fp, timeout=120)
    assert approved.returncode == 2, approved.stdout + approved.stderr
    assert "which is not that payload's" in approved.stderr, approved.stderr
    assert "approved" not in approved.stdout
