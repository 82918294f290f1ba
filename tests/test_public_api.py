"""The public surface is what ``horismos/__init__.py`` names; a change to it is deliberate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import horismos

PUBLIC = [
    "HORIS", "Adapter", "Agent", "AmbiguousName", "Arg", "ArgumentTypeError", "Assertion",
    "AuthoringError", "BrokerError", "CallError", "CallInFlight", "CallResult", "Catalog", "Change",
    "Command", "Conflict", "Definitions", "Digest", "Discovery", "Divergence", "Effect",
    "Environment", "GateRejected", "Header", "HorismosError", "Hydrated", "InstanceFailed",
    "InstanceRun", "InstanceSummary", "Intent", "LeaseLost", "LowDisk", "McpServer", "NotHeld",
    "NotSent", "OutcomeUnknown", "OutputQuotaExceeded", "PartialCommit", "Pattern",
    "PolicyRefused", "Precondition", "PreconditionError", "Problem", "ProgramMissing",
    "RemoteConflict", "ReplayReport", "ResultTooLarge", "Run", "RunError", "ScopeRefused",
    "ShaclMessage", "ShapesBrokenAlready", "Step", "StepBudgetExceeded", "StepRecord", "Store",
    "StoreError", "Tool", "ToolEntry", "ToolError", "ToolTimeout", "Trace", "TraceError",
    "TraceExists", "TraceTampered", "TraceVersionError", "Unreachable", "UnreadableAnswer",
    "Unstartable", "UsageError", "Workflow", "World", "__version__", "check_inventory",
    "iter_trace", "load_definitions", "read_trace", "replay", "submit", "wait_for_instances",
]


def _triage_agent(
    assign_queue: Callable[..., Any] = dict, notify_nurse: Callable[..., Any] = dict, *more: Path
) -> horismos.Agent:
    """The triage example's agent (``more``: definition files loaded beside it), its two tools
    these functions: by default each answers nothing (``dict``)."""
    root = Path(__file__).resolve().parent.parent
    return horismos.Agent.from_files(
        root / "workflows" / "triage.ttl",
        root / "ontologies" / "ehr.ttl",
        *more,
        tools={"ehr_client.assign_queue": assign_queue, "ehr_client.notify_nurse": notify_nurse},
    )


def test_the_public_names_are_exactly_these():
    assert horismos.__all__ == PUBLIC


def test_every_public_name_is_importable_and_errors_share_one_root():
    for name in PUBLIC:
        obj = getattr(horismos, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, horismos.HorismosError), name


def test_the_command_line_starts_without_what_only_some_commands_use():
    """Every ``horismos`` command imports the CLI first: pydantic (the inventory's models)
    and httpx (HTTP bindings, model ranking, FHIR adapters) are imported where they are used,
    not by the ~0.1 s they added to every start; numpy (~0.06 s) when a digest is first
    summed, which validate, graph and trace show never do; networkx (~0.12 s) not at all, the
    load's graph walks are horismos/_digraph.py."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", "import sys, horismos._cli; print(*sorted(sys.modules))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert "horismos._cli" in out
    assert not {"pydantic", "httpx", "networkx", "numpy"} & set(out)


def test_a_name_that_is_not_a_string_is_a_usage_error_saying_what_to_give():
    """``agent.run(world, focus=42)`` ended in ``AttributeError: 'int' object has no attribute
    'strip'``, from deep inside; it says what a name is."""
    import pytest

    root = Path(__file__).resolve().parent.parent
    agent = _triage_agent()
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    before = world.digest()
    for given in ({"focus": 42}, {"workflow": 42, "focus": ":patient42"}, {"focus": [":p"]}):
        with pytest.raises(horismos.UsageError, match="is not a name: give a string"):
            agent.run(world, **given)
    assert world.digest() == before


def test_a_users_program_type_checks_against_the_public_api(tmp_path):
    """Without a ``py.typed`` marker mypy refused to read the installed package ("module is
    installed, but missing library stubs or py.typed marker") and under ``--strict`` a
    program embedding Horismos failed its type check at its import, every name ``Any``; the
    package is typed, so a user's checker reads its annotations: a right program passes and a
    wrong one is told where.

    And a service names the types it is handed without a private import:
    ``agent.workflow()`` returned a ``Workflow``, ``arun(env=...)`` took an ``Environment``,
    ``world.commit`` a ``Change`` and ``catalog.tool`` a ``Tool``, none importable from
    ``horismos``: a service annotating what it is handed imported ``horismos._model`` (and
    mypy's ``--strict`` refuses a name a module does not export). Each is exported, and a
    program using them type-checks from ``horismos`` alone. Both programs are checked in one
    mypy run: each run type-checks the whole package first (~17 s of CPU)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "handler.py").write_text(
        "from horismos import Agent, Run, StepRecord, World\n\n\n"
        "def handle(agent: Agent, world: World, focus: str) -> str:\n"
        "    run: Run = agent.run(world, workflow=':Triage', focus=focus)\n"
        "    first: StepRecord = run.steps[0]\n"
        "    return f'{first.step} {run.status}'\n\n\n"
        "def wrong(run: Run) -> int:\n"
        "    return run.status\n"
    )
    (tmp_path / "service.py").write_text(
        "import datetime as dt\n\n"
        "from rdflib import URIRef\n\n"
        "from horismos import (Agent, Arg, Change, Environment, Header, InstanceSummary,\n"
        "                      McpServer, Tool, Workflow, World)\n\n\n"
        "class FixedClock(Environment):\n"
        "    def now(self) -> dt.datetime:\n"
        "        value = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)\n"
        "        self.note('clock', value.isoformat())\n"
        "        return value\n\n\n"
        "def triage(agent: Agent) -> Workflow:\n"
        "    return agent.workflow(':Triage')\n\n\n"
        "def first_arg(tool: Tool) -> Arg | None:\n"
        "    return tool.args[0] if tool.args else None\n\n\n"
        "async def handle(agent: Agent, world: World, event: str) -> list[InstanceSummary]:\n"
        "    world.load_data(event, format='turtle')\n"
        "    wf = triage(agent)\n"
        "    await agent.arun(world, wf.iri, ':patient42', env=FixedClock())\n"
        "    world.commit(Change(add=[(URIRef('urn:x:a'), URIRef('urn:x:p'),\n"
        "                             URIRef('urn:x:b'), None)]))\n"
        "    return world.instances('waiting')\n\n\n"
        "SERVER = McpServer(URIRef('urn:x:s'), 'ehr', url='http://127.0.0.1:9/mcp',\n"
        "                   headers=(Header('Authorization', 'EHR_TOKEN'),))\n\n\n"
        "def wrong(summary: InstanceSummary) -> int:\n"
        "    return summary.status\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "handler.py", "service.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )
    report = done.stdout + done.stderr
    assert "py.typed" not in report, report
    assert "handler.py:11: error: Incompatible return value type" in report, report
    assert "service.py:38: error: Incompatible return value type" in report, report
    assert report.count("error:") == 2, report


def test_a_sync_entry_point_called_from_a_coroutine_says_what_to_await(tmp_path):
    """``agent.run(...)`` inside ``async def`` (a web handler, a pytest-asyncio test) raised
    asyncio's ``RuntimeError: asyncio.run() cannot be called from a running event loop``,
    naming neither the call nor its async form, with a "coroutine 'Agent.arun' was never
    awaited" warning. Each sync entry point is a UsageError there saying what to write, and
    leaves the world as it was."""
    import asyncio
    import warnings

    import pytest

    root = Path(__file__).resolve().parent.parent
    agent = _triage_agent()
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    before = world.digest()
    calls = {
        "await agent.arun(...)": lambda: agent.run(world, focus=":patient42"),
        "await agent.aresume(...)": lambda: agent.resume(world, "deadbeef"),
        "await agent.catalog.acall(...)": lambda: agent.catalog.call(
            "ehr.assign_queue", {"patient": ":patient42", "queue": ":urgent"}, world),
        "asyncio.to_thread(agent.catalog.reconcile": lambda: agent.catalog.reconcile(
            "ehr.assign_queue", {"patient": ":patient42", "queue": ":urgent"}, world),
        "asyncio.to_thread(replay, trace, agent)": lambda: horismos.replay(
            tmp_path / "none.jsonl", agent),
    }

    async def handler() -> None:
        for instead, call in calls.items():
            with pytest.raises(horismos.UsageError, match="inside a running event loop") as e:
                call()
            assert instead in str(e.value)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no coroutine left never awaited
        asyncio.run(handler())
    assert world.digest() == before


def test_a_runs_instance_when_it_holds_none_says_where_to_read_them(tmp_path):
    """``run.instance`` (what ``agent.resume`` takes) of a run that holds no instance — a batch
    run with ``keep=False``, or ``all=True`` with every focus node finished — was a bare
    ``IndexError: list index out of range``; it is a UsageError saying why and what to use."""
    import pytest

    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":urgent a :AcuityLevel .\n"
        ":patient42 a :Patient ; :acuity :urgent .\n"
        ":nurse7 a :Nurse ; :onDuty true .\n"
    )
    agent = _triage_agent(
        lambda patient, queue: {"queueRef": "Q-URGENT-1"},
        lambda patient, nurse, ref: {"assignedNurse": nurse},
    )
    world = horismos.World.from_files(tmp_path / "world.ttl")
    ended: list[horismos.InstanceRun] = []
    batch = agent.run(world, all=True, keep=False, on_instance=ended.append)
    assert batch.status == "completed" and len(ended) == 1
    with pytest.raises(horismos.UsageError, match=r"kept none \(keep=False\).*on_instance="):
        print(batch.instance)
    again = agent.run(world, all=True)
    assert again.instances == []
    with pytest.raises(horismos.UsageError, match="no focus node was left to run"):
        print(again.instance)
    assert agent.run(world, focus=":patient42").instance != ended[0].instance


def test_a_curie_of_two_namespaces_is_an_exported_error_naming_them(tmp_path):
    """Files binding ``:`` to two namespaces, each with a ``:patient42``, made
    ``focus=":patient42"`` raise ``horismos._errors.AmbiguousName`` — in the documented error
    tree, with the IRIs it could mean in ``candidates``, but not importable from ``horismos``:
    catching it by name took a private module. It is exported."""
    import pytest

    (tmp_path / "other.ttl").write_text(
        "@prefix : <http://example.org/other#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        ":Thing a rdfs:Class .\n"
    )
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/ehr#> .\n@prefix o: <http://example.org/other#> .\n"
        ":urgent a :AcuityLevel .\n:patient42 a :Patient ; :acuity :urgent .\n"
        "o:patient42 a o:Thing .\n"
    )
    agent = _triage_agent(dict, dict, tmp_path / "other.ttl")
    world = horismos.World.from_files(tmp_path / "world.ttl")
    with pytest.raises(horismos.AmbiguousName, match="write the full IRI") as e:
        agent.run(world, focus=":patient42")
    assert e.value.candidates == ("http://example.org/ehr#patient42",
                                  "http://example.org/other#patient42")
    assert isinstance(e.value, horismos.UsageError)


def test_every_public_member_is_in_the_reference():
    """docs/generate.py lists a member only when it has a docstring, and ``Agent.from_files``,
    ``World.from_files``, ``run.steps`` and ``run.trace.save`` — SPEC §3's own example — had
    none, so the Python API reference said nothing of them (nor of ``catalog.acall``,
    ``agent.workflow``, …). Every public method and property of an exported class has one."""
    import inspect

    reference = (Path(__file__).resolve().parent.parent / "docs" / "reference"
                 / "python-api.md").read_text()
    missing = []
    for name in PUBLIC:
        obj = getattr(horismos, name)
        if not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        for member, value in vars(obj).items():
            if member.startswith("_"):
                continue
            func = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            if (callable(func) or isinstance(value, property)) and not inspect.getdoc(func):
                missing.append(f"{name}.{member}")
    assert missing == []
    for used in ("`.from_files(", "`.steps`", "`.save(", "`.acall("):
        assert used in reference, used


def test_saving_a_trace_into_a_folder_that_does_not_exist_says_so(tmp_path):
    """``run.trace.save("out/trace.jsonl")`` with no ``out/`` raised a bare
    ``FileNotFoundError``, where ``agent.run(trace=...)`` says which folder to create."""
    import pytest

    root = Path(__file__).resolve().parent.parent
    agent = _triage_agent()
    run = agent.run(horismos.World.from_files(root / "examples" / "triage" / "world.ttl"),
                    focus=":patient44")
    with pytest.raises(horismos.UsageError, match=r"the folder .*out does not exist; create it"):
        run.trace.save(tmp_path / "out" / "trace.jsonl")
    assert run.trace.save(tmp_path / "trace.jsonl").read_text().count("\n") == len(run.trace)


def test_the_python_api_never_writes_a_trace_over_another_unless_told(tmp_path, capsys):
    """``agent.run(trace=path)`` and ``trace.save(path)`` wrote a second run over the trace
    already there (an incident's, perhaps its only record), where ``run --trace`` refuses it.
    Both refuse with :class:`TraceExists` in the command line's words, the file left byte for
    byte; ``overwrite=True`` writes over it on purpose."""
    import pytest

    from horismos._cli import main

    root = Path(__file__).resolve().parent.parent
    agent = _triage_agent()
    world = root / "examples" / "triage" / "world.ttl"
    incident = tmp_path / "incident.jsonl"
    first = agent.run(horismos.World.from_files(world), focus=":patient44", trace=incident)
    kept = incident.read_bytes()
    said = (f"this file already exists ({len(kept)} bytes, the trace of an earlier run?) and a "
            "trace is never written over; give a new file name, or move or remove that file "
            "first")
    with pytest.raises(horismos.TraceExists) as refused:
        agent.run(horismos.World.from_files(world), focus=":patient42", trace=incident)
    assert str(refused.value) == f"trace {incident}: {said}, or pass overwrite=True to replace it"
    assert isinstance(refused.value, horismos.UsageError) and refused.value.path == str(incident)
    again = agent.run(horismos.World.from_files(world), focus=":patient42")
    with pytest.raises(horismos.TraceExists, match="or pass overwrite=True"):
        again.trace.save(incident)
    assert incident.read_bytes() == kept
    assert first.trace.save(incident) == incident  # its own file, where it is: as it was
    assert incident.read_bytes() == kept
    # the command line says the same, naming its option
    code = main(["run", str(root / "workflows" / "triage.ttl"), str(root / "ontologies"),
                 "--world", str(world), "--focus", ":patient42", "--trace", str(incident)])
    assert code == 2 and f"--trace {incident}: {said}\n" in capsys.readouterr().err
    assert incident.read_bytes() == kept
    # on purpose: written over
    again.trace.save(incident, overwrite=True)
    assert str(horismos.read_trace(incident)[0]["focus"]).endswith("patient42']")
    agent.run(horismos.World.from_files(world), focus=":patient44",
              trace=horismos.Trace(incident, overwrite=True))
    assert str(horismos.read_trace(incident)[0]["focus"]).endswith("patient44']")
    empty = tmp_path / "mktemp.jsonl"  # an empty file records nothing: taken, as the CLI does
    empty.touch()
    agent.run(horismos.World.from_files(world), focus=":patient44", trace=empty)
    assert horismos.read_trace(empty)


def test_a_closed_world_used_again_says_it_is_closed(tmp_path):
    """A world used after ``close()`` (a run after its ``with`` block) raised
    ``AttributeError: 'OxigraphStore' object has no attribute '_store'`` from inside the store,
    on ``load`` as on a run. It is a UsageError saying the world is closed and what to do;
    closing again still does nothing, and the store reopens with what it held."""
    import pytest

    root = Path(__file__).resolve().parent.parent
    agent = _triage_agent()
    store = f"oxigraph:{tmp_path / 'world'}"
    with horismos.World.open(store) as world:
        world.load(root / "examples" / "triage" / "world.ttl")
        held = world.digest()
    for use in (lambda: world.load(root / "examples" / "triage" / "world.ttl"),
                lambda: agent.run(world, focus=":patient42"),
                world.digest):
        with pytest.raises(horismos.UsageError, match=r"this world is closed .*World\.open\('ox"):
            use()
    world.close()
    with horismos.World.open(store, create=False) as again:
        assert again.digest() == held
    with horismos.World.from_files(root / "examples" / "triage" / "world.ttl") as in_memory:
        pass
    with pytest.raises(horismos.UsageError, match="an in-memory store keeps nothing"):
        agent.run(in_memory, focus=":patient42")


def test_a_module_allowed_as_one_string_is_that_module(monkeypatch):
    """``allow_modules="ehr_client"`` was iterated letter by letter — the modules ``e``, ``h``,
    ``r``… — and the run refused ``python:ehr_client.assign_queue`` as "in no module you
    allowed". A string names modules as ``allow=`` names classes: one, or several between
    commas."""

    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root / "examples" / "triage"))
    for allowed in ("ehr_client", "json, ehr_client"):
        agent = horismos.Agent.from_files(root / "workflows" / "triage.ttl",
                                          root / "ontologies" / "ehr.ttl",
                                          allow_modules=allowed)
        world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
        assert agent.run(world, focus=":patient42").status == "completed"


def test_errors_and_step_records_survive_pickle_and_deepcopy():
    """A rejected step's errors carry keyword-only fields (``GateRejected(…, messages=)``,
    ``InstanceFailed(…, cause=)``), and pickling one back raised "missing 1 required
    keyword-only argument": a process pool's worker whose run failed could not hand back its
    error or its step records, and ``copy.deepcopy(run)`` raised. Each comes back with its
    fields."""
    import copy
    import pickle

    root = Path(__file__).resolve().parent.parent

    def assign_queue(patient, queue):
        number = int("42")  # not a string: the gate rejects it
        return {"queueRef": number}

    agent = _triage_agent(assign_queue)
    run = agent.run(horismos.World.from_files(root / "examples" / "triage" / "world.ttl"),
                    focus=":patient42")
    assert isinstance(run.error, horismos.InstanceFailed)
    back = pickle.loads(pickle.dumps(run.error))
    assert type(back) is horismos.InstanceFailed and str(back) == str(run.error)
    assert back.step == run.error.step
    assert isinstance(back.cause, horismos.GateRejected)
    assert back.cause.messages == run.error.cause.messages
    steps = pickle.loads(pickle.dumps(run.steps))
    assert steps[0].error.messages == run.steps[0].error.messages
    assert copy.deepcopy(run).steps[0].status == "rejected"
    others = [
        horismos.ArgumentTypeError("a", arg="queue", value=":x", expected=":AcuityLevel"),
        horismos.PolicyRefused("p", side_effect="ExternalCommit", allowed=("ReadOnly",)),
        horismos.Divergence("d", event=3, field="args", recorded=1, now=2),
        horismos.TraceTampered("t", line=4),
        horismos.AmbiguousName(":p", ["http://a#p", "http://b#p"]),
        horismos.OutcomeUnknown("o", running=__import__("threading").Event()),
    ]
    for error in others:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert {k: v for k, v in vars(again).items() if k != "running"} == {
            k: v for k, v in vars(error).items() if k != "running"}


def test_a_python_callers_mistake_is_told_in_python_terms(tmp_path):
    """Refusals shared with the command line named only its flags to a Python caller: a run
    with no focus "(or run with --all)", a discovery with a focus and no world "(--world F)",
    an HTTP tool's host outside the allowed ones "add it with --allow-host 127.0.0.1". Each
    also names the Python argument, as the refusal of an unregistered binding does."""
    import pytest

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "triage.ttl").write_text(
        (root / "workflows" / "triage.ttl").read_text().replace(
            '"python:ehr_client.notify_nurse"', '"http://127.0.0.1:9/notify"'))
    agent = horismos.Agent.from_files(tmp_path / "triage.ttl", root / "ontologies" / "ehr.ttl",
                                      tools={"ehr_client.assign_queue": dict},
                                      allow_hosts=["ehr.example.org"])
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    with pytest.raises(horismos.UsageError, match=r"focus= in Python.*all=True"):
        agent.run(world)
    with pytest.raises(horismos.UsageError, match="the world argument in Python"):
        agent.catalog.discover("assign queue", focus=":patient42")
    with pytest.raises(horismos.NotSent, match=r'allow_hosts=\[\.\.\., "127\.0\.0\.1"\]'):
        agent.run(world, focus=":patient42")


def _triage_held_in_call(calls: list[str]):
    """The triage agent and world, its assign_queue entered and never answering."""
    import asyncio

    root = Path(__file__).resolve().parent.parent
    entered = asyncio.Event()

    async def assign_queue(patient, queue):
        calls.append("assign_queue")
        entered.set()
        await asyncio.Event().wait()  # never answers: the caller gives up first
        return {"queueRef": "Q-URGENT-1"}

    tools = {"ehr_client.assign_queue": assign_queue, "ehr_client.notify_nurse": dict}
    agent = horismos.Agent.from_files(root / "workflows" / "triage.ttl",
                                      root / "ontologies" / "ehr.ttl", tools=tools)
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    return agent, world, entered


async def _triage_left_mid_call(calls: list[str]):
    """The triage agent and world after an ``arun`` of :patient42 was cancelled in its
    assign_queue call (a caller's timeout): its instance left running, no run driving it."""
    import asyncio

    agent, world, entered = _triage_held_in_call(calls)
    task = asyncio.create_task(agent.arun(world, focus=":patient42"))
    await entered.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return agent, world


def test_an_instance_a_live_run_drives_is_said_running_not_completed():
    """``again=False`` answers a focus's instance as it stands; one another run is driving
    right now (a request still in its call when the client retries) was reported
    ``run.status == "completed"``, so a client retrying after a timeout took a call still in
    flight for done. The status is ``running``, as the instance's own, and nothing is run."""
    import asyncio

    calls: list[str] = []

    async def scenario() -> horismos.Run:
        agent, world, entered = _triage_held_in_call(calls)
        task = asyncio.create_task(agent.arun(world, focus=":patient42"))
        await entered.wait()
        try:
            return await agent.arun(world, focus=":patient42", again=False)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    found = asyncio.run(scenario())
    assert [i.status for i in found.instances] == ["running"]
    assert found.steps == []
    assert found.status == "running"
    assert calls == ["assign_queue"]


def test_an_instance_no_run_drives_is_gone_on_with_not_answered_running_for_ever():
    """An ``arun`` cancelled mid-call (a caller's timeout) left its instance running, and
    every ``again=False`` after it answered ``running``, for ever, while ``horismos
    instances`` said it interrupted: a handler could not tell it from a live run. No run
    drives it, so the retry goes on with it as ``again=True`` would: the call it was making
    is held in doubt (``OutcomeUnknown``, not made again), one instance, never ``running``."""
    import asyncio

    calls: list[str] = []

    async def scenario() -> tuple[horismos.Run, horismos.World]:
        agent, world = await _triage_left_mid_call(calls)
        return await agent.arun(world, focus=":patient42", again=False), world

    found, world = asyncio.run(scenario())
    assert found.status == "failed"
    assert isinstance(found.error.cause, horismos.OutcomeUnknown)
    assert calls == ["assign_queue"]  # held in doubt, not called a second time
    assert [i.status for i in world.instances()] == ["failed"]


def test_world_instances_tells_an_interrupted_instance_from_a_live_one():
    """``horismos instances`` lists a running instance no process drives as ``interrupted``;
    ``world.instances()`` said ``running`` for both it and one a run is driving right now, so
    a Python operator could not tell which to run again. Each running summary says whether a
    process drives it (``live``) and ``interrupted`` when none does, as the command says."""
    import asyncio

    calls: list[str] = []

    async def scenario() -> tuple[list[horismos.InstanceSummary], ...]:
        agent, world, entered = _triage_held_in_call(calls)
        task = asyncio.create_task(agent.arun(world, focus=":patient42"))
        await entered.wait()
        try:
            driven = world.instances(), world.instances("running")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        left = world.instances(), world.instances("running")
        other = horismos.World.from_files(
            Path(__file__).resolve().parent.parent / "examples" / "triage" / "world.ttl")
        await _triage_agent().arun(other, focus=":patient42")  # ends, one way or another
        return *driven, *left, other.instances()

    live, live_running, left, left_running, ended = asyncio.run(scenario())
    for rows in (live, live_running):
        assert [(r.status, r.live, r.interrupted) for r in rows] == [("running", True, False)]
    for rows in (left, left_running):
        assert [(r.status, r.live, r.interrupted) for r in rows] == [("running", False, True)]
    assert [(r.status != "running", r.live, r.interrupted) for r in ended] == [(True, None, False)]


def test_a_failed_instance_answered_again_keeps_its_errors_class():
    """The retry after the one that failed the instance (its call held in doubt) was answered
    a plain ``RunError`` of the stored words: a handler could tell "reconcile the call" from
    "the tool raised" only by parsing them. It answers the class the live run raised: an
    ``InstanceFailed`` whose ``cause`` is the ``OutcomeUnknown``, kind and words kept."""
    import asyncio

    calls: list[str] = []

    async def scenario() -> tuple[horismos.Run, horismos.Run]:
        agent, world = await _triage_left_mid_call(calls)
        ran = await agent.arun(world, focus=":patient42", again=False)
        return ran, await agent.arun(world, focus=":patient42", again=False)

    ran, answered = asyncio.run(scenario())
    assert answered.steps == [] and answered.status == "failed"
    assert isinstance(answered.error, horismos.InstanceFailed)
    assert isinstance(answered.error.cause, horismos.OutcomeUnknown)
    assert answered.error.cause.kind == "outcome_unknown"
    assert str(answered.error.cause) == str(ran.error.cause)
    assert calls == ["assign_queue"]


def test_an_async_callback_is_refused_before_the_run_not_dropped():
    """``await agent.arun(..., on_step=handler)`` with ``async def handler`` ran every step and
    reported none: each call made a coroutine that never ran (a RuntimeWarning at most).
    It is a UsageError before anything runs, saying to give a plain function."""
    import asyncio

    import pytest

    root = Path(__file__).resolve().parent.parent
    called: list[str] = []

    def assign_queue(patient, queue):
        called.append("assign_queue")
        return {"queueRef": "Q-URGENT-1"}

    agent = _triage_agent(assign_queue)
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    before = world.digest()

    async def on_step(instance, record):
        pass

    async def on_instance(instance):
        pass

    async def handler() -> None:
        with pytest.raises(horismos.UsageError, match="on_step is an async function"):
            await agent.arun(world, focus=":patient42", on_step=on_step)
        with pytest.raises(horismos.UsageError, match="on_instance is an async function"):
            await agent.arun(world, all=True, on_instance=on_instance)

    asyncio.run(handler())
    with pytest.raises(horismos.UsageError, match="give a plain def"):
        agent.resume(world, "deadbeef", on_step=on_step)
    assert called == [] and world.digest() == before


def test_no_public_signature_names_another_private_type():
    """A scan of every exported function, class and public member's annotations for a type
    of a private module that ``horismos`` does not export: a type a user holds (``World.store``
    answered a ``Store``, ``Tool.requires`` a ``Precondition``) but cannot import or annotate
    with. What users hold is exported (``Store``, ``Precondition``, ``Pattern``); the runner's
    plumbing (``Agent._runner``, the catalog's MCP sessions, ``Environment``'s hooks, a
    compiled ``_plan``) is named private. A private field or parameter is not the API.
    Nothing is left: ``Catalog(agent)`` takes an ``Agent``, not the index's protocol."""
    import dataclasses
    import importlib
    import inspect
    import pkgutil
    import typing

    names: dict[str, object] = {}
    for info in pkgutil.walk_packages(horismos.__path__, "horismos."):
        if info.name.endswith("__main__"):
            continue
        for k, v in vars(importlib.import_module(info.name)).items():
            if isinstance(v, type) and k != "Literal":
                names.setdefault(k, v)
    names.update(vars(horismos))
    names.pop("Literal", None)  # rdflib's, not typing's
    exported = {id(getattr(horismos, n)) for n in horismos.__all__}
    found: set[str] = set()

    def walk(t: object) -> None:
        for arg in typing.get_args(t):
            walk(arg)
        origin = typing.get_origin(t)
        if isinstance(origin, type):
            walk(origin)
        if isinstance(t, type) and t.__module__.startswith("horismos") and id(t) not in exported:
            found.add(f"{t.__module__}.{t.__qualname__}")

    def hints(obj: object) -> None:
        try:
            got = typing.get_type_hints(obj, localns=names)
        except NameError:  # a dataclass's field named under TYPE_CHECKING: its __init__ says
            return
        for key, t in got.items():
            if not key.startswith("_"):
                walk(t)

    for name in horismos.__all__:
        obj = getattr(horismos, name)
        if inspect.isfunction(obj):
            hints(obj)
        if not inspect.isclass(obj) or obj.__module__.startswith("rdflib"):
            continue
        if issubclass(obj, BaseException):
            continue
        hints(obj.__init__)
        if dataclasses.is_dataclass(obj):
            hints(obj)
        for member in dir(obj):
            value = inspect.getattr_static(obj, member, None)
            if member.startswith("_"):
                continue
            if isinstance(value, property) and value.fget:
                hints(value.fget)
            elif isinstance(value, (staticmethod, classmethod)):
                hints(value.__func__)
            elif inspect.isfunction(value):
                hints(value)
    assert found == set()


def _held_open(path) -> int:
    """How many of this process's file descriptors are open on ``path`` (Linux /proc)."""
    import os
    from pathlib import Path

    fds = Path("/proc/self/fd")
    target = os.path.realpath(path)
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == target)


def test_a_cancelled_arun_closes_its_trace_file(tmp_path):
    """An ``arun`` cancelled mid-call (``asyncio.wait_for`` timing out, a task cancelled) left
    its trace file open: a ``ResourceWarning`` at garbage collection, and one descriptor held
    per cancelled run for as long as anything referred to its trace (a service cancelling
    runs ran out of them). The trace ends where the run stopped, its file closed, and
    it reads back whole: the events written before the cancel, hash chain intact."""
    import asyncio

    import pytest

    calls: list[str] = []
    path = tmp_path / "cancelled.jsonl"
    trace = horismos.Trace(path)

    async def scenario() -> None:
        agent, world, entered = _triage_held_in_call(calls)
        task = asyncio.create_task(agent.arun(world, focus=":patient42", trace=trace))
        await entered.wait()
        assert _held_open(path) == 1  # written as the run goes
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert _held_open(path) == 0
    assert horismos.read_trace(path)[0]["type"] == "header"


def test_a_run_an_on_step_handler_stops_closes_its_trace_file(tmp_path):
    """``on_step`` raising ends the run there and reaches the caller (documented); the trace
    file the run was writing stayed open behind it. It is closed, the step that landed in it."""
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parent.parent
    tools = {"ehr_client.assign_queue": lambda patient, queue: {"queueRef": "Q-URGENT-1"},
             "ehr_client.notify_nurse": lambda patient, nurse, ref: {"assignedNurse": nurse}}
    agent = horismos.Agent.from_files(root / "workflows" / "triage.ttl",
                                      root / "ontologies" / "ehr.ttl", tools=tools)
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    path = tmp_path / "stopped.jsonl"

    def stop(inst, record):
        raise LookupError("the handler's own failure")

    with pytest.raises(LookupError):
        agent.run(world, focus=":patient42", trace=path, on_step=stop)
    assert _held_open(path) == 0
    assert "step" in [e["type"] for e in horismos.read_trace(path)]


def test_a_cancelled_catalog_call_closes_its_trace_file(tmp_path):
    """``await agent.catalog.acall(..., trace=PATH)`` cancelled while its tool ran left the
    call's trace file open, as a cancelled ``arun`` did. It is closed."""
    import asyncio

    import pytest

    calls: list[str] = []
    path = tmp_path / "call.jsonl"
    trace = horismos.Trace(path)  # held, as a caller reading it afterwards holds it

    async def scenario() -> None:
        agent, world, entered = _triage_held_in_call(calls)
        args = {"patient": ":patient42", "queue": ":urgent"}
        task = asyncio.create_task(
            agent.catalog.acall("ehr.assign_queue", args, world, trace=trace)
        )
        await entered.wait()
        assert _held_open(path) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert _held_open(path) == 0


def test_every_exported_error_is_in_the_tree_the_docs_draw():
    """The errors' tree (``horismos/_errors.py``'s docstring, drawn in the Python API
    reference) is where a user looks for what to catch; ``NotHeld`` (a service's 409) and
    ``TraceExists`` were exported and missing from it. Each exported error is in it, under
    its own base class."""
    import re

    from horismos import _errors

    tree = _errors.__doc__
    drawn: dict[str, int] = {}
    for line in tree.splitlines():
        found = re.match(r"^([│ ├└─]*)(\w+)\b", line)
        if found and found.group(2)[0].isupper():
            drawn[found.group(2)] = len(found.group(1))
    for name in horismos.__all__:
        obj = getattr(horismos, name)
        if isinstance(obj, type) and issubclass(obj, horismos.HorismosError):
            assert name in drawn, f"{name} is exported and not in the errors' tree"
            if obj is not horismos.HorismosError:
                base = next(b for b in obj.__mro__[1:] if b.__name__ in drawn)
                assert drawn[base.__name__] == drawn[name] - 4, (name, base.__name__)


def test_a_tools_own_exception_is_the_cause_of_the_run_error_as_documented():
    """``RunError``'s fields are documented (``step``, ``tool``, ``kind``, the tool's own
    exception as ``__cause__``): a handler logging what failed reads them, sync or async."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent

    def refused(patient, queue):
        raise ValueError("the EHR refused the patient")

    async def refused_async(patient, queue):
        raise ValueError("the EHR refused the patient")

    for tool in (refused, refused_async):
        agent = horismos.Agent.from_files(
            root / "workflows" / "triage.ttl", root / "ontologies" / "ehr.ttl",
            tools={"ehr_client.assign_queue": tool, "ehr_client.notify_nurse": dict})
        world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
        run = agent.run(world, focus=":patient42")
        failed = run.error
        assert isinstance(failed, horismos.InstanceFailed) and failed.kind == "failed"
        assert failed.step == "http://example.org/ehr#QueuePatient"
        assert failed.tool == "http://example.org/ehr#ehr.assign_queue"
        assert isinstance(failed.cause, horismos.ToolError) and failed.cause.kind == "tool_error"
        assert isinstance(failed.cause.__cause__, ValueError)
        assert run.instances[0].error is failed
        assert str(run.instances[0].focus) == "http://example.org/ehr#patient42"


def test_a_world_closed_under_its_runs_fails_them_with_a_store_error_not_an_attribute_error():
    """A service shutting down closed its world with ``arun`` tasks still in flight: each
    failed with ``AttributeError: 'OxigraphStore' object has no attribute '_store'``, a bare
    Python error no handler of Horismos's errors catches. Each fails with a ``StoreError``
    saying the store was closed under it, and to close a world once its runs have ended."""
    import asyncio

    import pytest

    calls: list[str] = []

    async def scenario() -> None:
        agent, world, entered = _triage_held_in_call(calls)
        waiting = asyncio.create_task(agent.arun(world, focus=":patient42"))
        await entered.wait()
        world.close()
        started = agent.arun(world, focus=":patient43")
        with pytest.raises(horismos.UsageError, match="closed"):  # the world says it, as ever
            await started
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(scenario())

    async def in_flight() -> list[BaseException | horismos.Run]:
        agent, world, _ = _triage_held_in_call([])
        agent = horismos.Agent(agent.definitions, tools={
            "ehr_client.assign_queue": _slow_queue, "ehr_client.notify_nurse": dict})
        runs = [asyncio.create_task(agent.arun(world, focus=f)) for f in
                (":patient42", ":patient43")]
        await asyncio.sleep(0.05)
        world.close()
        return await asyncio.gather(*runs, return_exceptions=True)

    for outcome in asyncio.run(in_flight()):
        assert isinstance(outcome, horismos.StoreError), repr(outcome)
        assert "was closed while this was still using it" in str(outcome)


async def _slow_queue(patient, queue):
    import asyncio

    await asyncio.sleep(0.3)
    return {"queueRef": "Q-URGENT-1"}


def test_tools_given_as_a_list_is_a_usage_error_saying_to_give_a_mapping():
    """``Agent.from_files(..., tools=[assign_queue, notify_nurse])`` (a list, as ``--tools``
    takes a module) ended in ``TypeError: cannot convert dictionary update sequence element
    #0 to a sequence`` from ``dict()``. A UsageError says a mapping of NAME to function is
    wanted, showing the functions given in one."""
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parent.parent

    def assign_queue(patient, queue):
        return {"queueRef": "Q-URGENT-1"}

    def notify_nurse(patient, nurse, ref):
        return {"assignedNurse": nurse}

    with pytest.raises(horismos.UsageError, match=r"tools is a list: give a mapping") as e:
        horismos.Agent.from_files(root / "workflows" / "triage.ttl",
                                  root / "ontologies" / "ehr.ttl",
                                  tools=[assign_queue, notify_nurse])
    assert '{"assign_queue": assign_queue, "notify_nurse": notify_nurse}' in str(e.value)


def test_foci_run_at_once_when_an_arun_per_focus_is_gathered():
    """What ``arun``'s docstring tells an asyncio user: ``all=True`` runs the instances one
    after another, and an ``arun`` per focus, gathered, runs them at once on one world — each
    its own instance, every call made once."""
    import asyncio
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    calls: list[str] = []

    async def assign_queue(patient, queue):
        calls.append(str(patient))
        await asyncio.sleep(0.5)
        return {"queueRef": "Q-URGENT-1"}

    agent = horismos.Agent.from_files(
        root / "workflows" / "triage.ttl", root / "ontologies" / "ehr.ttl",
        tools={"ehr_client.assign_queue": assign_queue,
               "ehr_client.notify_nurse": lambda patient, nurse, ref: {"assignedNurse": nurse}})
    patients = "".join(f":p{i} a :Patient ; :acuity :urgent .\n" for i in range(10))
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    world.load_data("@prefix : <http://example.org/ehr#> .\n" + patients)
    assert "one after another" in horismos.Agent.arun.__doc__

    async def gathered() -> list[horismos.Run]:
        return await asyncio.gather(*(agent.arun(world, focus=f":p{i}", again=False)
                                      for i in range(10)))

    started = time.monotonic()
    runs = asyncio.run(gathered())
    assert time.monotonic() - started < 3  # ten 0.5 s calls at once, not 5 s one by one
    assert [r.status for r in runs] == ["completed"] * 10
    assert len({r.instance for r in runs}) == 10 and len(calls) == 10


def test_catalog_call_takes_a_trace_object_as_acall_does(tmp_path):
    """``catalog.acall(trace=...)`` took a ``Trace`` (one written over on purpose,
    ``Trace(path, overwrite=True)``) and ``catalog.call`` was typed to take only a path, so
    mypy refused the same call made synchronously. Both take one, and it is written."""
    import inspect
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    assert "Trace" in str(inspect.signature(horismos.Catalog.call).parameters["trace"])
    agent = horismos.Agent.from_files(
        root / "workflows" / "triage.ttl", root / "ontologies" / "ehr.ttl",
        tools={"ehr_client.assign_queue": lambda patient, queue: {"queueRef": "Q-URGENT-1"},
               "ehr_client.notify_nurse": dict})
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    path = tmp_path / "call.jsonl"
    path.write_text("an earlier file\n")
    result = agent.catalog.call("ehr.assign_queue", {"patient": ":patient42", "queue": ":urgent"},
                                world, trace=horismos.Trace(path, overwrite=True))
    assert result.status == "completed"
    assert [e["type"] for e in horismos.read_trace(path)] == ["header", "step", "end"]


def test_agent_options_of_the_wrong_shape_are_usage_errors_saying_what_to_give():
    """``mcp_servers=[...]`` ended in ``AttributeError: 'list' object has no attribute
    'items'``, ``allow_hosts=5`` in ``TypeError: 'int' object is not iterable``, and
    ``allow_modules=None`` (read as "none") in a TypeError too. Each wrong shape is a
    UsageError saying what to give; ``None`` is none, as leaving the option out is."""
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parent.parent
    defs = horismos.load_definitions([root / "workflows" / "triage.ttl",
                                      root / "ontologies" / "ehr.ttl"])
    with pytest.raises(horismos.UsageError, match="mcp_servers is a list: give a mapping"):
        horismos.Agent(defs, mcp_servers=[{"command": "python"}])
    with pytest.raises(horismos.UsageError, match="allow_hosts=5: give a list of names"):
        horismos.Agent(defs, allow_hosts=5)
    with pytest.raises(horismos.UsageError, match=r"allow_modules=.*: give a list of names"):
        horismos.Agent(defs, allow_modules=[None])
    agent = horismos.Agent(defs, allow_modules=None, allow_hosts=None)
    assert agent.tools.allowed_modules == ()
