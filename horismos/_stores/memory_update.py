"""A SPARQL 1.1 Update on the ``memory`` store, written as Oxigraph writes it, all or nothing.

Why not rdflib's ``evalUpdate``: run on the same text, it and Oxigraph (the reference, the
default store) left different worlds. rdflib kept what the operations before a failing one
wrote; fetched the IRI of a ``USING``, ``USING NAMED`` or ``LOAD`` (and a ``SERVICE``) from the
network; deleted nothing for ``DELETE WHERE { GRAPH ?g { … } }``; wrote into a blank-node graph
for a ``GRAPH ?g`` template whose ``?g`` was unbound; deleted what one solution of a
``DELETE … INSERT`` had just inserted (it wrote solution by solution); kept ``_:b`` as the same
node across updates; did not ``CREATE GRAPH``; cleared, dropped and moved graphs that do not
exist without a word; kept literals as written (``"1.50"^^xsd:decimal``, which Oxigraph stores
as ``"1.5"``); and took a relative IRI with no ``BASE`` (and a second ``BASE`` after ``;``).

So rdflib parses the text and evaluates each ``WHERE`` (its algebra, on this store's dataset),
and this module makes the writes, as Oxigraph's update evaluator does: Oxigraph's parser reads
the text first (on an empty scratch store) and what it refuses is refused here; an operation's
solutions are all read before any of its writes; ``COPY`` is ``DROP SILENT`` of the target then
``ADD``, ``MOVE`` the same then ``DROP`` of the source. Every write is logged before it is made, and
an update that fails has its log undone in reverse: the store is as it was, at a cost in the
size of what the update wrote, not of the store. ``LOAD`` and ``SERVICE`` are refused (the
``memory`` store fetches nothing; load files with ``horismos load`` or ``World.load``); a
relative ``BASE``, which rdflib does not resolve against the one before, is refused, and so
is a ``BASE`` whose scheme is not ``http:`` or ``https:`` in lowercase where a relative IRI is
resolved against it (rdflib resolves by Python's ``urljoin``, Oxigraph by RFC 3986).

The writes are Oxigraph's; each ``WHERE`` is rdflib's evaluation, not Oxigraph's. Its
literals are read in the store's form (:mod:`.stored_patterns`) and a constant ``FILTER``
is kept (:mod:`horismos._sparql_parse`), but known differences remain, where the rows a
``WHERE`` gives differ: ``VALUES ?x { }`` is refused; ``STR`` of an ``xsd:dateTime`` is
rdflib's ISO form (``+00:00``, not ``Z``); a comparison of a number with a string or a
language-tagged literal is true or false in rdflib, an error (no row) in Oxigraph; the
datatype of some numeric results (a division's) and a ``USING NAMED`` of a graph that does
not exist may differ; docs/stores.md lists more (a triple held in several graphs, ``ORDER
BY`` over mixed types, functions of blank nodes). The ``oxigraph`` store is the reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import pyoxigraph as ox
from rdflib import BNode, Dataset, Graph, Literal, URIRef, Variable
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node

from .._errors import UsageError
from .._sparql_parse import prepare_update
from .base import Quad, StoreError
from .ox_terms import canonical
from .stored_patterns import in_stored_form
from .user_update import refuse_triple_terms

if TYPE_CHECKING:
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.plugins.sparql.sparql import Update

__all__ = ["parse_update", "run_update"]

_Triple = tuple[Node, Node, Node]
_Template = tuple[list[_Triple], dict[Node, list[_Triple]]]
"""A template's triples for the default graph, and for each graph term (an IRI, a variable)
its own."""


def parse_update(text: str) -> Update:
    """``text`` parsed by rdflib, once Oxigraph's parser has taken it (on an empty scratch
    store: ~30 µs); not SPARQL, or what this store refuses, raises :class:`StoreError` or
    :class:`UsageError`."""
    try:
        update, bases = prepare_update(text)
    except Exception as e:  # pyparsing's, rdflib's: not SPARQL, or SPARQL-star
        refuse_triple_terms(text)  # as the other stores refuse it
        raise StoreError(f"the update was refused: {e}") from None
    try:
        iris = _refuse_fetches(update.algebra)
        in_stored_form(update.algebra)
    except UsageError:
        raise
    except Exception as e:  # rdflib's translation in a shape not foreseen here
        raise StoreError(f"the update was refused: {type(e).__name__}: {e}") from None
    try:  # Oxigraph's parser decides what is SPARQL (LOAD and SERVICE refused above)
        ox.Store().update(text)
    except SyntaxError as e:
        raise StoreError(f"the update was refused: {e}") from None
    except (OSError, RuntimeError, ValueError):
        pass  # evaluated on an empty store: only its parse is asked
    _refuse_bases_resolved_otherwise(bases, iris)
    return update


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _refuse_bases_resolved_otherwise(bases: list[str], iris: list[URIRef]) -> None:
    """A ``BASE`` rdflib resolves IRIs against otherwise than Oxigraph (RFC 3986) refused: a
    relative one (rdflib does not resolve it against the one before), and, where a relative
    IRI is resolved against it, one whose scheme is not ``http:`` or ``https:`` in lowercase
    (Python's ``urljoin`` leaves ``<x>`` relative against ``urn:a:b``, where Oxigraph makes
    ``urn:x``, and lowercases ``HTTP:``)."""
    for base in bases:
        if not _SCHEME.match(base):
            raise UsageError(
                f"<{base}>: the memory store resolves a relative BASE otherwise than Oxigraph; "
                "write the BASE as an absolute IRI, or use the oxigraph store"
            )
    odd = [b for b in bases if not b.startswith(("http:", "https:"))]
    unresolved = [iri for iri in iris if ":" not in iri]
    lowered = [b for b in odd if b.split(":", 1)[0].lower() in ("http", "https")]
    if (odd and unresolved) or lowered:
        raise UsageError(
            f"<{(lowered or odd)[0]}>: the memory store resolves a relative IRI only against "
            "a BASE whose scheme is http: or https: in lowercase (Oxigraph against any); "
            "write the IRIs in full, or use the oxigraph store"
        )


def run_update(ds: Dataset, update: Update) -> tuple[list[Quad], list[Quad]]:
    """``update`` run on ``ds`` as one transaction: the quads it added and those it removed
    (read from its log, so the store's digest moves by exactly those). One refused (with
    Oxigraph's words where it is Oxigraph's rule) raises :class:`StoreError` and leaves
    ``ds`` as it was."""
    writes = _Writes(ds)
    try:
        for operation in update.algebra:
            try:
                _run(writes, operation)
            except _Refused:
                if not operation.silent:
                    raise
    except BaseException as e:
        writes.undo()
        if not isinstance(e, Exception):
            raise  # a Ctrl-C: nothing written, and let through
        raise StoreError(f"the update was refused, and wrote nothing: {e}") from None
    return writes.landed()


class _Refused(Exception):
    """An operation Oxigraph refuses on this store's state (a graph that is, or is not,
    there); ``SILENT`` lets it pass."""


def _refuse_fetches(algebra: list[CompValue]) -> list[URIRef]:
    """A ``LOAD`` or ``SERVICE`` refused; the IRIs the update names."""
    seen: set[int] = set()
    iris: list[URIRef] = []
    stack: list[Any] = list(algebra)
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        name = getattr(item, "name", None)
        if name in ("Load", "ServiceGraphPattern"):
            what = "LOAD" if name == "Load" else "SERVICE"
            raise UsageError(
                f"{what}: the memory store fetches nothing over the network or from files "
                "in an update; load files with `horismos load` or World.load, or use the "
                "oxigraph store"
            )
        if isinstance(item, URIRef):
            iris.append(item)
        elif isinstance(item, dict):
            stack.extend(v for k, v in item.items() if k != "prologue")
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
    return iris


class _Writes:
    """The dataset's writes, each logged (before it is made) so that :meth:`undo` puts the
    dataset back."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.store = ds.store
        self.default = ds.get_context(DATASET_DEFAULT_GRAPH_ID)
        # rdflib's Memory store: the set of its graphs, looked up by identifier (its
        # contexts() lists them all, a step per graph)
        self._graphs: set[Graph] = self.store._Memory__all_contexts  # type: ignore[attr-defined]
        self._log: list[tuple[str, Graph, _Triple | None]] = []

    def graph(self, name: Node | str) -> Graph:
        return self.default if name == "DEFAULT" else self.ds.get_context(cast(URIRef, name))

    def exists(self, g: Graph) -> bool:
        return g is self.default or g in self._graphs

    def named(self) -> list[Graph]:
        return [g for g in list(self._graphs) if g.identifier != DATASET_DEFAULT_GRAPH_ID]

    def create(self, g: Graph) -> None:
        if not self.exists(g):
            self._log.append(("created", g, None))
            self.store.add_graph(g)

    def add(self, g: Graph, triple: _Triple) -> None:
        if triple not in g:
            self.create(g)
            self._log.append(("added", g, triple))
            self.store.add(triple, g)

    def remove(self, g: Graph, triple: _Triple) -> None:
        if triple in g:
            self._log.append(("removed", g, triple))
            self.store.remove(triple, g)

    def clear(self, g: Graph) -> None:
        for triple in list(g):
            self.remove(g, triple)

    def drop(self, g: Graph) -> None:
        self.clear(g)
        if g is not self.default and g in self._graphs:
            self._log.append(("dropped", g, None))
            self.store.remove_graph(g)

    def landed(self) -> tuple[list[Quad], list[Quad]]:
        """The quads added and those removed, net of one another: a triple is logged added
        only where it was not stored and removed only where it was, so its writes alternate,
        and one added then removed (or the reverse) counts neither way."""
        net: dict[Quad, int] = {}
        for kind, g, triple in self._log:
            if triple is not None:
                name = g.identifier
                q = (*triple, None if name == DATASET_DEFAULT_GRAPH_ID else cast(URIRef, name))
                net[q] = net.get(q, 0) + (1 if kind == "added" else -1)
        return [q for q, n in net.items() if n > 0], [q for q, n in net.items() if n < 0]

    def undo(self) -> None:
        """Each logged write undone, latest first. A write is logged before it is made (a
        Ctrl-C between the two would have left it), so the last may not have been made:
        each undoing is one that does nothing on a write not made."""
        for kind, g, triple in reversed(self._log):
            if kind == "added":
                self.store.remove(cast(_Triple, triple), g)  # nothing, if it is not there
            elif kind == "removed":
                self.store.add(cast(_Triple, triple), g)  # a set: nothing, if it is there
            elif kind == "created":
                if g in self._graphs:
                    self.store.remove_graph(g)
            else:
                self.store.add_graph(g)  # a set too
        self._log.clear()


