"""Structural mistakes in the shipped workflows that used to validate, or to be reported as
something else: each is caught before anything runs, at the file and line where it is written,
with what to write instead.

Each test edits one line of ``workflows/triage.ttl`` or ``workflows/lab_review.ttl`` — for
waits ``workflows/rebooking.ttl``, the one with a WaitStep — (the line found by its text, so the
edit cannot silently miss) and loads it as ``horismos validate`` does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import LAB, REBOOKING, TRIAGE, edited, problems, the_error, the_one

from horismos import Agent, AuthoringError, Problem, UsageError, load_definitions
from horismos._contract import server_problems, sometimes_unbound, unbound_arguments
from horismos._policy import allowed


def check(p: Problem, path: Path, line: int, node: str, said: str, hint: str) -> None:
    assert (p.file, p.line, p.node) == (str(path), line, node), str(p)
    assert said in p.message, str(p)
    assert p.hint is not None and hint in p.hint, str(p)


# -- arguments and bindings -------------------------------------------------------------------

@pytest.mark.parametrize(("binding", "said"), [
    ('"python:"', "names no function"),
    ('"python:ehr_client..assign_queue"', "names no function"),
    ('"http:///assign"', "is no URL a request can be sent to (no host)"),
    ('"https://"', "is no URL a request can be sent to (no host)"),
    ('"http://127.0.0.1:8089:80/assign"', "is no URL a request can be sent to"),
    ('"http://127.0.0.1:99999/assign"', "Port out of range"),
])
def test_a_binding_no_call_can_reach_is_an_error_at_its_line(
    tmp_path: Path, binding: str, said: str
) -> None:
    """Each passed validate and failed in the client when the step ran (an invalid port as
    "unhandled errors in a TaskGroup")."""
    path, line = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', binding)
    p = the_error(problems(path, TRIAGE))
    assert said in p.message and (p.file, p.line) == (str(path), line), str(p)


@pytest.mark.parametrize(("binding", "said", "hint"), [
    ('"python:ehr_client.assign_queue()"', "is a call, not a function's name",
     'write "python:ehr_client.assign_queue"'),
    ('"python:ehr_client.assign_queue(patient, level)"', "is a call, not a function's name",
     'write "python:ehr_client.assign_queue"'),
    ('"python:ehr_client:assign_queue"', "separates module and function with ':'",
     'write "python:ehr_client.assign_queue"'),
    ('"python:ehr-client.assign_queue"', "is no Python name",
     'write "python:module.function"'),
])
def test_a_malformed_python_target_is_an_error_at_its_line_without_tools(
    tmp_path: Path, binding: str, said: str, hint: str
) -> None:
    """``python:mod.fn()`` and the entry-point form ``python:pkg.mod:fn`` validated clean
    without --tools (nothing looks a binding up then) and failed only when the step ran."""
    path, line = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', binding)
    p = the_error(problems(path, TRIAGE))
    check(p, path, line, ":ehr.assign_queue", f"binding {binding} is malformed", hint)
    assert said in p.message, str(p)


@pytest.mark.parametrize(("binding", "meant"), [
    ('"mcp:ehr/assign_queue"', "mcp://ehr/assign_queue"),
    # not "mcp://ehr#assign_queue", which names no tool of the server either
    ('"mcp:ehr#assign_queue"', "mcp://ehr/assign_queue"),
    ('"mcp:ehr:assign_queue"', "mcp://ehr/assign_queue"),
    ('"http:ehr.example.org/queue"', "http://ehr.example.org/queue"),
    ('"ehr.example.org/queue"', "https://ehr.example.org/queue"),
    ('"127.0.0.1:8080/queue"', "https://127.0.0.1:8080/queue"),
    ('"Python:ehr_client.assign_queue"', "python:ehr_client.assign_queue"),
    # the scheme misspelt: told only the list of every form
    ('"htp://127.0.0.1:8781/status"', "http://127.0.0.1:8781/status"),
    ('"htps://status.example.org/post"', "https://status.example.org/post"),
    ('"pyhton:ehr_client.assign_queue"', "python:ehr_client.assign_queue"),
    ('"mpc://ehr/assign_queue"', "mcp://ehr/assign_queue"),
])
def test_a_binding_of_a_scheme_written_wrong_gets_the_binding_meant(
    tmp_path: Path, binding: str, meant: str
) -> None:
    """``mcp:ehr/assign_queue`` (the ``//`` left out), a URL without its scheme: "no known
    scheme" and the list of every form, with nothing about which one was meant."""
    path, line = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', binding)
    p = the_error(problems(path, TRIAGE))
    check(p, path, line, ":ehr.assign_queue", f"binding {binding} has no known scheme",
          f'did you mean "{meant}"?')


@pytest.mark.parametrize(("old", "new", "said", "hint"), [
    ("horis:wake horis:OperatorInput", "horis:wake horis:Webhook", "horis:Webhook",
     "horis:wake takes one of: horis:External, horis:OperatorInput, horis:System, "
     "horis:TaskResult, horis:Timer"),
    ("horis:delivery horis:Final", "horis:delivery horis:Quiet", "horis:Quiet",
     "horis:delivery takes one of: horis:Final, horis:Silent"),
])
def test_a_value_of_a_closed_horis_term_that_is_none_gets_the_values_it_takes(
    tmp_path: Path, old: str, new: str, said: str, hint: str
) -> None:
    """``horis:delivery horis:Quiet``, like no term of the vocabulary: "not a Horismos term —
    see ontologies/horis.ttl for the vocabulary", when the property takes two values."""
    path, line = edited(tmp_path, REBOOKING, old, new)
    p = the_error(problems(path, REBOOKING))
    check(p, path, line, ":AskOperator", f"{said} is not a Horismos term", hint)


WHEN_TAKES = "horis:when [ … ] takes horis:next, horis:order and horis:requires"


@pytest.mark.parametrize(("pair", "old", "term", "hint"), [
    (LAB, "horis:order 1 ;", "horis:rule", WHEN_TAKES),
    # near horis:when, the place it is written in: not what a rule takes either
    (LAB, "horis:order 1 ;", "horis:condition", WHEN_TAKES),
    (LAB, "horis:order 1 ;", "horis:otherwize",
     "did you mean horis:otherwise? It is not written inside " + WHEN_TAKES.replace(
         " takes", ", which takes")),
    (TRIAGE, "horis:property :queueRef ;", "horis:currency",
     "horis:asserts [ … ] takes horis:fromText, horis:key, horis:many, horis:optional, "
     "horis:property, horis:type and horis:value"),
])
def test_a_term_of_no_vocabulary_written_inside_a_node_gets_what_the_node_takes(
    tmp_path: Path, pair: tuple[Path, Path], old: str, term: str, hint: str
) -> None:
    """``horis:when [ horis:rule "…" ; … ]``: "not a Horismos term — see ontologies/horis.ttl
    for the vocabulary", a hundred terms to find the rule's three among; ``horis:condition``
    was told "did you mean horis:when?", a rule inside a rule."""
    path, line = edited(tmp_path, pair, old, f'{old} {term} "x" ;')
    p = the_error(problems(path, pair))
    assert p.line == line and p.message == f"{term} is not a Horismos term", str(p)
    assert p.hint == hint, str(p)


@pytest.mark.parametrize(("term", "meant"), [
    # as predicates, the near names were horis:Approval, a class, and horis:approvalsAsked,
    # which the runtime writes: the fix told would not have asked anyone for approval
    ("horis:needsApproval", "horis:requiresApproval"),
    ("horis:approvalRequired", "horis:requiresApproval"),
    ("horis:onFailure", "horis:onError"),
])
def test_a_misspelt_horis_predicate_is_told_the_property_meant(
    tmp_path: Path, term: str, meant: str
) -> None:
    """``horis:needsApproval true`` on a tool that acts: "did you mean horis:Approval?", a
    class, which written there is no Horismos term either."""
    path, line = edited(
        tmp_path, TRIAGE, 'horis:timeout "5s" ;', f'horis:timeout "5s" ;\n    {term} true ;'
    )
    p = the_error(problems(path, TRIAGE))
    check(p, path, line + 1, ":ehr.assign_queue", f"{term} is not a Horismos term",
          f"did you mean {meant}?")


@pytest.mark.parametrize(("kind", "meant"), [
    ("horis:ActionStp", "horis:ActionStep"),
    ("horis:WaitStp", "horis:WaitStep"),
])
def test_a_step_typed_with_a_misspelt_kind_is_said_once_at_its_type(
    tmp_path: Path, kind: str, meant: str
) -> None:
    """``:NotifyNurse a horis:ActionStp``: besides the slip at its type, the step before it
    was told "horis:next points to :NotifyNurse, which is not declared — declare
    :NotifyNurse as a step", a second error for the one mistake, its fix not the one to
    make."""
    path, line = edited(
        tmp_path, TRIAGE, ":NotifyNurse a horis:ActionStep", f":NotifyNurse a {kind}"
    )
    p = the_error(problems(path, TRIAGE))
    check(p, path, line, ":NotifyNurse", f"{kind} is not a Horismos term",
          f"did you mean {meant}?")


@pytest.mark.parametrize("term", ["horis:backoff", "horis:retryDelay"])
def test_a_retry_spacing_term_says_horismos_has_none_and_what_retries_do(
    tmp_path: Path, term: str
) -> None:
    """``horis:backoff "2s"`` got "not a Horismos term — see ontologies/horis.ttl": the
    modeler still did not know whether retries are spaced, nor how to space them."""
    path, line = edited(tmp_path, TRIAGE, "horis:retries 1 ;", f'horis:retries 1 ; {term} "2s" ;')
    p = the_error(problems(path, TRIAGE))
    assert f"{term} is not a Horismos term" in p.message and p.line == line, str(p)
    assert p.hint is not None and "Horismos has no backoff or retry delay" in p.hint, str(p)
    assert "horis:retries N tries a failed call again at once" in p.hint
    assert "inside the tool's own client" in p.hint


def test_a_side_effect_class_misspelt_in_allow_gets_the_class_meant() -> None:
    with pytest.raises(UsageError) as e:
        allowed("ReadOnly,HostStateWrite,ExternalComit")
    assert str(e.value).endswith("; did you mean ExternalCommit?")


@pytest.mark.parametrize(("binding", "sent", "fixed"), [
    ('"http://127.0.0.1:18765/patients/{patient}/queue"',
     "http://127.0.0.1:18765/patients/%7Bpatient%7D/queue", "http://127.0.0.1:18765/patients/queue"),
    ('"https://ehr.example.org/queue?patient={patient}&level=1"',
     "https://ehr.example.org/queue?patient={patient}&level=1",
     "https://ehr.example.org/queue?level=1"),
])
def test_an_http_url_with_placeholders_is_an_error_at_its_line(
    tmp_path: Path, binding: str, sent: str, fixed: str
) -> None:
    """A cmd: binding fills {patient} into its argv, so a modeler wrote one into a URL too: it
    validated, and every request went to the placeholder's own text, the patient in the JSON
    body the binding always POSTs."""
    path, line = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', binding)
    check(the_error(problems(path, TRIAGE)), path, line, ":ehr.assign_queue",
          f"has {{patient}} in its URL, but an HTTP binding fills in no placeholders: every "
          f"request goes to {sent}, and the arguments are POSTed as a JSON object",
          f'write horis:binding "{fixed}"')


def test_a_header_on_a_binding_that_sends_no_request_is_a_warning(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, 'horis:binding "python:ehr_client.assign_queue" ;',
                        'horis:header [ horis:name "Authorization" ; horis:fromEnv "TOKEN" ] ;\n'
                        '    horis:binding "python:ehr_client.assign_queue" ;')
    (p,) = [p for p in problems(path, TRIAGE) if "horis:header" in p.message]
    assert p.severity == "warning" and "never used" in p.message and p.line == line



def test_two_arguments_of_one_name_are_an_error_at_the_second(tmp_path: Path) -> None:
    """A step binds, and the binding receives, one value per name: with two declarations of
    "nurse" (one a :Nurse, one a string) which type is checked would be chance."""
    path, line = edited(
        tmp_path, TRIAGE,
        'horis:arg [ horis:name "ref"     ; horis:type xsd:string ]',
        'horis:arg [ horis:name "ref"     ; horis:type xsd:string ] ;\n'
        '        horis:arg [ horis:name "nurse" ; horis:type xsd:string ]')
    check(the_error(problems(path, TRIAGE)), path, line + 1, ":ehr.notify_nurse",
          f'argument "nurse" is declared again (first at line {line - 1})',
          'remove this horis:arg [ horis:name "nurse" … ], or give it a name of its own')


def test_one_argument_bound_twice_is_an_error(tmp_path: Path) -> None:
    """The run took one of the two variables and dropped the other without a word."""
    path, line = edited(
        tmp_path, TRIAGE,
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] , '
        '[ horis:arg "patient" ; horis:var "nurse" ] .')
    check(the_error(problems(path, TRIAGE)), path, line, ":NotifyNurse",
          'horis:bind gives argument "patient" twice (?nurse, ?this)',
          'keep one horis:bind [ horis:arg "patient" ; horis:var "…" ]')


