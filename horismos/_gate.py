"""The SHACL gate: the one place a tool's result is turned into triples and judged.

A result is judged twice over:

1. the triples the tool returned, against the tool's declared effect (nothing undeclared,
   right datatype or class, required values present, one value unless ``horis:many``, no
   value for a property the runtime fixes). That contract is ours, so it is compiled once
   per tool into a plain Python check (:class:`EffectCheck`) that says exactly what pyshacl
   says for the closed node shape the declaration stands for (tests/test_gate_effect.py
   generates that shape and holds the check to pyshacl's verdict on it);
2. the touched node as it would be after the effect, against the domain's own shapes that
   target it and the effect's ``horis:shape``. Each shape in the SHACL Core subset of
   :mod:`._shacl` is compiled once and checked on the step's triples directly (no rdflib graph,
   tens of µs); any other shape goes to pyshacl on a pre-parsed shapes graph, the reference.
   With ``reference=True`` (or ``HORISMOS_GATE_REFERENCE=1``) pyshacl judges the compiled
   shapes too; a disagreement is logged on ``horismos.gate`` and the stricter verdict wins.

Both pass, or nothing lands.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from rdflib import RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ._datatypes import turtle_term
from ._definitions_model import Definitions
from ._errors import AuthoringError, Problem, ShaclMessage
from ._gate_after import After, Beyond, ReadOnAsking
from ._gate_effect import UNDECLARED, Delta, EffectCheck, ordered, path_name
from ._literals import declared_types, typed_literal
from ._model import Assertion, Tool
from ._regex_dialects import refusal_fix, xpath_only
from ._shacl import (
    CompiledShape,
    compile_shapes,
    path_properties,
)
from ._shacl_report import NotCompiled, Result
from ._sparql_parse import PreparingGraph
from ._vocab import HORIS

if (
    TYPE_CHECKING
):  # pyshacl itself is imported when the gate is first built: not by `import horismos`
    from pyshacl.shapes_graph import ShapesGraph

__all__ = ["Gate", "Verdict", "pattern_problems", "shape_problems"]


_log = logging.getLogger("horismos.gate")
_NOBODY = "urn:horismos:shape-check"  # the focus a shape is loaded on: no data, no findings
_TYPE, _SUBCLASS = RDF.type, RDFS.subClassOf  # a namespace attribute is a lookup each time


@dataclass(frozen=True)
class Verdict:
    """The gate's judgement of one result: a value, not an exception, so that each caller (the
    runner's tool step, an adapter's commit) decides what a rejection does, and the step's
    record keeps the messages either way."""

    conforms: bool
    messages: tuple[ShaclMessage, ...] = ()
    against: str = "shapes"
    """What a rejection broke: the tool's declared ``"effect"``, or the ``"shapes"`` that judge
    its subject (the domain's, and its effect's ``horis:shape``s). A person reading a rejected
    step is sent to the one they must mend."""

    def to_json(self) -> dict[str, Any]:
        return {"conforms": self.conforms, "messages": [m.to_json() for m in self.messages]}


_CONFORMS = Verdict(True)

_LASTING = frozenset(
    {
        SH.DatatypeConstraintComponent,
        SH.NodeKindConstraintComponent,
        SH.PatternConstraintComponent,
        SH.MinLengthConstraintComponent,
        SH.MaxLengthConstraintComponent,
        SH.InConstraintComponent,
        SH.LanguageInConstraintComponent,
        SH.MinInclusiveConstraintComponent,
        SH.MaxInclusiveConstraintComponent,
        SH.MinExclusiveConstraintComponent,
        SH.MaxExclusiveConstraintComponent,
        SH.MaxCountConstraintComponent,
        SH.UniqueLangConstraintComponent,
        SH.ClosedConstraintComponent,
        SH.DisjointConstraintComponent,
        SH.LessThanConstraintComponent,
        SH.LessThanOrEqualsConstraintComponent,
    }
)
"""The constraints a node breaking them keeps breaking whatever values are added to it: each
judges the values it has (or their number, which adding only raises), and a step's result
only adds. ``sh:class`` is not among them (a step may add the type a value lacks, when the
value is the subject itself)."""


class Gate:
    """Compiled once per :class:`Definitions`; judges results for every tool in them."""

    def __init__(self, defs: Definitions, *, reference: bool | None = None) -> None:
        self.defs = defs
        every = _every_shape_compiled(defs.graph)
        problems = [] if every is not None else _problems_loading_in_pyshacl(defs)
        if problems:  # said before any step, not as a traceback after a tool has acted
            raise AuthoringError(problems)
        self.reference = (
            os.environ.get("HORISMOS_GATE_REFERENCE", "") not in ("", "0")
            if reference is None
            else reference
        )
        self._effects = {
            tool.iri: EffectCheck.compile(tool, defs)
            for tool in defs.tools.values()
            if tool.effect is not None
        }
        self._superclasses = defs.superclasses
        self._targets = defs.domain_targets
        used = {
            s
            for m in (self._targets.by_class, self._targets.by_node, self._targets.by_subject_of)
            for shapes in m.values()
            for s in shapes
        }
        used |= {
            s for tool in defs.tools.values() if tool.effect is not None for s in tool.effect.shapes
        }
        if every is None:
            self._compiled = compile_shapes(defs.graph, sorted(used))
        else:  # each compiled once: a shape compiles alone, whatever is compiled beside it
            rest = compile_shapes(defs.graph, [s for s in used if s not in every])
            self._compiled = {
                s: every[s] if s in every else rest[s]
                for s in sorted(used)
                if s in every or s in rest
            }
        # what each shape reads of the node it judges: None for pyshacl's, or sh:closed
        self._shape_reads = {
            s: _shape_reads(defs.graph, s) if s in self._compiled else None for s in used
        }
        self._always = frozenset({_TYPE, *self._targets.by_subject_of})
        self._reads: dict[tuple[URIRef | None, frozenset[Node]], frozenset[Node] | None] = {}
        self._guess: dict[URIRef, frozenset[Node] | None] = {}
        # per tool, looked up on every step: result key → assertion, and what the runtime writes
        # (property, value; None for horis:now)
        self._by_key: dict[URIRef, dict[str, Assertion]] = {}
        self._declared = {tool.iri: declared_types(tool) for tool in defs.tools.values()}
        self._fixed: dict[URIRef, tuple[tuple[URIRef, Node | None], ...]] = {}
        for tool in defs.tools.values():
            if tool.effect is None:
                continue
            keys: dict[str, Assertion] = {}
            for a in reversed(tool.effect.asserts):  # the first declared wins, as before
                keys[str(a.property)] = a
                keys[a.key] = a
            self._by_key[tool.iri] = keys
            self._fixed[tool.iri] = tuple(
                (a.property, None if a.value == HORIS.now else a.value)
                for a in tool.effect.asserts
                if a.value is not None
            )

    # -- result → triples ---------------------------------------------------------------

    @cached_property
    def _shapes(self) -> ShapesGraph:
        """pyshacl's shapes graph of the definitions, built when pyshacl first judges."""
        graph = _shapes_graph(self.defs)
        _ = graph.shapes  # builds every shape: shapes_from_uris finds only those built
        return graph

    @cached_property
    def _executor(self) -> Any:
        from pyshacl.pytypes import SHACLExecutor

        return SHACLExecutor()

    def triples(
        self,
        tool: Tool,
        subject: Node,
        result: Mapping[str, Any] | None,
    ) -> list[tuple[Node, Node, Node]]:
        """What the tool's result would write, before judgement (undeclared keys included)."""
        out: list[tuple[Node, Node, Node]] = []
        for key, value in (result or {}).items():
            assertion = self._assertion(tool, str(key))
            prop = assertion.property if assertion else self._undeclared(str(key))
            values = value if isinstance(value, list | tuple | set) else [value]
            for v in values:
                if v is None:
                    continue
                out.append((subject, prop, self._node(assertion, v)))
        return out

    def declared_types(self, tool: Tool) -> Mapping[str, URIRef | None]:
        """:func:`~horismos._literals.declared_types` of ``tool``, made once per tool of the
        definitions (a tool from elsewhere: made now)."""
        types = self._declared.get(tool.iri)
        return declared_types(tool) if types is None else types

    def fixed(self, tool: Tool, subject: Node, now: Literal) -> list[tuple[Node, Node, Node]]:
        """The triples the runtime itself writes (``horis:value``)."""
        return [(subject, p, now if v is None else v) for p, v in self._fixed.get(tool.iri, ())]

    def _assertion(self, tool: Tool, key: str) -> Assertion | None:
        if tool.effect is None:
            return None
        by_key = self._by_key.get(tool.iri)  # a step's keys, looked up once
        if by_key is not None and key in by_key:
            return by_key[key]
        return tool.effect.assertion(key, self.defs.expand)

    def _undeclared(self, key: str) -> URIRef:
        try:
            return self.defs.expand(key)
        except KeyError:
            return URIRef(UNDECLARED + key.replace(" ", "_"))

    def _node(self, a: Assertion | None, v: Any) -> Node:
        kind = type(v)
        # a tool's plain value, told by its type first: rdflib's terms are ABCs, and a miss
        # of isinstance on one is ~0.5 µs (three of them per value)
        if kind is not str and kind is not bool and isinstance(v, URIRef | BNode | Literal):
            return v
        if a is not None and a.is_class and isinstance(v, str):
            try:
                return self.defs.expand(v)
            except KeyError:
                return Literal(v)
        return typed_literal(a.type if a is not None else None, v)

    # -- what judging reads -------------------------------------------------------------

    def reads(
        self, tool: Tool | None, subject: Node | None, types: Iterable[Node]
    ) -> frozenset[Node] | None:
        """The predicates of ``subject`` that judging a result of ``tool`` on it (or, with
        no tool, facts a person gives on resume) can read, given its ``rdf:type`` values:
        those the shapes targeting it and the effect's own shapes name on it, ``rdf:type``,
        and every ``sh:targetSubjectsOf`` property (whether it has one decides whether that
        shape applies). None when a shape may read any of its triples (``sh:closed``, or
        one pyshacl judges): then the gate reads them all.

        Why: the gate used to read the node's every triple, so a step on a node holding
        1,000 facts ran 16x slower than on one holding 3, and traced them all."""
        # keyed by the types a shape targets, the only ones _applicable reads: keyed by all
        # of them, a world of many classes (a taxonomy's leaves) added an entry for each new
        # kind of node a long-lived process judged, ~350 bytes each, without end
        by_class = self._targets.by_class
        key = (tool.iri if tool is not None else None, frozenset(t for t in types if t in by_class))
        try:  # one look-up when known, the usual: a tuple's hash is not kept
            found = self._reads[key]
        except KeyError:
            # the shapes _applicable finds by class, and those of every targeted property
            # (it may have the property: read as if it had); by node, below, for this node
            shapes = self._applicable(None, key[1], self._targets.by_subject_of)
            if tool is not None and tool.effect is not None:
                shapes.update(tool.effect.shapes)
            found = self._reads[key] = self._union(shapes)
        targeted = self._targets.by_node.get(subject) if subject is not None else None
        if found is not None and targeted:
            extra = self._union(targeted)
            return None if extra is None else found | extra
        return found

    def first_reads(self, tool: Tool) -> frozenset[Node] | None:
        """:meth:`reads` for the effect's subject as its argument is declared (of its class):
        what to read before its types are known. A subject of another class too may need
        more, read after."""
        if tool.iri not in self._guess:
            name = tool.effect.subject if tool.effect is not None else None
            declared = [a.type for a in tool.args if a.name == name and a.is_class]
            self._guess[tool.iri] = self.reads(tool, None, declared)
        return self._guess[tool.iri]

    def _union(self, shapes: Iterable[URIRef]) -> frozenset[Node] | None:
        out = set(self._always)
        for shape in shapes:
            found = self._shape_reads.get(shape)
            if found is None:
                return None
            out |= found
        return frozenset(out)

    # -- judgement -------------------------------------------------------------------------

    def judge(
        self,
        tool: Tool,
        subject: Node,
        returned: list[tuple[Node, Node, Node]],
        fixed: list[tuple[Node, Node, Node]],
        world_outgoing: Iterable[tuple],
        types_of: Any,
        world: Beyond | None = None,
    ) -> Verdict:
        """Validate ``returned`` against the effect, then the after-view against domain shapes.

        ``types_of(node)`` gives a node's ``rdf:type`` values in the world; ``world`` answers
        for the nodes past the subject a shape reaches (see :class:`After`).
        """
        effect = self._effects.get(tool.iri)
        if effect is None:
            if returned:
                return Verdict(
                    False,
                    tuple(
                        ShaclMessage(
                            str(s),
                            str(p),
                            "the tool declares no horis:effect, so its result may write nothing",
                        )
                        for s, p, _ in returned
                    ),
                    "effect",
                )
        else:
            messages = effect.messages(subject, self._delta(subject, returned, types_of), self.defs)
            if messages:
                return Verdict(False, tuple(messages), "effect")
        extra = tool.effect.shapes if tool.effect is not None else ()
        return self.domain(subject, [*returned, *fixed], world_outgoing, types_of, extra, world)

    def domain(
        self,
        subject: Node,
        added: Iterable[tuple[Node, Node, Node]],
        world_outgoing: Iterable[tuple],
        types_of: Any,
        extra: Iterable[URIRef] = (),
        world: Beyond | None = None,
    ) -> Verdict:
        """``subject`` as it would be after ``added``, against the domain shapes targeting it
        (and ``extra``); also how facts a person gives on resume are judged."""
        triples = [*world_outgoing, *added]
        own, subject_types, use = self._judging(subject, triples, extra)
        if not use:  # no shape applies: the after-view graph is not worth building
            return _CONFORMS
        view = After(subject, own, types_of, self._superclasses, world)
        fast, rest = self._compiled_results(subject, view, use)
        if not fast and not rest and not self.reference:  # the common verdict, said at once
            return _CONFORMS
        messages = {self._result_message(r) for r in fast}
        if rest or self.reference:
            # pyshacl reads past the subject as the compiled shapes do: a SPARQL constraint
            # walking $this :patient ?p . ?p :allergy ?a used to see no allergy, and passed
            after = self._after_graph(
                subject, triples, subject_types, types_of, view if world is not None else None
            )
            beyond = list(view.beyond())  # what the compiled shapes read past the subject
            for triple in beyond:
                after.add(triple)
            self._add_types(
                after, {n for s, _, o in beyond for n in (s, o) if n != subject}, types_of
            )
            messages |= set(self._validate(after, rest, subject)) if rest else set()
            if self.reference:
                messages = self._refereed(after, sorted(use), subject, messages)
        return Verdict(not messages, tuple(ordered(messages)))

    def broken_already(
        self,
        tool: Tool,
        subject: Node,
        world_outgoing: Iterable[tuple],
        types_of: Any,
        world: Beyond | None = None,
    ) -> tuple[ShaclMessage, ...]:
        """What ``subject`` breaks already, before ``tool`` is called, that no result of it can
        mend: a result only adds values to its subject, and a value of the wrong datatype or
        pattern, one value too many, a property a closed shape does not allow stay broken
        whatever is added (:data:`_LASTING`). The gate would reject every result, after the
        tool had acted. Judged by the compiled shapes only, on the subject as it is: a shape
        pyshacl judges, a constraint values added could satisfy (``sh:minCount``,
        ``sh:hasValue``, what a logical or nested shape says) is left to the gate."""
        extra = tool.effect.shapes if tool.effect is not None else ()
        own, _, use = self._judging(subject, list(world_outgoing), extra)
        if not use:
            return ()
        view = After(subject, own, types_of, self._superclasses, world)
        results, _ = self._compiled_results(subject, view, use)  # pyshacl's: left to the gate
        return tuple(
            ordered(
                {
                    self._result_message(r)
                    for r in results
                    if r.component in _LASTING and (r.focus is subject or r.focus == subject)
                }
            )
        )

    def _compiled_results(
        self, subject: Node, view: After, use: Iterable[URIRef]
    ) -> tuple[list[Result], list[URIRef]]:
        """The results of the compiled shapes of ``use`` on ``subject`` as ``view`` holds it,
        and the shapes left to pyshacl (not compiled, or a message that would name a blank
        node, which pyshacl words), in order."""
        fast: list[Result] = []
        rest: list[URIRef] = []
        for shape in sorted(use):
            compiled = self._compiled.get(shape)
            try:
                if compiled is not None:
                    fast.extend(compiled.results(subject, view))
                    continue
            except NotCompiled:
                pass
            rest.append(shape)
        return fast, rest

    def _judging(
        self, subject: Node, triples: list[tuple], extra: Iterable[URIRef]
    ) -> tuple[dict[Node, set[Node]], set[Node], set[URIRef]]:
        """The subject's values in ``triples`` by property, its types, and the shapes that
        judge it (those targeting it, and ``extra``)."""
        own: dict[Node, set[Node]] = {}
        for s, p, o in triples:
            if s is subject or s == subject:
                values = own.get(p)
                if values is None:
                    own[p] = {o}
                else:
                    values.add(o)
        subject_types = own.get(_TYPE, set())
        use = self._applicable(subject, subject_types, own.keys())
        use.update(extra)
        return own, subject_types, use

    def _refereed(
        self, after: Graph, shapes: list[URIRef], subject: Node, fast: set[ShaclMessage]
    ) -> set[ShaclMessage]:
        """pyshacl's verdict on every shape against the fast one: the stricter wins."""
        reference = set(self._validate(after, shapes, subject))
        if reference == fast:
            return fast
        _log.warning(
            "the compiled SHACL check and pyshacl disagree on %s: compiled %s, "
            "pyshacl %s; the stricter verdict stands",
            self.defs.name(subject),
            sorted(map(str, fast)) or "conforms",
            sorted(map(str, reference)) or "conforms",
        )
        return reference or fast

    def _after_graph(
        self,
        subject: Node,
        triples: list[tuple],
        subject_types: set[Node],
        types_of: Any,
        view: After | None = None,
    ) -> Graph:
        """The graph pyshacl validates: ``subject`` after the step, its values' types and
        every type's superclasses; with ``view``, and any node past them as the world holds
        it, read when pyshacl first asks for it (:class:`ReadOnAsking`)."""
        after = ReadOnAsking(view).graph if view is not None else PreparingGraph()
        for triple in triples:
            after.add(triple)
        self._add_types(after, (o for _, _, o in after if o != subject), types_of)
        for t in subject_types:
            for triple in self._superclass_triples(t):
                after.add(triple)
        return after

    def _result_message(self, r: Result) -> ShaclMessage:
        return ShaclMessage(
            focus=self.defs.name(r.focus),
            path=path_name(r.path, self.defs) if isinstance(r.path, URIRef) else None,
            message=_as_turtle(r.message or "violates a shape", self.defs),
            shape=self.defs.name(r.shape) if isinstance(r.shape, URIRef) else None,
            value=r.value.n3() if r.value is not None else None,
        )

    def _delta(
        self,
        subject: Node,
        returned: list[tuple[Node, Node, Node]],
        types_of: Any,
    ) -> Delta:
        """The graph pyshacl checked the effect shape on, as dicts: the returned triples,
        each object's types and their superclasses (not the subject's own types, so the
        subject given as its own class-typed value fails as it always has)."""
        g: Delta = {}
        # a literal has no types: passed over before rdflib's (Python) hash and comparison
        nodes = [o for _, _, o in returned if not isinstance(o, Literal) and o != subject]
        types = self._types(nodes, types_of)
        for s, p, o in [*returned, *types]:
            g.setdefault(s, {}).setdefault(p, set()).add(o)
        return g

    def _add_types(self, g: Graph, nodes: Iterable[Node], types_of: Any) -> None:
        for t in self._types(nodes, types_of):
            g.add(t)

    def _types(
        self,
        nodes: Iterable[Node],
        types_of: Any,
    ) -> Iterator[tuple[Node, Node, Node]]:
        """Each node's rdf:type triples and their classes' rdfs:subClassOf triples."""
        for node in set(nodes):
            if isinstance(node, Literal):
                continue
            for t in types_of(node):
                yield node, _TYPE, t
                yield from self._superclass_triples(t)

    def _superclass_triples(self, cls: Node) -> Iterator[tuple[Node, Node, Node]]:
        return ((cls, _SUBCLASS, sup) for sup in self._superclasses.get(cast(URIRef, cls), ()))

    def _applicable(
        self,
        node: Node | None,
        types: Iterable[Node],
        preds: Iterable[Node],
    ) -> set[URIRef]:
        targets = self._targets
        out: set[URIRef] = set()
        for t in types:
            out |= targets.by_class.get(t, set())
        if targets.by_node and node is not None:
            out |= targets.by_node.get(node, set())
        if targets.by_subject_of:
            for p in preds:
                out |= targets.by_subject_of.get(p, set())
        return out

    def _validate(self, data: Graph, shapes: list[URIRef], focus: Node) -> list[ShaclMessage]:
        # pyshacl's Validator.run builds a full report graph even when the data conforms;
        # on the hot path we run the pre-parsed shapes ourselves, focus given explicitly.
        from pyshacl.graph_abstraction import DataGraph

        g = DataGraph.from_rdflib(data)
        results: list[tuple] = []
        for shape in self._shapes.shapes_from_uris(shapes):
            _, reports = shape.validate(self._executor, g, focus=[focus])
            results.extend(reports)
        return ordered({_message(triples, self.defs) for _, _, triples in results})


