"""A store that goes away while a tool is being called: the person is told the tool may have
acted.

The SPARQL server stopped after the tool charged and before the call's commit. All the command
said was the store's own error — "cannot be reached … start the server" — which reads as
nothing having happened; someone who then made the charge by hand charged twice. The command
still exits 2 (the store's error) and nothing is called again, but it now says that the tool
was called, may have acted, and is held in doubt. Real processes: ``oxigraph serve``, the
command line, a tool that charges (a ledger) and then stops the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from forked import horismos_forked
from oxigraph_server import OxigraphServer
from shop_files import CHARGE_TOOL, PAY_WORKFLOW, SHOP_HEAD, TWO_ORDERS

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "python:shop.charge" ;
    horis:timeout "20s" ;
    horis:idempotent false .
""" + PAY_WORKFLOW

WORLD = TWO_ORDERS

# charges (a line in the ledger), then stops the store: the call's commit finds it gone
SHOP = """\
import os, signal, socket, time

def charge(order):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(str(order) + "\\n")
    os.kill(int(os.environ["STORE_PID"]), signal.SIGTERM)
    while True:  # until nothing listens there
        try:
            socket.create_connection(("127.0.0.1", int(os.environ["STORE_PORT"])), 0.2).close()
        except OSError:
            break
        time.sleep(0.05)
    return {"paymentRef": "P-" + str(order).rsplit("#", 1)[-1]}
"""


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[tuple[Path, OxigraphServer]]:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "shop.py").write_text(SHOP, encoding="utf-8")
    server = OxigraphServer(tmp_path / "store")
    p = horismos_forked(tmp_path, "load", "world.ttl", "--store", server.store, timeout=120)
    assert p.returncode == 0, p.stderr
    yield tmp_path, server
    server.stop()


def _env(folder: Path, server: OxigraphServer) -> dict[str, str]:
    import os

    return {**os.environ, "LEDGER": str(folder / "ledger"), "STORE_PID": str(server.process.pid),
            "STORE_PORT": str(server.port), "HORISMOS_LEASE": "0.5"}


def _ledger(folder: Path) -> list[str]:
    path = folder / "ledger"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


@pytest.mark.parametrize("lane", ["run", "tools call"])
def test_a_store_lost_mid_call_is_said_with_the_call_that_may_have_acted(shop, lane) -> None:
    folder, server = shop
    command = (
        ["run", "defs.ttl", "--focus", ":o1", "--allow-module", "shop"]
        if lane == "run"
        else ["tools", "call", "t.charge", "defs.ttl", "--args", '{"order": ":o1"}',
              "--allow-module", "shop"]
    )
    p = horismos_forked(folder, *command, "--store", server.store, env=_env(folder, server),
                        timeout=120)

    assert _ledger(folder) == ["http://example.org/shop#o1"]
    said = p.stdout + p.stderr
    assert p.returncode == 2, said
    assert "Traceback" not in said
    assert "cannot be reached" in p.stderr  # the store's own error, still said
    assert "t.charge was called and may have acted" in p.stderr, p.stderr
    assert "tools reconcile" in p.stderr

    # what it says holds: once the store is back, running again does not charge again
    server.start()
    again = horismos_forked(folder, *command, "--store", server.store,
                            env=_env(folder, server), timeout=120)
    assert again.returncode != 0, again.stdout + again.stderr
    assert _ledger(folder) == ["http://example.org/shop#o1"]
