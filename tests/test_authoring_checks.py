"""Mistakes in the shipped workflows, one at a time, caught before anything runs: the file, the
line, and what to write instead — never a traceback, never a run that goes wrong quietly.

Each test edits one line of ``workflows/triage.ttl`` or ``workflows/lab_review.ttl`` (the line
found by its text, so the edit cannot silently miss) and loads it as ``horismos validate`` does.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import cast

import pytest
from forked import horismos_forked
from rdflib import URIRef
from workflow_edits import LAB, REBOOKING, ROOT, TRIAGE, edited, problems, the_error, the_one

from horismos import Agent, AuthoringError, World, load_definitions
from horismos._definitions import parse_timeout
from horismos._model import DecisionStep, ProposalStep

# -- timeouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("5s", 5.0), ("250ms", 0.25), ("PT5S", 5.0), ("PT1M30S", 90.0), ("P1DT2H", 93600.0),
    ("PT0.5S", 0.5),
])
def test_a_timeout_reads_as_seconds(text: str, seconds: float) -> None:
    assert parse_timeout(text) == seconds


@pytest.mark.parametrize("text", ["0s", "PT0S", "P", "PT", "P1Y", "P2M", "PT-5S", "-PT5S",
                                  "5 parsecs"])
def test_a_timeout_that_is_no_time_longer_than_zero_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_timeout(text)


def test_an_xsd_duration_timeout_validates_and_zero_is_an_error_at_its_line(
        tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, 'horis:timeout "5s"', 'horis:timeout "PT5S"')
    assert [p for p in problems(path, TRIAGE) if p.severity == "error"] == []
    # the command line too: it imported a library that is not installed for this form
    p = horismos_forked(".", "validate", str(path), str(TRIAGE[1]), timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr

    path, line = edited(tmp_path, TRIAGE, 'horis:timeout "5s"', 'horis:timeout "0s"')
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line) == (str(path), line)
    assert 'horis:timeout "0s" is not a length of time above zero' in p.message
    assert p.hint is not None and '"PT5S"' in p.hint


@pytest.mark.parametrize("text", ["PT99999999999999999999S", "P99999999999DT1H",
                                  "99999999999999999h"])
def test_a_timeout_longer_than_any_clock_counts_is_an_error_at_its_line(
        tmp_path: Path, text: str) -> None:
    """It overflowed Python's timedelta: validate printed a traceback."""
    path, line = edited(tmp_path, TRIAGE, 'horis:timeout "5s"', f'horis:timeout "{text}"')
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue")
    assert f'horis:timeout "{text}" is longer than any clock counts' in p.message
    assert p.hint is not None and 'write the time it should take, e.g. "30s"' in p.hint


# -- proposal thresholds ----------------------------------------------------------------------


@pytest.mark.parametrize(("written", "said", "hint"), [
    ('"high"^^xsd:decimal', '"high" is not a valid xsd:decimal', "write a value of xsd:decimal"),
    ('"NaN"^^xsd:double', 'horis:confidence "NaN"^^xsd:double is no number',
     "write horis:confidence with the number meant"),
    ('"NaN"^^xsd:decimal', 'horis:confidence "NaN"^^xsd:decimal is no number',
     "write horis:confidence with the number meant"),
])
def test_a_confidence_that_is_no_number_is_an_error_at_its_line(
        tmp_path: Path, written: str, said: str, hint: str) -> None:
    """Ill-typed, it was a ValueError out of the loader; NaN, a decimal.InvalidOperation out
    of the SHACL engine comparing it with the shape's bound 0.0."""
    path, line = edited(tmp_path, REBOOKING, "horis:confidence 0.7 ;",
                        f"horis:confidence {written} ;")
    p = the_error(problems(path, REBOOKING))
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight")
    assert said in p.message and p.hint is not None and hint in p.hint, str(p)


@pytest.mark.parametrize("written", ['"?option"', '"$option"', '" option "'])
def test_horis_as_is_read_with_or_without_the_question_mark(
        tmp_path: Path, written: str) -> None:
    """As horis:var is: "?option" made the step look for ??option and refuse the pattern."""
    path, _ = edited(tmp_path, REBOOKING, 'horis:as "option" ;', f"horis:as {written} ;")
    assert [p for p in problems(path, REBOOKING) if p.severity == "error"] == []
    step = next(s for s in load_definitions([path, REBOOKING[1]]).steps.values()
                if isinstance(s, ProposalStep))
    assert step.as_var == "option"