# -- waits ------------------------------------------------------------------------------------

"""The shipped workflow with a WaitStep (triage and lab review have none)."""


def test_a_timer_wait_without_a_timeout_is_an_error(tmp_path: Path) -> None:
    """horis:Timer is "ends when its horis:timeout elapses": with none, no timer ever ends it
    and ``horismos wake`` never finds it due by time."""
    path, line = edited(tmp_path, REBOOKING, "horis:wake horis:OperatorInput ;",
                        "horis:wake horis:Timer ;")
    check(the_error(problems(path, REBOOKING)), path, line, ":AskOperator",
          "horis:wake horis:Timer, but the step has no horis:timeout, so no timer ever ends "
          "the wait: only its horis:until can",
          'add horis:timeout "2h"')


def test_a_timer_wait_without_a_timeout_or_until_would_wait_for_ever(tmp_path: Path) -> None:
    path, line = edited(
        tmp_path, REBOOKING,
        'horis:wake horis:OperatorInput ;\n    horis:delivery horis:Final ;\n'
        '    horis:until "?this :operatorChoice ?flight ." ;',
        "horis:wake horis:Timer ;\n    horis:delivery horis:Final ;")
    check(the_error(problems(path, REBOOKING)), path, line, ":AskOperator",
          "`horismos wake` never finds it due, and unless resumed by hand it waits for ever",
          'add horis:timeout "2h"')


