"""``horismos backup``: an operator's copy of an on-disk world, taken with real processes
beside a run that holds the store or was killed mid-call. The backup opens, its digest checks,
its instances and their intents are there, and restored it never lets a tool that is not
idempotent be called a second time. Copying the folder by hand (or ``oxigraph backup``) beside
a live or killed process could leave out the last commits, still in RocksDB's log: the intent
of the call in flight among them, so the restored world called the tool again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from charge_ledger import PREFIXES, ledger
from forked import Popen, run
from killed_charge import environ, project, run_until_killed
from rdflib import URIRef


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return project(tmp_path, "o1", "o2")


def horismos(cwd: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """``horismos ARGS`` in ``cwd``, allowed to write no file past ``limit`` bytes if given
    (its output is piped, so it reaches the test whole)."""
    return run([sys.executable, "-m", "horismos", *args], cwd=cwd, env=environ(cwd, None),
               capture_output=True, text=True, timeout=300, file_size=limit)


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_backup_after_a_kill_mid_call_keeps_the_intent(shop: Path, kind: str) -> None:
    """The run killed after the charge acted and before its commit; the backup, restored
    elsewhere and run again, holds the charge in doubt instead of charging a second time."""
    assert horismos(shop, "load", "world.ttl", "--store", f"{kind}:store").returncode == 0
    run_until_killed(shop, "charge-after", "run", "pay.ttl", "--store", f"{kind}:store",
                     "--tools", "payments.py", "--focus", ":o1", kind=kind)
    assert ledger(shop) == ["charge http://example.org/pay#o1"]
    done = horismos(shop, "backup", "copy", "--store", f"{kind}:store")
    assert done.returncode == 0, done.stderr
    assert f"--store {kind}:copy" in done.stdout
    check = horismos(shop, "digest", "--check", "--store", f"{kind}:copy")
    assert check.returncode == 0, check.stderr
    listed = horismos(shop, "instances", "pay.ttl", "--store", f"{kind}:copy")
    assert "interrupted" in listed.stdout and ":o1" in listed.stdout, listed.stdout
    rerun = horismos(shop, "run", "pay.ttl", "--all", "--store", f"{kind}:copy",
                     "--tools", "payments.py")
    assert rerun.returncode == 3, rerun.stderr  # :o1 waits at :Reconcile
    assert ledger(shop).count("charge http://example.org/pay#o1") == 1
    assert "charge http://example.org/pay#o2" in ledger(shop)


def test_a_backup_beside_a_live_process_is_refused_and_leaves_nothing(shop: Path) -> None:
    """The store is held by a run mid-call: the backup says so in one line, exit 2, and
    leaves no folder a restore could take for a backup."""
    assert horismos(shop, "load", "world.ttl", "--store", "journal:store").returncode == 0
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", "pay.ttl", "--store", "journal:store",
         "--tools", "payments.py", "--focus", ":o1"],
        cwd=shop, env=environ(shop, "charge-after"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        while not (shop / "at-charge-after").exists():
            assert proc.poll() is None
        refused = horismos(shop, "backup", "copy", "--store", "journal:store")
    finally:
        proc.kill()
        proc.wait()
    assert refused.returncode == 2
    assert "a process holds it open" in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert sorted(p.name for p in shop.iterdir() if "copy" in p.name) == []


def test_a_backup_the_disk_refuses_leaves_nothing_and_says_why(shop: Path) -> None:
    """A file-size limit (as a full disk) cuts the copy short: exit 2, the limit named, no
    half backup left, the store untouched."""
    assert horismos(shop, "load", "world.ttl", "--store", "journal:store").returncode == 0
    cut = horismos(shop, "backup", "copy", "--store", "journal:store", limit=200)
    assert cut.returncode == 2
    assert "nothing was kept there" in cut.stderr and "ulimit -f" in cut.stderr, cut.stderr
    assert "Traceback" not in cut.stderr
    assert sorted(p.name for p in shop.iterdir() if "copy" in p.name) == []
    assert horismos(shop, "digest", "--check", "--store", "journal:store").returncode == 0


def test_a_backup_into_a_folder_that_exists_is_refused(shop: Path) -> None:
    assert horismos(shop, "load", "world.ttl", "--store", "oxigraph:store").returncode == 0
    (shop / "copy").mkdir()
    (shop / "copy" / "keep.txt").write_text("mine")
    refused = horismos(shop, "backup", "copy", "--store", "oxigraph:store")
    assert refused.returncode == 2
    assert "already exists" in refused.stderr
    assert (shop / "copy" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_the_digest_a_backup_gives_is_the_copys_while_the_process_commits(
    tmp_path: Path, kind: str
) -> None:
    """A thread of the same process commits without pause while the world is backed up: the
    digest the backup gives (what ``horismos backup`` prints) is the one the copy opens to.
    Read after the copy, as it was, a commit landing between described a world the copy
    does not hold."""
    import threading

    from rdflib import Literal, URIRef

    from horismos import World
    from horismos._stores import Change

    p = URIRef("urn:test:p")
    with World.open(f"{kind}:{tmp_path / 'store'}") as world:
        world.commit(Change(add=[(URIRef("urn:test:s0"), p, Literal(0), None)]))
        stop, started = threading.Event(), threading.Event()

        def commit() -> None:
            i = 1
            while not stop.is_set():
                world.commit(Change(add=[(URIRef(f"urn:test:s{i}"), p, Literal(i), None)]))
                started.set()
                i += 1

        writer = threading.Thread(target=commit)
        writer.start()
        try:
            started.wait(30)
            given = [world.store.backup(tmp_path / f"copy{n}").fingerprint for n in range(5)]
        finally:
            stop.set()
            writer.join()
        assert world.digest() not in given  # it went on committing after each copy
    for n, digest in enumerate(given):
        with World.open(f"{kind}:{tmp_path / f'copy{n}'}", create=False) as copy:
            assert copy.store.recompute_digest().fingerprint == digest
            assert copy.digest() == digest


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_backup_through_a_wrapped_store_copies_the_world(tmp_path: Path, kind: str) -> None:
    """A store seen through a wrapper (a worker's fenced view, a run's recorded reads) did
    not pass ``backup`` on: the base store's refusal answered, "--store oxigraph:… has no
    folder to back up", of a store that has one. It backs up the store under it, and the
    copy opens to the digest it gave."""
    from horismos import World
    from horismos._stores.base import WrappedStore

    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n:o2 a :Order .\n")
    with World.open(f"{kind}:{tmp_path / 'store'}") as world:
        world.load(tmp_path / "world.ttl")
        digest = WrappedStore(world.store).backup(tmp_path / "copy")
        assert digest == world.store.digest()
    with World.open(f"{kind}:{tmp_path / 'copy'}", create=False) as copy:
        assert copy.store.recompute_digest() == digest
        assert copy.store.types(URIRef("http://example.org/pay#o1"))