def test_horis_as_that_names_no_variable_is_an_error_at_its_line(tmp_path: Path) -> None:
    path, line = edited(tmp_path, REBOOKING, 'horis:as "option" ;', 'horis:as "?" ;')
    p = the_error(problems(path, REBOOKING))
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight")
    assert 'horis:as "?" names no SPARQL variable' in p.message
    assert p.hint is not None and 'write horis:as "option"' in p.hint


# -- remote endpoints -------------------------------------------------------------------------

SERVICE = "\n  SERVICE <http://127.0.0.1:9/sparql> { ?x ?y ?z }"


@pytest.mark.parametrize(("pair", "old", "new", "pred", "node"), [
    (TRIAGE, "?this :acuity ?queue .", "?this :acuity ?queue ." + SERVICE,
     "horis:requires", ":QueuePatient"),
    (LAB, ":onCall true .", ":onCall true .\n FILTER EXISTS { SERVICE SILENT ?at { ?a ?b ?c } }",
     "horis:requires", ":Escalate"),
    (LAB, "?this :value ?v ; a ?kind .", "?this :value ?v ; a ?kind ." + SERVICE,
     "horis:requires", ":IsCritical"),
    (REBOOKING, '"?this :operatorChoice ?flight ."',
     '"""?this :operatorChoice ?flight .' + SERVICE + '"""', "horis:until", ":AskOperator"),
    (REBOOKING, "?this :flight ?old .", "?this :flight ?old ." + SERVICE,
     "horis:query", ":ProposeFlight"),
])
def test_a_pattern_that_reads_a_remote_endpoint_is_an_error_at_its_line(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, pred: str,
        node: str) -> None:
    """It validated, and the run opened a connection to the SERVICE's endpoint when the step
    was tried, past --allow-host: precondition, rule, wait condition or candidates alike."""
    path, line = edited(tmp_path, pair, old, new)
    p = the_error(problems(path, pair))
    assert (p.file, p.line, p.node) == (str(path), line + 1, node), str(p)
    assert f"{pred} reads the remote endpoint SERVICE" in p.message
    assert "never a remote endpoint" in p.message
    assert p.hint is not None and p.hint.startswith("drop SERVICE"), str(p)


def test_candidates_read_from_the_web_are_an_error(tmp_path: Path) -> None:
    """rdflib loads a SELECT's FROM <IRI> from the web before evaluating it."""
    path, line = edited(tmp_path, REBOOKING, 'horis:query """',
                        'horis:query """SELECT ?option FROM <http://127.0.0.1:9/g> WHERE {')
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('?option != ?old)"""', '?option != ?old) }"""'),
                    encoding="utf-8")
    p = the_error(problems(path, REBOOKING))
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight"), str(p)
    assert "horis:query reads the remote endpoint FROM <http://127.0.0.1:9/g>" in p.message
    assert p.hint is not None and p.hint.startswith("drop FROM <http://127.0.0.1:9/g> and")


# -- decision rules ---------------------------------------------------------------------------


def test_a_rule_order_that_is_not_a_number_is_an_error_at_its_line(tmp_path: Path) -> None:
    path, line = edited(tmp_path, LAB, "horis:order 1 ;", 'horis:order "first" ;')
    p = the_error(problems(path, LAB))
    assert (p.file, p.line, p.node) == (str(path), line, ":IsCritical")
    assert 'horis:order "first" is not a number' in p.message
    assert p.hint is not None and "horis:order 1" in p.hint


def test_two_rules_of_one_order_are_an_error(tmp_path: Path) -> None:
    """Which of two rules of one order is tried first would be the graph's order: the branch
    taken could change between two loads of the same files."""
    path, _ = edited(
        tmp_path, LAB, "horis:order 1 ;",
        'horis:order 1 ; horis:requires "?this a ?c ." ; horis:next :File ] ;\n'
        "    horis:when [ horis:order 1 ;")
    p = the_error(problems(path, LAB))
    assert (p.file, p.node) == (str(path), ":IsCritical")
    assert "2 horis:when rules have horis:order 1" in p.message
    assert p.hint is not None and "give each rule its own horis:order" in p.hint


