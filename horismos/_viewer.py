"""One self-contained HTML page for a run, a replay report or a diagram; works from file://.

Why this shape: reviewers open the file offline, attach it to an incident, mail it. So the
page makes no request: its CSS and script (package data in ``horismos/viewer/``, not Python
strings) are inlined, the diagram is inline SVG, and the run's data
(:func:`~horismos._view_model.view_model`) is gzipped JSON in base64, which the page inflates
with the browser's own ``DecompressionStream``. Gzip keeps a trace of 100,000 events to a few
megabytes; the page draws only the table rows in view, so it scrolls as a small one does.
Base64 also means nothing from the trace is ever parsed as HTML; the script writes text only.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ._view_model import view_model

__all__ = ["Diagram", "diagram_page", "trace_page"]

_MARKER = re.compile(r"\{\{(TITLE|CSS|JS|DATA|SVG)\}\}")
_LEVEL = 6  # gzip: level 9 costs twice the time for 3% fewer bytes on a 100,000-event trace


@dataclass(frozen=True)
class Diagram:
    """An SVG of the workflow, and its nodes' element ids by step IRI."""

    svg: str
    nodes: Mapping[str, str]


def trace_page(
    events: Sequence[Mapping[str, Any]],
    *,
    source: str,
    diagram: Diagram | None = None,
    replay: Mapping[str, Any] | None = None,
) -> str:
    """The viewer for one trace; with ``diagram`` a diagram tab its steps link to, with
    ``replay`` (what :func:`replay_summary` gives) the replay's verdict and divergence."""
    data = view_model(events, source=source)
    data["mode"] = "replay" if replay is not None else "trace"
    data["replay"] = replay
    data["nodes"] = dict(diagram.nodes) if diagram else {}
    kind = "Replay of" if replay is not None else "Trace"
    return _page(f"{kind} {source}", data, diagram.svg if diagram else "")


def diagram_page(
    title: str, diagram: Diagram, counts: Sequence[Mapping[str, Any]], traces: Sequence[str]
) -> str:
    """A page with the diagram alone, and per step the counts drawn on it (if any traces)."""
    data = {
        "mode": "diagram",
        "run": {"source": title, "traces": list(traces)},
        "counts": list(counts),
        "nodes": dict(diagram.nodes),
        "prefixes": [],
    }
    return _page(title, data, diagram.svg)


def _page(title: str, data: Mapping[str, Any], svg: str) -> str:
    files = resources.files("horismos") / "viewer"
    template = (files / "page.html").read_text(encoding="utf-8")
    blob = gzip.compress(
        json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).encode(),
        compresslevel=_LEVEL,
        mtime=0,
    )
    parts = {
        "TITLE": html.escape(title),
        "CSS": (files / "viewer.css").read_text(encoding="utf-8"),
        "JS": (files / "viewer.js").read_text(encoding="utf-8"),
        "DATA": base64.b64encode(blob).decode("ascii"),
        "SVG": svg,
    }
    # one pass: a marker inside what is put in (a title, a label) is left as it is
    return _MARKER.sub(lambda m: parts[m[1]], template)
