"""A run refused because another process holds its on-disk store open writes its trace.

``oxigraph:PATH`` (RocksDB's lock) and ``journal:PATH`` (a ``flock``) open in one process at a
time. The second ``horismos run --trace T`` was refused, exit 2, and wrote no trace, where a
run refused because another drives its focus writes one (header, ``refused``, end); nor did
its message say which process held the store.
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


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_run_refused_by_a_store_another_process_holds_writes_its_trace(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "defs.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    (tmp_path / "tools.py").write_text("def see(patient):\n    return {}\n")
    store = f"{kind}:{tmp_path / 'st'}"
    assert cli(tmp_path, "load", "world.ttl", "--store", store).returncode == 0
    holder = subprocess.Popen(
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
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        refused = cli(
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
        shown = cli(tmp_path, "trace", "show", "t.jsonl", "defs.ttl")
        replayed = cli(tmp_path, "replay", "t.jsonl", "defs.ttl")
    finally:
        holder.communicate("")

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