def test_on_timeout_without_a_timeout_is_an_error_at_its_line(tmp_path: Path) -> None:
    """The branch could never be taken: the wait never times out."""
    path, line = edited(tmp_path, REBOOKING, "horis:next :RebookOnOperatorChoice .",
                        "horis:onTimeout :RebookOnOperatorChoice .")
    check(the_error(problems(path, REBOOKING)), path, line, ":AskOperator",
          "horis:onTimeout :RebookOnOperatorChoice, but the step has no horis:timeout: the "
          "wait never times out, so :RebookOnOperatorChoice is never taken",
          'add horis:timeout "2h" (or "PT2H"), after which the wait continues at '
          ":RebookOnOperatorChoice; or remove horis:onTimeout")
    # with a timeout, the same branch is fine
    path, _ = edited(tmp_path, REBOOKING, "horis:next :RebookOnOperatorChoice .",
                     'horis:onTimeout :RebookOnOperatorChoice ; horis:timeout "2h" .')
    assert [p for p in problems(path, REBOOKING) if p.severity == "error"] == []


LEAD_APPROVES = (
    "horis:next :LeadApproves .\n"
    ":approvedBy rdfs:domain :Patient ; rdfs:range :Nurse .\n"
    ":LeadApproves a horis:WaitStep ;\n"
    '    horis:reason "the shift lead approves paging a nurse" ;\n'
    "    horis:wake horis:OperatorInput ;\n"
    "    horis:delivery horis:Final ;\n"
    '    horis:until "?this :approvedBy ?lead ." ;\n'
    '    horis:timeout "1s" ;\n'
    "    horis:next :NotifyNurse ."
)

ESCALATION = """
:AskTheWard a horis:WaitStep ; horis:reason "no lead approved in time" ;
    horis:wake horis:OperatorInput ; horis:delivery horis:Final .
"""


def test_a_timeout_without_on_timeout_that_goes_on_untested_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """Past its timeout the wait goes on at horis:next, as documented — the way an answered
    one does: `horismos wake` continued to :NotifyNurse and paged the nurse with no lead's
    approval, and validate said "valid"."""
    path, line = edited(tmp_path, TRIAGE, "horis:next :NotifyNurse .", LEAD_APPROVES)
    check(the_one(problems(path, TRIAGE), "warning"), path, line + 7, ":LeadApproves",
          "horis:timeout with no horis:onTimeout: once it passes with the wait unanswered, the "
          "instance goes on to :NotifyNurse (horis:next) as if horis:until had held, though "
          "it never did, and :NotifyNurse's horis:requires does not test :approvedBy: it "
          "acts all the same",
          "add horis:onTimeout :SomeStep for a wait nobody answered in time (an escalation, a "
          "reminder), or repeat the until's pattern (?this :approvedBy ?lead .) in "
          ":NotifyNurse's horis:requires")


@pytest.mark.parametrize(("old", "new", "more"), [
    # an escalation for the wait nobody answered
    ('    horis:timeout "1s" ;\n',
     '    horis:timeout "1s" ;\n    horis:onTimeout :AskTheWard ;\n', ESCALATION),
    # the step after tests the approval again: it acts only once the lead approved
    ("?this :queueRef ?ref .", "?this :queueRef ?ref ; :approvedBy ?lead .", ""),
    # a timer's wait: its timeout is what it waits for, the until only ends it sooner
    ("horis:wake horis:OperatorInput ;\n    horis:delivery horis:Final ;\n    horis:until",
     "horis:wake horis:Timer ;\n    horis:delivery horis:Final ;\n    horis:until", ""),
])
def test_a_timeout_the_flow_answers_for_says_nothing(
        tmp_path: Path, old: str, new: str, more: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, "horis:next :NotifyNurse .", LEAD_APPROVES)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new) + more, encoding="utf-8")
    assert problems(path, TRIAGE) == []


def test_a_timeout_on_the_operator_wait_of_rebooking_says_nothing(tmp_path: Path) -> None:
    """:RebookOnOperatorChoice requires the operator's choice the wait's until tests."""
    path, _ = edited(tmp_path, REBOOKING, "    horis:next :RebookOnOperatorChoice .",
                     '    horis:timeout "1s" ;\n    horis:next :RebookOnOperatorChoice .')
    assert problems(path, REBOOKING) == []


# -- horis:onError to the step itself ----------------------------------------------------------


@pytest.mark.parametrize(("step", "anchor"), [
    # ehr.notify_nurse is idempotent: validate said nothing
    (":NotifyNurse", '    horis:bind [ horis:arg "patient" ; horis:var "this" ] .'),
    # ehr.assign_queue is not: validate said "each time round calls it again", which it does not
    (":QueuePatient", "    horis:next :NotifyNurse ."),
])
def test_on_error_to_the_step_itself_is_a_warning_at_its_line(
        tmp_path: Path, step: str, anchor: str) -> None:
    """It reads as "try again": the instance came back with nothing done since, the run
    stopped it as a loop that would never end — and said the step "declares no
    horis:onError"."""
    path, line = edited(tmp_path, TRIAGE, anchor,
                        f"{anchor[:-2]} ;\n    horis:onError {step} .")
    check(the_one(problems(path, TRIAGE), "warning"), path, line + 1, step,
          f"horis:onError {step} is the step itself: when it fails the instance comes straight "
          f"back to {step} with nothing done since, and the run stops it there as a loop that "
          "would never end — the failed call is not tried again, and the instance fails",
          "horis:retries on the tool is what tries a failed call again")


# -- MCP servers ------------------------------------------------------------------------------

MCP_NURSE = 'horis:binding "mcp://ward/notify_nurse" ;'


def test_an_mcp_binding_to_a_server_nothing_declares_is_refused_by_validate(
        tmp_path: Path) -> None:
    """It validated, and the run refused at its start naming no file or line. Loading still
    succeeds (an Agent may be given the server from Python); validate, which cannot be, refuses."""
    path, line = edited(tmp_path, TRIAGE, 'horis:binding "python:ehr_client.notify_nurse" ;',
                        MCP_NURSE)
    defs = load_definitions([path, TRIAGE[1]])
    [p] = server_problems(defs)
    check(p, path, line, ":ehr.notify_nurse",
          'binding "mcp://ward/notify_nurse" names MCP server "ward", which no '
          "horis:McpServer declares (declared: none)",
          'declare it: :ward a horis:McpServer ; horis:command "python"')
    assert p.severity == "error" and p.hint is not None and 'horis:url "http://' in p.hint
    assert server_problems(defs, passed=["ward"]) == []  # given to the Agent from Python

    done = horismos_forked(".", "validate", str(path), str(TRIAGE[1]), timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path}:{line}: error: :ehr.notify_nurse: binding" in done.stdout, done.stdout


def test_an_mcp_binding_to_a_misspelt_server_suggests_the_declared_one(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, 'horis:binding "python:ehr_client.notify_nurse" ;',
                        'horis:binding "mcp://wards/notify_nurse" ;')
    servers = tmp_path / "servers.ttl"
    servers.write_text("@prefix : <http://example.org/ehr#> .\n"
                       "@prefix horis: <https://w3id.org/horismos#> .\n"
                       ':ward a horis:McpServer ; horis:url "http://127.0.0.1:1/mcp" .\n',
                       encoding="utf-8")
    [p] = server_problems(load_definitions([path, servers, TRIAGE[1]]))
    check(p, path, line, ":ehr.notify_nurse", '(declared: "ward")',
          'did you mean "mcp://ward/notify_nurse"? Or declare it: :wards a horis:McpServer')


def test_an_mcp_binding_without_a_tool_name_is_refused_at_its_line(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, 'horis:binding "python:ehr_client.notify_nurse" ;',
                        'horis:binding "mcp://ward" ;')
    [p] = server_problems(load_definitions([path, TRIAGE[1]]))
    check(p, path, line, ":ehr.notify_nurse",
          'binding "mcp://ward" names no tool of the server', 'write "mcp://SERVER/TOOL"')


