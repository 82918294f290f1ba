"""Chaos for "a non-idempotent action happens at most once": concurrent processes, random kills.

    nice -n 10 python benchmarks/chaos_once.py [--rounds N] [--seed S] [--seconds T]
                                               [--stores oxigraph journal sparql] [--keep DIR]
                                               [--bindings http,mcp-stdio,mcp-http,cmd]

A real HTTP payment server on 127.0.0.1 (a process of its own) records every charge and every
transfer, with its subject, in an fsynced ledger. Two workflows call it: ``:Pay`` charges an
order (``t.charge``, not idempotent, guarded by ``FILTER NOT EXISTS { ?order :paymentRef ?r }``
on the tool, ``horis:onError`` to an operator wait), ``:Move`` sends a transfer
(``t.transfer``, not idempotent, ``horis:requiresApproval true``). Each round starts a fresh
world of three orders and two transfers on each store asked for (``oxigraph:PATH``,
``journal:PATH``, ``sparql:URL`` on a real ``oxigraph serve``), then, in an order drawn from a
seeded RNG, keeps 2–4 OS processes going on overlapping foci: ``run --focus``, ``run
--no-again --focus``, ``run --all``, ``resume``, ``wake``, ``tools call``, ``approve`` (of a
fingerprint some other process's run printed), ``tools reconcile`` by an "operator" who asks
the payment server the truth first, ``serve --run-workflow`` with one or two MCP clients
asking ``run_workflow`` at once (with ``"again": true`` sometimes), one event delivered to
two or three ``run --focus`` at once, one or two ``resume`` at once of each instance an
approval was given for, and on ``sparql:`` ``horismos worker`` processes fed by ``horismos
submit`` over a real ``redis-server`` and processes paused (``SIGSTOP``) for 0.5–4.5 s, past
their lease (``HORISMOS_LEASE=2``) or not: at a random moment, or (one in five) just after
one of their first three commits, where an intent has just landed. Each process is forked
from this one (which imported horismos once: a real process, cheap to start) and is
``kill -9``-ed, with its process group, at a random moment, a random moment after its first
request reached the payment server, or left to finish. On ``oxigraph:``/``journal:`` the
processes queue for the store's lock (``HORISMOS_LOCK_WAIT``).

After the chaos the round settles as the docs tell an operator: every instance left running
is continued (``resume``; on ``sparql:`` after ``HORISMOS_LEASE`` ran out), then checked:

* per subject at most one charge (one transfer) in the ledger;
* every charge in the ledger either landed in the world (its ``:paymentRef`` is the one the
  server answered) or is held in doubt (``instances`` lists it ``in_doubt``) — never lost
  unsaid; and no ``:paymentRef`` without a charge;
* no instance is ``running`` after the resume;
* no transfer without an approval for it, none used twice (one transfer per subject);
* the world opens (``instances`` exits 0).

Then the operator settles every call in doubt, a catalog call's too: what the server made is
recorded in the world first (the waiting instance resumed with it, or loaded), then the call
is cleared with the true verdict (``tools reconcile --verdict``); a ``run --all`` and a
``wake`` follow, and the ledger is checked again: nothing charged twice, every charge landed.
The "operator" also clears one doubt at random during the chaos, once the payment server has
nothing in flight, as a person who checked would.

The tools are bound four ways (``--bindings``, all by default; a round runs each kind asked
for on one store, the stores in turn, so N rounds give each kind N lanes):

* ``http``: the payment server above (``horis:binding "URL/charge"``);
* ``mcp-stdio``: an MCP server written with the SDK (``MCPServer``) that each runtime process
  spawns over stdio; it appends the charge to an fsynced (and ``flock``-ed) ledger of its own,
  which the checks read with the payment server's. Besides the kills of the runtime process
  (its group, and the server's, a session of its own), the server child alone is
  ``kill -9``-ed a random moment after a call reached it: a call it was in the middle of must
  be held in doubt (``instances`` lists it, or ``tools reconcile`` is what clears it), never
  called again nor taken as not sent;
* ``mcp-http``: the same server over streamable HTTP on 127.0.0.1, one process of the chaos's
  own that every runtime process calls, ``kill -9``-ed at random moments of the chaos, or as
  soon as it is making a charge, and started again 0–1.5 s later, on the same port;
* ``cmd``: a ``cmd:`` program (``horis:CommandBinding``) appending to that ledger; the
  program alone is killed (``kill -9``, as the OOM killer would) as the stdio server is, and
  its call must be held in doubt too.

What is in flight (the operator waits for none) is the payment server's count, and for the
others a marker file per call being made by a live process.

Run on 2026-12-07, ``--seconds 5``, one kind a run, three runs at once under ``nice -n 10``
on a 2-core machine shared with other work, the stores in turn: ``mcp-stdio`` 60 lanes
(seeds 21, 31: 752 processes, 280 killed, 10 servers killed alone), ``mcp-http`` 64 (seeds
23, 33: 179 processes killed in the 40 of seed 33, 15 server kills, 7 of them mid-charge),
``cmd`` 80 (seeds 22, 32: 1,076 processes, 394 killed, 3 programs killed alone, 8 kills
mid-charge); no violation. A call whose server or program died under it failed
``OutcomeUnknown`` and was held in doubt; one sent to the HTTP server while it was down,
``not_sent``.

Prints one line per round (``round N store binding: ok`` or the violations, with the log
folder kept) and a summary: lanes per kind and store, processes started, kills, MCP servers
and programs killed (mid-charge), violations. Exit 1 when any was found.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from horismos._cli import main as horismos_main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from shop_files import (  # the Turtle the tests of a charge made once share
    CHARGE_GUARD,
    CHARGE_TOOL,
    GUARDED_PAY,
    ORDER_TERMS,
    TRANSFER_TERMS,
    TRANSFER_TOOL,
    prefixes,
)

NS = "http://example.org/chaos#"
PREFIXES = prefixes(NS)

# the shop of tests/shop_files.py: a charge guarded by the order's reference, a transfer
DEFINITIONS = PREFIXES + ORDER_TERMS + TRANSFER_TERMS + CHARGE_TOOL + CHARGE_GUARD + """\
    CHARGE_BINDING
    horis:timeout "10s" ;
    horis:idempotent false .

