"""The HTTP bindings and MCP server URLs an allow-list of hosts leaves out, said by validate.

Why: ``validate --allow-host status.example.org`` (or the project's ``allow-hosts`` in
``pyproject.toml``) said "valid" of a status-page tool bound to ``http://127.0.0.1:8781/…``,
and the run with the same list refused before its first step, naming the host. ``validate``
took the option and checked nothing with it. Each binding and server URL is held to the list as
a run holds it (:meth:`~._bindings.reach.Hosts.problem`), without resolving host names (a
validation does not ask DNS), and only when a list is given: without one every host but the
cloud's internal addresses may be reached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._bindings.reach import Hosts
from ._errors import Problem
from ._model import ActionStep
from ._vocab import HORIS

if TYPE_CHECKING:
    from ._definitions import Definitions

__all__ = ["unreached_hosts"]


def unreached_hosts(defs: Definitions, hosts: Hosts) -> list[Problem]:
    """An error at each HTTP binding a workflow calls, and each MCP server ``horis:url``,
    whose host ``hosts`` does not allow: a run with that list refuses it before any step. A
    tool no workflow calls is a warning (``tools call`` refuses it; a run never asks)."""
    if not hosts.allowed:
        return []
    called = {
        s.tool.iri
        for wf in defs.workflows.values()
        for s in wf.reachable()
        if isinstance(s, ActionStep) and s.tool is not None
    }
    # a tool the load found wrong too, when it gave up: its binding is judged all the same
    tools = {**defs.broken_tools, **defs.tools}
    found: list[Problem] = []
    for tool in sorted(tools.values(), key=lambda t: str(t.iri)):
        if not tool.binding.startswith(("http://", "https://")):
            continue
        why = hosts.problem(tool.binding, resolve=False)
        if why is not None:
            found.append(
                defs._sources.problem(
                    "error" if tool.iri in called else "warning",
                    tool.iri,
                    f'binding "{tool.binding}" reaches a host outside the allowed ones, so '
                    + (
                        "a run refuses it before any step"
                        if tool.iri in called
                        else "tools call refuses it"
                    ),
                    why,
                    at=(tool.iri, HORIS.binding, None),
                )
            )
    for name, server in sorted(defs.mcp_servers.items()):
        if server.url is None:
            continue
        why = hosts.problem(server.url, resolve=False)
        if why is not None:
            used = any(tools[t].binding.startswith(f"mcp://{name}/") for t in called if t in tools)
            found.append(
                defs._sources.problem(
                    "error" if used else "warning",
                    server.iri,
                    f'horis:url "{server.url}" reaches a host outside the allowed ones, so a '
                    "run refuses each tool of the server before any step",
                    why,
                    at=(server.iri, HORIS.url, None),
                )
            )
    return found
