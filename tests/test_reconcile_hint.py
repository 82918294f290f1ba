"""A run's typed error for a call left in doubt says what to call from Python to clear it.

A run on a shared world (``sparql:``) whose lease runs out while its tool, not idempotent,
is being called: the commit is refused with :class:`~horismos.LeaseLost`, and the call is
held in doubt. Its message said what to do in the command line's words only
(`` `horismos tools reconcile` clears it``); a service driving :meth:`Agent.run` had to find
the method it stands for, and the arguments to give it. The message keeps the command, and
names ``agent.catalog.reconcile(...)`` too, with the arguments that clear the call.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from oxigraph_server import OxigraphServer
from shop_files import CHARGE_TOOL, GUARDED_PAY, PAY_HEAD

from horismos import Agent, LeaseLost, World

DEFS = PAY_HEAD + CHARGE_TOOL + """\
    horis:binding "python:charge" ;
    horis:idempotent false .
""" + GUARDED_PAY + " .\n"


def test_a_lease_lost_mid_call_names_the_python_call_that_clears_it(
    tmp_path: Path, server: OxigraphServer
) -> None:
    from horismos._claims import CLAIMS, C

    # what another worker does to a lease that lapsed: its `alive` dropped
    evict = f"DELETE WHERE {{ GRAPH <{CLAIMS}> {{ ?w <{C}alive> true }} }}"
    world = World.open(server.store)
    charged: list[str] = []

    def charge(order: str) -> dict[str, str]:
        charged.append(order)
        world.store.update(evict)  # paused past its lease, in effect: others took its claims
        return {"paymentRef": "P-1"}

    (tmp_path / "pay.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/pay#> .\n:o1 a :Order .\n")
    agent = Agent.from_files(tmp_path / "pay.ttl", tools={"charge": charge})
    world.load(tmp_path / "world.ttl")

    with pytest.raises(LeaseLost) as lost:
        agent.run(world, focus=":o1")

    said = str(lost.value)
    assert charged and "may have acted" in said
    assert "until `horismos tools reconcile` clears it" in said  # the command line's words
    (call,) = re.findall(r"`agent\.catalog\.reconcile\((.+?), world\)` in Python", said)
    name, args = ast.literal_eval(f"({call})")
    assert name == "t.charge" and args == {"order": "http://example.org/pay#o1"}

    # another run takes the instance over and holds the call in doubt; then the call named
    # clears it, as the command does
    again = agent.run(world, focus=":o1")
    assert again.status == "failed" and "in Python" in str(again.instances[0].error)
    assert agent.catalog.reconcile(name, args, world, verdict="not-acted") is not None
    assert len(charged) == 1
    world.close()
