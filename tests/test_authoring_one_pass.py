"""``horismos validate`` says every mistake in one pass (docs/reference/validate.md): one
mistake does not hide another. Each pair below was made in a copy of the triage workflow;
``validate`` said only the first, and mending it revealed the second on the next run — the
tool's warning about its retries held back while any error stood, a binding to a server
nothing declares dropped for a tool already found wrong. Now ``validate`` of both says what
``validate`` of each says, at the same line and no more."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from in_process import horismos_in_process
from workflow_edits import LAB, REBOOKING, TRIAGE

Edit = tuple[str, str]

QUEUE_BIND = 'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
NOTIFY_BIND = 'horis:bind [ horis:arg "patient" ; horis:var "this" ] .'

RETRIES = ("    horis:idempotent false .", "    horis:retries 2 ;\n    horis:idempotent false .")
"""A warning of the tool alone: retries on a tool that is not idempotent."""
READ_ONLY = ('horis:timeout "5s" ;', 'horis:timeout "5s" ;\n    horis:sideEffect horis:ReadOnly ;')
"""A warning of the tool alone: horis:ReadOnly on a tool that is not idempotent."""
OWN_ERROR = (NOTIFY_BIND, NOTIFY_BIND[:-2] + " ;\n    horis:onError :NotifyNurse .")
"""A warning of the step alone: its horis:onError is itself."""
MISNAMED_ARG = (QUEUE_BIND, QUEUE_BIND.replace('"patient"', '"patiant"'))
"""An error of the step the load finds: horis:bind names an argument the tool lacks."""
ZERO_TIMEOUT = ('horis:timeout "5s"', 'horis:timeout "0s"')
"""An error of the queue tool, which it is then modelled broken for."""
NOTIFY_ZERO_TIMEOUT = ('horis:timeout "2s"', 'horis:timeout "0s"')
"""The same of the notify tool."""
FOCUS_DATATYPE = ("horis:focusType :Patient ;", "horis:focusType xsd:string ;")
"""An error of the workflow."""
UNCLOSED = ("FILTER NOT EXISTS { ?this :assignedNurse ?n }",
            "FILTER NOT EXISTS { ?this :assignedNurse ?n ")
"""An error of the notify step: its horis:requires does not parse."""
OPTIONAL_REF = ("?this :queueRef ?ref .", "OPTIONAL { ?this :queueRef ?ref }")
"""A warning of the notify step found after the load: its "ref" bound only by an OPTIONAL."""
ILL_TYPED_VALUE = (":queuedAt ; horis:value horis:now", ':queuedAt ; horis:value "soon"')
"""An error of the queue tool's effect: a string for a property whose range is xsd:dateTime."""
QUEUE_NO_SERVER = ('"python:ehr_client.assign_queue"', '"mcp://nosuch/assign_queue"')
"""An error of the queue tool's binding, found after the load: no server "nosuch"."""
NOTIFY_NO_SERVER = ('"python:ehr_client.notify_nurse"', '"mcp://nosuch/notify_nurse"')
NOTIFY_CREDENTIALS = ('"python:ehr_client.notify_nurse"', '"https://u:pw@ehr.example/notify"')
"""An error of the notify tool's binding found after the load: credentials in its URL."""

RERUN = ("FILTER NOT EXISTS { ?this :queuedAt ?t }", "")
"""A flow-wide warning: nothing stops the queueing (not idempotent) on a second run."""
UNCLOSED_GUARD = ("{ ?this :queuedAt ?t }", "{ ?queue :queuedAt ?t }")
"""A warning of the queue step's guard: its tool writes :queuedAt on ?this, not ?queue."""
FORGOTTEN = (":Triage a horis:Workflow ;",
             ':Forgotten a horis:WaitStep ; horis:reason "a nurse confirms" ;\n'
             "    horis:wake horis:OperatorInput ; horis:delivery horis:Silent ;\n"
             '    horis:until "?this :assignedNurse ?n" .\n\n:Triage a horis:Workflow ;')
"""A flow-wide warning: a step no workflow reaches."""
ROUTE = ('horis:next :Route .\n\n:Route a horis:DecisionStep ;\n'
         '    horis:when [ horis:requires "RULE" ; horis:order 1 ; horis:next :NotifyNurse ] ;\n'
         "    horis:otherwise :NotifyNurse .")
