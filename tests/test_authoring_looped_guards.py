"""A guard a loop's own way round trips: a refill that loops back from the wait for the next
request to the controlled-drug check before the dispense. The first time round the dispense's
guard against running twice (``FILTER NOT EXISTS { ?this :dispensedAt ?t }``) holds; its
tool writes ``:dispensedAt``, so the second time round the check acted again and the order
then stopped at the dispense, blocked, while the definitions validated: on the first way to
the dispense nothing had written it."""

from __future__ import annotations

from pathlib import Path

from claims_files import problems
from forked import horismos_forked

from horismos import Problem

FILE = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:controlledChecked a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .
:dispensedAt a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .
:notifiedAt a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .
:cancelledAt a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .

:pharmacy.check a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :controlledChecked ; horis:value horis:now ] ] ;
    horis:binding "python:check" ; horis:idempotent true .

:pharmacy.dispense a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :dispensedAt ; horis:value horis:now ] ] ;
    horis:binding "python:dispense" .

:pharmacy.notify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ] ] ;
    horis:binding "python:notify" ; horis:idempotent true .

:Refill a horis:Workflow ; horis:focusType :Order ; horis:start :IsControlled .

:IsControlled a horis:ActionStep ;
    horis:tool :pharmacy.check ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Dispense .

:Dispense a horis:ActionStep ;
    horis:tool :pharmacy.dispense ;
    horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Notify .

:Notify a horis:ActionStep ;
    horis:tool :pharmacy.notify ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :AwaitRefill .

:AwaitRefill a horis:WaitStep ;
    horis:reason "the patient asks for the next refill" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ;
    horis:next :IsControlled .
"""

GUARD = 'horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;'
LINE = FILE[: FILE.index(GUARD)].count("\n") + 1
ROUND = ":Dispense → :Notify → :AwaitRefill → :IsControlled → :Dispense"
HINT = (
    "loop back from :AwaitRefill to :Dispense, or to a step after it, instead of to "
    ":IsControlled, so nothing acts again before the guard stops the instance; or make the "
    "guard allow what an earlier time round wrote (a value of :dispensedAt compared with what "
    "starts a round, not any value)")


def _found(tmp_path: Path, text: str = FILE) -> list[Problem]:
    path = tmp_path / "refill.ttl"
    path.write_text(text, encoding="utf-8")
    return problems(path)


def _looped(found: list[Problem]) -> list[Problem]:
    return [p for p in found if "round the loop" in p.message]


def test_a_loop_back_before_a_guard_its_way_round_trips_is_a_warning(tmp_path: Path) -> None:
    (p,) = _found(tmp_path)
    assert (p.severity, p.line, p.node) == ("warning", LINE, ":Dispense"), p
    assert p.message == (
        "horis:requires forbids :dispensedAt of ?this (FILTER NOT EXISTS), which :Dispense "
        f"writes on every way round the loop back to :Dispense ({ROUND}): an instance that "
        "goes round comes back by :AwaitRefill → :IsControlled, :IsControlled acts again, and "
        "then the pattern never holds, so it stops at :Dispense, blocked"), p.message
    assert p.hint == HINT, p.hint
    # as the modeler runs it: at the guard's line, and the definitions still valid
    done = horismos_forked(tmp_path, "validate", "refill.ttl", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"refill.ttl:{LINE}: warning: :Dispense: horis:requires forbids :dispensedAt" in (
        done.stdout), done.stdout
    assert "valid (1 warning)" in done.stdout, done.stdout


def test_a_way_round_that_writes_it_on_one_branch_is_a_warning(tmp_path: Path) -> None:
    # a failed dispense waits for the next request too: that way round wrote nothing, the way
    # after a dispense that landed did
    failing = FILE.replace("    horis:next :Notify .",
                           "    horis:next :Notify ;\n    horis:onError :AwaitRefill .")
    (p,) = _found(tmp_path, failing)
    assert (p.severity, p.line, p.node) == ("warning", LINE, ":Dispense"), p
    assert p.message == (
        "horis:requires forbids :dispensedAt of ?this (FILTER NOT EXISTS), which :Dispense "
        f"writes on one way round the loop back to :Dispense ({ROUND}): an instance that goes "
        "round that way comes back by :AwaitRefill → :IsControlled, :IsControlled acts again, "
        "and then the pattern never holds, so it stops at :Dispense, blocked"), p.message
    assert p.hint == HINT, p.hint


def test_a_tools_own_guard_a_loop_trips_is_said_at_its_tool(tmp_path: Path) -> None:
    moved = FILE.replace(f"    {GUARD}\n", "").replace(
        '    horis:binding "python:dispense" .',
        '    horis:requires "FILTER NOT EXISTS { ?order :dispensedAt ?t }" ;\n'
        '    horis:binding "python:dispense" .')
    (p,) = _found(tmp_path, moved)
    line = moved[: moved.index("horis:tool :pharmacy.dispense")].count("\n") + 1
    assert (p.severity, p.line, p.node) == ("warning", line, ":Dispense"), p
    assert p.message.startswith(
        "the horis:requires of its tool, :pharmacy.dispense, forbids :dispensedAt of ?order "
        "(FILTER NOT EXISTS), given from ?this here, which :Dispense writes on every way round "
        f"the loop back to :Dispense ({ROUND})"), p.message
    assert p.hint is not None and p.hint.endswith("before its guard stops the instance; or make "
                                                  "its guard allow what an earlier time round "
                                                  "wrote (a value of :dispensedAt compared with "
                                                  "what starts a round, not any value)"), p.hint


def test_no_alarm_where_the_way_round_does_not_trip_it(tmp_path: Path) -> None:
    # the loop's steps do not write what the guard forbids (an operator's answer may)
    cancelled = FILE.replace("?this :dispensedAt ?t", "?this :cancelledAt ?t")
    # no longer a guard against dispensing twice, so a second run dispenses again: only that
    # is said (tests/test_authoring_rerun_guards.py)
    assert [(p.node, "nothing stops :Dispense on a second run" in p.message)
            for p in _found(tmp_path, cancelled)] == [(":Dispense", True)]
    # straight back to the guarded step: nothing acts again, its guard ends the loop (paid once)
    straight = FILE.replace("    horis:next :IsControlled .", "    horis:next :Dispense .")
    assert _found(tmp_path, straight) == []
    # the way round stops first at a step whose own guard forbids what was written
    stopped = FILE.replace(
        "    horis:tool :pharmacy.check ;\n",
        '    horis:tool :pharmacy.check ;\n'
        '    horis:requires "FILTER NOT EXISTS { ?this :notifiedAt ?n }" ;\n')
    assert not _looped(_found(tmp_path, stopped))
    # a decision turns the way round aside: its rule back forbids what the dispense wrote
    turned = FILE.replace("    horis:next :IsControlled .", """    horis:next :Again .

