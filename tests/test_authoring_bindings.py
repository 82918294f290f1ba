"""Mistakes in what runs a tool — an MCP server, a command binding, an adapter — and in the
steps and effects around them, one at a time, caught before anything runs, at the file and
line, with what to write instead. Each was made in a copy of a shipped declaration
(``examples/mcp/clinic.ttl``, ``examples/fhir/pharmacy.ttl``, the command binding of
``docs/bindings-command.md``) and passed ``horismos validate`` before; what the run then did
is said in each test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import LAB, REBOOKING, ROOT, TRIAGE, edited, problems, the_error, the_one

from horismos import AuthoringError, Problem, load_definitions

CLINIC = ROOT / "examples" / "mcp" / "clinic.ttl"
PHARMACY = ROOT / "examples" / "fhir" / "pharmacy.ttl"
WORDCOUNT = ROOT / "tests" / "fixtures" / "authoring" / "wordcount.ttl"


def edited_file(tmp_path: Path, source: Path, old: str, new: str) -> tuple[Path, int]:
    """``source`` (one file that is its own ontology) with its one ``old`` replaced by
    ``new``, and that line."""
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not written once in {source.name}"
    path = tmp_path / source.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path, text[: text.index(old)].count("\n") + 1


def found(path: Path) -> list[Problem]:
    try:
        return list(load_definitions([path]).warnings)
    except AuthoringError as e:
        return list(e.problems)


def mine(found: list[Problem], severity: str) -> list[Problem]:
    """Those of ``severity``, but for the pharmacy loop's warning the shipped file gives."""
    return [p for p in found if p.severity == severity and "is on a cycle" not in p.message]


def test_the_declarations_these_tests_edit_are_clean() -> None:
    for path in (CLINIC, WORDCOUNT):
        assert found(path) == []
    assert mine(found(PHARMACY), "warning") == []


# -- horis:env --------------------------------------------------------------------------------


def test_env_from_a_shell_variable_written_with_its_dollar_is_an_error(tmp_path: Path) -> None:
    # An MCP server was given the text "${abc}" as its TOKEN, silently; a command refused
    # every call ("environment variable $WORDCOUNT_LANG … is not set"), with no line.
    path, line = edited_file(
        tmp_path, CLINIC, 'horis:args ( "-m" "ward_server" ) .',
        'horis:args ( "-m" "ward_server" ) ;\n'
        '    horis:env [ horis:name "TOKEN" ; horis:fromEnv "${WARD_TOKEN}" ] .')
    e = the_error(found(path))
    assert e.line == line + 1 and "${WARD_TOKEN}" in e.message
    assert e.hint is not None and 'horis:fromEnv "WARD_TOKEN"' in e.hint
    path, line = edited_file(tmp_path, WORDCOUNT, 'horis:fromEnv "WORDCOUNT_LANG"',
                             'horis:fromEnv "$WORDCOUNT_LANG"')
    e = the_error(found(path))
    assert e.line == line and e.hint is not None and '"WORDCOUNT_LANG"' in e.hint


def test_env_with_both_a_value_and_a_variable_is_an_error(tmp_path: Path) -> None:
    # Only the variable was read; the value was dropped without a word.
    path, line = edited_file(
        tmp_path, WORDCOUNT, 'horis:env [ horis:name "LANGX" ; horis:fromEnv "WORDCOUNT_LANG" ]',
        'horis:env [ horis:name "LANGX" ; horis:value "C" ; horis:fromEnv "WORDCOUNT_LANG" ]')
    e = the_error(found(path))
    assert e.line == line and "both" in e.message and e.hint is not None
    assert 'horis:value "C"' in e.hint and 'horis:fromEnv "WORDCOUNT_LANG"' in e.hint