# -- what the parser stops at -----------------------------------------------------------------


def test_an_undeclared_prefix_is_told_to_be_declared(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, "horis:tool :ehr.notify_nurse",
                        "horis:tool ehr:notify_nurse")
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line) == (str(path), line)
    assert 'Prefix "ehr:" not bound' in p.message
    assert p.hint == "declare the prefix at the top of the file: @prefix ehr: <…> ."
    # another file given declares it: its namespace is the one suggested
    other = tmp_path / "prefixes.ttl"
    other.write_text("@prefix ehr: <http://example.org/ehr#> .\n")
    try:
        load_definitions([path, other, TRIAGE[1]])
    except AuthoringError as e:
        (p,) = e.problems
    assert p.hint == ("declare the prefix at the top of the file: "
                      "@prefix ehr: <http://example.org/ehr#> .")


def test_a_file_that_is_not_utf8_is_located_at_its_first_bad_byte(tmp_path: Path) -> None:
    text = TRIAGE[0].read_text(encoding="utf-8")
    assert text.count("Notify the nurse") == 1
    path = tmp_path / "latin1.ttl"
    path.write_bytes(text.replace("Notify the nurse", "Notify the nursé").encode("latin-1"))
    line = text[: text.index("Notify the nurse")].count("\n") + 1
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line) == (str(path), line)
    assert "not UTF-8" in p.message and "0xe9" in p.message
    assert p.hint is not None and "iconv -f latin1 -t utf-8" in p.hint


