"""What the tests over a shop share: the Turtle their definitions open with (the prefixes, the
order class, the payment property), the charge tool's arguments and effect, the workflow that
charges an order, and the worlds of one or two orders. Each test file adds its own lines (the
tool's binding, timeout, retries) around these pieces."""

from __future__ import annotations

SHOP_HEAD = """\
@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Order a owl:Class .
:paymentRef a owl:DatatypeProperty .
"""

# the tool's own lines (binding, timeout, idempotent …) follow
CHARGE_TOOL = """\
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
"""

PAY_WORKFLOW = """\
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

ONE_ORDER = "@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n"

TWO_ORDERS = """\
@prefix : <http://example.org/shop#> .
:o1 a :Order .
:o2 a :Order .
"""
