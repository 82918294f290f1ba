"""A run refused because another process holds its on-disk store open writes its trace.

``oxigraph:PATH`` (RocksDB's lock) and ``journal:PATH`` (a ``flock``) open in one process at a
time. The second ``horismos run --trace T`` was refused, exit 2, and wrote no trace, where a
run refused because another drives its focus writes one (header, ``refused``, end); nor did
its message say which process held the store. Nor did ``resume --trace``, ``wake --traces``
or ``tools call --trace`` so refused: each writes the same refusal trace.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from forked import horismos_forked

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
"""

DEFINITIONS = (
    PREFIXES
    + """
:Patient a owl:Class .
:seen a owl:DatatypeProperty .
:t.see a horis:Tool ; rdfs:label "See" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ; horis:asserts [ horis:property :seen ;
                                                            horis:value horis:now ] ] ;
    horis:binding "python:see" ; horis:idempotent true .
:Visit a horis:Workflow ; horis:focusType :Patient ; horis:start :See .
:See a horis:ActionStep ; horis:tool :t.see ;
    horis:requires "FILTER NOT EXISTS { ?this :seen ?t }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
)

# what holds the store open: a process that opened it as a run, serve or worker does
HOLD = {
    "oxigraph": "import pyoxigraph, sys\ns = pyoxigraph.Store(sys.argv[1])\n",
    "journal": "import sys\nfrom horismos import World\nw = World.open('journal:' + sys.argv[1])\n",
}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = horismos_forked(cwd, *args, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done


class Held:
    """A process holding ``store``'s folder open (as a run, serve or worker does), until
    :meth:`close`."""

    def __init__(self, tmp_path: Path, kind: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                HOLD[kind] + "print('open', flush=True)\nsys.stdin.read()",
                str(tmp_path / "st"),
            ],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdout.readline() == "open\n"

    def close(self) -> None:
        self.process.communicate("")


def _loaded(tmp_path: Path, kind: str) -> str:
    (tmp_path / "defs.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    (tmp_path / "tools.py").write_text("def see(patient):\n    return {}\n")
    store = f"{kind}:{tmp_path / 'st'}"
    assert cli(tmp_path, "load", "world.ttl", "--store", store).returncode == 0
    return store


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_run_refused_by_a_store_another_process_holds_writes_its_trace(
    tmp_path: Path, kind: str
) -> None:
    store = _loaded(tmp_path, kind)
    held = Held(tmp_path, kind)
    try:
        refused = cli(
            tmp_path, "run", "defs.ttl", "--store", store, "--focus", ":p1", "--tools",
            "tools.py", "--trace", "t.jsonl",
        )  # fmt: skip
        shown = cli(tmp_path, "trace", "show", "t.jsonl", "defs.ttl")
        replayed = cli(tmp_path, "replay", "t.jsonl", "defs.ttl")
    finally:
        held.close()
    holder = held.process

    # refused as before, and now naming the process that holds the store
    assert refused.returncode == 2, refused.stderr
    assert "(a process holds it open:" in refused.stderr
    assert f"held by pid {holder.pid} (" in refused.stderr
    header, said, end = (
        json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()
    )
    assert header["type"] == "header" and header["store"] == store
    assert header["focus"] == ["http://example.org/clinic#p1"]
    assert said["type"] == "refused" and said["kind"] == "store_held"
    assert said["holder"].startswith(f"pid {holder.pid} (")
    assert end == {**end, "type": "end", "status": "refused"}
    assert "refused before its first step: store_held:" in shown.stdout
    assert "end: refused" in shown.stdout and "write meanwhile" not in shown.stdout
    assert replayed.stdout.startswith("REFUSED") and "held its store open" in replayed.stdout

    # given again once the holder let go: it runs, its trace the next free file
    again = cli(
        tmp_path,
        "run",
        "defs.ttl",
        "--store",
        store,
        "--focus",
        ":p1",
        "--tools",
        "tools.py",
        "--trace",
        "t.jsonl",
    )
    assert again.returncode == 0, again.stderr
    assert "this run's trace is" in again.stderr and (tmp_path / "t-2.jsonl").is_file()


def _refusal(path: Path, pid: int) -> tuple[dict, dict, dict]:
    header, said, end = (json.loads(line) for line in path.read_text().splitlines())
    assert header["type"] == "header" and header["world_digest"] is None
    assert said["type"] == "refused" and said["kind"] == "store_held"
    assert said["holder"].startswith(f"pid {pid} (")
    assert end["type"] == "end" and end["status"] == "refused"
    return header, said, end


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_resume_refused_by_a_held_store_writes_its_trace(tmp_path: Path, kind: str) -> None:
    store = _loaded(tmp_path, kind)
    held = Held(tmp_path, kind)
    try:
        refused = cli(
            tmp_path, "resume", "defs.ttl", "--store", store, "--instance", "abcd1234",
            "--tools", "tools.py", "--trace", "r.jsonl",
        )  # fmt: skip
        shown = cli(tmp_path, "trace", "show", "r.jsonl", "defs.ttl")
        replayed = cli(tmp_path, "replay", "r.jsonl", "defs.ttl")
    finally:
        held.close()
    assert refused.returncode == 2, refused.stderr
    assert f"held by pid {held.process.pid} (" in refused.stderr
    header, _, _ = _refusal(tmp_path / "r.jsonl", held.process.pid)
    assert header["store"] == store and header["instance"] == "abcd1234"
    assert header["workflow"] == "http://example.org/clinic#Visit"  # the only one declared
    assert "resume of instance abcd1234 of :Visit" in shown.stdout
    assert "refused before its first step: store_held:" in shown.stdout
    assert replayed.stdout.startswith("REFUSED") and "held its store open" in replayed.stdout


def test_a_wake_refused_by_a_held_store_writes_a_trace_into_its_traces(tmp_path: Path) -> None:
    store = _loaded(tmp_path, "oxigraph")
    held = Held(tmp_path, "oxigraph")
    try:
        refused = cli(
            tmp_path, "wake", "defs.ttl", "--store", store, "--tools", "tools.py",
            "--traces", "traces",
        )  # fmt: skip
    finally:
        held.close()
    assert refused.returncode == 2, refused.stderr
    (written,) = (tmp_path / "traces").iterdir()
    assert written.name.startswith("wake-") and written.suffix == ".jsonl"
    header, _, _ = _refusal(written, held.process.pid)
    assert header["store"] == store and header["focus"] == []


def test_a_tools_call_refused_by_a_held_store_writes_its_trace(tmp_path: Path) -> None:
    store = _loaded(tmp_path, "oxigraph")
    held = Held(tmp_path, "oxigraph")
    try:
        refused = cli(
            tmp_path, "tools", "call", "t.see", "defs.ttl", "--store", store, "--tools",
            "tools.py", "--args", '{"patient": ":p1"}', "--trace", "c.jsonl",
        )  # fmt: skip
        shown = cli(tmp_path, "trace", "show", "c.jsonl", "defs.ttl")
    finally:
        held.close()
    assert refused.returncode == 2, refused.stderr
    header, said, _ = _refusal(tmp_path / "c.jsonl", held.process.pid)
    assert header["call"] == "http://example.org/clinic#t.see" and header["store"] == store
    assert header["args"] == {"patient": ":p1"}
    assert said["tool"] == header["call"]
    assert "catalog call of" in shown.stdout and "store_held" in shown.stdout