def test_env_named_with_an_equals_sign_is_an_error(tmp_path: Path) -> None:
    # Every call failed: "doc.count raised ValueError: illegal environment variable name".
    path, line = edited_file(tmp_path, WORDCOUNT, 'horis:name "LEDGER"', 'horis:name "LEDGER="')
    e = the_error(found(path))
    assert e.line == line and e.hint == 'write horis:name "LEDGER"'


def test_env_written_on_the_tool_is_a_warning(tmp_path: Path) -> None:
    # Nothing reads it there: the server never got the variable.
    path, line = edited_file(tmp_path, CLINIC, 'horis:timeout "10s" ;',
                             'horis:timeout "10s" ;\n'
                             '    horis:env [ horis:name "LOG_LEVEL" ; horis:value "debug" ] ;')
    w = the_one(found(path), "warning")
    assert w.line == line + 1 and "horis:env" in w.message and "MCP server" in w.message


def test_an_mcp_url_without_its_scheme_is_an_error(tmp_path: Path) -> None:
    # The run stopped at start: "UnsupportedProtocol: Request URL is missing an 'http://'".
    path, line = edited_file(tmp_path, CLINIC, 'horis:command "python" ;\n'
                             '    horis:args ( "-m" "ward_server" ) .',
                             'horis:url "127.0.0.1:8765/mcp" .')
    e = the_error(found(path))
    assert e.line == line and "http(s) URL" in e.message


# -- a program's arguments written as a command line -------------------------------------------


def test_an_mcp_command_written_as_a_command_line_is_a_warning(tmp_path: Path) -> None:
    # The run stopped at start: "no such program: python -m ward_server", without a line.
    path, line = edited_file(tmp_path, CLINIC, 'horis:command "python" ;\n'
                             '    horis:args ( "-m" "ward_server" ) .',
                             'horis:command "python -m ward_server" .')
    w = the_one(found(path), "warning")
    assert w.line == line and w.hint is not None
    assert 'horis:command "python"' in w.hint and '( "-m" "ward_server" )' in w.hint


def test_an_option_and_its_value_in_one_member_is_a_warning(tmp_path: Path) -> None:
    # MCP: "No module named ' ward_server'" at start. A command: the program was given
    # "--lang en" as one argument and ran with it.
    path, line = edited_file(tmp_path, CLINIC, '( "-m" "ward_server" )', '( "-m ward_server" )')
    w = the_one(found(path), "warning")
    assert w.line == line and w.hint is not None and '"-m" "ward_server"' in w.hint
    path, line = edited_file(tmp_path, WORDCOUNT, '"--lang={lang}"', '"--lang {lang}"')
    w = the_one(found(path), "warning")
    assert w.line == line and w.hint is not None and '"--lang={lang}"' in w.hint


def test_a_placeholder_written_with_a_shell_dollar_is_a_warning(tmp_path: Path) -> None:
    # The program was given "$a.txt" for the path a.txt.
    path, line = edited_file(tmp_path, WORDCOUNT, '"--" "{path}" )', '"--" "${path}" )')
    w = the_one(found(path), "warning")
    assert w.line == line and w.hint is not None and w.hint.startswith('write "{path}"')


# -- horis:requires where nothing tries it ----------------------------------------------------


def test_requires_on_a_wait_step_is_a_warning_saying_until(tmp_path: Path) -> None:
    # Read as "wait until this holds": a resume without facts ended the wait, and
    # :RebookOnOperatorChoice blocked ("?this :operatorChoice ?flight . has no solution").
    path, line = edited(tmp_path, REBOOKING, 'horis:until "?this :operatorChoice ?flight ." ;',
                        'horis:requires "?this :operatorChoice ?flight ." ;')
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.line == line and w.node == ":AskOperator" and "never tried" in w.message
    assert w.hint is not None
    assert w.hint.startswith('write horis:until "?this :operatorChoice ?flight ."')


