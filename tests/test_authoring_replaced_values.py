"""A step that requires ?this to hold a value its tool writes anew, where a domain shape allows
one value: the payout requires ``?this :status :Open`` and writes ``:status :Approved``,
under ``sh:maxCount 1``. An effect adds values and never replaces one, so the claim held two
statuses once the payout landed: the gate rejected it every time, after the tool had paid,
and the next run paid again. It validated, with the world beside it or without."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems
from forked import horismos_forked

FILE = CLAIMS_PREFIXES + """\
@prefix sh:    <http://www.w3.org/ns/shacl#> .

:Claim a owl:Class .
:Status a owl:Class .
:Open a :Status . :Approved a :Status .
:amount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:status a owl:ObjectProperty ; rdfs:domain :Claim ; rdfs:range :Status .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .

:ClaimShape a sh:NodeShape ; sh:targetClass :Claim ;
    sh:property [ sh:path :status ; sh:maxCount 1 ] .

:claims.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ;
                  horis:arg [ horis:name "amount" ; horis:type xsd:decimal ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :status ; horis:value :Approved ] ] ;
    horis:binding "python:pay" ; horis:idempotent false .

:HandleClaim a horis:Workflow ; horis:focusType :Claim ; horis:start :Pay .

:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:requires \"\"\"?this :amount ?amount .
                      PATTERN
                      FILTER NOT EXISTS { ?this :paymentRef ?r }\"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

WORLD = """\
@prefix : <http://example.org/claims#> .
:c1 a :Claim ; :amount 120.50 ; :status :Open .
"""


def _written(tmp_path: Path, pattern: str, text: str = FILE) -> tuple[Path, int]:
    path = tmp_path / "claims.ttl"
    path.write_text(text.replace("PATTERN", pattern), encoding="utf-8")
    return path, text[: text.index("PATTERN")].count("\n") + 1


def test_a_pattern_not_reading_the_status_is_clean(tmp_path: Path) -> None:
    assert problems(_written(tmp_path, "")[0]) == []


def test_requiring_one_value_and_writing_another_is_an_error_at_the_pattern(
        tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :status :Open .")
    (p,) = problems(path)  # not also that only the payout writes :status
    assert (p.severity, p.line, p.node) == ("error", line, ":Pay"), p
    assert p.message == (
        "horis:requires requires ?this to hold :status :Open, and :claims.pay writes :status "
        ":Approved on ?this, but :ClaimShape allows one value of :status (sh:maxCount 1): an "
        "effect adds a value and never replaces one, so the node holds two once it lands and "
        "the gate rejects what :claims.pay returns every time — after the tool has acted"), (
        p.message)
    assert p.hint == (
        "record the new state under a property of its own (not :status), or drop sh:maxCount 1 "
        "on :status from :ClaimShape: no effect removes :Open"), p.hint


def test_a_value_held_that_may_be_the_one_written_is_a_warning(tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :status ?s .")
    said = [p for p in problems(path) if "allows one value" in p.message]
    assert [(p.severity, p.line) for p in said] == [("warning", line)], said
    assert "unless it is the value held" in said[0].message
    # a returned status, where the pattern requires :Open: the tool may return :Open
    returned = FILE.replace("horis:value :Approved", "horis:type :Status")
    path, line = _written(tmp_path, "?this :status :Open .", returned)
    said = [p for p in problems(path) if "allows one value" in p.message]
    assert [(p.severity, p.line) for p in said] == [("warning", line)], said


@pytest.mark.parametrize("pattern", [
    "?this :status :Approved .",  # the same triple: nothing added
    "OPTIONAL { ?this :status ?s }",  # not required
    "FILTER NOT EXISTS { ?this :status ?s }",
])
def test_what_adds_no_second_value_says_nothing(tmp_path: Path, pattern: str) -> None:
    assert not [p for p in problems(_written(tmp_path, pattern)[0])
                if "allows one value" in p.message]


def test_without_the_limit_or_on_another_node_says_nothing(tmp_path: Path) -> None:
    unlimited = FILE.replace("sh:maxCount 1", "sh:minCount 0")
    assert not [p for p in problems(_written(tmp_path, "?this :status :Open .", unlimited)[0])
                if "allows one value" in p.message]
    other = FILE.replace("sh:targetClass :Claim", "sh:targetClass :Status")
    assert not [p for p in problems(_written(tmp_path, "?this :status :Open .", other)[0])
                if "allows one value" in p.message]


def test_validate_with_the_world_says_it_where_run_paid_and_was_rejected(tmp_path: Path) -> None:
    path, line = _written(tmp_path, "?this :status ?s .")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", path.name, "--world", "world.ttl", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"claims.ttl:{line}: warning: :Pay: horis:requires requires ?this to hold :status" in (
        done.stdout), done.stdout
    (tmp_path / "tools.py").write_text(
        "def pay(claim, amount):\n    print('PAID', flush=True)\n"
        "    return {'paymentRef': 'P-1'}\n", encoding="utf-8")
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":c1",
                          "--tools", "tools.py", timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "PAID" in ran.stdout and "rejected by the gate" in ran.stdout, ran.stdout


RULED = FILE.replace(
    "horis:start :Pay .",
    'horis:start :Check .\n\n:Check a horis:DecisionStep ;\n    horis:when [ horis:order 1 ;\n'
    '        horis:requires "?this RULE ." ;\n        horis:next :Pay ] ;\n'
    "    horis:otherwise :Pay .",
)


@pytest.mark.parametrize(("rule", "pattern", "said"), [
    pytest.param(":status :Open", "", True, id="the-rule-requires-it"),
    pytest.param(":amount ?a", "", False, id="the-rule-does-not"),
    pytest.param(":status :Open", "?this :status :Open .", False, id="said-at-the-step-instead"),
])
def test_a_rule_requiring_the_value_the_step_it_leads_to_replaces_is_an_error_at_the_rule(
    tmp_path: Path, rule: str, pattern: str, said: bool
) -> None:
    """The decision tested ``?this :status :Open`` and led straight to the payout that writes
    ``:status :Approved``: the claim held two statuses, the gate rejected the payout after it
    had paid — and validate, which said it of the step's own pattern, said nothing."""
    path, _ = _written(tmp_path, pattern, RULED.replace("RULE", rule))
    found = [p for p in problems(path) if "allows one value of :status" in p.message]
    at_rule = [p for p in found if p.node == ":Check"]
    assert bool(at_rule) is said, found
    assert len(found) == (1 if said or pattern else 0), found
    if said:
        (p,) = at_rule
        line = RULED.replace("RULE", rule)[: RULED.index("RULE")].count("\n") + 1
        assert (p.severity, p.line) == ("error", line), p
        assert p.message.startswith(
            "horis:requires requires ?this to hold :status :Open, and leads straight to :Pay, "
            "where :claims.pay writes :status :Approved on ?this, but :ClaimShape allows one "
            "value of :status (sh:maxCount 1)"
        ), p.message
