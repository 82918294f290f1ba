"""Keyed traces: a signature on every event, so a trace cannot be forged without the key.

The hash chain alone (:mod:`horismos._trace`) catches an edited, removed or reordered event,
and data after the ``end`` event, but anyone can recompute every hash after an edit: it is
tamper-evident against accidents and careless edits, not against a forger. A key closes that:

- ``HORISMOS_TRACE_HMAC_KEY`` (a secret string): each event carries ``"sig":
  "hmac-sha256:…"`` over its hash. Only holders of the secret can write a trace that verifies;
  verifying needs the same secret, so every verifier could also forge.
- ``HORISMOS_TRACE_SIGNING_KEY`` (the path of an Ed25519 private key, PEM): each event carries
  ``"sig": "ed25519:…"``. Only the private key's holder can write a trace that verifies; anyone
  with the public key (``HORISMOS_TRACE_VERIFY_KEY``, a PEM path) can check it and cannot forge.

When a verifying key is set, reading a trace refuses any event without a valid signature of
that kind: an unsigned or differently keyed trace is not accepted. Without one, signatures are
not checked (the chain still is). A trace cut short before its ``end`` event still reads as a
run that stopped: a key proves who wrote each event, not that nothing came after.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import TraceTampered, UsageError

__all__ = [
    "HMAC_ENV",
    "SIGNING_ENV",
    "VERIFY_ENV",
    "Signer",
    "Verifier",
    "signer_from_env",
    "unchecked_signatures",
    "verifier_from_env",
]

HMAC_ENV = "HORISMOS_TRACE_HMAC_KEY"
SIGNING_ENV = "HORISMOS_TRACE_SIGNING_KEY"
VERIFY_ENV = "HORISMOS_TRACE_VERIFY_KEY"


@dataclass(frozen=True)
class Signer:
    """Signs an event's hash: ``hmac-sha256:HEX`` or ``ed25519:BASE64``."""

    kind: str
    key: Any

    def sign(self, digest: str) -> str:
        if self.kind == "hmac-sha256":
            return "hmac-sha256:" + hmac.new(self.key, digest.encode(), hashlib.sha256).hexdigest()
        return "ed25519:" + base64.b64encode(self.key.sign(digest.encode())).decode()


@dataclass(frozen=True)
class Verifier:
    """Checks each event's ``sig`` against its hash; refuses a missing or wrong one."""

    kind: str
    key: Any

    def verify(self, digest: str, sig: Any, where: str, line: int) -> None:
        env = HMAC_ENV if self.kind == "hmac-sha256" else VERIFY_ENV
        if not isinstance(sig, str) or not sig.startswith(self.kind + ":"):
            raise TraceTampered(
                f"{where}:{line}: this event is not signed with an {self.kind} key, and the "
                f"key in the environment ({env} is set) requires every event to be signed: "
                "the trace was written without that key, or edited by someone without it — "
                f"read it with {env} unset only if you trust where it came from",
                line=line,
            )
        body = sig[len(self.kind) + 1 :]
        if self.kind == "hmac-sha256":
            want = hmac.new(self.key, digest.encode(), hashlib.sha256).hexdigest()
            ok = hmac.compare_digest(want, body)
        else:
            from cryptography.exceptions import InvalidSignature

            try:
                self.key.verify(base64.b64decode(body, validate=True), digest.encode())
                ok = True
            except (InvalidSignature, ValueError):
                ok = False
        if not ok:
            raise TraceTampered(
                f"{where}:{line}: this event's signature does not verify: it was "
                "written with another key, or edited and re-hashed",
                line=line,
            )


_HMAC_LEAST = 16
"""Bytes an HMAC secret must have: a shorter one is found by trying (an HMAC key of a few
characters falls to a search of all of them), and then anyone can sign a forged trace."""


def _hmac_secret() -> bytes | None:
    """The HMAC secret from the environment, None when the variable is not set. Set but
    empty (a secret a deployment failed to fill in) it was taken as unset, and traces were
    written unsigned without a word; set and short, it was taken."""
    secret = os.environ.get(HMAC_ENV)
    if secret is None:
        return None
    key = secret.encode()
    if len(key) < _HMAC_LEAST:
        said = "empty" if not key else f"{len(key)} bytes"
        raise UsageError(
            f"{HMAC_ENV} is set but {said}: give a secret of at least {_HMAC_LEAST} bytes "
            f"(e.g. python -c 'import secrets; print(secrets.token_hex(32))'), or unset it "
            "to write traces unsigned"
        )
    return key


def signer_from_env() -> Signer | None:
    """The key traces are signed with, from the environment; None when none is set."""
    secret = _hmac_secret()
    if secret is not None:
        return Signer("hmac-sha256", secret)
    path = os.environ.get(SIGNING_ENV)
    if path:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            key = load_pem_private_key(_pem(path, SIGNING_ENV), password=None)
        except (ValueError, TypeError):
            key = None
        if not isinstance(key, Ed25519PrivateKey):
            raise UsageError(f"{SIGNING_ENV}={path}: not an unencrypted Ed25519 private key (PEM)")
        return Signer("ed25519", key)
    return None


def verifier_from_env() -> Verifier | None:
    """The key traces are checked with: the HMAC secret, the Ed25519 public key, or the
    public half of the signing key; None when none is set."""
    secret = _hmac_secret()
    if secret is not None:
        return Verifier("hmac-sha256", secret)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    path = os.environ.get(VERIFY_ENV)
    if path:
        try:
            public = load_pem_public_key(_pem(path, VERIFY_ENV))
        except ValueError:
            public = None
        if not isinstance(public, Ed25519PublicKey):
            raise UsageError(f"{VERIFY_ENV}={path}: not an Ed25519 public key (PEM)")
        return Verifier("ed25519", public)
    signer = signer_from_env()
    return Verifier("ed25519", signer.key.public_key()) if signer is not None else None


def _pem(path: str, var: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"{var}={path}: cannot read the key ({e.strerror})") from None


def unchecked_signatures(header: Mapping[str, Any]) -> str | None:
    """What to tell whoever reads a signed trace with no verifying key set: its signatures
    were not checked. ``replay`` said ``same`` and the viewer "signed" of such a trace, and a
    reviewer took a trace anyone could have re-hashed for one whose writer was proven."""
    sig = header.get("sig")
    if not isinstance(sig, str) or verifier_from_env() is not None:
        return None
    kind = sig.split(":", 1)[0]
    set_ = HMAC_ENV if kind == "hmac-sha256" else VERIFY_ENV
    return (
        f"its events are signed ({kind}) and no key is set to verify them, so the signatures "
        f"were not checked, only the hash chain: set {set_} to check who wrote it"
    )
