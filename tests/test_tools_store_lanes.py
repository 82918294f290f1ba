"""The ``tools`` lanes on a persistent store given world data beside it, and the approvals
they take, through the real command line: ``tools call`` and ``tools discover --store S
--world F`` leave S as it was unless a call completes; an approval ``tools approve`` issued
holds only for the tool as it was bound then; ``wake`` tells a binding not reached from one
the policy refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ENGINE, EX, PREFIXES, WARD
from forked import horismos_forked, run
from in_process import horismos_in_process, horismos_load
from listening import free_port, mcp_http_server
from rdflib import RDF
from test_catalog import TRANSFER

from horismos import Agent, World

SERVER = Path(__file__).resolve().parent / "servers" / "mcp_server.py"

TOOLS = TRANSFER + """
:c.discharge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:requiresApproval true ;
    horis:binding "python:discharge" .

:c.fail a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:idempotent true ;
    horis:binding "python:fail" .
"""

LENT = PREFIXES + """
:p9 a :Patient .
:w9 a :Ward ; :capacity 4 .
:p1 a :Patient .
"""
"""World data for one call: :p1 is held by the store already, the others are not."""


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


@pytest.fixture(params=["oxigraph", "journal", "sparql"])
def kept(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """``--store S`` of a store that outlives the process, holding the ward."""
    if request.param == "sparql":
        pool = request.getfixturevalue("oxigraph_pool")
        store = pool.fresh()
    else:
        store = f"{request.param}:{tmp_path / 'store'}"
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store, "ward.ttl")
    yield ["--store", store]
    if request.param == "sparql":
        pool.release()


def project(tmp_path: Path, tools: str = TOOLS) -> list[str]:
    (tmp_path / "defs.ttl").write_text(PREFIXES + tools, encoding="utf-8")
    (tmp_path / "more.ttl").write_text(LENT, encoding="utf-8")
    (tmp_path / "ward_tools.py").write_text(
        "def transfer(patient, ward):\n    open('calls.log', 'a').write(patient + '\\n')\n"
        "    return {'ref': 'R-9'}\n\n"
        "def transfer2(patient, ward):\n    open('calls.log', 'a').write('2 ' + patient + '\\n')\n"
        "    return {'ref': 'R-2'}\n\n"
        "def fail(patient):\n    raise RuntimeError('the ward system said no')\n\n"
        "def discharge(patient):\n    return {}\n\n"
        "def discharge2(patient):\n    return {}\n",
        encoding="utf-8")
    return ["defs.ttl", str(ENGINE / "clinic.ttl"), "--tools", "ward_tools"]


def digest(store: list[str], cwd: Path) -> str:
    p = horismos_in_process(cwd, "digest", *store)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def types_of(store: list[str], node: object) -> set[object]:
    with World.open(store[1], create=False) as world:
        return set(world.store.objects(node, RDF.type))


def test_a_call_refused_or_failed_leaves_the_store_as_it_was(tmp_path: Path, kept) -> None:
    """The --world data was loaded into the store before the call's checks ran, and stayed
    there when the call was refused or failed: a refused call had changed the store. Now it
    is taken back, exactly (a quad the store held before stays), unless the call completes."""
    defs = project(tmp_path)
    before = digest(kept, tmp_path)
    transfer = ("tools", "call", "c.transfer", *defs, *kept, "--world", "more.ttl", "--args",
                '{"patient": ":p9", "ward": ":w9"}')
    for args, code, said in (
            (transfer, 5, "refused (approval)"),
            (("tools", "call", "c.fail", *defs, *kept, "--world", "more.ttl", "--args",
              '{"patient": ":p9"}'), 1, "failed (tool_error)"),
            (("tools", "call", "c.nosuch", *defs, *kept, "--world", "more.ttl", "--args", "{}"),
             2, "c.nosuch")):
        p = horismos(*args, cwd=tmp_path)
        assert p.returncode == code, p.stdout + p.stderr
        assert said in p.stdout + p.stderr and "Traceback" not in p.stderr
        assert digest(kept, tmp_path) == before, args  # the same quads: :p9 was left in it
    assert types_of(kept, EX.p9) == set()
    assert types_of(kept, EX.p1) == {EX.Patient}  # held before, and not taken with the rest
    issued = horismos("tools", "approve", "c.transfer", *defs, *kept, "--args",
                      '{"patient": ":p9", "ward": ":w9"}', cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    done = horismos(*transfer, "--approval", issued.stdout.strip(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert types_of(kept, EX.p9) == {EX.Patient}  # kept with the effects that read it
    assert (tmp_path / "calls.log").read_text() == str(EX.p9) + "\n"
    checked = horismos("digest", *kept, "--check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_discover_on_a_store_writes_nothing_and_counts_no_approval_its_data_brings(
        tmp_path: Path, kept) -> None:
    """`tools discover --store S --world F` loaded F into S for good, and an approval record
    in F counted: a tool needing approval was shown executable on the strength of F."""
    defs = project(tmp_path)
    before = digest(kept, tmp_path)
    found = horismos("tools", "discover", "transfer a patient", *defs, *kept, "--world",
                     "more.ttl", "--focus", ":p9", "--include-blocked", cwd=tmp_path)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "c.transfer" in found.stdout
    assert digest(kept, tmp_path) == before
    assert types_of(kept, EX.p9) == set()
    args = {"patient": str(EX.p9), "ward": str(EX.w9)}
    fp = Agent.from_files(tmp_path / defs[0], defs[1]).catalog.approve("c.transfer", args)
    forged = f"{fp}.forged"
    node = hashlib.sha256(forged.encode()).hexdigest()[:32]
    (tmp_path / "forged.trig").write_text(LENT + f"""
