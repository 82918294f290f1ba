"""What the tests of a call to the test MCP server (tests/servers/mcp_server.py) share: the
Turtle their definitions open with (the prefixes, the patient class, the queue reference the
server's ``record`` answers) and the ``t.record`` tool's arguments and effect. Each test file
declares the ``:clinic`` server (its URL, or the command that starts it), the tool's binding
and timeout, and its own workflow around these pieces; they were copied from file to file.
"""

from __future__ import annotations

CLINIC_HEAD = """\
@prefix :      <http://example.org/mcp#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:queueRef a owl:DatatypeProperty .
"""

# the tool's own lines (binding, timeout …) follow
RECORD_TOOL = """\
:t.record a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ] ;
"""

ONE_PATIENT = "@prefix : <http://example.org/mcp#> .\n:p1 a :Patient .\n"
