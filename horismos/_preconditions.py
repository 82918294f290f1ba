"""``horis:requires`` patterns: parsed and prepared once at load, evaluated with bound variables.

Values reach a query only as initial bindings, never pasted into its text. When no solution
exists, each pattern is asked on its own so the run can say which one failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rdflib import Graph, Variable
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.sparql import Query
from rdflib.term import Node

__all__ = ["Precondition", "PreconditionSyntaxError", "compile_patterns"]


class PreconditionSyntaxError(ValueError):
    """A pattern is not a valid SPARQL group graph pattern."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(why)
        self.pattern = pattern
        self.why = why


@dataclass(frozen=True)
class Pattern:
    text: str
    ask: Query = field(compare=False)
    ask_text: str = ""


@dataclass(frozen=True)
class Precondition:
    """The conjunction of a step's patterns, as one prepared SELECT."""

    patterns: tuple[Pattern, ...]
    select: Query = field(compare=False)
    select_text: str
    prefixes: tuple[tuple[str, str], ...]
    variables: frozenset[str]

    def solutions(self, graph: Graph, bindings: Mapping[str, Node]) -> list[dict[str, Node]]:
        init = {Variable(k): v for k, v in bindings.items() if k in self.variables}
        rows = graph.query(self.select, initBindings=init)
        out = []
        for row in rows:
            sol = dict(bindings)
            sol.update({str(k): v for k, v in row.asdict().items() if v is not None})
            out.append(sol)
        return out

    def failing(self, graph: Graph, bindings: Mapping[str, Node]) -> str:
        """The first pattern with no solution on its own, or the join of them all."""
        for p in self.patterns:
            init = {Variable(k): v for k, v in bindings.items() if k in self.variables}
            if not graph.query(p.ask, initBindings=init).askAnswer:
                return p.text
        return " ".join(p.text for p in self.patterns) if len(self.patterns) > 1 else (
            self.patterns[0].text)


_VAR = re.compile(r"[?$]([A-Za-z_][\w]*)")


def _prepare(text: str, ns: Mapping[str, Any], pattern: str) -> Query:
    try:
        return prepareQuery(text, initNs=dict(ns))
    except Exception as e:
        why = str(e).strip().splitlines()
        msg = why[0] if why else type(e).__name__
        if "Unknown namespace prefix" in str(e) or "prefix" in msg.lower():
            msg = f"{msg} (declare the prefix with @prefix in the file)"
        raise PreconditionSyntaxError(pattern, msg) from None


def compile_patterns(patterns: Sequence[str], ns: Mapping[str, Any]) -> Precondition:
    """Prepare ``patterns`` (SPARQL group graph patterns) for evaluation; raises on bad syntax."""
    compiled = []
    for text in patterns:
        body = text.strip()
        ask_text = f"ASK WHERE {{ {body}\n}}"
        compiled.append(Pattern(body, _prepare(ask_text, ns, body), ask_text))
    select_text = "SELECT * WHERE {\n" + "\n".join(f"{{ {p.text}\n}}" for p in compiled) + "\n}"
    select = _prepare(select_text, ns, "\n".join(patterns))
    variables = frozenset(m.group(1) for p in compiled for m in _VAR.finditer(p.text))
    return Precondition(tuple(compiled), select, select_text,
                        tuple((k, str(v)) for k, v in ns.items()), variables)
