"""Python bindings: how a declared tool reaches a function, and what happens when it misbehaves.

``python:dotted.path`` imports a function, ``python:name`` uses one registered with
``tools={...}``; sync and async functions both work. A tool that outlives its ``horis:timeout``
is cancelled (async) or abandoned with its late result discarded (sync); retries happen only
when declared; an error takes the step's ``horis:onError`` edge or fails the instance.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest
from conftest import ENGINE, EX, TRIAGE, facts, step_events
from rdflib import Literal

from horismos import Agent, InstanceFailed, OutcomeUnknown, ToolError, ToolTimeout, replay


@pytest.fixture
def clinic_tools(monkeypatch):
    monkeypatch.syspath_prepend(str(ENGINE))
    import clinic_tools

    monkeypatch.setattr(clinic_tools, "calls", [])
    return clinic_tools


def _with_binding(binding: str, timeout: str = "2s", extra: str = "") -> str:
    return (TRIAGE.replace('"python:assign"', f'"{binding}"')
            .replace('horis:timeout "2s"', f'horis:timeout "{timeout}"{extra}'))


@pytest.mark.parametrize(("func", "ref"), [("assign", "R-1"), ("assign_async", "R-2")])
def test_a_dotted_path_binding_imports_the_function_of_an_allowed_module(
        build, clinic_tools, func, ref):
    agent, world = build(_with_binding(f"python:clinic_tools.{func}"))
    agent = Agent(agent.definitions, allow_modules=["clinic_tools"])

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert clinic_tools.calls == [(func, {"patient": EX.p1, "queue": EX.urgent})]
    assert (EX.p1, EX.ref, Literal(ref)) in world.graph


def test_a_registered_name_uses_the_callable_given_to_agent(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-5"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert recorder.count("assign") == 1
    assert (EX.p1, EX.ref, Literal("R-5")) in world.graph


def test_a_registered_async_tool_is_awaited(build):
    seen = []

    async def assign(patient, queue):
        await asyncio.sleep(0)
        seen.append((patient, queue))
        return {"ref": "R-6"}

    agent, world = build(TRIAGE, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert seen == [(EX.p1, EX.urgent)]
    assert (EX.p1, EX.ref, Literal("R-6")) in world.graph



def test_an_object_whose_call_is_async_is_awaited(build):
    """A client object registered as the tool, its ``__call__`` an ``async def``, was called
    as a sync function in a thread: the coroutine it made was never awaited (the tool never
    ran, with a RuntimeWarning) and the step failed, "returned coroutine". It is awaited as
    an async function is."""

    class Client:
        def __init__(self) -> None:
            self.seen: list[tuple[object, object]] = []

        async def __call__(self, patient, queue):
            await asyncio.sleep(0)
            self.seen.append((patient, queue))
            return {"ref": "R-7"}

    client = Client()
    agent, world = build(TRIAGE, tools={"assign": client})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed", run.error
    assert client.seen == [(EX.p1, EX.urgent)]
    assert (EX.p1, EX.ref, Literal("R-7")) in world.graph


def test_a_tool_that_raises_keeps_its_exception_as_the_cause(build):
    """A tool that raised failed its step with ``ToolError("… raised KeyError: 'ward'")`` and
    nothing more: the tool's own exception and traceback were dropped, so a service logging
    ``run.error`` could not tell which line of its tool failed. The ToolError's
    ``__cause__`` is the tool's exception, and a logged traceback shows the tool's line."""
    import traceback

    def lookup(table):
        return table["ward"]

    def assign(patient, queue):
        return {"ref": lookup({})}

    agent, world = build(TRIAGE, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    error = run.steps[0].error
    assert isinstance(error, ToolError) and "raised KeyError: 'ward'" in str(error)
    assert isinstance(error.__cause__, KeyError)
    assert 'return table["ward"]' in "".join(traceback.format_exception(error))


REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")


def test_a_sync_tool_sees_the_callers_context_variables(build):
    """A service sets a ContextVar per request (its id, a tracing span) and logs it in its
    tools: an async tool saw it, a sync one — run on a worker thread — saw the default, so its
    logs lost the request. Both see what the caller of ``run`` (or ``arun``) set."""
    seen: list[str] = []

    def assign(patient, queue):
        seen.append(REQUEST.get())
        return {"ref": "R-8"}

    agent, world = build(TRIAGE, tools={"assign": assign})

    REQUEST.set("request-1")
    assert agent.run(world, focus=str(EX.p1)).status == "completed"

    async def handler() -> None:
        REQUEST.set("request-2")
        assert (await agent.arun(world, focus=str(EX.p2))).status == "completed"

    asyncio.run(handler())
    assert seen == ["request-1", "request-2"]

def test_datatype_arguments_arrive_as_python_values(build, recorder):
    defs = """
:t.score a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "age" ; horis:type xsd:integer ] ;
                  horis:arg [ horis:name "name" ; horis:type xsd:string ] ] ;
    horis:binding "python:score" .
