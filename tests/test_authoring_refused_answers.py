"""A wait whose ``horis:until`` requires of ?this a value the domain shapes refuse: a claim
waits ``horis:until "?this :status :Approved ."`` where the claim's shape lists ``sh:in (
:Open :Assessed )``, or allows one status (``sh:maxCount 1``) that the assessment wrote on the
way to the wait. The manager's answer is held to the domain shapes as a tool's result is:
resume refused it, and the claim waited for ever, after the assessment had acted. It
validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems
from forked import horismos_forked

FILE = CLAIMS_PREFIXES + """\
@prefix sh:    <http://www.w3.org/ns/shacl#> .

:Claim a owl:Class .
:Status a owl:Class .
:Open a :Status . :Assessed a :Status . :Approved a :Status .
:status a owl:ObjectProperty ; rdfs:domain :Claim ; rdfs:range :Status .
:approvedAt a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:dateTime .
:approvedBy a owl:ObjectProperty ; rdfs:domain :Claim .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .

:ClaimShape a sh:NodeShape ; sh:targetClass :Claim ;
    sh:property [ sh:path :status ; sh:in ( :Open :Assessed :Approved ) ] ;
    sh:property [ sh:path :approvedBy ; sh:maxCount 1 ] .

:claims.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :status ; horis:value :Assessed ] ] ;
    horis:binding "python:assess" ; horis:idempotent true .

:claims.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pay" ; horis:idempotent false .

:HandleClaim a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :Approve .

:Approve a horis:WaitStep ;
    horis:reason "A manager approves the payout." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ;
    TIMEOUT
    horis:until \"\"\"
        UNTIL \"\"\" ;
    horis:next :Pay .

:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

SAID = "horis:until requires ?this to hold"


def _written(tmp_path: Path, until: str, text: str = FILE, timeout: str = "") -> tuple[Path, int]:
    path = tmp_path / "claims.ttl"
    path.write_text(text.replace("UNTIL", until).replace("TIMEOUT", timeout), encoding="utf-8")
    return path, text[: text.index("UNTIL")].count("\n") + 1


def _said(path: Path) -> list[tuple[str, int | None]]:
    return [(p.severity, p.line) for p in problems(path) if SAID in p.message]


@pytest.mark.parametrize("until", [
    "?this :approvedAt ?t .",
    "?this :status :Approved .",  # sh:in lists it, and no sh:maxCount
    "OPTIONAL { ?this :status :Paid }",  # not required
    "?this :approvedBy ?who .",  # one allowed, none written
])
def test_a_value_the_shapes_allow_is_clean(tmp_path: Path, until: str) -> None:
    assert _said(_written(tmp_path, until)[0]) == []


def test_a_value_the_sh_in_leaves_out_is_an_error_at_the_until(tmp_path: Path) -> None:
    text = FILE.replace("( :Open :Assessed :Approved )", "( :Open :Assessed )")
    path, line = _written(tmp_path, "?this :status :Approved .", text)
    (p,) = [p for p in problems(path) if SAID in p.message]
    assert (p.severity, p.line, p.node) == ("error", line, ":Approve"), p
    assert p.message == (
        "horis:until requires ?this to hold :status :Approved, but shape :ClaimShape requires "
        "sh:in (:Open :Assessed) of :status: resume refuses the answer that would give it (the "
        "facts break the domain shapes), so the instance waits for ever, after the steps before "
        "it have acted"), p.message
    assert p.hint == (
        "correct the shape to allow :Approved, or wait for a value it allows"), p.hint


def test_a_second_value_of_one_allowed_written_before_is_an_error(tmp_path: Path) -> None:
    text = FILE.replace("sh:path :status ;", "sh:path :status ; sh:maxCount 1 ;")
    path, line = _written(tmp_path, "?this :status :Approved .", text)
    (p,) = [p for p in problems(path) if SAID in p.message]
    assert (p.severity, p.line) == ("error", line), p
    assert ":Assess writes :status on ?this on every way to the wait" in p.message, p.message
    assert "an answer adds a value, never replaces one" in p.message
    assert p.hint == (
        "wait for a property of its own (?this :approvedAt ?t), or drop sh:maxCount 1 on "
        ":status"), p.hint
    # a status the assessment returns may be :Approved: a warning
    open_value = text.replace("horis:value :Assessed", "horis:type :Status")
    assert _said(_written(tmp_path, "?this :status :Approved .", open_value)[0]) == [
        ("warning", line)]
    # the assessment writing :Approved itself: the until may hold when reached
    same = text.replace("horis:value :Assessed", "horis:value :Approved")
    assert _said(_written(tmp_path, "?this :status :Approved .", same)[0]) == []


