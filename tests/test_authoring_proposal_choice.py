"""A proposal's choice misnamed in the ``horis:bind`` of the step it leads to: the rebooking
proposal chooses ``?option`` (``horis:as "option"``) and the rebooking step binds its flight
from ``horis:var "choice"``, or binds nothing and expects ``?flight``. The error said to use
``?choice`` (or ``?flight``) in a triple pattern — a variable the pattern would then bind to
any flight, not the one chosen. It now names the option the proposal chose and the
``horis:bind`` that takes it; a spelling near the choice leads with the did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import REBOOKING, edited

BIND = '[ horis:arg "flight" ; horis:var "option" ]'
TAKE = (
    'the option :ProposeFlight chooses reaches this step as ?option (horis:as "option"), and '
    'no argument takes it: write horis:bind [ horis:arg "flight" ; horis:var "option" ]'
)


def _error(tmp_path: Path, new: str) -> str:
    path, _ = edited(tmp_path, REBOOKING, BIND, new)
    out = horismos_forked(tmp_path, "validate", str(path), str(REBOOKING[1])).stdout
    (line,) = [s for s in out.splitlines() if ": error: " in s]
    return line


@pytest.mark.parametrize(
    ("var", "meant"),
    [("choice", ""), ("optoin", "did you mean ?option? ")],
)
def test_a_choice_misnamed_in_horis_bind_is_told_the_choice(
    tmp_path: Path, var: str, meant: str
) -> None:
    said = _error(tmp_path, f'[ horis:arg "flight" ; horis:var "{var}" ]')
    assert said.endswith(
        f'argument "flight" of :airline.rebook is required, but horis:bind names ?{var}, which '
        f"nothing binds — {meant}{TAKE}"
    ), said


def test_a_choice_never_bound_is_told_the_bind_that_takes_it(tmp_path: Path) -> None:
    said = _error(tmp_path, '[ horis:arg "booking" ; horis:var "this" ]')
    assert said.endswith(
        'argument "flight" of :airline.rebook is required, but no pattern variable ?flight and '
        f"no horis:bind give it — {TAKE}"
    ), said


def test_a_choice_misspelt_alike_in_pattern_and_bind_is_told_the_slip(tmp_path: Path) -> None:
    """``?optoin`` in the step's pattern and its ``horis:bind``: no argument is unbound, so no
    error, and the step rebooks onto any flight the pattern allows. The warning that the
    choice is dropped said to read ``?option``, not that ``?optoin`` was it misspelt."""
    text = REBOOKING[0].read_text(encoding="utf-8")
    assert text.count("?option :operatedBy") == 1 and text.count(BIND) == 1
    path = tmp_path / REBOOKING[0].name
    path.write_text(
        text.replace("?option :operatedBy", "?optoin :operatedBy").replace(
            BIND, '[ horis:arg "flight" ; horis:var "optoin" ]'
        ),
        encoding="utf-8",
    )
    out = horismos_forked(tmp_path, "validate", str(path), str(REBOOKING[1])).stdout
    said = [s for s in out.splitlines() if ": warning: " in s or ": error: " in s]
    assert len(said) == 1, said
    assert said[0].endswith(
        "warning: :ProposeFlight: horis:next :RebookOnProposal never reads ?option, the option "
        "this proposal chooses: the choice is dropped, and the step acts on whatever its own "
        "pattern binds; it reads ?optoin instead, which its own pattern binds to any node it "
        "allows — did you mean ?option? write ?option for ?optoin wherever :RebookOnProposal "
        "names it"
    ), said