@pytest.mark.parametrize(("old", "new", "said"), [
    ('"python:ehr_client.assign_queue"', '"python:ehr_client.assign_queu"',
     "did you mean 'ehr_client.assign_queue'?"),
    ('"python:ehr_client.notify_nurse"', '"mcp://ward/notify_nurse"',
     'no MCP server named "ward" is declared'),
])
def test_run_says_where_a_binding_that_does_not_resolve_is_written(
        tmp_path: Path, old: str, new: str, said: str) -> None:
    """validate located it; run said the same thing with no file or line."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    examples = ROOT / "examples" / "triage"
    p = horismos_forked(tmp_path, "run", str(path), str(TRIAGE[1]), "--world",
                        str(examples / "world.ttl"), "--tools", str(examples / "ehr_client.py"),
                        "--all", timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"{path}:{line}: binding {new}" in p.stderr
    assert said in p.stderr


def test_a_folder_with_no_rdf_file_is_an_error_not_an_empty_valid_set(tmp_path: Path) -> None:
    """validate said "0 tools, 0 workflows, 0 steps: valid" of an empty or unreadable one."""
    empty = tmp_path / "defs"
    empty.mkdir()
    (empty / "notes.txt").write_text("not RDF")
    p = horismos_forked(".", "validate", str(empty), timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"{empty}: error: no RDF file (.n3, .nq, .nt, .trig, .ttl) in this folder" in (
        p.stdout + p.stderr)


def test_a_step_described_in_two_files_is_warned_of_at_the_second(tmp_path: Path) -> None:
    """The two descriptions merge: here both horis:requires apply and every instance blocks,
    with nothing said about the second file."""
    extra = tmp_path / "extra.ttl"
    extra.write_text("@prefix : <http://example.org/ehr#> .\n"
                     "@prefix horis: <https://w3id.org/horismos#> .\n"
                     ":NotifyNurse a horis:ActionStep ;\n"
                     '    horis:requires " ?nurse a :Nurse ; :onDuty false . " .\n')
    defs = load_definitions([TRIAGE[0], extra, TRIAGE[1]])
    (p,) = [w for w in defs.warnings if "also described" in w.message]
    first = TRIAGE[0].read_text().splitlines().index(":NotifyNurse a horis:ActionStep ;") + 1
    assert (p.file, p.line, p.node) == (str(extra), 3, ":NotifyNurse")
    assert f"also described in {TRIAGE[0]}:{first}" in p.message
    assert p.hint == "describe it in one file: remove or rename one of the two"


def test_a_tool_two_files_contradict_names_the_other_file_and_each_value(tmp_path: Path) -> None:
    """A copy of :ehr.assign_queue edited in a second file (a longer timeout, idempotent) was
    not said to be described twice, since a tool the two contradict is not modelled; the
    errors that were said named one file, called the argument declared in both an ambiguous
    subject ("patient", "patient"), and asked for horis:idempotent "without quotes"."""
    extra = tmp_path / "extra.ttl"
    extra.write_text("@prefix : <http://example.org/ehr#> .\n"
                     "@prefix horis: <https://w3id.org/horismos#> .\n"
                     ":ehr.assign_queue a horis:Tool ;\n"
                     "    horis:takes [ horis:arg [ horis:name \"patient\" ;\n"
                     "                              horis:type :Patient ] ] ;\n"
                     '    horis:timeout "30s" ;\n'
                     "    horis:idempotent true .\n")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([TRIAGE[0], extra, TRIAGE[1]])
    found = raised.value.problems
    lines = TRIAGE[0].read_text().splitlines()
    opened = lines.index(":ehr.assign_queue a horis:Tool ;") + 1
    twice = [p for p in found if "also described" in p.message]
    assert [(p.file, p.line) for p in twice] == [(str(extra), 3)]
    assert f"also described in {TRIAGE[0]}:{opened}" in twice[0].message
    timeout = lines.index('    horis:timeout "5s" ;', opened) + 1
    idempotent = lines.index("    horis:idempotent false .", opened) + 1
    messages = [p.message for p in found]
    assert (f'horis:timeout is given 2 values, "5s" at {TRIAGE[0]}:{timeout}, "30s" at '
            f"{extra}:6") in "\n".join(messages)
    assert (f"horis:idempotent is given 2 values, false at {TRIAGE[0]}:{idempotent}, true at "
            f"{extra}:7") in "\n".join(messages)
    assert not [m for m in messages if "ambiguous" in m]


def test_two_starts_name_both_steps(tmp_path: Path) -> None:
    """The shapes' message alone said a workflow needs one horis:start, with an example, and
    not which two it was given."""
    path, line = edited(tmp_path, TRIAGE, "horis:start :QueuePatient .",
                        "horis:start :QueuePatient , :NotifyNurse .")
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":Triage")
    assert p.message.startswith(f"horis:start is given 2 values, :NotifyNurse at line {line}, "
                                f":QueuePatient at line {line}: ")
    assert p.hint == "keep the one meant, delete the rest"


def test_a_not_exists_that_names_no_variable_of_its_pattern_is_warned_of_at_its_line(
        tmp_path: Path) -> None:
    """The guard against queueing a patient twice written about ?patient, which nothing
    binds: it asked whether any patient at all was queued, so after the first one every
    other patient was blocked at :QueuePatient — and validate said valid."""
    guard = "FILTER NOT EXISTS { ?this :queuedAt ?t }"
    path, line = edited(tmp_path, TRIAGE, guard, guard.replace("?this", "?patient"))
    found = [p for p in problems(path, TRIAGE) if "whole world" in p.message]
    assert [(p.severity, p.node, p.line) for p in found] == [("warning", ":QueuePatient", line)]
    assert "FILTER NOT EXISTS names ?patient, ?t" in found[0].message
    assert "write ?this for ?patient" in (found[0].hint or "")
    # a test that shares a variable with its pattern, or is about the focus, says nothing
    for shared in ("FILTER NOT EXISTS { ?queue :queuedAt ?t }", guard):
        path, _ = edited(tmp_path, TRIAGE, guard, shared)
        assert not [p for p in problems(path, TRIAGE) if "whole world" in p.message], shared


# -- a type test that misses the subclasses ---------------------------------------------------

RULE = """?this :value ?v ; a ?kind .
                           ?kind :criticalAbove ?limit .
                           FILTER (?v > ?limit) """
TYPED_RULE = "?this a :LabResult ; :value ?v . FILTER (?v > 6.0) "
LAB_WORLD = ROOT / "examples" / "lab" / "world.ttl"


@pytest.mark.parametrize(("focus", "also"), [
    (":LabResult", ""), (":PotassiumResult", " (a subclass of :LabResult)"),
])
def test_a_type_test_of_the_focus_type_that_misses_its_subclasses_is_a_warning(
        tmp_path: Path, focus: str, also: str) -> None:
    """The world types ``:k1 a :PotassiumResult``; the workflow runs for it (the focus type's
    subclasses count), but the rule's ``?this a :LabResult`` never held for it, and a
    critical potassium was filed instead of escalated: validate said valid."""
    path, line = edited(tmp_path, LAB, RULE, TYPED_RULE)
    path.write_text(path.read_text().replace("horis:focusType :LabResult",
                                             f"horis:focusType {focus}"))
    w = the_one(problems(path, LAB), "warning")
    assert (w.file, w.line, w.node) == (str(path), line, ":IsCritical"), w
    assert w.message.startswith(
        "horis:requires: ?this a :LabResult matches only nodes typed :LabResult itself, not "
        "those typed with a subclass (:PotassiumResult): a pattern sees the types the world "
        "states, not the rdfs:subClassOf closure"), w.message
    assert f":ReviewResult runs for every {focus}, subclasses included" in w.message
    assert w.hint == f"drop ?this a :LabResult: the focus type {focus} already makes ?this " \
        f"one{also}"


@pytest.mark.parametrize(("pair", "old", "new", "extra", "node", "var", "cls", "subclasses"), [
    pytest.param(TRIAGE, "?nurse a :Nurse ;", "?nurse a :Person ;", "", ":NotifyNurse",
                 "?nurse", ":Person", ":Nurse, :Patient", id="requires"),
    pytest.param(TRIAGE, "FILTER NOT EXISTS { ?this :assignedNurse ?n }",
                 "FILTER NOT EXISTS { ?this :assignedNurse ?n . ?n a :Person }", "",
                 ":NotifyNurse", "?n", ":Person", ":Nurse, :Patient", id="not-exists"),
    pytest.param(REBOOKING, "?option a :Flight ;", "?option a :Flight ;",
                 ":CharterFlight rdfs:subClassOf :Flight .", ":ProposeFlight",
                 "?option", ":Flight", ":CharterFlight", id="candidates"),
])
def test_a_type_test_of_a_class_with_subclasses_is_a_warning_naming_them(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, extra: str, node: str,
        var: str, cls: str, subclasses: str) -> None:
    """Not about the focus: the way out is a path through the subclasses, or the subclass."""
    path, line = edited(tmp_path, pair, old, new)
    ontology = tmp_path / pair[1].name
    ontology.write_text(pair[1].read_text(encoding="utf-8") + "\n" + extra + "\n")
    w = the_one(problems(path, pair, ontology), "warning")
    assert (w.file, w.line, w.node) == (str(path), line, node), w
    assert f"{var} a {cls} matches only nodes typed {cls} itself, not those typed with a " \
        f"subclass ({subclasses})" in w.message, w.message
    assert w.hint is not None and w.hint.startswith(f"write {var} a/rdfs:subClassOf* {cls} with")


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_a_type_test_that_follows_the_subclasses_validates_and_matches_them(
        tmp_path: Path, store: str) -> None:
    """The hint's property path has no compiled plan: the store runs the pattern as a query,
    which follows the rdfs:subClassOf statements the world holds, so :k1, a :PotassiumResult,
    is escalated once the ontology is loaded there too (and filed while it is not)."""
    path, _ = edited(tmp_path, LAB, RULE, TYPED_RULE.replace(" a ", " a/rdfs:subClassOf* "))
    assert problems(path, LAB) == []
    escalated: list[URIRef] = []

    def escalate(result: URIRef, clinician: URIRef) -> dict[str, object]:
        escalated.append(result)
        return {"escalatedTo": clinician}

    agent = Agent.from_files(path, LAB[1], tools={
        "lab_client.escalate": escalate,
        "lab_client.file_result": lambda result: {"archiveRef": "ARCH-1"}})
    rule = cast(DecisionStep, agent.definitions.steps[agent.definitions.expand(":IsCritical")])
    assert rule.rules[0].requires._plan is None
    k1 = agent.definitions.expand(":k1", exists=lambda _: True)
    for world, taken in ((World.from_files(LAB_WORLD, store=store), []),
                         (World.from_files(LAB_WORLD, LAB[1], store=store), [k1])):
        run = agent.run(world, focus=k1)
        assert run.status == "completed", run.error
        assert escalated == taken


def test_every_bad_flag_and_retries_value_is_said_the_same_in_every_process(
        tmp_path: Path) -> None:
    # With `true` beside `"yes"` only the first value the graph listed was judged, and the
    # shapes' "takes one boolean" at the same line was dropped for the horis:retries error
    # there: "yes" was not reported at all, and which message came out followed the order
    # the values were stored in.
    path, line = edited(tmp_path, TRIAGE, "    horis:retries 1 ;\n    horis:idempotent true .",
                        '    horis:idempotent true ; horis:retries "one" ; '
                        'horis:idempotent "yes" .')
    outputs = set()
    for seed in ("0", "1", "2", "5"):
        p = horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]),
                            env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120)
        assert p.returncode == 1, p.stdout + p.stderr
        outputs.add(p.stdout)
    assert len(outputs) == 1, outputs
    assert outputs.pop().splitlines() == [
        f'{path}:{line}: error: :ehr.notify_nurse: horis:idempotent must be true or false, not '
        '"yes" — write horis:idempotent true or horis:idempotent false, without quotes',
        f'{path}:{line}: error: :ehr.notify_nurse: horis:retries "one" is not a whole number '
        '≥ 0 — write horis:retries 2',
        "invalid: 2 errors",
    ]


def test_retries_written_in_quotes_is_one_error_saying_to_drop_the_quotes(
        tmp_path: Path) -> None:
    # "3" was read as 3 retries: beside the shapes' error came a warning of "horis:retries 3 on
    # a tool that is not idempotent", about a count the tool does not have
    path, line = edited(tmp_path, TRIAGE, '    horis:idempotent false .',
                        '    horis:retries "3" ;\n    horis:idempotent false .')
    p = horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]), timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines() == [
        f'{path}:{line}: error: :ehr.assign_queue: horis:retries "3" is a string, not a number '
        "— write horis:retries 3 without quotes",
        "invalid: 1 error",
    ]


def test_a_candidates_query_that_does_not_parse_is_said_at_the_line_of_the_slip(
        tmp_path: Path) -> None:
    # The pattern is parsed inside a SELECT … WHERE { line of the loader's own, so the parser's
    # count was one too high ("line 5" for the pattern's 4th), and the error stood at the
    # horis:candidates line; a horis:requires slip is said at its own line.
    path, line = edited(tmp_path, REBOOKING, ":seatsLeft ?seats .\n", ":seatsLeft ?seats ..\n")
    e = the_error(problems(path, REBOOKING))
    assert (e.line, e.node) == (line, ":ProposeFlight"), e
    opened = REBOOKING[0].read_text(encoding="utf-8").splitlines().index(
        '    horis:candidates [ horis:query """') + 1
    assert e.message == ("the horis:candidates query does not parse: unexpected '.' on line "
                         f"{line - opened + 1} of the pattern"), e


