"""Which literals an argument of a datatype takes, as the call's argument check judges them.

Why: the load check of an argument given from a pattern variable compared the argument's
datatype with the range of the property binding the variable by derivation, and let pass a pair
where one derives from the other ("one may fit"). But the call takes a literal of exactly the
argument's datatype, or an integer of any XSD integer type for an ``xsd:integer`` or
``xsd:decimal`` argument (:func:`~horismos._tool_calls.literal_fits`), nothing else: an
argument declared ``xsd:int`` refused every ``1200`` of an ``xsd:integer`` property (Turtle
writes a bare number so), and one declared ``xsd:integer`` every amount an earlier step's
effect wrote as ``xsd:decimal``: the run failed at that step, after the steps before it had
acted (a claim assessed, its payout refused). Here is what values a property's literals are
written with, and which of them the argument takes.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import RDF, RDFS, XSD, URIRef

from ._literals import INTEGER_TYPES

__all__ = ["accepts", "refused_by", "written_as"]

_NUMBERS = (XSD.integer, XSD.decimal)
"""The argument datatypes that also take a literal of any XSD integer type (as literal_fits)."""

_BARE = {  # a range whose values Turtle also writes bare in another datatype's form
    XSD.decimal: (XSD.integer,),  # 5000 for an amount
    XSD.double: (XSD.integer, XSD.decimal),
    XSD.float: (XSD.integer, XSD.decimal),
}


def accepts(argument: URIRef, given: URIRef) -> bool:
    """Whether an argument of datatype ``argument`` takes a literal of datatype ``given``, as
    the call's argument check does (``literal_fits``; ``xsd:string`` for a plain literal)."""
    if argument == RDFS.Literal or given == argument:
        return True
    return argument in _NUMBERS and given in INTEGER_TYPES


def written_as(range_: URIRef) -> tuple[URIRef, ...]:
    """The datatypes a value of a property whose ``rdfs:range`` is ``range_`` is written
    with: the range, and the bare forms of Turtle a number of it is often written in."""
    if range_ == RDF.langString:
        return (range_,)
    return (range_, *_BARE.get(range_, ()))


def refused_by(argument: URIRef, given: Iterable[URIRef]) -> bool:
    """Whether an argument of datatype ``argument`` takes none of the datatypes ``given``."""
    return not any(accepts(argument, g) for g in given)
