"""What a ``python:`` binding's function says in its source, read without running it: the
parameters it takes and the keys of the dicts it returns.

Why: the checks that hold a function to its tool's declaration ran only on a function
imported (``--tools FILE``). ``validate --allow-module ehr_client`` imports nothing (an allowed
module may act when imported), so it said "valid" of a function whose parameters did not fit
``horis:takes``, and ``run`` with the same flag refused at its start. And a function returning
``{"queue_ref": …}`` for an effect asserting ``:queueRef`` validated everywhere: every call
acted, then the gate rejected what it returned, nothing landed, and a tool that is not
idempotent was left in doubt. Both are written in the function's source, and read here from
its syntax tree, for an allowed module's function (:func:`~.python_source.allowed_binding`)
and a registered one alike (:func:`function_of`).

Only what the source says for certain is read: a function defined once, undecorated (a
decorator may change what it takes or returns); a ``return`` of a dict written out, every
key a string (``{"k": …}``, ``dict(k=…)``). Anything else is left to the run, as before.
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "FunctionNode",
    "Returned",
    "bound_names",
    "function_of",
    "not_dicts",
    "returned",
    "sole_def",
    "source_signature",
]

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_P = inspect.Parameter
_DEFAULT = object()
"""A parameter's default, as a signature built from source holds it: the value is not read."""


@dataclass(frozen=True)
class Returned:
    """One ``return`` of a dict written out: the keys it gives, and where it is; and the
    values written out as constants (a string or a number: ``"status": "denied"``), by key."""

    keys: tuple[str, ...]
    file: Path
    line: int
    constants: tuple[tuple[str, str | int | float], ...] = ()
    formats: tuple[tuple[str, str, str, str], ...] = ()
    """The values written out as text with fields, by key: the text fixed before the first
    field and after the last, and the value as it is shown (``f"DEP-{n:04d}"``: ``("DEP-",
    "", 'f"DEP-{…}"')``) — an f-string, a ``%`` format, a ``str.format`` or a ``+`` of text."""

    tagged: tuple[tuple[str, str], ...] = ()
    """The values written out as a language-tagged literal (``Literal("INT-1", lang="en")``),
    by key, with the tag: an ``rdf:langString``, which no other datatype's assertion takes."""

    def where(self) -> str:
        return f"{self.file.name}:{self.line}"


def sole_def(tree: ast.Module, name: str) -> FunctionNode | None:
    """The module's top-level ``def name``, when that is the only place the module binds
    ``name`` (:func:`bound_names`: a ``def`` under an ``if``, an import under a ``try``
    rebinds it), undecorated; None otherwise."""
    defs = [n for n in tree.body if isinstance(n, FunctionNode) and n.name == name]
    if len(defs) != 1 or sum(1 for n in bound_names(tree) if n == name) != 1:
        return None
    return None if defs[0].decorator_list else defs[0]


@lru_cache(maxsize=256)  # a run's start asks of every tool's function, on every run
def function_of(func: Callable[..., Any]) -> tuple[FunctionNode, Path, int] | None:
    """A registered function's own ``def``, its file and the line its source starts at; None
    for a callable with no Python source of its own (a builtin, a lambda, a class, one made
    by a decorator)."""
    if not inspect.isfunction(func) or func.__name__ == "<lambda>":
        return None
    try:
        file = inspect.getsourcefile(func)
        lines, first = inspect.getsourcelines(func)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    if file is None or not tree.body:
        return None
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.decorator_list:
        return None
    return node, Path(file), first


