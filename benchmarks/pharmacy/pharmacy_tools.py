"""The pharmacy workload's tools (benchmarks only): plain functions, as a pharmacy system's
client would be; and a world generator of any size."""

from __future__ import annotations

import itertools

from rdflib import RDF, RDFS, XSD, Literal, Namespace, URIRef

RX = Namespace("http://example.org/pharmacy#")
_numbers = itertools.count(1)

FILLER = 6
"""Triples of history per patient besides the prescription: what makes a world large."""


def dispense(rx: URIRef) -> dict[str, object]:
    return {"dispenseRef": f"D-{next(_numbers)}"}


def notify(rx: URIRef, patient: URIRef) -> dict[str, object]:
    return {"notificationRef": f"N-{next(_numbers)}"}


def ask_prescriber(rx: URIRef) -> dict[str, object]:
    return {}


TOOLS = {"pharmacy_tools.dispense": dispense, "pharmacy_tools.notify": notify,
         "pharmacy_tools.ask_prescriber": ask_prescriber}


def prescriptions_for(triples: int) -> int:
    """How many prescriptions make a world of about ``triples`` triples."""
    return max(1, triples // (6 + FILLER))


def world_quads(prescriptions: int):
    """Each prescription: 4 triples, its patient 2, and FILLER triples of the patient's history.
    Every prescription has refills left, so each runs the decision, dispense and notify."""
    for i in range(prescriptions):
        rx, patient = RX[f"rx{i}"], RX[f"patient{i}"]
        yield rx, RDF.type, RX.Prescription, None
        yield rx, RX.rxNumber, Literal(f"RX-{i}"), None
        yield rx, RX.refillsLeft, Literal(1 + i % 3, datatype=XSD.integer), None
        yield rx, RX.patient, patient, None
        yield patient, RDF.type, RX.Patient, None
        yield patient, RDFS.label, Literal(f"Patient {i}"), None
        for k in range(FILLER):
            yield patient, RX[f"visit{k}"], Literal(f"2026-0{1 + k % 9}-1{k % 9}"), None