def test_requires_on_a_proposal_or_decision_step_is_a_warning(tmp_path: Path) -> None:
    path, line = edited(tmp_path, REBOOKING, "horis:rankBy ",
                        'horis:requires "?this :flight ?f ." ;\n    horis:rankBy ')
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.line == line and w.hint is not None and ":RebookOnProposal" in w.hint
    path, line = edited(tmp_path, LAB, "    horis:otherwise :File .",
                        '    horis:requires "?this :value ?v ." ;\n    horis:otherwise :File .')
    w = the_one(problems(path, LAB), "warning")
    assert w.line == line and w.hint is not None and "horis:when [" in w.hint


def test_requires_on_a_workflow_is_a_warning_naming_its_first_step(tmp_path: Path) -> None:
    # Read as a guard on the workflow's instances: it validated, and every patient ran past it.
    path, line = edited(tmp_path, TRIAGE, "    horis:start :QueuePatient .",
                        '    horis:requires "?this :acuity :urgent ." ;\n'
                        "    horis:start :QueuePatient .")
    w = the_one(problems(path, TRIAGE), "warning")
    assert (w.line, w.node) == (line, ":Triage") and w.message.startswith(
        "horis:requires on a workflow is never tried"), str(w)
    assert w.hint == ("write it on the step the workflow starts at (:QueuePatient), whose "
                      "horis:requires is tried before anything acts")


@pytest.mark.parametrize(("start", "hint"), [
    pytest.param(":Route a horis:DecisionStep ;\n"
                 '    horis:when [ horis:requires "?this :acuity ?q ." ;\n'
                 "                 horis:next :QueuePatient ] ;\n"
                 "    horis:otherwise :NotifyNurse .",
                 "write it in the horis:when rules of :Route, the decision step the workflow "
                 "starts at, or on the first action step after it", id="decision"),
    pytest.param(":Route a horis:WaitStep ;\n    horis:next :QueuePatient .",
                 "write it on the first action step the workflow reaches, whose horis:requires "
                 "is tried before it acts", id="wait"),
])
def test_requires_on_a_workflow_starting_at_no_action_step_is_not_sent_to_that_step(
        tmp_path: Path, start: str, hint: str) -> None:
    """The hint said to write it on :Route, a decision step, whose own horis:requires is
    never tried either (review)."""
    path, line = edited(tmp_path, TRIAGE, "    horis:start :QueuePatient .",
                        '    horis:requires "?this :acuity ?q ." ;\n'
                        f"    horis:start :Route .\n\n{start}")
    (w,) = [p for p in problems(path, TRIAGE) if "on a workflow" in p.message]
    assert (w.severity, w.line, w.node) == ("warning", line, ":Triage"), str(w)
    assert w.hint == hint


# -- effects ----------------------------------------------------------------------------------


def test_an_effect_hung_on_an_argument_outside_its_properties_domain_is_a_warning(
        tmp_path: Path) -> None:
    # Every call wrote :queuedAt and :queueRef on :urgent, the acuity level every urgent
    # patient shares; the step completed and :NotifyNurse blocked (no ?this :queueRef).
    path, line = edited(tmp_path, TRIAGE, '''        horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt''', '''        horis:subject "queue" ;
        horis:asserts [ horis:property :queuedAt''')
    w = the_one(problems(path, TRIAGE), "warning")
    assert w.line == line and ":queuedAt" in w.message and ":AcuityLevel" in w.message
    assert w.hint is not None and w.hint.startswith('write horis:subject "patient"')


# -- adapters ---------------------------------------------------------------------------------


def test_a_commit_scope_on_a_tool_without_its_adapter_is_a_warning(tmp_path: Path) -> None:
    # Valid before; the run called pharmacy.dispense as a plain python: tool, with no
    # --allow ExternalCommit, handing it the request's IRI: "TypeError: 'URIRef' object is
    # not a mapping", and every instance went to the pharmacist.
    path, line = edited_file(tmp_path, PHARMACY, "    horis:adapter :ehr ;\n", "")
    w = mine(found(path), "warning")
    assert len(w) == 1 and w[0].line == line and "no horis:adapter" in w[0].message
    assert w[0].hint is not None and w[0].hint.startswith("add horis:adapter :ehr")