# -- a step that requires what only its own tool writes ---------------------------------------

QUEUED_GUARD = "FILTER NOT EXISTS { ?this :queuedAt ?t } "
""":QueuePatient's guard against queueing twice: written as a plain triple, it blocks."""


def _validate(tmp_path: Path, *paths: Path | str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(tmp_path, "validate", *map(str, paths), timeout=120)


_TOOL_GUARD = ('    horis:timeout "5s" ;\n    horis:idempotent false .',
               '    horis:timeout "5s" ;\n    horis:requires "?patient :queuedAt ?t ." ;\n'
               "    horis:idempotent false .")


@pytest.mark.parametrize(("edit", "below", "said"), [
    pytest.param((QUEUED_GUARD, "?this :queuedAt ?t . "), 0,
                 ":QueuePatient: horis:requires requires :queuedAt, which only this step's tool "
                 "(:ehr.assign_queue) writes: the step can never fire before it has fired, and "
                 "every instance stops here — if it is a guard against running twice, write "
                 "FILTER NOT EXISTS { ?this :queuedAt ?t }; else have a step before it write "
                 ":queuedAt", id="a-step"),
    # the guard written inverted, FILTER EXISTS for FILTER NOT EXISTS: it too needs a match
    # only the step's own call can make, so every instance stopped there, and it validated
    pytest.param((QUEUED_GUARD, "FILTER EXISTS { ?this :queuedAt ?t } "), 0,
                 ":QueuePatient: horis:requires requires :queuedAt, which only this step's tool "
                 "(:ehr.assign_queue) writes: the step can never fire before it has fired, and "
                 "every instance stops here — if it is a guard against running twice, write "
                 "FILTER NOT EXISTS { ?this :queuedAt ?t }; else have a step before it write "
                 ":queuedAt", id="a-step-filter-exists"),
    # the tool's own horis:requires is tried at every call with its arguments bound: every
    # call was blocked, every workflow's and tools call's
    pytest.param(_TOOL_GUARD, 1,
                 ":ehr.assign_queue: horis:requires requires :queuedAt, which only this tool "
                 "writes: no call of it can pass its horis:requires before one has, so every "
                 "call (each step's, and tools call's) is blocked — if it is a guard against "
                 "running twice, write FILTER NOT EXISTS { ?patient :queuedAt ?t }; else have "
                 "another tool write :queuedAt", id="a-tool"),
])
def test_a_pattern_requiring_what_only_its_own_tool_writes_is_warned_at_the_line(
        tmp_path: Path, edit: tuple[str, str], below: int, said: str) -> None:
    """The guard written as a triple: :queuedAt is written by :ehr.assign_queue only, so no
    patient ever had it before the call, every instance stopped there, and it validated."""
    path, line = edited(tmp_path, TRIAGE, *edit)
    p = _validate(tmp_path, path, TRIAGE[1])
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert p.stdout.splitlines() == [
        f"{path}:{line + below}: warning: {said}",
        "note: 2 python: bindings not resolved (python:ehr_client.assign_queue, "
        "python:ehr_client.notify_nurse): give --tools FILE.py or --allow-module MODULE to "
        "check each against its function",
        "2 tools, 1 workflow, 2 steps: valid (1 warning)",
    ]


def test_valid_says_which_bindings_it_did_not_check_and_the_option_that_does(
        tmp_path: Path) -> None:
    """"valid" of a python: binding whose function its module does not define, unresolved
    without --tools, and the first run met it."""
    examples = ROOT / "examples"
    p = _validate(tmp_path, *TRIAGE)
    assert p.returncode == 0 and "note: 2 python: bindings not resolved" in p.stdout, p.stdout
    checked = _validate(tmp_path, *TRIAGE, "--tools", str(examples / "triage" / "ehr_client.py"))
    assert checked.returncode == 0 and "note:" not in checked.stdout, checked.stdout
    mcp = _validate(tmp_path, examples / "mcp")
    assert mcp.returncode == 0 and (
        "note: 1 MCP tool not reached: give --connect to check each server's input schema "
        "against horis:takes") in mcp.stdout, mcp.stdout


def test_a_world_that_holds_the_property_quiets_the_warning(tmp_path: Path) -> None:
    """Re-running for the nodes that already have it is what such a pattern is for."""
    path, _ = edited(tmp_path, TRIAGE, QUEUED_GUARD, "?this :queuedAt ?t . ")
    world = tmp_path / "world.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
                     ':patient42 a :Patient ; :acuity :urgent ;\n'
                     '    :queuedAt "2026-01-01T08:00:00Z"^^xsd:dateTime .\n', encoding="utf-8")
    quiet = _validate(tmp_path, path, TRIAGE[1], "--world", world)
    assert "only this step's tool" not in quiet.stdout and quiet.returncode == 0, quiet.stdout
    said = _validate(tmp_path, path, TRIAGE[1], "--world", ROOT / "examples/triage/world.ttl")
    assert "requires :queuedAt, which only this step's tool" in said.stdout, said.stdout


