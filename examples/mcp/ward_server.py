"""A stand-in ward system, served over MCP (stdio) with the SDK's ``MCPServer``.

Horismos starts it as ``python -m ward_server`` in this folder (the folder of ``clinic.ttl``,
which declares it), opens one session for the whole run and calls ``assign_bed`` once per
patient. The answer carries ``occupancy`` too: the server's output schema declares it, the
tool's effect does not, so Horismos narrows it away and the trace says so.
"""

from __future__ import annotations

import itertools
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

server = MCPServer("ward")
_beds = itertools.count(1)


class Bed(TypedDict):
    bed: str
    occupancy: float


@server.tool()
def assign_bed(patient: str, ward: str) -> Bed:
    """Give the patient a bed on the ward; answers with the bed and the ward's occupancy."""
    code = ward.rsplit("#", 1)[-1].upper()
    n = next(_beds)
    return {"bed": f"{code}-{n:02d}", "occupancy": round(0.5 + n / 20, 2)}


if __name__ == "__main__":
    server.run()
