"""One prefix, two namespaces: the workflow's ``:`` is not the ontology's.

Each file's prefixes are its own, so a workflow that binds ``:`` to ``<…/ehr/>`` while the
ontology binds it to ``<…/ehr#>`` (or a file that declares ``:`` a second time) names, with
every ``:Patient`` it writes, a term nothing loaded declares. So does a file writing
``ex:Patient`` over ``<…/ehr/>`` where the ontology binds ``:`` to ``<…/ehr#>``: the prefix's
name differs, the slip is the same. Each such term was its own
"declared by no loaded ontology" warning — a dozen for one slip, none naming it, the run
refusing every call. Here the slip is said once, at the ``@prefix`` line that makes it, with
both namespaces and the file that declares the terms; the warnings it explains are folded in.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from rdflib import URIRef

from ._errors import Problem
from ._sources import ParsedFile, Sources

__all__ = ["NearMiss", "PrefixClash", "misbound", "prefix_clashes"]


@dataclass(frozen=True)
class PrefixClash:
    """One prefix's clash, said once, and the undeclared terms it explains."""

    problem: Problem
    terms: frozenset[URIRef]
    prefix: str = ""
    """The prefix, as the file writes it (``""`` for ``:``)."""
    ns: str = ""
    """The namespace the file binds it to."""

    def written(self, term: URIRef) -> str:
        """``term`` as the file writes it: ``:claims.assess``."""
        return f"{self.prefix}:{str(term)[len(self.ns) :]}"


