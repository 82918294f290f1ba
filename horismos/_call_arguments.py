"""A call's arguments against its tool's input schema: the nodes they bind, or what to change.

The one check the guarded call (:mod:`._call`) and the served surface (:mod:`._serve`) both
make before anything else: an unknown field, a result field passed as input, a value of the
wrong JSON type, text that is not Unicode, a name that is no node of the argument's class.
Each problem says what the tool takes, clipped so a 5 MB value is not echoed whole.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from rdflib import RDFS, XSD, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.term import Node

from ._catalog import input_schema, ordered_args
from ._definitions_model import name_fix
from ._errors import AmbiguousName, NotAnIRI
from ._literals import INTEGER_TYPES, NUMBER_TYPES
from ._model import Arg, Tool
from ._world import holds_subject

if TYPE_CHECKING:
    from ._definitions import Definitions
    from ._world import World

__all__ = ["RESULT_FIELDS", "check_arguments"]

RESULT_FIELDS = (
    "status",
    "exit_status",
    "effects",
    "receipt",
    "content",
    "artifacts",
    "gate",
    "error",
)
"""Fields of a call's result; passed as input they are refused as such (unless declared)."""


def check_arguments(
    tool: Tool,
    defs: Definitions,
    args: Any,
    world: World | None = None,
) -> tuple[dict[str, Node], dict[str, Any], list[str]]:
    """The arguments as graph nodes, the normalized payload (class-typed ones as full IRIs),
    and what keeps them from fitting the input schema. Given ``world``, a CURIE whose prefix
    the files bind to several namespaces means the one IRI the world holds (as a focus does)."""
    exists = None if world is None else functools.partial(holds_subject, world)
    if not isinstance(args, Mapping):
        example = ", ".join(f'"{a.name}": …' for a in ordered_args(tool))
        if _object_text(args):  # a model's function call gives its arguments as JSON text
            return (
                {},
                {},
                [
                    "the arguments are JSON text, not an object: parse it first "
                    f"(json.loads), to an object such as {{{example}}}"
                ],
            )
        return {}, {}, [f"the arguments must be a JSON object, e.g. {{{example}}}"]
    schema = input_schema(tool, defs)
    props: dict[str, Any] = schema["properties"]
    takes = ", ".join(props) or "no arguments"
    problems: list[str] = []
    nodes: dict[str, Node] = {}
    payload: dict[str, Any] = {}
    unknown = False
    for key, value in args.items():
        arg = tool.arg(str(key))
        if arg is None:
            if key in RESULT_FIELDS:
                problems.append(
                    f'"{key}" is a result field (the call\'s result envelope '
                    "gives it back), not an argument"
                )
            else:
                problems.append(f'unknown argument "{key}"')
            unknown = True
            continue
        problem = _json_type_problem(props[arg.name], value) or _not_unicode(value)
        if problem is None:
            node = _node(arg, value, defs, exists)
            if not isinstance(node, Node):
                problem = node
            else:
                nodes[arg.name] = node
                payload[arg.name] = str(node) if isinstance(node, URIRef) else value
        if problem:
            problems.append(f'argument "{key}" {problem}')
    if unknown:
        problems.append(f"{tool.name} takes {takes}")
    for name in schema["required"]:
        if name not in args:
            problems.append(
                f'argument "{name}" is required: {props[name].get("description", "a value")}'
            )
    return nodes, payload, [_clipped(p) for p in problems]


_NAMED = 200
"""Characters of a name a refusal says how to write (``did you mean :patient42?``)."""

_SHOWN = 300
"""Characters a refusal shows of each end of a problem: enough for any value a person typed,
and the fix, which a problem says last."""


def _clipped(problem: str) -> str:
    """``problem`` with its middle cut when it is long: one echoing a value whole (a 5 MB
    string argument) was a 5 MB line of stderr, and twice that in ``--format json``. Its end
    is kept, since that is where a problem says what to do."""
    if len(problem) <= 3 * _SHOWN:
        return problem
    cut = len(problem) - 2 * _SHOWN
    return f"{problem[:_SHOWN]} … ({cut:,} characters cut) … {problem[-_SHOWN:]}"


def _not_unicode(value: Any) -> str | None:
    """What is wrong with a string that is not Unicode text: JSON's ``"\\ud800"`` escape reads
    as a lone surrogate, which no store, trace or terminal can write. Refused here, it was
    called with and committed, and then the receipt could not be printed (a traceback after a
    call that acted, inviting a second one)."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return (
            f"holds {value[e.start]!r}, half of a UTF-16 surrogate pair, which is no "
            "character; give valid Unicode text"
        )
    return None


def _json_type_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    want = schema.get("type")
    ok = {
        None: value is not None and not isinstance(value, dict | list),
        "string": isinstance(value, str),
        "integer": (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer()),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
    }[want]
    if ok:
        return None
    return (
        f"must be {schema.get('description', 'a literal')} (JSON {want or 'scalar'}); "
        f"got {_json_kind(value)}"
    )


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "an array"
    return f"{'string' if isinstance(value, str) else 'number'} {value!r}"


def _node(
    arg: Arg, value: Any, defs: Definitions, exists: Callable[[URIRef], bool] | None = None
) -> Node | str:
    """``value`` as the node the argument binds to, or what is wrong with it."""
    if arg.is_class:
        try:
            return defs.expand(value, exists)
        except (NotAnIRI, AmbiguousName) as e:
            return f"must name a node of class {defs.name(arg.type)}: {e}"
        except KeyError:
            said = (
                f"must name a node of class {defs.name(arg.type)}: {value!r} is neither an "
                "IRI nor a CURIE with a declared prefix"
            )
            # how to write it (an agent leaves out the ':' of ':patient42'), unless the value
            # is long enough to be clipped: then the reason is what its end must keep
            return f"{said} — {name_fix(defs, value)}" if len(value) <= _NAMED else said
    t = arg.type
    if t in (XSD.string, RDFS.Literal) and isinstance(value, str):
        return RdfLiteral(value)
    if t == RDFS.Literal:
        return RdfLiteral(value)
    if t in INTEGER_TYPES:
        lit = RdfLiteral(int(value), datatype=t)
    elif t == XSD.decimal:
        try:
            lit = RdfLiteral(Decimal(str(value)), datatype=t)
        except InvalidOperation:
            return f"is not a decimal number: {value!r}"
    elif t in NUMBER_TYPES:
        lit = RdfLiteral(float(value), datatype=t)
    elif t == XSD.boolean:
        lit = RdfLiteral(bool(value))
    else:
        lit = RdfLiteral(str(value), datatype=t)
    if getattr(lit, "ill_typed", False):
        return f"is not a valid {defs.name(t)}: {value!r}"
    return lit


def _object_text(args: Any) -> bool:
    """Whether ``args`` is text (or bytes) holding a JSON object: what an OpenAI or
    Anthropic function call hands over as its arguments, passed on unparsed."""
    if not isinstance(args, str | bytes):
        return False
    try:
        return isinstance(json.loads(args), dict)
    except ValueError:
        return False