_SH = str(SH)
_PATHS = {SH.zeroOrMorePath, SH.oneOrMorePath, SH.zeroOrOnePath, SH.inversePath, SH.alternativePath}


def _every_shape_compiled(g: Graph) -> dict[Node, CompiledShape] | None:
    """Every node ``g`` states a SHACL term of, compiled (:mod:`._shacl`); None when one does
    not compile. When all do, no shape can fail to load in pyshacl (the compiled subset refuses
    what pyshacl refuses, but a ``sh:pattern`` that is a number, on which pyshacl raises a
    TypeError), and pyshacl, 0.35 s to import, is not imported at all unless a step needs it;
    the gate then judges with these, not compiling its shapes a second time."""
    said: dict[Node, set[Node]] = {}
    for s, p in g.subject_predicates():
        if str(p).startswith(_SH):
            said.setdefault(s, set()).add(p)
    nodes = {s for s, ps in said.items() if not ps <= _PATHS}  # a path is no shape
    try:
        compiled = compile_shapes(g, nodes)
    except Exception:  # anything it cannot compile: pyshacl loads it, and says what is wrong
        return None
    return compiled if len(compiled) == len(nodes) else None


def _shapes_graph(defs: Definitions) -> ShapesGraph:
    """pyshacl's shapes graph of the definitions (every shape is built when first listed)."""
    from pyshacl.shapes_graph import ShapesGraph

    shapes = Graph()  # pyshacl adds its own triples to the graph it is given
    shapes.addN((s, p, o, shapes) for s, p, o in _in_reading_order(defs.graph))
    return ShapesGraph(shapes)


