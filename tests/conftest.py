"""Shared test helpers: Turtle snippets written to ``tmp_path``, loaded into a real Agent + World.

Engine tests declare their tools and steps inline (the file reads like what a modeler writes);
the clinic ontology in ``fixtures/engine/clinic.ttl`` supplies classes and a domain shape.
"""

from __future__ import annotations

import compileall
import itertools
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import forked
import pytest
from in_process import horismos_load
from oxigraph_server import OxigraphServer, ServerPool
from pharmacy_ehr import PATIENT, TOKEN, TOKEN_VAR, medication_request
from rdflib import Namespace
from redis_server import RedisServer
from servers.fhir_server import FhirServer, serve_fhir

import horismos
from horismos import Agent, Run, World

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE = FIXTURES / "engine"
EX = Namespace("http://example.org/clinic#")

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

# The triage pair most tests start from: queue a patient by acuity, returning a reference.
ASSIGN_TOOL = """
:t.assign a horis:Tool ;
    rdfs:label "Assign a patient to a queue" ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]
    ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ]
    ] ;
    horis:binding "python:assign" ;
    horis:timeout "2s" .
"""

TRIAGE = ASSIGN_TOOL + """
:Triage a horis:Workflow ; horis:focusType :Patient ; horis:start :Queue .

:Queue a horis:ActionStep ;
    horis:tool :t.assign ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""

WARD = """
:urgent a :AcuityLevel .
:routine a :AcuityLevel .
:p1 a :Patient ; :acuity :urgent .
:p2 a :Patient ; :acuity :routine .
:p3 a :Patient .
:n1 a :Nurse ; :onDuty true .
"""


class Recorder:
    """Plain Python tools that remember every call, so a test sees exactly what reached them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tool(self, name: str, result: Any = None, *,
             raises: BaseException | None = None) -> Callable[..., Any]:
        """A sync tool returning ``result`` (or ``result(**kwargs)`` when callable)."""

        def call(**kwargs: Any) -> Any:
            self.calls.append((name, kwargs))
            if raises is not None:
                raise raises
            return result(**kwargs) if callable(result) else result

        call.__name__ = name
        return call

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.calls if n == name)

    def args(self, name: str) -> list[dict[str, Any]]:
        return [kw for n, kw in self.calls if n == name]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def forked_popen(monkeypatch: pytest.MonkeyPatch) -> None:
    """``subprocess.Popen`` is :class:`forked.Popen` for the test: a ``horismos`` command a
    library starts itself (the MCP SDK's ``stdio_client``, through anyio and asyncio) is forked
    from the zygote, a process of its own all the same; any other command starts as ever."""
    monkeypatch.setattr(subprocess, "Popen", forked.Popen)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the package's bytecode once, where Python is told not to write it
    (``PYTHONDONTWRITEBYTECODE``): a few hundred tests run ``horismos`` in a subprocess, and
    each then compiled every module of an editable install from source, ~0.2 s a process."""
    if sys.dont_write_bytecode:
        compileall.compile_dir(Path(horismos.__file__).parent, quiet=2)


Build = Callable[..., tuple[Agent, World]]


STORES = ("memory", "oxigraph", "sparql")


@pytest.fixture(scope="session")
def oxigraph_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    """Real ``oxigraph serve`` processes on free loopback ports, started on first use."""
    pool = ServerPool(tmp_path_factory.mktemp("oxigraph"))
    yield pool
    pool.close()


def ward_store(tmp_path: Path, name: str) -> list[str]:
    """``--store NAME``, the ward loaded into it (ward.ttl written beside)."""
    (tmp_path / "ward.ttl").write_text(PREFIXES + WARD + ":w1 a :Ward .\n", encoding="utf-8")
    horismos_load(tmp_path, name, "ward.ttl")
    return ["--store", name]


@pytest.fixture
def shared_ward(tmp_path: Path, oxigraph_pool: ServerPool) -> Iterator[list[str]]:
    """``--store sparql:…`` of a real server holding the ward: the store processes share,
    where lends, leases and their windows are tried."""
    yield ward_store(tmp_path, oxigraph_pool.fresh())
    oxigraph_pool.release()


@pytest.fixture(params=STORES)
def store_name(request: pytest.FixtureRequest) -> Iterator[Callable[[], str]]:
    """Engine tests run once per backend: this gives each world a store of that kind."""
    if request.param != "sparql":
        yield lambda: request.param
        return
    pool: ServerPool = request.getfixturevalue("oxigraph_pool")
    yield pool.fresh
    pool.release()


@pytest.fixture
def build(tmp_path: Path, store_name: Callable[[], str]) -> Build:
    """``build(defs, world, tools=..., entailment=...)`` → a real Agent and World.

    ``defs`` and ``world`` are Turtle bodies; the prefixes above are prepended. The clinic
    ontology is loaded with the definitions unless ``ontology=False``.
    """
    counter = itertools.count()

    def _build(defs: str, world: str = WARD, *, tools: dict[str, Callable[..., Any]] | None = None,
               entailment: str = "rdfs", ontology: bool = True,
               extra: tuple[Path, ...] = ()) -> tuple[Agent, World]:
        n = next(counter)
        d = tmp_path / f"defs{n}.ttl"
        d.write_text(PREFIXES + defs, encoding="utf-8")
        w = tmp_path / f"world{n}.ttl"
        w.write_text(PREFIXES + world, encoding="utf-8")
        paths = [d, *((ENGINE / "clinic.ttl",) if ontology else ()), *extra]
        agent = Agent.from_files(*paths, tools=tools, entailment=entailment)  # type: ignore[arg-type]
        return agent, World.from_files(w, store=store_name())

    return _build


def facts(world: World) -> str:
    """The world without runtime instance state: what a step may or may not have changed."""
    return world.canonical(include_instances=False)


def step_events(run: Run) -> list[dict[str, Any]]:
    return [e for e in run.trace.events if e["type"] == "step"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[OxigraphServer]:
    """A real ``oxigraph serve`` of the test's own (the shared world of a worker test, a
    ``sparql:`` store), stopped after it. A test file may define a ``server`` of its own."""
    s = OxigraphServer(tmp_path / "db")
    yield s
    s.stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    """A real redis-server of the test's own, the Celery broker of ``worker`` and ``submit``."""
    r = RedisServer(tmp_path / "redis")
    yield r
    r.kill()  # nothing after it reads the queue: not the ~0.1 s a shutdown takes to save


@pytest.fixture
def fhir(monkeypatch: pytest.MonkeyPatch) -> Iterator[FhirServer]:
    """The pharmacy's system of record (pharmacy_ehr.py): a loopback FHIR server of the test's
    own, asking for the token the environment holds, with patient p1 and its active request
    mr1. In-process and started in milliseconds: each test has its own, faults and log."""
    with serve_fhir() as server:
        server.token = TOKEN
        monkeypatch.setenv(TOKEN_VAR, TOKEN)
        server.put(PATIENT)
        server.put(medication_request("mr1"))
        yield server
