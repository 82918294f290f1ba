"""How arguments and results cross a process boundary: as JSON, the same for MCP and HTTP.

Class-typed arguments travel as their IRI string, literals as the JSON value closest to their
datatype (numbers, booleans, strings; dates, times and durations in ISO 8601).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rdflib import URIRef
from rdflib.xsd_datetime import Duration

from .._model import Tool
from .._negative_durations import write_duration

__all__ = ["json_arguments", "json_object", "json_value"]


def json_value(value: Any) -> Any:
    """One resolved argument as JSON."""
    if isinstance(value, bool | int | float | str) or value is None:
        return str(value) if isinstance(value, URIRef) else value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta | Duration):
        return write_duration(value)  # "-P1Y1D", which rdflib's own writer refuses
    return str(value)  # a node: its IRI, or a literal's text


def json_arguments(tool: Tool, args: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly the tool's declared arguments that are bound, as JSON."""
    return {a.name: json_value(args[a.name]) for a in tool.args if a.name in args}


def json_object(text: str | bytes) -> dict[str, Any] | None:
    """``text`` parsed as a JSON object, or None when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None
