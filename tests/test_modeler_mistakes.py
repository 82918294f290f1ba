"""Mistakes a modeler new to Horismos makes, each made once in a copy of a domain that
validates clean (tests/fixtures/modeler): ``horismos validate`` must say it before anything
runs, at the file and line where it is written, with what to write instead — and must say
nothing of the same model written correctly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked

HERE = Path(__file__).resolve().parent / "fixtures" / "modeler"
FILES = {
    "claims": ("ontology.ttl", "tools.ttl", "workflow.ttl"),
    "warehouse": ("ontology.ttl", "tools.ttl", "workflow.ttl", "returns.ttl"),
}

_PAY = """:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:requires \"\"\" ?this :amount ?amount .
                       FILTER NOT EXISTS { ?this :paymentRef ?r } \"\"\" ;"""
_PAY_AGAIN = """:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:next :SeniorReview ;
    horis:requires \"\"\" ?this :amount ?amount . \"\"\" ;"""
_PAY_READING = """:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:next :SeniorReview ;
    horis:requires \"\"\" ?this :amount ?amount .
                       OPTIONAL { ?this :paymentRef ?r } \"\"\" ;"""
_CLAIMS_FLOW = (HERE / "claims" / "workflow.ttl").read_text(encoding="utf-8")
_PAID_TAIL = _CLAIMS_FLOW[_CLAIMS_FLOW.index(_PAY) :]
"""From :Pay to the end: :Pay, then :SeniorReview, whose next is :Pay."""
_RECHECK = """    horis:next :Recheck .

:Recheck a horis:DecisionStep ;
    horis:when [
        horis:order 1 ;
        horis:requires \"\"\" ?this :amount ?a . %s \"\"\" ;
        horis:next :Pay
    ] ;
    horis:otherwise :RejectOverLimit ."""
_PAY_FAILING = _PAY.replace(" ;\n", " ;\n    horis:onError :Repick ;\n", 1)
_REPICK = """

:Repick a horis:ProposalStep ;
    horis:candidates [ horis:query \"\"\"
        ?this :region ?r .
        ?adjuster a :Adjuster ; :region ?r ; :available true .\"\"\" ] ;
    horis:rankBy "experience with this kind of claim" ;
    horis:model "lexical:bm25" ;
    horis:confidence 0.6 ;
    horis:as "adjuster" ;
    horis:next :Pay ;
    horis:fallback :AskSupervisor .
"""
"""A proposal a failed payment goes to, whose choice leads back to :Pay, and whose fallback to
the supervisor's wait puts a person's wait on the same loop."""
_RECHECK_FAILED = """

:Repick a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :amount ?a ." ; horis:next :Pay ] ;
    horis:otherwise :AskSupervisor .
"""
_PAY_RECORDING = _PAY.replace(
    ' """ ;',
    "\n                       FILTER NOT EXISTS { ?this :rejectionReason ?why } \"\"\" ;\n"
    "    horis:onError :RecordFailure ;",
)
_RECORD_FAILURE = """:RecordFailure a horis:ActionStep ;
    horis:tool :claims.reject ;
    horis:requires \"\"\" BIND("payment failed" AS ?reason)
                       FILTER NOT EXISTS { ?this :rejectionReason ?x } \"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :SeniorReview .

:SeniorReview a horis:WaitStep ;"""
"""A failed payment recorded on its way back to :Pay (:claims.reject writes :rejectionReason),
which :Pay requires absent: a failure closes the gate a failed call left open."""
_PAY_REPICKING = _PAY_RECORDING.replace("horis:onError :RecordFailure", "horis:onError :Repick")
"""A failed payment that goes back to :Pay through :Repick, :Pay requiring no recorded failure."""
_PAY_TWICE = """    horis:next :PayTwice .

:PayTwice a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:requires \"\"\" ?this :amount ?amount .
                       FILTER NOT EXISTS { ?this :paymentRef ?r } \"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :Pay ."""
"""A second payment on :Pay's loop, after the senior's review, off the way back from its error."""
_PAY_AGAIN_FAILING = _PAY_FAILING.replace(":Repick", ":PayAgain") + """
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .

:PayAgain a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:onError :Repick ;
    horis:requires \"\"\" ?this :amount ?amount .
                       FILTER NOT EXISTS { ?this :paymentRef ?r } \"\"\" ;"""