SETTLED = ("horis:next :NotifyNurse .", ROUTE.replace("RULE", "?this :queuedAt ?t"))
"""A flow-wide warning: a rule that holds whenever its decision is reached."""
SHADOWED = ("horis:next :NotifyNurse .", ROUTE.replace("RULE", "?this :acuity :urgent").replace(
    "    horis:otherwise", '    horis:when [ horis:requires "?this :acuity :urgent" ; '
    "horis:order 2 ; horis:next :Hold ] ;\n    horis:otherwise") + "\n\n" + (
    ':Hold a horis:WaitStep ; horis:reason "x" ; horis:wake horis:OperatorInput ;\n'
    '    horis:delivery horis:Silent ; horis:until "?this :assignedNurse ?r" ;\n'
    "    horis:next :NotifyNurse ."))
"""A flow-wide warning: a rule the same as one before it, never taken."""
HELD = ("horis:next :NotifyNurse .",
        'horis:next :Hold .\n\n:Hold a horis:WaitStep ; horis:reason "x" ; '
        "horis:wake horis:OperatorInput ;\n    horis:delivery horis:Silent ; "
        'horis:until "?this :queueRef ?r" ;\n    horis:next :NotifyNurse .')
"""A flow-wide warning: a wait the step before it always ends."""
LOOP = (NOTIFY_BIND, NOTIFY_BIND[:-2] + " ;\n    horis:next :Ping ." + "".join(
    f"\n\n:{me} a horis:ActionStep ;\n    horis:tool :ehr.notify_nurse ;\n"
    '    horis:requires "?this :queueRef ?ref . ?nurse :onDuty true ." ;\n'
    '    horis:bind [ horis:var "this" ; horis:arg "patient" ] ;\n'
    f"    horis:next :{then} ."
    for me, then in (("Ping", "Pong"), ("Pong", "Ping"))))
"""A flow-wide warning: a loop nothing on it ends."""
MISSPELT_NEXT = ("horis:next :NotifyNurse .", "horis:next :NotifyNurze .")
"""An error of the queue step: horis:next to a step declared nowhere, one slip from one."""

PAIRS = {
    "retries beside a step's error": (RETRIES, MISNAMED_ARG),
    "retries beside the same tool's error": (RETRIES, ZERO_TIMEOUT),
    "read-only beside the workflow's error": (READ_ONLY, FOCUS_DATATYPE),
    "a step's own onError beside its pattern's error": (OWN_ERROR, UNCLOSED),
    "an undeclared server beside the tool's ill-typed value": (ILL_TYPED_VALUE, QUEUE_NO_SERVER),
    "an undeclared server beside the tool's timeout": (NOTIFY_NO_SERVER, NOTIFY_ZERO_TIMEOUT),
    "credentials in a URL beside the tool's timeout": (NOTIFY_CREDENTIALS, NOTIFY_ZERO_TIMEOUT),
    "an argument bound by an OPTIONAL beside a tool's error": (OPTIONAL_REF, ZERO_TIMEOUT),
    "a rerun beside its tool's timeout": (RERUN, ZERO_TIMEOUT),
    "a rerun beside a later step's error": (RERUN, UNCLOSED),
    "a guard its call never closes beside its tool's timeout": (UNCLOSED_GUARD, ZERO_TIMEOUT),
    "an unreachable step beside a misspelt horis:next": (FORGOTTEN, MISSPELT_NEXT),
    "a settled rule beside the workflow's error": (SETTLED, FOCUS_DATATYPE),
    "a rule shadowed beside a tool's ill-typed value": (SHADOWED, ILL_TYPED_VALUE),
    "a wait that never waits beside a later step's error": (HELD, UNCLOSED),
    "an endless loop beside the first step's error": (MISNAMED_ARG, LOOP),
    "an endless loop beside a misspelt horis:next": (LOOP, MISSPELT_NEXT),
    "an endless loop beside a workflow started nowhere": (
        LOOP, ("    horis:start :QueuePatient .", '    rdfs:comment "no start" .')),
    "a rule shadowed beside a workflow started nowhere": (
        SHADOWED, ("    horis:start :QueuePatient .", '    rdfs:comment "no start" .')),
    "a rerun and an unreachable step beside a horis:next to a tool": (
        RERUN, FORGOTTEN, ("horis:next :NotifyNurse .", "horis:next :ehr.notify_nurse .")),
}


