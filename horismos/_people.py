"""Who a record of a person's act names: the operator, as a PROV person.

A person's acts land in the world with human provenance: an approval of one payload
(``horismos approve``, ``tools approve``), a call in doubt cleared (``tools reconcile``). An
incident reviewer asks first who did it; a record that said only "a human" answered when
and what, never who. Each names its operator the same way: ``--operator`` (``operator=``),
else the operating system's user running the command.
"""

from __future__ import annotations

import getpass
import os

from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.term import Node

from ._vocab import PROV

__all__ = ["operator_name", "person_triples"]


def operator_name(given: str | None = None) -> str:
    """Who acts: ``given`` (``--operator``), else the operating system's user running the
    command (``getpass.getuser``: ``LOGNAME``, ``USER``, … then the password database), else
    ``uid N`` — never empty, so a record always names someone."""
    if given is not None and given.strip():
        return given.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no such variable and no password entry (a bare container)
        return f"uid {os.getuid()}"


def person_triples(act: URIRef, operator: str) -> list[tuple[Node, Node, Node]]:
    """``act`` done by ``operator``: ``prov:wasAssociatedWith`` a ``prov:Person`` named
    ``<act>:operator`` whose ``rdfs:label`` is the operator's name."""
    who = URIRef(f"{act}:operator")
    return [
        (act, PROV.wasAssociatedWith, who),
        (who, RDF.type, PROV.Person),
        (who, RDFS.label, Literal(operator)),
    ]