""" + TRANSFER_TOOL + """\
    horis:requires "FILTER NOT EXISTS { ?transfer :transferRef ?r }" ;
    TRANSFER_BINDING
    horis:timeout "10s" ;
    horis:requiresApproval true ;
    horis:idempotent false .

""" + GUARDED_PAY + """ ;
    horis:onError :CheckCharge .
:CheckCharge a horis:WaitStep ;
    horis:reason "The charge may have gone through: check with the payment server." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :paymentRef ?r ." .

:Move a horis:Workflow ; horis:focusType :Transfer ; horis:start :Send .
:Send a horis:ActionStep ;
    horis:tool :t.transfer ;
    horis:requires "?this a :Transfer . FILTER NOT EXISTS { ?this :transferRef ?r }" ;
    horis:bind [ horis:arg "transfer" ; horis:var "this" ] ;
    horis:onError :CheckTransfer .
:CheckTransfer a horis:WaitStep ;
    horis:reason "The transfer may have gone through: check with the payment server." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :transferRef ?r ." .
"""

# The payment server: its own process, one thread per request, every act fsynced to the ledger
# before it answers. /charge and /transfer act; /state says what it did and what is in flight.
PAYMENT_SERVER = r'''
import json, os, random, sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

LEDGER = sys.argv[1]
lock = threading.Lock()
state = {"inflight": 0, "n": 0, "pids": {}}

class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        with lock:
            with open(LEDGER) as f:
                lines = f.read().splitlines()
            body = json.dumps({"inflight": state["inflight"], "ledger": lines,
                               "pids": state["pids"]}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        kind = self.path.strip("/")
        data = json.loads(self.rfile.read(int(self.headers["content-length"])))
        subject = data.get("order") or data.get("transfer")
        with lock:
            state["inflight"] += 1
            state["n"] += 1
            state["pids"][self.headers.get("x-pid", "")] = time.time()
            ref = f"{kind[0].upper()}-{state['n']}"
        try:
            time.sleep(random.uniform(0, 0.25))
            with lock:
                with open(LEDGER, "a") as f:
                    f.write(f"{kind} {subject} {ref} {self.headers.get('x-pid', '')}\n")
                    f.flush(); os.fsync(f.fileno())
            time.sleep(random.uniform(0, 0.25))
            field = "paymentRef" if kind == "charge" else "transferRef"
            body = json.dumps({field: ref}).encode()
            self.send_response(200); self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        finally:
            with lock:
                state["inflight"] -= 1

open(LEDGER, "a").close()
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
'''

# What the MCP server and the command program charge with: one act, fsynced to a ledger of
# their own (flock'ed: several processes append), a marker in acting/ while it is under way
# (named by the acting process's pid: a marker of a process killed is not in flight), and
# pids/<runtime pid> holding the pid of the process that acts for it (the stdio server child
# the chaos may kill alone).
LEDGER_LIB = r"""
import fcntl, os, random, time, uuid
HERE = os.path.dirname(os.path.abspath(__file__))

def mark(xpid):
    if xpid:
        with open(os.path.join(HERE, "pids", xpid), "w") as f:
            f.write(str(os.getpid()))

