"""A world's value that is no individual of its property's range: ``:acuity :urgnt`` where the
range :AcuityLevel has the individuals ``:urgent`` and ``:routine``.

It loaded without a word: a step's pattern bound ``?queue`` to ``:urgnt``, the tool's argument
typed :AcuityLevel refused it (no node :urgnt is one), and a pattern naming ``:urgent`` never
matched the patient. ``validate --world`` warns of it, at the world file's line, with the
individual meant.

Judged only where the range has few individuals, all known: the ontology enumerates them
(``owl:oneOf``), or the ontology and the world type them (``:urgent a :AcuityLevel``), and a
value is said only when it names none of them, is described nowhere (no statement of the
world or the definitions is about it, and no definition names it: a node the world says
anything of is the world's own, and one a pattern names is the pattern's to match),
and either the range is an enumeration or the value is spelt like one of them. A range of
many individuals (patients, nurses) is not an enumeration, and a value of it is not judged.

The world is read as a stream (:mod:`._world_terms`'s pass), keeping the individuals of each
range up to :data:`_FEW` and the values of each property up to as many; only when a value is
suspect are the files read again, for whether anything describes it and for its line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from rdflib import OWL, RDF, RDFS, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._datatypes import is_datatype
from ._definitions_model import Definitions
from ._errors import Problem
from ._near_names import near_individual
from ._stores.ox_files import file_format

__all__ = ["IndividualsSeen"]


_FEW = 200
"""Past this many individuals a range is no enumeration, and past this many values of a
property its values are not judged: what is kept stays small whatever the world's size."""


@dataclass
class _Used:
    """A value of a property in a range of few individuals: where it was first written."""

    path: Path
    subject: str


