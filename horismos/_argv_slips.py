"""A program's arguments written as a shell would read them, where no shell reads them.

``horis:command`` / ``horis:args`` of an MCP server and ``horis:argv`` of a command binding
are lists handed to the program as they are: no shell splits a member at its spaces or
expands a ``$``. Three ways of writing them as a command line went unnoticed by ``validate``:

- ``horis:command "python -m ward_server"``: the whole line taken as one program's name; the
  run stopped at start with "no such program", without a file or line;
- a member ``"-m ward_server"`` or ``"--lang {lang}"``: one argument with a space in it, so
  Python said "No module named ' ward_server'" at start, and a command binding's program was
  given ``"--lang en"`` as one option and ran with it, quietly;
- ``"${path}"``: the ``$`` kept, so the program was given ``"$a.txt"`` for ``a.txt``.

Each is a warning at the line of the list (a program may really want a space or a ``$``),
saying which members to write instead. Linear in the members.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Slip", "argument_slips", "command_slip"]

_OPTION_AND_VALUE = re.compile(r"^(--?[A-Za-z][\w.-]*) +(\S.*)$")
"""An option and its value in one member: ``-m ward_server``, ``--lang {lang}``."""
_DOLLAR_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}")


@dataclass(frozen=True)
class Slip:
    """A list written as a command line, and the members to write instead. A value, not a
    warning: the loader locates it at the list's line and warns like its own."""

    message: str
    hint: str


def _members(values: Iterable[str]) -> str:
    return " ".join(f'"{v}"' for v in values)


def command_slip(command: str, has_args: bool) -> Slip | None:
    """``horis:command`` holding a command line rather than a program."""
    parts = command.split()
    if len(parts) < 2 or os.path.exists(command):  # a program whose path has a space
        return None
    return Slip(
        f'horis:command "{command}" is taken whole as the name of one program (no shell '
        "splits it at its spaces), so the server could not start",
        f'write horis:command "{parts[0]}" and its arguments as a list: horis:args '
        f"( {_members(parts[1:])}{' …' if has_args else ''} )",
    )


def argument_slips(members: tuple[str, ...], what: str, placeholders: bool = False) -> list[Slip]:
    """Members of the list ``what`` (``horis:args``, ``horis:argv``) written as a shell
    would read them; ``placeholders`` when ``{name}`` is filled in (a command binding)."""
    out = []
    for member in members:
        option = _OPTION_AND_VALUE.match(member)
        if option is not None:
            name, value = option.groups()
            glued = f"{name}={value}" if name.startswith("--") else None
            out.append(
                Slip(
                    f'{what} member "{member}" is one argument with a space in it: the '
                    f'program is given "{member}" whole, not the option {name} and its value',
                    f"write them as two members, {_members([name, value])}"
                    + (f', or glued as "{glued}"' if glued else ""),
                )
            )
        if placeholders:
            for hit in _DOLLAR_PLACEHOLDER.finditer(member):
                out.append(
                    Slip(
                        f'{what} member "{member}" has a $ before the placeholder '
                        f"{{{hit.group(1)}}}: no shell reads it, so the program is given the "
                        "$ followed by the value",
                        f'write "{member.replace(hit.group(0), hit.group(0)[1:])}" '
                        "(a placeholder is {name}, without $)",
                    )
                )
    return out
