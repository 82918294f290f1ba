"""What the tests of a ProposalStep over a trip share: the Turtle of booking the hotel chosen
(the tool and the workflow that starts at ``:Pick``), the wait a fallback goes to, the tool
itself, and the model's side: the scripted model server (tests/servers/llm_server.py) a
provider is pointed at, and a ranking it answers.

Each test file declares its own ``:Pick`` (its model, its fallback) and ``:Book`` (its
requirement) around these pieces; they were copied from file to file before.
"""

from __future__ import annotations

import json

import pytest
from rdflib import Namespace, URIRef
from servers.llm_server import LlmServer

T = Namespace("http://example.org/trip#")

PREFIXES = """\
@prefix :      <http://example.org/trip#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

# the booking tool, and the workflow of a request that starts at :Pick (the file's own)
BOOK_TOOL = """
:t.book a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type :Request ] ;
                  horis:arg [ horis:name "hotel" ; horis:type :Hotel ] ] ;
    horis:effect [ horis:subject "request" ;
                   horis:asserts [ horis:property :booked ; horis:type :Hotel ] ] ;
    horis:binding "python:book" .

:Trip a horis:Workflow ; horis:focusType :Request ; horis:start :Pick .
"""

# where a proposal's fallback goes: a person picks
ASK_HUMAN = """
:AskHuman a horis:WaitStep ;
    horis:reason "Pick a hotel." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :booked ?h ." .
"""


def book(request: URIRef, hotel: URIRef) -> dict[str, object]:
    return {"booked": hotel}


def answer(ranking: list[URIRef], confidence: float) -> dict[str, str]:
    """A model's well-formed ranking, as the scripted server answers it."""
    return {"text": json.dumps({"ranking": [str(r) for r in ranking],
                                "confidence": confidence})}


def configure(monkeypatch: pytest.MonkeyPatch, provider: str, server: LlmServer) -> str:
    """Point ``provider`` (``anthropic`` / ``openai``) at ``server``, key ``test-key``: the
    model to declare."""
    if provider == "anthropic":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        return "anthropic:claude-test"
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return "openai:local-model"
