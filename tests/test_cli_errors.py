"""What a command-line user reads when the system fails under a command (a full disk, a file
size limit, a store's digest it cannot write back, a server that is not listening, an input
that is no file): what was being read or written and what to do, never a traceback nor the
system's bare text ("[Errno 28] No space left on device")."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from test_cli import ROOT, TOOLS, TRIAGE, WORLD, _files_up_to, horismos, no_traceback


def test_a_trace_the_disk_refuses_is_named_with_what_to_do(tmp_path: Path) -> None:
    """`--trace /dev/full`: the user read "[Errno 28] No space left on device", no file named."""
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "/dev/full", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (
        2, "horismos run: error: /dev/full: the disk is full; free space on it, then run the "
           "command again\n"), p.stderr


def test_stdout_the_disk_refuses_says_an_output_could_not_be_written(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "horismos", "graph", *TRIAGE], cwd=tmp_path,
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert "Errno" not in p.stderr and "Traceback" not in p.stderr
    assert (p.returncode, p.stderr) == (
        2, "horismos graph: error: an output could not be written: the disk is full; free "
           "space on it, then run the command again\n"), p.stderr


def test_a_digest_the_store_cannot_write_on_closing_is_said_once_in_words(
        tmp_path: Path) -> None:
    """A run whose every commit landed, then the store's digest refused on closing (a file
    size limit, as a full disk): RocksDB's bare "IO error: While appending to file: …: File
    too large" was all the user read. The limit is set just past the store's largest file
    (RocksDB's own log, whose writes may fail, aside), a little more each try, until the run
    commits and its closing write is what is refused."""
    made = tmp_path / "made"
    assert horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), "--store",
                    "oxigraph:made", cwd=tmp_path).returncode == 0
    largest = max(f.stat().st_size for f in made.iterdir()
                  if not f.name.startswith("LOG"))
    said = []
    for margin in range(500, 8000, 250):
        shutil.rmtree(tmp_path / "st", ignore_errors=True)
        shutil.copytree(made, tmp_path / "st")
        p = subprocess.run([sys.executable, "-m", "horismos", "run", *TRIAGE, *TOOLS, "--all",
                            "--store", "oxigraph:st"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, preexec_fn=_files_up_to(largest + margin))
        no_traceback(p)
        said.append(p.stderr)
        if "on closing" in p.stderr:
            break
    assert "horismos run: error: the store at st could not write its digest on closing (" in (
        said[-1]), said
    assert said[-1].count("horismos") == 1, said[-1]
    assert said[-1].endswith("what was committed stays, and the next command that opens it "
                             "recomputes the digest once: free space on the store's disk or "
                             "lift the file size limit it met\n")
    digest = horismos("digest", "--store", "oxigraph:st", "--check", cwd=tmp_path)
    assert digest.returncode == 0, digest.stdout + digest.stderr


def test_a_store_left_open_whose_digest_the_disk_refuses_at_exit_says_one_line(
        tmp_path: Path) -> None:
    """A process that never closes its store (an embedding program; a command that leaves
    it to exit) closes it in an exit hook: a digest the disk refused there was printed as
    "Exception ignored in atexit callback" and a traceback."""
    (tmp_path / "left_open.py").write_text(textwrap.dedent("""
        import resource, signal
        from rdflib import Literal, URIRef
        from horismos import World
        from horismos._stores import Change
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        world = World.open("oxigraph:st")
        world.commit(Change(add=[(URIRef("urn:a"), URIRef("urn:p"), Literal(1), None)]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
    """))
    p = subprocess.run([sys.executable, "left_open.py"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("horismos: error: the store at st could not write its digest "
                               "on closing ("), p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