def _run(writes: _Writes, op: CompValue) -> None:
    """One operation, as Oxigraph's evaluator runs it."""
    name = op.name
    if name in ("Clear", "Drop"):
        _clear_or_drop(writes, op.graphiri, drop=name == "Drop")
    elif name == "Create":
        g = writes.graph(op.graphiri)
        if writes.exists(g):
            raise _Refused(f"The graph <{op.graphiri}> already exists")
        writes.create(g)
    elif name in ("Add", "Copy", "Move"):
        source, target = op.graph
        if source == target:
            return
        if name != "Add":  # the target dropped, silently, first
            _clear_or_drop(writes, target, drop=True, silent=True)
        src, dst = writes.graph(source), writes.graph(target)
        for triple in list(src):
            writes.add(dst, triple)
        if name == "Move":
            _clear_or_drop(writes, source, drop=True)
    elif name in ("InsertData", "DeleteData"):
        template = (op.triples or [], op.quads or {})
        quads = list(_filled(template, {}, {}))  # a label: one new node, in this update alone
        if name == "InsertData":
            _write(writes, writes.default, (), quads)
        else:
            _write(writes, writes.default, quads, ())
    elif name == "DeleteWhere":
        template = (op.triples or [], op.quads or {})
        rows = _solutions(writes, op, _where_of(template), using=None, with_graph=None)
        _write(writes, writes.default, (q for r in rows for q in _filled(template, r, {})), ())
    else:  # Modify: the names rdflib's parser gives are these (LOAD refused when parsed)
        with_graph = op.withClause
        rows = _solutions(writes, op, op.where, op.using, with_graph)
        target = writes.graph(with_graph) if with_graph is not None else writes.default
        delete = (op.delete.triples, op.delete.quads) if op.delete else ([], {})
        insert = (op.insert.triples, op.insert.quads) if op.insert else ([], {})
        _write(
            writes,
            target,
            [q for r in rows for q in _filled(delete, r, {})],
            [q for r in rows for q in _filled(insert, r, {})],
        )