def shape_problems(defs: Definitions) -> list[Problem]:
    """Each domain shape that neither pyshacl nor the compiled engine can load, at its file
    and line: an invalid ``sh:pattern``, a ``sh:maxCount "one"``, a property shape with no path.
    pyshacl loads a constraint only when it first judges one, so these surfaced as a traceback
    from the gate, after the step's tool had been called; here each shape is loaded and judged
    once against an empty graph, and compiled, when the definitions load. None can fail to
    load when every shape compiles (:func:`_every_shape_compiled`): then pyshacl is not
    loaded."""
    if _every_shape_compiled(defs.graph) is not None:
        return []
    return _problems_loading_in_pyshacl(defs)


def _problems_loading_in_pyshacl(defs: Definitions) -> list[Problem]:
    """:func:`shape_problems` when some shape does not compile: each loaded in pyshacl."""
    from pyshacl.errors import ReportableRuntimeError, ShapeRecursionWarning
    from pyshacl.graph_abstraction import DataGraph
    from pyshacl.pytypes import SHACLExecutor

    try:
        loaded = _shapes_graph(defs).shapes  # builds every shape, not just those named
    except ReportableRuntimeError as e:
        if defs.errors:  # the load's checks said what stops it, at its line (_shape_slips)
            return []
        return [defs._sources.problem("error", None, f"a SHACL shape cannot be loaded: {e}")]
    empty = DataGraph.from_rdflib(PreparingGraph())
    executor, nobody = SHACLExecutor(), URIRef(_NOBODY)
    failed: dict[Node, str] = {}
    quiet = logging.getLogger("pyshacl")  # it logs each load error too: said once, here
    level, quiet.level = quiet.level, logging.CRITICAL + 1
    # a recursive shape's ShapeRecursionWarning, which printed with its source line amid
    # validate's output, kept off stderr: _shape_slips says what the recursion means, at its line
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShapeRecursionWarning)
            for shape in loaded:
                try:
                    shape.validate(executor, empty, focus=[nobody])
                    compile_shapes(defs.graph, [shape.node])
                except Exception as e:  # pyshacl's own, re's, rdflib's SPARQL parser's (a prefix)
                    failed[shape.node] = (
                        str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
                    )
    finally:
        quiet.level = level
    # a node shape fails with its property shape's reason: said once, where it is written
    said = {
        node
        for node, why in failed.items()
        if any(failed.get(p) == why for p in defs.graph.objects(node, SH.property))
    }
    return [
        _bad_pattern(defs, node)
        or defs._sources.problem(
            "error",
            node,
            f"{defs.name(node)} cannot be checked: {why}",
            _fix(why),
        )
        for node, why in sorted(failed.items(), key=lambda kv: str(kv[0]))
        if node not in said
    ]