def said(tmp_path: Path, *edits: Edit, workflow: tuple[Path, Path] = TRIAGE,
         options: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """What ``validate OPTIONS`` says of ``workflow`` (the triage workflow) with ``edits``
    made: each finding as the text of the line it is placed at, and its words after the
    place."""
    text = workflow[0].read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    folder = tmp_path / str(len(list(tmp_path.iterdir())))
    folder.mkdir()
    path = folder / workflow[0].name
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    done = horismos_in_process(tmp_path, "validate", str(path), str(workflow[1]), *options)
    assert "Traceback" not in done.stderr, done.stderr
    found = []
    for line in done.stdout.splitlines():
        if (m := re.match(rf"{re.escape(str(path))}:(\d+): (.*)", line)) is not None:
            found.append((lines[int(m[1]) - 1].strip(), m[2]))
    return sorted(found)


def _as_alone(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``found`` without what the other edit changes in a message: the line numbers the
    steps it adds push down, the steps it adds to a list of those declared."""
    return sorted((line, re.sub(r" on line \d+|one of: :[^—]*", "", words))
                  for line, words in found)


@pytest.mark.parametrize("edits", PAIRS.values(), ids=list(PAIRS))
def test_two_mistakes_are_said_as_each_is_alone(tmp_path: Path, edits: tuple[Edit, ...]) -> None:
    alone = [said(tmp_path, edit) for edit in edits]
    assert all(alone), alone
    assert _as_alone(said(tmp_path, *edits)) == _as_alone([p for a in alone for p in a])


MISLEADING = {
    "a misspelt horis:next: no step after it unreachable": (MISSPELT_NEXT,),
    "a horis:next to no step near its name: no step unreachable": (
        ("horis:next :NotifyNurse .", "horis:next :Elsewhere ."), FORGOTTEN),
    "a workflow's focus type: none of its steps unreachable": (FOCUS_DATATYPE,),
    "a workflow started nowhere: none of its steps unreachable, nor rerun": (
        RERUN, FORGOTTEN, ("    horis:start :QueuePatient .", '    rdfs:comment "no start" .')),
    "a guard that does not parse: no rerun": (
        ("FILTER NOT EXISTS { ?this :queuedAt ?t }", "FILTER NOT EXISTS { ?this :queuedAt ?t "),),
    "a horis:bind to no argument: no rerun guard on the wrong variable": (MISNAMED_ARG, RERUN),
    "an effect of no argument: no rerun of a tool that writes nothing": (
        ('horis:subject "patient" ;\n        horis:asserts [ horis:property :queuedAt',
         'horis:subject "patent" ;\n        horis:asserts [ horis:property :queuedAt'), RERUN),
    "an effect of no argument: no wait said to be ended by it": (
        ('horis:subject "patient" ;\n        horis:asserts [ horis:property :queuedAt',
         'horis:subject "patent" ;\n        horis:asserts [ horis:property :queuedAt'), HELD),
    'horis:idempotent "no": no rerun of a tool read as not idempotent': (
        ("horis:idempotent false .", 'horis:idempotent "no" .'), RERUN),
    "a rule that does not parse: its step not unreachable": (SETTLED, (
        '"?this :queuedAt ?t" ; horis:order 1 ; horis:next :NotifyNurse ]',
        '"?this :queuedAt ?t" ; horis:order 1 ; horis:next :NotifyNurse ] ;\n'
        '    horis:when [ horis:requires "?this :acuity {" ; horis:order 2 ;\n'
        '    horis:next :Orphan ]'), (
        ":Triage a horis:Workflow ;",
        ':Orphan a horis:WaitStep ; horis:reason "x" ; horis:wake horis:OperatorInput ;\n'
        '    horis:delivery horis:Silent ; horis:until "?this :assignedNurse ?n" .\n\n'
        ":Triage a horis:Workflow ;")),
    "a tool's timeout: a wait on what it writes not said to wait for ever": (
        ("horis:next :NotifyNurse .",
         'horis:next :Hold .\n\n:Hold a horis:WaitStep ; horis:reason "x" ; '
         "horis:wake horis:OperatorInput ;\n    horis:delivery horis:Silent ; horis:until "
         '"?this :acuity ?a . FILTER NOT EXISTS { ?this :notifiedAt ?t }" ;\n'
         "    horis:next :NotifyNurse ."), NOTIFY_ZERO_TIMEOUT),
}


@pytest.mark.parametrize("edits", MISLEADING.values(), ids=list(MISLEADING))
def test_no_flow_warning_follows_from_an_error(tmp_path: Path, edits: tuple[Edit, ...]) -> None:
    # the warnings about the flow as a whole are said beside the errors, on the flow the
    # errors give once mended as they say: one an error misleads would be false once mended
    found = said(tmp_path, *edits)
    assert [m.split(":", 1)[0] for _, m in found] == ["error"], found


NOTIFY_OTHER_HOST = ('"python:ehr_client.notify_nurse"', '"https://api.example/notify"')
NOTIFY_WARD_SERVER = ('"python:ehr_client.notify_nurse" ;',
                      '"mcp://ward/notify_nurse" ;')
WARD = (":Triage a horis:Workflow ;",
        ':ward a horis:McpServer ; horis:url "https://mcp.example/mcp" .\n\n'
        ":Triage a horis:Workflow ;")


@pytest.mark.parametrize("host", [(NOTIFY_OTHER_HOST,), (NOTIFY_WARD_SERVER, WARD)],
                         ids=["an HTTP binding", "an MCP server's horis:url"])
def test_a_host_outside_the_allowed_ones_is_said_beside_the_tools_error(
        tmp_path: Path, host: tuple[Edit, ...]) -> None:
    # the binding of a tool found wrong was not judged; a server's url, used by such a tool,
    # was judged with a look-up of the tool among the right ones alone: a KeyError traceback
    allow = ("--allow-host", "ehr.example")
    alone = (said(tmp_path, *host, options=allow),
             said(tmp_path, NOTIFY_ZERO_TIMEOUT, options=allow))
    assert any("outside the allowed ones" in m for _, m in alone[0]), alone[0]
    both = said(tmp_path, *host, NOTIFY_ZERO_TIMEOUT, options=allow)
    assert both == sorted([*alone[0], *alone[1]])


def test_retries_beside_an_idempotent_flag_that_is_no_boolean_is_not_warned_of(
        tmp_path: Path) -> None:
    # read as false, the flag gave "retries on a tool that is not idempotent" beside the
    # error saying to write true or false: the author had meant true
    found = said(tmp_path, ("horis:retries 1 ;\n    horis:idempotent true .",
                            'horis:retries 1 ;\n    horis:idempotent "yes" .'))
    assert [m.split(":", 1)[0] for _, m in found] == ["error"], found
    assert 'horis:idempotent must be true or false, not "yes"' in found[0][1]


def test_an_argument_a_pattern_that_does_not_parse_would_give_is_not_said_unbound(
        tmp_path: Path) -> None:
    # the pattern binds ?rf for the "ref" it is meant to give; not parsed, it binds nothing,
    # and "no pattern variable ?ref" follows from the syntax error said at its line
    found = said(tmp_path, UNCLOSED, ("?this :queueRef ?ref .", "?this :queueRef ?rf ."))
    assert [m.split(":", 1)[0] for _, m in found] == ["error"], found


def test_a_model_without_its_key_is_said_beside_a_tools_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    unkeyed = ('horis:model "lexical:bm25" ;', 'horis:model "anthropic:claude-test" ;')
    zero = ('horis:timeout "5s" ;', 'horis:timeout "0s" ;')
    alone = [said(tmp_path, edit, workflow=REBOOKING) for edit in (unkeyed, zero)]
    assert "needs ANTHROPIC_API_KEY" in alone[0][-1][1], alone[0]
    assert said(tmp_path, unkeyed, zero, workflow=REBOOKING) == sorted([*alone[0], *alone[1]])


def test_a_definitions_error_beside_a_world_says_what_the_world_decides(
        tmp_path: Path) -> None:
    # `validate --world` of definitions with an error returned before the world was read:
    # a guard's term only the world states was said to be "used by no loaded data", and
    # the world's own misspelt property was not said
    world = tmp_path / "world.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     ':p1 a :Patient ; :queuedStamp "2026-01-01T00:00:00Z" .\n'
                     ":p2 a :Patient ; :acuty :urgent .\n", encoding="utf-8")
    stamp = (":queuedAt ?t }", ":queuedStamp ?t }")

    def validate(*edits: Edit, beside: Path = world) -> list[str]:
        text = TRIAGE[0].read_text(encoding="utf-8")
        for old, new in edits:
            text = text.replace(old, new)
        path = tmp_path / TRIAGE[0].name
        path.write_text(text, encoding="utf-8")
        done = horismos_in_process(tmp_path, "validate", str(path), str(TRIAGE[1]), "--world",
                                   str(beside), "--store", "memory")
        return [line.split(": ", 1)[1] for line in done.stdout.splitlines() if ".ttl:" in line]

    valid = validate(stamp)
    assert len(valid) == 1 and "the world uses the property :acuty" in valid[0], valid
    found = validate(stamp, ZERO_TIMEOUT)
    assert sorted(found) == sorted([*valid, *(p for p in validate(ZERO_TIMEOUT)
                                              if p.startswith("error"))]), found
    # a world that does not parse is said beside the definitions' errors, not for them
    broken = tmp_path / "broken.ttl"
    broken.write_text("@prefix : <http://example.org/ehr#> .\n:p1 a :Patient ;\n",
                      encoding="utf-8")
    found = validate(stamp, ZERO_TIMEOUT, beside=broken)
    assert [p.split(":", 1)[0] for p in found] == ["error", "error", "warning"], found
    assert "cannot read world data" in found[0] and "horis:timeout" in found[1], found


def test_a_command_binding_whose_program_is_missing_is_said_beside_its_tools_error(
        tmp_path: Path) -> None:
    # checked only of tools the load found right: the program's warning came once the
    # timeout was mended
    source = (Path(__file__).parent / "fixtures" / "authoring" / "wordcount.ttl").read_text(
        encoding="utf-8")
    (tmp_path / "wordcount.ttl").write_text(
        source.replace('"python3" "count.py"', '"nosuchprog3" "count.py"')
        .replace('horis:timeout "10s"', 'horis:timeout "0s"'), encoding="utf-8")
    done = horismos_in_process(tmp_path, "validate", "wordcount.ttl")
    assert [line.split(": ")[1] for line in done.stdout.splitlines()[:-1]] == [
        "warning", "error"], done.stdout
    assert "program 'nosuchprog3' is not found" in done.stdout, done.stdout


def test_a_proposal_is_not_told_what_a_step_it_goes_on_to_found_wrong_binds(
        tmp_path: Path) -> None:
    # the fallback's step has a pattern that does not parse, so binds nothing: the proposal
    # was told "nothing on the way gives ?option, so :RebookOnProposal fails there" where,
    # mended, its pattern binds ?option to any node: the warning is another one
    fallback = ("horis:fallback :AskOperator .", "horis:fallback :RebookOnProposal .")
    unclosed = ('?any } """ ;\n    horis:bind [ horis:arg "booking" ; horis:var "this" ] ,',
                '?any """ ;\n    horis:bind [ horis:arg "booking" ; horis:var "this" ] ,')
    found = said(tmp_path, fallback, unclosed, workflow=REBOOKING)
    assert not [m for _, m in found if ":ProposeFlight" in m], found
    assert [m for _, m in found if m.startswith("error")], found


def test_a_decision_with_no_otherwise_leaves_no_step_said_unreachable(tmp_path: Path) -> None:
    # :File was the horis:otherwise: without it, "unreachable" at :File followed from the
    # error, which asks for the horis:otherwise that reaches it
    found = said(tmp_path, ("    ] ;\n    horis:otherwise :File .", "    ] ."), workflow=LAB)
    assert [m.split(":", 1)[0] for _, m in found] == ["error"], found
    assert "has no horis:otherwise" in found[0][1], found


def test_a_focus_given_to_a_misnamed_argument_is_not_said_unnamed(tmp_path: Path) -> None:
    # ?this given as "reslt", which the tool lacks: the step's pattern, which names only
    # ?clinician, was told it "never names ?this" — mended to "result", it is given it
    unguarded = (" FILTER NOT EXISTS { ?this :escalatedTo ?paged } \"\"\"", " \"\"\"")
    misnamed = ('horis:bind [ horis:arg "result" ; horis:var "this" ] .\n\n:File',
                'horis:bind [ horis:arg "reslt" ; horis:var "this" ] .\n\n:File')
    alone = said(tmp_path, unguarded, workflow=LAB)
    assert not [m for _, m in alone if "never names ?this" in m], alone
    found = said(tmp_path, unguarded, misnamed, workflow=LAB)
    assert not [m for _, m in found if "never names ?this" in m], found
