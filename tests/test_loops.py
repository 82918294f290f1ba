"""Loops end (issue 12, item 6).

An ActionStep whose ``horis:next`` leads back to itself while its precondition keeps holding
would run forever — a paging tool that never says it is done. Every instance has a step budget
(``horis:maxSteps`` on the workflow, default 1000); past it the instance fails with
:class:`StepBudgetExceeded` naming the cycle, and the run goes on with its other instances.
``validate`` warns about a cycle through a tool that is not idempotent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Namespace

from horismos import (
    Agent,
    AuthoringError,
    InstanceFailed,
    StepBudgetExceeded,
    World,
    load_definitions,
)
from horismos._model import DEFAULT_MAX_STEPS

EX = Namespace("http://example.org/feed#")

PREFIXES = """\
@prefix :      <http://example.org/feed#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Feed a owl:Class .
"""

WORLD = PREFIXES + """
:f1 a :Feed ; :hasMore true .
:f2 a :Feed ; :hasMore true .
"""


def paging(budget: str = " ; horis:maxSteps 25", idempotent: str = "true") -> str:
    """Fetch a page while the feed has more; the tool never says it has no more."""
    return PREFIXES + f"""
:t.fetch a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "feed" ; horis:type :Feed ] ] ;
    horis:effect [ horis:subject "feed" ;
                   horis:asserts [ horis:property :fetchedAt ; horis:value horis:now ] ;
                   horis:asserts [ horis:property :page ; horis:type xsd:integer ;
                                   horis:many true ] ] ;
    horis:binding "python:fetch" ; horis:idempotent {idempotent} .
:Paging a horis:Workflow ; horis:focusType :Feed ; horis:start :Page {budget} .
:Page a horis:ActionStep ; horis:tool :t.fetch ;
    horis:requires "?this :hasMore true ." ;
    horis:bind [ horis:arg "feed" ; horis:var "this" ] ;
    horis:next :Page .
