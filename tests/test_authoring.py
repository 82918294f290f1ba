"""Authoring errors: every mistake a modeler can make is reported where it was written.

Each fixture in ``fixtures/authoring`` is ``workflows/triage.ttl`` with one thing broken. A
test loads it with the EHR ontology and checks the one problem it causes: its file, its line
(found by searching the fixture for the offending text, so an edit to a fixture cannot make
the check pass by accident), the node an author would name, the message and the hint.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Namespace

import horismos._preconditions as preconditions
from horismos import Agent, AuthoringError, Definitions, Problem, World, load_definitions

ROOT = Path(__file__).resolve().parent.parent
AUTHORING = Path(__file__).resolve().parent / "fixtures" / "authoring"
EHR = ROOT / "ontologies" / "ehr.ttl"
TRIAGE = ROOT / "workflows" / "triage.ttl"
EX = Namespace("http://example.org/ehr#")


def problems(name: str) -> tuple[Problem, ...]:
    """The problems loading the fixture ``name`` (with the EHR ontology) raises."""
    with pytest.raises(AuthoringError) as raised:
        load_definitions([AUTHORING / name, EHR])
    return raised.value.problems


def line_of(path: Path, text: str, *, after: str | None = None) -> int:
    """The line of the one place ``text`` is written (after the line holding ``after``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    if after is not None:
        start = next(i for i, line in enumerate(lines) if after in line) + 1
    hits = [i for i, line in enumerate(lines[start:], start + 1) if text in line]
    assert hits, f"{text!r} is not in {path.name}"
    assert after is not None or len(hits) == 1, f"{text!r} is written more than once: {hits}"
    return hits[0]


def only(found: tuple[Problem, ...] | list[Problem]) -> Problem:
    """The one problem in ``found``: a second message for the same mistake is noise."""
    assert len(found) == 1, "\n".join(str(p) for p in found)
    return found[0]


def check(p: Problem, name: str, line: int, node: str | None, *said: str, hint: str) -> None:
    assert p.file == str(AUTHORING / name)
    assert p.line == line, str(p)
    assert p.node == node
    for text in said:
        assert text in p.message, str(p)
    assert p.hint is not None and hint in p.hint, str(p)


def test_the_base_the_fixtures_break_is_valid() -> None:
    defs = load_definitions([TRIAGE, EHR])
    assert set(defs.steps) == {EX.QueuePatient, EX.NotifyNurse}
    assert defs.warnings == []


@pytest.mark.parametrize(
    ("name", "text", "after", "node", "said", "hint"),
    [
        pytest.param(
            "undeclared_tool.ttl", "horis:tool :ehr.assign_queu ;", None, ":QueuePatient",
            ("horis:tool :ehr.assign_queu", "referenced but not declared"),
            "point horis:tool at one of: :ehr.assign_queue, :ehr.notify_nurse",
            id="tool-not-declared"),
        pytest.param(
            "undeclared_next.ttl", "horis:next :NotifyNurze", None, ":QueuePatient",
            ("horis:next points to :NotifyNurze, which is not declared",),
            "point horis:next at one of: :NotifyNurse, :QueuePatient", id="next-to-nothing"),
        pytest.param(
            "undeclared_on_error.ttl", "horis:onError :AskHuman", None, ":QueuePatient",
            ("horis:onError points to :AskHuman, which is not declared",),
            "declare :AskHuman as a step", id="on-error-to-nothing"),
        pytest.param(
            "effect_subject_ambiguous.ttl", "horis:effect [", ":ehr.assign_queue a",
            ":ehr.assign_queue",
            ("subject is ambiguous", '"patient", "queue" are class-typed'),
            'write horis:subject "patient" (or "queue")', id="effect-subject-ambiguous"),
        pytest.param(
            "effect_subject_none.ttl", "horis:effect [", ":ehr.assign_queue a",
            ":ehr.assign_queue", ("no horis:subject and no class-typed argument",),
            "add an argument typed with an ontology class", id="effect-subject-missing"),
        pytest.param(
            "effect_subject_unknown.ttl", 'horis:subject "pateint"', None, ":ehr.assign_queue",
            ('horis:subject "pateint" is not an argument', '"patient", "queue"'),
            'name one of the tool\'s class-typed arguments: "patient", "queue"',
            id="effect-subject-not-an-argument"),
        pytest.param(
            "arg_without_type.ttl", 'horis:arg [ horis:name "nurse" ]', None,
            ":ehr.notify_nurse", ('argument "nurse" has no horis:type',),
            'write horis:arg [ horis:name "nurse" ; horis:type :SomeClass ]', id="arg-untyped"),
        pytest.param(
            "timeout_parsecs.ttl", 'horis:timeout "5 parsecs"', None, ":ehr.notify_nurse",
            ('horis:timeout "5 parsecs" is not a length of time above zero',),
            'write "250ms", "5s", "2m", "1h" or an xsd:duration', id="timeout-parsecs"),
        pytest.param(
            "rust_binding.ttl", 'horis:binding "rust:', None, ":ehr.notify_nurse",
            ("rust: bindings cannot run in the Python runtime",),
            'bind the tool to "python:module.function", "mcp://SERVER/TOOL"', id="rust-binding"),
        pytest.param(
            "bad_sparql.ttl", "FILTER NOT EXISTS {", ":NotifyNurse a", ":NotifyNurse",
            ("horis:requires is not a valid SPARQL", "the '{' after EXISTS on line 62 is never "
             "closed"), "close it with '}'", id="requires-unclosed"),
        pytest.param(
            "bad_sparql_line.ttl", ":onDuty = true", None, ":NotifyNurse",
            ("horis:requires is not a valid SPARQL", "on line 2 of the pattern"),
            "write triple patterns and FILTERs as inside WHERE", id="requires-bad-line"),
        pytest.param(
            "decision_without_otherwise.ttl", ":Route a horis:DecisionStep", None, ":Route",
            ("the DecisionStep has no horis:otherwise",),
            "add horis:otherwise :SomeStep (one of: :NotifyNurse, :QueuePatient, :Route)",
            id="decision-without-otherwise"),
        pytest.param(
            "workflow_without_start.ttl", ":Triage a horis:Workflow", None, ":Triage",
            ("the workflow has no horis:start",),
            "write horis:start :FirstStep (one of: :NotifyNurse, :QueuePatient)",
            id="workflow-without-start"),
        pytest.param(
            "misspelt_term.ttl", "horis:onErorr", None, ":QueuePatient",
            ("horis:onErorr is not a Horismos term",), "did you mean horis:onError?",
            id="misspelt-term"),
    ],
)
def test_each_authoring_error_names_file_line_node_and_what_to_write(
        name: str, text: str, after: str | None, node: str, said: tuple[str, ...],
        hint: str) -> None:
    p = only(problems(name))
    assert p.severity == "error"
    check(p, name, line_of(AUTHORING / name, text, after=after), node, *said, hint=hint)


def test_a_turtle_syntax_error_gives_the_line_missing_its_separator() -> None:
    # The ';' is missing after horis:timeout "5s": the parser stops on the next line, and the
    # line to change is the one before it, the last written before where it stopped.
    name = "syntax_error.ttl"
    p = only(problems(name))
    line = line_of(AUTHORING / name, 'horis:timeout "5s"', after=":ehr.assign_queue a")
    # A file that does not parse has no nodes yet; the message quotes the line to change.
    check(p, name, line, None, "Turtle syntax error", 'at: horis:timeout "5s"',
          hint="separate predicates with ';'")


@pytest.mark.parametrize(("old", "new", "at", "said", "hint"), [
    # the ']' of :ehr.assign_queue's horis:takes deleted: rdflib stopped at the tool's ' .',
    # 8 lines later, and said "']' expected" there
    pytest.param('        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]\n    ] ;',
                 '        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]\n    ;',
                 ("    horis:takes [", ":ehr.assign_queue a"),
                 "the '[' opened at line {at} is never closed",
                 "close it with ']' before line {next}, where its block ends", id="takes"),
    # an assertion's own ']' deleted: the effect's ']' closed it, and the effect's '[' was
    # left open; the one to close is the assertion's
    pytest.param("horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]\n",
                 "horis:asserts [ horis:property :queueRef ; horis:type xsd:string\n",
                 ("horis:asserts [ horis:property :queueRef", None),
                 "the '[' opened at line {at} is never closed",
                 "close it with ']' before line {next}, where its block ends", id="asserts"),
    pytest.param('    horis:timeout "5s" ;\n    horis:idempotent false .',
                 '    horis:timeout "5s"\n    horis:idempotent false .',
                 ('horis:timeout "5s"', None), "expected '.'",
                 "separate predicates with ';': add it at the end of line {at}", id="semicolon"),
    pytest.param('    horis:idempotent false .', '    horis:idempotent false',
                 ("horis:idempotent false", None), "expected '.'",
                 "end the statement on line {at} with ' .'", id="dot"),
    pytest.param('rdfs:label "Assign a patient to a triage queue" ;',
                 'rdfs:label "Assign a patient to a triage queue ;',
                 ('rdfs:label "Assign a patient to a triage queue', None),
                 "newline found in string literal",
                 'close the string on its line (a text of several lines is written """ … """)',
                 id="quote"),
    # rdflib's "objectList expected" and "bad escape" were given the hint about ' .' and ';'
    pytest.param("    horis:idempotent false .", "    horis:idempotent False .",
                 ("horis:idempotent False", None), "objectList expected",
                 "a boolean is written in lower case: false", id="boolean-case"),
    pytest.param('horis:requires """ ?this :acuity ?queue .',
                 'horis:requires """ ?this :acuity ?queue . FILTER regex(str(?queue), "gent\\d")',
                 ("FILTER regex(str(?queue)", None), "bad escape",
                 "a backslash in a Turtle string starts an escape (\\n, \\t, \\\", \\\\): "
                 'write two for one, e.g. sh:pattern "^Q-\\\\d+$" for the expression ^Q-\\d+$',
                 id="escape"),
])
def test_a_turtle_slip_is_said_at_the_line_written_wrong_with_what_to_write(
        tmp_path: Path, old: str, new: str, at: tuple[str, str | None], said: str,
        hint: str) -> None:
    text = TRIAGE.read_text(encoding="utf-8")
    assert text.count(old) == 1
    broken = tmp_path / "triage.ttl"
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([broken, EHR])
    p = only(raised.value.problems)
    line = line_of(broken, at[0], after=at[1])
    assert (p.file, p.line) == (str(broken), line), str(p)
    assert said.format(at=line) in p.message, str(p)
    assert p.hint == hint.format(at=line, next=line + 3 if "takes" in at[0] else line + 1)


def test_a_pattern_string_closed_with_two_quotes_is_said_at_the_line_it_opens(
        tmp_path: Path) -> None:
    """:QueuePatient's pattern closed with "" ran on to :NotifyNurse's opening quotes, and the
    error was put at :NotifyNurse's horis:requires, a step that is right, with the parser's
    "expected '.'"; the slip is in the string that opens lines before."""
    text = TRIAGE.read_text(encoding="utf-8")
    guard = 'FILTER NOT EXISTS { ?this :queuedAt ?t } """ ;'
    assert text.count(guard) == 1
    broken = tmp_path / "triage.ttl"
    broken.write_text(text.replace(guard, guard.replace('"""', '""')), encoding="utf-8")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([broken, EHR])
    p = only(raised.value.problems)
    opened = line_of(broken, 'horis:requires """ ?this :acuity ?queue .')
    ran_to = line_of(broken, 'horis:requires """ ?this :queueRef ?ref .')
    assert (p.file, p.line) == (str(broken), opened)
    assert p.message.startswith(f"Turtle syntax error: the string opened at line {opened} runs "
                                f"on to line {ran_to}, so the statements between are read as "
                                "its text")
    assert p.hint == 'close it with """ where its text ends'


def test_a_missing_binding_is_reported_once_by_the_loader_not_again_by_the_shapes(
        tmp_path: Path) -> None:
    # The authoring shapes also catch a tool with no binding, an argument with no type and a
    # workflow with no start; each mistake must still give one message, with a hint.
    text = TRIAGE.read_text(encoding="utf-8").replace(
        '    horis:binding "python:ehr_client.assign_queue" ;\n', "")
    broken = tmp_path / "no_binding.ttl"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([broken, EHR])
    p = only(raised.value.problems)
    assert (p.file, p.line, p.node) == (str(broken), line_of(broken, ":ehr.assign_queue a"),
                                        ":ehr.assign_queue")
    assert "no horis:binding" in p.message
    assert p.hint is not None and 'horis:binding "python:module.function"' in p.hint


def test_a_shape_violation_carries_file_line_and_node(tmp_path: Path) -> None:
    # Only the shapes check horis:sideEffect; their message must be located like the loader's.
    text = TRIAGE.read_text(encoding="utf-8").replace(
        '    horis:retries 1 ;', '    horis:retries 1 ;\n    horis:sideEffect horis:Final ;')
    broken = tmp_path / "side_effect.ttl"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([broken, EHR])
    found = [p for p in raised.value.problems if "horis:sideEffect takes one of" in p.message]
    p = only(found)
    assert (p.file, p.line, p.node) == (str(broken), line_of(broken, "horis:sideEffect"),
                                        ":ehr.notify_nurse")


def _with_sent(tmp_path: Path, value: str) -> Path:
    """triage.ttl with ``horis:sent VALUE`` on assign_queue's patient argument."""
    text = TRIAGE.read_text(encoding="utf-8")
    old = ('horis:arg [ horis:name "patient" ; horis:type :Patient ] ;\n'
           '        horis:arg [ horis:name "queue"')
    assert text.count(old) == 1
    path = tmp_path / "sent.ttl"
    path.write_text(text.replace(old, old.replace(" ] ;", f" ; horis:sent {value} ] ;")),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(("value", "said"), [
    ('"no"', "horis:sent must be true or false"),      # the loader's word for it
    ("0", "horis:sent must be true or false"),
    ('"false"', "horis:sent takes one boolean"),        # a quoted boolean: the shapes'
])
def test_a_non_boolean_sent_is_an_error_at_its_line(tmp_path: Path, value: str,
                                                    said: str) -> None:
    path = _with_sent(tmp_path, value)
    with pytest.raises(AuthoringError) as raised:
        load_definitions([path, EHR])
    p = only(raised.value.problems)
    assert (p.file, p.line, p.node) == (str(path), line_of(path, "horis:sent"),
                                        ":ehr.assign_queue")
    assert p.severity == "error" and said in p.message, str(p)
    done = horismos_forked(tmp_path, "validate", path.name, str(EHR), timeout=120)
    assert done.returncode == 1
    assert done.stdout.startswith(f"sent.ttl:{p.line}: error: :ehr.assign_queue: {said}"), (
        done.stdout)


def test_an_argument_not_sent_and_used_by_nothing_is_a_warning(tmp_path: Path) -> None:
    # The patient is the effect's subject: not sent, and used. The nurse is not.
    path = _with_sent(tmp_path, "false")
    assert load_definitions([path, EHR]).warnings == []
    text = path.read_text(encoding="utf-8").replace(
        'horis:name "nurse"   ; horis:type :Nurse ]',
        'horis:name "nurse"   ; horis:type :Nurse ; horis:sent false ]')
    path.write_text(text, encoding="utf-8")
    defs = load_definitions([path, EHR])
    p = only(defs.warnings)
    assert (p.file, p.line, p.node) == (str(path), line_of(path, 'horis:name "nurse"'),
                                        ":ehr.notify_nurse")
    assert 'argument "nurse" is horis:sent false' in p.message
    assert "nothing uses it" in p.message
    assert p.hint is not None and "drop horis:sent false" in p.hint
    assert not next(a for a in defs.tools[EX["ehr.assign_queue"]].args
                    if a.name == "patient").sent


def test_an_unreachable_step_is_a_warning_and_the_load_succeeds() -> None:
    name = "unreachable_step.ttl"
    defs = load_definitions([AUTHORING / name, EHR])
    assert EX.PageDoctor in defs.steps
    p = only(defs.warnings)
    assert p.severity == "warning"
    check(p, name, line_of(AUTHORING / name, ":PageDoctor a horis:ActionStep"), ":PageDoctor",
          "unreachable from any workflow's start",
          hint="point a horis:next, horis:onError or horis:start at it")


def test_a_folder_loads_every_turtle_file_under_it_as_one_graph() -> None:
    # tools.ttl declares the tools, nested/triage.ttl the workflow that uses them; notes.txt
    # is not Turtle and is skipped.
    folder = AUTHORING / "folder"
    defs = load_definitions([folder, EHR])
    assert set(defs.tools) == {EX["ehr.assign_queue"], EX["ehr.notify_nurse"]}
    assert defs.workflows[EX.Triage].start == EX.QueuePatient
    step = defs.steps[EX.QueuePatient]
    assert step.tool is defs.tools[EX["ehr.assign_queue"]]  # type: ignore[union-attr]
    assert defs.locate(EX.QueuePatient) == (
        str(folder / "nested" / "triage.ttl"),
        line_of(folder / "nested" / "triage.ttl", ":QueuePatient a"))


def test_the_problem_list_is_sorted_by_file_and_line_and_stable() -> None:
    name = "several_problems.ttl"
    first = problems(name)
    assert first == problems(name)
    path = AUTHORING / name
    assert {p.file for p in first} == {str(path)}
    assert [(p.line, p.node) for p in first] == [
        (line_of(path, 'horis:timeout "soon"'), ":ehr.assign_queue"),
        (line_of(path, 'horis:binding "rust:notify"'), ":ehr.notify_nurse"),
        (line_of(path, "horis:start :QueuePatien ."), ":Triage"),
    ]
    # The message lists them in the same order, one per line, with where they are.
    text = str(AuthoringError(first))
    assert text.index(f"{name}:{first[0].line}") < text.index(f"{name}:{first[2].line}")


def test_problems_from_several_files_are_sorted_by_file_whatever_the_load_order(
        tmp_path: Path) -> None:
    head = "@prefix : <http://example.org/t#> .\n@prefix horis: <https://w3id.org/horismos#> .\n"
    a, b = tmp_path / "a.ttl", tmp_path / "b.ttl"
    a.write_text(head + ':a.late a horis:Tool ; horis:binding "python:late" ;\n'
                 '    horis:timeout "later" .\n', encoding="utf-8")
    b.write_text(head + ':b.rusty a horis:Tool ; horis:binding "rust:b" .\n', encoding="utf-8")
    with pytest.raises(AuthoringError) as raised:
        load_definitions([b, a])
    assert [(p.file, p.line, p.node) for p in raised.value.problems] == [
        (str(a), line_of(a, 'horis:timeout "later"'), ":a.late"),
        (str(b), line_of(b, '"rust:b"'), ":b.rusty"),
    ]


def test_the_repository_workflows_and_ontologies_load_without_problems() -> None:
    defs = load_definitions([ROOT / "workflows", ROOT / "ontologies"])
    assert defs.workflows and defs.tools
    assert defs.warnings == []


def test_preconditions_are_compiled_at_load_and_reused_by_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Count rdflib's query preparation: it must all happen in load_definitions.
    prepared: list[str] = []
    real = preconditions.prepare_query

    def counting(text: str, init_ns: Mapping[str, Any]) -> object:
        prepared.append(text)
        return real(text, init_ns)

    monkeypatch.setattr(preconditions, "prepare_query", counting)
    defs: Definitions = load_definitions([TRIAGE, EHR])
    assert prepared, "load_definitions prepared no query"
    at_load = len(prepared)
    step = defs.steps[EX.QueuePatient]
    pre = step.requires  # type: ignore[union-attr]
    assert pre is not None
    query = pre.select

    monkeypatch.syspath_prepend(str(ROOT / "examples" / "triage"))  # ehr_client
    agent = Agent(defs, allow_modules=["ehr_client"])
    for _ in range(2):
        world = World.from_files(ROOT / "examples" / "triage" / "world.ttl")
        run = agent.run(world, focus=EX.patient42)
        assert run.status == "completed", run.error
    assert len(prepared) == at_load, "a run prepared a query again"
    assert agent.definitions.steps[EX.QueuePatient] is step
    assert step.requires is pre and pre.select is query  # type: ignore[union-attr]


@pytest.mark.parametrize("layout", ["lines", "one line"])
def test_a_blank_node_written_later_in_a_comma_list_is_reported_at_its_own_line(
    tmp_path: Path, layout: str
) -> None:
    # `horis:arg [ … ] , [ … ]`: both arguments hang on one predicate written once. A mistake
    # in the second used to be reported at the first one's line.
    sep = "\n                  " if layout == "lines" else " "
    text = TRIAGE.read_text(encoding="utf-8").replace(
        'horis:arg [ horis:name "patient" ; horis:type :Patient ] ;\n'
        '        horis:arg [ horis:name "nurse"   ; horis:type :Nurse ] ;',
        f'horis:arg [ horis:name "patient" ; horis:type :Patient ] ,{sep}'
        '[ horis:name "nurse" ; horis:type :Nurze ] ;')
    path = tmp_path / "comma.ttl"
    path.write_text(text, encoding="utf-8")
    p = only([p for p in load_definitions([path, EHR]).warnings if ":Nurze" in p.message])
    assert (p.file, p.line, p.node) == (str(path), line_of(path, ":Nurze"),
                                        ":ehr.notify_nurse")
    if layout == "lines":
        assert p.line == line_of(path, 'horis:name "patient" ; horis:type :Patient ] ,') + 1
