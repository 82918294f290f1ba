"""A world written back with ``--out`` is whole or as it was: a write cut short loses nothing.

Going on from a file (``run --world W --out W``, as the durability guide says to keep a world
on files) wrote ``W`` in place: opened afresh, then filled. A write cut short — a full disk,
the process's file size limit (``ulimit -f``, here), a kill — left ``W`` truncated: every
instance, intent and used approval it held was lost, the file no longer read, and the
command said to "run the command again", which from any world charges again. The world is
now written beside ``W`` and put in its place, and the error says what was and was not kept.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from forked import run
from rdflib import Dataset
from shop_files import CHARGE_TOOL, SHOP_HEAD

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "python:charge" .
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

SHOP = """\
def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    return {"paymentRef": "P-1"}
"""

LIMIT = 150_000  # bytes: less than the world written back


def horismos(folder: Path, *args: str, limit: bool = False) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "horismos", *args], cwd=folder, text=True,
               capture_output=True, timeout=120, file_size=LIMIT if limit else None)


def test_a_world_written_in_place_and_cut_short_keeps_what_it_held(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "shop.py").write_text(SHOP)
    filler = "".join(f':o1 :note{i} "a line of the order\'s history, number {i}" .\n'
                     for i in range(3000))
    (tmp_path / "w.trig").write_text(
        "@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n:o2 a :Order .\n" + filler)
    run = ["run", "defs.ttl", "--world", "w.trig", "--out", "w.trig", "--tools", "shop.py"]
    first = horismos(tmp_path, *run, "--focus", ":o1")
    assert first.returncode == 0, first.stderr
    kept = (tmp_path / "w.trig").read_text()
    assert len(kept) > LIMIT

    cut = horismos(tmp_path, *run, "--focus", ":o2", limit=True)  # o2 charged, then the write
    assert cut.returncode == 2, cut.stdout + cut.stderr
    assert "--out w.trig could not be written" in cut.stderr, cut.stderr
    assert "run the command again" not in cut.stderr and "Traceback" not in cut.stderr
    assert (tmp_path / "w.trig").read_text() == kept  # as it was, not cut off
    Dataset().parse(tmp_path / "w.trig", format="trig")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []

    # going on from it: o1's finished instance is still there, so o1 is not charged again
    again = horismos(tmp_path, *run, "--all")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "ledger").read_text().split().count("http://example.org/shop#o1") == 1


def test_a_trace_cut_short_after_a_charge_does_not_just_say_run_again(tmp_path: Path) -> None:
    """The trace could not be written (here, the file size limit) after the charge was made,
    on a world kept in memory: the error said only "then run the command again", and running
    it again charged again. It now says that tools were called and that running again from
    the files calls them again."""
    (tmp_path / "defs.ttl").write_text(DEFS)
    # the charge answers with a reference its step's trace event cannot hold under the limit
    (tmp_path / "shop.py").write_text(SHOP.replace('"P-1"', '"P-" + "1" * 200_000'))
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n")
    run = ["run", "defs.ttl", "--world", "w.ttl", "--tools", "shop.py", "--focus", ":o1"]
    cut = horismos(tmp_path, *run, "--trace", "run.jsonl", limit=True)
    assert cut.returncode == 2 and "Traceback" not in cut.stderr, cut.stdout + cut.stderr
    assert (tmp_path / "ledger").read_text().split() == ["http://example.org/shop#o1"], cut.stderr
    (error, note) = [line for line in cut.stderr.splitlines() if line.startswith("horismos run")]
    assert "run.jsonl" in error and "size limit" in error, cut.stderr
    assert note.startswith("horismos run: note: tools were called before this"), cut.stderr
    assert "calls again the tools already called" in note