"""


def paging_that_may_end(budget: str = " ; horis:maxSteps 25", idempotent: str = "true") -> str:
    """:func:`paging` whose pattern reads what the tool writes (a page 0, which never comes):
    a loop that could end, so a tool that is not idempotent on it is warned of, not refused."""
    return paging(budget, idempotent).replace(
        '"?this :hasMore true ."', '"?this :hasMore true . FILTER NOT EXISTS { ?this :page 0 }"'
    )


def fetcher(calls: list[Any]):
    def fetch(feed: Any) -> dict[str, Any]:
        calls.append(feed)
        return {"page": [len(calls)]}
    return fetch


def write(tmp_path: Path, defs: str) -> None:
    (tmp_path / "defs.ttl").write_text(defs, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")


def test_a_paging_loop_ends_at_the_step_budget_naming_the_cycle(tmp_path) -> None:
    write(tmp_path, paging())
    calls: list[Any] = []
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"fetch": fetcher(calls)})
    world = World.from_files(tmp_path / "world.ttl")

    run = agent.run(world, all=True)

    assert [i.status for i in run.instances] == ["failed", "failed"]   # the run went on
    assert len(calls) == 2 * 25
    for inst in run.instances:
        assert isinstance(inst.error, InstanceFailed)
        budget = inst.error.cause
        assert isinstance(budget, StepBudgetExceeded)
        assert budget.max_steps == 25
        assert budget.cycle == (str(EX.Page), str(EX.Page))
        assert ":Page → :Page" in str(budget) and "horis:maxSteps" in str(budget)
        assert len(inst.steps) == 26 and inst.steps[-1].error is budget
        # :Page did not fail: the run stopped it ("declares no horis:onError" was beside it)
        assert str(inst.error).startswith("the run stopped the instance at :Page: the "
                                          "instance ran the 25 steps"), inst.error


def test_the_default_budget_is_documented() -> None:
    guide = Path(__file__).parent.parent / "docs" / "guide" / "doing-no-harm.md"
    text = guide.read_text(encoding="utf-8")
    assert "horis:maxSteps" in text and f"{DEFAULT_MAX_STEPS} steps" in text


def test_an_unbudgeted_workflow_gets_the_default(tmp_path) -> None:
    write(tmp_path, paging(budget=""))
    defs = load_definitions([tmp_path / "defs.ttl"])
    assert defs.workflows[EX.Paging].max_steps == DEFAULT_MAX_STEPS


def test_cli_run_of_an_endless_loop_stops_with_one_line_naming_it(tmp_path) -> None:
    write(tmp_path, paging(" ; horis:maxSteps 10"))
    (tmp_path / "feeds.py").write_text(
        "def fetch(feed):\n    return {'page': [1]}\n", encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "feeds",
                        "--focus", ":f1", timeout=120)
    out = p.stdout + p.stderr
    assert "Traceback" not in out
    assert p.returncode == 1, out
    assert ":Page → :Page" in out and "10 steps" in out


@pytest.mark.parametrize(("idempotent", "warned"), [("false", True), ("true", False)])
def test_validate_warns_about_a_cycle_through_a_non_idempotent_tool(tmp_path, idempotent,
                                                                    warned) -> None:
    write(tmp_path, paging_that_may_end(idempotent=idempotent))
    p = horismos_forked(tmp_path, "validate", "defs.ttl", timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert ("on a cycle (:Page → :Page)" in out) is warned, out
    if warned:
        assert "t.fetch is not idempotent" in out and "horis:maxSteps, 25 here" in out


def test_cli_run_warns_of_the_cycle_before_its_first_call_as_validate_does(tmp_path) -> None:
    """`run` said nothing of what `validate` warns of, so a modeler who ran without validating
    first saw the non-idempotent tool called round the loop with no word before it. The
    warnings `validate --world` gives now come first, on stderr; the world's own terms are not
    reported undeclared (:hasMore is in it), and `--quiet` leaves them out."""
    write(tmp_path, paging_that_may_end(" ; horis:maxSteps 3", idempotent="false"))
    (tmp_path / "feeds.py").write_text(
        "def fetch(feed):\n    print('called', flush=True)\n    return {'page': [1]}\n",
        encoding="utf-8")
    args = ["run", "defs.ttl", "--world", "world.ttl", "--tools", "feeds", "--focus", ":f1"]
    p = horismos_forked(tmp_path, *args, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    warned = [line for line in p.stderr.splitlines() if ": warning: " in line]
    assert any("on a cycle (:Page → :Page)" in w and "t.fetch is not idempotent" in w
               and w.startswith("defs.ttl:") for w in warned), p.stderr
    assert not any(":hasMore" in w for w in warned), warned  # the world uses it
    validated = horismos_forked(tmp_path, "validate", "defs.ttl", "--world", "world.ttl",
                                timeout=120)
    assert warned == [line for line in validated.stdout.splitlines() if ": warning: " in line]
    quiet = horismos_forked(tmp_path, *args, "--quiet", timeout=120)
    assert quiet.returncode == 1 and ": warning: " not in quiet.stdout + quiet.stderr


def test_cli_serve_says_the_warnings_once_at_start(tmp_path) -> None:
    """A server is where the definitions run for good: it says what `validate --world` warns
    of once, on stderr before it serves, as `run` does before its first step."""
    write(tmp_path, paging_that_may_end(" ; horis:maxSteps 3", idempotent="false"))
    (tmp_path / "feeds.py").write_text(
        "def fetch(feed):\n    return {'page': [1]}\n", encoding="utf-8")
    p = horismos_forked(tmp_path, "serve", "defs.ttl", "--world", "world.ttl", "--tools", "feeds",
                        timeout=120)  # stdio: ends at EOF
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    served = next(i for i, line in enumerate(lines) if line.startswith("horismos serve: 1 tool"))
    warned = [i for i, line in enumerate(lines) if "on a cycle (:Page → :Page)" in line]
    assert len(warned) == 1 and warned[0] < served, p.stderr
    assert not any(":hasMore" in line for line in lines), p.stderr  # the world uses it


def test_the_budget_counts_the_steps_of_every_resume(tmp_path) -> None:
    """Page, then a pause a resume ends, then Page again: each process runs a few steps, and
    the instance still stops at its budget, naming the loop."""
    defs = paging(" ; horis:maxSteps 5").replace(
        "    horis:next :Page .", "    horis:next :Pause .\n"
        ':Pause a horis:WaitStep ; horis:reason "a breather" ; horis:wake horis:OperatorInput ;'
        ' horis:delivery horis:Silent ; horis:next :Page .')
    write(tmp_path, defs)
    calls: list[Any] = []
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"fetch": fetcher(calls)})
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, focus=EX.f1)
    assert run.status == "waiting"                      # steps 1-2: Page, Pause
    assert agent.resume(world, run.instance).status == "waiting"    # 3-5: Pause, Page, Pause
    last = agent.resume(world, run.instance)            # 6: over the budget
    assert last.status == "failed" and len(calls) == 2
    budget = last.error.cause
    assert isinstance(budget, StepBudgetExceeded)
    assert budget.cycle == (str(EX.Pause), str(EX.Page), str(EX.Pause))


BRANCHED = PREFIXES + """
:t.fetch a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "feed" ; horis:type :Feed ] ] ;
    horis:effect [ horis:subject "feed" ;
                   horis:asserts [ horis:property :page ; horis:type xsd:integer ;
                                   horis:many true ] ] ;
    horis:binding "python:fetch" ; horis:idempotent true .
