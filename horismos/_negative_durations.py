"""An ``xsd:duration`` negative in years (or months) and in days, ``"-P1Y1D"``, as rdflib
cannot write it.

rdflib parses ``-P1Y1D`` to a value (minus a year and a day), then writes that value back
as the literal's text — and its writer refuses a negative year with a negative day
(``ValueError: Duration cannot have negative years and negative days``): a value with
every part negative, the only kind a duration's text can say. So every file holding one
failed to parse as if its syntax were wrong (``validate``, a world read into the ``memory``
store from the files given, a definitions file), though Turtle, N-Triples and Oxigraph
read it, and a tool given one as an argument failed before it was called.
:func:`write_duration` writes such a value as its negation with a ``-`` before it (``-``
and ``P1Y1D``); any value rdflib writes itself it still writes. Every writer of a duration
in Horismos goes through it (the JSON a tool is given: :func:`~._bindings.wire.json_value`),
and rdflib's own literals are taught it once, on import of the package, for
``xsd:duration`` only — unless the application has bound ``xsd:duration`` to a constructor
of its own, which is left as it is, or rdflib no longer says which is bound (its private
``_toPythonMapping``), when nothing is taught and nothing said.
"""

from __future__ import annotations

import datetime as dt
import logging

import rdflib.term
from rdflib import XSD
from rdflib.term import bind
from rdflib.xsd_datetime import Duration, duration_isoformat, parse_xsd_duration

__all__ = ["write_duration"]


def write_duration(value: Duration | dt.timedelta) -> str:
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


class _RebindingNotice(logging.Filter):
    """Drops the one record rdflib's ``bind`` logs when :func:`_register` adds the writer to
    ``xsd:duration`` (``datatype '…#duration' was already bound. Rebinding.``): the parse is
    left as it was, so there is nothing to warn of. Every other record passes, and the
    filter is on the logger only for that call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.levelno == logging.WARNING
            and record.getMessage() == f"datatype '{XSD.duration}' was already bound. Rebinding."
        )


def _register() -> None:
    """Have rdflib write an ``xsd:duration`` literal's value by :func:`write_duration`, while
    its constructor is still rdflib's own: an application that bound ``xsd:duration`` to a
    constructor of its own (``rdflib.term.bind``) keeps it, and its values are its to write.
    The constructor in place is passed through, so parsing stays as it was. Which one is in
    place only rdflib's private ``_toPythonMapping`` says (tests/test_dependencies.py names
    it): an rdflib without it is left as it is, writing ``-P1Y1D`` as it can, and
    ``import horismos`` still works and says nothing."""
    bound = getattr(rdflib.term, "_toPythonMapping", None)
    current = bound.get(XSD.duration) if isinstance(bound, dict) else None
    if current is not parse_xsd_duration:
        return
    logger, notice = logging.getLogger("rdflib.term"), _RebindingNotice()
    logger.addFilter(notice)
    try:
        bind(
            XSD.duration,
            Duration,
            constructor=current,
            lexicalizer=write_duration,
            datatype_specific=True,
        )
    finally:
        logger.removeFilter(notice)


_register()
