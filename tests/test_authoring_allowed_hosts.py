"""``validate`` holds HTTP bindings and MCP server URLs to the allowed hosts a run is given.

Why: ``validate --allow-host status.example.org`` (or ``allow-hosts`` in the project's
``pyproject.toml``) said "valid" of a status-page tool bound to ``http://127.0.0.1:8781/…``;
``run`` with the same list refused it before its first step, naming the host. Found walking an
incident-response domain."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

FILE = """\
@prefix :      <http://example.org/ops#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Incident a owl:Class .
:statusPageRef a owl:DatatypeProperty .

:status.post a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :statusPageRef ; horis:key "ref" ;
                        horis:type xsd:string ] ] ;
    horis:binding "http://127.0.0.1:8781/status" .

:status.peek a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ] ;
    horis:binding "http://10.1.2.3/peek" .

:Respond a horis:Workflow ; horis:focusType :Incident ; horis:start :Post .
:Post a horis:ActionStep ; horis:tool :status.post ;
    horis:requires "FILTER NOT EXISTS { ?this :statusPageRef ?r }" ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] .
"""

BINDING = 'horis:binding "http://127.0.0.1:8781/status"'


def _validate(tmp_path: Path, *options: str) -> tuple[int, list[str]]:
    (tmp_path / "ops.ttl").write_text(FILE, encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", "ops.ttl", *options, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, [x for x in done.stdout.splitlines() if "allowed" in x]


def test_a_binding_outside_the_allowed_hosts_is_an_error_at_its_line(tmp_path: Path) -> None:
    line = FILE.splitlines().index(f"    {BINDING} .") + 1
    code, said = _validate(tmp_path, "--allow-host", "status.example.org")
    assert code == 1, said
    peek = FILE.splitlines().index('    horis:binding "http://10.1.2.3/peek" .') + 1
    assert said == [
        f'ops.ttl:{line}: error: :status.post: binding "http://127.0.0.1:8781/status" reaches '
        "a host outside the allowed ones, so a run refuses it before any step — host "
        "127.0.0.1 is not in the allowed hosts (status.example.org); add it with --allow-host "
        '127.0.0.1 (allow_hosts=[..., "127.0.0.1"] in Python) or to allow-hosts in '
        "pyproject.toml",
        # a tool no workflow calls: only tools call would be refused
        f'ops.ttl:{peek}: warning: :status.peek: binding "http://10.1.2.3/peek" reaches a '
        "host outside the allowed ones, so tools call refuses it — host 10.1.2.3 is not in the "
        'allowed hosts (status.example.org); add it with --allow-host 10.1.2.3 (allow_hosts=['
        '..., "10.1.2.3"] in Python) or to allow-hosts in pyproject.toml',
    ], said


def test_the_projects_allow_hosts_are_held_to_as_well(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.horismos]\nallow-hosts = ["status.example.org"]\n', encoding="utf-8")
    code, said = _validate(tmp_path)
    assert code == 1 and len(said) == 2 and ":status.post:" in said[0], said


def test_hosts_allowed_or_no_list_say_nothing(tmp_path: Path) -> None:
    assert _validate(tmp_path) == (0, [])
    assert _validate(tmp_path, "--allow-host", "127.0.0.1", "--allow-host", "10.0.0.0/8") == (
        0, [])