# -- proposals --------------------------------------------------------------------------------


def test_a_fallback_to_the_step_that_reads_the_choice_is_a_warning(tmp_path: Path) -> None:
    # On low confidence :RebookOnProposal ran with ?option unbound: its pattern matched every
    # flight of an accepting carrier ("5 solutions for the arguments of airline.rebook"); with
    # one such flight it would have rebooked the passenger onto it, chosen by nobody.
    path, line = edited(tmp_path, REBOOKING, "horis:fallback :AskOperator .",
                        "horis:fallback :RebookOnProposal .")
    found = [p for p in problems(path, REBOOKING) if "unreachable" not in p.message]
    w = the_one(found, "warning")
    assert w.line == line and w.node == ":ProposeFlight" and "?option" in w.message
    assert w.hint is not None and "(:AskOperator)" in w.hint


def test_a_step_after_the_fallback_that_reads_the_choice_is_a_warning(tmp_path: Path) -> None:
    # The operator's wait timed out into :RebookOnProposal, which reads ?option: nothing was
    # chosen on that way, and `wake` failed "5 solutions for the arguments of airline.rebook"
    # (the hint was horis:forEach: every legal flight, the cancelled one among them).
    path, _ = edited(tmp_path, REBOOKING, "    horis:next :RebookOnOperatorChoice .",
                     '    horis:timeout "1s" ;\n    horis:onTimeout :RebookOnProposal ;\n'
                     "    horis:next :RebookOnOperatorChoice .")
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.node == ":ProposeFlight"
    assert "horis:fallback :AskOperator leads on to :RebookOnProposal, which reads ?option" \
        in w.message
    assert w.hint is not None and w.hint.startswith("lead :AskOperator on to a step")


def test_a_step_after_the_fallback_that_no_pattern_gives_the_choice_fails_there(
    tmp_path: Path,
) -> None:
    # The operator's wait went on to :RebookOnProposal, whose pattern never names ?option (the
    # carrier check dropped): the warning said its pattern "binds ?option itself, to any node
    # it allows, and the tool acts on an option neither the model nor a person chose"; the run
    # failed there instead, "argument "flight" of airline.rebook is not bound".
    path, _ = edited(tmp_path, REBOOKING, "    horis:next :RebookOnOperatorChoice .",
                     "    horis:next :RebookOnProposal .")
    text = path.read_text(encoding="utf-8")
    carrier = "?option :operatedBy ?carrier . ?carrier :acceptsRebooking true .\n"
    assert text.count(carrier) == 1
    path.write_text(text.replace(carrier, ""), encoding="utf-8")
    [w] = [p for p in problems(path, REBOOKING) if p.node == ":ProposeFlight"]
    assert w.message == (
        "horis:fallback :AskOperator leads on to :RebookOnProposal, which reads ?option: this "
        "proposal binds it only when its choice is taken, and on the horis:fallback nothing was "
        "chosen and nothing on the way gives ?option, so :RebookOnProposal fails there, its "
        "argument not given, and the instance fails or takes its horis:onError"
    )
    assert w.hint == (
        "have :RebookOnProposal read the answer that gives ?option in its horis:requires (the "
        "triple of a wait's horis:until that names ?option), or send horis:fallback to a step "
        "that does not read ?option"
    )


def test_a_proposal_whose_choice_is_named_this_is_an_error_at_its_as(tmp_path: Path) -> None:
    # horis:as "this" validated with a warning that a step after the fallback "fails there,
    # its argument not given" (?this always is); the candidates query, asked with ?this bound
    # to the booking, offered the booking itself.
    path, line = edited(tmp_path, REBOOKING, 'horis:as "option" ;', 'horis:as "this" ;')
    found = problems(path, REBOOKING)
    [e] = [p for p in found if p.node == ":ProposeFlight"]
    assert (e.severity, e.line) == ("error", line)
    assert e.message.startswith('horis:as "this" names ?this, the node the instance runs for')
    assert e.hint is not None and e.hint.startswith('name the choice after what it is')


