"""Secrets in URLs stay out of what Horismos prints and stores.

A URL may carry credentials: user info (``https://user:pw@host/``) or a query value named like
a secret (``?token=…``, ``?api_key=…``). Wherever a URL reaches an error message, a trace, the
catalog or the world, it is written through :func:`redact_url` (or a whole message through
:func:`redact_text`): the credential is replaced by ``***``, the rest kept so the reader still
sees which endpoint it was. :func:`url_credentials` names what a binding URL carries, so
``validate`` and the start of a run can refuse it: credentials belong in the environment
(``horis:header [ horis:name "Authorization" ; horis:fromEnv "API_TOKEN" ]``).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["MASK", "redact_text", "redact_url", "secret_name", "url_credentials"]

MASK = "***"
_SECRET_PARTS = (
    "token",
    "secret",
    "passw",
    "pwd",
    "apikey",
    "api_key",
    "api-key",
    "auth",
    "credential",
    "session",
    "signature",
    "private",
)
_SECRET_NAMES = {"key", "sig", "pass"}
_URL = re.compile(r"""\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>`]+""")


def secret_name(name: str) -> bool:
    """Whether a query parameter (or header) named ``name`` likely carries a credential."""
    low = name.lower()
    return low in _SECRET_NAMES or any(part in low for part in _SECRET_PARTS)


def url_credentials(url: str) -> list[str]:
    """What in ``url`` is a credential: ``user info``, ``query value "token"``, …"""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = ["user info"] if "@" in parts.netloc else []
    found += [
        f'query value "{k}"'
        for k, _ in parse_qsl(parts.query, keep_blank_values=True)
        if secret_name(k)
    ]
    return found


def redact_url(url: str) -> str:
    """``url`` with its user info and secret-looking query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        query = "&".join(_redact_pair(pair) for pair in query.split("&"))
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _redact_pair(pair: str) -> str:
    name, eq, _ = pair.partition("=")
    return f"{name}={MASK}" if eq and secret_name(name.replace("+", " ")) else pair


def redact_text(text: str) -> str:
    """Every URL in ``text`` through :func:`redact_url`."""
    return _URL.sub(lambda m: redact_url(m.group(0)), text) if "://" in text else text
