"""The order billed at most once: a billing tool that is not idempotent, refused once the order
holds its reference; shop.py bills by appending the order to the ledger ``LEDGER`` names,
lingering ``BILL_SECONDS`` in its call so that a test can kill it there; the run of ``:o1``
on ``oxigraph:store``. test_event_service runs it in-process (its own bill); test_cli_no_again,
test_incident_review and test_review_artefacts run the commands. These lived in
test_event_service and test_cli_no_again, which the others imported, and each wrote the
project and loaded its world with its own copy of the same lines.
"""

from __future__ import annotations

import os
from pathlib import Path

from charge_ledger import PREFIXES
from forked import horismos_forked

DEFINITIONS = PREFIXES + """
:Order a owl:Class .
:billRef a owl:DatatypeProperty .

:t.bill a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
                   horis:asserts [ horis:property :billRef ; horis:type xsd:string ] ] ;
    horis:binding "python:shop.bill" ;
    horis:idempotent false .

:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Bill .
:Bill a horis:ActionStep ; horis:tool :t.bill ;
    horis:requires "?this a :Order . FILTER NOT EXISTS { ?this :billRef ?r }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

SHOP = '''\
import os, time
from pathlib import Path

def bill(order):
    ledger = Path(os.environ["LEDGER"])
    with ledger.open("a") as f:
        f.write(str(order) + "\\n")
    time.sleep(float(os.environ.get("BILL_SECONDS", "0")))
    return {"billRef": "B-" + str(len(ledger.read_text().splitlines()))}
'''


RUN = ("run", "pay.ttl", "--tools", "shop", "--store", "oxigraph:store", "--focus", ":o1")


def project(folder: Path, definitions: str = DEFINITIONS, shop: str = SHOP) -> None:
    """pay.ttl, a world of ``:o1`` and shop.py in ``folder``."""
    (folder / "pay.ttl").write_text(definitions)
    (folder / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (folder / "shop.py").write_text(shop)


def loaded(folder: Path) -> dict[str, str]:
    """The project in ``folder``, its world loaded into ``oxigraph:store``: the environment
    its commands run in (the ledger beside it, the store's lock waited for)."""
    project(folder)
    env = dict(os.environ, LEDGER=str(folder / "ledger"), HORISMOS_LOCK_WAIT="60")
    done = horismos_forked(folder, "load", "world.ttl", "--store", "oxigraph:store", env=env)
    assert done.returncode == 0, done.stderr
    return env


def bills(folder: Path) -> list[str]:
    """The orders billed, in order."""
    ledger = folder / "ledger"
    return ledger.read_text().splitlines() if ledger.exists() else []
