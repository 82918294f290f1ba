"""An f-string a Python tool returns whose fixed text the domain shape's ``sh:pattern`` refuses,
whatever fills its fields: ``{"paymentRef": f"PAYMENT-{n:06d}"}`` beside ``sh:pattern
"^PAY-[0-9]{6}$"`` validated, and every run paid the claim (the tool is not idempotent) and
then had the answer rejected by the gate: nothing landed, the step failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from test_authoring_returns import BINDING_LINE, FILES, ONTOLOGY, _write


@pytest.mark.parametrize(("pattern", "ends"), [
    ("^PAY-[0-9]{6}$", ("PAY-", None)),
    ("^Q-[A-Z]+-[0-9]+$", ("Q-", None)),
    ("^DEP\\-[0-9]{4}$", ("DEP-", None)),
    ("^ABC?D", ("AB", None)),  # C is optional: not fixed
    ("^AB+", ("A", None)),
    ("[0-9]+-EU$", (None, "-EU")),
    ("^A|^B", (None, None)),  # an alternative: nothing fixed
    ("PAY-", (None, None)),  # not anchored
    ("^\\d{4}$", (None, None)),
])
def test_the_fixed_text_of_a_pattern(pattern: str, ends: tuple[str | None, str | None]) -> None:
    from horismos._formatted_returns import fixed_ends

    assert fixed_ends(pattern) == ends


def test_an_f_string_whose_fixed_text_the_pattern_refuses_is_an_error_before_the_payout(
        tmp_path: Path) -> None:
    line = _write(tmp_path, 'return {"paymentRef": f"PAYMENT-{next(_refs):06d}"}')
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'claims.ttl:{BINDING_LINE}: error: :claims.pay_out: binding '
            '"python:claims_client.pay_out" of claims.pay_out: its function returns '
            f'f"PAYMENT-{{…}}" for :paymentRef (claims_client.py:{line}), but shape :ClaimShape '
            'requires sh:pattern "^PAY-[0-9]{6}$", which no text beginning "PAYMENT-" matches: '
            "the gate rejects it after the call has acted, nothing of it landing — return a "
            "value the shape allows for :paymentRef, or correct the shape") in p.stdout, p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", timeout=120)
    assert run.returncode == 2 and not (tmp_path / "called").exists(), run.stdout + run.stderr


def test_the_fixed_end_is_read_too(tmp_path: Path) -> None:
    _write(tmp_path, 'return {"paymentRef": f"PAY-{next(_refs):06d}-EU"}')
    (tmp_path / "onto.ttl").write_text(ONTOLOGY.replace("{6}$", "{6}-US$"), encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1 and 'which no text ending "-EU" matches' in p.stdout, p.stdout


def test_one_return_of_two_is_a_warning_and_the_run_pays_then_fails(tmp_path: Path) -> None:
    returns = ('if amount > 1000:\n        return {"paymentRef": f"MANUAL-{amount}"}\n    '
               'return {"paymentRef": f"PAY-{next(_refs):06d}"}')
    line = _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ('one of its function\'s returns gives f"MANUAL-{…}" for :paymentRef '
            f"(claims_client.py:{line + 1})") in p.stdout, p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", "--quiet", timeout=120)
    assert run.returncode == 1 and (tmp_path / "called").exists(), run.stdout + run.stderr
    assert "breaks the domain shapes" in run.stdout, run.stdout


@pytest.mark.parametrize(("returns", "onto"), [
    pytest.param('return {"paymentRef": f"PAY-{next(_refs):06d}"}', ONTOLOGY, id="agrees"),
    pytest.param('return {"paymentRef": f"PAY{amount}"}', ONTOLOGY, id="a-field-may-mend-it"),
    pytest.param('return {"paymentRef": f"PAYMENT-{amount}"}',
                 ONTOLOGY.replace('"^PAY-[0-9]{6}$" ]', '"^pay-[0-9]{6}$" ; sh:flags "i" ]'),
                 id="flags-not-judged"),
])
def test_no_alarm_where_the_fixed_text_may_match(tmp_path: Path, returns: str, onto: str) -> None:
    _write(tmp_path, returns)
    (tmp_path / "onto.ttl").write_text(onto, encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize(("returns", "shown"), [
    pytest.param('return {"paymentRef": "PAYMENT-%06d" % next(_refs)}', '"PAYMENT-%06d" % …',
                 id="percent"),
    pytest.param('return {"paymentRef": "PAYMENT-{:06d}".format(next(_refs))}',
                 '"PAYMENT-{:06d}".format(…)', id="format"),
    pytest.param('return {"paymentRef": "PAYMENT-" + str(next(_refs)).zfill(6)}',
                 '"PAYMENT-" + …', id="concatenation"),
])
def test_a_percent_format_or_concatenation_is_read_as_an_f_string_is(
        tmp_path: Path, returns: str, shown: str) -> None:
    """``"PAYMENT-%06d" % n`` is the same refused reference as ``f"PAYMENT-{n:06d}"``: it
    validated, and the payout acted before the gate refused its answer."""
    line = _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'claims.ttl:{BINDING_LINE}: error: :claims.pay_out: binding '
            '"python:claims_client.pay_out" of claims.pay_out: its function returns '
            f'{shown} for :paymentRef (claims_client.py:{line}), but shape :ClaimShape '
            'requires sh:pattern "^PAY-[0-9]{6}$", which no text beginning "PAYMENT-" matches'
            ) in p.stdout, p.stdout
    run = horismos_forked(tmp_path, "run", *FILES, "--all", timeout=120)
    assert run.returncode == 2 and not (tmp_path / "called").exists(), run.stdout + run.stderr


@pytest.mark.parametrize("returns", [
    pytest.param('return {"paymentRef": "PAY-%06d" % next(_refs)}', id="percent"),
    pytest.param('return {"paymentRef": "PAY-{:06d}".format(next(_refs))}', id="format"),
    pytest.param('return {"paymentRef": "PAY-" + str(next(_refs)).zfill(6)}', id="concat"),
    pytest.param('return {"paymentRef": "P%%AY-%06d" % next(_refs)}', id="percent-escaped"),
])
def test_other_formats_that_agree_are_not_said(tmp_path: Path, returns: str) -> None:
    _write(tmp_path, returns)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    if "%%" in returns:  # "P%AY-…": a % the pattern refuses, read as text, not a field
        assert 'which no text beginning "P%AY-" matches' in p.stdout, p.stdout
        return
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr
