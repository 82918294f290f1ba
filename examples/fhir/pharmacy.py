"""The pharmacy's decision: what to write to the EHR for one medication request.

An adapter-bound tool is given each hydrated resource as the FHIR JSON the EHR served and
returns the resources to write; Horismos sends them conditionally and lands what is accepted.
"""

from __future__ import annotations

from typing import Any


def dispense(request: dict[str, Any]) -> dict[str, Any]:
    """Complete the request and record its dispense, all or nothing (a FHIR transaction)."""
    completed = {**request, "status": "completed"}
    record = {
        "resourceType": "MedicationDispense",
        "status": "completed",
        "subject": request["subject"],
        "authorizingPrescription": [{"reference": f"MedicationRequest/{request['id']}"}],
        "medicationCodeableConcept": request.get("medicationCodeableConcept", {}),
    }
    return {"resourceType": "Bundle", "type": "transaction",
            "entry": [{"resource": completed}, {"resource": record}]}
