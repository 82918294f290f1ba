"""Turtle files and folders read into one graph that remembers where each node was written.

:mod:`._read_sources` parses them into :class:`Sources`; this module says where things are.

Authoring errors must point at a file and a line; rdflib keeps neither, so each file is parsed
on its own and its text searched: a named node where its description starts, a statement on the
line its predicate is written within that description, a blank node at the statement that opens
it (``horis:arg [``), told from its siblings by the values written inside it.
"""

from __future__ import annotations

import errno
import logging
import re
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import cast

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ._errors import AuthoringError, Problem
from ._namespace_index import NamespaceIndex
from ._turtle_syntax import turtle_code
from ._unreadable import STDIN_NOT_READ, file_error, unreadable

__all__ = [
    "ParsedFile",
    "Sources",
    "Where",
    "expand_paths",
    "literal_warnings_off",
]

RDF_SUFFIXES = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".trig": "trig", ".nq": "nquads"}


def expand_paths(paths: Iterable[str | Path], suffixes: Iterable[str] = (".ttl",)) -> list[Path]:
    """Files as given, folders walked for ``suffixes`` in a stable order."""
    wanted = set(suffixes)
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in wanted and f.is_file())
            if not found:  # a folder read as holding nothing would validate as "valid"
                raise AuthoringError(
                    [
                        Problem(
                            "error",
                            f"no RDF file ({', '.join(sorted(wanted))}) in this folder (or none "
                            "this user may read)",
                            file=str(p),
                            hint="give the folder that holds the files, or the files",
                        )
                    ]
                )
            out.extend(found)
        elif p.exists():
            out.append(p)
        elif (e := file_error(p)) is not None and e.errno != errno.ENOENT:
            raise AuthoringError([unreadable(p, e)])  # a link loop: not "no such file"
        elif str(raw) == "-":
            what, hint = STDIN_NOT_READ
            raise AuthoringError([Problem("error", what, file="-", hint=hint)])
        else:
            raise AuthoringError(
                [
                    Problem(
                        "error",
                        "no such file or folder",
                        file=str(p),
                        hint="give an existing Turtle file or a folder of .ttl files",
                    )
                ]
            )
    return out


Where = Node | tuple[Node, URIRef, Node | None]
"""What a problem points at: a node, or the statement ``(subject, predicate, object or None)``."""


