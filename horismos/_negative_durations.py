"""An ``xsd:duration`` negative in years (or months) and in days, ``"-P1Y1D"``, as rdflib
cannot write it.

rdflib parses ``-P1Y1D`` to a value (minus a year and a day), then writes that value back
as the literal's text — and its writer refuses a negative year with a negative day
(``ValueError: Duration cannot have negative years and negative days``): a value with
every part negative, the only kind a duration's text can say. So every file holding one
failed to parse as if its syntax were wrong (``validate``, a world read into the ``memory``
store from the files given, a definitions file), though Turtle, N-Triples and Oxigraph
read it. The writer registered here writes such a value as its negation with a ``-``
before it (``-`` and ``P1Y1D``); any value rdflib writes itself it still writes. Registered
once, on import of the package, for ``xsd:duration`` only.
"""

from __future__ import annotations

import logging

from rdflib import XSD
from rdflib.term import bind
from rdflib.xsd_datetime import Duration, duration_isoformat, parse_xsd_duration

__all__ = ["write_duration"]


def write_duration(value: Duration) -> str:
    """``value``'s ``xsd:duration`` text: rdflib's, or, for one negative in both its years
    and days, which rdflib refuses to write, ``-`` and its negation's (``-P1Y1D``). A value
    whose parts have opposite signs no duration text can say: refused as rdflib refuses it."""
    try:
        return duration_isoformat(value)
    except ValueError:
        negated = duration_isoformat(-value)
        if negated.startswith("-"):
            raise
        return f"-{negated}"


def _register() -> None:
    """Have rdflib write an ``xsd:duration`` literal's value by :func:`write_duration`. rdflib
    logs a rebinding of a datatype it knows as a warning: the parse stays as it was
    (``parse_xsd_duration``), only the writing is added, so that warning is not shown."""
    logger = logging.getLogger("rdflib.term")
    was, logger.disabled = logger.disabled, True
    try:
        bind(
            XSD.duration,
            Duration,
            constructor=parse_xsd_duration,
            lexicalizer=write_duration,
            datatype_specific=True,
        )
    finally:
        logger.disabled = was


_register()