:W a horis:Workflow ; horis:focusType :Patient ; horis:start :Score .
:Score a horis:ActionStep ; horis:tool :t.score ;
    horis:requires "?this :age ?age ; :name ?name ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    agent, world = build(defs, ':p1 a :Patient ; :age 42 ; :name "Ada" .',
                         tools={"score": recorder.tool("score", None)})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    (args,) = recorder.args("score")
    assert args == {"patient": EX.p1, "age": 42, "name": "Ada"}
    assert type(args["age"]) is int and type(args["name"]) is str


def test_an_argument_not_sent_is_not_passed_and_still_takes_the_effect(build):
    # The function has no parameter for the patient: it is read from the graph, type-checked
    # and the effect hangs on it, but with horis:sent false it never reaches the call.
    seen = []

    def assign(queue):
        seen.append(queue)
        return {"ref": "R-9"}

    defs = TRIAGE.replace('horis:arg [ horis:name "patient" ; horis:type :Patient ]',
                          'horis:arg [ horis:name "patient" ; horis:type :Patient ; '
                          'horis:sent false ]')
    agent, world = build(defs, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed", run.error
    assert seen == [EX.urgent]
    assert (EX.p1, EX.ref, Literal("R-9")) in world.graph
    (event,) = step_events(run)
    assert event["args"] == [{"patient": EX.p1.n3(), "queue": EX.urgent.n3()}]


def test_an_unresolvable_binding_is_refused_before_any_step(build):
    agent, world = build(_with_binding("python:no_such_module_xyz.assign"))
    before = world.canonical()

    with pytest.raises(ToolError, match="no_such_module_xyz"):
        agent.run(world, focus=str(EX.p1))
    assert world.canonical() == before


def test_an_async_tool_past_its_timeout_is_cancelled(build):
    state = {"cancelled": False, "finished": False}

    async def assign(patient, queue):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        state["finished"] = True
        return {"ref": "R-1"}

    agent, world = build(_with_binding("python:assign", "50ms"), tools={"assign": assign})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert state == {"cancelled": True, "finished": False}
    assert run.status == "failed"
    (record,) = run.steps
    assert record.status == "timed_out"
    # sent and never answered: a non-idempotent tool's outcome is unknown
    assert isinstance(record.error, OutcomeUnknown)
    assert isinstance(record.error.cause, ToolTimeout)
    assert isinstance(run.error.cause, OutcomeUnknown)
    assert facts(world) == before


def test_a_plain_function_handing_back_a_coroutine_is_awaited_as_the_async_tool_it_wraps(
        build):
    """A decorator that forgets its ``async`` (``def logged(**kw): return tool(**kw)``) makes
    an async tool a plain function returning a coroutine. The step failed "returned
    coroutine", the coroutine never run (a ``RuntimeWarning`` at collection), and a tool that
    is not idempotent was held in doubt though it never acted. It is awaited, as the tool it
    wraps, its timeout holding as an async tool's does."""
    import functools
    import warnings

    async def assign(patient, queue):
        await asyncio.sleep(0)
        return {"ref": "R-1"}

    def logged(func):
        @functools.wraps(func)
        def wrapper(**kwargs):  # the decorator's own function is a plain one
            return func(**kwargs)
        return wrapper

    async def never(patient, queue):
        await asyncio.sleep(30)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "coroutine ... was never awaited"
        agent, world = build(TRIAGE, tools={"assign": logged(assign)})
        run = agent.run(world, focus=str(EX.p1))
        assert run.status == "completed", run.error
        assert (EX.p1, EX.ref, Literal("R-1")) in world.graph

        agent, world = build(_with_binding("python:assign", "50ms"),
                             tools={"assign": logged(never)})
        run = agent.run(world, focus=str(EX.p1))
        assert run.steps[0].status == "timed_out"


def test_an_async_tool_that_swallows_its_timeouts_cancel_has_its_late_answer_discarded(
        build, tmp_path):
    """An async tool that catches the ``CancelledError`` its ``horis:timeout`` sends and
    answers anyway (a ``try/except`` around its whole body, a cleanup that awaits) had its
    late answer land: the step completed past its timeout, where a sync tool's and an inline
    tool's late answers are discarded. It is discarded too: a timeout, nothing landed, a tool
    that is not idempotent held in doubt, and the trace replays the same."""
    async def assign(patient, queue):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)  # goes on past its timeout
        return {"ref": "R-9"}

    agent, world = build(_with_binding("python:assign", "50ms"), tools={"assign": assign})
    before = facts(world)
    run = agent.run(world, focus=str(EX.p1), trace=tmp_path / "late.jsonl")
    (record,) = run.steps
    assert record.status == "timed_out", record.error
    assert isinstance(record.error, OutcomeUnknown)
    assert isinstance(record.error.cause, ToolTimeout)
    assert facts(world) == before
    assert replay(tmp_path / "late.jsonl", agent).diverged is False


