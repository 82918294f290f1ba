"""A tool's ledger, and the payment whose tools keep one.

A test whose process is killed mid-way counts what its tools did in a ledger: ``ledger.txt``
in the project's folder, one line a call, appended and synced by the tool before it
answers, so it holds what was done whatever was killed when. The payment of test_durable and
test_kill_points charges an order (not idempotent), then sends a notice (idempotent); a
charge in doubt waits at ``:Reconcile``. Each file writes its own payments.py and :Charge
step (its requirement, its ``horis:next``) around these pieces; they were copied between them.
"""

from __future__ import annotations

from pathlib import Path

# what the payments' definitions open with (the ``pay#`` namespace)

PREFIXES = """\
@prefix :      <http://example.org/pay#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

def ledger(folder: Path) -> list[str]:
    """What the tools in ``folder`` did, a line each, in order (none: no ledger yet)."""
    path = folder / "ledger.txt"
    return path.read_text().splitlines() if path.exists() else []


# the charge tool's own lines (``horis:idempotent false``, an approval …) follow
CHARGE_TOOL = """\
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:asserts [ horis:property :chargeRef ; horis:type xsd:string ] ] ;
    horis:binding "python:payments.charge" ;
    horis:timeout "5m" ;
"""

NOTIFY_TOOL = """\
:t.notify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:asserts [ horis:property :notice ; horis:type xsd:string ] ] ;
    horis:binding "python:payments.notify" ;
    horis:timeout "5m" ;
    horis:idempotent true .
"""

# what follows :Charge (``horis:next :Notify ; horis:onError :Reconcile``): the notice, and
# the wait where an operator records the charge's reference once the provider said
AFTER_CHARGE = """\
:Notify a horis:ActionStep ;
    horis:tool :t.notify ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .

:Reconcile a horis:WaitStep ;
    horis:reason "The charge may have gone through: check with the payment provider." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :chargeRef ?ref ." ;
    horis:next :Notify .
"""
