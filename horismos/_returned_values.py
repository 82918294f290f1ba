"""A value a Python tool returns written out as a constant, which its domain shapes refuse.

Why: a payout function returning ``{"paymentRef": "PAYMENT-1"}`` beside a shape requiring
``sh:pattern "^PAY-[0-9]{6}$"`` of ``:paymentRef`` validated, ran, paid — the tool acted, it is
not idempotent — and then the gate rejected the answer, on every call: nothing landed and the
step failed. So did a status returned as ``"denied"`` where ``sh:in ( "APPROVED" "DENIED" )``
judges it. A constant string returned for a property whose values are nodes that is no IRI nor CURIE
(``{"failedOverTo": "eu-west"}``) lands as text, which the gate refuses the same way. The
constant is read from the function's source (:mod:`._bindings.function_source`,
nothing imported, nothing called), made the literal the gate would make of it (its assertion's
``horis:type``, as :meth:`Gate._node <horismos._gate.Gate._node>` does), and held to the shapes
that judge the effect's subject exactly as an effect's fixed ``horis:value`` is
(:func:`~._effect_shapes.contradictions`, which runs the gate's own compiled checks). A value
computed at the call (a variable) is the gate's to judge — an f-string too, but where its fixed
text alone is refused (:mod:`._formatted_returns`) — and so is a constant under an assertion
whose ``horis:type`` alone the shapes refuse: the loader says that already.
"""

from __future__ import annotations

import dataclasses

from rdflib import RDF, RDFS, Literal, URIRef

from ._bindings.function_source import Returned
from ._definitions_model import Definitions
from ._effect_shapes import contradictions
from ._errors import Problem
from ._formatted_returns import refused_formats
from ._literals import typed_literal
from ._model import Assertion, Tool
from ._shacl import Targets
from ._sources import Where

__all__ = ["returned_value_problems"]

_TAGGED_TAKEN = (None, RDF.langString, RDFS.Literal)
"""The assertions' types a language-tagged literal meets (or none declared)."""


def _landed(a: Assertion, v: str | int | float) -> Literal | None:
    """The literal the gate writes for ``v`` under ``a``; None where that is not certain here
    (a class-typed value: a string is expanded as a CURIE)."""
    if a.is_class or a.value is not None:
        return None
    return typed_literal(a.type, v)


def _names_node(defs: Definitions, v: str | int | float) -> bool:
    """Whether the gate makes a node of ``v`` under a class-typed assertion: a string it
    expands as a full IRI or a CURIE (:meth:`Gate._node <horismos._gate.Gate._node>`)."""
    if not isinstance(v, str):
        return False
    try:
        defs.expand(v)
    except KeyError:
        return False
    return True


def _said(v: str | int | float) -> str:
    return f'"{v}"' if isinstance(v, str) else repr(v)


def _refusals(
    defs: Definitions, tool: Tool, a: Assertion, cls: URIRef, targets: Targets
) -> list[str]:
    """What the shapes judging a subject of ``cls`` refuse of what ``a`` writes, each as
    "shape S requires …" (:func:`~._effect_shapes.contradictions`; one value, not many)."""
    found = contradictions(
        defs.graph,
        tool.name,
        [(a.property, dataclasses.replace(a, many=False))],
        targets,
        cls,
        tool.effect.shapes if tool.effect is not None else (),
        defs.name,
    )
    return [c.message.split(", but ", 1)[-1].split(": the gate", 1)[0] for c in found]


def returned_value_problems(
    defs: Definitions, tool: Tool, returns: list[Returned | None], at: Where
) -> list[Problem]:
    """Each property ``tool``'s function returns a constant of that a shape judging the
    effect's subject refuses: an error when every ``return`` of the function writes a refused
    constant for it (every call acts, and lands nothing), else a warning."""
    effect = tool.effect
    if effect is None or not any(
        r is not None and (r.constants or r.formats or r.tagged) for r in returns
    ):
        return []
    subject = next((a for a in tool.args if a.name == effect.subject), None)
    if subject is None or not subject.is_class:
        return []
    targets = defs.domain_targets
    refused: dict[URIRef, list[tuple[Returned, str, str]]] = {}
    typed_refused: dict[URIRef, bool] = {}
    for r in (r for r in returns if r is not None):
        for key, v in r.constants:
            a = effect.assertion(key, defs.expand)
            if a is not None and a.is_class and a.type is not None and not _names_node(defs, v):
                text = (
                    f"it takes a node of {defs.name(a.type)} and {_said(v)} is no IRI nor "
                    "CURIE of the files' prefixes (it would land as text)"
                )
                refused.setdefault(a.property, []).append((r, _said(v), text))
                continue
            if a is None or (value := _landed(a, v)) is None:
                continue
            if a.property not in typed_refused:  # its horis:type alone: said at load
                typed_refused[a.property] = bool(_refusals(defs, tool, a, subject.type, targets))
            if typed_refused[a.property]:
                continue
            shapes = _refusals(
                defs, tool, dataclasses.replace(a, value=value), subject.type, targets
            )
            if shapes:
                refused.setdefault(a.property, []).append((r, _said(v), shapes[0]))
        for key, tag in r.tagged:  # an rdf:langString, where the assertion takes another
            a = effect.assertion(key, defs.expand)
            if a is None or a.is_class or a.value is not None or a.type in _TAGGED_TAKEN:
                continue
            refused.setdefault(a.property, []).append(
                (
                    r,
                    f'Literal(…, lang="{tag}")',
                    f"a language-tagged literal is an rdf:langString, and the effect writes "
                    f"{defs.name(a.property)} as {defs.name(a.type)}",
                )
            )
        for key, before, after, shown in r.formats:
            a = effect.assertion(key, defs.expand)
            if a is None or (a.property in refused and refused[a.property][-1][0] is r):
                continue
            if a.property not in typed_refused:  # its horis:type alone: said at load
                typed_refused[a.property] = bool(_refusals(defs, tool, a, subject.type, targets))
            if typed_refused[a.property]:
                continue
            for shape, pattern, why in refused_formats(
                defs, tool, a, subject.type, targets, (before, after)
            ):
                said = f'shape {defs.name(shape)} requires sh:pattern "{pattern}", which {why}'
                refused.setdefault(a.property, []).append((r, shown, said))
                break
    problems = []
    for prop, hits in sorted(refused.items(), key=lambda kv: str(kv[0])):
        first, v, said = hits[0]
        every = len(hits) == len(returns)
        problems.append(
            defs._sources.problem(
                "error" if every else "warning",
                tool.iri,
                f'binding "{tool.binding}" of {tool.name}: '
                + ("its function returns " if every else "one of its function's returns gives ")
                + f"{v} for {defs.name(prop)} ({first.where()}), but {said}: the gate "
                "rejects it after the call has acted, nothing of it landing",
                f"return the node's IRI (or the argument that names it) for {defs.name(prop)}"
                if said.startswith("it takes a node")
                else f"return the plain str for {defs.name(prop)} (no lang=), or declare its "
                "assertion horis:type rdf:langString to keep the tag"
                if said.startswith("a language-tagged literal")
                else f"return a value the shape allows for {defs.name(prop)}, or correct the shape",
                at=at,
            )
        )
    return problems
