"""Mistakes in what a tool's Python function returns, caught before anything runs, at the
binding's line with the ``return``'s own file and line, and what to write instead. Each was
made in a small claims-adjudication workflow written from the guides (a payout tool that is
not idempotent) and passed ``horismos validate --tools`` before; what the run then did is
said in each test."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

WORKFLOW = """\
@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:claims.pay_out a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "claim" ; horis:type :Claim ] ;
        horis:arg [ horis:name "amount" ; horis:type xsd:decimal ]
    ] ;
    horis:effect [
        horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :status ; horis:type xsd:string ; horis:optional true ]
    ] ;
    horis:binding "python:claims_client.pay_out" ;
    horis:idempotent false .

:Adjudicate a horis:Workflow ;
    horis:focusType :Claim ;
    horis:start :PayOut .

:PayOut a horis:ActionStep ;
    horis:tool :claims.pay_out ;
    horis:requires \"\"\" ?this :claimedAmount ?amount .
                       FILTER NOT EXISTS { ?this :paymentRef ?r } \"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

ONTOLOGY = """\
@prefix :     <http://example.org/claims#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .
@prefix sh:   <http://www.w3.org/ns/shacl#> .

:Claim a owl:Class .
:claimedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .
:status a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .

:ClaimShape a sh:NodeShape ;
    sh:targetClass :Claim ;
    sh:property [ sh:path :paymentRef ; sh:pattern "^PAY-[0-9]{6}$" ] ;
    sh:property [ sh:path :status ; sh:in ( "PAID" "DENIED" ) ] .
"""

WORLD = """\
@prefix : <http://example.org/claims#> .
:c1 a :Claim ; :claimedAmount 1200.0 .
"""

CLIENT = """\
import itertools

_refs = itertools.count(1)


def pay_out(claim, amount):
    open("called", "a").write("x")
    RETURN
"""

GOOD = 'return {"paymentRef": f"PAY-{next(_refs):06d}", "status": "PAID"}'