_NOTIFY_ALSO_QUEUES = (
    "horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ]",
    "horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ] ;\n"
    "        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ]",
)


@pytest.mark.parametrize(("edits", "also"), [
    pytest.param([(QUEUED_GUARD, "OPTIONAL { ?this :queuedAt ?t } ")], None, id="optional"),
    pytest.param([(QUEUED_GUARD, "MINUS { ?this :queuedAt ?t } ")], None, id="minus"),
    pytest.param([(QUEUED_GUARD, "{ ?this :queuedAt ?t } UNION { ?this :acuity :urgent } ")],
                 None, id="union"),
    pytest.param([(QUEUED_GUARD, "?other :queuedAt ?t . ")], None, id="another-node"),
    pytest.param([(QUEUED_GUARD, "FILTER (EXISTS { ?this :queuedAt ?t } || ?queue = :urgent) ")],
                 None, id="exists-or"),
    pytest.param([(QUEUED_GUARD, "FILTER (!EXISTS { ?this :queuedAt ?t }) ")], None,
                 id="not-exists-written-with-bang"),
    pytest.param([(QUEUED_GUARD, "?this :queuedAt ?t . "),
                  ("horis:start :QueuePatient", "horis:start :NotifyNurse"),
                  ('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                   'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;\n'
                   "    horis:next :QueuePatient ."),
                  _NOTIFY_ALSO_QUEUES], None, id="an-earlier-step-writes-it"),
    pytest.param([(QUEUED_GUARD, "?this :queuedAt ?t . "),
                  ("horis:start :QueuePatient", "horis:start :Hold")],
                 ':Hold a horis:WaitStep ; horis:reason "a clerk records the arrival" ;\n'
                 "    horis:wake horis:OperatorInput ; horis:delivery horis:Silent ;\n"
                 "    horis:next :QueuePatient .",
                 id="a-wait-before-it"),
    pytest.param([(QUEUED_GUARD, "?this :queuedAt ?t . ")],
                 ':patient7 :queuedAt "2026-01-01T08:00:00Z"^^xsd:dateTime .', id="loaded-data"),
    pytest.param([(QUEUED_GUARD, "?this :queuedAt ?t . ")],
                 ":stampedAt rdfs:subPropertyOf :queuedAt .", id="a-subproperty"),
])
def test_what_can_be_there_before_the_step_fires_is_not_warned(
        tmp_path: Path, edits: list[tuple[str, str]], also: str | None) -> None:
    """Read in OPTIONAL, MINUS or one side of a UNION, of another node, written by the tool of
    a step that can run before it, given by an operator at a wait before it, stated by loaded
    data or entailed: none of it blocks."""
    text = TRIAGE[0].read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    if also is not None:
        text += f"\n{also}\n"
    path = tmp_path / TRIAGE[0].name
    path.write_text(text, encoding="utf-8")
    found = problems(path, TRIAGE)
    assert not [p for p in found if "only this step's tool" in p.message], found
    assert not [p for p in found if p.severity == "error"], found