# -- step budgets -----------------------------------------------------------------------------


def test_a_step_budget_below_the_shortest_run_is_an_error(tmp_path: Path) -> None:
    # Every patient was queued (the tool acted), then stopped at :NotifyNurse with
    # StepBudgetExceeded, "going round :NotifyNurse" — a loop there is none of.
    path, line = edited(tmp_path, TRIAGE, "horis:start :QueuePatient .",
                        "horis:start :QueuePatient ;\n    horis:maxSteps 1 .")
    e = the_error(problems(path, TRIAGE))
    assert e.line == line + 1 and "at least 2 steps" in e.message
    path, _ = edited(tmp_path, TRIAGE, "horis:start :QueuePatient .",
                     "horis:start :QueuePatient ;\n    horis:maxSteps 2 .")
    assert problems(path, TRIAGE) == []


def test_two_assertions_answering_to_one_result_field_is_an_error(tmp_path: Path) -> None:
    # Valid before; the step completed with :queueRef written and :queueNote never, the
    # gate filing the field "queueRef" under one of the two.
    ontology = tmp_path / "ehr.ttl"
    ontology.write_text(TRIAGE[1].read_text(encoding="utf-8") + "\n:queueNote a "
                        "owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:string .\n",
                        encoding="utf-8")
    path, line = edited(
        tmp_path, TRIAGE, "horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]",
        "horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ;\n"
        "        horis:asserts [ horis:property :queueNote ; horis:type xsd:string ; "
        'horis:key "queueRef" ; horis:optional true ]')
    e = the_error(problems(path, TRIAGE, ontology))
    assert e.line == line + 1 and '"queueRef"' in e.message and ":queueNote" in e.message
    assert e.hint is not None and e.hint.startswith("give :queueNote a horis:key")