def _write(tmp_path: Path, returns: str) -> int:
    """The files, with ``returns`` as the body's last statement; the line it starts at."""
    (tmp_path / "claims.ttl").write_text(WORKFLOW, encoding="utf-8")
    (tmp_path / "onto.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    client = CLIENT.replace("RETURN", returns)
    (tmp_path / "claims_client.py").write_text(client, encoding="utf-8")
    return client[: client.index(returns)].count("\n") + 1


BINDING_LINE = WORKFLOW[: WORKFLOW.index("horis:binding")].count("\n") + 1
FILES = ("claims.ttl", "onto.ttl", "--world", "world.ttl", "--tools", "claims_client.py")


def test_the_workflow_these_tests_edit_validates_and_pays(tmp_path: Path) -> None:
    _write(tmp_path, GOOD)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr
    run = horismos_forked(tmp_path, "run", *FILES, "--all", "--quiet", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(("returns", "said", "why"), [
    pytest.param('return {"paymentRef": "PAYMENT-1", "status": "PAID"}', '"PAYMENT-1"',
                 'shape :ClaimShape requires sh:pattern "^PAY-[0-9]{6}$"', id="pattern"),
    pytest.param('return dict(paymentRef=f"PAY-{next(_refs):06d}", status="paid")', '"paid"',
                 'shape :ClaimShape requires sh:in ("PAID" "DENIED")', id="in-dict-call"),
])
def test_a_constant_the_domain_shapes_refuse_is_an_error_before_the_payout(
        tmp_path: Path, returns: str, said: str, why: str) -> None:
    """``{"paymentRef": "PAYMENT-1"}`` under ``sh:pattern "^PAY-[0-9]{6}$"`` validated, and
    the run paid the claim (the tool is not idempotent), then the gate rejected the answer:
    nothing landed, the step failed, the money was gone. Read from the function's source, it
    is an error at the binding naming the ``return``'s line; run refuses before calling."""
    line = _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'claims.ttl:{BINDING_LINE}: error: :claims.pay_out: binding '
            f'"python:claims_client.pay_out" of claims.pay_out: its function returns {said} '
            f"for :") in p.stdout, p.stdout
    assert f"(claims_client.py:{line}), but {why}: the gate rejects it" in p.stdout, p.stdout
    assert "return a value the shape allows" in p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", timeout=120)
    assert run.returncode == 2 and f"claims.ttl:{BINDING_LINE}: binding" in run.stderr, (
        run.stdout + run.stderr)
    assert not (tmp_path / "called").exists()  # never called


@pytest.mark.parametrize("tagged", [
    'Literal(f"PAY-{next(_refs):06d}", lang="en")',
    'rdflib.Literal(f"PAY-{next(_refs):06d}", lang="en")',
])
def test_a_language_tagged_literal_for_a_string_is_an_error_before_the_payout(
        tmp_path: Path, tagged: str) -> None:
    """``{"paymentRef": Literal(…, lang="en")}`` for an assertion of ``xsd:string``: an
    ``rdf:langString``, which the gate refused after the payout had acted, on every call."""
    line = _write(tmp_path, "import rdflib\n    from rdflib import Literal\n    "
                            f'return {{"paymentRef": {tagged}, "status": "PAID"}}') + 2
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines()[0] == (
        f'claims.ttl:{BINDING_LINE}: error: :claims.pay_out: binding '
        '"python:claims_client.pay_out" of claims.pay_out: its function returns Literal(…, '
        f'lang="en") for :paymentRef (claims_client.py:{line}), but a language-tagged literal '
        "is an rdf:langString, and the effect writes :paymentRef as xsd:string: the gate "
        "rejects it after the call has acted, nothing of it landing — return the plain str "
        "for :paymentRef (no lang=), or declare its assertion horis:type rdf:langString to "
        "keep the tag"), p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert not (tmp_path / "called").exists()  # never called


def test_one_return_of_two_giving_a_refused_constant_is_a_warning(tmp_path: Path) -> None:
    returns = ('if amount > 1000:\n        return {"paymentRef": "MANUAL"}\n    '
               'return {"paymentRef": f"PAY-{next(_refs):06d}"}')
    line = _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (f"claims.ttl:{BINDING_LINE}: warning: :claims.pay_out: binding "
            f'"python:claims_client.pay_out" of claims.pay_out: one of its function\'s returns '
            f'gives "MANUAL" for :paymentRef (claims_client.py:{line + 1})') in p.stdout, p.stdout


@pytest.mark.parametrize("returns", [
    pytest.param('return {"paymentRef": "PAY-000001", "status": "DENIED"}', id="constants-fit"),
    pytest.param('ref = "PAYMENT-1"\n    return {"paymentRef": ref}', id="a-variable"),
    # its fixed text may still begin a match: "PAY" + "-000001" (test_authoring_formatted_returns)
    pytest.param('return {"paymentRef": f"PAY{amount}"}', id="an-f-string"),
])
def test_no_alarm_where_the_source_does_not_say_the_value_is_refused(
        tmp_path: Path, returns: str) -> None:
    _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr


def test_a_constant_under_a_type_the_shape_refuses_is_said_once_at_the_effect(
        tmp_path: Path) -> None:
    """The effect's ``horis:type`` alone is refused (said at load, at the assertion): the
    constant returned under it is not said again."""
    _write(tmp_path, 'return {"paymentRef": "PAYMENT-1"}')
    onto = tmp_path / "onto.ttl"
    onto.write_text(ONTOLOGY.replace('sh:pattern "^PAY-[0-9]{6}$"', "sh:datatype xsd:token"),
                    encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.count("error:") == 1 and "sh:datatype xsd:token" in p.stdout, p.stdout


def test_a_negative_number_under_a_lower_bound_is_an_error(tmp_path: Path) -> None:
    """``-5`` is a minus before a number in the source, not a constant of its own: read as
    one, it is held to ``sh:minInclusive 0`` as the gate holds the decimal it writes."""
    line = _write(tmp_path, 'return {"paymentRef": f"PAY-{next(_refs):06d}", "fee": -5}')
    (tmp_path / "claims.ttl").write_text(WORKFLOW.replace(
        "horis:asserts [ horis:property :status",
        "horis:asserts [ horis:property :fee ; horis:type xsd:decimal ] ;\n"
        "        horis:asserts [ horis:property :status"), encoding="utf-8")
    (tmp_path / "onto.ttl").write_text(ONTOLOGY.replace(
        "sh:property [ sh:path :status",
        "sh:property [ sh:path :fee ; sh:minInclusive 0 ] ;\n    sh:property [ sh:path :status",
    ) + ":fee a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .\n",
        encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f"its function returns -5 for :fee (claims_client.py:{line}), but shape "
            ":ClaimShape requires sh:minInclusive 0") in p.stdout, p.stdout


@pytest.mark.parametrize(("handler", "refused"), [
    pytest.param('"adjuster-7"', True, id="a-bare-name"),
    pytest.param('":adj7"', False, id="a-curie"),
    pytest.param('"http://example.org/claims#adj7"', False, id="an-iri"),
])
def test_a_constant_no_node_for_a_class_typed_property_is_an_error(
        tmp_path: Path, handler: str, refused: bool) -> None:
    """``{"handler": "adjuster-7"}`` where the effect writes :handler as a node of :Adjuster:
    no IRI nor CURIE, it lands as text, and the gate rejects every answer after the call."""
    line = _write(tmp_path, 'return {"paymentRef": f"PAY-{next(_refs):06d}", '
                            f'"handler": {handler}}}')
    (tmp_path / "claims.ttl").write_text(WORKFLOW.replace(
        "horis:asserts [ horis:property :status",
        "horis:asserts [ horis:property :handler ; horis:type :Adjuster ] ;\n"
        "        horis:asserts [ horis:property :status"), encoding="utf-8")
    (tmp_path / "onto.ttl").write_text(
        ONTOLOGY + ":Adjuster a owl:Class .\n"
        ":handler a owl:ObjectProperty ; rdfs:domain :Claim ; rdfs:range :Adjuster .\n",
        encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    if not refused:
        assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr
        return
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'its function returns "adjuster-7" for :handler (claims_client.py:{line}), but it '
            'takes a node of :Adjuster and "adjuster-7" is no IRI nor CURIE of the files\' '
            "prefixes (it would land as text)") in p.stdout, p.stdout
    assert "return the node's IRI (or the argument that names it) for :handler" in p.stdout


@pytest.mark.parametrize(("returns", "said"), [
    pytest.param("return None", "None", id="none"),
    pytest.param("return [f'PAY-{next(_refs):06d}']", "a list", id="list"),
    pytest.param("return f'PAY-{next(_refs):06d}'", "a string", id="string"),
])
def test_a_function_that_returns_no_dict_is_an_error_before_the_payout(
        tmp_path: Path, returns: str, said: str) -> None:
    """``return f"PAY-…"`` (or a list, or ``None``) for an effect that requires
    ``:paymentRef``: it validated, the run paid the claim, then the gate rejected the answer
    ("the result does not give it"), nothing landed, the money was gone."""
    line = _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'claims.ttl:{BINDING_LINE}: error: :claims.pay_out: binding '
            f'"python:claims_client.pay_out" of claims.pay_out: its function returns {said} '
            f"(claims_client.py:{line}), which the gate rejects after the call has acted") \
        in p.stdout, p.stdout
    assert ':paymentRef is required by the effect and comes in the result\'s key "paymentRef"' \
        in p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert not (tmp_path / "called").exists()  # never called


@pytest.mark.parametrize("returns", [
    pytest.param("result = {'paymentRef': f'PAY-{next(_refs):06d}'}\n    return result",
                 id="a-variable"),
    pytest.param("if amount < 0:\n        return None\n    return {'paymentRef': 'PAY-000001'}",
                 id="one-of-two"),
    pytest.param("yield {'paymentRef': 'PAY-000001'}", id="a-generator"),
])
def test_a_function_that_may_return_a_dict_is_left_to_the_gate(
        tmp_path: Path, returns: str) -> None:
    _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert "which the gate rejects" not in p.stdout, p.stdout


def test_a_function_with_no_return_is_a_warning(tmp_path: Path) -> None:
    """No ``return`` at all (the reference computed, never returned): None, unless what it
    calls always raises, which its source does not say — a warning at validate, and the run
    is left to the gate."""
    _write(tmp_path, "ref = f'PAY-{next(_refs):06d}'")
    line = CLIENT[: CLIENT.index("def pay_out")].count("\n") + 1
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (f'claims.ttl:{BINDING_LINE}: warning: :claims.pay_out: binding '
            f'"python:claims_client.pay_out" of claims.pay_out: its function returns None (it '
            f"has no return) (claims_client.py:{line}), which the gate rejects") in p.stdout
