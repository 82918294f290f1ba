"""Two ``serve`` processes writing traces into one folder keep every call's trace.

Each server named a call's trace ``STAMP-N-TOOL.jsonl``, N counted from 1 in each process:
two servers on one ``sparql:`` world (the deployment ``docs/deployment.md`` shows), each
answering its first call in the same second, opened one file; the later truncated the
earlier's trace while it went on writing, so one call's trace was lost and the file left
was no trace (its lines cut into each other). Each call now takes a file no other has.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from in_process import horismos_load
from listening import horismos_serving_http
from oxigraph_server import OxigraphServer

from horismos import read_trace

DEFS = """\
@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Order a owl:Class .
:noted a owl:DatatypeProperty .
:t.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :noted ; horis:type xsd:string ] ] ;
    horis:binding "python:note" ; horis:idempotent true .
"""

TOOLS = 'def note(order):\n    return {"noted": "n"}\n'

ORDERS = 4  # two rounds of one call on each server at once


def test_two_servers_sharing_a_trace_folder_keep_every_calls_trace(tmp_path: Path) -> None:
    from mcp import Client

    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "shop.py").write_text(TOOLS)
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/shop#> .\n"
        + "".join(f":o{i} a :Order .\n" for i in range(ORDERS)))
    server = OxigraphServer(tmp_path / "db")
    try:
        horismos_load(tmp_path, server.store, "world.ttl")
        serve = ("defs.ttl", "--tools", "shop.py", "--store", server.store,
                 "--trace-dir", "traces")
        with (horismos_serving_http(tmp_path, *serve) as one,
              horismos_serving_http(tmp_path, *serve) as two):
            urls = [one, two]

            async def note(url: str, order: int) -> bool:
                async with Client(url, cache=None) as client:
                    answer = await client.call_tool("t.note", {"order": f":o{order}"})
                    return not answer.is_error

            async def rounds() -> list[bool]:
                done: list[bool] = []
                for r in range(0, ORDERS, 2):
                    done += await asyncio.gather(note(urls[0], r), note(urls[1], r + 1))
                return done

            assert all(asyncio.run(rounds()))
    finally:
        server.stop()
    traces = sorted((tmp_path / "traces").iterdir())
    assert len(traces) == ORDERS, traces
    called = sorted(read_trace(t)[0]["args"]["order"] for t in traces)  # each one whole
    assert called == [f":o{i}" for i in range(ORDERS)]