# -- ?this misspelt ---------------------------------------------------------------------------


def warnings_of(found: list[Problem]) -> list[Problem]:
    assert [p for p in found if p.severity == "error"] == [], "\n".join(map(str, found))
    return [p for p in found if p.severity == "warning"]


def test_a_rule_that_misspells_this_and_never_names_it_is_warned_at_the_variable(
        tmp_path: Path) -> None:
    """?tihs is free: the rule is no longer about the result at hand and holds as soon as
    any result in the world is critical, so every result would be escalated."""
    path, line = edited(tmp_path, LAB, "?this :value ?v ; a ?kind .",
                        "?tihs :value ?v ; a ?kind .")
    [p] = warnings_of(problems(path, LAB))
    check(p, path, line, ":IsCritical",
          "horis:requires uses ?tihs but never ?this, the instance's focus: as written it is "
          "not about the focus and holds for any match in the world", "did you mean ?this?")


def test_a_misspelt_this_beside_this_is_warned_on_its_own_line_of_the_pattern(
        tmp_path: Path) -> None:
    """Still a slip with ?this written too: ?This picks its limit from any node that has one,
    and the warning is on the pattern's second line, where ?This is; in triage the FILTER
    names ?this while ?ths takes the acuity of any patient."""
    path, line = edited(tmp_path, LAB, "?kind :criticalAbove ?limit .",
                        "?This :criticalAbove ?limit .")
    [p] = warnings_of(problems(path, LAB))
    check(p, path, line, ":IsCritical", "horis:requires uses ?This beside ?this: ?This is not "
          "the instance's focus but any node that matches", "did you mean ?this?")

    path, line = edited(tmp_path, TRIAGE, "?this :acuity ?queue .", "?ths :acuity ?queue .")
    [p] = warnings_of(problems(path, TRIAGE))
    check(p, path, line, ":QueuePatient", "horis:requires uses ?ths beside ?this",
          "did you mean ?this?")


def test_a_pattern_that_leaves_the_focus_out_with_other_names_is_not_warned(
        tmp_path: Path) -> None:
    """:Escalate's own pattern finds a clinician on call, about no focus at all; ?that or
    ?thing are names of their own, two slips from ?this."""
    assert problems(LAB[0], LAB) == []
    for name in ("?that", "?thing", "?the"):
        path, _ = edited(tmp_path, LAB, "?clinician a :Clinician ; :onCall true .",
                         f"?clinician a :Clinician ; :onCall true . {name} a :Clinician .")
        assert problems(path, LAB) == []


# -- a FILTER reading a variable nothing binds -------------------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "var", "meant"), [
    pytest.param(LAB, "FILTER (?v > ?limit)", "FILTER (?value > ?limit)", ":IsCritical",
                 "value", "v", id="rule"),
    pytest.param(TRIAGE, "?nurse a :Nurse ; :onDuty true .",
                 "?nurse a :Nurse ; :onDuty ?on . FILTER(?onduty = true)", ":NotifyNurse",
                 "onduty", "on", id="requires"),
])
def test_a_filter_on_a_variable_no_pattern_binds_is_an_error_at_its_line(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, var: str,
        meant: str) -> None:
    """The rule's FILTER compared ?value, which nothing bound: it was never true, and every
    critical result was filed instead of escalated. It validated."""
    path, line = edited(tmp_path, pair, old, new)
    p = the_error(problems(path, pair))
    check(p, path, line, node,
          f"horis:requires: ?{var} in a FILTER is bound by no pattern of its group, so the "
          "filter is never true", f"did you mean ?{meant}?")


@pytest.mark.parametrize("written", [
    "OPTIONAL { ?kind :criticalAbove ?limit } FILTER (!BOUND(?limit) || ?v > ?limit)",
    "?kind :criticalAbove ?limit . FILTER (COALESCE(?missing, ?v) > ?limit)",
    "BIND(6.0 AS ?limit) FILTER (?v > ?limit)",
    "VALUES ?limit { 6.0 } FILTER (?v > ?limit)",
    "OPTIONAL { ?kind :criticalAbove ?limit FILTER (?v > ?limit) }",
    "OPTIONAL { ?kind :criticalAbove ?limit } FILTER (?v > ?limit)",
    "{ SELECT ?kind (MAX(?l) AS ?limit) WHERE { ?kind :criticalAbove ?l } GROUP BY ?kind }"
    " FILTER (?v > ?limit)",
    "FILTER NOT EXISTS { ?kind :criticalAbove ?limit FILTER (?limit > ?v) }",
    "?kind :criticalAbove ?limit . FILTER (?v > ?limit && ?this != ?kind)",
])
def test_a_filter_on_what_binds_or_may_be_unbound_is_not_judged(
        tmp_path: Path, written: str) -> None:
    """BIND, VALUES, OPTIONAL, a subquery and the run's ?this give a FILTER its variables;
    BOUND and COALESCE are meant for unbound ones; EXISTS binds its own."""
    old = "?kind :criticalAbove ?limit .\n                           FILTER (?v > ?limit)"
    path, _ = edited(tmp_path, LAB, old, written)
    assert problems(path, LAB) == []


def test_a_filter_may_read_the_proposals_choice_and_a_tools_arguments(tmp_path: Path) -> None:
    """?option is the run's (the ProposalStep's choice); a tool's own horis:requires is tried
    with its arguments bound."""
    path, _ = edited(tmp_path, REBOOKING, "?carrier :acceptsRebooking true .",
                     "?carrier :acceptsRebooking true . FILTER (?option != ?this)")
    assert [p for p in problems(path, REBOOKING) if p.severity == "error"] == []
    path, _ = edited(tmp_path, TRIAGE, "horis:idempotent false .",
                     'horis:idempotent false ;\n    horis:requires '
                     '"?patient :acuity ?q . FILTER (?q = ?queue)" .')
    assert [p for p in problems(path, TRIAGE) if p.severity == "error"] == []


# -- a literal of another datatype than its property's range ---------------------------------


@pytest.mark.parametrize(("old", "new", "node", "said", "hint"), [
    pytest.param(":onCall true .", ':onCall "true" .', ":Escalate",
                 ':onCall has rdfs:range xsd:boolean, but the pattern matches it with "true", a '
                 "string, which no value of :onCall equals, so the pattern never holds",
                 "write true without quotes", id="triple"),
    pytest.param("FILTER (?v > ?limit)", 'FILTER (?v > "6.0")', ":IsCritical",
                 ':value has rdfs:range xsd:decimal, but the FILTER compares ?v (its value) with '
                 '"6.0", a string, which is never equal to or ordered with a value of '
                 "xsd:decimal, so the FILTER is never true",
                 "write 6.0 without quotes", id="filter"),
])
def test_a_literal_its_propertys_range_never_equals_is_warned_at_its_line(
        tmp_path: Path, old: str, new: str, node: str, said: str, hint: str) -> None:
    """"true" (a string) is never the boolean true the world holds, and a string is never
    ordered with a number: the on-call clinician was never found, the rule never taken."""
    path, line = edited(tmp_path, LAB, old, new)
    [p] = warnings_of(problems(path, LAB))
    check(p, path, line, node, said, hint)


@pytest.mark.parametrize("written", [
    "FILTER (?v > 6)", "FILTER (?v > 6.0e0)", 'FILTER (?v > "6.0"^^xsd:decimal)',
    "FILTER (?v > ?limit)",
])
def test_a_literal_of_the_propertys_range_or_a_number_is_not_warned(
        tmp_path: Path, written: str) -> None:
    """Numbers compare by value across their types in a FILTER."""
    path, _ = edited(tmp_path, LAB, "FILTER (?v > ?limit)", written)
    assert problems(path, LAB) == []