def test_any_value_under_max_count_0_is_an_error(tmp_path: Path) -> None:
    text = FILE.replace("sh:path :approvedBy ; sh:maxCount 1",
                        "sh:path :approvedBy ; sh:maxCount 0")
    path, line = _written(tmp_path, "?this :approvedBy ?who .", text)
    (p,) = [p for p in problems(path) if SAID in p.message]
    assert (p.severity, p.line) == ("error", line), p
    assert p.hint == (
        "drop sh:maxCount 0 on :approvedBy from :ClaimShape, or wait for a property it allows")


def test_a_property_a_closed_shape_leaves_out_is_an_error_at_the_until(tmp_path: Path) -> None:
    """An incident waited ``horis:until "?this :acknowledgedBy ?eng ."`` where the incident's
    shape is ``sh:closed true`` and names no ``:acknowledgedBy``: resume refused every
    acknowledgement, and only the timeout's escalation ended the wait."""
    text = FILE.replace(
        ":ClaimShape a sh:NodeShape ; sh:targetClass :Claim ;",
        ":ClaimShape a sh:NodeShape ; sh:targetClass :Claim ; sh:closed true ;\n"
        "    sh:ignoredProperties ( <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>\n"
        "        :paymentRef ) ;",
    )
    path, line = _written(tmp_path, "?this :approvedAt ?t .", text)
    (p,) = [p for p in problems(path) if SAID in p.message]
    assert (p.severity, p.line, p.node) == ("error", line, ":Approve"), p
    assert p.message == (
        "horis:until requires ?this to hold :approvedAt ?t, but shape :ClaimShape is closed "
        "(sh:closed true) and names :approvedAt in no sh:property nor sh:ignoredProperties, so "
        "it allows no value of it: resume refuses the answer that would give it (the facts "
        "break the domain shapes), so the instance waits for ever, after the steps before it "
        "have acted"), p.message
    assert p.hint == (
        "add sh:property [ sh:path :approvedAt ] to :ClaimShape (or list :approvedAt in its "
        "sh:ignoredProperties), or wait for a property it allows"), p.hint
    # listed among the properties it ignores: allowed
    allowed = text.replace(":paymentRef ) ;", ":paymentRef :approvedAt ) ;")
    assert _said(_written(tmp_path, "?this :approvedAt ?t .", allowed)[0]) == []


def test_a_wait_with_a_timeout_ends_there_a_warning(tmp_path: Path) -> None:
    text = FILE.replace("( :Open :Assessed :Approved )", "( :Open :Assessed )")
    path, line = _written(tmp_path, "?this :status :Approved .", text,
                          timeout='horis:timeout "48h" ; horis:onTimeout :Pay ;')
    (p,) = [p for p in problems(path) if SAID in p.message]
    assert (p.severity, p.line) == ("warning", line), p
    assert "the wait ends only at its horis:timeout" in p.message, p.message


def test_validate_says_it_where_resume_refused_every_answer(tmp_path: Path) -> None:
    text = FILE.replace("( :Open :Assessed :Approved )", "( :Open :Assessed )")
    path, line = _written(tmp_path, "?this :status :Approved .", text,
                          timeout='horis:timeout "720h" ; horis:onTimeout :Pay ;')
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/claims#> .\n:c1 a :Claim .\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(
        "def assess(claim):\n    print('ASSESSED', flush=True)\n    return {}\n"
        "def pay(claim):\n    return {'paymentRef': 'P-1'}\n", encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", path.name, "--world", "world.ttl", timeout=120)
    assert f"claims.ttl:{line}: warning: :Approve: {SAID} :status :Approved" in done.stdout, (
        done.stdout + done.stderr)
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":c1",
                          "--tools", "tools.py", "--out", "after.trig", "--quiet", timeout=120)
    assert ran.returncode == 3 and "ASSESSED" in ran.stdout, ran.stdout + ran.stderr
    listed = horismos_forked(tmp_path, "instances", "--world", "after.trig", "--status",
                             "waiting", timeout=120)
    instance = listed.stdout.splitlines()[-1].split()[0]
    answered = horismos_forked(
        tmp_path, "resume", path.name, "--world", "after.trig", "--instance", instance,
        "--tools", "tools.py", "--facts", ":c1 :status :Approved .", timeout=120)
    assert answered.returncode == 2, answered.stdout + answered.stderr
    assert "the facts break the domain shapes" in answered.stderr, answered.stderr
    # without the timeout nothing but the refused answer ends the wait: run calls no tool
    path.write_text(text.replace("UNTIL", "?this :status :Approved .").replace("TIMEOUT", ""),
                    encoding="utf-8")
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":c1",
                          "--tools", "tools.py", timeout=120)
    assert ran.returncode == 2 and "ASSESSED" not in ran.stdout, ran.stdout + ran.stderr
    assert f"claims.ttl:{line}: error: :Approve: {SAID}" in ran.stderr, ran.stderr
