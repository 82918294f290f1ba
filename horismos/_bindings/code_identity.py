"""What code a ``python:`` binding runs, named so an approval can be held to it.

An approval of a call is a person's yes to that payload sent by *that* code: the run that
asked had a dry-run ``charge`` registered, and a ``resume --tools`` pointing at another
``tools.py`` whose ``charge`` moves money ran it under the same approval, for the binding's
name and definition were all the approval said. The definition does not name the code (a
``python:charge`` binding resolves to whatever the command line registers), so the code is
named here, once, as the binding is loaded: its module and qualified name, and a SHA-256 of
its code object (bytecode, constants, names, defaults; not line numbers or the file's path,
which move without the code changing) and of its module's source file when it has one (a
helper the function calls, edited in the same file, is other code too). Cheap and honest
enough: code it imports from elsewhere, or state an object carries, is not covered.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["code_identity", "code_said"]


def code_identity(func: Callable[..., Any]) -> str:
    """``MODULE.QUALNAME sha256:HEX``: the code ``func`` runs (see the module's docstring);
    the same text in every process that loads the same code."""
    target = _underlying(func)
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    digest = hashlib.sha256(f"{module}.{qualname}\n".encode())
    code = getattr(target, "__code__", None)
    if isinstance(code, types.CodeType):
        _feed(digest, code)
        digest.update(_constant(getattr(target, "__defaults__", None)).encode())
        digest.update(_constant(getattr(target, "__kwdefaults__", None)).encode())
        source = _source(code)
        if source is not None:
            digest.update(b"\nsource\n" + source)
    return f"{module}.{qualname} sha256:{digest.hexdigest()}"


def code_said(identity: str) -> str:
    """An identity as a message shows it: its name and the first 12 digits of its hash."""
    name, _, digest = identity.partition(" sha256:")
    return f"{name} (sha256:{digest[:12]}…)" if digest else identity


def _underlying(func: Any) -> Any:
    """The function that runs when ``func`` is called: a partial's, a bound method's, a
    callable object's ``__call__``, unwrapped of decorators that say what they wrap."""
    for _ in range(8):  # a partial of a method of a wrapped function: a few layers at most
        if isinstance(func, functools.partial):
            func = func.func
        elif inspect.ismethod(func):
            func = func.__func__
        elif not inspect.isroutine(func) and callable(func):
            call = getattr(type(func), "__call__", None)  # noqa: B004
            if call is None or isinstance(call, types.WrapperDescriptorType):
                return func
            func = call
        else:
            break
    try:
        return inspect.unwrap(func)
    except ValueError:  # a cycle of __wrapped__
        return func


def _feed(digest: Any, code: types.CodeType) -> None:
    """What ``code`` does into ``digest``, nested code (a lambda, an inner function) too."""
    digest.update(code.co_code)
    digest.update(
        repr(
            (
                code.co_argcount,
                code.co_posonlyargcount,
                code.co_kwonlyargcount,
                code.co_flags,
                code.co_names,
                code.co_varnames,
                code.co_freevars,
                code.co_cellvars,
            )
        ).encode()
    )
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed(digest, const)
        else:
            digest.update(_constant(const).encode())


def _constant(value: Any) -> str:
    """A constant or default as the same text in every process: a frozenset's members
    sorted (its order follows the hash seed), plain values by their repr, any other object
    by its type's name alone. Its repr may differ in each process (``<Client at 0x…>``, a
    time, an id): the code would then never be the code approved, and the step would ask
    for approval again and again."""
    if isinstance(value, frozenset | set):
        return "{" + ",".join(sorted(_constant(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ",".join(_constant(v) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted(f"{_constant(k)}:{_constant(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if value is None or value is Ellipsis or type(value) in _PLAIN:
        return repr(value)
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


_PLAIN = (bool, int, float, complex, str, bytes)
"""The constants written by their repr: the same text wherever the same code is loaded."""


def _source(code: types.CodeType) -> bytes | None:
    """The bytes of the file ``code`` was compiled from, when it is one that can be read."""
    path = Path(code.co_filename)
    if code.co_filename.startswith("<") or not path.is_file():
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None