def _fix(why: str) -> str:
    """What to change in a shape that cannot be checked for ``why``."""
    prefix = re.fullmatch(r"Unknown namespace prefix : (\S*)", why)
    if prefix:  # its SPARQL names a prefix no sh:prefixes declares
        name = "" if prefix[1] == "None" else prefix[1]  # rdflib's word for the empty one
        return (
            f"declare {name}: for the shape's SPARQL with sh:prefixes (a node with "
            f'sh:declare [ sh:prefix "{name}" ; sh:namespace "…"^^xsd:anyURI ]), or write '
            "its IRIs in full"
        )
    return "write the constraint as SHACL defines it (https://www.w3.org/TR/shacl/)"


def pattern_problems(defs: Definitions) -> list[Problem]:
    """Each ``sh:pattern`` that is no regular expression, judged without pyshacl: said
    beside a slip that stops the shapes loading (a ``sh:minCount "1"``), not only once that
    slip is mended."""
    return [
        problem
        for node in dict.fromkeys(defs.graph.subjects(SH.pattern, None))
        if (problem := _bad_pattern(defs, node)) is not None
    ]


def _bad_pattern(defs: Definitions, node: Node) -> Problem | None:
    """A shape that cannot be checked because its ``sh:pattern`` is no regular expression,
    said as such at the ``sh:pattern`` line with the expression: the reason alone ("missing ),
    unterminated subpattern at position 3") named neither, and was placed at the
    ``sh:property [`` that opens the shape. None when its patterns compile."""
    for pattern in defs.graph.objects(node, SH.pattern):
        try:
            re.compile(str(pattern))
        except re.error as e:
            at = f" at position {e.pos}" if e.pos is not None else ""
            xpath = xpath_only(e.msg)
            if xpath is not None:  # SHACL's, and no fault of the modeler's: said as such
                return defs._sources.problem(
                    "error",
                    node,
                    f'sh:pattern "{pattern}" uses {xpath[0]}{at}, which SHACL\'s regular '
                    "expressions (XPath's) read and Python's do not: the gate and pyshacl "
                    "judge with Python's, so the shape cannot be checked",
                    xpath[1],
                    at=(node, SH.pattern, pattern),
                )
            return defs._sources.problem(
                "error",
                node,
                f'sh:pattern "{pattern}" is no regular expression ({e.msg}{at}), so '
                "the shape cannot be checked",
                f"correct the expression: {refusal_fix(e.msg)}",
                at=(node, SH.pattern, pattern),
            )
    return None