def act(kind, subject, xpid):
    mark(xpid)
    marker = os.path.join(HERE, "acting", f"{os.getpid()}-{uuid.uuid4().hex[:8]}")
    with open(marker, "w") as f:
        f.write(subject)
    try:
        time.sleep(random.uniform(0, 0.25))
        ref = f"{kind[0].upper()}-{uuid.uuid4().hex[:10]}"
        with open(os.path.join(HERE, "ledger-tools.txt"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(f"{kind} {subject} {ref} {xpid}\n")
            f.flush(); os.fsync(f.fileno())
        time.sleep(random.uniform(0, 0.25))
        return ref
    finally:
        os.unlink(marker)
"""

# The payment service as an MCP server (the SDK's MCPServer): over stdio, spawned by each
# runtime process (CHAOS_PID in its environment), or over streamable HTTP (--http PORT),
# a process of the chaos's own that it kills (-9) and starts again; the runtime's pid comes
# in the X-Pid header, noted as the request arrives.
MCP_PAYMENT_SERVER = r"""
import asyncio, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anyio
import chaos_ledger
from mcp.server.mcpserver import MCPServer

server = MCPServer("chaos-pay")
XPID = os.environ.get("CHAOS_PID", "")

@server.tool()
async def charge(order: str) -> dict:
    ref = await anyio.to_thread.run_sync(chaos_ledger.act, "charge", order, XPID)
    return {"paymentRef": ref}

@server.tool()
async def transfer(transfer: str) -> dict:
    ref = await anyio.to_thread.run_sync(chaos_ledger.act, "transfer", transfer, XPID)
    return {"transferRef": ref}

if sys.argv[1:2] == ["--http"]:
    import uvicorn
    app = server.streamable_http_app()

    async def noting(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        first = await receive()
        if b'"tools/call"' in first.get("body", b""):
            xpid = dict(scope["headers"]).get(b"x-pid", b"").decode()
            chaos_ledger.mark(xpid)
        given = iter([first])

        async def again():
            return next(given, None) or await receive()

        await app(scope, again, send)

    uvicorn.run(noting, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
else:
    server.run()
"""

# The payment service as a program (a cmd: binding): charge|transfer -- SUBJECT.
CMD_PAYMENT = r"""
import json, os, sys
import chaos_ledger
kind, subject = sys.argv[1], sys.argv[3]
ref = chaos_ledger.act(kind, subject, os.environ.get("CHAOS_PID", ""))
print(json.dumps({("paymentRef" if kind == "charge" else "transferRef"): ref}))
"""

BINDINGS = ["http", "mcp-stdio", "mcp-http", "cmd"]
PID_ENV = '[ horis:name "CHAOS_PID" ; horis:fromEnv "CHAOS_PID" ]'


def definitions(binding: str, pay_url: str, root: Path, mcp_url: str) -> str:
    """The workflows with both tools bound one way: over HTTP to the payment server, to the
    MCP server (stdio or streamable HTTP), or to the program."""
    if binding == "http":
        tool = ('horis:binding "{pay}/{name}" ;\n'
                '    horis:header [ horis:name "X-Pid" ; horis:fromEnv "CHAOS_PID" ] ;')
        extra = ""
    elif binding.startswith("mcp"):
        tool = 'horis:binding "mcp://bank/{name}" ;'
        extra = (f':bank a horis:McpServer ; horis:command "python" ; horis:args '
                 f'( "{root / "chaos_mcp.py"}" ) ;\n    horis:env {PID_ENV} .\n'
                 if binding == "mcp-stdio" else
                 f':bank a horis:McpServer ; horis:url "{mcp_url}" ;\n'
                 '    horis:header [ horis:name "X-Pid" ; horis:fromEnv "CHAOS_PID" ] .\n')
    else:
        tool = 'horis:binding "cmd:{name}Cmd" ;'
        extra = "".join(
            f':{name}Cmd a horis:CommandBinding ; horis:root "{root}" ;\n'
            f'    horis:argv ( "python" "chaos_cmd.py" "{name}" "--" "{{{arg}}}" ) ;\n'
            f'    horis:env {PID_ENV} .\n'
            for name, arg in (("charge", "order"), ("transfer", "transfer")))
    return (DEFINITIONS.replace("CHARGE_BINDING", tool.format(pay=pay_url, name="charge"))
            .replace("TRANSFER_BINDING", tool.format(pay=pay_url, name="transfer")) + extra)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# An MCP client asking run_workflow, as an agent would (its own forked process).
ALLOW = "ReadOnly,HostStateWrite"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Proc:
    pid: int
    label: str
    out: Path
    started: float
    kill_at: float | None
    deadline: float
    kill_on_call: float | None = None  # seconds after its first tool request reaches the server
    wake_at: float | None = None  # paused (SIGSTOP) until then
    pause_at: int = 0  # stops itself after this commit (CHAOS_PAUSE_AT), 0: never
    server_kill: float | None = None  # its stdio MCP server (program) killed so long after
    # its call reached it
    server_kill_at: float | None = None
    rc: int | None = None
    killed: bool = False


@dataclass
class Lane:
    """One store's world for a round, and what the chaos learnt of it."""

    kind: str
    store: str
    folder: Path
    binding: str
    defs: str
    orders: list[str]
    transfers: list[str]
    approvals: list[tuple[str, str]] = field(default_factory=list)  # (instance, fingerprint)
    approved: Counter[str] = field(default_factory=Counter)  # fingerprint → approve exit 0
    settled: set[str] = field(default_factory=set)  # doubts an operator cleared in the chaos
    serve_port: int | None = None


class Chaos:
    def __init__(self, root: Path, seed: int, kinds: list[str], log: Callable[[str], None],
                 bindings: list[str] | None = None):
        self.root, self.rng, self.kinds, self.log = root, random.Random(seed), kinds, log
        self.bindings = bindings or ["http"]
        self.server_kills = 0
        self.mid_call = 0  # of which the server was making a charge
        self.binding = "http"  # the lane's now
        self.cut: set[str] = set()  # subjects whose call its stdio server died in the middle of
        self.mcp_restarts = 0
        self.procs: list[Proc] = []
        self.started = 0
        self.kills = 0
        self.pauses = 0
        self.held: set[str] = set()  # the subjects of every call held in doubt (world_refs)
        self.violations: list[str] = []
        self.ledger = root / "ledger.txt"
        self.payment = subprocess.Popen(
            [sys.executable, "-c", PAYMENT_SERVER, str(self.ledger)], stdout=subprocess.PIPE,
            stderr=(root / "payment-server.log").open("wb"))
        assert self.payment.stdout is not None
        self.pay_url = f"http://127.0.0.1:{int(self.payment.stdout.readline())}"
        for name, text in (("chaos_ledger.py", LEDGER_LIB), ("chaos_mcp.py", MCP_PAYMENT_SERVER),
                           ("chaos_cmd.py", CMD_PAYMENT)):
            (root / name).write_text(text)
        (root / "acting").mkdir()
        (root / "pids").mkdir()
        (root / "ledger-tools.txt").touch()
        self.mcp: subprocess.Popen[bytes] | None = None
        self.mcp_port = free_port()
        self.mcp_back_at: float | None = None  # killed: started again then
        self.mcp_kill_armed = False  # killed as soon as it is making a charge
        for b in self.bindings:
            (root / f"defs-{b}.ttl").write_text(definitions(
                b, self.pay_url, root, f"http://127.0.0.1:{self.mcp_port}/mcp"))
        if "mcp-http" in self.bindings:
            self.start_mcp()
        self.oxigraph: subprocess.Popen[bytes] | None = None
        self.redis: subprocess.Popen[bytes] | None = None
        if "sparql" in kinds:
            port = free_port()
            ox = Path(sys.executable).parent / "oxigraph"
            self.oxigraph = subprocess.Popen(
                [str(ox if ox.exists() else "oxigraph"), "serve", "--location",
                 str(root / "oxigraph-serve"), "--bind", f"127.0.0.1:{port}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.sparql = f"http://127.0.0.1:{port}"
            for _ in range(400):
                with contextlib.suppress(httpx.HTTPError):
                    httpx.get(self.sparql + "/query", params={"query": "ASK {}"}, timeout=1)
                    break
                time.sleep(0.05)
            if shutil.which("redis-server"):
                rport = free_port()
                (root / "redis").mkdir()
                self.redis = subprocess.Popen(
                    ["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--dir",
                     str(root / "redis"), "--appendonly", "yes", "--save", ""],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self.broker = f"redis://127.0.0.1:{rport}/0"
                time.sleep(0.3)

    # -- the MCP server over streamable HTTP ---------------------------------------------------

    def start_mcp(self, wait: bool = False) -> None:
        """The MCP payment server on its port (again, after a kill); ``wait``: until it
        listens."""
        self.mcp = subprocess.Popen(
            [sys.executable, str(self.root / "chaos_mcp.py"), "--http", str(self.mcp_port)],
            stdout=subprocess.DEVNULL, stderr=(self.root / "mcp-server.log").open("ab"))
        self.mcp_back_at = None
        for _ in range(400 if wait else 0):
            try:
                with socket.create_connection(("127.0.0.1", self.mcp_port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)

    def kill_mcp(self) -> None:
        """``kill -9`` of the MCP server, whatever it is doing; started again a while later."""
        if self.mcp is not None and self.mcp.poll() is None:
            if any((self.root / "acting").glob(f"{self.mcp.pid}-*")):
                self.mid_call += 1
            self.mcp.kill()
            self.mcp.wait()
            self.server_kills += 1
            self.mcp_back_at = time.monotonic() + self.rng.uniform(0, 1.5)

    def mcp_up(self, wait: bool = False) -> None:
        if self.mcp_kill_armed and self.mcp is not None and (wait or any(
                (self.root / "acting").glob(f"{self.mcp.pid}-*"))):
            self.mcp_kill_armed = False
            if not wait:
                self.kill_mcp()
        if self.mcp is not None and self.mcp.poll() is not None and (
                wait or (self.mcp_back_at is not None and time.monotonic() >= self.mcp_back_at)):
            self.mcp_restarts += 1
            self.start_mcp(wait)

    # -- processes ---------------------------------------------------------------------------

    def fork(self, label: str, lane: Lane, body: Callable[[], int], env: dict[str, str],
             kill_after: float | None, limit: float = 90) -> Proc:
        """``body`` in a child process of its own group, stdout/stderr to a file in the lane's
        folder; SIGKILLed ``kill_after`` seconds from now (None: left to finish)."""
        self.started += 1
        out = lane.folder / f"p{self.started:05d}-{label.split()[0]}.log"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child
            rc = 99
            try:
                os.setpgid(0, 0)
                fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.chdir(self.root)
                os.environ.update(env)
                os.environ["CHAOS_PID"] = str(os.getpid())
                if os.environ.get("CHAOS_PAUSE_AT"):
                    _pause_at(int(os.environ["CHAOS_PAUSE_AT"]))
                random.seed()
                print(f"# {label}", flush=True)
                rc = body()
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 2
            except BaseException:
                traceback.print_exc()
                rc = 98
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(rc if isinstance(rc, int) else 97)
        now = time.monotonic()
        proc = Proc(pid, label, out, now, None if kill_after is None else now + kill_after,
                    now + limit)
        self.procs.append(proc)
        return proc

    def reap(self) -> list[Proc]:
        """Processes that ended (or were killed now, their time come)."""
        ended = []
        now = time.monotonic()
        self.mcp_up()
        if any((p.kill_on_call is not None and p.kill_at is None) or p.server_kill is not None
               for p in self.procs):
            pids = self.payment_state()["pids"]
            for p in self.procs:
                if p.kill_on_call is not None and p.kill_at is None and str(p.pid) in pids:
                    p.kill_at = now + p.kill_on_call
                if p.server_kill is not None and str(p.pid) in pids:
                    p.kill_on_call = None
                    p.kill_at = None
                    p.server_kill_at = now + p.server_kill
                    p.server_kill = None
        for p in list(self.procs):
            if p.pause_at and p.wake_at is None and _stopped(p.pid):  # stopped itself
                p.wake_at = now + self.rng.uniform(0.5, 4.5)
                p.pause_at = 0
                self.pauses += 1
            if p.wake_at is not None and now >= p.wake_at:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGCONT)
                p.wake_at = None
            if p.server_kill_at is not None and now >= p.server_kill_at:
                p.server_kill_at = None
                if self.kill_server_of(p):  # the stdio server alone, mid-call or after it
                    self.server_kills += 1
            if p.rc is None and ((p.kill_at is not None and now >= p.kill_at) or now > p.deadline):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                self.kill_server_of(p)  # and the stdio server it spawned, its own group
                p.killed = True
                self.kills += 1
            got, status = os.waitpid(p.pid, os.WNOHANG)
            if got:
                p.rc = os.waitstatus_to_exitcode(status)
                if p.killed or p.rc < 0:
                    with contextlib.suppress(ProcessLookupError):  # what it started, too
                        os.killpg(p.pid, signal.SIGKILL)
                self.procs.remove(p)
                ended.append(p)
                text = p.out.read_text(errors="replace")
                if "Traceback" in text and not p.killed:
                    self.violations.append(f"traceback in {p.out}")
                if p.rc in (97, 98, 99):
                    self.violations.append(f"chaos child failed: {p.out}")
        return ended

    def kill_server_of(self, p: Proc) -> bool:
        """SIGKILL to the process group of the stdio MCP server that last acted for ``p``
        (a session leader: the group is its pid), or to the ``cmd:`` program acting for it
        (the program alone, as the OOM killer would)."""
        if self.binding not in ("mcp-stdio", "cmd"):  # mcp-http's: the server of ours
            return False
        with contextlib.suppress(OSError, ValueError):
            server = int((self.root / "pids" / str(p.pid)).read_text())
            ours = Path(f"/proc/{server}/cmdline").read_bytes()  # not a pid used again
            if server != p.pid and _alive(server) and b"chaos_" in ours:
                for marker in (self.root / "acting").glob(f"{server}-*"):  # mid-call
                    with contextlib.suppress(OSError):
                        self.cut.add(marker.read_text())
                        self.mid_call += 1
                if self.binding == "cmd":
                    os.kill(server, signal.SIGKILL)
                else:
                    os.killpg(server, signal.SIGKILL)
                return True
        return False

    def wait_all(self, kill: bool = False) -> list[Proc]:
        ended = []
        if kill:
            for p in self.procs:
                p.kill_at = time.monotonic()
        while self.procs:
            ended += self.reap()
            time.sleep(0.02)
        return ended

    def cli(self, lane: Lane, *args: str, env: dict[str, str] | None = None,
            kill_after: float | None = None, label: str | None = None,
            limit: float = 90, pausable: bool = True) -> Proc:
        argv = [str(a) for a in args]
        chance = 0.2 if pausable and lane.kind == "sparql" else 0
        pause = self.rng.randint(1, 3) if self.rng.random() < chance else 0
        # at a commit boundary: just after an intent, say
        extra = {**(env or {}), **({"CHAOS_PAUSE_AT": str(pause)} if pause else {})}
        proc = self.fork(label or " ".join(argv[:3]), lane, lambda: horismos_main(argv),
                         self.env(lane, extra), kill_after, limit)
        proc.pause_at = pause
        return proc

    def run_now(self, lane: Lane, *args: str) -> tuple[int, str]:
        """A settling command, run to its end (no kill, no pause)."""
        p = self.cli(lane, *args, pausable=False)
        while p.rc is None:
            self.reap()
            time.sleep(0.02)
        return p.rc, p.out.read_text(errors="replace")

    def env(self, lane: Lane, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {"HORISMOS_LOCK_WAIT": "8", "HORISMOS_LEASE": "2"}
        env.update(extra or {})
        return env

    # -- the world ---------------------------------------------------------------------------

    def new_lane(self, kind: str, n: int, binding: str = "http") -> Lane:
        folder = self.root / f"r{n:04d}-{kind}-{binding}"
        self.binding = binding
        self.cut = set()
        folder.mkdir()
        tag = f"{n}{kind[0]}{binding[0]}{binding[-1]}"  # the ledger is shared
        orders = [f"{NS}o{tag}_{k}" for k in range(3)]
        transfers = [f"{NS}x{tag}_{k}" for k in range(2)]
        world = PREFIXES + "".join(f"<{o}> a :Order .\n" for o in orders) + "".join(
            f"<{x}> a :Transfer .\n" for x in transfers)
        (folder / "world.ttl").write_text(world)
        if kind == "sparql":
            store = f"sparql:{self.sparql}"
            if self.redis is not None and shutil.which("redis-cli"):  # no task of a round before
                subprocess.run(["redis-cli", "-u", self.broker, "FLUSHDB"], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            httpx.post(self.sparql + "/update", content=b"CLEAR ALL",
                       headers={"Content-Type": "application/sparql-update"}).raise_for_status()
        else:
            store = f"{kind}:{folder / 'store'}"
        lane = Lane(kind, store, folder, binding, f"defs-{binding}.ttl", orders, transfers)
        rc, out = self.run_now(lane, "load", str(folder / "world.ttl"), "--store", store)
        if rc != 0:
            raise RuntimeError(f"load failed: {out}")
        return lane

    def payment_state(self) -> dict[str, Any]:
        """What the payment server, the MCP servers and the programs did, and what is in
        flight."""
        st = dict(httpx.get(self.pay_url + "/state", timeout=10).json())
        st["ledger"] += (self.root / "ledger-tools.txt").read_text().splitlines()
        for marker in (self.root / "acting").iterdir():
            if _alive(int(marker.name.split("-")[0])):
                st["inflight"] += 1
        st["pids"].update({f.name: 0 for f in (self.root / "pids").iterdir()})
        return st

    def instances(self, lane: Lane) -> list[dict[str, Any]] | None:
        rc, out = self.run_now(lane, "instances", lane.defs, "--store", lane.store,
                               "--format", "json")
        if rc != 0:
            self.violations.append(f"{lane.kind}: instances exit {rc}: {out[-800:]}")
            return None
        return list(json.loads(out[out.index("\n") + 1:]))

    def world_refs(self, lane: Lane) -> dict[str, list[str]]:
        """Subject → its :paymentRef / :transferRef values, read by a child of its own."""
        dump = lane.folder / f"refs-{self.started}.json"

        def body() -> int:
            from horismos import World
            from horismos._held_doubts import held_doubts
            world = World.open(lane.store)
            try:
                # every call held in doubt, a catalog call's being made too (none runs now)
                held = [str(v).strip("<>") for ds in held_doubts(world.store).values()
                        for d in ds for c in json.loads(d.args) for v in c.values()]
                one = ("{ ?s <" + NS + "paymentRef> ?v } UNION "
                       "{ ?s <" + NS + "transferRef> ?v }")  # in a graph, or loaded by hand
                q = f"SELECT ?s ?v WHERE {{ {{ GRAPH ?g {{ {one} }} }} UNION {one} }}"
                rows = [(str(r["s"]), str(r["v"])) for r in world.store.select(q, {}, {})]
            finally:
                with contextlib.suppress(Exception):
                    world.store.close()
            dump.write_text(json.dumps({"rows": rows, "held": held}))
            return 0

        p = self.fork("refs", lane, body, self.env(lane), None)
        while p.rc is None:
            self.reap()
            time.sleep(0.02)
        if p.rc != 0:
            self.violations.append(f"{lane.kind}: world did not open: {p.out}")
            return {}
        refs: dict[str, list[str]] = {}
        got = json.loads(dump.read_text())
        for s, v in got["rows"]:
            refs.setdefault(s, []).append(v)
        self.held = set(got["held"])
        return refs

    # -- the chaos ---------------------------------------------------------------------------

    def action(self, lane: Lane) -> None:
        rng = self.rng
        dice = rng.random()
        kill = rng.uniform(0.05, 5.0) if dice < 0.35 else None
        on_call = rng.uniform(0, 0.6) if 0.35 <= dice < 0.7 else None
        before = len(self.procs)
        order, transfer = rng.choice(lane.orders), rng.choice(lane.transfers)
        s = ("--store", lane.store)
        choices = ["run", "run", "noagain", "all", "move", "resume", "resume", "wake", "call",
                   "approve", "approve", "reconcile", "serve", "burst"]
        if lane.kind == "sparql":
            choices += ["pause", "pause"]
            if self.redis is not None:
                choices += ["worker", "worker", "submit", "submit"]
        if lane.binding == "mcp-http":
            choices += ["mcpkill", "mcpkill"]
        what = rng.choice(choices)
        if what == "mcpkill":  # the MCP server killed (-9), now or in its next call; back later
            if self.mcp_back_at is None and rng.random() < 0.5:
                self.kill_mcp()
            else:
                self.mcp_kill_armed = True
            return
        if lane.binding in ("mcp-stdio", "cmd") and on_call is not None and rng.random() < 0.5:
            server_kill, on_call = on_call, None  # its server child (program) killed, not it
        else:
            server_kill = None
        if what == "pause":  # a machine asleep, a VM paused: past the lease (2 s) or not
            awake = [p for p in self.procs if p.wake_at is None and not p.label.startswith(
                ("serve", "worker"))]
            if awake:
                p = rng.choice(awake)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGSTOP)
                p.wake_at = time.monotonic() + rng.uniform(0.5, 4.5)
                self.pauses += 1
            return
        if what == "burst":  # one event delivered to several processes at once
            for _ in range(rng.randint(2, 3)):
                flags = rng.choice([[], ["--no-again"]])
                self.cli(lane, "run", lane.defs, "--workflow", ":Pay", *flags, "--focus",
                         order, *s, kill_after=kill if rng.random() < 0.5 else None)
        elif what == "run":
            self.cli(lane, "run", lane.defs, "--workflow", ":Pay", "--focus", order, *s,
                     kill_after=kill)
        elif what == "noagain":
            self.cli(lane, "run", lane.defs, "--workflow", ":Pay", "--no-again", "--focus",
                     order, *s, kill_after=kill)
        elif what == "all":
            self.cli(lane, "run", lane.defs, "--workflow", ":Pay", "--all", *s, kill_after=kill)
        elif what == "move":
            self.cli(lane, "run", lane.defs, "--workflow", ":Move", "--focus", transfer, *s,
                     kill_after=kill)
        elif what == "wake":
            self.cli(lane, "wake", lane.defs, *s, kill_after=kill)
        elif what == "call":
            self.cli(lane, "tools", "call", "t.charge", lane.defs, *s, "--args",
                     json.dumps({"order": order}), kill_after=kill)
        elif what == "resume":
            self.fork("resume", lane, lambda: self._resume_one(lane), self.env(lane), kill)
        elif what == "approve":
            if not lane.approvals:
                self.cli(lane, "run", lane.defs, "--workflow", ":Move", "--focus", transfer,
                         *s, kill_after=kill)
            else:
                iid, fp = rng.choice(lane.approvals)
                p = self.cli(lane, "approve", lane.defs, *s, "--instance", iid,
                             "--fingerprint", fp, "--operator", "chaos", kill_after=kill,
                             label=f"approve {fp}")
                p.label = f"approve {fp}"
        elif what == "reconcile":
            self.fork("reconcile", lane, lambda: self._operator(lane, one=True),
                      self.env(lane), kill)
        elif what == "serve":
            self.serve(lane, kill)
        elif what == "worker":
            # a long-lived process: killed at a random moment, or once a call of its reached
            # the payment server (else at the end of its life), or at the end of its life
            life = rng.uniform(3, 9)
            self.cli(lane, "worker", lane.defs, *s, "--broker", self.broker, "--concurrency",
                     str(rng.choice([1, 2])), "--visibility-timeout", "3", "-v",
                     kill_after=kill if kill is not None or on_call is None else None,
                     limit=life)
        elif what == "submit":
            target = ["--all"] if rng.random() < 0.4 else ["--focus", order]
            self.cli(lane, "submit", lane.defs, *s, "--broker", self.broker, "--workflow",
                     ":Pay", *target, kill_after=kill)
        for p in self.procs[before:]:
            if p.kill_at is None and on_call is not None:
                p.kill_on_call = on_call
            if server_kill is not None:
                p.server_kill = server_kill

    def serve(self, lane: Lane, kill: float | None) -> None:
        port = free_port()
        life = (kill + 2) * 2 if kill is not None else self.rng.uniform(6, 14)
        # killed at the end of its life, or before once a call of its reached the server
        # (the caller sets kill_on_call on it, as on every process it started)
        self.cli(lane, "serve", lane.defs, "--store", lane.store, "--run-workflow",
                 "--transport", "http", "--port", str(port), label="serve http", limit=life)
        for _ in range(self.rng.choice([1, 2])):
            focus = self.rng.choice(lane.orders + lane.transfers)
            again = self.rng.random() < 0.3
            self.fork("client", lane, lambda f=focus, a=again: _ask_run_workflow(port, f, a),
                      self.env(lane), self.rng.uniform(0.5, 8) if self.rng.random() < 0.3
                      else None)

    def _resume_one(self, lane: Lane) -> int:
        from horismos import UsageError, World
        try:
            world = World.open(lane.store)
        except UsageError as e:  # another process holds the store: as the CLI says it
            print(f"resume: {e}")
            return 2
        try:
            found = [i for i in world.instances() if i.status in ("running", "waiting")]
        finally:
            with contextlib.suppress(Exception):
                world.store.close()
        if not found:
            return 0
        inst = random.choice(found)
        return horismos_main(["resume", lane.defs, "--store", lane.store, "--instance",
                              str(inst.instance)])

    def _operator(self, lane: Lane, one: bool) -> int:
        """Settle calls in doubt as a careful operator does: ask the payment server what it
        did (with nothing in flight); what it made is recorded in the world first (the
        instance resumed with it, or loaded), then the call is cleared with that verdict, so
        nothing can charge in between; what it did not make is cleared ``not-acted``, and an
        order's charge then made by hand (``tools call``).
        ``one``: a random one of the instances' doubts, while other processes run; else every
        doubt, a catalog call's too (nothing else runs then)."""
        rows = self.instances_direct(lane)
        doubts: list[tuple[str, dict[str, Any] | None]] = [  # a catalog call's row: below
            (r["focus"], r) for r in rows if r.get("in_doubt") and not r.get("catalog_call")]
        if one and doubts:
            doubts = [random.choice(doubts)]
        elif not one:
            seen = {f for f, _ in doubts}
            doubts += [(f, None) for f in sorted(_held_subjects(lane.store) - seen)]
        for focus, row in doubts:
            for _ in range(400):
                st = self.payment_state()
                if st["inflight"] == 0:
                    break
                time.sleep(0.05)
            else:
                print("payment server busy for ever")
                return 3
            is_order = "#o" in focus
            tool, arg, prop = (("t.charge", "order", "paymentRef") if is_order
                               else ("t.transfer", "transfer", "transferRef"))
            kind = "charge" if is_order else "transfer"
            made = [ln.split()[2] for ln in st["ledger"] if ln.split()[:2] == [kind, focus]]
            print(f"doubt on {focus} ({'instance' if row else 'catalog call'}): "
                  f"ledger says {made}", flush=True)
            fact = f'<{focus}> <{NS}{prop}> "{made[0]}" .' if made else ""
            if made and row is not None and row["status"] == "waiting":
                rc = horismos_main(["resume", lane.defs, "--store", lane.store, "--instance",
                                    row["instance"], "--facts", fact])
                print(f"resume with facts -> {rc}", flush=True)
            elif made:
                facts = lane.folder / f"fact-{os.getpid()}.ttl"
                facts.write_text(fact + "\n")
                rc = horismos_main(["load", str(facts), "--store", lane.store])
                print(f"load fact -> {rc}", flush=True)
            rc = horismos_main(["tools", "reconcile", tool, lane.defs, "--store", lane.store,
                                "--args", json.dumps({arg: focus}), "--operator", "chaos",
                                "--verdict", "acted" if made else "not-acted"])
            print(f"reconcile -> {rc}", flush=True)
            if rc == 0 and not made and is_order:  # the charge the provider never got: made
                rc = horismos_main(["tools", "call", tool, lane.defs, "--store", lane.store,
                                    "--args", json.dumps({arg: focus})])
                print(f"charged by hand -> {rc}", flush=True)
        return 0

    def instances_direct(self, lane: Lane) -> list[dict[str, Any]]:
        """``instances --format json`` in this (child) process."""
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            horismos_main(["instances", lane.defs, "--store", lane.store, "--format", "json"])
        return list(json.loads(buf.getvalue() or "[]"))

    def harvest(self, lane: Lane, ended: list[Proc]) -> None:
        """Learn what the ended processes printed: approval requests, and approvals given."""
        for p in ended:
            text = p.out.read_text(errors="replace")
            for m in re.finditer(r"--instance (urn:horismos:instance:\S+) --fingerprint (\w+)",
                                 text):
                if (m[1], m[2]) not in lane.approvals:
                    lane.approvals.append((m[1], m[2]))
            if p.label.startswith("reconcile"):
                lane.settled.update(re.findall(r"^doubt on (\S+)", text, re.M))
            if p.label.startswith("approve ") and p.rc == 0:
                lane.approved[p.label.split()[1]] += 1
                # the approval used by other processes: one or two resumes at once, maybe killed
                iid = next(i for i, f in lane.approvals if f == p.label.split()[1])
                for _ in range(self.rng.randint(1, 2)):
                    self.cli(lane, "resume", lane.defs, "--store", lane.store, "--instance",
                             iid, kill_after=self.rng.uniform(0.05, 4)
                             if self.rng.random() < 0.4 else None)

    def chaos(self, lane: Lane, seconds: float) -> None:
        end = time.monotonic() + seconds
        width = self.rng.randint(2, 4)
        while time.monotonic() < end:
            self.harvest(lane, self.reap())
            if len(self.procs) < width:
                self.action(lane)
                time.sleep(self.rng.uniform(0, 0.6))
            time.sleep(0.05)
        self.harvest(lane, self.wait_all())
        while self.procs:  # the resumes an approval given last started
            self.harvest(lane, self.wait_all())

    # -- settling and checking ---------------------------------------------------------------

    def settle_and_check(self, lane: Lane, n: int) -> list[str]:
        found: list[str] = []
        self.mcp_up(wait=True)
        if lane.kind == "sparql":
            time.sleep(2.5)  # the killed processes' leases run out
        rows = self.instances(lane)
        if rows is None:
            return [f"{lane.kind}: world does not open"]
        for r in rows:
            if r["status"] == "running":  # what `instances` tells the operator to do
                again = (("run", lane.defs, "--workflow", r["workflow"], "--focus", r["focus"])
                         if lane.kind == "sparql" else
                         ("resume", lane.defs, "--instance", r["instance"]))
                rc, out = self.run_now(lane, *again, "--store", lane.store)
                if rc not in (0, 1, 3, 4):
                    found.append(f"resume of running {r['instance']} exit {rc}: {out[-600:]}")
        rows = self.instances(lane) or []
        for r in rows:
            if r["status"] == "running":
                found.append(f"instance {r['instance']} still running after resume: {r}")
        st = self.payment_state()
        lines = [ln.split() for ln in st["ledger"]]
        mine = [ln for ln in lines if ln[1] in lane.orders or ln[1] in lane.transfers]
        per = Counter((ln[0], ln[1]) for ln in mine)
        for (kind, subject), c in per.items():
            if c > 1:
                found.append(f"{kind} {subject} made {c} times: "
                             f"{[ln for ln in mine if ln[1] == subject]}")
        refs = self.world_refs(lane)
        doubted = {r["focus"] for r in rows if r.get("in_doubt") or str(r.get("why") or "")
                   .startswith("its approved call of")} | self.held  # listed as made
        for ln in mine:
            kind, subject, ref = ln[0], ln[1], ln[2]
            if ref in refs.get(subject, []):
                continue
            if subject in doubted:
                continue
            found.append(f"{kind} {subject} ({ref}) neither landed (world has "
                         f"{refs.get(subject)}) nor held in doubt")
        for subject in sorted(self.cut - doubted - lane.settled):
            found.append(f"{subject}: its call cut short by a kill of its stdio MCP server "
                         "is not held in doubt")
        made = {(ln[1]) for ln in mine}
        for subject, vals in refs.items():
            if subject not in made:
                found.append(f"{subject} holds {vals} but the server made nothing for it")
        transfers = Counter(ln[1] for ln in mine if ln[0] == "transfer")
        if sum(transfers.values()) > sum(lane.approved.values()):
            found.append(f"{sum(transfers.values())} transfers for "
                         f"{sum(lane.approved.values())} approvals given")
        # the operator settles every doubt; nothing more may be charged twice
        p = self.fork("operator", lane, lambda: self._operator(lane, one=False),
                      self.env(lane), None)
        while p.rc is None:
            self.reap()
            time.sleep(0.02)
        self.run_now(lane, "run", lane.defs, "--workflow", ":Pay", "--all", "--store",
                     lane.store)
        self.run_now(lane, "wake", lane.defs, "--store", lane.store)
        st = self.payment_state()
        mine = [ln.split() for ln in st["ledger"]]
        mine = [ln for ln in mine if ln[1] in lane.orders or ln[1] in lane.transfers]
        for (kind, subject), c in Counter((ln[0], ln[1]) for ln in mine).items():
            if c > 1 and per[(kind, subject)] <= 1:
                found.append(f"after settling: {kind} {subject} made {c} times")
        refs = self.world_refs(lane)
        for o in lane.orders:
            charged = [ln[2] for ln in mine if ln[:2] == ["charge", o]]
            if charged and not set(charged) & set(refs.get(o, [])):
                found.append(f"after settling: {o} charged {charged}, world has {refs.get(o)}")
        return [f"round {n} {lane.kind}: {v}" for v in found]

    def close(self) -> None:
        self.wait_all(kill=True)
        for p in (self.payment, self.oxigraph, self.redis, self.mcp):
            if p is not None:
                p.kill()
                p.wait()


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (Linux's /proc; elsewhere never seen so)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


def _pause_at(nth: int) -> None:
    """Stop this process (SIGSTOP) just after its ``nth`` commit on ``sparql:`` landed, as a
    machine put to sleep there would be; the chaos wakes it (SIGCONT) a while later."""
    from horismos._stores.sparql import SparqlStore

    applied = [0]
    apply = SparqlStore.apply

    def paused(self: Any, change: Any) -> Any:
        digest = apply(self, change)
        applied[0] += 1
        if applied[0] == nth:
            os.kill(os.getpid(), signal.SIGSTOP)
        return digest

    SparqlStore.apply = paused  # type: ignore[method-assign]


def _held_subjects(store: str) -> set[str]:
    """The subjects of every call held in doubt in ``store``, a catalog call's too, read when
    no other process runs (one marked being made, ``in_flight``, was killed mid-call)."""
    from horismos import World
    from horismos._held_doubts import held_doubts
    world = World.open(store)
    try:
        return {str(v).strip("<>") for ds in held_doubts(world.store).values()
                for d in ds for c in json.loads(d.args) for v in c.values()}
    finally:
        with contextlib.suppress(Exception):
            world.store.close()


def _ask_run_workflow(port: int, focus: str, again: bool) -> int:
    """An agent asking ``run_workflow`` over streamable HTTP, waiting for the server first."""
    import asyncio

    from mcp import Client

    async def ask() -> None:
        async with Client(f"http://127.0.0.1:{port}/mcp", cache=None) as client:
            flow = "Pay" if "#o" in focus else "Move"
            args: dict[str, Any] = {"workflow": NS + flow, "focus": focus}
            if again:
                args["again"] = True
            res = await client.call_tool("run_workflow", args)
            print(json.dumps(res.structured_content)[:2000])

    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.05)
    else:
        print("server never listened")
        return 0
    try:
        asyncio.run(ask())
    except BaseException as e:  # the server killed under it: what an agent sees
        print(f"client: {type(e).__name__}: {e}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--stores", nargs="+", default=["oxigraph", "journal", "sparql"],
                    choices=["oxigraph", "journal", "sparql"])
    ap.add_argument("--bindings", default=",".join(BINDINGS),
                    help="how the tools are bound, comma-separated, each a lane a round: "
                         + ", ".join(BINDINGS))
    ap.add_argument("--seconds", type=float, default=8, help="chaos time a round")
    ap.add_argument("--keep", type=Path, help="keep the logs and stores here")
    a = ap.parse_args()
    bindings = [b for b in a.bindings.split(",") if b]
    if not bindings or set(bindings) - set(BINDINGS):
        ap.error(f"--bindings: a comma-separated list of {', '.join(BINDINGS)}")
    # stopped by a signal (a background job ignores Ctrl-C's), it still ends what it started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    root = Path(tempfile.mkdtemp(prefix="chaos-once-", dir=a.keep))
    chaos = Chaos(root, a.seed, a.stores, print, bindings)
    total: list[str] = []
    lanes: Counter[str] = Counter()
    try:
        for n in range(a.rounds):
            for b, binding in enumerate(bindings):
                for kind in [a.stores[(n + b) % len(a.stores)]]:  # one a round, in turn
                    lane = chaos.new_lane(kind, n, binding)
                    chaos.chaos(lane, a.seconds)
                    found = chaos.settle_and_check(lane, n) + [
                        f"round {n} {kind}: {v}" for v in chaos.violations]
                    chaos.violations.clear()
                    total += found
                    lanes[f"{binding} {kind}"] += 1
                    print(f"round {n} {kind} {binding}: " + ("ok" if not found else
                          f"{len(found)} violation(s), see {lane.folder}"), flush=True)
                    for v in found:
                        print("   ", v, flush=True)
    finally:
        chaos.close()
    print(f"{a.rounds} rounds: {dict(sorted(lanes.items()))}; {chaos.started} processes, "
          f"{chaos.kills} killed, {chaos.pauses} paused, {chaos.server_kills} MCP servers "
          f"or programs killed alone, {chaos.mid_call} mid-charge (alone or with their "
          f"runtime), "
          f"{len(total)} violations; logs in {root}")
    if not total and a.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
