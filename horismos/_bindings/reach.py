"""What this process lets bindings reach: which code, which modules, which hosts.

Definitions are data; whoever runs them decides what they may touch. A :class:`Reach` is the
callables registered for ``python:NAME`` (it is a mapping of them), the modules a
``python:module.func`` may import from, and the :class:`Hosts` an HTTP binding or an MCP
server URL may connect to. None of it can be widened from Turtle.

Hosts: with no allow-list every host may be reached but the cloud's internal ones — link-local
addresses (``169.254.0.0/16``, ``fe80::/10``, where instance metadata and credentials are
served), ``fd00:ec2::254``, ``100.100.100.200`` and names such as ``metadata.google.internal``
— which are refused unless named explicitly. With an allow-list (per run: ``--allow-host``,
``allow_hosts=``; per project: ``allow-hosts`` under ``[tool.horismos]`` in the
``pyproject.toml`` of the current folder) only the hosts it names are reached. An entry is a
host name (``api.example.org``), a suffix (``*.example.org``), an address or a network
(``10.0.0.0/8``), with no port (every port of a host is allowed) and no brackets. A host name
is also resolved when the binding is checked, so a name that points at an internal address is
refused too (a name that changes its address between the check and the connection is not
caught).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .._errors import UsageError

__all__ = ["INTERNAL_NAMES", "Hosts", "Reach", "allowed_host"]

INTERNAL_NAMES = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
_INTERNAL_NETS = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32")
)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Hosts:
    """The outbound-host policy: ``allowed`` empty means any host but the internal ones."""

    allowed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for entry in self.allowed:
            allowed_host(entry)

    def problem(self, url: str, *, resolve: bool = True) -> str | None:
        """Why ``url`` may not be reached from this process, or None."""
        try:
            host = (urlsplit(url).hostname or "").lower().rstrip(".")
        except ValueError:
            return f"{url!r} is not a URL"
        explicit = self._named(host, exact=True)
        addresses = _addresses(host, resolve)
        internal = host in INTERNAL_NAMES or any(_internal(a) for a in addresses)
        if internal and not explicit:
            return (
                f"host {host} is a link-local or cloud metadata address, refused unless "
                f'allowed by name: --allow-host {host} (allow_hosts=["{host}"])'
            )
        if self.allowed and not (explicit or self._named(host, exact=False)):
            return (
                f"host {host} is not in the allowed hosts ({', '.join(self.allowed)}); "
                f'add it with --allow-host {host} (allow_hosts=[..., "{host}"] in Python) or '
                "to allow-hosts in pyproject.toml"
            )
        return None

    def _named(self, host: str, *, exact: bool) -> bool:
        literal = _address(host)
        for entry in self.allowed:
            e = entry.lower().rstrip(".")
            if e == host:
                return True
            net = _network(e)
            if net is not None and literal is not None and literal in net:
                return True
            if not exact and e.startswith("*.") and host.endswith(e[1:]):
                return True
        return False


def allowed_host(entry: str) -> str:
    """``entry`` when it can name hosts to allow, else the :class:`UsageError` that says what
    to write: the command line checks each ``--allow-host`` so as it reads it. A URL's host is
    compared without its port and an IPv6 address without brackets (:meth:`Hosts.problem`),
    so an entry with either would match no URL: it is refused, not left to refuse every call."""
    if not entry or ("/" in entry and _network(entry) is None) or " " in entry:
        raise UsageError(
            f"allowed host {entry!r}: give a host name (api.example.org), *.example.org, an "
            "address or a network (10.0.0.0/8)"
        )
    if "[" in entry or "]" in entry or entry.count(":") == 1:  # [::1], host:8443
        raise UsageError(
            f"allowed host {entry!r}: give a host name or IP address, without a port or "
            "brackets (api.example.org, ::1): every port of an allowed host may be reached"
        )
    return entry


def _address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def _addresses(host: str, resolve: bool) -> list[Address]:
    literal = _address(host)
    if literal is not None:
        return [literal]
    if not resolve or not host:
        return []
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return []  # it cannot be reached at all; the call will say so
    found = [_address(str(info[4][0]).split("%")[0]) for info in infos]
    return [a for a in found if a is not None]


def _internal(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address.version == n.version and address in n for n in _INTERNAL_NETS)


class Reach(dict[str, Callable[..., Any]]):
    """The callables ``python:NAME`` bindings may reach (the mapping itself), the modules a
    ``python:module.func`` may come from (a module and its submodules), and the hosts an
    HTTP binding or MCP server URL may connect to."""

    def __init__(
        self,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        allowed_modules: Iterable[str] = (),
        hosts: Hosts | None = None,
    ) -> None:
        if tools is not None and not isinstance(tools, Mapping):
            # a list of functions (as --tools takes a module) ended in dict()'s "cannot convert
            # dictionary update sequence element #0 to a sequence"
            names = [getattr(f, "__name__", None) for f in tools] if _listed(tools) else []
            example = ", ".join(f'"{n}": {n}' for n in names[:2] if n and n.isidentifier())
            example = example or '"NAME": function'
            raise UsageError(
                f"tools is a {type(tools).__name__}: give a mapping of each python:NAME "
                f"binding's NAME to its function, e.g. tools={{{example}}}"
            )
        super().__init__(tools or {})
        for name, fn in self.items():  # else the first call raised "'int' object is not callable"
            if not callable(fn):
                shown = repr(fn)[:80]
                raise UsageError(
                    f"tools[{name!r}] is {type(fn).__name__} {shown}, not a function: give the "
                    f'callable that bindings "python:{name}" call'
                )
        inherited = tools.allowed_modules if isinstance(tools, Reach) else ()
        names = [m.strip() for m in (*inherited, *allowed_modules)]
        for m in names:
            if not m or not all(part.isidentifier() for part in m.split(".")):
                raise UsageError(
                    f"allowed module {m!r}: give a module name such as "
                    '"ehr_client" or "mylib.tools"'
                )
        self.allowed_modules: tuple[str, ...] = tuple(dict.fromkeys(names))
        self.hosts: Hosts = hosts or (tools.hosts if isinstance(tools, Reach) else Hosts())

    def allows(self, module: str) -> bool:
        return any(module == m or module.startswith(m + ".") for m in self.allowed_modules)


def _listed(tools: object) -> bool:
    """Whether ``tools`` is a list, tuple or set (of functions, its user meant): their names
    can be shown in the mapping to give instead."""
    return isinstance(tools, list | tuple | set | frozenset)


def hosts_of(registry: Mapping[str, Any]) -> Hosts:
    """The outbound-host policy a registry carries; a plain mapping of callables, as a library
    caller may pass, carries none, and gets the default."""
    return registry.hosts if isinstance(registry, Reach) else Hosts()
