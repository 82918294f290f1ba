"""Reading ``horis:Adapter`` declarations and the adapter side of a tool from the definitions.

Why apart from :mod:`._definitions`: adapters are one concept (a system of record, the scopes
it grants, the scopes a tool commits under), and the loader only asks this module for them.
The SHACL authoring shapes check each value's form (a URL without credentials, an environment
variable's name rather than a secret, a SMART-on-FHIR scope); this module checks what needs
more than one node: a tool's adapter that is not declared (with the one meant), a commit
scope that is no write scope (with the granted one meant), a tool's commit scope that its
adapter does not grant (a warning: the run refuses such a commit before sending anything), a
commit scope on a tool with no adapter (the
tool was then called as any other, given IRIs, under no ``ExternalCommit`` policy), and
``horis:onPartial`` on a step whose tool commits to no adapter.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from rdflib import RDF, Graph, URIRef
from rdflib.term import Node

from ._model import Adapter
from ._scopes import Scope, covers
from ._vocab import HORIS

__all__ = ["partial_without_adapter", "read_adapters", "tool_adapter"]

Report = Callable[..., None]
"""``report(node, message, hint, at=...)``: the loader's error or warning."""


def _text(g: Graph, s: Node, p: URIRef) -> str | None:
    v = next(iter(g.objects(s, p)), None)
    return None if v is None else str(v)


def read_adapters(g: Graph, local: Callable[[Node], str]) -> dict[URIRef, Adapter]:
    """Every declared adapter; malformed values are the shapes' to report, so what cannot be
    used is left out here rather than reported twice."""
    out: dict[URIRef, Adapter] = {}
    for s in sorted(set(g.subjects(RDF.type, HORIS.Adapter)), key=str):
        base = _text(g, s, HORIS.baseUrl)
        if not isinstance(s, URIRef) or base is None:
            continue
        mapping = next(iter(g.objects(s, HORIS.mapping)), None)
        out[s] = Adapter(
            s,
            local(s),
            base.rstrip("/"),
            _text(g, s, HORIS.tokenFromEnv),
            tuple(sorted(str(x) for x in g.objects(s, HORIS.grantedScope))),
            mapping if isinstance(mapping, URIRef) else HORIS.FhirJsonLd,
        )
    return out


def tool_adapter(
    g: Graph,
    tool: Node,
    adapters: dict[URIRef, Adapter],
    error: Report,
    warn: Report,
    name: Callable[[Node], str],
) -> dict[str, Any]:
    """The ``adapter`` and ``commit_scopes`` fields of the tool ``tool`` (empty for a tool that
    commits to no system of record)."""
    node = next(iter(g.objects(tool, HORIS.adapter)), None)
    if node is None:
        written = next(iter(g.objects(tool, HORIS.commitScope)), None)
        if written is not None:  # the adapter left out: the tool would run as any other
            declared = sorted(name(a) for a in adapters)
            if len(declared) == 1:
                hint = f"add horis:adapter {declared[0]}, the system it commits to"
            elif declared:
                hint = f"add horis:adapter naming one of {', '.join(declared)}"
            else:
                hint = (
                    'declare the system of record, :ehr a horis:Adapter ; horis:baseUrl "…", '
                    "and add horis:adapter :ehr"
                )
            warn(
                tool,
                "horis:commitScope on a tool with no horis:adapter: it commits to no system "
                "of record, so it is called as a plain binding, each argument given as its "
                "IRI rather than the resource's JSON, under the run's policy for a tool that "
                "writes only the world (not horis:ExternalCommit)",
                hint,
                at=(tool, HORIS.commitScope, written),
            )
        return {}
    adapter = adapters.get(node) if isinstance(node, URIRef) else None
    scopes = tuple(sorted(str(x) for x in g.objects(tool, HORIS.commitScope)))
    if adapter is None and isinstance(node, URIRef):
        names = sorted(name(a) for a in adapters)
        near = difflib.get_close_matches(name(node), names, n=1)
        error(
            tool,
            f"horis:adapter {name(node)} names no declared horis:Adapter",
            f"did you mean {near[0]}?"
            if near
            else f'declare it: {name(node)} a horis:Adapter ; horis:baseUrl "…"'
            + (f" (declared: {', '.join(names)})" if names else ""),
            at=(tool, HORIS.adapter, node),
        )
    if adapter is not None:
        for scope in scopes:
            if not _writes(scope):  # the granted scopes are beside the point: said once
                writes = [s for s in adapter.scopes if _writes(s)]
                meant = difflib.get_close_matches(scope, writes, n=1, cutoff=0)
                error(
                    tool,
                    f'horis:commitScope "{scope}" is no SMART-on-FHIR write scope: a tool '
                    "commits under one that lets it create or update",
                    f'did you mean "{meant[0]}", which {name(node)} grants?'
                    if meant
                    else 'write one such as "system/ServiceRequest.write"',
                    at=(tool, HORIS.commitScope, None),
                )
            elif not any(covers(granted, scope) for granted in adapter.scopes):
                warn(
                    tool,
                    f'commit scope "{scope}" is not among the scopes {name(node)} '
                    "grants (" + (", ".join(adapter.scopes) or "none") + "), so every call "
                    "will be refused before anything is sent",
                    f'add horis:grantedScope "{scope}" to {name(node)} if it is granted',
                    at=(tool, HORIS.commitScope, None),
                )
    return {"adapter": adapter, "commit_scopes": scopes}


def _writes(scope: str) -> bool:
    """Whether ``scope`` is a scope that lets a commit create, update or delete."""
    parsed = Scope.parse(scope)
    return parsed is not None and bool(parsed.allows & frozenset("cud"))


def partial_without_adapter(
    g: Graph, step: Node, tool_adapter_of: Adapter | None, warn: Report
) -> None:
    """``horis:onPartial`` means something only for a step that commits to an adapter."""
    target = next(iter(g.objects(step, HORIS.onPartial)), None)
    if target is not None and tool_adapter_of is None:
        warn(
            step,
            "horis:onPartial is taken only by a step whose tool commits to a "
            "horis:Adapter; this one's does not, so it is never taken",
            "use horis:onError, or bind the tool to an adapter",
            at=(step, HORIS.onPartial, target),
        )