_COMPARED = (SH.equals, SH.disjoint, SH.lessThan, SH.lessThanOrEquals)
_NESTED = (SH.property, SH.node, SH["not"], SH.qualifiedValueShape)
_LISTED = (SH["and"], SH["or"], SH.xone)


def _shape_reads(g: Graph, shape: Node) -> frozenset[Node] | None:
    """Every property ``shape`` can read of the node it judges: those in its paths and its
    property pairs (``sh:equals`` …), through its property and nested shapes (a nested
    shape judges a value, which may be the node itself: counted, to be safe). None when it
    reads whatever the node has (``sh:closed``)."""
    found: set[Node] = set()
    todo, seen = [shape], set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        # closed unless it says false (a flag that is not a literal goes to pyshacl: whole)
        if any(not isinstance(f, Literal) or f.value for f in g.objects(node, SH.closed)):
            return None
        for path in g.objects(node, SH.path):
            found |= path_properties(g, path)
        for p in _COMPARED:
            found.update(o for o in g.objects(node, p) if isinstance(o, URIRef))
        for p in _NESTED:
            todo.extend(g.objects(node, p))
        for p in _LISTED:
            for items in g.objects(node, p):
                todo.extend(g.items(items))
    return frozenset(found)


def _message(triples: list[tuple], defs: Definitions) -> ShaclMessage:
    """One pyshacl result, given as (result, predicate, value-or-(graph, node)) triples; the
    first names the result node (the results it nests under sh:detail follow it)."""
    fields: dict[Node, Node] = {}
    result = triples[0][0]
    for s, p, o in triples:
        if s == result:
            fields[p] = o[1] if isinstance(o, tuple) else o
    path = fields.get(SH.resultPath)
    value = fields.get(SH.value)
    shape = fields.get(SH.sourceShape)
    return ShaclMessage(
        focus=defs.name(fields[SH.focusNode]),
        path=path_name(path, defs) if isinstance(path, URIRef) else None,
        message=_as_turtle(
            _in_order(str(fields.get(SH.resultMessage) or "violates a shape")), defs
        ),
        shape=defs.name(shape) if isinstance(shape, URIRef) else None,
        value=value.n3() if value is not None else None,
    )