def test_a_next_step_that_never_reads_the_choice_is_a_warning(tmp_path: Path) -> None:
    # The ranker chose :BA175, then :RebookOnProposal bound ?flight itself: "5 solutions for
    # the arguments of airline.rebook"; with one it would have rebooked onto that one.
    text = REBOOKING[0].read_text(encoding="utf-8")
    for old, new in (("?option :operatedBy", "?flight :operatedBy"),
                     (' ,\n               [ horis:arg "flight" ; horis:var "option" ] .', " .")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    path = tmp_path / REBOOKING[0].name
    path.write_text(text, encoding="utf-8")
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.node == ":ProposeFlight" and "never reads ?option" in w.message
    assert w.line == text.splitlines().index("    horis:next :RebookOnProposal ;") + 1


def test_two_mcp_servers_of_one_local_name_are_an_error(tmp_path: Path) -> None:
    # Valid before; mcp://ward/assign_bed reached the other file's o:ward, which did not
    # start ("No module named no_such_server"), and which one won was the graph's order.
    other = tmp_path / "other.ttl"
    other.write_text('@prefix o: <http://example.org/other#> .\n'
                     '@prefix horis: <https://w3id.org/horismos#> .\n'
                     'o:ward a horis:McpServer ; horis:command "python" ;\n'
                     '    horis:args ( "-m" "no_such_server" ) .\n', encoding="utf-8")
    try:
        load_definitions([CLINIC, other])
    except AuthoringError as e:
        error = the_error(list(e.problems))
    else:
        raise AssertionError("two servers named 'ward' loaded")
    assert "'ward'" in error.message and "o:ward" in error.message


@pytest.mark.parametrize("union, fits", [(":Patient :Nurse", True), (":Nurse :Person", True),
                                         (":Nurse :Ward", False)])
def test_an_effects_subject_outside_a_union_domain_is_a_warning(
        tmp_path: Path, union: str, fits: bool) -> None:
    # A property two classes share is written `rdfs:domain [ owl:unionOf (:A :B) ]`. Such a
    # domain was not read, so an effect hung on the acuity level went unwarned. A subject of
    # one of the classes, or of a sub- or superclass of one, fits.
    text = TRIAGE[1].read_text(encoding="utf-8")
    for prop in (":queuedAt", ":queueRef"):
        old = f"{prop} a owl:DatatypeProperty ; rdfs:domain :Patient ;"
        assert text.count(old) == 1
        text = text.replace(old, f"{prop} a owl:DatatypeProperty ; "
                                 f"rdfs:domain [ owl:unionOf ( {union} ) ] ;")
    ontology = tmp_path / "ehr.ttl"
    ontology.write_text(text + "\n:Ward a owl:Class .\n", encoding="utf-8")
    path, line = edited(tmp_path, TRIAGE, """        horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt""", """        horis:subject "queue" ;
        horis:asserts [ horis:property :queuedAt""")
    w = the_one(problems(path, TRIAGE, ontology), "warning")
    assert w.line == line and ":queueRef, :queuedAt have" in w.message
    assert f"rdfs:domain {union.replace(' ', ' or ')}:" in w.message
    found = problems(TRIAGE[0], TRIAGE, ontology)
    if fits:
        assert found == []
    else:
        w = the_one(found, "warning")
        assert 'horis:subject "patient" hangs the effect on a node of :Patient' in w.message


# -- a python: binding in an allowed module ---------------------------------------------------

CLIENT = ROOT / "examples" / "triage" / "ehr_client.py"


def _validate_allowing(tmp_path: Path, binding: str, module: str,
                       source: str | None = None) -> subprocess.CompletedProcess[str]:
    """``validate --allow-module module`` of triage with :ehr.assign_queue bound to
    ``binding``, from a folder holding ehr_client.py (or ``source`` as it)."""
    path, _ = edited(tmp_path, TRIAGE, '"python:ehr_client.assign_queue"', f'"{binding}"')
    (tmp_path / "ehr_client.py").write_text(
        source if source is not None else CLIENT.read_text(encoding="utf-8"), encoding="utf-8")
    return horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]), "--allow-module",
                           module, timeout=120)


@pytest.mark.parametrize(("binding", "module", "said"), [
    pytest.param("python:ehr_client.asign_queue", "ehr_client",
                 "defines no 'asign_queue'; did you mean \"python:ehr_client.assign_queue\"?",
                 id="function-typo"),
    pytest.param("python:ehr_clinet.assign_queue", "ehr_clinet",
                 "no module 'ehr_clinet' is found on the path or in the current folder, where "
                 'a run looks for it: did you mean "python:ehr_client.assign_queue"?',
                 id="module-typo"),
])
def test_an_allowed_module_without_the_function_is_an_error_at_the_binding(
        tmp_path: Path, binding: str, module: str, said: str) -> None:
    """validate said "valid", and run with the same --allow-module refused at its start."""
    p = _validate_allowing(tmp_path, binding, module)
    line = TRIAGE[0].read_text(encoding="utf-8").split("\n").index(
        '    horis:binding "python:ehr_client.assign_queue" ;') + 1
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"triage.ttl:{line}: error: :ehr.assign_queue: binding \"{binding}\"" in p.stdout
    assert said in p.stdout, p.stdout


