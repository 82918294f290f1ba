"""A step whose horis:requires forbids of the focus what the step always before it writes:
the guard against running twice copied from the dispense (``FILTER NOT EXISTS { ?this
:dispensedAt ?t }``) onto the notification after it, where ``:notifiedAt`` was meant. The
dispense writes ``:dispensedAt`` on every way to the notification, so the pattern never
holds there and every order sat blocked at it, unnotified, while the definitions
validated."""

from __future__ import annotations

from pathlib import Path

from claims_files import problems
from forked import horismos_forked

from horismos import Problem

FILE = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:dispensedAt a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .
:notifiedAt a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:dateTime .

:pharmacy.dispense a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :dispensedAt ; horis:value horis:now ] ] ;
    horis:binding "python:dispense" .

:pharmacy.notify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ] ] ;
    horis:binding "python:notify" .

:Fill a horis:Workflow ; horis:focusType :Order ; horis:start :Dispense .

:Dispense a horis:ActionStep ;
    horis:tool :pharmacy.dispense ;
    horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Notify .

:Notify a horis:ActionStep ;
    horis:tool :pharmacy.notify ;
    horis:requires "GUARD" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

WRONG = "FILTER NOT EXISTS { ?this :dispensedAt ?d }"


def _written(tmp_path: Path, guard: str, text: str = FILE) -> tuple[Path, int]:
    path = tmp_path / "pharmacy.ttl"
    written = text.replace("GUARD", guard)
    path.write_text(written, encoding="utf-8")
    return path, written[: written.index(guard)].count("\n") + 1


def _found(tmp_path: Path, guard: str, text: str = FILE) -> list[Problem]:
    return problems(_written(tmp_path, guard, text)[0])


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "FILTER NOT EXISTS { ?this :notifiedAt ?n }") == []


def test_a_guard_the_step_before_always_trips_is_a_warning(tmp_path: Path) -> None:
    path, line = _written(tmp_path, WRONG)
    (p,) = problems(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":Notify"), p
    assert p.message == (
        "horis:requires forbids :dispensedAt of ?this (FILTER NOT EXISTS), which a step before "
        "it (:Dispense) writes on every way to :Notify: the pattern never holds when the step "
        "is reached, so it never runs and every instance stops there, blocked"), p.message
    assert p.hint == (
        "guard :Notify with what its own tool writes (FILTER NOT EXISTS { ?this :notifiedAt "
        "?v }), or drop the test of :dispensedAt: :Dispense has always written it by then"), (
        p.hint)
    # as the modeler runs it: the warning at the file's line, and the definitions still valid
    done = horismos_forked(tmp_path, "validate", path.name, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pharmacy.ttl:{line}: warning: :Notify: horis:requires forbids :dispensedAt" in (
        done.stdout), done.stdout
    assert "valid (1 warning)" in done.stdout, done.stdout


def test_a_step_between_does_not_hide_it(tmp_path: Path) -> None:
    # a wait for the pharmacist between the two writes nothing away
    waited = FILE.replace("    horis:next :Notify .", "    horis:next :Check .").replace(
        ":Notify a horis:ActionStep ;", """:Check a horis:WaitStep ;
    horis:reason "a pharmacist checks the dispense" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:next :Notify .

:Notify a horis:ActionStep ;""")
    path, line = _written(tmp_path, WRONG, waited)
    assert [(p.line, p.node) for p in problems(path)] == [(line, ":Notify")]