@dataclass
class IndividualsSeen:
    """What the pass over the world files keeps of the individuals of each property's range
    and of the values the properties are given (see the module's docstring)."""

    defs: Definitions
    ranges: dict[ox.NamedNode, URIRef] = field(default_factory=dict)
    """each property whose one range is a class: that class"""
    enumerated: dict[URIRef, frozenset[str]] = field(default_factory=dict)
    """each range class the ontology enumerates (owl:oneOf): its members"""
    watched: dict[ox.NamedNode, set[URIRef]] = field(default_factory=dict)
    """each class whose individuals are kept: every range it is (a subclass) of (:Nurse is
    one of :Nurse and of :Person where :assignedNurse and :caredBy range over them)"""
    individuals: dict[URIRef, set[str]] = field(default_factory=dict)
    many: set[URIRef] = field(default_factory=set)
    values: dict[ox.NamedNode, dict[str, _Used]] = field(default_factory=dict)

    @classmethod
    def of(cls, defs: Definitions) -> IndividualsSeen:
        """The ranges ``defs`` gives, with the individuals the definitions type and the
        members they enumerate."""
        seen = cls(defs)
        g = defs.graph
        for prop in set(g.subjects(RDFS.range)):
            found = list(g.objects(prop, RDFS.range))
            r = found[0] if len(found) == 1 else None
            if not isinstance(prop, URIRef) or not isinstance(r, URIRef) or is_datatype(r):
                continue
            if (r, RDF.type, RDFS.Datatype) in g or (prop, RDF.type, OWL.DatatypeProperty) in g:
                continue
            seen.ranges[ox.NamedNode(str(prop))] = r
            for c in defs.classes_of(r):
                seen.watched.setdefault(ox.NamedNode(str(c)), set()).add(r)
            seen.individuals.setdefault(r, set())
            listed = [m for lst in g.objects(r, OWL.oneOf) for m in Collection(g, lst)]
            if listed:
                seen.enumerated[r] = frozenset(str(m) for m in listed if isinstance(m, URIRef))
        for watched, of in seen.watched.items():
            for s in g.subjects(RDF.type, URIRef(watched.value)):
                if isinstance(s, URIRef):
                    for r in of:
                        seen.typed(r, str(s))
        return seen

    def typed(self, r: URIRef, individual: str) -> None:
        """``individual`` is of the range ``r`` (or a subclass of it)."""
        if r in self.many:
            return
        found = self.individuals[r]
        found.add(individual)
        if len(found) > _FEW:
            self.many.add(r)
            found.clear()

    def see_type(self, quad: ox.Quad) -> None:
        """A typing ``quad`` of the world, of a class in :attr:`watched`."""
        if isinstance(quad.subject, ox.NamedNode) and isinstance(quad.object, ox.NamedNode):
            for r in self.watched[quad.object]:
                self.typed(r, quad.subject.value)

    def see_value(self, quad: ox.Quad, path: Path) -> None:
        """A statement of the world file ``path`` giving a property in :attr:`ranges` a
        value."""
        value = quad.object
        if not isinstance(value, ox.NamedNode):
            return
        kept = self.values.get(quad.predicate)
        if kept is None:
            kept = self.values[quad.predicate] = {}
        if value.value not in kept and len(kept) <= _FEW:
            subject = quad.subject.value if isinstance(quad.subject, ox.NamedNode) else ""
            kept[value.value] = _Used(path, subject)

    def problems(
        self,
        paths: Iterable[Path],
        named: set[str],
        name: Callable[[Node], str],
        lines: Callable[[Path, list[str], dict[str, str]], dict[str, int]],
        written: Callable[[str, dict[str, str]], str],
    ) -> list[Problem]:
        """A warning for each value that names no individual of its range and is described
        nowhere, nor ``named`` by the definitions (a pattern naming it matches it);
        ``lines`` finds a term's first line in a file, ``written`` writes a term as the file
        does."""
        suspects = {v: s for v, s in self.suspects().items() if v not in named}
        if not suspects:
            return []
        described = set()
        prefixes: dict[Path, dict[str, str]] = {}
        for path in paths:  # again, only now: anything said of a suspect makes it the world's
            parser = ox.parse(path=path, format=file_format(path), base_iri=path.resolve().as_uri())
            for quad in parser:
                if isinstance(quad.subject, ox.NamedNode) and quad.subject.value in suspects:
                    described.add(quad.subject.value)
            prefixes[path] = dict(parser.prefixes)
        said = {v: s for v, s in sorted(suspects.items()) if v not in described}
        by_file: dict[Path, list[str]] = {}
        for value, (_, _, used, _) in said.items():
            by_file.setdefault(used.path, []).append(value)
        line_of = {  # one pass over each file for all its values, not one a value
            path: lines(path, values, prefixes.get(path, {})) for path, values in by_file.items()
        }
        out = []
        for value, (prop, r, used, meant) in said.items():
            ns = prefixes.get(used.path, {})
            shown = written(value, ns)
            known = sorted(self.enumerated.get(r) or self.individuals[r])
            listed = ", ".join(written(k, ns) for k in known[:8])
            hint = (
                f"did you mean {written(meant, ns)}?"
                if meant
                else f"write one of {listed}, or add {shown} to the owl:oneOf of {name(r)}"
            )
            out.append(
                Problem(
                    "warning",
                    f"the world gives {written(prop.value, ns)} {shown}, which is no {name(r)} "
                    f"(its individuals are {listed}) and of which nothing is said: an argument "
                    f"typed {name(r)} refuses it, and a pattern naming one of them never "
                    "matches it",
                    node=written(used.subject, ns) if used.subject else None,
                    file=str(used.path),
                    line=line_of[used.path].get(value),
                    hint=hint,
                )
            )
        return out

    def suspects(self) -> dict[str, tuple[ox.NamedNode, URIRef, _Used, str | None]]:
        """Each value given a property whose range has few individuals, all known, that is
        none of them and either spelt like one or of an enumerated range; with the property,
        the range, where it was first written and the individual meant."""
        g = self.defs.graph
        found: dict[str, tuple[ox.NamedNode, URIRef, _Used, str | None]] = {}
        for prop, kept in self.values.items():
            r = self.ranges[prop]
            if r in self.many or len(kept) > _FEW:
                continue
            known = self.enumerated.get(r) or self.individuals[r]
            if not known:
                continue
            for value, used in kept.items():
                if value in known or value in found or (URIRef(value), None, None) in g:
                    continue
                near = near_individual(URIRef(value), map(URIRef, known))
                if near is not None or r in self.enumerated:
                    found[value] = (prop, r, used, str(near) if near is not None else None)
        return found