# -- a property on a kind of node that does not take it ----------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "said", "hint"), [
    pytest.param(TRIAGE, "horis:tool :ehr.assign_queue ;",
                 "horis:tool :ehr.assign_queue ;\n    horis:retries 3 ;", ":QueuePatient",
                 "horis:retries is a property of a tool; on an action step it does nothing",
                 "declare it on :ehr.assign_queue, the step's tool", id="retries-on-step"),
    pytest.param(TRIAGE, "horis:tool :ehr.assign_queue ;",
                 'horis:tool :ehr.assign_queue ;\n    horis:timeout "5 sec" ;', ":QueuePatient",
                 "horis:timeout is a property of a tool, a proposal step or a wait step; on an "
                 "action step it does nothing", "declare it on :ehr.assign_queue",
                 id="timeout-on-step"),
    pytest.param(TRIAGE, "horis:idempotent false .",
                 "horis:idempotent false ;\n    horis:onError :NotifyNurse .", ":ehr.assign_queue",
                 "horis:onError is a property of a step; on a tool it does nothing",
                 "write it on the step that calls the tool (:QueuePatient)", id="onerror-on-tool"),
    pytest.param(LAB, "horis:otherwise :File .",
                 "horis:otherwise :File ;\n    horis:tool :lab.escalate .", ":IsCritical",
                 "horis:tool is a property of an action step; on a decision step it does nothing",
                 "write it on an action step, or remove it", id="tool-on-decision"),
    pytest.param(LAB, "horis:tool :lab.file_result ;",
                 "horis:tool :lab.file_result ;\n    horis:otherwise :Escalate ;", ":File",
                 "horis:otherwise is a property of a decision step; on an action step it does "
                 "nothing", "write it on a decision step", id="otherwise-on-action"),
])
def test_a_property_on_a_kind_of_node_that_does_not_take_it_is_warned_at_its_line(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, said: str,
        hint: str) -> None:
    """Each validated and did nothing: retries on a step retried nothing, an onError on a
    tool caught nothing, an otherwise on an action step was no branch."""
    path, line = edited(tmp_path, pair, old, new)
    [p] = warnings_of(problems(path, pair))
    check(p, path, line + 1, node, said, hint)