:Branched a horis:Workflow ; horis:focusType :Feed ; horis:start :Choose ;
    horis:maxSteps 2 .
:Choose a horis:DecisionStep ;
    horis:when [ horis:requires "?this :hasMore true ." ; horis:next :First ] ;
    horis:otherwise :Second .
:First a horis:ActionStep ; horis:tool :t.fetch ;
    horis:bind [ horis:arg "feed" ; horis:var "this" ] ; horis:next :Second .
:Second a horis:ActionStep ; horis:tool :t.fetch ;
    horis:bind [ horis:arg "feed" ; horis:var "this" ] .
"""


def test_a_budget_too_small_for_a_path_without_a_loop_does_not_name_one(tmp_path) -> None:
    """The shortest way to an end (:Choose, then :Second) fits in two steps, so it loads;
    the way through :First and :Second does not. The error said it was "going round :Second",
    sending the author to look for a loop there is none of."""
    write(tmp_path, BRANCHED)
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"fetch": fetcher([])})
    run = agent.run(World.from_files(tmp_path / "world.ttl"), focus=EX.f1)
    assert run.status == "failed"
    budget = run.instances[0].error.cause
    assert isinstance(budget, StepBudgetExceeded) and budget.max_steps == 2
    assert "going round" not in str(budget) and "on no loop" in str(budget)
    assert "raise horis:maxSteps" in str(budget)


@pytest.mark.parametrize(("requires", "warned"), [
    pytest.param("?this :hasMore true .", True, id="reads-nothing-written"),
    pytest.param("?this :hasMore true . FILTER NOT EXISTS { ?this :fetchedAt ?t }", False,
                 id="reads-what-the-tool-writes"),
    pytest.param("?this :hasMore true . FILTER NOT EXISTS { ?this :touched ?t }", False,
                 id="reads-a-super-property-of-it"),
    pytest.param("?this ?p true .", False, id="reads-what-cannot-be-told"),
    # an OPTIONAL never makes the pattern fail: what only it reads ends nothing (the expense
    # notice reading the payment's reference paid the claimant again each time round)
    pytest.param("?this :hasMore true . OPTIONAL { ?this :fetchedAt ?t . BIND(STR(?t) AS ?s) }",
                 True, id="reads-what-the-tool-writes-only-in-an-optional"),
    pytest.param("?this :hasMore true . OPTIONAL { ?this :fetchedAt ?t } FILTER (!BOUND(?t))",
                 False, id="an-optional-a-filter-requires-empty"),
    pytest.param("?this :hasMore true . OPTIONAL { ?this :fetchedAt ?t } ?t :x ?y .", False,
                 id="an-optional-whose-variable-a-later-triple-reads"),
    pytest.param("?this a :Feed ; :hasMore true .", True, id="tests-a-class-nothing-entails"),
    pytest.param("?this :hasMore true . FILTER NOT EXISTS { ?this a :Seen }", False,
                 id="tests-a-class-the-domain-of-what-it-writes-entails"),
])
def test_validate_warns_about_a_cycle_nothing_on_it_can_end(tmp_path, requires, warned) -> None:
    """An idempotent tool on a loop whose horis:requires reads nothing the loop writes: it
    passed validate, then every instance called the tool until its step budget ran out and
    failed. The loop is told where to stop; one whose pattern reads what its tool writes
    (or a property that is entailed from it) can end, and is left alone."""
    defs = paging(idempotent="true").replace('"?this :hasMore true ."', f'"{requires}"')
    defs += ":fetchedAt <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> :touched .\n"
    defs += ":touched <http://www.w3.org/2000/01/rdf-schema#domain> :Seen .\n"
    write(tmp_path, defs)
    found = load_definitions([tmp_path / "defs.ttl"]).warnings
    endless = [p for p in found if "never ends by itself" in p.message]
    assert bool(endless) is warned, "\n".join(map(str, found))
    if warned:
        (p,) = endless
        line = next(i for i, x in enumerate(defs.splitlines(), 1) if "horis:next :Page" in x)
        assert (p.node, p.line) == (":Page", line)
        assert p.message.startswith("the cycle :Page → :Page never ends by itself: no "
                                    "horis:requires or rule on it reads what its tools "
                                    "(:t.fetch) write")
        assert p.hint is not None and "FILTER NOT EXISTS on a property its tool writes" in p.hint


def test_a_cycle_that_never_ends_through_a_tool_that_is_not_idempotent_is_not_run(
    tmp_path,
) -> None:
    """A loop whose pattern reads nothing its tool writes goes round until the step budget is
    spent; through a tool that is not idempotent, each instance charged, sent or booked that
    many times (1,000 by default), and validate only warned. It is an error now: `validate`
    fails naming the cycle and the tool, and `run` calls nothing."""
    write(tmp_path, paging(idempotent="false"))
    (tmp_path / "feeds.py").write_text(
        "def fetch(feed):\n    open('called', 'a').write('x')\n    return {'page': [1]}\n",
        encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "defs.ttl", timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "Traceback" not in out, out
    (error,) = [line for line in out.splitlines() if ": error: " in line]
    assert error.startswith("defs.ttl:") and "the cycle :Page → :Page never ends" in error
    assert "t.fetch is not idempotent" in error, error
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "feeds",
                          "--focus", ":f1", timeout=120)
    assert ran.returncode == 2 and "Traceback" not in ran.stdout + ran.stderr, ran.stderr
    assert not (tmp_path / "called").exists()  # nothing called
    approved = paging(idempotent="false").replace(
        "horis:idempotent false", "horis:idempotent false ; horis:requiresApproval true")
    write(tmp_path, approved)  # a person says yes to each call: warned of, not refused
    found = load_definitions([tmp_path / "defs.ttl"]).warnings
    assert any("never ends by itself" in p.message for p in found), found


def test_a_cycle_ended_only_by_an_optional_read_through_a_tool_that_acts_is_not_run(
    tmp_path,
) -> None:
    """The reading of what the tool writes inside an OPTIONAL (a notice quoting the payment's
    reference) passed for a guard: validate only warned that the tool is called each time
    round, and each instance paid until the shapes refused a second reference."""
    write(tmp_path, paging(idempotent="false").replace(
        '"?this :hasMore true ."', '"?this :hasMore true . OPTIONAL { ?this :fetchedAt ?t }"'))
    with pytest.raises(AuthoringError) as e:
        load_definitions([tmp_path / "defs.ttl"])
    (error,) = [p for p in e.value.problems if p.severity == "error"]
    assert "the cycle :Page → :Page never ends by itself" in error.message
    assert "t.fetch is not idempotent" in error.message


@pytest.mark.parametrize(("wake", "warned"), [("horis:OperatorInput", False),
                                              ("horis:Timer", True)])
def test_a_loop_through_a_wait_a_person_answers_is_no_unattended_cycle(tmp_path, wake,
                                                                      warned) -> None:
    """examples/fhir: a dispense that fails waits for a pharmacist, who resumes it to decide
    again. Each time round is a person's answer, yet `run` and `validate` warned that the
    tool is called "until the instance runs out of steps", and the example's README showed
    no such warning. A wait a timer ends goes round unattended: still warned of."""
    timeout = ' ; horis:timeout "1h"' if wake == "horis:Timer" else ""
    defs = paging(idempotent="false").replace("horis:next :Page .", f"""horis:onError :Review .
