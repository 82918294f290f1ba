"""What a person is told about a result the gate refused: the value as the tool returned it.

A value RDF cannot carry (a control character in a string) is shown as Python writes it;
``run`` read that text as N3, took it for a blank node's label and printed ``_:'P1…'``.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "python:charge" ;
    horis:idempotent false .
""" + PAY_WORKFLOW


def test_a_rejected_value_rdf_cannot_carry_is_shown_as_returned(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(ONE_ORDER, encoding="utf-8")
    (tmp_path / "shop.py").write_text(
        'def charge(order):\n    return {"paymentRef": "P1\\x1bok"}\n', encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--focus", ":o1",
                        "--tools", "shop", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "rejected by the gate" in p.stdout
    assert "(value: 'P1\\x1bok')" in p.stdout, p.stdout
    assert "_:" not in p.stdout
