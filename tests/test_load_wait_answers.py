"""``horismos load`` of facts about an instance waiting in the store says it held them to
nothing ``resume --facts`` checks, and names the resume that does.

A manager's sign-off loaded as ``:p1 :signedOff "yes"`` (a string, where the range is
``xsd:boolean``) landed silently; the wait for ``true`` never matched it and timed out into
an escalation although the manager said yes. ``load`` reads no definitions, so it cannot
refuse the value: it says so, and points at ``resume --facts``, which refuses it.
"""

from __future__ import annotations

from pathlib import Path

from conftest import PREFIXES
from forked import horismos_forked

DEFS = PREFIXES + """
:Patient a owl:Class .
:signedOff a owl:DatatypeProperty ; rdfs:range xsd:boolean .
:Sign a horis:Workflow ; horis:focusType :Patient ; horis:start :Await .
:Await a horis:WaitStep ; horis:reason "the manager signs off" ; horis:wake horis:External ;
    horis:delivery horis:Final ; horis:until "?this :signedOff true ." ;
    horis:timeout "P3D" .
"""


def waiting(tmp_path: Path) -> list[str]:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n:p2 a :Patient .\n")
    store = ["--store", "oxigraph:store"]
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert "warning" not in loaded.stderr  # nothing waits yet
    started = horismos_forked(tmp_path, "run", "defs.ttl", *store, "--focus", ":p1",
                              timeout=120)
    assert started.returncode == 3, started.stdout + started.stderr  # waiting
    return store


def test_load_of_facts_about_a_waiting_focus_says_resume_checks_them(tmp_path: Path) -> None:
    store = waiting(tmp_path)
    (tmp_path / "signoff.ttl").write_text(PREFIXES + ':p1 :signedOff "yes" .\n')
    loaded = horismos_forked(tmp_path, "load", "signoff.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    said = loaded.stderr
    assert "horismos load: warning: signoff.ttl gives facts about " \
        "<http://example.org/clinic#p1>, whose instance " in said, said
    assert "waits at <http://example.org/clinic#Await>" in said
    assert "load reads no definitions" in said
    assert "--facts signoff.ttl`, which refuses such a value" in said
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, timeout=120)
    short = said.split("whose instance ", 1)[1].split()[0]
    assert short in listed.stdout, listed.stdout  # the id it names is the waiting one's
    resumed = horismos_forked(tmp_path, "resume", "defs.ttl", *store, "--instance", short,
                              "--facts", ":p1 :signedOff \"yes\" .", timeout=120)
    assert resumed.returncode != 0 and "xsd:boolean" in resumed.stderr, resumed.stderr


def test_load_of_facts_about_no_waiting_focus_says_nothing(tmp_path: Path) -> None:
    store = waiting(tmp_path)
    (tmp_path / "other.ttl").write_text(PREFIXES + ':p2 :signedOff "yes" .\n')
    loaded = horismos_forked(tmp_path, "load", "other.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert "warning" not in loaded.stderr, loaded.stderr


def test_resume_says_true_or_false_for_a_yes_given_to_a_boolean(tmp_path: Path) -> None:
    """The hint read `write a value of xsd:boolean, e.g. "…"^^xsd:boolean`: no value to
    write. It names the two there are."""
    store = waiting(tmp_path)
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json",
                             timeout=120)
    import json

    iid = json.loads(listed.stdout)[0]["instance"]
    resumed = horismos_forked(tmp_path, "resume", "defs.ttl", *store, "--instance", iid,
                              "--facts", ':p1 :signedOff "yes" .', timeout=120)
    assert resumed.returncode == 2, resumed.stderr
    assert "write true or false, without quotes, or correct the rdfs:range" in resumed.stderr
    assert '"…"^^xsd:boolean' not in resumed.stderr