:Review a horis:WaitStep ; horis:reason "a person checks the feed" ;
    horis:wake {wake} ; horis:delivery horis:Silent ; horis:next :Page{timeout} .""")
    write(tmp_path, defs)
    found = load_definitions([tmp_path / "defs.ttl"]).warnings
    cycles = [p for p in found if "is on a cycle" in p.message]
    assert bool(cycles) is warned, "\n".join(map(str, found))


DISPENSING = PREFIXES + """
:t.check a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "feed" ; horis:type :Feed ] ] ;
    horis:effect [ horis:subject "feed" ;
                   horis:asserts [ horis:property :checkedAt ; horis:value horis:now ] ] ;
    horis:binding "python:check" ; horis:idempotent true .
:t.dispense a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "feed" ; horis:type :Feed ] ] ;
    horis:effect [ horis:subject "feed" ;
                   horis:asserts [ horis:property :dispensedAt ; horis:value horis:now ] ] ;
    horis:binding "python:dispense" ; horis:idempotent false .
:Dispensing a horis:Workflow ; horis:focusType :Feed ; horis:start :Check .
:Check a horis:ActionStep ; horis:tool :t.check ;
    horis:bind [ horis:arg "feed" ; horis:var "this" ] ; horis:next :Dispense .
:Dispense a horis:ActionStep ; horis:tool :t.dispense ;
    horis:requires "FILTER NOT EXISTS { ?this :dispensedAt GUARD }" ;
    horis:bind [ horis:arg "feed" ; horis:var "this" ] ; horis:next :Check .