@prefix prov: <http://www.w3.org/ns/prov#> .
<urn:horismos:given:{node}> {{
    <urn:horismos:given:{node}> prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ;
        horis:fingerprint "{fp}" .
}}
""", encoding="utf-8")
    p = horismos("tools", "discover", "transfer a patient", *defs, *kept, "--world",
                 "forged.trig", "--approval", forged, "--format", "json", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr  # 0: c.transfer shown executable
    assert "holds an approval record, and discovery on --store" in p.stderr
    assert "Nothing was loaded" in p.stderr and "Traceback" not in p.stderr
    assert digest(kept, tmp_path) == before


def test_world_data_beside_a_store_is_read_once(tmp_path: Path) -> None:
    """F was parsed twice on `tools call --store S --world F`: once to look for approval
    records, once to load. A named pipe is read once: the second read waited for a writer
    that had gone, and the call never ended."""
    defs = project(tmp_path)
    store = ["--store", "oxigraph:store"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    before = digest(store, tmp_path)
    os.mkfifo(tmp_path / "pipe.ttl")
    writer = subprocess.Popen(["cp", "more.ttl", "pipe.ttl"], cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True)
    try:
        p = horismos("tools", "call", "c.transfer", *defs, *store, "--world", "pipe.ttl",
                     "--args", '{"patient": ":p9", "ward": ":w9"}', cwd=tmp_path)
    finally:
        writer.kill()
        _, written = writer.communicate()
    assert p.returncode == 5 and "refused (approval)" in p.stdout, p.stdout + p.stderr
    assert writer.returncode == 0, written
    assert digest(store, tmp_path) == before


def test_an_approval_issued_on_the_command_line_holds_only_for_the_tool_as_bound(
        tmp_path: Path) -> None:
    """`tools approve` recorded no implementation, so its approval still held once the tool
    was rebound to other code: the call went to a function nobody approved, and discovery
    said the tool was executable."""
    defs = project(tmp_path)
    store = ["--store", "oxigraph:store"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    args = ("--args", '{"patient": ":p1", "ward": ":w1"}')
    issued = horismos("tools", "approve", "c.transfer", *defs, *store, *args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    leave = horismos("tools", "approve", "c.discharge", *defs, *store, "--args",
                     '{"patient": ":p1"}', cwd=tmp_path).stdout.strip()
    discover = ("tools", "discover", "discharge", *defs, *store, "--focus", ":p1",
                "--approval", leave, "--include-blocked", "--format", "json")

    def discharge_blocked() -> list[str]:
        p = horismos(*discover, cwd=tmp_path)
        assert p.returncode in (0, 1), p.stdout + p.stderr
        (found,) = [d for d in json.loads(p.stdout) if d["name"] == "c.discharge"]
        return [b["reason"] for b in found.get("why_blocked", [])]

    assert discharge_blocked() == []
    project(tmp_path, TOOLS.replace('"python:transfer"', '"python:transfer2"').replace(
        '"python:discharge"', '"python:discharge2"'))
    assert discharge_blocked() == ["approval"]
    rebound = horismos("tools", "call", "c.transfer", *defs, *store, *args, "--approval",
                       issued.stdout.strip(), cwd=tmp_path)
    assert rebound.returncode == 5, rebound.stdout + rebound.stderr  # 0: transfer2 called
    assert "refused (approval_stale)" in rebound.stdout
    assert "earlier definition of c.transfer" in rebound.stdout
    assert "approve again: run `horismos tools approve c.transfer" in rebound.stdout
    assert not (tmp_path / "calls.log").exists()
    again = horismos("tools", "approve", "c.transfer", *defs, *store, *args, cwd=tmp_path)
    done = horismos("tools", "call", "c.transfer", *defs, *store, *args, "--approval",
                    again.stdout.strip(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "calls.log").read_text() == f"2 {EX.p1}\n"


WAITING_CALL = """
:clinic a horis:McpServer ; {how} .
:t.echo a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ; horis:asserts [ horis:property :receivedArgs ;
                   horis:key "received" ; horis:type xsd:string ] ] ;
    horis:binding "mcp://clinic/echo" ; horis:idempotent true ; horis:timeout "20s" .