def _clear_or_drop(writes: _Writes, target: Any, *, drop: bool, silent: bool = False) -> None:
    if target in ("DEFAULT", "ALL"):
        writes.clear(writes.default)
    if target in ("NAMED", "ALL"):
        for g in writes.named():
            (writes.drop if drop else writes.clear)(g)
    if target not in ("DEFAULT", "NAMED", "ALL"):
        g = writes.graph(target)
        if not writes.exists(g):
            if silent:
                return
            raise _Refused(f"The graph <{target}> does not exist")
        (writes.drop if drop else writes.clear)(g)


_Quad = tuple[Node, Node, Node, URIRef | None]


def _write(writes: _Writes, target: Graph, delete: Any, insert: Any) -> None:
    """Every quad of ``delete`` removed, then every quad of ``insert`` added (graph ``None``:
    ``target``), literals in the form the store keeps them."""
    for quads, act in ((delete, writes.remove), (insert, writes.add)):
        for s, p, o, g in canonical(quads):
            act(target if g is None else writes.graph(g), (s, p, o))


def _filled(template: _Template, row: Any, fresh: dict[BNode, BNode]) -> Iterator[_Quad]:
    """``template``'s quads with ``row``'s values, a blank node given a new node (the same
    within ``fresh``); a quad with an unbound variable, or a value a quad cannot hold there
    (a literal as a subject, a relative IRI, which Oxigraph's ``IRI()`` does not make),
    left out."""
    triples, quads = template
    for graph_term, group in [(None, triples), *quads.items()]:
        g = row.get(graph_term) if isinstance(graph_term, Variable) else graph_term
        if graph_term is not None and (type(g) is not URIRef or ":" not in g):
            continue
        for triple in group:
            terms = []
            for t in triple:
                if isinstance(t, Variable):
                    t = row.get(t)
                elif isinstance(t, BNode):
                    t = fresh.setdefault(t, BNode())
                terms.append(t)
            s, p, o = terms
            if (
                isinstance(s, URIRef | BNode)
                and isinstance(p, URIRef)
                and isinstance(o, URIRef | BNode | Literal)
                and all(":" in t for t in (s, p, o) if isinstance(t, URIRef))
            ):
                yield s, p, o, cast(URIRef | None, g)


