"""Tools and their bindings, from Turtle to frozen models, each problem said at its line.

A tool is what acts outside Horismos (a Python function, an MCP server, an HTTP endpoint, a
command); everything a call will need — its binding, arguments, headers, effect and its
assertions — is checked and modelled here, before any run."""

from __future__ import annotations

import re

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._adapter_decl import tool_adapter
from ._binding_text import BINDING_SCHEMES, binding_meant, binding_text_problem
from ._datatypes import turtle_term
from ._define_bindings import BindingBuilding
from ._digraph import Digraph, add_edge, descendants
from ._effect_domain import subject_outside_domain
from ._effect_shapes import contradictions
from ._model import Arg, Assertion, Effect, Tool
from ._preconditions import Precondition
from ._shape_checks import ShapeChecks
from ._terms import split_iri
from ._timeouts import DEFAULT_TIMEOUT, parse_timeout, timeout_problem
from ._vocab import HORIS

__all__ = ["ToolBuilding"]


_JSON_PATH = re.compile(r"^\$|[.\[\]/]")
"""A ``horis:key`` written as a JSON path (``data.ref``, ``$.ref``, ``items[0]``, ``/data/ref``):
Horismos reads a top-level field by its name, no path."""


class ToolBuilding(BindingBuilding, ShapeChecks):
    """Building the bindings and tools: MCP servers, command bindings, each tool with its
    arguments, headers and effect."""

    def check_tool_names(self) -> None:
        """Two tools of one short name (``claims.pay`` in two namespaces): the catalog, ``tools
        call`` and ``serve`` name a tool by it, and ``tools call claims.pay`` called whichever
        came first. A warning at each but the first (by IRI): a run names tools by IRI."""
        by_name: dict[str, list[Tool]] = {}
        for tool in self.defs.tools.values():
            by_name.setdefault(tool.name, []).append(tool)
        for name, tools in sorted(by_name.items()):
            if len(tools) < 2:
                continue
            first, *others = sorted(tools, key=lambda t: str(t.iri))
            for tool in others:
                self.warn(
                    tool.iri,
                    f"{len(tools)} tools are named {name}: <{first.iri}> and this one, "
                    f"<{tool.iri}>; the catalog (tools list, tools call, serve) names a tool by "
                    "its local name, so it cannot tell them apart",
                    "give one of them another local name",
                    at=(tool.iri, RDF.type, HORIS.Tool),
                )

    def subclass_closure(self) -> dict[URIRef, frozenset[URIRef]]:
        graph: Digraph[URIRef] = {}
        for sub, sup in self.g.subject_objects(RDFS.subClassOf):
            if isinstance(sub, URIRef) and isinstance(sup, URIRef):
                add_edge(graph, sup, sub)
        return {c: frozenset({c, *descendants(graph, c)}) for c in graph}

    def tool(self, s: Node) -> Tool | None:
        """The tool declared at ``s``; None when it is wrong, having kept it in
        :attr:`broken_tools` when its arguments are right (its steps are checked against it)."""
        arg_list, ok, known = self.argument_nodes(s)
        args_ok = known  # every argument read: what a step binds can be checked against them
        args: list[Arg] = []
        arg_nodes: dict[str, Node] = {}  # name -> its node, where a warning points
        named: dict[str, list[Node]] = {}  # name -> every horis:arg written with it
        for a in arg_list:
            name = self.text(a, HORIS.name)
            typ = self.one(a, HORIS.type)
            if name is None:
                self.error(
                    s,
                    "an argument has no horis:name",
                    'write horis:name "patient" inside the horis:arg [ … ]',
                    at=a,
                )
                ok = args_ok = False
                continue
            written = self.one(a, HORIS.name)
            if isinstance(written, URIRef):  # horis:name :patient
                name = split_iri(written)[1]
                self.error(
                    s,
                    f"horis:name {self.n(written)} is a node, not a string: an "
                    "argument's name is the string a step binds and the binding receives",
                    f'write horis:name "{name}"',
                    at=(a, HORIS.name, written),
                )
                ok = False  # its steps are still checked against the argument it names
            named.setdefault(name, []).append(a)
            if isinstance(typ, Literal):
                self.quoted(s, HORIS.type, typ, self.types(), holder=a, what=f'argument "{name}"')
                ok = args_ok = False
                continue
            if not isinstance(typ, URIRef):
                self.error(
                    s,
                    f'argument "{name}" has no horis:type',
                    f'write horis:arg [ horis:name "{name}" ; horis:type :SomeClass ] '
                    "(an ontology class) or horis:type xsd:string (a datatype)",
                    at=a,
                )
                ok = args_ok = False
                continue
            args.append(
                Arg(
                    name,
                    typ,
                    not self.datatype(typ),
                    self.flag(a, HORIS.optional),
                    self.flag(a, HORIS.sent, default=True),
                )
            )
            arg_nodes[name] = a
        if not self.check_arg_names(s, named):
            ok = args_ok = False
        effect = self.effect(s, args, known=known)
        declared = effect if isinstance(effect, Effect) else None  # never True: see effect()
        binding_node = self.one(s, HORIS.binding)
        binding = None if binding_node is None else str(binding_node)
        at = (s, HORIS.binding, binding_node)
        if binding is None:
            ok = False
            self.error(
                s,
                "the tool has no horis:binding",
                'write horis:binding "python:module.function", "mcp://SERVER/TOOL" '
                'or "https://host/path"',
            )
        elif binding.startswith("rust:"):
            self.error(
                s,
                f'binding "{binding}": rust: bindings cannot run in the Python runtime',
                'bind the tool to "python:module.function", "mcp://SERVER/TOOL" or an http(s) URL',
                at=at,
            )
            ok = False
        elif not binding.startswith(BINDING_SCHEMES):
            meant = binding_meant(binding)
            self.error(
                s,
                f'binding "{binding}" has no known scheme',
                (f'did you mean "{meant}"? Else write ' if meant else "write ")
                + '"python:module.function", "python:name", '
                '"mcp://SERVER/TOOL", "cmd:NAME" or "https://…"',
                at=at,
            )
            ok = False
        elif binding.startswith("cmd:"):
            ok = self.check_command(s, binding, args, at) and ok
        elif (why := binding_text_problem(binding)) is not None:
            self.error(s, f'binding "{binding}" {why[0]}', why[1], at=at)
            ok = False
        if binding is not None and not binding.startswith(("http://", "https://")):
            for h in self.g.objects(s, HORIS.header):
                self.warn(
                    s,
                    "horis:header is sent with an HTTP request; this tool's binding makes "
                    "none, so the header is never used",
                    "take the horis:header out, or bind the tool to an http(s) URL",
                    at=(s, HORIS.header, h),
                )
        timeout = DEFAULT_TIMEOUT
        t = self.one(s, HORIS.timeout)
        if t is not None:
            try:
                timeout = parse_timeout(t)
            except ValueError as e:
                self.error(s, *timeout_problem(t, e), at=(s, HORIS.timeout, t))
                ok = False
        retries: int | None = None
        for retries_node in self.g.objects(s, HORIS.retries):  # each value, as flag() does
            # "3" in quotes is a string: taken as a count, it was warned of as retries besides
            quoted = isinstance(retries_node, Literal) and retries_node.datatype in (
                None,
                XSD.string,
            )
            try:
                count = int(str(retries_node))
                if count < 0 or quoted:
                    raise ValueError
            except ValueError:
                digits = quoted and str(retries_node).strip().isdigit()
                self.error(
                    s,
                    f"horis:retries {turtle_term(retries_node, self.n)} is "
                    + ("a string, not a number" if digits else "not a whole number ≥ 0"),
                    f"write horis:retries {str(retries_node).strip()} without quotes"
                    if digits
                    else "write horis:retries 2",
                    at=(s, HORIS.retries, retries_node),
                )
                ok = False
                continue
            retries = count if retries is None else retries
        inline = self.flag(s, HORIS.inline)
        if inline and binding is not None and not binding.startswith("python:"):
            self.error(
                s,
                f'horis:inline true on a tool bound to "{binding}": only a python: function '
                "can be called on the run's own thread",
                "remove horis:inline (the call already waits without holding the run up)",
                at=(s, HORIS.inline, self.one(s, HORIS.inline)),
            )
            ok = False
        cap = self.one(s, HORIS.maxResultBytes)  # the shape says what to write when wrong
        max_result = int(str(cap)) if cap is not None and str(cap).isdigit() else 1 << 20
        requires = self.precondition(s, s)
        broken = effect is False or not ok
        if broken and not args_ok:
            return None
        if not broken:
            self.check_unsent(s, args, arg_nodes, declared, requires)
        side = self.one(s, HORIS.sideEffect)
        if (
            side is not None
            and side != HORIS.ExternalCommit
            and self.one(s, HORIS.adapter) is not None
        ):
            self.error(
                s,
                f"horis:sideEffect {self.n(side)} on a tool bound to a horis:Adapter, which "
                "commits to a system of record: a policy that refuses ExternalCommit would "
                "have let its commits through",
                "remove horis:sideEffect (an adapter-bound tool is horis:ExternalCommit), and "
                "allow ExternalCommit in the runs that may commit (--allow "
                "ReadOnly,HostStateWrite,ExternalCommit)",
                at=(s, HORIS.sideEffect, side),
            )
        idempotent = self.flag(s, HORIS.idempotent)
        if idempotent and self.one(s, HORIS.adapter) is not None:
            self.error(
                s,
                "horis:idempotent true on a tool bound to a horis:Adapter: its commits to the "
                "system of record would be sent with no intent announced first, so a process "
                "killed after sending one and run again sent it again (a create made twice)",
                "remove horis:idempotent (an adapter-bound tool's commit is made at most "
                "once, and one whose outcome is unknown is never sent again)",
                at=(s, HORIS.idempotent, self.one(s, HORIS.idempotent)),
            )
            idempotent = False
        headers = self.headers(s)
        tool = Tool(
            iri=URIRef(str(s)),
            name=self.short(s),
            label=self.text(s, RDFS.label),
            comment=self.text(s, RDFS.comment),
            args=tuple(args),
            effect=declared,
            binding=binding or "",
            timeout=timeout,
            idempotent=idempotent,
            inline=inline,
            retries=retries or 0,
            side_effect=side if isinstance(side, URIRef) else None,
            requires_approval=self.flag(s, HORIS.requiresApproval),
            requires=requires,
            headers=headers,
            max_result_bytes=max(max_result, 1),
            **tool_adapter(self.g, s, self.defs.adapters, self.error, self.warn, self.n),
            command=self.defs.commands.get(binding[len("cmd:") :])
            if binding and binding.startswith("cmd:")
            else None,
        )
        if broken:  # never run: its errors fail the load; what its steps say is checked too
            self.broken_tools[tool.iri] = tool
            return None
        return tool

    def argument_nodes(self, tool: Node) -> tuple[list[Node], bool, bool]:
        """The tool's ``horis:arg`` nodes; whether they are written where they are read
        (inside ``horis:takes [ … ]``); whether its arguments can be known at all.

        Written on the tool itself (``horis:arg [ … ]`` with no ``horis:takes [ … ]`` around
        it) they are read as its arguments all the same, the tool kept broken: what its
        effect and steps say of them is then checked, where it was said as their not being
        arguments of a tool that takes none (``horis:bind names argument "patient" … — use
        one of: `` and nothing after). A ``horis:takes`` naming a node that holds no
        ``horis:arg`` (``horis:takes :PatientArgs``, declared nowhere) gives no argument to
        read: said there, and nothing is checked against arguments nobody can know."""
        nodes: list[Node] = []
        placed = known = True
        for takes in self.g.objects(tool, HORIS.takes):
            held = list(self.g.objects(takes, HORIS.arg))
            nodes += held
            if held or not isinstance(takes, URIRef):
                continue  # ``horis:takes [ ]``: a tool of no arguments, as it says
            known = False
            declared = (takes, None, None) in self.g
            self.error(
                tool,
                f"horis:takes {self.n(takes)} holds no horis:arg"
                + ("" if declared else f": {self.n(takes)} is declared nowhere")
                + ", so the tool's arguments are unknown",
                'write the arguments in brackets: horis:takes [ horis:arg [ horis:name "patient" '
                "; horis:type :Patient ] ; … ]"
                + ("" if declared else f", or declare {self.n(takes)} horis:arg [ … ]"),
                at=(tool, HORIS.takes, takes),
            )
        loose = sorted(
            self.g.objects(tool, HORIS.arg), key=lambda a: (self.src.locate(a)[1] or 0, str(a))
        )
        if loose:
            placed = False
            many = f"{len(loose)} horis:arg are" if len(loose) > 1 else "horis:arg is"
            self.error(
                tool,
                f"{many} written on the tool itself; a tool's arguments are read inside its "
                "horis:takes [ … ] only, so as written it takes none",
                "put them inside horis:takes: horis:takes [ horis:arg [ horis:name "
                '"patient" ; horis:type :Patient ] ; horis:arg [ … ] ]',
                at=(tool, HORIS.arg, loose[0]),
            )
            nodes += [a for a in loose if not isinstance(a, Literal)]  # a name alone is none
        return nodes, placed, known

    def check_arg_names(self, tool: Node, named: dict[str, list[Node]]) -> bool:
        """Two arguments of one name: a step binds, a precondition reads and the binding is
        sent one value under a name, so which declaration (and type) held would be chance.
        Reported at each later ``horis:arg [``, saying where the first one is."""
        ok = True
        for name, nodes in sorted(named.items()):
            if len(nodes) < 2:
                continue
            ok = False
            placed = sorted(
                ((self.src.locate(a), a) for a in nodes),
                key=lambda x: (x[0][0] or "", x[0][1] or 0, str(x[1])),
            )
            (file, line), _ = placed[0]
            for (later, _), a in placed[1:]:
                first = (
                    "another horis:arg"
                    if line is None
                    else f"line {line}"
                    if later == file
                    else f"{file}:{line}"
                )
                self.error(
                    tool,
                    f'argument "{name}" is declared again (first at {first}): a step binds '
                    "it and the binding receives it as one value, so only one of the two "
                    "could ever hold",
                    f'remove this horis:arg [ horis:name "{name}" … ], or give it a name of '
                    "its own (each argument is declared once, with one horis:type)",
                    at=a,
                )
        return ok

    def check_unsent(
        self,
        tool: Node,
        args: list[Arg],
        nodes: dict[str, Node],
        effect: Effect | None,
        requires: Precondition | None,
    ) -> None:
        """An argument the binding never sees is there for the runtime: the effect's subject
        or a variable of the tool's horis:requires. Otherwise nothing uses it."""
        used = set(requires.variables if requires else ()) | ({effect.subject} if effect else set())
        for arg in args:
            if not arg.sent and arg.name not in used:
                self.warn(
                    tool,
                    f'argument "{arg.name}" is horis:sent false and neither the '
                    "effect's subject nor a variable of the tool's horis:requires: "
                    "nothing uses it",
                    "drop horis:sent false to pass it to the binding, or remove the argument",
                    at=nodes[arg.name],
                )

    def short(self, s: Node) -> str:
        """``s``'s local name: past the first namespace the merged graph binds that it goes
        beyond, else past its last ``#`` or ``/``."""
        text = str(s)
        for _, ns in self.merged_index.matches(text):
            if len(text) > len(ns):
                return text[len(ns) :]
        return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]

    def effect(self, tool: Node, args: list[Arg], known: bool = True) -> Effect | bool | None:
        """The tool's effect, None when it declares none, False when it is wrong. ``known``
        false: the tool's arguments could not be read (:meth:`argument_nodes`), so a subject
        not among ``args`` is no mistake of the effect's."""
        e = self.one(tool, HORIS.effect)
        if e is None:
            return None
        subject = self.text(e, HORIS.subject)
        class_args = sorted({a.name for a in args if a.is_class})  # one declared twice is said
        if subject is None:
            if len(class_args) == 1:
                subject = class_args[0]
            elif not class_args:
                self.error(
                    tool,
                    "the effect has no horis:subject and no class-typed argument to hang it on",
                    "add an argument typed with an ontology class and "
                    'write horis:subject "<that argument\'s name>" in the effect',
                    at=e,
                )
                return False
            else:
                self.error(
                    tool,
                    "the effect's subject is ambiguous: arguments "
                    + ", ".join(f'"{a}"' for a in class_args)
                    + " are class-typed",
                    f'write horis:subject "{class_args[0]}" (or '
                    + " or ".join(f'"{a}"' for a in class_args[1:])
                    + ") in the horis:effect [ … ]",
                    at=e,
                )
                return False
        elif isinstance(named := self.g.value(e, HORIS.subject), URIRef):
            meant = next((a for a in class_args if a.lower() == self.short(named).lower()), None)
            self.error(
                tool,
                f"horis:subject {self.n(named)} is a node; horis:subject names one of the "
                "tool's arguments, by its name in quotes, and the effect lands on the node "
                "given for it",
                f'write horis:subject "{meant}"'
                if meant is not None
                else "name one of the tool's class-typed arguments in quotes"
                + (": " + ", ".join(f'"{a}"' for a in class_args) if class_args else ""),
                at=(e, HORIS.subject, named),
            )
            return False
        elif subject not in {a.name for a in args}:
            if not known:
                return False
            names = ", ".join(sorted(f'"{a.name}"' for a in args)) or "none"
            self.error(
                tool,
                f'horis:subject "{subject}" is not an argument of the tool (arguments: {names})',
                "name one of the tool's class-typed arguments"
                + (": " + ", ".join(f'"{a}"' for a in class_args) if class_args else ""),
                at=(e, HORIS.subject, None),
            )
            return False
        elif subject not in class_args:
            self.error(
                tool,
                f'horis:subject "{subject}" is a literal argument; effects hang on nodes',
                "type that argument with an ontology class",
                at=(e, HORIS.subject, None),
            )
            return False
        asserts: list[Assertion] = []
        nodes: list[Node] = []  # each assertion's horis:asserts node, where it is reported
        ok = True
        for a in self.g.objects(e, HORIS.asserts):
            prop = self.one(a, HORIS.property)
            value = self.one(a, HORIS.value)
            typ = self.one(a, HORIS.type)
            if isinstance(prop, Literal):  # it has one, in quotes: "no property" misled
                self.quoted(tool, HORIS.property, prop, self.properties(), holder=a)
                ok = False
                continue
            if not isinstance(prop, URIRef):
                self.error(
                    tool,
                    "a horis:asserts has no horis:property",
                    "write horis:asserts [ horis:property :someProperty ; horis:type xsd:string ]",
                    at=a,
                )
                ok = False
                continue
            if value is None and isinstance(typ, Literal):
                self.quoted(
                    tool,
                    HORIS.type,
                    typ,
                    self.types(),
                    holder=a,
                    what=f"asserted property {self.n(prop)}",
                )
                ok = False
                continue
            if value is None and not isinstance(typ, URIRef):
                self.error(
                    tool,
                    f"asserted property {self.n(prop)} has neither horis:value nor horis:type",
                    "write horis:type xsd:string (the tool returns it) "
                    "or horis:value horis:now (the runtime writes it)",
                    at=a,
                )
                ok = False
                continue
            if value is not None and typ is not None:
                self.error(
                    tool,
                    f"asserted property {self.n(prop)} has both horis:value and horis:type",
                    "keep one: horis:value fixes the value, horis:type lets the tool return it",
                    at=a,
                )
                ok = False
                continue
            written = self.text(a, HORIS.key)
            key = written or self.short(prop)
            if _JSON_PATH.search(written or ""):
                # read as one field's name: a nested value never lands, after the tool acted
                self.warn(
                    tool,
                    f'horis:key "{key}" reads like a JSON path, but horis:key names one field '
                    "of the answer's top-level object: a value nested under another field is "
                    "never read, so the gate refuses every answer after the tool has acted",
                    "have the tool (or a wrapper) return the value as a top-level field and "
                    + (
                        f'name that field: horis:key "{last}"'
                        if (last := _JSON_PATH.split(key)[-1]) and not last.isdigit()
                        else "name that field in horis:key"
                    ),
                    at=(a, HORIS.key, self.one(a, HORIS.key)),
                )
            from_text = self.flag(a, HORIS.fromText)
            if from_text and typ != XSD.string:
                self.error(
                    tool,
                    f"asserted property {self.n(prop)} is horis:fromText: the tool's "
                    "text lands as a string, so its horis:type must be xsd:string",
                    "write horis:type xsd:string",
                    at=a,
                )
                ok = False
                continue
            asserts.append(
                Assertion(
                    property=prop,
                    key=key,
                    value=value,
                    type=typ if isinstance(typ, URIRef) else None,
                    is_class=isinstance(typ, URIRef) and not self.datatype(typ),
                    optional=self.flag(a, HORIS.optional),
                    many=self.flag(a, HORIS.many),
                    from_text=from_text,
                )
            )
            nodes.append(a)
        ok = self.check_result_keys(tool, asserts, nodes) and ok
        if sum(a.from_text for a in asserts) > 1:
            self.error(
                tool,
                "more than one horis:asserts is horis:fromText: the tool's text "
                "answer is one string, so it lands as one property",
                "keep horis:fromText true on one of them",
                at=e,
            )
            ok = False
        shapes = tuple(x for x in self.g.objects(e, HORIS.shape) if isinstance(x, URIRef))
        if not ok:
            return False
        for c in contradictions(
            self.g,
            self.n(tool),
            list(zip(nodes, asserts, strict=True)),
            self.defs.domain_targets,  # after the subclass closure
            next(x.type for x in args if x.name == subject),
            shapes,
            self.n,
            self.unknown_datatype,
            self.unheld_datatype,
            lambda pshape: (wrong := self.wrong_listed(pshape)) is not None and wrong.every,
        ):
            (self.warn if c.some_pass else self.error)(
                tool, c.message, c.hint, at=c.at or c.assertion
            )
        on = next(x for x in args if x.name == subject)
        mismatch = subject_outside_domain(self.g, on, args, asserts, self.defs.subclasses, self.n)
        if mismatch is not None:
            self.warn(tool, mismatch.message, mismatch.hint, at=(e, HORIS.subject, None))
        return Effect(subject, tuple(asserts), shapes)

    def check_result_keys(self, tool: Node, asserts: list[Assertion], nodes: list[Node]) -> bool:
        """Two assertions of one effect answering to one field of the result (one's
        ``horis:key`` the other's, or two properties of one local name in two namespaces):
        the gate files the field under one of them, so the other is never written — the
        step completed without it, silently, and which one held was the graph's order."""
        if len({a.key for a in asserts}) == len(asserts):
            return True  # the common case, without locating anything
        ok = True
        first: dict[str, tuple[Assertion, Node]] = {}
        placed = sorted(
            zip(asserts, nodes, strict=True),
            key=lambda an: (self.src.locate(an[1])[1] or 0, str(an[0].property)),
        )
        for a, node in placed:
            if a.key not in first:
                first[a.key] = (a, node)
                continue
            other = first[a.key][0]
            ok = False
            explicit = self.one(node, HORIS.key) is not None
            if a.property == other.property:  # written twice: one of them is a slip
                self.error(
                    tool,
                    f"{self.n(a.property)} is asserted twice in one effect: the gate files "
                    f'the result\'s field "{a.key}" under one of the two, and the other (its '
                    "horis:type, horis:optional, horis:value) is never used",
                    f"delete one of the two horis:asserts of {self.n(a.property)}",
                    at=node,
                )
                continue
            self.error(
                tool,
                f"{self.n(a.property)} and {self.n(other.property)} both answer to the result's "
                f'field "{a.key}"'
                + ("" if explicit else f" ({self.n(a.property)} by its local name)")
                + ": the gate files the field under one of them, so the other is never "
                "written",
                f"give {self.n(a.property)} a horis:key of its own, the field the tool "
                "returns it under (one field, one property)",
                at=node,
            )
        return ok