@pytest.mark.parametrize("source", [
    pytest.param(None, id="defined"),
    pytest.param("from ehr_impl import *\n", id="star-import"),
    pytest.param("def __getattr__(name):\n    return print\n", id="module-getattr"),
    pytest.param("try:\n    from ehr_impl import assign_queue\nexcept ImportError:\n"
                 "    assign_queue = print\n", id="imported-under-try"),
])
def test_an_allowed_module_is_read_not_imported(tmp_path: Path, source: str | None) -> None:
    """What the source may hold, the binding is left to the run; nothing is imported."""
    text = (CLIENT.read_text(encoding="utf-8") if source is None else source)
    p = _validate_allowing(tmp_path, "python:ehr_client.assign_queue", "ehr_client",
                           "open('imported', 'w').close()\n" + text)
    assert "Traceback" not in p.stderr and p.returncode in (0, 1), p.stdout + p.stderr
    assert "assign_queue" not in p.stdout, p.stdout + p.stderr
    assert not (tmp_path / "imported").exists()


def test_a_function_bound_in_a_match_case_is_found(tmp_path: Path) -> None:
    """A module that binds its function where a top-level walk does not look (a ``match``
    case) was said to define no such function, though the run finds it."""
    p = _validate_allowing(tmp_path, "python:ehr_client.assign_queue", "ehr_client",
                           "import sys\nmatch sys.platform:\n    case _:\n"
                           "        def assign_queue(patient, queue):\n"
                           "            return {}\n"
                           "def notify_nurse(nurse, patient, ref):\n    return {}\n")
    assert "Traceback" not in p.stderr and "defines no" not in p.stdout, p.stdout + p.stderr


def _binding_line() -> int:
    return TRIAGE[0].read_text(encoding="utf-8").split("\n").index(
        '    horis:binding "python:ehr_client.assign_queue" ;') + 1


def test_an_allowed_modules_function_whose_parameters_do_not_fit_is_an_error(
        tmp_path: Path) -> None:
    """``validate --allow-module`` found the function but never read its parameters: it said
    "valid", and run with the same flag refused at its start. They are read from its source
    now (nothing imported), as ``--tools`` reads an imported function's."""
    source = CLIENT.read_text(encoding="utf-8").replace(
        "def assign_queue(patient: URIRef, queue: URIRef)",
        "def assign_queue(patient: URIRef, acuity: URIRef)")
    p = _validate_allowing(tmp_path, "python:ehr_client.assign_queue", "ehr_client",
                           "open('imported', 'w').close()\n" + source)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f"triage.ttl:{_binding_line()}: error: :ehr.assign_queue: binding "
            '"python:ehr_client.assign_queue" of ehr.assign_queue does not fit its horis:takes: '
            "the function has no parameter 'queue' for the declared argument \"queue\" (did you "
            "mean 'acuity'?)") in p.stdout, p.stdout
    assert not (tmp_path / "imported").exists()


QUEUE_REF = 'return {"queueRef": f"Q-{level}-{next(_numbers)}"}'


