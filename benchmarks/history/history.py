"""The tools of benchmarks/history/history.ttl (bindings ``python:history.NAME``): small pure
functions, for ``Agent.from_files(..., tools=TOOLS)`` and for ``--tools`` on the command line
(bench_history.py, bench_lanes.py)."""

from __future__ import annotations

import itertools

from rdflib import URIRef

__all__ = ["TOOLS", "mark", "pick", "send", "touch"]

_refs = itertools.count(1)


def mark(case: URIRef) -> dict[str, object]:
    return {"markRef": f"M-{next(_refs)}"}


def send(case: URIRef) -> dict[str, object]:
    return {}


def touch(item: URIRef) -> dict[str, object]:
    return {}


def pick(case: URIRef, option: URIRef) -> dict[str, object]:
    return {"picked": option}


TOOLS = {"history.mark": mark, "history.send": send, "history.touch": touch,
         "history.pick": pick}
