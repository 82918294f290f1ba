"""A commit the system of record accepted, whose answer was cut short, is in doubt.

The adapter counted a commit answered once the answer's status line and headers had come: a
``201 Created`` whose body was then cut off (the connection dropped) or stalled past the
timeout was reconciled as *failed* — "was not sent", it said of the stalled one — so the call
was not held in doubt, and the next run created the dispense again. The HTTP binding counts a
call answered only once its whole answer has come; so does a commit now, and such a commit is
*unknown*. Real processes: the loopback FHIR server (tests/servers/fhir_server.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pharmacy_ehr import ALLOW, posts, recording
from servers.fhir_server import FhirServer


@pytest.mark.parametrize("cut", ["drop", "stall"])
def test_a_create_whose_answer_was_cut_short_is_not_made_again(
    tmp_path: Path, fhir: FhirServer, cut: str
) -> None:
    agent, world = recording(tmp_path, fhir)

    fhir.cut = cut
    first = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    assert posts(fhir) == 1
    step = first.instances[0].steps[-1]
    assert [r["outcome"] for r in step.receipts] == ["unknown"], step.receipts
    assert not any("was not sent" in r.get("message", "") for r in step.receipts)

    fhir.cut = None
    again = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    assert posts(fhir) == 1, again.instances[0].steps  # the dispense is not created twice