"""A failed payment tried again by a second step calling the same tool, whose failure goes back
to :Pay through :Repick."""
_SMALL = "FILTER (?a <= 1000) "
_SMALL_UNPAID = _SMALL + "FILTER NOT EXISTS { ?this :paymentRef ?r } "
"""The rule that sends a small claim straight to :Pay, made to hold only while it is unpaid: with
:Pay's own guard gone, it is what stops a second run of a paid claim from paying again."""
_SHIPMENT_SHAPE = "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ] ."
_ORDER_SHAPE = ":OrderShape a sh:NodeShape ;\n"
_STANDARD = '?this :weightKg ?weight . ?carrier a :Carrier ; :code "STD" .'


def copy_with(tmp_path: Path, domain: str, file: str, old: str, new: str) -> Path:
    """A copy of ``domain`` with its one ``old`` in ``file`` written ``new``."""
    folder = tmp_path / domain
    shutil.copytree(HERE / domain, folder)
    text = (folder / file).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not written once in {file}"
    (folder / file).write_text(text.replace(old, new), encoding="utf-8")
    return folder


def validated(folder: Path, domain: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(folder, "validate", *FILES[domain], timeout=120)


def line_of(folder: Path, file: str, text: str) -> int:
    """The line ``text`` starts on in ``file`` of ``folder``."""
    written = (folder / file).read_text(encoding="utf-8")
    assert written.count(text) == 1, f"{text!r} is not written once in {file}"
    return written[: written.index(text)].count("\n") + 1


# (what, domain, file, old, new, where: text the problem's line starts, severity,
#  said: in its message, fix: in what it says to write)
MISTAKES = [
    ("a space in an HTTP binding's URL", "warehouse", "tools.ttl",
     '"http://127.0.0.1:18777/shipments"', '"http://127.0.0.1:18777/ship ments"',
     'horis:binding "http://', "error",
     "is no URL a request can be sent to: it has white space in it ('777/ship ments')",
     "remove the space, or write %20 where the path has one"),
    ("a required sh:property nested under a shape on a literal-valued property",
     "warehouse", "ontology.ttl", _SHIPMENT_SHAPE,
     "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ;\n"
     "        sh:property [ sh:path :code ; sh:minCount 1 ] ] .",
     "        sh:property [ sh:path :code", "error",
     "sh:property [ sh:path :code … ] asks for values that hold :code (a literal holds no "
     "property), but :shipmentId's values are literals of xsd:string",
     "put this sh:property [ sh:path :code … ] on the shape of the node that holds :code"),
    ("a loop back through a person's wait whose until, once answered, holds ever after",
     "claims", "workflow.ttl", _PAY, _PAY_AGAIN, ":Pay a horis:ActionStep", "warning",
     "the horis:until of :SeniorReview, once a person's answer makes it hold, holds every "
     "time round after", "make the loop's horis:requires depend on something the tool writes"),
    # a read that guards nothing: the second time round :Pay's pattern holds as the first
    ("a loop back through a person's wait to a step that reads, not tests, what it wrote",
     "claims", "workflow.ttl", _PAY, _PAY_READING, ":Pay a horis:ActionStep", "warning",
     "the horis:until of :SeniorReview, once a person's answer makes it hold, holds every "
     "time round after", "make the loop's horis:requires depend on something the tool writes"),
    ("a loop back through a person's wait to a decision whose rule to pay reads, not tests, "
     "what it wrote", "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_AGAIN).replace(
         "    horis:next :Pay .", _RECHECK % "OPTIONAL { ?this :paymentRef ?r }"),
     ":Pay a horis:ActionStep", "warning",
     "the horis:until of :SeniorReview, once a person's answer makes it hold, holds every "
     "time round after", "make the loop's horis:requires depend on something the tool writes"),
    # a failed call wrote nothing: :Pay's FILTER NOT EXISTS on what it writes holds again
    ("a failed payment's horis:onError back to :Pay through a proposal", "claims",
     "workflow.ttl", _PAID_TAIL, _PAID_TAIL.replace(_PAY, _PAY_FAILING) + _REPICK,
     ":Pay a horis:ActionStep", "warning",
     "the step is on a cycle (:Pay —onError→ :Repick → :Pay) and its tool :claims.pay is not "
     "idempotent: each time it fails it is called again — horis:onError leads back to :Pay",
     "record the failure on the error path (a step from :Repick onward whose tool writes it, as a "
     "rejection does) and have :Pay's horis:requires require its absence (FILTER NOT EXISTS), "
     "or send horis:onError to a step off the loop"),
    ("a failed payment's horis:onError back to :Pay through a decision", "claims",
     "workflow.ttl", _PAID_TAIL, _PAID_TAIL.replace(_PAY, _PAY_FAILING) + _RECHECK_FAILED,
     ":Pay a horis:ActionStep", "warning",
     "the step is on a cycle (:Pay —onError→ :Repick → :Pay) and its tool :claims.pay is not "
     "idempotent: each time it fails it is called again — horis:onError leads back to :Pay",
     "record the failure on the error path (a step from :Repick onward whose tool writes it, as a "
     "rejection does) and have :Pay's horis:requires require its absence (FILTER NOT EXISTS), "
     "or send horis:onError to a step off the loop"),
    # a failure is recorded on the loop, but not on every way back from :Pay's horis:onError
    ("a failed payment's horis:onError back to :Pay through a proposal whose choice passes no "
     "step that records the failure", "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_REPICKING).replace(":SeniorReview a horis:WaitStep ;",
                                                      _RECORD_FAILURE)
     + _REPICK.replace("horis:fallback :AskSupervisor", "horis:fallback :RecordFailure"),
     ":Pay a horis:ActionStep", "warning",
     "the step is on a cycle (:Pay —onError→ :Repick → :Pay) and its tool :claims.pay is not "
     "idempotent: each time it fails it is called again — horis:onError leads back to :Pay, "
     "and a call that failed wrote nothing, so :Pay's horis:requires holds again (nothing "
     "written on the way back closes it) — until a call succeeds or the instance runs out of "
     "steps (horis:maxSteps",
     "record the failure on the error path (a step from :Repick onward whose tool writes it"),
    # another step paying, off the way back from the failure, closes nothing on that way
    ("a failed payment's horis:onError back to :Pay, with a second payment elsewhere on the "
     "loop", "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_FAILING).replace("    horis:next :Pay .", _PAY_TWICE)
     + _REPICK,
     ":Pay a horis:ActionStep", "warning",
     "the step is on a cycle (:Pay —onError→ :Repick → :Pay) and its tool :claims.pay is not "
     "idempotent: each time it fails it is called again", "or send horis:onError to a step "
     "off the loop"),
    # a second try by the same tool fails as the first: each is warned of
    ("a failed payment's horis:onError to a second payment whose own goes back to :Pay",
     "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_AGAIN_FAILING) + _REPICK, ":Pay a horis:ActionStep",
     "warning", "the step is on a cycle (:Pay —onError→ :PayAgain —onError→ :Repick → :Pay) "
     "and its tool :claims.pay is not idempotent: each time it fails it is called again",
     "a step from :PayAgain onward whose tool writes it"),
    ("a second payment's horis:onError back to the first, whose own goes to the second",
     "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_AGAIN_FAILING) + _REPICK, ":PayAgain a horis:ActionStep",
     "warning", "the step is on a cycle (:PayAgain —onError→ :Repick → :Pay —onError→ "
     ":PayAgain) and its tool :claims.pay is not idempotent: each time it fails it is called "
     "again", "a step from :Repick onward whose tool writes it"),
    # the step recording the failure writes it only when it succeeds; its own failure does not
    ("a failed payment recorded by a step whose own horis:onError goes back to :Pay",
     "claims", "workflow.ttl", _PAID_TAIL,
     _PAID_TAIL.replace(_PAY, _PAY_RECORDING).replace(
         ":SeniorReview a horis:WaitStep ;",
         _RECORD_FAILURE.replace("    horis:next", "    horis:onError :Repick ;\n    horis:next"))
     + _RECHECK_FAILED,
     ":Pay a horis:ActionStep", "warning",
     "the step is on a cycle (:Pay —onError→ :RecordFailure —onError→ :Repick → :Pay) and its "
     "tool :claims.pay is not idempotent: each time it fails it is called again",
     "a step from :RecordFailure onward whose tool writes it"),
    # the SPARQL 1.0 "not yet" idiom guards only when nothing else can leave ?r unbound
    ("a loop back through a person's wait to a step whose !BOUND is one arm of an ||",
     "claims", "workflow.ttl", _PAY, _PAY_READING.replace(
         "} ", "} FILTER (!BOUND(?r) || ?amount > 0) "),
     ":Pay a horis:ActionStep", "warning",
     "the horis:until of :SeniorReview, once a person's answer makes it hold, holds every "
     "time round after", "make the loop's horis:requires depend on something the tool writes"),
    ("a loop back through a person's wait to a step whose !BOUND variable two OPTIONALs bind",
     "claims", "workflow.ttl", _PAY, _PAY_READING.replace(
         "} ", "} OPTIONAL { ?this :assignedAdjuster ?r } FILTER (!BOUND(?r)) "),
     ":Pay a horis:ActionStep", "warning",
     "the horis:until of :SeniorReview, once a person's answer makes it hold, holds every "
     "time round after", "make the loop's horis:requires depend on something the tool writes"),
    ("an argument's variable renamed in the pattern (?wt for ?weight)", "warehouse",
     "workflow.ttl", _STANDARD, _STANDARD.replace("?weight", "?wt"),
     '    horis:requires """ ?this :weightKg ?wt', "error",
     'argument "weight" of :ship.create_shipment is required, but no pattern variable ?weight',
     "use ?weight in a triple pattern of the step's horis:requires"),
    ("a decision rule copied with its horis:order", "claims", "workflow.ttl",
     "        horis:order 2 ;", "        horis:order 1 ;",
     """        horis:order 1 ;
        horis:requires \"\"\" ?this :amount ?a . FILTER""", "error",
     "2 horis:when rules have horis:order 1 and go to :Pay, :RejectOverLimit",
     "give each rule its own horis:order"),
    ("a step typed horis:Step, the superclass, not a kind of step", "warehouse",
     "workflow.ttl", ":ShipStandard a horis:ActionStep ;", ":ShipStandard a horis:Step ;",
     ":ShipStandard a horis:Step ;", "error",
     "horis:Step is the class of every step, not a kind of step",
     "write :ShipStandard a horis:ActionStep"),
]


