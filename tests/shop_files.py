"""What the tests over a shop share: the Turtle their definitions open with (the prefixes, the
order class, the payment property), the charge tool's arguments and effect, the workflow that
charges an order, and the worlds of one or two orders. Each test file adds its own lines (the
tool's binding, timeout, retries) around these pieces.

A charge made at most once (a tool not idempotent, guarded by the order's reference; the
tests that kill or pause its process, and benchmarks/chaos_once.py) adds the tool's guard and
the guarded workflow; a transfer the tool that moves money, on approval. Those tests name
their shop ``pay#`` (or ``chaos#``): :func:`head` opens any namespace the same way.
"""

from __future__ import annotations


def prefixes(ns: str) -> str:
    """The prefixes a shop's definitions open with, ``:`` being ``ns``."""
    return f"""\
@prefix :      <{ns}> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""


ORDER_TERMS = """\
:Order a owl:Class .
:paymentRef a owl:DatatypeProperty .
"""

TRANSFER_TERMS = """\
:Transfer a owl:Class .
:transferRef a owl:DatatypeProperty .
"""


def head(ns: str) -> str:
    """:data:`SHOP_HEAD` in the namespace ``ns``."""
    return prefixes(ns) + ORDER_TERMS


SHOP_HEAD = head("http://example.org/shop#")
PAY_HEAD = head("http://example.org/pay#")

# the tool's own lines (binding, timeout, idempotent …) follow
CHARGE_TOOL = """\
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
"""

# after CHARGE_TOOL: a charge is refused once the order holds a payment reference
CHARGE_GUARD = """\
    horis:requires "FILTER NOT EXISTS { ?order :paymentRef ?r }" ;
"""

PAY_WORKFLOW = """\
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

# :Pay whose step charges only an order holding no payment reference yet; the step's own
# ending follows (" .\n", or " ;\n    horis:onError :Check .\n")
GUARDED_PAY = """\
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Order . FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ]"""

# the tool's own lines (binding, approval, idempotent …) follow
TRANSFER_TOOL = """\
:t.transfer a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "transfer" ; horis:type :Transfer ] ] ;
    horis:effect [ horis:subject "transfer" ;
        horis:asserts [ horis:property :transferRef ; horis:type xsd:string ] ] ;
"""

# :Pay charging in Python (``python:charge``), and that charge as a module (shop.py): a line
# in the file ``ledger`` a call, so a test counts the calls made whatever process made them
PYTHON_PAY = SHOP_HEAD + CHARGE_TOOL + '    horis:binding "python:charge" .\n' + PAY_WORKFLOW

CHARGE_PY = """\
def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    return {"paymentRef": "P-1"}
"""

ONE_ORDER = "@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n"

TWO_ORDERS = """\
@prefix : <http://example.org/shop#> .
:o1 a :Order .
:o2 a :Order .
"""