def test_a_sync_tool_past_its_timeout_is_abandoned_and_its_late_result_discarded(build):
    release, done = threading.Event(), threading.Event()

    def assign(patient, queue):
        release.wait(10)
        done.set()
        return {"ref": "R-99"}  # one the shape allows: discarded all the same

    agent, world = build(_with_binding("python:assign", "50ms"), tools={"assign": assign})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    # the run does not wait for the abandoned thread
    assert not done.is_set()
    (record,) = run.steps
    assert record.status == "timed_out"
    assert isinstance(record.error, OutcomeUnknown)
    assert isinstance(record.error.cause, ToolTimeout)
    assert "50ms" in str(record.error) or "0.05" in str(record.error)
    assert run.status == "failed"
    release.set()
    assert done.wait(5)
    assert facts(world) == before  # the late result never lands
    assert (EX.p1, EX.ref, None) not in world.graph


@pytest.mark.parametrize("delay", [0.0, 0.05])
@pytest.mark.parametrize("fails", [False, True])
def test_a_sync_tool_answers_the_same_quick_or_slow(build, delay, fails):
    """A sync call is waited for in place a moment, then through the event loop: a result or
    an error arrives the same either way, from the worker thread, not the loop's."""
    threads = []

    def assign(patient, queue):
        threads.append(threading.current_thread())
        threading.Event().wait(delay)
        if fails:
            raise ConnectionError("EHR hiccup")
        return {"ref": "R-1"}

    agent, world = build(TRIAGE, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert threads and threads[0] is not threading.main_thread()
    (record,) = run.steps
    if fails:
        assert record.status == "failed"
        assert "ConnectionError: EHR hiccup" in str(record.error)
    else:
        assert record.status == "completed"
        assert (EX.p1, EX.ref, Literal("R-1")) in world.graph


def test_a_declared_retry_recovers_from_one_failure(build):
    calls = []

    def assign(patient, queue):
        calls.append(patient)
        if len(calls) == 1:
            raise ConnectionError("EHR hiccup")
        return {"ref": "R-1"}

    agent, world = build(_with_binding("python:assign",
                                       extra=" ; horis:retries 1 ; horis:idempotent true"),
                         tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    (record,) = run.steps
    assert record.attempts == 2
    assert len(calls) == 2
    assert (EX.p1, EX.ref, Literal("R-1")) in world.graph


def test_without_retries_one_failure_fails_the_step(build):
    calls = []

    def assign(patient, queue):
        calls.append(patient)
        if len(calls) == 1:
            raise ConnectionError("EHR hiccup")
        return {"ref": "R-1"}

    agent, world = build(TRIAGE, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert run.steps[0].status == "failed"
    assert run.steps[0].attempts == 1
    assert len(calls) == 1


ON_ERROR = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:onError :AskHuman .') + """
:t.ask a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:asserts [ horis:property :needsReview ; horis:value true ] ] ;
    horis:binding "python:ask" .
:AskHuman a horis:ActionStep ; horis:tool :t.ask ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_a_tool_error_takes_the_on_error_edge(build, recorder):
    agent, world = build(ON_ERROR, tools={
        "assign": recorder.tool("assign", raises=RuntimeError("EHR is down")),
        "ask": recorder.tool("ask", None)})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert [(s.step, s.status) for s in run.steps] == [(EX.Queue, "failed"),
                                                      (EX.AskHuman, "completed")]
    assert run.steps[0].next == EX.AskHuman
    assert isinstance(run.steps[0].error, ToolError)
    assert recorder.args("ask") == [{"patient": EX.p1}]
    assert (EX.p1, EX.needsReview, Literal(True)) in world.graph
    assert run.error is None


def test_without_on_error_the_instance_fails_with_the_typed_cause(build, recorder):
    agent, world = build(TRIAGE, tools={
        "assign": recorder.tool("assign", raises=ValueError("no such queue"))})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error, InstanceFailed)
    assert type(run.error.cause) is ToolError
    assert "ValueError" in str(run.error.cause) and "no such queue" in str(run.error.cause)
    assert run.error.cause.step == str(EX.Queue)
    assert run.error.cause.tool == str(EX["t.assign"])
    assert run.instances[0].current == EX.Queue


def test_a_tool_returning_something_other_than_a_mapping_is_a_tool_error(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", "R-1")})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, ToolError)
    assert "mapping" in str(run.error.cause)
    assert facts(world) == before


def test_a_tool_that_raises_timeout_error_itself_is_not_said_to_have_run_out_of_time(
        build, tmp_path):
    """Its own TimeoutError (a request of its timing out) was reported as "did not answer
    within 30s" the moment it was raised. Its trace replays the same."""
    def assign(patient, queue):
        raise TimeoutError("the registry did not answer")

    agent, world = build(_with_binding("python:assign", "30s", " ; horis:idempotent true"),
                         tools={"assign": assign})
    run = agent.run(world, focus=str(EX.p1), trace=tmp_path / "t.jsonl")
    (rec,) = run.instances[0].steps
    assert rec.status == "failed", rec.status
    assert "raised TimeoutError: the registry did not answer" in str(rec.error)
    assert "did not answer within" not in str(rec.error)
    assert not replay(tmp_path / "t.jsonl", agent).diverged