@pytest.mark.parametrize(("what", "domain", "file", "old", "new", "where", "severity",
                          "said", "fix"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_is_said_at_its_line_with_the_fix(
        tmp_path: Path, what: str, domain: str, file: str, old: str, new: str, where: str,
        severity: str, said: str, fix: str) -> None:
    folder = copy_with(tmp_path, domain, file, old, new)
    done = validated(folder, domain)
    head = f"{file}:{line_of(folder, file, where)}: {severity}: "
    found = [ln for ln in done.stdout.splitlines() if ln.startswith(head) and said in ln]
    assert len(found) == 1, done.stdout + done.stderr
    assert " — " in found[0] and fix in found[0].split(" — ", 1)[1], found[0]
    assert done.returncode == (1 if severity == "error" else 0), done.stdout
    assert "Traceback" not in done.stderr


# the same models written correctly: nothing said
# (what, domain, file, edits: each old written new, in turn)
RIGHT = [
    ("a space written %20 in an HTTP binding's URL", "warehouse", "tools.ttl",
     [('"http://127.0.0.1:18777/shipments"', '"http://127.0.0.1:18777/ship%20ments"')]),
    ("a required sh:property nested under a shape on a node-valued property", "warehouse",
     "ontology.ttl",
     [(_SHIPMENT_SHAPE, "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ] ;\n"
       "    sh:property [ sh:path :shippedWith ;\n"
       "        sh:property [ sh:path :code ; sh:minCount 1 ] ] .")]),
    # the gate and pyshacl judge nothing by a deactivated shape
    ("a required sh:property nested under a deactivated shape on a literal-valued property",
     "warehouse", "ontology.ttl",
     [(_SHIPMENT_SHAPE, "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ;\n"
       "        sh:deactivated true ;\n"
       "        sh:property [ sh:path :code ; sh:minCount 1 ] ] .")]),
    ("a deactivated required sh:property nested under a shape on a literal-valued property",
     "warehouse", "ontology.ttl",
     [(_SHIPMENT_SHAPE, "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ;\n"
       "        sh:property [ sh:path :code ; sh:minCount 1 ; sh:deactivated true ] ] .")]),
    ("a required sh:property nested under a literal-valued property of a deactivated node "
     "shape", "warehouse", "ontology.ttl",
     [(_ORDER_SHAPE, _ORDER_SHAPE.replace(" ;\n", " ;\n    sh:deactivated true ;\n", 1)),
      (_SHIPMENT_SHAPE, "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ;\n"
       "        sh:property [ sh:path :code ; sh:minCount 1 ] ] .")]),
    ("an sh:in of integers for a string property of a deactivated node shape", "warehouse",
     "ontology.ttl",
     [(_ORDER_SHAPE, _ORDER_SHAPE.replace(" ;\n", " ;\n    sh:deactivated true ;\n", 1)),
      (_SHIPMENT_SHAPE, "sh:property [ sh:path :shipmentId ; sh:maxCount 1 ; sh:in ( 1 2 ) ] .")]),
    ("a loop back through a person's wait whose until stops holding once paid", "claims",
     "workflow.ttl",
     [('"?this :seniorApproved true ."',
       '"?this :seniorApproved true . FILTER NOT EXISTS { ?this :paymentRef ?r }"'),
      (_PAY, _PAY_AGAIN),
      (_SMALL, _SMALL_UNPAID)]),
    # the until holds ever after, but the second time round :Pay's own pattern (or the rule
    # that leads to it) no longer holds: its tool wrote :paymentRef, so it is paid once
    ("a loop back through a person's wait to a step that requires it is not yet paid", "claims",
     "workflow.ttl", [(_PAY, _PAY.replace(" ;\n", " ;\n    horis:next :SeniorReview ;\n", 1))]),
    ("a loop back through a person's wait to a step that requires it is not yet paid, by "
     "MINUS", "claims", "workflow.ttl",
     [(_PAY, _PAY_READING.replace("OPTIONAL", "MINUS"))]),
    ("a loop back through a person's wait to a step that requires it is not yet paid, by "
     "!EXISTS", "claims", "workflow.ttl",
     [(_PAY, _PAY_READING.replace("OPTIONAL", "FILTER (!EXISTS").replace("} ", "}) "))]),
    ("a loop back through a person's wait to a step that requires it is not yet paid, by "
     "OPTIONAL and !BOUND", "claims", "workflow.ttl",
     [(_PAY, _PAY_READING.replace("} ", "} FILTER (!BOUND(?r)) "))]),
    ("a loop back through a person's wait to a step that requires it is not yet paid, by "
     "OPTIONAL and !BOUND among other FILTERs", "claims", "workflow.ttl",
     [(_PAY, _PAY_READING.replace("} ", "} FILTER (?amount > 0 && !BOUND(?r)) "))]),
    ("a loop back through a person's wait to a decision whose rule to pay requires it is not "
     "yet paid, by OPTIONAL and !BOUND", "claims", "workflow.ttl",
     [(_PAY, _PAY_AGAIN),
      ("    horis:next :Pay .",
       _RECHECK % "OPTIONAL { ?this :paymentRef ?r } FILTER (!BOUND(?r))"),
      (_SMALL, _SMALL_UNPAID)]),
    # a failed call wrote nothing, but the error path writes what :Pay requires absent
    ("a failed payment's horis:onError back to :Pay through a step that records the failure",
     "claims", "workflow.ttl",
     [(_PAY, _PAY_RECORDING), (":SeniorReview a horis:WaitStep ;", _RECORD_FAILURE)]),
    ("a loop back through a person's wait to a decision whose rule to pay requires it is not "
     "yet paid", "claims", "workflow.ttl",
     [(_PAY, _PAY_AGAIN),
      ("    horis:next :Pay .", _RECHECK % "FILTER NOT EXISTS { ?this :paymentRef ?r }"),
      (_SMALL, _SMALL_UNPAID)]),
]


@pytest.mark.parametrize(("what", "domain", "file", "edits"), RIGHT, ids=[m[0] for m in RIGHT])
def test_the_same_written_correctly_is_said_nothing_of(
        tmp_path: Path, what: str, domain: str, file: str, edits: list[tuple[str, str]]) -> None:
    (old, new), *more = edits
    folder = copy_with(tmp_path, domain, file, old, new)
    for old, new in more:
        text = (folder / file).read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} is not written once in {file}"
        (folder / file).write_text(text.replace(old, new), encoding="utf-8")
    done = validated(folder, domain)
    assert done.returncode == 0 and done.stdout.strip().endswith("valid"), done.stdout
