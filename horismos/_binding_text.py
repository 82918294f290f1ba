"""A binding's text (``python:``, ``http(s):``, ``cmd:``…) checked as text, nothing imported.

A binding that cannot name a function or a URL a request can be sent to is said at load,
with what to write, rather than failing at the step that calls it."""

from __future__ import annotations

import keyword
import re
from urllib.parse import urlsplit, urlunsplit

from ._near_names import slip_distance

__all__ = ["BINDING_SCHEMES", "ENV_NAME", "binding_meant", "binding_text_problem"]


BINDING_SCHEMES = ("python:", "mcp://", "http://", "https://", "cmd:")


def binding_text_problem(binding: str) -> tuple[str, str] | None:
    """What is wrong with a ``python:`` or ``http(s):`` binding's text, as (message, hint):
    a Python name that cannot be one, a URL no request can be sent to, a URL with ``{arg}``
    placeholders (:func:`_url_placeholders`)."""
    if binding.startswith("python:"):
        return _python_target_problem(binding[len("python:") :])
    if binding.startswith(("http://", "https://")):
        try:
            parts = urlsplit(binding)
            port = parts.port  # raises when it is no number in 0-65535
        except ValueError as e:
            return f"is no URL a request can be sent to ({e})", 'write "https://host[:port]/path"'
        if not parts.hostname or port == 0:
            return "is no URL a request can be sent to (no host)", 'write "https://host/path"'
        if (space := re.search(r"\s", binding)) is not None:
            # sent as it is, the request went to a URL with %20 (or worse) where it stood
            return (
                "is no URL a request can be sent to: it has white space in it "
                f"({binding[max(space.start() - 8, 0) : space.end() + 8]!r})",
                "remove the space, or write %20 where the path has one",
            )
        return _url_placeholders(binding)
    return None


def _python_target_problem(target: str) -> tuple[str, str] | None:
    """What is wrong with a ``python:`` binding's target, read as text and nothing imported:
    a registered name (any word), or a dotted module path and function, each part a Python
    name.
    ``python:mod.fn()`` and ``python:pkg.mod:fn`` validated, then failed in a run (without
    ``--tools`` they were never even looked up); the hint gives the target with the call's
    parentheses dropped or the colon made a dot, when that leaves a name."""
    if _dotted_name(target):
        return None
    usual = 'write "python:module.function" (or "python:name" of a --tools function)'
    mended = re.sub(r"\(.*\)\s*$", "", target.strip()).replace(":", ".")
    if "(" in target or ")" in target:
        why = "is a call, not a function's name: Horismos calls the function itself"
    elif ":" in target:
        why = "separates module and function with ':'; a python: binding uses dots throughout"
    elif not target.strip() or "" in target.split("."):
        return (
            "names no function: a name, or a dotted module path and function, is expected",
            usual,
        )
    elif "." not in target and not any(c.isspace() for c in target):
        return None  # a name registered with tools={…} may be any word: looked up, not imported
    else:
        why = "is no Python name: each dotted part must be an identifier"
    hint = f'write "python:{mended}"' if _dotted_name(mended) else usual
    return f"is malformed: {target!r} {why}", hint


def _dotted_name(text: str) -> bool:
    """``name`` or ``package.module.function``: each part a Python identifier."""
    return all(p.isidentifier() and not keyword.iskeyword(p) for p in text.split("."))


_URL_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _url_placeholders(url: str) -> tuple[str, str] | None:
    """A URL written with ``{arg}`` placeholders, as a ``cmd:`` binding's argv is: an HTTP
    binding fills in none, so every request went to ``/patients/%7Bpatient%7D/queue`` (a
    query's braces are sent as they are), with the arguments in the JSON body it always POSTs.
    The URL to write is the one without the path segments and query parameters that hold a
    placeholder."""
    found = _URL_PLACEHOLDER.findall(url)
    if not found:
        return None
    parts = urlsplit(url)
    sent = parts._replace(path=parts.path.replace("{", "%7B").replace("}", "%7D"))
    path = "/".join(s for s in parts.path.split("/") if not _URL_PLACEHOLDER.search(s))
    fixed = urlunsplit(
        (
            parts.scheme,
            parts.netloc,
            path or "/",
            "&".join(q for q in parts.query.split("&") if not _URL_PLACEHOLDER.search(q)),
            "",
        )
    )
    written = ", ".join(dict.fromkeys(found))
    return (
        f"has {written} in its URL, but an HTTP binding fills in no placeholders: every "
        f"request goes to {urlunsplit(sent)}, and the arguments "
        "are POSTed as a JSON object",
        f'write horis:binding "{fixed}" and read the arguments from the JSON body'
        if not _URL_PLACEHOLDER.search(parts.netloc)
        else "write the endpoint's own URL, and read the arguments from the JSON body",
    )


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What ``horis:fromEnv`` names: an environment variable, as a shell would write it."""


_HOST_PATH = re.compile(
    r"(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]+(?::\d+)?(?:/\S*)?|localhost:\d+(?:/\S*)?"
)
"""A URL written without its scheme: ``api.example.org/orders``, ``127.0.0.1:8080/x``."""


def binding_meant(binding: str) -> str | None:
    """The binding most likely meant by one of no known scheme: its scheme's ``//`` left out
    (``mcp:parts/order`` for ``mcp://parts/order``, ``http:host/x``), the scheme in
    capitals (``Python:``), or a URL without its scheme (``api.example.org/orders``, meant
    over HTTPS). None when it is like none of these."""
    scheme, colon, rest = binding.partition(":")
    lower = scheme.lower()
    if colon and lower == "mcp":  # SERVER/TOOL: a '#' or ':' between them was meant as '/'
        server, *tool = re.split(r"[/#:]", rest.lstrip("/"), maxsplit=1)
        return f"mcp://{server}/{tool[0]}" if tool and tool[0] else f"mcp://{server}"
    if colon and lower in ("http", "https"):
        return f"{lower}://{rest.lstrip('/')}"
    if colon and lower in ("python", "cmd"):
        return f"{lower}:{rest.lstrip('/')}"
    if _HOST_PATH.fullmatch(binding):
        return f"https://{binding}"
    slipped = _scheme_slip(lower) if colon else None
    if slipped is not None:  # "htp://host/x", "pyhton:mod.f": the scheme misspelt
        return binding_meant(f"{slipped}:{rest}")
    return None


def _scheme_slip(scheme: str) -> str | None:
    """The binding scheme ``scheme`` misspells: one slip from ``http``, ``https`` or
    ``python`` (``htp``, ``htps``, ``pyhton``), or ``mcp``'s or ``cmd``'s letters in another
    order (``mpc``); a scheme of three letters one letter off is another (``tcp``)."""
    for known in ("https", "http", "python"):
        if slip_distance(scheme, known) == 1:
            return known
    for known in ("mcp", "cmd"):
        if scheme != known and sorted(scheme) == sorted(known):
            return known
    return None
