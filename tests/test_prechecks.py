"""What a run checks before its first step is worked out once per agent where it depends on
the definitions alone, and on every run where it does not (horismos._prechecks)."""

from __future__ import annotations

import pytest
from conftest import EX, TRIAGE, Build, Recorder

from horismos import ToolError
from horismos._bindings import python as python_bindings
from horismos._bindings.http import HttpBinding


def test_a_fitting_function_is_inspected_on_the_first_run_only(
        build: Build, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    inspected: list[str] = []
    real = python_bindings.signature_problems

    def counting(tool, func):  # type: ignore[no-untyped-def]
        inspected.append(tool.name)
        return real(tool, func)

    monkeypatch.setattr(python_bindings, "signature_problems", counting)
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    assert agent.run(world, focus=str(EX.p1)).status == "completed"
    assert agent.run(world, focus=str(EX.p2)).status == "completed"
    assert inspected == ["t.assign"]
    assert recorder.count("assign") == 2


def test_a_function_that_does_not_fit_is_refused_on_every_run_in_the_same_words(
        build: Build) -> None:
    called: list[object] = []

    def assign(patient, level):  # the Turtle says "queue"
        called.append(patient)

    agent, world = build(TRIAGE, tools={"assign": assign})
    messages = []
    for focus in (EX.p1, EX.p2):
        with pytest.raises(ToolError, match="no parameter 'queue'") as e:
            agent.run(world, focus=str(focus))
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert called == []


def test_an_http_binding_is_checked_on_every_run(
        build: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []

    async def check(self: HttpBinding) -> None:
        checked.append(self.tool.name)
        raise ToolError("refused by the test")

    monkeypatch.setattr(HttpBinding, "check", check)
    agent, world = build(TRIAGE.replace("python:assign", "https://example.org/assign"))
    for focus in (EX.p1, EX.p2):
        with pytest.raises(ToolError, match="refused by the test"):
            agent.run(world, focus=str(focus))
    assert checked == ["t.assign", "t.assign"]


def test_a_function_registered_anew_under_the_name_is_checked_anew(
        build: Build, recorder: Recorder) -> None:
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    assert agent.run(world, focus=str(EX.p1)).status == "completed"

    def assign(patient, level):  # the Turtle says "queue"
        return {"ref": "R-2"}

    agent.tools["assign"] = assign
    with pytest.raises(ToolError, match="no parameter 'queue'"):
        agent.run(world, focus=str(EX.p2))
    assert recorder.count("assign") == 1
