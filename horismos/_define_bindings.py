"""Bindings, from Turtle to frozen models: MCP servers and command bindings.

What a tool's binding names (a server to start or reach, a command to run, the environment
and headers it is given) is checked here, once, so a call never meets a binding it cannot
use."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from rdflib import RDF, BNode, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._argv_slips import argument_slips, command_slip
from ._binding_text import ENV_NAME
from ._builder_base import BuilderBase
from ._model import Arg, Command, Header, McpServer
from ._vocab import HORIS

__all__ = ["BindingBuilding"]


class BindingBuilding(BuilderBase):
    """Building what tools are bound through: MCP servers, command bindings, their
    environment and headers."""

    def mcp_server(self, s: Node) -> None:
        name = str(s).rsplit("#", 1)[-1].rsplit("/", 1)[-1]
        args_node = self.one(s, HORIS.args)
        args: tuple[str, ...] = ()
        if args_node is not None:
            args = (
                tuple(str(a) for a in Collection(self.g, args_node))
                if isinstance(args_node, BNode)
                else (str(args_node),)
            )
        self.check_binding_name(s, name, self.defs.mcp_servers, "mcp://{}/TOOL")
        env = self.environment(
            s, 'write horis:env [ horis:name "TOKEN" ; horis:fromEnv "EHR_TOKEN" ]'
        )
        command = self.one(s, HORIS.command)
        if command is not None and (slip := command_slip(str(command), bool(args))):
            self.warn(s, slip.message, slip.hint, at=(s, HORIS.command, command))
        for slip in argument_slips(args, "horis:args"):
            self.warn(s, slip.message, slip.hint, at=(s, HORIS.args, args_node))
        headers = self.headers(s)
        if headers and command is not None:
            self.warn(
                s,
                "horis:header on an MCP server started with horis:command: headers go with "
                "HTTP requests, and this server is spoken to over its standard input",
                'give the program what it needs with horis:env [ horis:name "TOKEN" ; '
                'horis:fromEnv "API_TOKEN" ]',
                at=(s, HORIS.header, None),
            )
        self.defs.mcp_servers[name] = McpServer(
            URIRef(str(s)),
            name,
            self.text(s, HORIS.command),
            args,
            tuple(env),
            self.text(s, HORIS.url),
            headers,
        )

    def check_binding_name(self, s: Node, name: str, taken: Mapping[str, Any], form: str) -> None:
        """A binding names an MCP server or a command by its local name alone, so two of one
        local name in two namespaces (``:ward``, ``o:ward``) are one name: ``mcp://ward/…``
        reached whichever was read last, silently."""
        other = taken.get(name)
        if other is not None and other.iri != URIRef(str(s)):
            self.error(
                s,
                f"{self.n(s)} and {self.n(other.iri)} are both named {name!r}, the name "
                f"{form.format(name)} bindings reach them by, so a binding would reach "
                "one of them and never the other",
                f"rename one of them (its local name is what {form.format('NAME')} names)",
            )

    def environment(self, s: Node, example: str) -> list[tuple[str, str]]:
        """The ``horis:env`` entries of an MCP server or command binding, as ``(name,
        value)``, a ``horis:fromEnv`` one as ``${VAR}`` (read when the program starts).

        Besides a missing name or value, three slips are refused here, each of which ran:
        ``horis:fromEnv "$TOKEN"`` (or ``"${TOKEN}"``) named a variable no environment has
        (a command refused every call, without a line; an MCP server was given the text
        ``${…}`` itself, silently); ``horis:value`` and ``horis:fromEnv`` both written (only
        the variable was read, the value dropped without a word); and a name no environment
        can hold (``"LANG="``: every call failed with Python's "illegal environment variable
        name")."""
        env: list[tuple[str, str]] = []
        for e in self.g.objects(s, HORIS.env):
            key = self.text(e, HORIS.name) or self.text(e, HORIS.key)
            var = self.text(e, HORIS.fromEnv)
            fixed = self.text(e, HORIS.value)
            value = fixed if var is None else "${" + var + "}"
            if key is None or value is None:
                self.error(
                    s,
                    "a horis:env needs horis:name and horis:value or horis:fromEnv",
                    example,
                    at=e,
                )
                continue
            if var is not None and fixed is not None:
                self.error(
                    s,
                    f"horis:env {key!r} gives both horis:value and horis:fromEnv: only the "
                    f'variable {var} would be read, and the value "{fixed}" dropped',
                    f'keep one: horis:value "{fixed}" (fixed) or horis:fromEnv "{var}" (read '
                    "from Horismos's environment when the program starts)",
                    at=e,
                )
                continue
            if var is not None and not ENV_NAME.fullmatch(var):
                bare = var.strip().lstrip("$").strip("{}").strip()
                self.error(
                    s,
                    f'horis:fromEnv "{var}" of horis:env {key!r} is not the name of an '
                    "environment variable, so it is never found"
                    + (" (the $ of a shell is not part of the name)" if "$" in var else ""),
                    f'write the variable\'s name alone: horis:fromEnv "{bare}"'
                    if ENV_NAME.fullmatch(bare)
                    else 'write the variable\'s name, e.g. horis:fromEnv "API_TOKEN"',
                    at=(e, HORIS.fromEnv, self.one(e, HORIS.fromEnv)),
                )
                continue
            if not key or "=" in key or "\0" in key or key != key.strip():
                bare = key.strip().rstrip("=").strip()
                self.error(
                    s,
                    f"horis:name {key!r} of a horis:env is not a name an environment variable "
                    "can have (no '=', no surrounding space), so the program could never "
                    "be started with it",
                    f'write horis:name "{bare}"'
                    if bare and "=" not in bare
                    else 'write horis:name "LANG"',
                    at=(e, HORIS.name, self.one(e, HORIS.name)),
                )
                continue
            env.append((key, value))
        return env

    def command(self, s: Node) -> None:
        """A ``horis:CommandBinding``; the shapes have said what is missing or mistyped."""
        from ._bindings.command import stray_braces, template_problems

        name = str(s).rsplit("#", 1)[-1].rsplit("/", 1)[-1]
        argv_node = self.one(s, HORIS.argv)
        argv = (
            tuple(str(a) for a in Collection(self.g, argv_node))
            if isinstance(argv_node, BNode)
            else ()
        )
        root = self.text(s, HORIS.root)
        self.check_binding_name(s, name, self.defs.commands, "cmd:{}")
        if not argv or root is None:
            return  # the shapes report it
        workdir = self.text(s, HORIS.workdir) or ""
        env = self.environment(s, 'write horis:env [ horis:name "LANG" ; horis:value "C.UTF-8" ]')
        for member in stray_braces(argv):
            self.warn(
                s,
                f"horis:argv member {member!r} has a brace that opens or closes no "
                "placeholder, so the program is given it as written",
                "write a placeholder as {name}, the argument's name between braces, no space "
                "(leave it if the program wants the braces)",
                at=(s, HORIS.argv, argv_node),
            )
        for slip in argument_slips(argv[1:], "horis:argv", placeholders=True):
            self.warn(s, slip.message, slip.hint, at=(s, HORIS.argv, argv_node))
        for problem in template_problems(argv, workdir):
            self.error(
                s,
                problem[0],
                problem[1],
                at=(s, HORIS.argv, argv_node)
                if "argv" in problem[0]
                else (s, HORIS.workdir, self.one(s, HORIS.workdir)),
            )
        sizes = {}
        for prop, default in (
            (HORIS.previewBytes, 4096),
            (HORIS.retainBytes, 1 << 20),
            (HORIS.quotaBytes, 64 << 20),
            (HORIS.minFreeBytes, 100 << 20),
        ):
            node = self.one(s, prop)
            sizes[prop] = int(str(node)) if node is not None and str(node).isdigit() else default
        if sizes[HORIS.quotaBytes] < sizes[HORIS.retainBytes]:
            self.error(
                s,
                f"horis:quotaBytes {sizes[HORIS.quotaBytes]} is below horis:retainBytes "
                f"{sizes[HORIS.retainBytes]}: the command would be killed before its "
                "output could fill what is kept",
                "raise horis:quotaBytes above horis:retainBytes (the quota is the higher limit)",
            )
        self.defs.commands[name] = Command(
            URIRef(str(s)),
            name,
            argv,
            root,
            workdir,
            tuple(env),
            preview_bytes=sizes[HORIS.previewBytes],
            retain_bytes=sizes[HORIS.retainBytes],
            quota_bytes=sizes[HORIS.quotaBytes],
            min_free_bytes=sizes[HORIS.minFreeBytes],
            capture_dir=self.text(s, HORIS.captureDir),
        )

    def check_command(self, s: Node, binding: str, args: list[Arg], at: Any) -> bool:
        """``cmd:NAME`` names a declared command whose placeholders are the tool's sent
        arguments."""
        from ._bindings.command import placeholders

        name = binding[len("cmd:") :]
        command = self.defs.commands.get(name)
        if command is None:
            declared = (
                c
                for c in self.g.subjects(RDF.type, HORIS.CommandBinding)
                if str(c).rsplit("#", 1)[-1].rsplit("/", 1)[-1] == name
            )
            if next(declared, None) is not None:
                return False  # declared, and its own errors say what is wrong with it
            known = ", ".join(sorted(self.defs.commands)) or "none is declared"
            near = difflib.get_close_matches(name, list(self.defs.commands), n=1)
            self.error(
                s,
                f'binding "{binding}" names no horis:CommandBinding {name!r} (declared: {known})',
                f'did you mean "cmd:{near[0]}"?'
                if near
                else f"declare :{name} a horis:CommandBinding ; horis:argv ( … ) ; "
                'horis:root "…" .',
                at=at,
            )
            return False
        sent = {a.name for a in args if a.sent}
        used = placeholders(command.argv, command.workdir)
        unknown = sorted(used - sent)
        if unknown:
            # what to write differs by why each is unknown: declared but not sent, misspelt,
            # or not declared at all ("declare it" was said of a horis:sent false argument)
            unsent = [u for u in unknown if any(a.name == u for a in args)]
            respelt = {
                u: meant[0]
                for u in unknown
                if u not in unsent and (meant := difflib.get_close_matches(u, sorted(sent), n=1))
            }
            fixes = [
                f'drop horis:sent false from "{u}" (a placeholder sends it to the program)'
                for u in unsent
            ] + [f"write {{{to}}} for {{{u}}}" for u, to in respelt.items()]
            rest = [u for u in unknown if u not in unsent and u not in respelt]
            if rest:
                fixes.append(
                    f"declare {', '.join(repr(u) for u in rest)} in horis:takes, or take the "
                    "placeholder out of horis:argv / horis:workdir"
                )
            self.error(
                s,
                f'command {name!r} of binding "{binding}" uses '
                f"{', '.join('{' + u + '}' for u in unknown)}, which "
                f"{'is' if len(unknown) == 1 else 'are'} not a sent argument of the "
                f"tool (sent: {', '.join(sorted(sent)) or 'none'})",
                "; ".join(fixes),
                at=at,
            )
            return False
        return True

    def headers(self, tool: Node) -> tuple[Header, ...]:
        """Request headers, their values only ever from the environment: never secrets in Turtle."""
        out = []
        for h in self.g.objects(tool, HORIS.header):
            name = self.text(h, HORIS.name) or self.text(h, HORIS.key)
            var = self.text(h, HORIS.fromEnv)
            if name is None or var is None:
                self.error(
                    tool,
                    "a horis:header needs horis:name and horis:fromEnv (a value "
                    "written in the Turtle would put a secret in the file)",
                    'write horis:header [ horis:name "Authorization" ; horis:fromEnv "API_TOKEN" ]',
                    at=h,
                )
                continue
            out.append(Header(name, var))
        return tuple(out)
