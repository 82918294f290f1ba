"""A payout, not idempotent, guarded by FILTER NOT EXISTS on what its own call never writes
where the guard tests it: the guard still held after the payout, and a second run over the
same world paid the claim again. Made in a claims workflow written from the guides: the
guard tested :paidAt where the tool writes :paymentRef, or tested ?this where the tool
writes the reference on the payee's account."""

from __future__ import annotations

from pathlib import Path

from claims_files import CLAIMS_PREFIXES, problems
from forked import horismos_forked

from horismos import Problem

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:Account a owl:Class .
:payee a owl:ObjectProperty ; rdfs:domain :Claim ; rdfs:range :Account .
:paymentRef a owl:DatatypeProperty ; rdfs:range xsd:string .
:paidAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

:claims.pay_out a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ;
                  horis:arg [ horis:name "account" ; horis:type :Account ] ] ;
    horis:effect [ horis:subject "SUBJECT" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pay_out" ;
    horis:idempotent false .

:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :PayOut .

:PayOut a horis:ActionStep ;
    horis:tool :claims.pay_out ;
    horis:requires \"\"\" ?this :payee ?account .
                        FILTER NOT EXISTS { GUARD } \"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""


def _written(tmp_path: Path, guard: str, subject: str = "claim") -> tuple[Path, int]:
    path = tmp_path / "claims.ttl"
    text = FILE.replace("GUARD", guard).replace("SUBJECT", subject)
    path.write_text(text, encoding="utf-8")
    return path, text[: text.index(guard)].count("\n") + 1


def _found(path: Path) -> list[Problem]:
    return problems(path)


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    assert _found(_written(tmp_path, "?this :paymentRef ?r")[0]) == []
    assert _found(_written(tmp_path, "?account :paymentRef ?r", "account")[0]) == []


def test_a_guard_on_what_the_tool_never_writes_is_a_warning(tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :paidAt ?t")
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":PayOut"), p
    assert p.message == (
        "horis:requires holds only while ?this has no :paidAt, which :claims.pay_out (not "
        "idempotent) never writes (it writes :paymentRef) and nothing else gives: its call "
        "never closes the guard, so a second run over the same world, or a way back to "
        ":PayOut, calls it again"), p.message
    assert (p.hint or "").startswith(
        "guard on what the tool writes: FILTER NOT EXISTS { ?this :paymentRef ?v }"), p.hint


def test_a_guard_on_another_node_than_the_tool_writes_is_a_warning(tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :paymentRef ?r", "account")
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":PayOut"), p
    assert p.message == (
        "horis:requires holds only while ?this has no :paymentRef, but :claims.pay_out (not "
        "idempotent) writes :paymentRef on ?account, not on ?this: its call never closes the "
        "guard, so a second run over the same world, or a way back to :PayOut, calls it "
        "again"), p.message
    assert p.hint == (
        "test it where the tool writes it: FILTER NOT EXISTS { ?account :paymentRef ?v }")


def test_no_alarm_for_a_condition_of_the_domain(tmp_path: Path) -> None:
    # a tool that writes it (a cancellation), or a world that states it of a claim
    cancel = FILE.replace(":Adjudicate a", """:claims.cancel a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paidAt ; horis:value horis:now ] ] ;
    horis:binding "python:cancel" .

:Adjudicate a""")
    path = tmp_path / "claims.ttl"
    path.write_text(cancel.replace("GUARD", "?this :paidAt ?t").replace("SUBJECT", "claim"),
                    encoding="utf-8")
    # a condition of the domain guards nothing against a second run, which pays again: only
    # that is said (tests/test_authoring_rerun_guards.py), not a guard its call never closes
    assert [(p.node, "nothing stops :PayOut on a second run" in p.message)
            for p in _found(path)] == [(":PayOut", True)]
    _, line = _written(tmp_path, "?this :paidAt ?t")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/claims#> .\n"
        ":c1 a :Claim ; :paidAt \"2026-01-01T00:00:00Z\"^^"
        "<http://www.w3.org/2001/XMLSchema#dateTime> .\n",
        encoding="utf-8")
    bare = horismos_forked(tmp_path, "validate", "claims.ttl", timeout=120)
    assert f"claims.ttl:{line}: warning: :PayOut: horis:requires holds only" in bare.stdout, (
        bare.stdout)
    given = horismos_forked(tmp_path, "validate", "claims.ttl", "--world", "world.ttl",
                            timeout=120)
    assert given.returncode == 0 and "horis:requires holds only" not in given.stdout, (
        given.stdout)
    # beside a world that states it, the guard is a condition of the domain: no guard against
    # paying twice, which is said instead
    assert "valid (1 warning)" in given.stdout, given.stdout
    assert f"claims.ttl:{line - 3}: warning: :PayOut: its tool :claims.pay_out is not " in (
        given.stdout), given.stdout
