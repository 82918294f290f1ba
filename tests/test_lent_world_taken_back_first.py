"""What a process killed mid-call lent a persistent store, met by a command other than the
few that took it back: ``horismos approve``, ``hydrate``, ``serve``, ``worker`` and ``submit``
wrote the store without taking the lend back first, so the next take-back removed quads they
wrote that the lend also held. Every command that opens a store for writing now takes back
first (one opener, :func:`horismos._cli_common.open_for_writing`).
"""

from __future__ import annotations

from pathlib import Path

from conftest import EX, PREFIXES
from test_lent_world_killed import killed_mid_call, store  # noqa: F401 (a fixture)
from test_tools_store_lanes import horismos, project, types_of


def test_approve_after_a_killed_call_keeps_what_it_wrote(
        tmp_path: Path, store: list[str]) -> None:  # noqa: F811
    """``horismos approve --world g.ttl`` after a call killed mid-call with F lent: g.ttl's
    :w9 (F held it too) landed beside the lend, and the next ``load`` took back F with :w9's
    quads. The approve takes the lend back first, and g.ttl's :w9 stays."""
    defs = project(tmp_path)
    killed_mid_call(tmp_path, store, defs)
    (tmp_path / "g.ttl").write_text(PREFIXES + ":w9 a :Ward ; :capacity 4 .\n",
                                    encoding="utf-8")
    approve = horismos("approve", *defs[:2], *store, "--world", "g.ttl", "--instance", ":nosuch",
                       "--fingerprint", "x", cwd=tmp_path)
    assert "Traceback" not in approve.stderr, approve.stderr
    assert "took back 3 quads" in approve.stderr, approve.stdout + approve.stderr
    # on sparql: a lender alive but paused past its lease lost its lend too: both are said
    cause = ("stopped, or lost its lease, before it could" if store[1].startswith("sparql:")
             else "stopped before it could")
    assert cause in approve.stderr, approve.stderr
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    assert "took back" not in later.stderr, later.stderr
    assert types_of(store, EX.w9) == {EX.Ward}  # g.ttl's, written by the approve
    assert types_of(store, EX.p9) == set()  # F's only, taken back