def prefix_clashes(
    sources: Sources,
    undeclared: Mapping[URIRef, list[Problem]],
    declared: set[URIRef],
    typed: Set[URIRef] = frozenset(),
) -> list[PrefixClash]:
    """For each file and prefix whose namespace gives terms nothing declares, where the same
    local names are declared under another namespace the prefix is bound to — by another
    loaded file, or earlier in the same file — one warning at the file's ``@prefix`` line.
    ``undeclared``: each term nothing loaded declares, and the warnings saying so.
    A file that declares a prefix twice is warned of it even when no term is lost yet.
    ``typed``: the terms some file types (``rdf:type``): over a near spelling of a namespace
    another file declares terms in, the file's own terms nothing types are lost too, though
    another file misbound alike uses them (and so none is undeclared)."""
    # Each file's @prefix lines, its prefixes, and which files bind each prefix (in the files'
    # order) are read once: read again for each prefix of each other file, they made a
    # project of a few hundred files take minutes.
    files = sources.files
    declared_at = [_declarations(f) for f in files]
    bound = [_bound(f, lines) for f, lines in zip(files, declared_at, strict=True)]
    binders: dict[str, list[tuple[ParsedFile, str]]] = {}
    spaces: dict[str, list[tuple[ParsedFile, str]]] = {}  # each namespace, who binds it, as what
    for f, prefixes in zip(files, bound, strict=True):
        for prefix, ns in prefixes.items():
            binders.setdefault(prefix, []).append((f, ns))
            spaces.setdefault(ns, []).append((f, prefix))
    spellings: dict[str, set[str]] = {}  # the namespaces bound, by what their spellings share
    for space in spaces:
        spellings.setdefault(_bare(space), set()).add(space)
    # where a term's warnings are is where it is written: a pattern's terms are in its text,
    # which no graph of the file holds
    written_in: dict[str, list[URIRef]] = {}
    for t in sorted(undeclared, key=str):
        for path in dict.fromkeys(p.file for p in undeclared[t] if p.file is not None):
            written_in.setdefault(path, []).append(t)
    out: list[PrefixClash] = []
    for f, declarations, prefixes in zip(files, declared_at, bound, strict=True):
        written = written_in.get(str(f.path), [])
        named_here: set[URIRef] | None = None  # the file's IRIs, read once if needed
        for prefix, ns in sorted(prefixes.items()):
            mine = [t for t in written if str(t).startswith(ns) and len(str(t)) > len(ns)]
            # a prefix the file writes, of a domain's namespace another spelling of which is
            # bound too: a standard one misspelt is misbound's error, and rdflib's own names
            # (xsd1:) no file wrote
            respelt = (
                any(p == prefix for _, p, _ in declarations)
                and _bare(ns) not in _STANDARD_BARE
                and len(spellings.get(_bare(ns), ())) > 1
            )
            if respelt:
                if named_here is None:
                    named_here = {t for triple in f.graph for t in triple if isinstance(t, URIRef)}
                own = {
                    t
                    for t in named_here
                    if str(t).startswith(ns) and len(str(t)) > len(ns) and t not in typed
                }
                mine = sorted({*mine, *own}, key=str)
            earlier = [
                (line, other) for line, p, other in declarations if p == prefix and other != ns
            ]
            if not earlier and not mine:
                continue  # declared once, and no term of it is lost: nothing to say
            others = [(o, space) for o, space in binders[prefix] if o is not f and space != ns]
            # another file's spelling of this namespace under a prefix of its own (ex: over
            # <…/pharmacy/> here, : over <…/pharmacy#> there): the same slip, said as once
            near = (
                [
                    (o, space, p)
                    for space in sorted(spellings.get(_bare(ns), ()))
                    if space != ns
                    for o, p in spaces[space]
                    if o is not f and p != prefix
                ]
                if mine and respelt
                else []
            )
            alternatives = (
                [space for _, space in earlier]
                + [space for _, space in others]
                + [space for _, space, _ in near]
            )
            best, hits = "", list[URIRef]()
            for space in dict.fromkeys(alternatives):
                found = [t for t in mine if URIRef(space + str(t)[len(ns) :]) in declared]
                if len(found) > len(hits):
                    best, hits = space, found
            if not earlier and not hits:
                continue
            line = next(
                (i for i, p, space in reversed(declarations) if p == prefix and space == ns), None
            )
            lost = _lost(sources, prefix, ns, best, hits)
            if earlier:
                first_line, first = earlier[-1]
                message = (
                    f"the prefix {prefix}: is declared a second time in this file, as <{ns}>: "
                    f"from here on it no longer means <{first}> (line {first_line})" + lost
                )
                hint = (
                    f"remove this @prefix and keep @prefix {prefix}: <{first}> ., or give "
                    f"<{ns}> a prefix of its own"
                )
            elif (other := next((o for o, space in others if space == best), None)) is not None:
                message = (
                    f"the prefix {prefix}: means <{ns}> in this file but <{best}> in "
                    f"{other.path.name}" + lost
                )
                hint = f"write @prefix {prefix}: <{best}> . as {other.path.name} does"
            else:
                other, theirs = next((o, p) for o, space, p in near if space == best)
                message = (
                    f"the prefix {prefix}: means <{ns}> in this file, where {other.path.name} "
                    f"binds {theirs}: to <{best}>" + lost
                )
                hint = (
                    f"write @prefix {prefix}: <{best}> . (the namespace {other.path.name} "
                    f"binds {theirs}: to)"
                )
            problem = Problem("warning", message, file=str(f.path), line=line, hint=hint)
            out.append(PrefixClash(problem, frozenset(hits), prefix, ns))
    return out


def _lost(sources: Sources, prefix: str, ns: str, best: str, hits: list[URIRef]) -> str:
    """What the clash costs: the terms this file names that only the other namespace has."""
    if not hits:
        return ""
    names = [f"{prefix}:{str(t)[len(ns) :]}" for t in hits]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    where = sources.files_with(URIRef(best + str(hits[0])[len(ns) :]), as_subject=True)
    return (
        f"; {shown} {'is' if len(names) == 1 else 'are'} declared under <{best}>"
        + (f" (in {where[0].path.name})" if where else "")
        + f", so as written here {'it names' if len(names) == 1 else 'they name'} nothing "
        f"loaded declares and every check or call that uses {'it' if len(names) == 1 else 'them'}"
        " finds nothing"
    )


def _bound(f: ParsedFile, declarations: list[tuple[int, str, str]] | None = None) -> dict[str, str]:
    """Each prefix of the file and its namespace: as the file last declares it, else as its
    graph binds it. rdflib binds ``xsd:`` and its other defaults itself and keeps them when a
    file declares the prefix otherwise (``@prefix xsd: <…XMLSchema>``, naming the file's own
    ``xsd1``), so the graph alone said the file had declared ``xsd:`` "a second time"."""
    bound = dict(f.namespaces)
    for _, prefix, ns in declarations if declarations is not None else _declarations(f):
        if ":" in ns:  # absolute; a relative one is the graph's, resolved against the file
            bound[prefix] = ns
    return bound