:receivedArgs a owl:DatatypeProperty .
:Later a horis:Workflow ; horis:focusType :Patient ; horis:start :Pause .
:Pause a horis:WaitStep ; horis:reason "a moment" ; horis:wake horis:Timer ;
    horis:delivery horis:Silent ; horis:timeout "1ms" ; horis:onTimeout :Call ;
    horis:next :Call .
:Call a horis:ActionStep ; horis:tool :t.echo ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def stdio(command: str, script: Path) -> str:
    """The declaration of a stdio server: ``command script``."""
    return f'horis:command "{command}" ; horis:args ( "{script.as_posix()}" )'


def declare(tmp_path: Path, how: str) -> None:
    (tmp_path / "defs.ttl").write_text(PREFIXES + WAITING_CALL.format(how=how), encoding="utf-8")


def _waiting(tmp_path: Path, how: str) -> list[str]:
    """An instance waiting on the store, its next step a call to the server ``how`` declares."""
    declare(tmp_path, how)
    (tmp_path / "ward.ttl").write_text(PREFIXES + ":p1 a :Patient .\n", encoding="utf-8")
    store = ["--store", "oxigraph:store"]
    args = ["defs.ttl", str(ENGINE / "clinic.ttl"), *store]
    horismos_load(tmp_path, store[1], "ward.ttl")
    started = horismos("run", *args, "--all", cwd=tmp_path)
    assert started.returncode == 3, started.stdout + started.stderr  # waiting
    time.sleep(0.01)  # past its 1ms timeout
    return args


def statuses(args: list[str], cwd: Path) -> list[str]:
    listed = horismos("instances", *args, "--format", "json", cwd=cwd)
    return [i["status"] for i in json.loads(listed.stdout)]


def test_wake_leaves_an_instance_whose_server_is_down_for_the_next_pass(tmp_path: Path) -> None:
    """Any error before the first step was "blocked, not woken", exit 4: an MCP server down
    for a minute read as a policy refusal a person must see to. It is not woken, said so,
    exits as the error it is in `run` (2), and the next pass wakes it: the HTTP server is
    stopped, then started again on the same port."""
    port = free_port()
    with mcp_http_server(port=port) as url:
        args = _waiting(tmp_path, f'horis:url "{url}"')
    woken = horismos("wake", *args, cwd=tmp_path)
    assert woken.returncode == 2, woken.stdout + woken.stderr  # 4: blocked
    assert "not woken, its binding not reached" in woken.stderr, woken.stderr
    assert "it stays waiting, and the next pass wakes it" in woken.stderr
    assert "blocked" not in woken.stderr and "Traceback" not in woken.stderr
    assert statuses(args, tmp_path) == ["waiting"]
    with mcp_http_server(port=port):
        up = horismos("wake", *args, cwd=tmp_path)
    assert up.returncode == 0, up.stdout + up.stderr
    assert statuses(args, tmp_path) == ["completed"]