:Again a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?d }" ;
                 horis:next :IsControlled ] ;
    horis:otherwise :Notify .""")
    assert not _looped(_found(tmp_path, turned))
    # the step that would act again is passed on only some ways in: not every instance has
    # acted there before (here, no rush order has)
    rushed = FILE.replace("horis:start :IsControlled .", """horis:start :Rush .

:Rush a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :rush true" ; horis:next :Dispense ] ;
    horis:otherwise :IsControlled .""")
    assert not _looped(_found(tmp_path, rushed))
    # what is forbidden is narrower than any value: a value compared
    narrower = FILE.replace(
        "?this :dispensedAt ?t }", "?this :dispensedAt ?t . FILTER (?t > NOW()) }")
    assert not _looped(_found(tmp_path, narrower))


def test_no_alarm_where_a_rule_before_the_way_back_surely_holds(tmp_path: Path) -> None:
    # "already dispensed: notify; otherwise check and dispense": round the loop :dispensedAt
    # is written, so the first rule holds and the otherwise back to the check is not taken
    # (the first time in it does not hold: no rule-always-holds warning either)
    routed = FILE.replace("horis:start :IsControlled", "horis:start :Again").replace(
        "    horis:next :IsControlled .", """    horis:next :Again .

:Again a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :dispensedAt ?d" ; horis:next :Notify ] ;
    horis:otherwise :IsControlled .""")
    assert _found(tmp_path, routed) == []
    # a rule after it to the same step, or the otherwise, still comes back when it may not hold
    maybe = routed.replace(
        '"?this :dispensedAt ?d"', '"?this :dispensedAt ?d . FILTER (?d > NOW())"')
    assert len(_looped(_found(tmp_path, maybe))) == 1


TOOLS = """\
def check(order):
    print("CHECKED", flush=True)


def dispense(order):
    print("DISPENSED", flush=True)


def notify(order):
    print("NOTIFIED", flush=True)
"""


def test_the_run_it_warns_of_acts_again_then_blocks(tmp_path: Path) -> None:
    """What the warning prevents: the second request's check acts, then the dispense's guard
    stops the order, blocked, with no refill dispensed."""
    (tmp_path / "refill.ttl").write_text(FILE, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/pharmacy#> .\n:o1 a :Order .\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    first = horismos_forked(tmp_path, "run", "refill.ttl", "--world", "world.ttl", "--focus",
                            ":o1", "--tools", "tools.py", "--out", "after.trig", timeout=120)
    assert first.returncode == 3, first.stdout + first.stderr  # waiting for the next request
    assert first.stdout.count("CHECKED") == 1 and "DISPENSED" in first.stdout, first.stdout
    instance = next(line.split("]")[0].strip("[") for line in first.stdout.splitlines()
                    if "waiting" in line)
    again = horismos_forked(tmp_path, "resume", "refill.ttl", "--world", "after.trig",
                            "--instance", instance, "--tools", "tools.py", "--facts",
                            ":o1 :refillRequested true .", timeout=120)
    assert again.returncode == 4, again.stdout + again.stderr  # blocked
    assert "CHECKED" in again.stdout and "DISPENSED" not in again.stdout, again.stdout
    assert ("blocked at :Dispense: FILTER NOT EXISTS { ?this :dispensedAt ?t } does not hold "
            "for ?this = :o1") in again.stdout, again.stdout