def test_no_alarm_where_it_may_not_be_written(tmp_path: Path) -> None:
    # the dispense may fail and its error route lead to the notification
    failing = FILE.replace("    horis:next :Notify .",
                           "    horis:next :Notify ;\n    horis:onError :Notify .")
    assert not _tripped(_found(tmp_path, WRONG, failing))
    # the effect may leave it out
    optional = FILE.replace("horis:property :dispensedAt ;",
                            "horis:property :dispensedAt ; horis:optional true ;")
    assert not _tripped(_found(tmp_path, WRONG, optional))
    # the tool writes it on another node than the focus
    other = FILE.replace(
        """horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :dispensedAt""",
        """horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ,
                 [ horis:name "batch" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "batch" ;
        horis:asserts [ horis:property :dispensedAt""").replace(
        """horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Notify .""",
        """horis:bind [ horis:arg "order" ; horis:var "this" ] ,
        [ horis:arg "batch" ; horis:var "b" ] ;
    horis:next :Notify .""").replace(
        'horis:requires "FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;',
        'horis:requires "?this :inBatch ?b . FILTER NOT EXISTS { ?b :dispensedAt ?t }" ;')
    assert not _tripped(_found(tmp_path, WRONG, other))
    # what is forbidden is narrower than any value: a value compared, a second triple, a value
    # bound outside the NOT EXISTS
    for narrower in (
        "FILTER NOT EXISTS { ?this :dispensedAt ?d . FILTER (?d > \\\"2024-01-01T00:00:00Z\\\""
        "^^xsd:dateTime) }",
        "FILTER NOT EXISTS { ?this :dispensedAt ?d . ?d a :Order }",
        "?this :notifiedAt ?d . FILTER NOT EXISTS { ?this :dispensedAt ?d }",
        "OPTIONAL { ?this :notifiedAt ?n } FILTER (BOUND(?n) || NOT EXISTS { ?this "
        ":dispensedAt ?d })",
    ):
        assert not _tripped(_found(tmp_path, narrower)), narrower
    # another way to the notification passes no dispense
    decided = FILE.replace(":Fill a horis:Workflow ; horis:focusType :Order ; horis:start "
                           ":Dispense .", """:Fill a horis:Workflow ; horis:focusType :Order ;
    horis:start :Route .

:Route a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this a :Order" ; horis:next :Dispense ] ;
    horis:otherwise :Notify .""")
    assert not _tripped(_found(tmp_path, WRONG, decided))


def _tripped(found: list[Problem]) -> list[Problem]:
    return [p for p in found if "forbids" in p.message]


TOOL_GUARDED = FILE.replace(
    """    horis:binding "python:notify" .""",
    """    horis:requires "FILTER NOT EXISTS { ?order :dispensedAt ?d }" ;
    horis:binding "python:notify" .""").replace('    horis:requires "GUARD" ;\n', "")


def test_a_tools_own_guard_the_step_before_always_trips_is_a_warning(tmp_path: Path) -> None:
    # the guard copied onto the notification's tool, its argument given from ?this
    path = tmp_path / "pharmacy.ttl"
    path.write_text(TOOL_GUARDED, encoding="utf-8")
    line = TOOL_GUARDED[: TOOL_GUARDED.index("horis:tool :pharmacy.notify")].count("\n") + 1
    (p,) = problems(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":Notify"), p
    assert p.message == (
        "the horis:requires of its tool, :pharmacy.notify, forbids :dispensedAt of ?order "
        "(FILTER NOT EXISTS), given from ?this here, which a step before it (:Dispense) writes "
        "on every way to :Notify: the pattern never holds when the step is reached, so it "
        "never runs and every instance stops there, blocked"), p.message
    assert p.hint == (
        "guard :pharmacy.notify with what it writes itself (FILTER NOT EXISTS { ?order "
        ":notifiedAt ?v }), or drop its test of :dispensedAt: :Dispense has always written it "
        "by then"), p.hint
    # given from another node than the focus, the tool's guard is about that node
    other = TOOL_GUARDED.replace(
        ':Notify a horis:ActionStep ;\n    horis:tool :pharmacy.notify ;\n'
        '    horis:bind [ horis:arg "order" ; horis:var "this" ] .',
        ':Notify a horis:ActionStep ;\n    horis:tool :pharmacy.notify ;\n'
        '    horis:requires "?this :refills ?o" ;\n'
        '    horis:bind [ horis:arg "order" ; horis:var "o" ] .')
    assert other != TOOL_GUARDED
    assert not _tripped(_found(tmp_path, "", other))
    # the value forbidden is one the step gives: only that value is forbidden
    valued = TOOL_GUARDED.replace(
        """horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :notifiedAt""",
        """horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ,
                 [ horis:name "stamp" ; horis:type xsd:dateTime ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :notifiedAt""").replace(
        "FILTER NOT EXISTS { ?order :dispensedAt ?d }",
        "FILTER NOT EXISTS { ?order :dispensedAt ?stamp }").replace(
        '    horis:bind [ horis:arg "order" ; horis:var "this" ] .',
        '    horis:requires "?this :notifiedAt ?s" ;\n'
        '    horis:bind [ horis:arg "order" ; horis:var "this" ] ,\n'
        '        [ horis:arg "stamp" ; horis:var "s" ] .')
    assert valued.count("?stamp") == 1 and valued.count('horis:var "s"') == 1
    assert not _tripped(_found(tmp_path, "", valued))
