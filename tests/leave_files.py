"""What the tests of a run that waits for a person share: the leave request whose workflow
starts at a wait for a manager's approval. :data:`WAITING` waits for an operator's answer and
nothing else; a file needing another wait (a timer, a timeout) adds its own :Approve to
:data:`LEAVE_HEAD`. They were copied from file to file before.
"""

from __future__ import annotations

LEAVE_HEAD = """@prefix :      <http://example.org/leave#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
:Request a owl:Class .
:Leave a horis:Workflow ; horis:focusType :Request ; horis:start :Approve .
"""

WAITING = LEAVE_HEAD + """\
:Approve a horis:WaitStep ;
    horis:reason "A manager approves the leave request." ;
    horis:wake horis:OperatorInput ; horis:delivery horis:Final .
"""