@pytest.mark.parametrize(("command", "script", "said"), [
    ("pythn3", SERVER, "no such program: pythn3"),  # a typo in horis:command
    (Path(sys.executable).as_posix(), SERVER.with_name("srever.py"), "srever.py"),  # in args
])
def test_wake_blocks_an_instance_whose_server_is_declared_so_it_cannot_start(
        tmp_path: Path, command: str, script: Path, said: str) -> None:
    """Every error opening the server was "not woken ... the next pass wakes it", exit 2: a
    typo in horis:command (no such program) was retried by every pass, for ever, where a
    person must fix it; and so was a stdio server that exits before its handshake (a typo in
    horis:args, an ImportError, a crash), though its process is started here, not down for a
    while. It is blocked, exit 4, as it was before servers down were told."""
    args = _waiting(tmp_path, stdio(Path(sys.executable).as_posix(), SERVER))
    declare(tmp_path, stdio(command, script))  # mistyped since
    woken = horismos("wake", *args, cwd=tmp_path)
    assert woken.returncode == 4, woken.stdout + woken.stderr  # 2: left for the next pass
    assert "blocked, not woken" in woken.stderr and said in woken.stderr, woken.stderr
    assert "next pass" not in woken.stderr and "Traceback" not in woken.stderr
    assert statuses(args, tmp_path) == ["waiting"]


CLOSE_FAILS = """
import runpy, sys
from horismos._runner import Runner

closes = Runner.aclose

async def aclose(self):  # closed, then raising as an MCP session's close may
    await closes(self)
    raise RuntimeError("the session's close failed")

Runner.aclose = aclose
sys.argv[0] = "horismos"
runpy.run_module("horismos", run_name="__main__")
"""


