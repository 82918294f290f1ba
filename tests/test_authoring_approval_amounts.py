"""An approval threshold written on the flag: ``horis:requiresApproval 100`` or
``horis:requiresApproval [ rdfs:comment "above 100 EUR" ]`` (a refund to be approved only
above an amount).

The node written in place was shown by its generated id (``not n2e50439e…``), and neither
said how an amount is asked for: the flag holds for every call, and an amount is a
``horis:DecisionStep`` routing the large ones to a step whose tool requires approval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import TRIAGE, edited

ROUTE = ("horis:requiresApproval takes true (every call waits for a person) or false; to ask "
         "only above an amount, route with a horis:DecisionStep (horis:when [ horis:requires "
         '"?this :amount ?a . FILTER (?a > 100)" ; horis:next … ]) to a step whose tool says '
         "horis:requiresApproval true, and the rest to one whose tool does not")


@pytest.mark.parametrize(("written", "shown"), [
    ("100", "100"),
    ('[ rdfs:comment "above 100 EUR" ]', "[ … ], a node written in place"),
])
def test_an_amount_on_the_approval_flag_is_told_how_to_ask_above_an_amount(
        tmp_path: Path, written: str, shown: str) -> None:
    path, line = edited(tmp_path, TRIAGE, '    horis:binding "python:ehr_client.assign_queue" ;',
                        f"    horis:requiresApproval {written} ;\n"
                        '    horis:binding "python:ehr_client.assign_queue" ;')
    p = horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]), timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines()[0] == (
        f"{path}:{line}: error: :ehr.assign_queue: horis:requiresApproval must be true or "
        f"false, not {shown} — {ROUTE}"), p.stdout
    assert "Traceback" not in p.stderr