_PY_LITERAL = re.compile(
    r'Literal\("((?:[^"\\]|\\.)*)"(?:, datatype=([\w.-]*:[\w.-]+))?(?:, lang=([\w-]+))?\)'
)
_IRI = re.compile(r"<([^<>\s\"]+)>")
_QUOTING = "Focus node does not conform to shape "
"""How pyshacl's sh:qualifiedValueShape messages begin, quoting the shape in Python's words:
the others are worded as pyshacl words them, in both engines (:mod:`._shacl`)."""


def _as_turtle(message: str, defs: Definitions) -> str:
    """pyshacl's message with the shape it quotes written as every other message writes
    terms: a literal as Turtle (``1``, not ``Literal("1", datatype=xsd:integer)``, which a
    ``sh:qualifiedValueShape``'s rejection printed), an IRI by its prefixed name. Only a
    rejection's message is read, and only a qualified shape's (:data:`_QUOTING`): nothing
    on a step that passes."""
    if not message.startswith(_QUOTING):
        return message

    def literal(m: re.Match[str]) -> str:
        text, datatype, lang = m.group(1), m.group(2), m.group(3)
        if lang:
            return f'"{text}"@{lang}'
        if datatype is None:
            return f'"{text}"'
        if datatype.startswith("xsd:"):
            return turtle_term(Literal(text, datatype=XSD[datatype[4:]]), defs.name)
        return f'"{text}"^^{datatype}'

    message = _PY_LITERAL.sub(literal, message)
    return _IRI.sub(lambda m: defs.name(URIRef(m.group(1))), message)


