"""One verifying TLS context a process, shared by every HTTPS client Horismos makes.

Why a module: building a context reads the CA bundle (~27 ms of CPU, a quarter of a second on a
busy host). An HTTP binding built one for each run's client, a ranking model's ask and a FHIR
commit once each, and each client chose its own trust: the FHIR client the system's store, the
others certifi's through httpx. Every client now verifies with httpx's context (certifi's CA
bundle, or the ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` the process is given), built once for each
value of those variables, so a server one client trusts every client trusts.
"""

from __future__ import annotations

import os
import ssl

__all__ = ["verifying_context"]

_CONTEXTS: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def verifying_context() -> ssl.SSLContext:
    """httpx's verifying context (``httpx.create_ssl_context()``), made at the first ask under
    the process's ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` and kept."""
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _CONTEXTS.get(key)
    if context is None:
        import httpx  # here, not on every command's import: only an HTTPS client asks

        context = _CONTEXTS[key] = httpx.create_ssl_context()
    return context
