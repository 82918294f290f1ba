"""A trace as the HTML viewer reads it: compact, columnar, and only what a person looks at.

Why not embed the trace itself: a trace of 100,000 events is mostly what replay needs (every
answer the run read of the world, each hash in full); a reviewer needs the instances, their
steps on a time axis, and each step's arguments, outcome, verdict and effects. So the page
gets one row per instance and one per step as parallel arrays of small integers and
milliseconds (repeated IRIs, kinds and statuses interned in one string table), and each step's
details once, without ``reads`` (their count is kept) and with hashes shortened to their first
16 hex digits. The chain was checked when the trace was read; the page shows each event's
place in it. :mod:`horismos._viewer` compresses the result into the page.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._event_shape import reading
from ._run_counts import instance_status
from ._signing import verifier_from_env
from ._terms import split_iri

__all__ = ["prefixes_for", "view_model"]

_NOT_DETAIL = frozenset(
    {
        "type",
        "seq",
        "prev",
        "hash",
        "sig",
        "reads",
        "result",
        "instance",
        "step",
        "kind",
        "tool",
        "status",
        "next",
        "clock",
        "ids",
    }
)
_WELL_KNOWN = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
    "http://www.w3.org/2001/XMLSchema#": "xsd",
    "http://www.w3.org/2002/07/owl#": "owl",
    "http://www.w3.org/ns/shacl#": "sh",
    "http://www.w3.org/ns/prov#": "prov",
    "https://w3id.org/horismos#": "horis",
}
_IRI = re.compile(r"<([^<>\s]+)>")
_SAMPLE = 2000  # steps whose terms are scanned for namespaces: they repeat


class _Strings:
    """One table of the strings many rows repeat; a row holds an index into it."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, value: Any) -> int:
        if value is None:
            return -1
        text = str(value)
        at = self._at.get(text)
        if at is None:
            at = self._at[text] = len(self.table)
            self.table.append(text)
        return at


def view_model(events: Sequence[Mapping[str, Any]], *, source: str) -> dict[str, Any]:
    """What the viewer shows of ``events`` (as read_trace returns them), as JSON values."""
    header = events[0] if events else {}
    base = _millis(header.get("started")) or _first_clock(events) or 0.0
    strings = _Strings()
    inst_at: dict[str, int] = {}
    instances: dict[str, list[Any]] = {
        k: []
        for k in (
            "id",
            "focus",
            "workflow",
            "seq",
            "continued",
            "first",
            "count",
            "t0",
            "t1",
            "status",
        )
    }
    steps: dict[str, list[Any]] = {
        k: [] for k in ("inst", "step", "kind", "tool", "status", "seq", "t0", "t1", "next")
    }
    details: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    last: dict[int, Mapping[str, Any]] = {}
    clock = 0.0
    for index, e in enumerate(events):
        with reading(e, index, source):
            kind = e.get("type")
            if kind == "instance" and str(e.get("instance")) not in inst_at:
                inst_at[str(e["instance"])] = _add_instance(
                    instances,
                    e,
                    strings(e.get("focus")),
                    strings(e.get("workflow")),
                    continued="continued_at" in e,
                )
                continue
            if (
                kind in ("step", "resume")
                and e.get("instance") is not None
                and str(e["instance"]) not in inst_at
            ):  # resumed here: started by an earlier process
                # a resume's trace is of that one instance: its header names its focus
                focus = header.get("focus") or []
                inst_at[str(e["instance"])] = _add_instance(
                    instances,
                    e,
                    strings(focus[0]) if len(focus) == 1 else -1,
                    strings(header.get("workflow")),
                    continued=True,
                )
            if kind == "step" and e.get("instance") is not None:
                at = inst_at[str(e["instance"])]
                t0, t1 = _span(e, base, clock)
                clock = max(clock, t1)
                n = len(steps["inst"])
                for key, value in (
                    ("inst", at),
                    ("step", strings(e.get("step"))),
                    ("kind", strings(e.get("kind"))),
                    ("tool", strings(e.get("tool"))),
                    ("status", strings(e.get("status"))),
                    ("seq", e.get("seq")),
                    ("t0", t0),
                    ("t1", t1),
                    ("next", strings(e.get("next"))),
                ):
                    steps[key].append(value)
                details.append(_detail(e))
                if instances["first"][at] < 0:
                    instances["first"][at] = n
                    instances["t0"][at] = t0
                instances["count"][at] += 1
                instances["t1"][at] = t1
                last[at] = e
            elif kind not in ("header", "end"):
                other = {k: v for k, v in e.items() if k not in ("reads", "prev", "sig")}
                other["hash"] = _short_hash(e.get("hash"))
                t = _millis((e.get("clock") or [None])[0])
                other["t"] = round(t - base, 3) if t is not None else clock
                if e.get("instance") is not None and str(e["instance"]) in inst_at:
                    other["inst"] = inst_at[str(e["instance"])]
                others.append(other)
    for at in range(len(instances["id"])):
        instances["status"][at] = strings(instance_status(last.get(at)))
    end = events[-1] if events and events[-1].get("type") == "end" else None
    signed = any("sig" in e for e in events[:1])
    run = {
        "source": source,
        "workflow": header.get("workflow"),
        "focus": len(header.get("focus") or []),
        "started": header.get("started"),
        "trace_version": header.get("trace_version"),
        "world_digest": header.get("world_digest"),
        "definitions_digest": header.get("definitions_digest"),
        "store": header.get("store"),
        "policy": header.get("policy"),
        "events": len(events),
        "complete": end is not None,
        "status": end.get("status") if end else "stopped",
        "end_world_digest": end.get("world_digest") if end else None,
        "end_hash": _short_hash(end.get("hash")) if end else None,
        "duration": clock,
        "signed": signed,
        "verified": signed and verifier_from_env() is not None,  # read_trace checked them
    }
    return {
        "run": run,
        "strings": strings.table,
        "instances": instances,
        "steps": steps,
        "details": details,
        "others": others,
        "prefixes": prefixes_for([*strings.table, *_sample_terms(details)]),
    }