_NOT_IN = re.compile(r"^(Value .* not in list )(\[.*\])$", re.S)


def _in_order(message: str) -> str:
    """pyshacl's sh:in message with its list sorted: it lists a set, whose order differs
    between processes, so a replay elsewhere would word the same rejection differently."""
    found = _NOT_IN.match(message)
    if found is None:
        return message
    try:
        listed = ast.literal_eval(found.group(2))
    except (ValueError, SyntaxError):
        return message
    return found.group(1) + str(sorted(listed)) if isinstance(listed, list) else message


def _in_reading_order(g: Graph) -> Iterator[tuple[Node, Node, Node]]:
    """``g``'s triples so that a copy of them lists each node's values of a parameter in the
    order ``g.objects`` gives them, which is the order the compiled engine reads them in
    (``g``'s own iteration follows string hashes: pyshacl, reading a copy, could list a
    shape's patterns in another order than the compiled engine in the same process). Several
    ``sh:class`` values are listed by their text, in both engines, so a rejection naming them
    is worded the same in every process."""
    for s in dict.fromkeys(g.subjects()):
        for p in dict.fromkeys(g.predicates(s)):
            objects = list(g.objects(s, p))
            if p == SH["class"]:
                objects.sort(key=str)
            for o in objects:
                yield s, p, o