def test_world_data_stays_with_a_call_whose_commit_landed_though_closing_raised(
        tmp_path: Path) -> None:
    """The data lent was taken back whenever the call raised, though its effects had been
    committed before its bindings were closed: closing raised, and the store kept the call's
    :ref on :p9 while :p9's and :w9's types were gone, the approval used up."""
    defs = project(tmp_path)
    store = ["--store", f"oxigraph:{tmp_path / 'store'}"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    args = ("--args", '{"patient": ":p9", "ward": ":w9"}')
    issued = horismos("tools", "approve", "c.transfer", *defs, *store, *args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    (tmp_path / "close_fails.py").write_text(CLOSE_FAILS, encoding="utf-8")
    p = run([sys.executable, "close_fails.py", "tools", "call", "c.transfer", *defs,
             *store, "--world", "more.ttl", *args, "--approval",
             issued.stdout.strip()], cwd=tmp_path, capture_output=True, text=True,
            timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr  # completed: closing is a note after it
    assert "note: closing the binding of c.transfer failed" in p.stderr, p.stderr
    assert "close failed" in p.stderr and "Traceback" not in p.stderr
    assert (tmp_path / "calls.log").read_text() == str(EX.p9) + "\n"  # the tool acted
    assert types_of(store, EX.p9) == {EX.Patient}  # set(): taken back from under its effect
    assert types_of(store, EX.w9) == {EX.Ward}


def test_the_trace_of_a_refused_call_ends_though_closing_its_bindings_raised(
        tmp_path: Path) -> None:
    """Closing the bindings raised after a refused call, and the trace ended at
    ``refused``: no ``taken_back``, no ``end``, and a Python traceback at the command line.
    The trace ends as any call's does, and the close is a note after the refusal."""
    defs = project(tmp_path)
    store = ["--store", f"oxigraph:{tmp_path / 'store'}"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    before = digest(store, tmp_path)
    (tmp_path / "close_fails.py").write_text(CLOSE_FAILS, encoding="utf-8")
    p = run([sys.executable, "close_fails.py", "tools", "call", "c.transfer", *defs,
             *store, "--world", "more.ttl", "--args",
             '{"patient": ":p9", "ward": ":w9"}', "--trace", "t.jsonl"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL)
    assert p.returncode == 5, p.stdout + p.stderr  # refused (approval), as without the close
    assert "refused (approval)" in p.stdout and "Traceback" not in p.stderr, p.stderr
    assert "note: closing the binding of c.transfer failed after the call ended refused: "\
        "RuntimeError: the session's close failed" in p.stderr, p.stderr
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["header", "refused", "taken_back", "end"]
    assert events[-1]["world_digest"] == before == digest(store, tmp_path)


def test_approve_lends_world_data_as_a_call_does(tmp_path: Path, kept) -> None:
    """`tools approve --store S --world F` loaded F into S for good, approval records and
    all: F is lent for the command, refused if it brings an approval record, and only the
    approval issued stays."""
    defs = project(tmp_path)
    before = digest(kept, tmp_path)
    args = ("--args", '{"patient": ":p9", "ward": ":w9"}')
    (tmp_path / "record.trig").write_text(LENT + """
@prefix prov: <http://www.w3.org/ns/prov#> .
<urn:horismos:given:0> {
    <urn:horismos:given:0> prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ;
        horis:fingerprint "anything" .
}
""", encoding="utf-8")
    p = horismos("tools", "approve", "c.transfer", *defs, *kept, "--world", "record.trig",
                 *args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr  # 0: the record loaded into S for good
    assert "holds an approval record, and approval on --store" in p.stderr  # "a call on"
    assert "Traceback" not in p.stderr
    assert digest(kept, tmp_path) == before
    issued = horismos("tools", "approve", "c.transfer", *defs, *kept, "--world", "more.ttl",
                      *args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stdout + issued.stderr
    assert types_of(kept, EX.p9) == set()  # {:Patient}: F stayed in S
    assert types_of(kept, EX.p1) == {EX.Patient}
    done = horismos("tools", "call", "c.transfer", *defs, *kept, "--world", "more.ttl", *args,
                    "--approval", issued.stdout.strip(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


COMMITS_COUNTED = """
import runpy, sys
from horismos import World

commits = World.commit

def commit(self, change, *args, **kwargs):  # each commit's added quads, one line each
    with open("commits.log", "a") as log:
        log.write(" ".join(sorted(str(q[0]) for q in change.add)) + "\\n")
    return commits(self, change, *args, **kwargs)

World.commit = commit
sys.argv[0] = "horismos"
runpy.run_module("horismos", run_name="__main__")
"""


def test_approve_lends_world_data_only_to_write_it_out(tmp_path: Path) -> None:
    """`tools approve --store S --world F` lent F to S and took it back, two commits of F's
    quads, though nothing read F without --out. F is only read (to refuse an approval record)
    unless --out writes it beside the approval."""
    defs = project(tmp_path)
    store = ["--store", f"oxigraph:{tmp_path / 'store'}"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    (tmp_path / "counted.py").write_text(COMMITS_COUNTED, encoding="utf-8")
    args = ["--args", '{"patient": ":p9", "ward": ":w9"}']

    def approve(*out: str) -> list[str]:
        (tmp_path / "commits.log").unlink(missing_ok=True)
        p = run([sys.executable, "counted.py", "tools", "approve", "c.transfer",
                 *defs, *store, "--world", "more.ttl", *args, *out], cwd=tmp_path,
                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert p.returncode == 0, p.stdout + p.stderr
        return (tmp_path / "commits.log").read_text(encoding="utf-8").splitlines()

    (issued,) = approve()  # 3: F lent, the approval, F taken back
    assert str(EX.w9) not in issued and "urn:horismos:given:" in issued
    lent, _, taken = approve("--out", "approved.trig")
    assert str(EX.w9) in lent and taken == ""  # taken back: removed, nothing added
    assert ":w9 a :Ward" in (tmp_path / "approved.trig").read_text(encoding="utf-8")
    assert types_of(store, EX.w9) == set()


def test_the_trace_of_a_call_refused_says_what_was_lent_and_taken_back(tmp_path: Path) -> None:
    """The trace of a call refused on S with F lent recorded S's digest with F in it, header
    and end alike, and nothing of F being taken back: the store's digest after the command
    was in no trace. The header counts what was lent, and an event says what was taken back
    and the digest after it, which the end repeats; the trace still reads as a call's."""
    defs = project(tmp_path)
    store = ["--store", f"oxigraph:{tmp_path / 'store'}"]
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, store[1], "ward.ttl")
    before = digest(store, tmp_path)
    p = horismos("tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl", "--args",
                 '{"patient": ":p9", "ward": ":w9"}', "--trace", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 5, p.stdout + p.stderr
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["header", "refused", "taken_back", "end"]
    header, _, taken, end = events
    assert header["lent"] == 3  # :p9's type, :w9's type and capacity; :p1 was held already
    assert header["world_digest"] != before  # S with F beside it, as the call read it
    assert taken["quads"] == 3
    assert taken["world_digest"] == end["world_digest"]
    assert end["world_digest"] == before  # S as it was
    shown = horismos("trace", "show", "t.jsonl", cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "with 3 quads of --world lent for the call" in shown.stdout
    assert "taken back: 3 quads lent for the call" in shown.stdout
    replayed = horismos("replay", "t.jsonl", *defs, cwd=tmp_path)
    assert "records a direct tool call" in replayed.stdout + replayed.stderr, replayed.stderr
    assert "Traceback" not in replayed.stderr