@dataclass
class ParsedFile:
    """One parsed file, kept so a problem can be pointed at its line: its own graph (what it
    wrote) and prefixes, its text read the first time a line is looked for, not at parse."""

    path: Path
    graph: Graph
    lines: list[str] | None = None
    _namespaces: dict[str, str] | None = None
    _tokens: dict[URIRef, list[str]] = field(default_factory=dict)
    _subject_lines: dict[URIRef, int | None] = field(default_factory=dict)
    _term_lines: dict[URIRef, list[int]] = field(default_factory=dict)
    _block_ends: dict[int, int] = field(default_factory=dict)
    _text_lines: dict[str, list[int] | None] = field(default_factory=dict)

    @property
    def namespaces(self) -> dict[str, str]:
        """Each prefix this file's graph binds (rdflib's own among them) and its namespace,
        read once: rdflib builds the list anew on every call."""
        if self._namespaces is None:
            self._namespaces = {p: str(ns) for p, ns in self.graph.namespace_manager.namespaces()}
        return self._namespaces

    @cached_property
    def bound(self) -> frozenset[str]:
        """The namespaces :attr:`namespaces` binds a prefix to."""
        return frozenset(self.namespaces.values())

    def text_lines(self) -> list[str]:
        if self.lines is None:
            self.lines = self.path.read_text(encoding="utf-8").splitlines()
        return self.lines

    @cached_property
    def declarations(self) -> list[tuple[int, str, str]]:
        """Each ``@prefix`` (or ``PREFIX``) line of the text: (line, prefix, namespace)."""
        out = []
        for i, text in enumerate(self.text_lines(), 1):
            m = _DECLARATION.match(text)
            if m is not None:
                out.append((i, m.group(1) or "", m.group(2)))
        return out

    @cached_property
    def _rebound(self) -> dict[str, list[tuple[int, str]]]:
        """Each prefix the text declares again over another namespace, and its declarations
        (line, namespace) in order. The graph keeps a prefix's last namespace only, so a term
        written with it above its last ``@prefix`` line (``:ManageChange`` under the file's
        first ``:``) had no CURIE to be found by, and its error no line."""
        seen: dict[str, list[tuple[int, str]]] = {}
        for line, prefix, ns in self.declarations:
            if ":" in ns:  # absolute; a relative one is the graph's, resolved against the file
                seen.setdefault(prefix, []).append((line, ns))
        return {p: at for p, at in seen.items() if len({ns for _, ns in at}) > 1}

    def _in_scope(self, node: URIRef, tok: str, line: int) -> bool:
        """Whether ``tok`` writes ``node`` at ``line``: a CURIE of a prefix declared again
        names ``node`` only where the declaration it reads is in force."""
        prefix, _, local = tok.partition(":")
        at = self._rebound.get(prefix) if not tok.startswith("<") else None
        if at is None:
            return True
        ns = next((ns for start, ns in reversed(at) if start <= line), None)
        return ns is not None and str(node) == ns + local

    def tokens(self, node: URIRef) -> list[str]:
        """The ways this file may write ``node``: ``<IRI>`` and a CURIE per prefix it binds
        (each namespace of a prefix it declares again: :meth:`_in_scope` says where);
        worked out once a node, as every line a search reads asks again."""
        toks = self._tokens.get(node)
        if toks is None:
            text = str(node)
            toks = self._tokens[node] = [f"<{node}>"]
            bindings = [*self.namespaces.items()] + [
                (prefix, ns) for prefix, at in self._rebound.items() for _, ns in at
            ]
            for prefix, ns in bindings:
                tok = f"{prefix}:{text[len(ns) :]}"
                if text.startswith(ns) and len(text) > len(ns) and tok not in toks:
                    toks.append(tok)
        return toks

    @cached_property
    def _words(self) -> dict[str, list[int]]:
        """The lines (1-based, ascending) each word (a run of ``\\w``) is written on, read
        once: a term :meth:`find` matches is bounded by no word character on either side, so
        every word in it is a whole word of its line, and the lines holding its rarest word
        are the only ones to search."""
        words: dict[str, list[int]] = {}
        for i, text in enumerate(self.text_lines(), 1):
            for word in set(_WORD.findall(text)):
                words.setdefault(word, []).append(i)
        return words

    @cached_property
    def _vocabulary(self) -> tuple[list[str], list[str]]:
        """The words of :attr:`_words`, sorted, and each spelled backwards, sorted: the words
        starting, or ending, with a text are a run of one of them."""
        return sorted(self._words), sorted(w[::-1] for w in self._words)

    def text_lines_with(self, text: str) -> list[int] | None:
        """The lines (1-based, ascending) that may hold ``text`` (a superset of those that do),
        from the word index; None when any may (``text`` has no word). A word of ``text`` with
        no word character either side of it in ``text`` is a whole word of such a line; one at
        its start ends a word of the line, one at its end starts one. Kept per text."""
        if text in self._text_lines:  # None is an answer kept too
            return self._text_lines[text]
        best: set[int] | None = None
        for m in _WORD.finditer(text):
            word, inner_start, inner_end = m.group(), m.start() > 0, m.end() < len(text)
            if inner_start and inner_end:
                words = [word]
            elif inner_start:  # the line's word starts with it
                forwards = self._vocabulary[0]
                at = bisect_left(forwards, word)
                words = []
                while at < len(forwards) and forwards[at].startswith(word):
                    words.append(forwards[at])
                    at += 1
            elif inner_end:  # the line's word ends with it
                backwards, drow = self._vocabulary[1], word[::-1]
                at = bisect_left(backwards, drow)
                words = []
                while at < len(backwards) and backwards[at].startswith(drow):
                    words.append(backwards[at][::-1])
                    at += 1
            else:
                words = [w for w in self._vocabulary[0] if word in w]
            lines = {i for w in words for i in self._words.get(w, ())}
            if best is None or len(lines) < len(best):
                best = lines
        found = self._text_lines[text] = None if best is None else sorted(best)
        return found

    def term_lines(self, node: URIRef) -> list[int]:
        """The lines (1-based, ascending) where :meth:`find` finds ``node``; kept per node.

        Only the lines holding the rarest word of each way it is written are searched:
        placing a problem searched every line of the description it is in, once per problem,
        and a node shape of 10,000 property shapes is 10,000 problems in a description of
        40,000 lines."""
        found = self._term_lines.get(node)
        if found is None:
            lines = self.text_lines()
            candidates: set[int] = set()
            for tok in self.tokens(node):
                words = _WORD.findall(tok)
                if not words:  # written without a word (``:`` alone): every line is one
                    candidates.update(range(1, len(lines) + 1))
                    break
                rarest = min((self._words.get(w, []) for w in words), key=len)
                candidates.update(rarest)
            found = self._term_lines[node] = [
                i for i in sorted(candidates) if self.find(node, lines[i - 1], line=i) is not None
            ]
        return found

    def find(
        self, node: URIRef, text: str, start: int = 0, *, line: int | None = None
    ) -> re.Match[str] | None:
        """The first place in ``text`` from ``start`` where ``node`` is written as a whole term;
        with ``line`` (where ``text`` is), by the prefixes in force there."""
        found = None
        for tok in self.tokens(node):
            if line is not None and self._rebound and not self._in_scope(node, tok, line):
                continue
            m = _term(tok).search(text, start)
            if m and (found is None or m.start() < found.start()):
                found = m
        return found

    @cached_property
    def _line_starts(self) -> dict[str, int]:
        """For each text a line opens with (after its indent) that :meth:`find` would take
        for a whole term there, the first such line (1-based); read once. Why: each node's
        :meth:`subject_line` searched every line of the file, and 400 warnings about 400
        tools of one file read it 400 times (~1.3 s of a 2 s ``validate``). A line's first
        run of non-blank characters gives each of its prefixes followed by what ends a term
        (no word character, no ``-``, no ``.`` before a word character), and the whole run."""
        starts: dict[str, int] = {}
        for i, text in enumerate(self.text_lines(), 1):
            lead = text.lstrip()
            run = _LEADING_RUN.match(lead)
            if run is None:
                continue
            word = run.group()
            for k in range(1, len(word)):
                if _TERM_GOES_ON.match(word, k) is None:
                    starts.setdefault(word[:k], i)
            starts.setdefault(word, i)
        return starts

    def subject_line(self, node: URIRef) -> int | None:
        """The first line (1-based) that opens with ``node``: where its description starts.
        Looked up in :attr:`_line_starts`, the file read once for every node asked of."""
        if node not in self._subject_lines:
            if self._rebound:  # a line opening with a CURIE may name another node there
                lines = self.text_lines()
                self._subject_lines[node] = next(
                    (
                        i
                        for i in self.term_lines(node)
                        if (m := self.find(node, lines[i - 1], line=i)) is not None
                        and not lines[i - 1][: m.start()].strip()
                    ),
                    None,
                )
                return self._subject_lines[node]
            starts = self._line_starts
            found = [line for tok in self.tokens(node) if (line := starts.get(tok)) is not None]
            self._subject_lines[node] = min(found, default=None)
        return self._subject_lines[node]

    def mention_line(self, node: URIRef) -> int | None:
        for i, text in enumerate(self.text_lines(), 1):
            if self.find(node, text, line=i) is not None:
                return i
        return None

    def block_end(self, line: int) -> int:
        """The last line of the top-level statement running through ``line``; kept, as each
        problem placed in a description asks for its end again."""
        end = self._block_ends.get(line)
        if end is None:
            lines = self.text_lines()
            end = next(
                (
                    i  # 0-based index of the line after ``line``
                    for i in range(line, len(lines))
                    if lines[i][:1] not in ("", " ", "\t", "#") and lines[i].strip()
                ),
                len(lines),
            )
            self._block_ends[line] = end
        return end

    def structure(self, line: int, col: int) -> Iterator[tuple[int, int, str]]:
        """The characters that shape the Turtle from ``line``:``col`` on (1-based line,
        0-based column, the character): brackets, parentheses, ``,``, ``;`` and a statement's
        closing ``.``; not inside a string, an IRI or a comment."""
        for i, code in turtle_code(self.text_lines(), line, col):
            for j, ch in enumerate(code):
                if ch in "[](),;" or (ch == "." and code[j + 1 : j + 2] in ("", " ", "\t")):
                    yield i, j, ch

    def bracket_end(self, line: int, col: int) -> int | None:
        """The line of the ``]`` closing the first ``[`` at or after ``line``:``col``."""
        depth = 0
        for i, _, ch in self.structure(line, col):
            if ch == "[":
                depth += 1
            elif ch == "]" and depth:
                depth -= 1
                if depth == 0:
                    return i
        return None

    def objects_opened(self, line: int, col: int) -> list[tuple[int, int, int]]:
        """The blank nodes of the object list written from ``line``:``col`` (after its
        predicate): ``p [ … ] , [ … ]`` gives each one's opening line and column and its
        closing line, up to the ``;``, ``.`` or ``]`` that ends the list."""
        opened: list[tuple[int, int, int]] = []
        depth = 0
        start = (0, 0)
        for i, j, ch in self.structure(line, col):
            if ch in "[(":
                if depth == 0 and ch == "[":
                    start = (i, j)
                depth += 1
            elif ch in "])":
                if depth == 0:
                    break
                depth -= 1
                if depth == 0 and ch == "]":
                    opened.append((*start, i))
            elif depth == 0 and ch in ";.":
                break
        return opened


