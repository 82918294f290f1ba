"""A proposal step whose model the environment gives no key: the run restarted the incident's
services (its first step acted), then failed at the proposal. Refused before any step, as a
model outside the allowed hosts and an HTTP header's missing variable are."""

from __future__ import annotations

import os
from pathlib import Path

from forked import horismos_forked

FILE = """\
@prefix :      <http://example.org/ops#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .

:Incident a owl:Class .
:Region a owl:Class .
:restartedAt a owl:DatatypeProperty .
:region a owl:ObjectProperty ; rdfs:range :Region .

:ops.restart a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :restartedAt ; horis:value horis:now ] ] ;
    horis:binding "python:restart" .

:ops.failover a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ;
                  horis:arg [ horis:name "region" ; horis:type :Region ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :region ; horis:type :Region ] ] ;
    horis:binding "python:failover" .

:Runbook a horis:Workflow ; horis:focusType :Incident ; horis:start :Restart .

:Restart a horis:ActionStep ;
    horis:tool :ops.restart ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] ;
    horis:next :Pick .

:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query "?option a :Region ." ] ;
    horis:rankBy "the closest region" ;
    horis:model "MODEL" ;
    horis:next :FailOver .

:FailOver a horis:ActionStep ;
    horis:tool :ops.failover ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] ,
               [ horis:arg "region" ; horis:var "option" ] .
"""

WORLD = """\
@prefix : <http://example.org/ops#> .
:inc1 a :Incident .
:euw a :Region .
"""

TOOLS = """\
def restart(incident):
    open("acted", "a").write("restart")
    return {}


def failover(incident, region):
    return {"region": region}
"""


def test_a_model_without_its_key_refuses_the_run_before_the_first_step(tmp_path: Path) -> None:
    for model, needs in (("anthropic:claude-test", "ANTHROPIC_API_KEY"),
                         ("openai:gpt-test", "OPENAI_API_KEY")):
        (tmp_path / "ops.ttl").write_text(FILE.replace("MODEL", model), encoding="utf-8")
        (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
        (tmp_path / "ops_tools.py").write_text(TOOLS, encoding="utf-8")
        env = {k: v for k, v in os.environ.items()
               if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                            "OPENAI_BASE_URL")}
        p = horismos_forked(tmp_path, "run", "ops.ttl", "--world", "world.ttl", "--tools",
                            "ops_tools.py", "--all", env=env, timeout=120)
        assert p.returncode == 2, p.stdout + p.stderr
        assert f"needs {needs} in the environment" in p.stderr, p.stderr
        assert "refused before any step fires" in p.stderr, p.stderr
        assert not (tmp_path / "acted").exists()  # the restart never ran