def source_signature(node: FunctionNode) -> inspect.Signature:
    """The parameters ``node`` takes, as :func:`inspect.signature` gives them of the function
    it defines (defaults known to be there, not their values)."""
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    has_default = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    params = [
        _P(
            arg.arg,
            _P.POSITIONAL_ONLY if i < len(a.posonlyargs) else _P.POSITIONAL_OR_KEYWORD,
            default=_DEFAULT if has_default[i] else _P.empty,
        )
        for i, arg in enumerate(positional)
    ]
    if a.vararg is not None:
        params.append(_P(a.vararg.arg, _P.VAR_POSITIONAL))
    params += [
        _P(arg.arg, _P.KEYWORD_ONLY, default=_P.empty if d is None else _DEFAULT)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    if a.kwarg is not None:
        params.append(_P(a.kwarg.arg, _P.VAR_KEYWORD))
    return inspect.Signature(params)


def returned(node: FunctionNode, file: Path, first: int = 1) -> list[Returned | None]:
    """Each ``return`` of ``node``'s own body (not of a function inside it): the keys of a
    dict written out, or None for anything else (a bare ``return`` too). ``first``: the file's
    line ``node`` is read from (1: parsed from the whole file)."""
    out: list[Returned | None] = []
    for r in _returns(node):
        keys = _dict_keys(r.value)
        line = first + r.lineno - 1
        out.append(
            None
            if keys is None
            else Returned(
                keys, file, line, _constants(r.value), _formats(r.value), _tagged(r.value)
            )
        )
    return out


def not_dicts(node: FunctionNode, file: Path, first: int = 1) -> list[tuple[str, Path, int]]:
    """What ``node`` returns that is certainly no dict, with where: ``None`` (a bare
    ``return``, ``return None``, or the end of a body that has no ``return`` and raises
    nothing), a list, tuple,
    set, string or number written out (``return [ref]``, ``return f"RN-{n}"``). Empty when
    it is a generator (its calls return an iterator) or when some ``return`` gives a dict or
    what cannot be told (a variable, a call): the function may return a dict then."""
    if any(isinstance(x, ast.Yield | ast.YieldFrom) for x in _own_nodes(node)):
        return []
    returns = list(_returns(node))
    if not returns:  # unless it only ever raises (a stand-in for a failing service)
        if any(isinstance(x, ast.Raise) for x in _own_nodes(node)):
            return []
        return [("None (it has no return)", file, first + node.lineno - 1)]
    found = []
    for r in returns:
        said = _not_a_dict(r.value)
        if said is None:
            return []
        found.append((said, file, first + r.lineno - 1))
    return found


def _not_a_dict(value: ast.expr | None) -> str | None:
    """What ``value``, a ``return``'s, is when it is certainly no dict; None otherwise."""
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return "None"
    if isinstance(value, ast.List | ast.ListComp):
        return "a list"
    if isinstance(value, ast.Tuple):
        return "a tuple"
    if isinstance(value, ast.Set | ast.SetComp):
        return "a set"
    if isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, str)
    ):
        return "a string"
    if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
        return "a number"
    return None


def _own_nodes(node: FunctionNode) -> Iterator[ast.AST]:
    """The nodes of ``node``'s own body (not of a function or class inside it)."""
    todo: list[ast.AST] = list(node.body)
    while todo:
        item = todo.pop()
        yield item
        if not isinstance(item, _OWN_SCOPES):
            todo.extend(ast.iter_child_nodes(item))