"""


@pytest.mark.parametrize(("guard", "warned"), [("?t", False), ("'never'", True)])
def test_a_loop_through_a_step_its_own_guard_shuts_is_not_warned_of_calling_it_again(
        tmp_path, guard, warned) -> None:
    """:Check → :Dispense → :Check, the dispense guarded by FILTER NOT EXISTS on what its own
    tool writes: the second time round it stops there, blocked, and the tool was called once.
    validate warned that "each time round calls it again", which is what the guard prevents;
    only the guard's own warning (the check acts again first) is right. A guard on one value
    the tool never writes stops nothing: still warned of."""
    write(tmp_path, DISPENSING.replace("GUARD", guard))
    found = load_definitions([tmp_path / "defs.ttl"]).warnings
    assert any("is on a cycle" in p.message for p in found) is warned, found
    assert any("stops at :Dispense, blocked" in p.message for p in found) is not warned, found
    if warned:
        return
    dispensed: list[Any] = []
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={
        "check": lambda feed: {}, "dispense": lambda feed: dispensed.append(feed) or {}})
    run = agent.run(World.from_files(tmp_path / "world.ttl"), workflow=EX.Dispensing,
                    focus=EX.f1)
    assert run.status == "blocked"
    assert [(s.step, s.status) for s in run.steps] == [
        (EX.Check, "completed"), (EX.Dispense, "completed"), (EX.Check, "completed"),
        (EX.Dispense, "blocked")], run.steps
    assert dispensed == [EX.f1]


URGENT = DISPENSING.replace(
    ":Dispensing a horis:Workflow ; horis:focusType :Feed ; horis:start :Check .", """
:Dispensing a horis:Workflow ; horis:focusType :Feed ; horis:start :Decide .
:Decide a horis:DecisionStep ;
    horis:when [ horis:requires "?this :hasMore true" ; horis:next :Dispense ; horis:order 1 ] ;
    horis:otherwise :Check .""").replace(
    "horis:bind [ horis:arg \"feed\" ; horis:var \"this\" ] ; horis:next :Dispense .",
    "horis:requires \"FILTER NOT EXISTS { ?this :checkedAt ?t }\" ;\n"
    "    horis:bind [ horis:arg \"feed\" ; horis:var \"this\" ] ; horis:next :Decide .").replace(
    "horis:bind [ horis:arg \"feed\" ; horis:var \"this\" ] ; horis:next :Check .",
    "horis:bind [ horis:arg \"feed\" ; horis:var \"this\" ] ; horis:next :Decide .")


@pytest.mark.parametrize("guard", ["", "FILTER NOT EXISTS { ?this :dispensedAt ?t }"])
def test_a_decision_branch_that_loops_alone_is_judged_by_its_own_steps(tmp_path, guard) -> None:
    """:Decide sends a feed with more to :Dispense and back to :Decide, any other to :Check
    and back. The check's guard reads what the check writes, so the loop check, judging all
    three steps as one, passed the definitions; but nothing on :Decide → :Dispense → :Decide
    reads what the dispense writes, and `run` dispensed 500 times, to the step budget. That
    cycle is now judged alone: an error, and nothing runs. Guarded itself, it ends."""
    write(tmp_path, URGENT.replace("GUARD", "?t").replace(
        'horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;',
        f'horis:requires "{guard}" ;' if guard else ""))
    (tmp_path / "tools.py").write_text(
        "def check(feed):\n    return {}\n"
        "def dispense(feed):\n    open('dispensed', 'a').write('x')\n    return {}\n",
        encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "defs.ttl", timeout=120)
    errors = [line for line in p.stdout.splitlines() if ": error: " in line]
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools",
                          "tools", "--focus", ":f1", timeout=120)
    assert "Traceback" not in p.stdout + p.stderr + ran.stdout + ran.stderr
    if guard:
        assert p.returncode == 0 and not errors, p.stdout
        assert (tmp_path / "dispensed").read_text() == "x"
        return
    assert p.returncode == 1, p.stdout
    (error,) = errors
    assert "the cycle :Dispense → :Decide → :Dispense never ends" in error, error
    assert "t.dispense is not idempotent" in error and "it is not run" in error
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert not (tmp_path / "dispensed").exists()
