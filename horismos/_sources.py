"""Turtle files and folders read into one graph that remembers where each node was written.

Authoring errors must point at a file and a line; rdflib keeps neither, so each file is parsed
on its own and its text searched for the first place a node is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import BNode, Graph, URIRef
from rdflib.plugins.parsers.notation3 import BadSyntax
from rdflib.term import Node

from ._errors import AuthoringError, Problem

__all__ = ["Sources", "expand_paths", "read_sources"]

RDF_SUFFIXES = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".trig": "trig", ".nq": "nquads"}


def expand_paths(paths: Iterable[str | Path], suffixes: Iterable[str] = (".ttl",)) -> list[Path]:
    """Files as given, folders walked for ``suffixes`` in a stable order."""
    wanted = set(suffixes)
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in wanted and f.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise AuthoringError(
                [Problem("error", "no such file or folder", file=str(p),
                         hint="give an existing Turtle file or a folder of .ttl files")]
            )
    return out


@dataclass
class _File:
    path: Path
    graph: Graph
    lines: list[str] | None = None

    def text_lines(self) -> list[str]:
        if self.lines is None:
            self.lines = self.path.read_text(encoding="utf-8").splitlines()
        return self.lines

    def tokens(self, node: URIRef) -> list[str]:
        toks = [f"<{node}>"]
        for prefix, ns in self.graph.namespace_manager.namespaces():
            if str(node).startswith(str(ns)):
                local = str(node)[len(str(ns)):]
                if local:
                    toks.append(f"{prefix}:{local}")
        return toks


@dataclass
class Sources:
    """The merged graph plus what is needed to say where a node came from."""

    graph: Graph
    files: list[_File] = field(default_factory=list)
    _where: dict[Node, tuple[str, int | None]] = field(default_factory=dict)
    _parents: dict[BNode, Node] | None = None

    def locate(self, node: Node | None) -> tuple[str | None, int | None]:
        """File and line where ``node`` is first written as a subject, or else mentioned."""
        if node is None:
            return None, None
        if node in self._where:
            return self._where[node]
        found: tuple[str | None, int | None] = (None, None)
        if isinstance(node, BNode):
            found = self.locate(self._parent(node))
        elif isinstance(node, URIRef):
            found = self._search(node)
        self._where[node] = found  # type: ignore[assignment]
        return found

    def _search(self, node: URIRef) -> tuple[str | None, int | None]:
        fallback: tuple[str | None, int | None] = (None, None)
        for f in self.files:
            if (node, None, None) not in f.graph and (None, None, node) not in f.graph:
                continue
            lines = f.text_lines()
            for tok in f.tokens(node):
                pat = re.compile(r"(?<![\w:<#/.-])" + re.escape(tok) + r"(?![\w-]|\.\w)")
                first_any = None
                for i, text in enumerate(lines, 1):
                    m = pat.search(text)
                    if m is None:
                        continue
                    if not text[: m.start()].strip():
                        if (node, None, None) in f.graph:
                            return str(f.path), i
                    first_any = first_any or i
                if first_any is not None and fallback == (None, None):
                    fallback = (str(f.path), first_any)
            if fallback == (None, None):
                fallback = (str(f.path), None)
        return fallback

    def _parent(self, node: BNode) -> Node | None:
        if self._parents is None:
            self._parents = {}
            for s, _, o in self.graph:
                if isinstance(o, BNode) and o not in self._parents:
                    self._parents[o] = s
        return self._parents.get(node)

    def problem(self, severity: str, node: Node | None, message: str, hint: str | None = None,
                ) -> Problem:
        file, line = self.locate(node)
        return Problem(severity, message, node=self.name(node) if node is not None else None,
                       file=file, line=line, hint=hint)  # type: ignore[arg-type]

    def name(self, node: Node) -> str:
        """A node as the author would write it: a CURIE where a prefix fits."""
        if isinstance(node, URIRef):
            # Prefer the prefixes of a file that writes the node: merged graphs rename clashes.
            for f in self.files:
                if (node, None, None) in f.graph or (None, None, node) in f.graph:
                    for tok in f.tokens(node)[1:]:
                        return tok
                    break
            try:
                return self.graph.namespace_manager.normalizeUri(node)
            except Exception:
                return f"<{node}>"
        if isinstance(node, BNode):
            parent = self._parent(node)
            return f"[] under {self.name(parent)}" if parent is not None else "[]"
        return str(node)


def read_sources(paths: Iterable[str | Path], *, extra: Iterable[Graph] = ()) -> Sources:
    """Parse every file; a syntax error anywhere is an :class:`AuthoringError` naming the line."""
    merged = Graph()
    sources = Sources(merged)
    problems: list[Problem] = []
    for path in expand_paths(paths, RDF_SUFFIXES):
        g = Graph()
        fmt = RDF_SUFFIXES.get(path.suffix, "turtle")
        try:
            g.parse(path, format=fmt)
        except BadSyntax as e:
            problems.append(Problem(
                "error", f"Turtle syntax error: {e._why}", file=str(path), line=e.lines + 1,
                hint="end each statement with ' .', separate predicates with ';', and close every "
                     "string, '[' and '(' on the line shown or just before it"))
            continue
        except Exception as e:  # other parsers raise their own types
            problems.append(Problem("error", f"cannot parse as {fmt}: {e}", file=str(path),
                                    hint="check the file's syntax and extension"))
            continue
        for prefix, ns in g.namespace_manager.namespaces():
            merged.namespace_manager.bind(prefix, ns, override=False, replace=False)
        merged += g
        sources.files.append(_File(path, g))
    for g in extra:
        merged += g
    if problems:
        raise AuthoringError(problems)
    return sources