@pytest.mark.parametrize("returns", [
    pytest.param('return {"queue_ref": f"Q-{level}-{next(_numbers)}"}', id="dict"),
    pytest.param('return dict(queue_ref=f"Q-{level}-{next(_numbers)}")', id="dict-call"),
])
@pytest.mark.parametrize("how", ["--allow-module", "--tools"])
def test_a_function_returning_a_key_the_effect_does_not_read_is_an_error(
        tmp_path: Path, returns: str, how: str) -> None:
    """``{"queue_ref": …}`` for an effect asserting ``:queueRef`` validated, and every call
    of the tool (not idempotent) acted, then the gate rejected its result: nothing landed,
    the call left in doubt. Read from the function's source, it is an error at the binding,
    with the horis:key that fixes it; run and tools call refuse it before calling."""
    source = CLIENT.read_text(encoding="utf-8")
    assert source.count(QUEUE_REF) == 1
    written = source.replace(QUEUE_REF, returns).replace(
        "    level = ", "    open('called', 'a').write('x')\n    level = ")
    (tmp_path / "ehr_client.py").write_text(written, encoding="utf-8")
    line = written[: written.index(returns)].count("\n") + 1
    given = ["--allow-module", "ehr_client"] if how == "--allow-module" else [
        "--tools", "ehr_client.py"]
    files = [str(TRIAGE[0]), str(TRIAGE[1])]
    p = horismos_forked(tmp_path, "validate", *files, *given, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f'triage.ttl:{_binding_line()}: error: :ehr.assign_queue: binding '
            f'"python:ehr_client.assign_queue" of ehr.assign_queue: its function returns '
            f'{{"queue_ref": …}} (ehr_client.py:{line}), which the gate rejects') in p.stdout
    assert ':queueRef is required by the effect and no key gives it ("queueRef")' in p.stdout
    assert ('write horis:key "queue_ref" on the effect\'s assertion of :queueRef, or return '
            '"queueRef"') in p.stdout, p.stdout
    world = str(ROOT / "examples" / "triage" / "world.ttl")
    run = horismos_forked(tmp_path, "run", *files, "--world", world, "--all", *given,
                          timeout=120)
    assert run.returncode == 2 and f"triage.ttl:{_binding_line()}: binding" in run.stderr, (
        run.stdout + run.stderr)
    call = horismos_forked(tmp_path, "tools", "call", "ehr.assign_queue", *files, "--world",
                           world, *given, "--args",
                           '{"patient": ":patient42", "queue": ":urgent"}', timeout=120)
    assert call.returncode == 5 and "refused (binding)" in call.stdout, call.stdout
    assert not (tmp_path / "called").exists()  # never called


@pytest.mark.parametrize(("returns", "said"), [
    pytest.param('if level == "X":\n        return {"queue_ref": "Q-X-1"}\n    ' + QUEUE_REF,
                 "warning", id="one-return-of-two"),
    pytest.param("result = {'queueRef': 'Q-A-1'}\n    return result", None, id="a-variable"),
    pytest.param("return {**{'queueRef': 'Q-A-1'}}", None, id="spread"),
    pytest.param('return {":queueRef": "Q-A-1"}', None,
                 id="a-prefixed-key"),
    pytest.param("def inner():\n        return {'queue_ref': 1}\n    " + QUEUE_REF, None,
                 id="an-inner-functions-return"),
    # the name bound again at import: the run may call another function than this def
    pytest.param('return {"queue_ref": 1}\n\n\ntry:\n    from ehr_fast import assign_queue\n'
                 "except ImportError:\n    pass\n", None, id="rebound-under-a-try"),
])
def test_what_the_source_does_not_say_for_certain_is_left_to_the_run(
        tmp_path: Path, returns: str, said: str | None) -> None:
    """A return of something else than a dict written out is not judged; one of two returns
    rejected is a warning, not an error (the other path lands)."""
    source = CLIENT.read_text(encoding="utf-8").replace(QUEUE_REF, returns)
    p = _validate_allowing(tmp_path, "python:ehr_client.assign_queue", "ehr_client", source)
    assert "Traceback" not in p.stderr, p.stderr
    if said is None:
        assert p.returncode == 0 and "returns" not in p.stdout, p.stdout
    else:
        assert p.returncode == 0 and "warning: :ehr.assign_queue: binding" in p.stdout
        assert "one of its function's returns is {\"queue_ref\": …}" in p.stdout, p.stdout


@pytest.mark.parametrize("said", ['""', '"   "'])
def test_an_empty_rank_by_is_an_error_at_its_line(tmp_path: Path, said: str) -> None:
    """`horis:rankBy ""` validated clean: the model was asked to rank by nothing, and the
    offline ranker scored every option alike, the step acting on the first by IRI."""
    path, line = edited(tmp_path, REBOOKING, "horis:rankBy \"the customer's stated preference\" ;",
                        f"horis:rankBy {said} ;")
    error = the_error(problems(path, REBOOKING))
    assert error.line == line and "horis:rankBy says in one string, not an empty one" in (
        error.message), error
