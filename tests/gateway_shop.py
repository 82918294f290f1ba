"""What the tests of a proxy in front of the tool share (test_harm_gateway: a gateway's 502,
504; test_harm_envoy503: Envoy's 503s): the shop whose charge, not idempotent unless told,
goes over HTTP to ``URL`` or to the MCP server ``:bank`` there, and the world of one order.
test_harm_envoy503 imported these from test_harm_gateway, and both wrote the agent the same.
"""

from __future__ import annotations

from pathlib import Path

from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD

from horismos import Agent, World

# URL, IDEMPOTENT and RETRIES replaced by the test
DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "URL" ;
    horis:timeout "10s" ;
    horis:idempotent IDEMPOTENT ;
    horis:retries RETRIES .
""" + PAY_WORKFLOW

# the charge a tool of the MCP server at URL (tests/servers/mcp_mangled.py), not idempotent
MCP_DEFS = DEFS.replace('horis:binding "URL"', 'horis:binding "mcp://bank/charge"').replace(
    ":t.charge a horis:Tool", ':bank a horis:McpServer ; horis:url "URL" .\n:t.charge a horis:Tool'
).replace("IDEMPOTENT", "false").replace("RETRIES", "0")

WORLD = ONE_ORDER


def shop_agent(tmp_path: Path, url: str, idempotent: bool = False, retries: int = 0) -> Agent:
    """The shop charging over HTTP at ``url``."""
    defs = (DEFS.replace("URL", url).replace("IDEMPOTENT", str(idempotent).lower())
            .replace("RETRIES", str(retries)))
    (tmp_path / "defs.ttl").write_text(defs, encoding="utf-8")
    return Agent.from_files(tmp_path / "defs.ttl")


def shop_world(tmp_path: Path) -> World:
    """The world of one order, from a file in ``tmp_path``."""
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    return World.from_files(tmp_path / "world.ttl")