def _where_of(template: _Template) -> CompValue:
    """A ``DELETE WHERE``'s template read as its ``WHERE``: its default graph's triples
    joined with each ``GRAPH`` block's (a ``GRAPH ?g`` ranging over the named graphs)."""
    from rdflib.plugins.sparql import algebra

    triples, quads = template
    where = algebra.BGP(cast(Any, triples))
    for graph_term, group in quads.items():
        block = algebra.Graph(cast(Any, graph_term), algebra.BGP(cast(Any, group)))
        where = algebra.Join(where, block)
    return where


def _solutions(
    writes: _Writes, op: CompValue, where: CompValue, using: Any, with_graph: Any
) -> list[Any]:
    """The rows of ``where``, all read before any write: on this store's own dataset, its
    default graph the ``WITH`` graph, or the ``USING`` graphs and its named graphs only the
    ``USING NAMED`` ones (copied into a scratch dataset: they are named, never fetched)."""
    from rdflib.plugins.sparql.evaluate import evalPart
    from rdflib.plugins.sparql.sparql import QueryContext

    if using:
        scratch = Dataset()
        defaults = [d.default for d in using if d.default]
        for d in using:
            if d.named:
                for triple in writes.ds.get_context(d.named):
                    scratch.get_context(d.named).add(triple)
        ctx = QueryContext(scratch, initBindings={})
        if len(defaults) == 1:  # read where it is
            ctx.graph = writes.ds.get_context(defaults[0])
        else:
            ctx.graph = scratch.get_context(DATASET_DEFAULT_GRAPH_ID)
            for name in defaults:
                for triple in writes.ds.get_context(name):
                    ctx.graph.add(triple)
    else:
        ctx = QueryContext(writes.ds, initBindings={})  # no bindings, as rdflib's evalUpdate
        ctx.graph = writes.graph(with_graph) if with_graph is not None else writes.default
    ctx.prologue = op.prologue
    return list(evalPart(ctx, where))