@dataclass(frozen=True)
class NearMiss:
    """A standard prefix bound to a near miss of its namespace, at a file's line."""

    file: ParsedFile
    line: int
    prefix: str
    ns: str
    """The namespace the file binds the prefix to."""
    std: str
    """The standard namespace it misses."""
    named: tuple[str, ...]
    """The IRIs the file writes with the prefix, sorted."""

    @property
    def problem(self) -> Problem:
        """The error at the prefix line."""
        return Problem(
            "error",
            f"the prefix {self.prefix}: is bound to <{self.ns}>, not {_STANDARD[self.std]}'s "
            f"namespace <{self.std}>, so {self.written(self.named[0])} names "
            f"<{self.named[0]}>, no term of {_STANDARD[self.std]}",
            file=str(self.file.path),
            line=self.line,
            hint=f"write @prefix {self.prefix}: <{self.std}> .",
        )

    def written(self, iri: str) -> str:
        """``iri`` as the file writes it: ``xsd:decimal``."""
        return f"{self.prefix}:{iri[len(self.ns) :]}"

    def referral(self, iri: str) -> str:
        """The hint for a finding elsewhere that names ``iri``: the prefix line to mend,
        not the term the modeler already wrote (``write horis:type xsd:decimal``)."""
        return (
            f"as {self.file.path.name}:{self.line} binds {self.prefix}:, {self.written(iri)} "
            f"names <{iri}>, no term of {_STANDARD[self.std]}: mend that @prefix (write "
            f"@prefix {self.prefix}: <{self.std}> .) first"
        )


def misbound(sources: Sources) -> list[NearMiss]:
    """Each ``@prefix`` binding a standard prefix to a near miss of its namespace (``xsd:``
    to ``<…/XMLSchema>``, without its ``#``; ``owl:`` over https) in a file that writes terms
    with it: an error at that line (:attr:`NearMiss.problem`). Every ``xsd:string`` of the
    file names ``<…XMLSchemastring>``, no datatype, and the run refuses every value; what was
    said was one warning per term, naming a prefix (``xsd1:``) the file never wrote. What
    follows from it at other lines is sent back to this one (:meth:`NearMiss.referral`)."""
    out = []
    for f in sources.files:
        for line, prefix, ns in _declarations(f):
            std = next(
                (s for s in _STANDARD if s != ns and _bare(s) == _bare(ns) and ":" in ns), None
            )
            if std is None:
                continue
            used = sorted(
                {str(t) for triple in f.graph for t in triple if isinstance(t, URIRef)} - {ns},
            )
            named = [u for u in used if u.startswith(ns) and not u.startswith(std)]
            if named:
                out.append(NearMiss(f, line, prefix, ns, std, tuple(named)))
    return out


_STANDARD = {
    "http://www.w3.org/2001/XMLSchema#": "XML Schema",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "RDF",
    "http://www.w3.org/2000/01/rdf-schema#": "RDF Schema",
    "http://www.w3.org/2002/07/owl#": "OWL",
    "http://www.w3.org/ns/shacl#": "SHACL",
    "http://www.w3.org/ns/prov#": "PROV-O",
}
"""The namespaces a workflow's files use besides Horismos's (whose near misses
``check_namespaces`` says), and what each is called."""


def _bare(ns: str) -> str:
    """A namespace without its scheme and its closing ``#`` or ``/``: what two spellings of
    one namespace share."""
    return ns.removeprefix("https://").removeprefix("http://").rstrip("#/")


_STANDARD_BARE = {_bare(s) for s in [*_STANDARD, "https://w3id.org/horismos#"]}
"""The standard namespaces as their misspellings share them: a near miss of one is said as
that (:func:`misbound`, ``check_namespaces``), not as a domain's prefix clash."""


def _declarations(f: ParsedFile) -> list[tuple[int, str, str]]:
    """Each ``@prefix`` (or ``PREFIX``) line of the file: (line, prefix, namespace)."""
    return f.declarations