@pytest.mark.parametrize(("old", "new", "node", "said"), [
    pytest.param("        horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]\n",
                 "        horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ;\n"
                 "        horis:requiresApproval true\n", ":ehr.assign_queue",
                 "horis:requiresApproval is a property of the tool; inside its horis:effect",
                 id="approval-in-effect"),
    pytest.param("horis:tool :ehr.assign_queue ;",
                 "horis:tool :ehr.assign_queue ;\n    horis:sideEffect horis:ExternalCommit ;",
                 ":QueuePatient",
                 "horis:sideEffect is a property of a tool; on an action step it does nothing",
                 id="side-effect-on-step"),
])
def test_a_policy_property_where_the_policy_never_reads_it_is_an_error(
        tmp_path: Path, old: str, new: str, node: str, said: str) -> None:
    """Inside the effect's brackets, horis:requiresApproval true validated, and the tool
    queued every patient without anyone approving; on a step, horis:sideEffect let an
    ExternalCommit through a run that allowed none."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    e = the_error(problems(path, TRIAGE))
    assert (e.line, e.node) == (line + 1, node), e
    assert said in e.message and "the tool acts without the approval" in e.message


def test_a_tools_own_horis_requires_and_a_proposals_timeout_are_where_they_belong(
        tmp_path: Path) -> None:
    """A tool takes horis:requires (tried with its arguments bound); a ProposalStep takes
    horis:timeout (how long the model may take)."""
    path, _ = edited(tmp_path, TRIAGE, "horis:idempotent false .",
                     'horis:idempotent false ;\n    horis:requires "?patient :acuity ?queue ." .')
    assert problems(path, TRIAGE) == []
    path, _ = edited(tmp_path, REBOOKING, "horis:confidence 0.7 ;",
                     'horis:confidence 0.7 ;\n    horis:timeout "20s" ;')
    assert problems(path, REBOOKING) == []


# -- a name in quotes, a tool where a step goes -----------------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "said", "hint"), [
    pytest.param(TRIAGE, "horis:tool :ehr.notify_nurse ;", 'horis:tool ":ehr.notify_nurse" ;',
                 ":NotifyNurse", 'horis:tool ":ehr.notify_nurse" is a string, not a node',
                 "drop the quotes: horis:tool :ehr.notify_nurse", id="tool"),
    pytest.param(TRIAGE, "horis:next :NotifyNurse .", 'horis:next "NotifyNurse" .',
                 ":QueuePatient", 'horis:next "NotifyNurse" is a string, not a node',
                 "drop the quotes: horis:next :NotifyNurse", id="next"),
    pytest.param(TRIAGE, "horis:start :QueuePatient .", 'horis:start ":QueuePatient" .',
                 ":Triage", 'horis:start ":QueuePatient" is a string, not a node',
                 "drop the quotes: horis:start :QueuePatient", id="start"),
    pytest.param(LAB, "horis:otherwise :File .", 'horis:otherwise "File" .', ":IsCritical",
                 'horis:otherwise "File" is a string, not a node',
                 "drop the quotes: horis:otherwise :File", id="otherwise"),
    pytest.param(LAB, "horis:next :Escalate", 'horis:next "Escalate"', ":IsCritical",
                 'horis:next "Escalate" is a string, not a node',
                 "drop the quotes: horis:next :Escalate", id="rule-next"),
    pytest.param(TRIAGE, "horis:next :NotifyNurse .",
                 'horis:next :NotifyNurse ; horis:onError "NotifyNurse" .', ":QueuePatient",
                 'horis:onError "NotifyNurse" is a string, not a node',
                 "drop the quotes: horis:onError :NotifyNurse", id="on-error"),
    pytest.param(TRIAGE, 'horis:name "nurse"   ; horis:type :Nurse',
                 'horis:name "nurse"   ; horis:type "Nurse"', ":ehr.notify_nurse",
                 'horis:type "Nurse" of argument "nurse" is a string, not a node',
                 "drop the quotes: horis:type :Nurse", id="argument-type"),
    pytest.param(TRIAGE, 'horis:name "ref"     ; horis:type xsd:string',
                 'horis:name "ref"     ; horis:type "xsd:string"', ":ehr.notify_nurse",
                 'horis:type "xsd:string" of argument "ref" is a string, not a node',
                 "drop the quotes: horis:type xsd:string", id="argument-datatype"),
    pytest.param(TRIAGE, "horis:property :queueRef ; horis:type xsd:string",
                 'horis:property :queueRef ; horis:type "xsd:string"', ":ehr.assign_queue",
                 'horis:type "xsd:string" of asserted property :queueRef is a string',
                 "drop the quotes: horis:type xsd:string", id="asserted-type"),
    pytest.param(TRIAGE, "horis:focusType :Patient ;", 'horis:focusType "Patient" ;', ":Triage",
                 'horis:focusType "Patient" is a string, not a node',
                 "drop the quotes: horis:focusType :Patient", id="focus-type"),
    # it said "a horis:asserts has no horis:property", of the one written on its line
    pytest.param(TRIAGE, "horis:property :queueRef ; horis:type xsd:string",
                 'horis:property "queueRef" ; horis:type xsd:string', ":ehr.assign_queue",
                 'horis:property "queueRef" is a string, not a node',
                 "drop the quotes: horis:property :queueRef", id="asserted-property"),
])
def test_a_name_in_quotes_is_said_to_be_a_string_with_the_quotes_dropped_in_the_hint(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, said: str,
        hint: str) -> None:
    """The message used to say the name was not declared, and to suggest the very name
    written (or, for horis:type, that there was none): the quotes were the mistake."""
    path, line = edited(tmp_path, pair, old, new)
    check(the_error(problems(path, pair)), path, line, node, said, hint)


def test_an_argument_named_by_a_node_is_one_error_saying_to_quote_it(tmp_path: Path) -> None:
    """horis:name :patient gave four errors (two for the name, then the effect's subject and
    the step's bind each said the tool takes no "patient"): one mistake, one error."""
    path, line = edited(tmp_path, TRIAGE, 'horis:arg [ horis:name "patient" ; horis:type '
                        ':Patient ] ;\n        horis:arg [ horis:name "queue"',
                        'horis:arg [ horis:name :patient ; horis:type '
                        ':Patient ] ;\n        horis:arg [ horis:name "queue"')
    check(the_error(problems(path, TRIAGE)), path, line, ":ehr.assign_queue",
          "horis:name :patient is a node, not a string", 'write horis:name "patient"')


def test_a_datatype_as_focus_type_is_an_error_at_its_line(tmp_path: Path) -> None:
    """No node is ever an instance of xsd:string: every run found nothing to run for, and
    validate said the workflow was valid."""
    path, line = edited(tmp_path, TRIAGE, "horis:focusType :Patient ;",
                        "horis:focusType xsd:string ;")
    check(the_error(problems(path, TRIAGE)), path, line, ":Triage",
          "horis:focusType xsd:string is a datatype",
          "name the class of the node each instance runs for, one of: :AcuityLevel")


def test_a_proposal_with_a_confidence_and_nowhere_to_go_below_it_is_warned(
        tmp_path: Path) -> None:
    """Without horis:fallback (or horis:onError) every ranking under the threshold failed the
    instance at run time; validate said only that the operator's wait was unreachable. The
    hint names first a step nothing leads to, the fallback a deleted line named: it named a
    wait of the workflow, which in another domain was an unrelated one."""
    path, line = edited(tmp_path, REBOOKING, "horis:next :RebookOnProposal ;\n"
                        "    horis:fallback :AskOperator .", "horis:next :RebookOnProposal .")
    (p,) = [p for p in problems(path, REBOOKING) if "horis:confidence" in p.message]
    assert p.severity == "warning", str(p)
    check(p, path, line - 2, ":ProposeFlight", "horis:confidence 0.7 but no horis:fallback",
          "add horis:fallback :SomeStep")
    # the step the deleted line named, which nothing leads to now, is the one named first
    assert str(p.hint).startswith("add horis:fallback :SomeStep, where a choice the model is "
                                  "unsure of goes (:AskOperator, which no step leads to, or "
                                  "typically a horis:WaitStep for an operator"), str(p.hint)
    path, _ = edited(tmp_path, REBOOKING, "horis:fallback :AskOperator .",
                     "horis:onError :AskOperator .")
    assert not [p for p in problems(path, REBOOKING) if "horis:confidence" in p.message]


def test_a_wait_until_that_never_names_this_is_warned_at_its_line(tmp_path: Path) -> None:
    """"?booking :operatorChoice ?flight ." holds once any booking has an answer, and then
    ended the wait of every instance waiting there; validate said nothing."""
    path, line = edited(tmp_path, REBOOKING, 'horis:until "?this :operatorChoice ?flight ." ;',
                        'horis:until "?booking :operatorChoice ?flight ." ;')
    p = the_one(problems(path, REBOOKING), "warning")
    check(p, path, line, ":AskOperator", "?this is not in the horis:until pattern, so it holds "
          "for every instance alike", "did you mean ?this in place of ?booking?")
    # the proposal's choice is the instance's own: a wait on it is about this instance
    path, _ = edited(tmp_path, REBOOKING, 'horis:until "?this :operatorChoice ?flight ." ;',
                     'horis:until "?option :seatsLeft ?n ." ;')
    assert not [p for p in problems(path, REBOOKING) if "horis:until" in p.message]


def test_a_loop_of_decision_steps_only_is_an_error_at_the_edge_that_closes_it(
        tmp_path: Path) -> None:
    """Nothing on it changes the world, so once taken it is taken for ever: the run failed
    the instance ("would loop forever"), while validate only warned that :File was
    unreachable."""
    path, line = edited(tmp_path, LAB, "horis:otherwise :File .",
                        "horis:otherwise :IsCritical .")
    check(the_error(problems(path, LAB)), path, line, ":IsCritical",
          "horis:otherwise :IsCritical closes a loop of decision steps only "
          "(:IsCritical → :IsCritical)", "point horis:otherwise at a step that acts or waits "
          "(one of: :Escalate, :File)")

    # two decisions that send each other back: the loop is named at the edge that closes it
    path, line = edited(tmp_path, LAB, "horis:otherwise :File .",
                        "horis:otherwise :Recheck .\n"
                        ":Recheck a horis:DecisionStep ;\n"
                        '    horis:when [ horis:requires "?this :value ?v ." ; '
                        "horis:next :File ] ;\n"
                        "    horis:otherwise :IsCritical .")
    check(the_error(problems(path, LAB)), path, line + 3, ":Recheck",
          "horis:otherwise :IsCritical closes a loop of decision steps only (:IsCritical → "
          ":Recheck → :IsCritical)", "point horis:otherwise at a step that acts or waits")

    # a loop through a step that acts is the run's to judge (its requires may stop holding)
    path, _ = edited(tmp_path, LAB, "horis:otherwise :File .",
                     "horis:otherwise :File .\n:File horis:next :IsCritical .")
    assert not [p for p in problems(path, LAB) if "decision steps only" in p.message]


def test_next_to_a_tool_says_it_is_a_tool_and_names_the_steps_that_use_it(
        tmp_path: Path) -> None:
    """It used to say "declare :ehr.notify_nurse a horis:ActionStep", turning the tool into a
    step; the flow should go to the step that calls the tool."""
    path, line = edited(tmp_path, TRIAGE, "horis:next :NotifyNurse .",
                        "horis:next :ehr.notify_nurse .")
    check(the_error(problems(path, TRIAGE)), path, line, ":QueuePatient",
          "horis:next :ehr.notify_nurse is a tool, not a step",
          "point horis:next at a step that uses it: :NotifyNurse")

    # no step calls it: declare one
    path, line = edited(tmp_path, LAB, "horis:otherwise :File .",
                        "horis:otherwise :lab.escalate .")
    text = path.read_text(encoding="utf-8").replace("horis:tool :lab.escalate ;",
                                                    "horis:tool :lab.file_result ;")
    path.write_text(text, encoding="utf-8")
    check(the_error(problems(path, LAB)), path, line, ":IsCritical",
          "horis:otherwise :lab.escalate is a tool, not a step",
          "declare a step that uses it (:SomeStep a horis:ActionStep ; horis:tool "
          ":lab.escalate .) and point horis:otherwise at that step")


def test_a_tool_that_is_a_step_says_so_and_names_the_tool_it_calls(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, "horis:tool :ehr.notify_nurse ;",
                        "horis:tool :QueuePatient ;")
    check(the_error(problems(path, TRIAGE)), path, line, ":NotifyNurse",
          "horis:tool :QueuePatient is a step, not a tool",
          "point horis:tool at the tool it calls: horis:tool :ehr.assign_queue")

    # the step itself: its "tool it calls" is itself, which the hint offered as the fix
    path, line = edited(tmp_path, TRIAGE, "horis:tool :ehr.notify_nurse ;",
                        "horis:tool :NotifyNurse ;")
    check(the_error(problems(path, TRIAGE)), path, line, ":NotifyNurse",
          "horis:tool :NotifyNurse is a step, not a tool",
          "point horis:tool at a horis:Tool, one of: :ehr.assign_queue, :ehr.notify_nurse")


# -- arguments read from variables the pattern never binds ------------------------------------

NURSE_BOUND = ("?nurse a :Nurse ; :onDuty true .\n"
               "                       FILTER NOT EXISTS { ?this :assignedNurse ?n }")


def validate(*paths: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(".", "validate", *map(str, paths), timeout=120)


def test_an_argument_named_only_inside_filter_not_exists_is_an_error_at_validate(
        tmp_path: Path) -> None:
    """?nurse written only in FILTER NOT EXISTS is in the pattern's text but never bound: it
    validated, and the step failed when it fired ("the step's patterns give no ?nurse")."""
    path, _ = edited(tmp_path, TRIAGE, NURSE_BOUND,
                     "FILTER NOT EXISTS { ?this :assignedNurse ?nurse }")
    text = path.read_text(encoding="utf-8")  # and ?ref bound only by an OPTIONAL: a warning
    path.write_text(text.replace("?this :queueRef ?ref .", "OPTIONAL { ?this :queueRef ?ref }"),
                    encoding="utf-8")
    step_line = path.read_text(encoding="utf-8").splitlines().index(
        ":NotifyNurse a horis:ActionStep ;") + 1

    done = validate(path, TRIAGE[1])

    assert done.returncode == 1, done.stdout + done.stderr
    assert (f'{path}:{step_line}: error: :NotifyNurse: argument "nurse" of '
            ":ehr.notify_nurse is required, but ?nurse appears only inside FILTER NOT EXISTS "
            "or MINUS, which bind nothing") in done.stdout, done.stdout
    assert (f'{path}:{step_line}: warning: :NotifyNurse: argument "ref" of :ehr.notify_nurse is '
            "required, but ?ref is bound only when an OPTIONAL") in done.stdout, done.stdout
    assert "Traceback" not in done.stderr


def test_a_wrong_tool_does_not_hide_the_mistakes_of_the_steps_that_call_it(
        tmp_path: Path) -> None:
    """A tool with an error was left out of the model, so nothing its steps said of it was
    checked: validate showed the binding's error, and only once that was mended the step's
    own (here an argument bound from a variable nothing binds). Both come in one pass now."""
    path, _ = edited(tmp_path, TRIAGE, NURSE_BOUND,
                     "FILTER NOT EXISTS { ?this :assignedNurse ?nurse }")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"python:ehr_client.notify_nurse"', '"ftp:ehr/notify"'),
                    encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    binding_line = lines.index('    horis:binding "ftp:ehr/notify" ;') + 1
    step_line = lines.index(":NotifyNurse a horis:ActionStep ;") + 1

    done = validate(path, TRIAGE[1])

    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout.splitlines()
    assert out[0].startswith(f'{path}:{binding_line}: error: :ehr.notify_nurse: binding '
                             '"ftp:ehr/notify" has no known scheme'), done.stdout
    assert out[1].startswith(f'{path}:{step_line}: error: :NotifyNurse: argument "nurse" of '
                             ":ehr.notify_nurse is required, but ?nurse appears only inside "
                             "FILTER NOT EXISTS"), done.stdout
    assert out[2:] == ["invalid: 2 errors"], done.stdout


def test_a_step_binding_an_argument_its_wrong_tool_does_not_take_is_said_with_the_tool(
        tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', '"ftp:ehr/assign"')
    text = path.read_text(encoding="utf-8")
    old = 'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
    assert text.count(old) == 1
    path.write_text(text.replace(old, old.replace('"patient"', '"patiant"')), encoding="utf-8")
    bind_line = text[: text.index(old)].count("\n") + 1

    found = [p for p in problems(path, TRIAGE) if p.severity == "error"]

    assert [p.node for p in found] == [":ehr.assign_queue", ":QueuePatient"], found
    check(found[1], path, bind_line, ":QueuePatient",
          'horis:bind names argument "patiant", which :ehr.assign_queue does not take',
          'did you mean "patient"? use one of: patient, queue')


def test_an_argument_bound_only_in_an_optional_is_a_warning(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, NURSE_BOUND,
                     "OPTIONAL { ?nurse a :Nurse ; :onDuty true }\n"
                     "                       FILTER NOT EXISTS { ?this :assignedNurse ?n }")
    defs = load_definitions([path, TRIAGE[1]])

    assert unbound_arguments(defs) == []
    [p] = sometimes_unbound(defs)
    assert p.severity == "warning" and p.file == str(path), p
    assert p.message == ('argument "nurse" of :ehr.notify_nurse is required, but ?nurse is bound '
                         "only when an OPTIONAL or one side of a UNION matches: the step fails "
                         "whenever it does not")


@pytest.mark.parametrize("binding", [
    "VALUES ?nurse { :n1 }", "BIND(:n1 AS ?nurse)", "GRAPH ?nurse { ?this :queueRef ?ref }",
    "{ SELECT ?nurse WHERE { ?nurse a :Nurse } }",
    "{ ?nurse a :Nurse } UNION { ?nurse :onDuty true }",
])
def test_arguments_bound_by_bind_values_graph_and_a_subquery_are_given(
        tmp_path: Path, binding: str) -> None:
    """What binds a variable besides a triple pattern is not mistaken for nothing."""
    path, _ = edited(tmp_path, TRIAGE, NURSE_BOUND, binding)
    defs = load_definitions([path, TRIAGE[1]])
    assert unbound_arguments(defs) == [] and sometimes_unbound(defs) == []


def test_what_a_failed_load_made_is_never_run(tmp_path: Path) -> None:
    """A load that fails hands validate the model it made, a step pointing at a wrong tool
    and all: no agent is built from it, whoever tries."""
    path, _ = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', '"ftp:ehr/assign"')
    with pytest.raises(AuthoringError) as e:
        load_definitions([path, *TRIAGE[1:]])
    made = e.value.definitions
    assert made is not None and made.errors
    with pytest.raises(AuthoringError) as again:
        Agent(made, tools={"ehr_client.assign_queue": lambda **_: {}})
    assert again.value.problems == made.errors
    assert "ftp:ehr/assign" in str(again.value)


def test_a_misspelt_bound_variable_is_said_at_its_bind_with_the_one_meant(
        tmp_path: Path) -> None:
    old = 'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;\n    horis:next :NotifyNurse'
    path, line = edited(tmp_path, TRIAGE, old, old.replace('"this"', '"thiss"'))

    found = unbound_arguments(load_definitions([path, TRIAGE[1]]))

    assert len(found) == 1, found
    check(found[0], path, line, ":QueuePatient",
          'argument "patient" of :ehr.assign_queue is required, but horis:bind names ?thiss, '
          "which nothing binds",
          "did you mean ?this? use ?thiss in a triple pattern")


OPERATOR_BIND = 'horis:bind [ horis:arg "booking" ; horis:var "this" ] .'


def test_a_proposals_choice_bound_where_no_choice_leads_is_an_error_at_the_bind(
        tmp_path: Path) -> None:
    """?option was counted as bound in every step: bound in the operator's branch (reached by
    the fallback, where the model chose nothing) it validated, and the rebooking failed."""
    path, line = edited(tmp_path, REBOOKING, OPERATOR_BIND, OPERATOR_BIND[:-2]
                        + ' , [ horis:arg "flight" ; horis:var "option" ] .')

    found = unbound_arguments(load_definitions([path, REBOOKING[1]]))

    assert len(found) == 1, found
    check(found[0], path, line, ":RebookOnOperatorChoice",
          'argument "flight" of :airline.rebook is required, but horis:bind names ?option, '
          "which nothing binds here: ?option is the choice of :ProposeFlight, given only to "
          "the steps its horis:next leads to, not this one",
          "use ?option in a triple pattern")


def test_a_proposals_choice_is_not_given_to_another_workflows_steps(tmp_path: Path) -> None:
    """With the rebooking files loaded too, triage's ?option counted as bound."""
    old = 'horis:bind [ horis:arg "patient" ; horis:var "this" ] .'
    path, line = edited(tmp_path, TRIAGE, old,
                        old[:-2] + ' , [ horis:arg "nurse" ; horis:var "option" ] .')

    found = unbound_arguments(load_definitions([path, TRIAGE[1], *REBOOKING]))

    assert len(found) == 1, found
    check(found[0], path, line, ":NotifyNurse",
          'argument "nurse" of :ehr.notify_nurse is required, but horis:bind names ?option',
          "use ?option in a triple pattern")


def test_a_proposals_choice_is_given_to_the_steps_after_its_next(tmp_path: Path) -> None:
    """The step after the chosen branch's (by horis:next) still reads ?option."""
    old = 'horis:bind [ horis:arg "booking" ; horis:var "this" ] ,\n'
    text = REBOOKING[0].read_text(encoding="utf-8")
    assert text.count(old) == 1
    later = (':Confirm a horis:ActionStep ;\n    horis:tool :airline.rebook ;\n'
             '    horis:bind [ horis:arg "booking" ; horis:var "this" ] , '
             '[ horis:arg "flight" ; horis:var "option" ] .\n')
    path = tmp_path / REBOOKING[0].name
    path.write_text(text.replace(old, "horis:next :Confirm ;\n    " + old) + later,
                    encoding="utf-8")
    assert unbound_arguments(load_definitions([path, REBOOKING[1]])) == []


def test_minor_slips_are_reported_where_written_with_a_fix_that_works(tmp_path: Path) -> None:
    # horis:retries on a tool that is not idempotent: warned of at the tool's first line, not
    # the horis:retries line.
    path, line = edited(tmp_path, TRIAGE, "    horis:idempotent false .",
                        "    horis:retries 2 ;\n    horis:idempotent false .")
    w = the_one(problems(path, TRIAGE), "warning")
    assert w.line == line and "horis:retries 2" in w.message
    # a workflow named where a step goes: the hint said to declare it a step
    path, line = edited(tmp_path, TRIAGE, "    horis:next :NotifyNurse .",
                        "    horis:next :Triage .")
    e = the_error([p for p in problems(path, TRIAGE) if p.severity == "error"])
    assert e.line == line and "is a workflow, not a step" in e.message
    assert e.hint == "point horis:next at :QueuePatient, the step :Triage starts at"
    # one property asserted twice: the hint said to give it a horis:key of its own
    ref = "        horis:asserts [ horis:property :queueRef ; horis:type xsd:string"
    path, line = edited(tmp_path, TRIAGE, ref + " ]",
                        ref + " ] ;\n" + ref + " ; horis:optional true ]")
    e = the_error(problems(path, TRIAGE))
    assert e.line == line + 1 and ":queueRef is asserted twice in one effect" in e.message
    assert e.hint == "delete one of the two horis:asserts of :queueRef"
    # an argument name no SPARQL variable can have: the hint said to use it in a pattern
    path, _ = edited(tmp_path, TRIAGE, 'horis:name "queue"   ;', 'horis:name "queue-level" ;')
    e = the_error(unbound_arguments(load_definitions([path, TRIAGE[1]])))
    assert e.hint is not None and "no SPARQL variable name" in e.hint
    assert "use ?queue-level" not in e.hint


def test_a_fallback_on_an_action_step_is_hinted_to_be_its_on_error(tmp_path: Path) -> None:
    # Meant as "where to go when the tool fails"; the hint said to move it to a proposal.
    bind = '               [ horis:arg "flight" ; horis:var "option" ] '
    path, line = edited(tmp_path, REBOOKING, bind + ".",
                        bind + ";\n    horis:fallback :AskOperator .")
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.line == line + 1 and w.node == ":RebookOnProposal"
    assert w.hint is not None and w.hint.endswith("write horis:onError :AskOperator")


def test_a_command_binding_declared_wrong_is_not_also_said_to_be_missing(tmp_path: Path) -> None:
    # horis:argv written as one string: besides its own error, the tool's binding was said to
    # name "no horis:CommandBinding 'filer' (declared: none is declared)".
    path, _ = edited(tmp_path, LAB, '    horis:binding "python:lab_client.file_result" ;',
                     '    horis:binding "cmd:filer" ;')
    path.write_text(path.read_text() + '\n:filer a horis:CommandBinding ;\n'
                    '    horis:argv "python3 file.py -- {result}" ;\n    horis:root "/tmp" .\n')
    e = the_error(problems(path, LAB))
    assert e.node == ":filer" and "needs one horis:argv, an RDF list" in e.message


def test_a_candidates_pattern_naming_the_option_otherwise_says_which_variable_it_binds(
        tmp_path: Path) -> None:
    """The hint was an example from another domain ("?option a :Flight …"), not the
    variable the modeler had written for the option."""
    old = ("?option a :Flight ; :status :Scheduled ; :destination ?dest ; :seatsLeft ?seats .\n"
           "        FILTER (?seats > 0 && ?option != ?old)")
    path, _ = edited(tmp_path, REBOOKING, old, old.replace("?option", "?flight"))
    p = the_error(problems(path, REBOOKING))
    assert p.node == ":ProposeFlight" and p.message.startswith(
        "the horis:candidates pattern never binds ?option")
    assert p.hint == ("it binds ?dest, ?flight, ?old, ?seats: write ?option for the one whose "
                      "values are the options, or name that one with horis:as")
    path, _ = edited(tmp_path, REBOOKING, old, old.replace("?option", "?opton"))
    p = the_error(problems(path, REBOOKING))
    assert p.hint == 'did you mean ?opton? Write ?option for it, or name it with horis:as "opton"'


@pytest.mark.parametrize(("old", "new", "meant"), [
    ("        horis:next :Escalate\n", "        horis:then :Escalate\n", "horis:next"),
    ("    horis:otherwise :File .", "    horis:else :File .", "horis:otherwise"),
])
def test_another_rule_languages_word_is_told_the_term_horismos_names_it(
    tmp_path: Path, old: str, new: str, meant: str
) -> None:
    """``horis:then :Escalate`` got "did you mean horis:when?", the nearest spelling and the
    wrong term: a rule's target is horis:next, and the fallback is horis:otherwise."""
    path, line = edited(tmp_path, LAB, old, new)
    found = problems(path, LAB)
    said = new.split()[0]
    (p,) = [p for p in found if f"{said} is not a Horismos term" in p.message] or [
        "\n".join(map(str, found))]
    assert p.hint == f"did you mean {meant}?" and p.line == line, str(p)