_DECLARATION = re.compile(r"^\s*(?:@prefix|(?i:prefix))\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>")
"""A line declaring a prefix: its name (none for ``:``) and its namespace."""


_LOCAL = re.compile(r"(?:[\w-]|\.(?=[\w-]))*")
"""A local name that reads back unchanged in a CURIE (no trailing dot, no punctuation)."""


_NAMES_KEPT = 4096
"""Printed names kept at once. A process that lives for many events (``serve``, ``worker``)
names the nodes each event is about, and a world's nodes have no end: kept all, they grew
its memory by ~150 bytes an event (a node's IRI and its name), for as long as it served."""


# a literal on one line as Turtle writes it: quoted (with its datatype or language), or bare
_WRITTEN_LITERAL = re.compile(
    r"""\s*(?:(?P<quoted>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"(?:\^\^(?:<[^>\s]*>|[\w-]*:(?:[\w-]|\.(?=[\w-]))*)|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?"
    r"|[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?|true\b|false\b)"
)


_WORD = re.compile(r"\w+")


_LEADING_RUN = re.compile(r"\S+")
"""The first run of non-blank characters of a line's text after its indent."""
_TERM_GOES_ON = re.compile(r"[\w-]|\.\w")
"""What, following a term's text, makes it part of a longer one (:func:`_term`'s end)."""


@cache
def _term(tok: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w:<#/.-])" + re.escape(tok) + r"(?![\w-]|\.\w)")


@dataclass
class Sources:
    """The merged graph plus what is needed to say where a node came from."""

    graph: Graph
    files: list[ParsedFile] = field(default_factory=list)
    _where: dict[Node, tuple[str | None, int | None]] = field(default_factory=dict)
    _parents: dict[BNode, tuple[Node, URIRef]] | None = None
    _prefixes: dict[str, list[str]] | None = None
    _names: dict[URIRef, str] = field(default_factory=dict)
    _writers: tuple[dict[Node, list[ParsedFile]], dict[Node, list[ParsedFile]]] | None = None
    _nodes: frozenset[Node] | None = None
    _index: NamespaceIndex | None = None
    _readings: dict[tuple[str, str], int] | None = None
    referrals: list[tuple[str, str, str]] = field(default_factory=list)
    """For each term of a standard prefix a file binds to a near miss of its namespace
    (``xsd:`` to ``<…/XMLSchema>``): how it is named, as the file writes it, and the hint
    that sends the modeler to that ``@prefix`` line (:meth:`_referred`). Longest name
    first."""

    def files_with(self, node: Node, *, as_subject: bool = False) -> list[ParsedFile]:
        """The files that write ``node`` (with ``as_subject``: as a subject), in load order.

        An index built on first use, in one pass over the files: asking each file's graph
        about each node named in a message or a precondition grew with the square of a
        project's size (a third of loading 32 copies of the shipped workflows)."""
        if self._writers is None:
            subjects: dict[Node, list[ParsedFile]] = {}
            mentions: dict[Node, list[ParsedFile]] = {}
            for f in self.files:
                for s, _, o in f.graph:
                    for node_, index in ((s, subjects), (s, mentions), (o, mentions)):
                        if isinstance(node_, Literal):  # a value, never looked for
                            continue
                        held = index.setdefault(node_, [])
                        if not held or held[-1] is not f:
                            held.append(f)
            self._writers = (subjects, mentions)
        return self._writers[0 if as_subject else 1].get(node, [])

    def locate(self, node: Node | None) -> tuple[str | None, int | None]:
        """File and line where ``node`` is first written as a subject, or else mentioned.

        A blank node is found at the statement that opens it, e.g. the ``horis:arg [`` line.
        """
        if node is None:
            return None, None
        if node not in self._where:
            found: tuple[str | None, int | None] = (None, None)
            # Kept before looking: blank nodes may open one another in a cycle
            # (``_:p2 sh:zeroOrMorePath ( _:p2 )``), and looking for one looks for its parent.
            self._where[node] = found
            if isinstance(node, BNode):
                edge = self._parent(node)
                if edge is not None:
                    found = self.locate_statement(edge[0], edge[1], node)
            elif isinstance(node, URIRef):
                found = self._search(node)
            self._where[node] = found
        return self._where[node]

    def locate_statement(
        self,
        s: Node,
        p: URIRef,
        o: Node | None = None,
    ) -> tuple[str | None, int | None]:
        """The line where ``s p o`` is written, or else where ``s`` is."""
        f = next((f for f in self.files_with(s, as_subject=True) if (s, p, o) in f.graph), None)
        if f is None:
            return self.locate(s)
        if isinstance(s, URIRef):
            start = f.subject_line(s)
            end = f.block_end(start) if start is not None else 0
        else:
            file, start = self.locate(s)
            if file != str(f.path) or start is None:
                return self.locate(s)
            end = self._bnode_end(f, cast(BNode, s), start)
        if start is None:
            return self.locate(s)
        lines = f.text_lines()
        hits = f.term_lines(p)  # those from ``lo`` up to ``hi`` are in the description
        lo, hi = bisect_left(hits, start), bisect_right(hits, end)
        # written in another statement of ``s``? ``p`` with another value, in the first
        # (``:A a owl:Class ; rdfs:subClassOf :B .`` then ``:A rdfs:subClassOf :C .``), is not
        if isinstance(s, URIRef) and (lo == hi or not self._writes(f, o, start, end)):
            for other in self._subject_starts(f, s):
                last = f.block_end(other) if other > start else 0
                if bisect_left(hits, other) < bisect_right(hits, last) and (
                    lo == hi or self._writes(f, o, other, last)
                ):
                    start, end = other, last
                    lo, hi = bisect_left(hits, start), bisect_right(hits, end)
                    break
        if lo == hi:  # e.g. rdf:type written as "a": look for the object instead
            marks = self._marks(f, o) if isinstance(o, URIRef | Literal) else []
            found = (i for i in range(start, end + 1) if any(m in lines[i - 1] for m in marks))
            return str(f.path), next(found, start)
        if o is None:
            return str(f.path), hits[lo]
        marks = self._marks(f, o)
        if hi - lo == 1:
            return str(f.path), self._sibling(f, p, o, hits[lo], marks)

        def score(k: int) -> int:
            after = hits[k + 1] if k + 1 < hi else end + 1
            window = "\n".join(lines[hits[k] - 1 : after - 1] or [lines[hits[k] - 1]])
            first = lines[hits[k] - 1]
            m = f.find(p, first, line=hits[k])
            window = window[m.end() :] if m is not None and not isinstance(o, BNode) else window
            if not isinstance(o, BNode):
                window = window.split("\n", 1)[0]  # a value is written on its predicate's line
            return sum(1 for mark in marks if mark in window)

        best = self._best(f, marks, hits, lo, hi, end, score)
        return str(f.path), self._sibling(f, p, o, hits[best], marks)

    @staticmethod
    def _writes(f: ParsedFile, o: Node | None, start: int, end: int) -> bool:
        """Whether lines ``start`` to ``end`` of ``f`` write the IRI ``o`` (a literal, a blank
        node or no object: taken as written, there being no cheap look-up of it)."""
        if not isinstance(o, URIRef):
            return True
        lines = f.term_lines(o)
        return bisect_left(lines, start) < bisect_right(lines, end)

    @staticmethod
    def _subject_starts(f: ParsedFile, s: URIRef) -> Iterator[int]:
        """The lines of ``f`` that open a statement with ``s`` (a description of ``s`` is
        often written in several: ``:Person rdfs:subClassOf :Human .`` after its
        declaration), first to last."""
        lines = f.text_lines()
        for i in f.term_lines(s):
            m = f.find(s, lines[i - 1], line=i)
            if m is not None and not lines[i - 1][: m.start()].strip():
                yield i

    _FEW = 32  # statements scored each, and lines a mark may be on and still be looked at

    def _best(
        self,
        f: ParsedFile,
        marks: list[str],
        hits: list[int],
        lo: int,
        hi: int,
        end: int,
        score: Callable[[int], int],
    ) -> int:
        """Of the statements written at ``hits[lo:hi]`` (each running to the next, the last to
        ``end``), the one whose text holds most ``marks``, the first on a tie: as scoring each
        would, where scoring each for each problem grew with the square of a description's
        statements. A statement's score is at most the marks the word index says may be in
        it (:meth:`ParsedFile.text_lines_with`; a mark on many lines counts as in every one), so
        statements are scored from the highest such bound down, until no bound is above the
        best score found (nor equal to it, for a statement before the best)."""
        if hi - lo <= self._FEW:
            return max(range(lo, hi), key=lambda k: (score(k), -k))
        everywhere, may = 0, dict[int, int]()
        for mark in marks:
            at = f.text_lines_with(mark)
            inside = None if at is None else at[bisect_left(at, hits[lo]) : bisect_right(at, end)]
            if inside is None or len(inside) > self._FEW:
                everywhere += 1
                continue
            for k in {bisect_right(hits, line, lo, hi) - 1 for line in inside}:
                may[k] = may.get(k, 0) + 1
        ranked = sorted(may, key=lambda k: (-may[k], k))
        best, top = lo, -1
        for k in ranked:
            bound = may[k] + everywhere
            if bound < top or (bound == top and k > best):
                break
            got = score(k)
            if got > top or (got == top and k < best):
                best, top = k, got
        if everywhere > top or (everywhere == top and best > lo):
            for k in range(lo, hi):  # the rest, each bounded by ``everywhere``
                if everywhere < top or (everywhere == top and k >= best):
                    break
                if k in may:
                    continue
                got = score(k)
                if got > top or (got == top and k < best):
                    best, top = k, got
        return best

    def written_literal(self, s: Node, p: URIRef, o: Literal) -> str | None:
        """``o`` as the file writes it after ``p`` (``"2026-03-01T07:30:00Z"^^xsd:dateTime``,
        ``002.0``): rdflib keeps a value's normal form (``…+00:00``, ``2.0``), which a message
        quoting it showed the modeler as text found nowhere in the file. None when it is not
        written on its predicate's line."""
        file, line = self.locate_statement(s, p, o)
        f = next((f for f in self.files if str(f.path) == file), None)
        if f is None or line is None:
            return None
        text = f.text_lines()[line - 1]
        for tok in f.tokens(p):
            for m in _term(tok).finditer(text):
                found = _WRITTEN_LITERAL.match(text, m.end())
                if found is None:
                    continue
                lexical = found["quoted"][1:-1] if found["quoted"] else found.group().strip()
                with literal_warnings_off():
                    if Literal(lexical, lang=o.language, datatype=o.datatype) == o:
                        return found.group().strip()
        return None

    def _sibling(self, f: ParsedFile, p: URIRef, o: Node, line: int, marks: list[str]) -> int:
        """Where blank node ``o`` opens when its predicate, written at ``line``, has a comma
        list of them (``p [ … ] , [ … ]``): the one whose text holds most of ``o``'s
        ``marks``, the first on a tie; else ``line``."""
        m = f.find(p, f.text_lines()[line - 1], line=line)
        if not isinstance(o, BNode) or m is None:
            return line
        opened = f.objects_opened(line, m.end())
        if len(opened) < 2:
            return line
        lines = f.text_lines()

        def score(k: int) -> int:
            at, col, end = opened[k]
            window = "\n".join([lines[at - 1][col:], *lines[at:end]])
            return sum(1 for mark in marks if mark in window)

        return opened[max(range(len(opened)), key=lambda k: (score(k), -k))][0]

    def _bnode_end(self, f: ParsedFile, node: BNode, start: int) -> int:
        edge = self._parent(node)
        line = f.text_lines()[start - 1]
        m = f.find(edge[1], line, line=start) if edge is not None else None
        end = f.bracket_end(start, m.end() if m is not None else 0)
        return end if end is not None else f.block_end(start)

    def _marks(self, f: ParsedFile, o: Node) -> list[str]:
        """Text that tells one written object from its siblings."""
        if isinstance(o, URIRef):
            return f.tokens(o)
        if isinstance(o, Literal):
            first = next((ln.strip() for ln in str(o).splitlines() if ln.strip()), str(o))
            return [first]
        marks: list[str] = []
        for _, v in f.graph.predicate_objects(o):
            if isinstance(v, Literal):
                marks.append(f'"{v}"' if isinstance(v.value, str) else str(v))
            elif isinstance(v, URIRef):
                marks.extend(f.tokens(v)[1:])
        return marks

    def _search(self, node: URIRef) -> tuple[str | None, int | None]:
        fallback: tuple[str | None, int | None] = (None, None)
        for f in self.files_with(node):
            if (node, None, None) in f.graph:
                line = f.subject_line(node)
                if line is not None:
                    return str(f.path), line
            if fallback[1] is None:
                fallback = (str(f.path), f.mention_line(node))
        return fallback

    def _parent(self, node: BNode) -> tuple[Node, URIRef] | None:
        """The subject and predicate that hold ``node``: of several (a shape a manifest's
        expected result names by ``sh:sourceShape`` too), a named subject first, then by
        predicate and subject. The first met in the graph's order was taken, which is a
        hash's: the same file's warning was placed at one holder or another from run to run."""
        if self._parents is None:
            parents: dict[BNode, tuple[Node, URIRef]] = {}
            for s, p, o in self.graph:
                if isinstance(o, BNode):
                    held = parents.get(o)
                    if held is None or _holder_order(s, p) < _holder_order(*held):
                        parents[o] = (s, p)  # type: ignore[assignment]
            self._parents = parents
        return self._parents.get(node)

    def owner(self, node: Node) -> Node:
        """The named node a blank node is written under: what an author calls it by."""
        seen: set[Node] = set()
        while isinstance(node, BNode) and node not in seen:
            seen.add(node)
            edge = self._parent(node)
            if edge is None:
                break
            node = edge[0]
        return node

    def problem(
        self,
        severity: str,
        node: Node | None,
        message: str,
        hint: str | None = None,
        at: Where | None = None,
    ) -> Problem:
        """A finding about ``node``, located at ``at`` (a node or a statement) or at ``node``."""
        if isinstance(at, tuple):
            file, line = self.locate_statement(*at)
        else:
            file, line = self.locate(at if at is not None else node)
        name = self.name(self.owner(node)) if node is not None else None
        if self.referrals:
            message, hint = self._referred(message, hint)
        return Problem(
            severity,  # type: ignore[arg-type]
            message,
            node=name,
            file=file,
            line=line,
            hint=hint,
        )

    def _referred(self, message: str, hint: str | None) -> tuple[str, str | None]:
        """A finding that names a term of a misbound prefix (``xsd1:decimal``, a prefix no file
        wrote, for ``<…XMLSchemadecimal>``) follows from that ``@prefix`` line: the term is
        named as the file writes it, and the hint sends the modeler to that line, not to
        write what was written already (``write horis:type xsd:decimal``)."""
        referred = None
        for shown, written, why in self.referrals:
            if shown in message or (hint is not None and shown in hint):
                message = message.replace(shown, written)
                referred = referred or why
        return message, referred or hint

    def prefixes(self) -> dict[str, list[str]]:
        """Each prefix the files declare, and every namespace some file binds it to."""
        if self._prefixes is None:
            self._prefixes = {}
            for f in self.files:
                for prefix, ns in f.namespaces.items():
                    spaces = self._prefixes.setdefault(prefix, [])
                    if ns not in spaces:
                        spaces.append(ns)
        return self._prefixes

    def nodes(self) -> frozenset[Node]:
        """Every subject and object the merged graph holds, gathered once (it is not changed
        after the load): asked of the graph node by node, a name or a did-you-mean walked
        it for each."""
        if self._nodes is None:
            self._nodes = frozenset(self.graph.all_nodes())
        return self._nodes

    def expand(self, prefix: str, local: str) -> list[URIRef]:
        """What ``prefix:local`` could mean: one IRI per namespace the files bind the prefix
        to, narrowed to those the definitions use when the prefix is bound more than once.

        Whether they use one is looked up in a set: asked of the graph, once for each of the
        namespaces each file binds ``:`` to, naming a node grew with the number of files (a
        fifth of loading 400 files of a module each)."""
        spaces = self.prefixes().get(prefix)
        if not spaces:
            bound = dict(self.graph.namespace_manager.namespaces()).get(prefix)
            spaces = [str(bound)] if bound is not None else []
        found = [URIRef(ns + local) for ns in spaces]
        if len(found) > 1:
            used = [c for c in found if c in self.nodes()]
            return used or found
        return found

    def name(self, node: Node, exists: Callable[[URIRef], bool] | None = None) -> str:
        """A node as the author would write it: a CURIE where a prefix fits, and only one that
        reads back as this node (a prefix bound to one namespace, or used so in the files, or
        — given ``exists``, e.g. the world — so in the data); else the full IRI. Files that
        each bind ``:`` differently do not make ``default2:``."""
        if isinstance(node, URIRef):
            if node not in self._names:
                if len(self._names) >= _NAMES_KEPT:
                    self._names.clear()  # a long-lived process names nodes without end
                self._names[node] = self._curie(node)
            name = self._names[node]
            if exists is not None and name.startswith("<"):
                name = self._curie(node, exists)
            return name
        if isinstance(node, BNode):
            edge = self._parent(node)
            return f"[] under {self.name(edge[0])}" if edge is not None else "[]"
        return str(node)

    def namespace_index(self) -> NamespaceIndex:
        """:meth:`prefixes` as an index from an IRI to the namespaces it begins with, built
        once: a node was named by trying every namespace the files bind."""
        if self._index is None:
            self._index = NamespaceIndex(
                (prefix, ns) for prefix, spaces in self.prefixes().items() for ns in spaces
            )
        return self._index

    def _reads_back(self, prefix: str, local: str, node: URIRef) -> bool:
        """Whether ``prefix:local`` (``prefix`` bound to several namespaces) means ``node``
        alone, as :meth:`expand` reads it: ``node`` is one of the definitions' nodes and no
        other namespace of the prefix makes one of them of ``local``.

        Counted once for every node and every such prefix, not asked of each namespace of
        the prefix for each node named: a project of N files each binding ``:`` made naming
        its nodes grow with N²."""
        if self._readings is None:
            spaces = self.prefixes()
            shared = NamespaceIndex(
                (p, ns) for p, bound in spaces.items() if len(bound) > 1 for ns in bound
            )
            self._readings = {}
            for n in self.nodes():
                if isinstance(n, URIRef):
                    for p, ns in shared.matches(str(n)):
                        key = (p, n[len(ns) :])
                        self._readings[key] = self._readings.get(key, 0) + 1
        return node in self.nodes() and self._readings.get((prefix, local)) == 1

    def _curie(self, node: URIRef, exists: Callable[[URIRef], bool] | None = None) -> str:
        text = str(node)
        writers = self.files_with(node)
        ranked: list[tuple[int, int, str]] = []
        for prefix, ns in self.namespace_index().matches(text):
            local = text[len(ns) :]
            if not _LOCAL.fullmatch(local):
                continue
            if (
                len(self.prefixes()[prefix]) > 1
                and not self._reads_back(prefix, local, node)
                and (
                    exists is None or [c for c in self.expand(prefix, local) if exists(c)] != [node]
                )
            ):
                continue  # would read back as another node, or as several
            own = any(f.namespaces.get(prefix) == ns for f in writers)
            ranked.append((0 if own else 1, -len(ns), f"{prefix}:{local}"))
        return min(ranked)[2] if ranked else f"<{node}>"


@contextmanager
def literal_warnings_off() -> Iterator[None]:
    """rdflib logs each literal not of its datatype as it parses it, with no file or line;
    the loader reports each at its line instead (``_Builder.check_literals``), and a hint
    that tries a text as a value of a datatype says what it found itself. A boolean's text
    (``"yes"``) rdflib warns of with :func:`warnings.warn` instead, which printed "Parsing weird
    boolean" under the CLI's own message."""
    logger = logging.getLogger("rdflib.term")
    was, logger.disabled = logger.disabled, True
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Parsing weird boolean", UserWarning)
            yield
    finally:
        logger.disabled = was


def _holder_order(subject: Node, predicate: Node) -> tuple[bool, str, str]:
    """How :meth:`Sources._parent` ranks a blank node's holders: named ones first."""
    return isinstance(subject, BNode), str(predicate), str(subject)