def _add_instance(
    instances: dict[str, list[Any]],
    e: Mapping[str, Any],
    focus: int,
    workflow: int,
    *,
    continued: bool,
) -> int:
    """A new row of the instance table, from the event that introduces the instance; its
    steps fill in the rest."""
    for key, value in (
        ("id", str(e["instance"])),
        ("focus", focus),
        ("workflow", workflow),
        ("seq", e.get("seq")),
        ("continued", int(continued)),
        ("first", -1),
        ("count", 0),
        ("t0", None),
        ("t1", None),
        ("status", -1),
    ):
        instances[key].append(value)
    return len(instances["id"]) - 1


def _detail(e: Mapping[str, Any]) -> dict[str, Any]:
    d = {k: v for k, v in e.items() if k not in _NOT_DETAIL and v not in (None, [], {})}
    d["hash"] = _short_hash(e.get("hash"))
    if e.get("reads"):
        d["reads"] = len(e["reads"])
    return d


def _span(e: Mapping[str, Any], base: float, before: float) -> tuple[float, float]:
    """When the step started and ended, in ms since the run started: its first clock value
    (else where the previous step ended), and the later of its last clock value and its start
    plus its timings."""
    clock = [t for t in (_millis(c) for c in e.get("clock") or []) if t is not None]
    t0 = clock[0] - base if clock else before
    took = sum(v for v in (e.get("timings") or {}).values() if isinstance(v, int | float)) * 1e3
    t1 = max(t0 + took, (clock[-1] - base) if clock else t0)
    return round(t0, 3), round(t1, 3)


def _millis(iso: Any) -> float | None:
    if not isinstance(iso, str):
        return None
    try:
        return dt.datetime.fromisoformat(iso).timestamp() * 1e3
    except ValueError:
        return None


def _first_clock(events: Sequence[Mapping[str, Any]]) -> float | None:
    for e in events:
        for c in e.get("clock") or []:
            t = _millis(c)
            if t is not None:
                return t
    return None


def _short_hash(value: Any) -> str | None:
    return str(value)[:23] if value else None  # "sha256:" and 16 hex digits


def _sample_terms(details: Sequence[Mapping[str, Any]]) -> list[str]:
    found: set[str] = set()
    for d in details[:_SAMPLE]:
        for key in ("args", "effects"):
            if key in d:
                found.update(_IRI.findall(str(d[key])))
    return sorted(found)


def prefixes_for(iris: Sequence[str]) -> list[list[str]]:
    """``[prefix, namespace]`` pairs for the namespaces of ``iris`` (well-known ones by their
    usual prefix, others by their last path segment), for the page to write CURIEs with."""
    spaces: dict[str, str] = {}
    taken: set[str] = set()
    for ns, p in _WELL_KNOWN.items():
        spaces[ns] = p
        taken.add(p)
    for iri in iris:
        if not iri.startswith(("http://", "https://")):
            continue
        ns = split_iri(iri)[0]
        if len(ns) < 9 or ns in spaces:
            continue
        name = re.sub(r"[^A-Za-z0-9_-]", "", ns.rstrip("#/").rsplit("/", 1)[-1]) or "ns"
        if not name[0].isalpha():
            name = "ns" + name
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}{n}"
        taken.add(candidate)
        spaces[ns] = candidate
    return [[p, ns] for ns, p in spaces.items()]
