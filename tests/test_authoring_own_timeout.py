"""A wait whose ``horis:onTimeout`` names the wait itself, meant as "wait again": at its
first timeout the instance came straight back with nothing done, and the run stopped it as
a loop that never ends — the instance failed. validate said nothing (it says so of a
``horis:onError`` to the step itself), and ``wake`` printed the stopped wait's line as
``:ManagerReview  None``."""

from __future__ import annotations

import time
from pathlib import Path

from forked import horismos_forked

from horismos import load_definitions

DEFS = '''@prefix :      <http://example.org/expense#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Expense a owl:Class .
:managerApproved a owl:DatatypeProperty ; rdfs:domain :Expense ; rdfs:range xsd:boolean .
:paidAt a owl:DatatypeProperty ; rdfs:domain :Expense ; rdfs:range xsd:dateTime .

:exp.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "expense" ; horis:type :Expense ] ] ;
    horis:effect [ horis:asserts [ horis:property :paidAt ; horis:value horis:now ] ] ;
    horis:binding "python:pay" ;
    horis:timeout "5s" .

:Reimburse a horis:Workflow ; horis:focusType :Expense ; horis:start :ManagerReview .

:ManagerReview a horis:WaitStep ;
    horis:reason "A manager decides." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ;
    horis:until "?this :managerApproved true ." ;
    horis:timeout "1s" ;
    horis:onTimeout :ManagerReview ;
    horis:next :Pay .

:Pay a horis:ActionStep ;
    horis:tool :exp.pay ;
    horis:requires "FILTER NOT EXISTS { ?this :paidAt ?t }" ;
    horis:bind [ horis:arg "expense" ; horis:var "this" ] .
'''


def test_an_on_timeout_to_the_wait_itself_is_a_warning_at_it(tmp_path: Path) -> None:
    path = tmp_path / "defs.ttl"
    path.write_text(DEFS, encoding="utf-8")
    [found] = load_definitions([path]).warnings
    line = DEFS[: DEFS.index("horis:onTimeout :ManagerReview")].count("\n") + 1
    assert (found.node, found.line) == (":ManagerReview", line)
    assert found.message.startswith(
        "horis:onTimeout :ManagerReview is the wait itself: when it times out the instance "
        "comes straight back to :ManagerReview with nothing done since"
    )
    assert found.hint is not None and found.hint.startswith(
        "to remind someone and wait again, send horis:onTimeout to an action step that "
        "reminds and leads back (horis:next :ManagerReview)"
    )
    other = DEFS.replace("horis:onTimeout :ManagerReview ;", "horis:onTimeout :Pay ;")
    path.write_text(other, encoding="utf-8")
    assert not [p for p in load_definitions([path]).warnings if "wait itself" in p.message]


def test_wake_says_why_the_wait_it_stopped_failed(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "client.py").write_text("def pay(expense):\n    return {}\n", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/expense#> .\n:e3 a :Expense .\n", encoding="utf-8"
    )
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools",
                          "client.py", "--focus", ":e3", "--out", "a.trig", "-q")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    time.sleep(1.2)
    woke = horismos_forked(tmp_path, "wake", "defs.ttl", "--world", "a.trig", "--tools",
                           "client.py", "--out", "b.trig")
    assert woke.returncode == 1, woke.stdout + woke.stderr
    lines = [x for x in woke.stdout.splitlines() if ":ManagerReview  " in x]
    assert lines[0].endswith(":ManagerReview  wait timed out -> :ManagerReview"), lines
    assert lines[1].split(":ManagerReview  ", 1)[1].startswith(
        "failed: the instance came back to :ManagerReview"
    ), lines
    assert "None" not in woke.stdout


def test_a_next_to_the_wait_itself_is_a_warning_at_it(tmp_path: Path) -> None:
    """Once answered, the wait went on to itself, where the until held still: the run stopped
    the instance there, and it failed instead of paying."""
    path = tmp_path / "defs.ttl"
    text = DEFS.replace("horis:onTimeout :ManagerReview ;", "horis:onTimeout :Pay ;").replace(
        "horis:next :Pay .\n\n:Pay a", "horis:next :ManagerReview .\n\n:Pay a"
    )
    path.write_text(text, encoding="utf-8")
    found = [p for p in load_definitions([path]).warnings if "wait itself" in p.message]
    assert [(p.node, p.line) for p in found] == [
        (":ManagerReview", text[: text.index("horis:next :ManagerReview")].count("\n") + 1)
    ]
    assert found[0].message.startswith(
        "horis:next :ManagerReview is the wait itself: once its horis:until holds"
    )


def test_a_wait_going_on_to_itself_is_stopped_at_once_not_at_the_step_budget(
        tmp_path: Path) -> None:
    """A completed wait counted as a step that acted, so a wait whose horis:next is itself,
    once answered, went round until the workflow's step budget was spent (1000 steps, each
    traced) and failed "ran the 1000 steps its workflow allows". A wait that goes on only
    reads: coming back to it with nothing done since is the loop that never ends, stopped on
    the second visit."""
    text = DEFS.replace("horis:onTimeout :ManagerReview ;", "horis:onTimeout :Pay ;").replace(
        "horis:next :Pay .\n\n:Pay a", "horis:next :ManagerReview .\n\n:Pay a"
    )
    (tmp_path / "defs.ttl").write_text(text, encoding="utf-8")
    (tmp_path / "client.py").write_text("def pay(expense):\n    return {}\n", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/expense#> .\n:e3 a :Expense .\n", encoding="utf-8"
    )
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools",
                          "client.py", "--focus", ":e3", "--out", "a.trig")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    iid = ran.stdout.split("]")[0].lstrip("[")  # the short id the run printed
    answered = horismos_forked(tmp_path, "resume", "defs.ttl", "--world", "a.trig", "--tools",
                               "client.py", "--instance", iid, "--facts",
                               ":e3 :managerApproved true .", "--out", "b.trig",
                               "--trace", "resume.jsonl")
    assert answered.returncode == 1, answered.stdout + answered.stderr
    said = answered.stdout + answered.stderr
    assert "came back to :ManagerReview and no step has acted since" in said, said
    steps = [x for x in (tmp_path / "resume.jsonl").read_text().splitlines()
             if '"type":"step"' in x]
    assert len(steps) == 2, len(steps)  # answered, then stopped: not 1000
