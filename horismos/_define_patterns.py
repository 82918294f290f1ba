"""SPARQL patterns as the loader reads them: parsed once, refused with the author's line.

A pattern (``horis:requires``, ``horis:candidates``…) is text inside a Turtle string: its
problems are located by the line of the file it is on, not by the parser's offset into a
wrapper query, and what the run's store (Oxigraph) would refuse is refused here, before any
step is tried."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any, cast

from rdflib import RDF, XSD, BNode, Literal, URIRef
from rdflib.term import Node

from ._bare_words import BareWord, bare_word, decimal_comma, meant_keyword, miscased_boolean
from ._builder_base import BuilderBase
from ._errors import Problem
from ._namespace_index import written_prefixes
from ._near_names import closest_term
from ._preconditions import (
    Precondition,
    PreconditionSyntaxError,
    RemotePatternError,
    compile_patterns,
)
from ._sources import literal_warnings_off
from ._sparql_brackets import unclosed
from ._store_syntax import CASTS, rebound, refusal
from ._vocab import HORIS

__all__ = ["PatternReading", "sparql_why"]


_PARSE_AT = re.compile(r"^Expected \w+, found (.+?)\s+\(at char \d+\), \(line:(\d+), col:\d+\)$")


def sparql_why(why: str, wrapper: int = 0) -> tuple[str, int | None]:
    """The parser's complaint in the author's terms, and the line of the pattern it is on.

    Patterns are parsed wrapped in ``ASK WHERE { … }`` whose first line is the pattern's first
    line, so the parser's line is the pattern's; its "Expected AskQuery" and character offset
    refer to the wrapper and would only confuse. A wrapper that puts ``wrapper`` lines before
    the pattern (a candidates pattern's ``SELECT … WHERE {`` line) is taken off the count:
    it said line 5 for a slip on the pattern's 4th.
    """
    m = _PARSE_AT.match(why.strip())
    if m is None:
        return why, None
    if m.group(1) == "end of text":
        return "it ends before every '{', '(' and string is closed", None
    line = max(int(m.group(2)) - wrapper, 1)
    return f"unexpected {m.group(1)} on line {line} of the pattern", line


_UNBOUND_PREFIX = re.compile(r"Unknown namespace prefix : (\S+)")
"""rdflib's word for a pattern's prefix its file does not declare."""


_QUERY_FORM = re.compile(r"\s*(ASK|SELECT|CONSTRUCT|DESCRIBE|WHERE)\b", re.IGNORECASE)
"""A pattern written as a whole query, whose keyword the parser stopped at: told it was a
bare word, the modeler was asked to write ``:ASK``."""


def variable_needle(var: str) -> str:
    """What finds ``?var`` (or ``$var``) in a pattern's text, for :meth:`PatternReading.at_text`:
    a problem about a variable is said at the line that names it."""
    return rf"[?$]{re.escape(var)}\b"


class PatternReading(BuilderBase):
    """Reading a SPARQL pattern written on a node: prepared once, every problem the parser
    or the store has with it located at the pattern's own line."""

    def namespaces(self, node: Node, text: str) -> dict[str, str]:
        """The prefixes ``text``, a pattern or query on ``node``, names, in order: as the
        file that declares ``node`` binds them, else as the merged graph does.

        Only those it names: a project's files bind a namespace each, and a pattern given
        them all cost a pass over them all for each pattern, at load and at each query."""
        declared = self.src.files_with(node, as_subject=True)
        own = declared[0].namespaces if declared else {}
        # The file's own prefixes win; a merged alias of one of its namespaces (rdflib's
        # "default1") would make SPARQL drop the file's prefix for it.
        taken = declared[0].bound if declared else frozenset()
        found: dict[str, str] = {}
        for k in sorted(written_prefixes(text, self.longest_prefix)):
            if k in own:
                found[k] = own[k]
            elif k in self.merged_namespaces and self.merged_namespaces[k] not in taken:
                found[k] = self.merged_namespaces[k]
        return found

    def prefix_hint(self, prefix: str, text: str, ns: Mapping[str, str]) -> str:
        """What to write for ``prefix:``, which a pattern uses and its file does not declare:
        the term with a prefix the file does declare when the files name it there
        (``fl:severity`` → ``:severity``), else the ``@prefix`` line to add; the shape of a
        pattern, which the hint said before, was not what was wrong."""
        used = re.search(rf"(?<![\w:]){re.escape(prefix)}:([\w-]*)", text)
        local = used[1] if used else ""
        named = self.src.nodes()
        meant = sorted(
            f"{k}:{local}" for k, v in ns.items() if local and URIRef(f"{v}{local}") in named
        )
        declare = f"declare it at the top of the file: @prefix {prefix}: <…> ."
        return f"did you mean {meant[0]}? Or {declare}" if meant else declare

    def precondition(
        self,
        owner: Node,
        holder: Node,
        pred: URIRef = HORIS.requires,
    ) -> Precondition | None:
        """The ``pred`` patterns written on ``holder`` (``owner`` or a node under it), prepared."""
        texts = list(self.g.objects(holder, pred))
        if not texts:
            return None
        nodes = [x for x in texts if not isinstance(x, Literal)]
        for node in nodes:  # its IRI read as SPARQL: "example … is not a SPARQL term"
            self.error(
                owner,
                f"{self.n(pred)} {'[ … ]' if isinstance(node, BNode) else self.n(node)} is a "
                "node, not a pattern: a pattern is SPARQL "
                "written in a string",
                f'write {self.n(pred)} """ ?this :acuity ?queue . """',
                at=(holder, pred, node),
            )
        if nodes:
            return None
        try:
            written = [str(x) for x in texts]
            ns = self.namespaces(owner, "\n".join(written))
            with literal_warnings_off():  # said at its line: check_pattern_datatypes
                compiled = compile_patterns(written, ns)
            for p in compiled.patterns:
                if self.store_refuses(
                    owner, holder, pred, f"SELECT * WHERE {{\n{p.text}\n}}", ns, compiled
                ):
                    return None
            self.patterns.append((owner, holder, pred, compiled))
            return compiled
        except RemotePatternError as e:
            bad = next((x for x in texts if str(x).strip() == e.pattern.strip()), texts[0])
            self.remote(owner, holder, pred, bad, e.endpoint)
            return None
        except PreconditionSyntaxError as e:
            bad = next((x for x in texts if str(x).strip() == e.pattern.strip()), texts[0])
            why, row = sparql_why(e.why)
            start: int | None = None  # the file line of the slip, counted on the text as written
            hint = (
                "write triple patterns and FILTERs as inside WHERE { … }, e.g. "
                '"?this :acuity ?queue ."'
            )
            unbound = _UNBOUND_PREFIX.search(e.why)
            query = _QUERY_FORM.match(str(bad))
            # a word the parser stopped at or before, not one in a string it found unclosed
            left = None if unbound or query else self.left_open(str(bad), (holder, pred, bad))
            bare = None if unbound or query or left or row is None else bare_word(str(bad).strip())
            comma = None if unbound or query or left else decimal_comma(str(bad).strip())
            if query and not unbound:
                form = query[1].upper()
                why = (
                    f"it is written as a query ({form} {'' if form == 'WHERE' else '… '}{{ … }}), "
                    f"where {self.n(pred)} is what goes inside WHERE {{ … }}"
                )
                hint = 'write only what is inside the braces, e.g. "?this :acuity ?queue ."'
            elif unbound:
                prefix = "" if unbound[1] == "None" else unbound[1]  # rdflib's for the empty one
                why = f"it uses the prefix {prefix}:, which its file does not declare"
                hint = self.prefix_hint(prefix, str(bad), ns)
            elif left:
                why, hint, start = left
            elif comma is not None:  # a decimal comma: the parser gave up at the FILTER
                why = f"{comma.written} is written with a decimal comma, which SPARQL does not read"
                hint = f"write {comma.meant}: a point, not a comma, before the decimals"
                row = comma.row
            elif bare and bare.row >= cast(int, row):
                why, hint = self.bare_word_said(bare, ns)
                row = bare.row
            problem = self.src.problem(
                "error",
                owner,
                f"{self.n(pred)} is not a valid SPARQL group graph pattern: {why}",
                hint,
                at=(holder, pred, bad),
            )
            if start is not None:
                problem = replace(problem, line=start)
            elif row is not None and problem.line is not None:  # the pattern's own line in the file
                text = str(bad)
                problem = replace(
                    problem,
                    line=problem.line
                    + row
                    - 1
                    + text[: len(text) - len(text.lstrip())].count("\n"),
                )
            self.problems.append(problem)
            return None

    def left_open(
        self, text: str, at: tuple[Node, URIRef, Node | None]
    ) -> tuple[str, str, int | None] | None:
        """What ``text``, a pattern or query that does not parse, leaves open (a bracket, a
        string) or closes that was never open, as (why, hint, file line), the line being the
        bracket's own; None when each is closed. The parser's own account (where it gave
        up) named neither the bracket nor its line (:mod:`._sparql_brackets`)."""
        slip = unclosed(text)
        if slip is None:
            return None
        line = self.src.locate_statement(*at)[1]
        if line is None:
            return slip.why(f"line {slip.row} of the pattern"), slip.hint(), None
        return slip.why(f"line {line + slip.row - 1}"), slip.hint(), line + slip.row - 1

    def bare_word_said(self, bare: BareWord, ns: Mapping[str, str]) -> tuple[str, str]:
        """What is wrong with ``bare``, a bare word in a pattern, and what to write: the
        SPARQL keyword it misspells (``NOT EXIST``), else the node of that name (or of a near
        one) the files declare under one of the pattern's prefixes, else the prefixed name or
        the string. A keyword in capitals is taken for one before a node is looked for."""
        word, row = bare.word, bare.row
        keyword = meant_keyword(bare)
        node = None if keyword and word.isupper() else self.near_node(word, ns)
        if keyword and node is None:
            why = (
                f"{word} (line {row} of the pattern) is not a SPARQL keyword, nor a variable, "
                "a node or a string"
            )
            return why, f"did you mean {keyword}?"
        why = (
            f"{word} (line {row} of the pattern) is not a SPARQL term: a name with no "
            "?, no prefix and no quotes is neither a variable, a node nor a string"
        )
        if node is not None:
            return why, f'did you mean {node}? For a string, write "{word}"'
        prefix = next(iter(sorted(ns)), "")
        return why, (
            f'write a node with its prefix ({prefix}:{word}) or a string in quotes ("{word}")'
        )

    def near_node(self, word: str, ns: Mapping[str, str]) -> str | None:
        """The node named ``word`` (or a near name) that the files declare under one of the
        pattern's prefixes ``ns``, prefixed; None when there is none."""
        declared = [s for s in self.g.subjects(RDF.type, None) if isinstance(s, URIRef)]
        for prefix, space in sorted(ns.items()):
            named = URIRef(f"{space}{word}")
            near = named if named in declared else None
            near = near or closest_term(
                named, [s for s in declared if str(s).startswith(space)], cutoff=0.8
            )
            if near is not None:
                return f"{prefix}:{near[len(space) :]}"
        return None

    def store_refuses(
        self,
        owner: Node,
        holder: Node,
        pred: URIRef,
        query: str,
        ns: Mapping[str, Any],
        parsed: Any,
    ) -> bool:
        """Whether Oxigraph, the engine a run evaluates ``query`` with, refuses it though
        rdflib parsed it (:mod:`._store_syntax`): a function neither store has, a BIND of a
        variable already bound. Reported here, an error at the line that says it; else the
        run died with a traceback at this step, or on the in-memory store the FILTER was
        silently false. ``parsed``: rdflib's parse (a Precondition or its algebra)."""
        refused = refusal(query, {k: str(v) for k, v in ns.items()})
        if refused is None or "IRI parsing failed" in refused.message:
            return False  # a relative IRI (<acuity>): the undeclared-term check names it
        algebra = parsed.select.algebra if isinstance(parsed, Precondition) else parsed
        where = (holder, pred)
        if refused.function is not None:
            iri = URIRef(refused.function)
            name = self.n(iri)
            needle = rf"(?:{re.escape(name)}|<{re.escape(str(iri))}>)\s*\("
            if str(iri).startswith(str(XSD)):
                casts = [URIRef(c) for c in CASTS]
                self.at_text(
                    "error",
                    needle,
                    owner,
                    f"{self.n(pred)} calls {name}(…), which is no XSD cast: the store refuses "
                    "the query, and the run stops at this step",
                    self.did_you_mean(iri, casts)
                    or "cast with one of " + ", ".join(self.n(c) for c in casts[:8]),
                    where,
                )
            else:
                self.at_text(
                    "error",
                    needle,
                    owner,
                    f"{self.n(pred)} calls {name}(…), a function no store Horismos runs on "
                    "has: Oxigraph refuses the query and the run stops at this step, and the "
                    "in-memory store makes the FILTER false, silently",
                    "call SPARQL's built-in functions (regex, str, strlen, contains, lcase, "
                    "if, coalesce, now, year, abs, …) and the XSD casts (xsd:integer(?v), "
                    "xsd:decimal, xsd:double, xsd:boolean, xsd:string, xsd:dateTime)",
                    where,
                )
            return True
        again = rebound(algebra) if refused.syntax else []
        if again:
            var = again[0]
            self.at_text(
                "error",
                rf"\bAS\s+[?$]{re.escape(var)}\b",
                owner,
                f"{self.n(pred)}: BIND(… AS ?{var}) binds ?{var}, which the pattern has "
                f"already bound before it: SPARQL forbids binding a variable already in scope, "
                "so the store refuses the query and the run stops at this step",
                f"bind a new variable and compare, e.g. BIND(… AS ?wanted) FILTER(?{var} = "
                f"?wanted), or write FILTER(?{var} = …) with the value instead of the BIND",
                where,
                after="BIND",
            )
            return True
        word = miscased_boolean(query) if refused.syntax else None
        if word is not None:
            self.at_text(
                "error",
                rf"(?<![\w?$:]){word}(?![\w:])",
                owner,
                f"{self.n(pred)} writes {word}, which is no SPARQL boolean: SPARQL's booleans "
                "are true and false, in lower case, and the store refuses the query, so the "
                "run stops at this step",
                f"write {word.lower()}",
                where,
            )
            return True
        at = re.match(r"error at (\d+):\d+", refused.message)
        body = query.split("\n")[1:-1] if query.startswith("SELECT * WHERE {\n") else []
        row = min(int(at.group(1)) - 1, len(body)) if at is not None and body else 0
        # the line the store stopped at, within the pattern (its wrapper's first line is none)
        needle = re.escape(body[row - 1].strip()) if row > 0 and body[row - 1].strip() else "$^"
        self.at_text(
            "error",
            needle,
            owner,
            f"{self.n(pred)} is SPARQL the store does not evaluate (Oxigraph: "
            f"{refused.said}), so the run stops at this step",
            "write it as SPARQL 1.1 allows inside WHERE { … }",
            where,
        )
        return True

    def remote(self, owner: Node, holder: Node, pred: URIRef, text: Node, endpoint: str) -> None:
        """A pattern that reads a remote endpoint: the query engine would open a connection
        to it when the step is tried, past ``--allow-host`` and every other egress rule, and
        the step would hold or not by what a server elsewhere answers. An error at the line
        the ``SERVICE`` (or ``FROM``) is written on."""
        problem = self.src.problem(
            "error",
            owner,
            f"{self.n(pred)} reads the remote endpoint {endpoint}: a pattern is evaluated "
            "against the world, never a remote endpoint, and the connection would bypass "
            "--allow-host",
            f"drop {endpoint}{' { … }' if endpoint.startswith('SERVICE') else ''} and match "
            "what it would read in the world: load it with --world, or fetch it with a tool "
            "whose effect lands it",
            at=(holder, pred, text),
        )
        keyword = endpoint.split()[0]
        hit = re.search(rf"\b{keyword}\b", str(text), re.IGNORECASE)
        if hit is not None and problem.line is not None:  # the SERVICE's own line
            problem = replace(problem, line=problem.line + str(text)[: hit.start()].count("\n"))
        self.problems.append(problem)

    def parsed_patterns(self) -> Iterator[tuple[Node, Node, URIRef, Any]]:
        """Each pattern as (owner, holder, predicate, parsed algebra): the horis:requires and
        horis:until patterns, then the horis:candidates queries."""
        for owner, holder, pred, pre in self.patterns:
            yield owner, holder, pred, pre.select.algebra
        for step, cands, algebra in self.queries:
            yield step, cands, HORIS.query, algebra

    def at_text(
        self,
        severity: str,
        needle: str,
        owner: Node,
        message: str,
        hint: str,
        where: tuple[Node, URIRef],
        after: str = "",
        also: str = "",
    ) -> None:
        """A problem about what ``needle`` (a regular expression) finds in the ``where``
        (holder, predicate) patterns of ``owner``: at the line of the pattern text where it
        is first found after ``after`` (such as ``FILTER``) and, when ``also`` is given, on
        a line that has ``also`` too; not at the pattern's first line."""
        self.problems.append(
            self.placed_in_text(severity, needle, owner, message, hint, where, after, also)
        )

    def placed_in_text(
        self,
        severity: str,
        needle: str,
        owner: Node,
        message: str,
        hint: str | None,
        where: tuple[Node, URIRef],
        after: str = "",
        also: str = "",
    ) -> Problem:
        """:meth:`at_text`'s problem, not yet reported."""
        holder, pred = where
        found = re.compile(needle)
        text = next((x for x in self.g.objects(holder, pred) if found.search(str(x))), None)
        problem = self.src.problem(severity, owner, message, hint, at=(holder, pred, text))
        body = str(text) if text is not None else ""
        start = re.search(after, body, re.IGNORECASE) if after else None
        hits = list(found.finditer(body, start.start() if start else 0)) or list(
            found.finditer(body)
        )
        line_of = {h: body.count("\n", 0, h.start()) for h in hits}
        lines = body.split("\n")
        hit = next((h for h in hits if also in lines[line_of[h]]), hits[0] if hits else None)
        if hit is not None and problem.line is not None:  # the needle's own line
            problem = replace(problem, line=problem.line + line_of[hit])
        return problem