def test_a_later_step_writing_it_too_does_not_quiet_the_warning(tmp_path: Path) -> None:
    """:NotifyNurse runs after :QueuePatient: what its tool writes is not there before."""
    path, line = edited(tmp_path, TRIAGE, QUEUED_GUARD, "?this :queuedAt ?t . ")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(*_NOTIFY_ALSO_QUEUES), encoding="utf-8")
    warned = [p for p in problems(path, TRIAGE) if "only this step's tool" in p.message]
    # the tool's new line stands above the step's
    assert [(p.line, p.node) for p in warned] == [(line + 1, ":QueuePatient")], warned


@pytest.mark.parametrize("also", [
    pytest.param([_NOTIFY_ALSO_QUEUES], id="another-tool-writes-it"),
    pytest.param([('horis:requires "?patient :queuedAt ?t ."',
                   'horis:requires "OPTIONAL { ?patient :queuedAt ?t }"')], id="optional"),
    pytest.param([("horis:start :QueuePatient", "horis:start :Hold"),
                  ("    horis:bind [ horis:arg \"patient\" ; horis:var \"this\" ] ;\n"
                   "    horis:next :NotifyNurse .",
                   "    horis:bind [ horis:arg \"patient\" ; horis:var \"this\" ] ;\n"
                   "    horis:next :NotifyNurse .\n\n"
                   ':Hold a horis:WaitStep ; horis:reason "a clerk records the arrival" ;\n'
                   "    horis:wake horis:OperatorInput ; horis:delivery horis:Silent ;\n"
                   "    horis:next :QueuePatient .")], id="a-wait-before-a-step-calling-it"),
])
def test_a_tool_requiring_what_can_be_there_first_is_not_warned(
        tmp_path: Path, also: list[tuple[str, str]]) -> None:
    path, _ = edited(tmp_path, TRIAGE, *_TOOL_GUARD)
    text = path.read_text(encoding="utf-8")
    for old, new in also:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    found = problems(path, TRIAGE)
    assert not [p for p in found if "only this tool writes" in p.message], found
    assert not [p for p in found if p.severity == "error"], found