def _named(value: ast.expr | None) -> list[tuple[str, ast.expr]]:
    """The values of a dict written out (or of ``dict(key=…)``) with their keys."""
    if isinstance(value, ast.Dict):
        pairs = list(zip(value.keys, value.values, strict=True))
        return [
            (k.value, v)
            for k, v in pairs
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    if isinstance(value, ast.Call):
        return [(k.arg, k.value) for k in value.keywords if k.arg is not None]
    return []


def _formats(value: ast.expr | None) -> tuple[tuple[str, str, str, str], ...]:
    """The values of a dict written out that are text with a field — an f-string, a ``%``
    format of a string, a string's ``.format(…)``, a ``+`` of a string and anything — with
    their keys, the text each fixes before its first field and after its last, and how it is
    shown. Why the other forms: ``"PAYMENT-%06d" % n`` is the same refused reference as
    ``f"PAYMENT-{n:06d}"``, and the payout acted before the gate refused either."""
    found = []
    for k, v in _named(value):
        ends = _text_ends(v)
        if ends is not None and ends[3]:
            found.append((k, ends[0], ends[1], ends[2]))
    return tuple(found)


def _tagged(value: ast.expr | None) -> tuple[tuple[str, str], ...]:
    """The values of a dict written out as ``Literal(…, lang="en")`` (rdflib's, as
    ``Literal`` or ``rdflib.Literal``), with their keys and the tag written."""
    found = []
    for k, v in _named(value):
        if not isinstance(v, ast.Call):
            continue
        name = v.func.attr if isinstance(v.func, ast.Attribute) else getattr(v.func, "id", None)
        tag = next((w.value for w in v.keywords if w.arg == "lang"), None)
        if name == "Literal" and isinstance(tag, ast.Constant) and isinstance(tag.value, str):
            found.append((k, tag.value))
    return tuple(found)


_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[a-zA-Z%]")


def _printf_parts(text: str) -> list[str | None]:
    """``text`` as a ``%`` format splits it: plain text, and None for each conversion
    (``%%`` is plain ``%``)."""
    parts: list[str | None] = []
    at = 0
    for m in _PRINTF.finditer(text):
        parts.append(text[at : m.start()])
        parts.append("%" if m.group() == "%%" else None)
        at = m.end()
    parts.append(text[at:])
    return parts


def _text_ends(v: ast.expr) -> tuple[str, str, str, bool] | None:
    """``(text fixed before the first field, after the last, the value as shown, whether it
    has a field)`` for a value written as text (see :func:`_formats`); None for what is not
    certainly text."""
    if isinstance(v, ast.Constant) and isinstance(v.value, str):
        return v.value, v.value, repr(v.value).replace("'", '"'), False
    if isinstance(v, ast.JoinedStr):
        fixed: list[str | None] = [
            x.value if isinstance(x, ast.Constant) and isinstance(x.value, str) else None
            for x in v.values
        ]
        before, after, field = _fold(fixed)
        return before, after, f'f"{before}{{…}}{after}"' if field else f'f"{before}"', field
    if (
        isinstance(v, ast.BinOp)
        and isinstance(v.op, ast.Mod)
        and isinstance(v.left, ast.Constant)
        and isinstance(v.left.value, str)
    ):
        parts = _printf_parts(v.left.value)
        before, after, field = _fold(parts)
        return before, after, f'"{v.left.value}" % …', field
    if (
        isinstance(v, ast.Call)
        and isinstance(v.func, ast.Attribute)
        and v.func.attr == "format"
        and isinstance(v.func.value, ast.Constant)
        and isinstance(v.func.value.value, str)
    ):
        try:
            parsed = list(string.Formatter().parse(v.func.value.value))
        except ValueError:
            return None
        pieces: list[str | None] = []
        for text, name, _spec, _conv in parsed:
            pieces.append(text)
            if name is not None:
                pieces.append(None)
        before, after, field = _fold(pieces)
        return before, after, f'"{v.func.value.value}".format(…)', field
    if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
        left, right = _text_ends(v.left), _text_ends(v.right)
        if left is None and right is None:
            return None  # no text written on either side: it may be a sum of numbers
        chain: list[str | None] = []
        for side in (left, right):
            if side is None:
                chain.append(None)
            elif side[3]:
                chain += [side[0], None, side[1]]
            else:
                chain.append(side[0])
        before, after, field = _fold(chain)
        return before, after, f'"{before}" + … + "{after}"' if after else f'"{before}" + …', field
    return None


def _fold(parts: list[str | None]) -> tuple[str, str, bool]:
    """The text before the first field (None) of ``parts`` and after its last, and whether
    there is a field at all."""
    if None not in parts:
        text = "".join(p for p in parts if p is not None)
        return text, text, False
    first = parts.index(None)
    last = len(parts) - 1 - parts[::-1].index(None)
    return (
        "".join(p for p in parts[:first] if p is not None),
        "".join(p for p in parts[last + 1 :] if p is not None),
        True,
    )


def _constants(value: ast.expr | None) -> tuple[tuple[str, str | int | float], ...]:
    """The values of a dict written out that are constants, a string or a number (not a
    boolean: its text is Python's, not the value that lands), with their keys."""
    found = ((k, _constant(v)) for k, v in _named(value))
    return tuple((k, v) for k, v in found if v is not None)


def _constant(v: ast.expr) -> str | int | float | None:
    """A string or a number written out (``-5`` too: a minus before a number), else None."""
    sign = 1
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub | ast.UAdd):
        sign, v = (-1 if isinstance(v.op, ast.USub) else 1), v.operand
        if not isinstance(v, ast.Constant) or isinstance(v.value, str):
            return None
    if not isinstance(v, ast.Constant) or isinstance(v.value, bool):
        return None
    if isinstance(v.value, str):
        return v.value
    return sign * v.value if isinstance(v.value, int | float) else None


_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _returns(node: FunctionNode) -> Iterator[ast.Return]:
    """The function's own ``return`` statements (not those of a function inside it)."""
    return (item for item in _own_nodes(node) if isinstance(item, ast.Return))


def _dict_keys(value: ast.expr | None) -> tuple[str, ...] | None:
    """The keys of a dict written out, every one a string; None for any other value."""
    if isinstance(value, ast.Dict):
        keys = [
            k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
        # else a **spread (None) or a key computed
        return tuple(keys) if len(keys) == len(value.keys) else None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and not value.args
        and all(k.arg is not None for k in value.keywords)
    ):
        return tuple(k.arg for k in value.keywords if k.arg is not None)
    return None


def bound_names(tree: ast.AST) -> Iterator[str]:
    """Every name the module binds anywhere — defined, assigned (a walrus, a ``match``
    capture, a loop's or ``with``'s target too), imported — at its top level or not: more
    than the module's own names, never fewer, so that a name missed here never says that a
    module that has it lacks it (one it lacks may pass, and the run then says so)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield alias.asname or alias.name.split(".")[0]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name is not None:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            yield node.rest
