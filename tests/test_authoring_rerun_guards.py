"""A step whose tool is not idempotent, that nothing stops on a second run of the same focus.

The shipped lab workflow's ``:Escalate`` paged the on-call clinician with no guard: ``run
--focus :k1`` again on a world kept on disk started a second instance, as docs/deployment.md
says a rerun does, and it paged the clinician again about the same result — and ``validate``
said nothing. It now warns at the step, saying what a rerun does and the guard to add, written
with the step's variable and a property its tool writes; ``horis:eachRun true`` says acting on
every run is meant, and silences it."""

from __future__ import annotations

import re
from pathlib import Path

from forked import horismos_forked

from horismos import AuthoringError, Problem, load_definitions

ROOT = Path(__file__).resolve().parent.parent

LAB = """\
@prefix :      <http://example.org/lab#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:LabResult a owl:Class .
:Clinician a owl:Class .
:onCall a owl:DatatypeProperty ; rdfs:range xsd:boolean .
:value a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:escalatedTo a owl:ObjectProperty ; rdfs:range :Clinician ; rdfs:subPropertyOf :contacted .
:contacted a owl:ObjectProperty .
:escalatedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:cleared a owl:DatatypeProperty ; rdfs:range xsd:boolean .

:lab.escalate a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "result" ; horis:type :LabResult ] ;
        horis:arg [ horis:name "clinician" ; horis:type :Clinician ]
    ] ;
    horis:effect [
        horis:subject "result" ;
        horis:asserts [ horis:property :escalatedTo ; horis:type :Clinician ] ;
        horis:asserts [ horis:property :escalatedAt ; horis:value horis:now ]
    ] ;
    horis:binding "python:lab_client.escalate" TOOL_EXTRA .

:Review a horis:Workflow ; horis:focusType :LabResult ; horis:start :Escalate .

:Escalate a horis:ActionStep ;
    horis:tool :lab.escalate ;
    horis:requires \"\"\" ?this :value ?v . ?paged a :Clinician ; :onCall true . GUARD \"\"\" ;
    horis:bind [ horis:arg "result" ; horis:var "this" ] ;
    horis:bind [ horis:arg "clinician" ; horis:var "paged" ] STEP_EXTRA .
"""

WARNING = (
    "its tool :lab.escalate is not idempotent and nothing stops :Escalate on a second run of "
    "the same focus: run --focus again on a world kept on disk (agent.run(…, again=True), "
    'serve\'s "again": true) starts another instance, which reaches :Escalate as the first '
    "did — nothing on the way, its own horis:requires included, holds only while what "
    ":lab.escalate writes on ?this is absent — and calls :lab.escalate again: it acts twice on "
    "the same subject"
)
FIX = (
    "add FILTER NOT EXISTS { ?this :escalatedTo ?x } to :Escalate's horis:requires, so a "
    "rerun stops there, blocked, once :lab.escalate has acted; if acting again on every run is "
    "meant (a notice sent each time), declare horis:eachRun true on :Escalate"
)


def _written(tmp_path: Path, guard: str = "", step: str = "", tool: str = "") -> Path:
    path = tmp_path / "lab.ttl"
    text = LAB.replace("GUARD", guard).replace("STEP_EXTRA", step).replace("TOOL_EXTRA", tool)
    path.write_text(text, encoding="utf-8")
    return path


def _found(path: Path) -> list[Problem]:
    try:
        return list(load_definitions([path]).warnings)
    except AuthoringError as e:
        return list(e.problems)


def _line_of(path: Path, text: str) -> int:
    return path.read_text(encoding="utf-8").splitlines().index(text) + 1


def test_a_step_nothing_stops_on_a_rerun_is_a_warning_at_its_line_with_the_guard_to_add(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path)
    (p,) = _found(path)
    assert (p.severity, p.file, p.line, p.node) == (
        "warning", str(path), _line_of(path, ":Escalate a horis:ActionStep ;"), ":Escalate"), p
    assert p.message == WARNING, p.message
    assert p.hint == FIX, p.hint


def test_validate_says_it_as_file_line_and_still_passes(tmp_path: Path) -> None:
    path = _written(tmp_path)
    done = horismos_forked(tmp_path, "validate", "lab.ttl")
    assert done.returncode == 0, done.stdout + done.stderr  # a warning: the file still runs
    line = _line_of(path, ":Escalate a horis:ActionStep ;")
    assert f"lab.ttl:{line}: warning: :Escalate: {WARNING} — {FIX}\n" in done.stdout, done.stdout
    assert "valid (1 warning)" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_fix_names_a_variable_the_pattern_does_not_use_already(tmp_path: Path) -> None:
    # ?x bound by the pattern: FILTER NOT EXISTS { ?this :escalatedTo ?x } would test that one
    # value only, and the step would page again whenever the clinician changed
    path = _written(tmp_path, "?this :value ?x .")
    (p,) = _found(path)
    assert (p.hint or "").startswith(
        "add FILTER NOT EXISTS { ?this :escalatedTo ?done } to :Escalate's horis:requires"
    ), p.hint


def test_the_fix_uses_the_variable_the_step_gives_the_written_node(tmp_path: Path) -> None:
    # the result is bound from ?r, not ?this: the guard to add names ?r
    path = tmp_path / "lab.ttl"
    text = (
        LAB.replace("GUARD", "?this :hasResult ?r .")
        .replace('horis:arg "result" ; horis:var "this"', 'horis:arg "result" ; horis:var "r"')
        .replace("STEP_EXTRA", "").replace("TOOL_EXTRA", "")
        .replace(":cleared a", ":hasResult a owl:ObjectProperty .\n:cleared a")
    )
    path.write_text(text, encoding="utf-8")
    (p,) = _found(path)
    assert "lab.escalate writes on ?r" in p.message, p.message
    assert (p.hint or "").startswith("add FILTER NOT EXISTS { ?r :escalatedTo ?x }"), p.hint


def test_a_guard_on_what_the_tool_writes_is_silent(tmp_path: Path) -> None:
    for guard in (
        "FILTER NOT EXISTS { ?this :escalatedTo ?c }",
        "FILTER NOT EXISTS { ?this :escalatedAt ?t }",
        "MINUS { ?this :escalatedTo ?c }",
        "OPTIONAL { ?this :escalatedTo ?c } FILTER (!BOUND(?c))",
    ):
        assert _found(_written(tmp_path, guard)) == [], guard
    # what writing :escalatedTo entails (read beside an entailing world) closes it too
    entailed = _found(_written(tmp_path, "FILTER NOT EXISTS { ?this :contacted ?c }"))
    assert [p for p in entailed if "nothing stops" in p.message] == [], entailed


def test_a_guard_in_the_tools_own_requires_is_silent(tmp_path: Path) -> None:
    tool = '; horis:requires "FILTER NOT EXISTS { ?result :escalatedTo ?c }"'
    assert _found(_written(tmp_path, tool=tool)) == []


def test_each_run_true_says_acting_again_is_meant_and_is_silent(tmp_path: Path) -> None:
    assert _found(_written(tmp_path, step="; horis:eachRun true")) == []
    # false is the default: said as if it were not written
    (p,) = _found(_written(tmp_path, step="; horis:eachRun false"))
    assert p.message == WARNING


def test_each_run_given_as_text_is_an_error_saying_what_to_write(tmp_path: Path) -> None:
    (p,) = _found(_written(tmp_path, step='; horis:eachRun "true"'))
    assert p.severity == "error" and p.node == ":Escalate", p
    assert p.hint == "write horis:eachRun true, without quotes", p.hint


def test_each_run_given_twice_is_an_error(tmp_path: Path) -> None:
    (p,) = _found(_written(tmp_path, step="; horis:eachRun true, false"))
    assert p.severity == "error" and "horis:eachRun is given 2 values" in p.message, p
    assert p.hint == "keep the one meant, delete the rest", p.hint


def test_an_idempotent_tool_is_silent(tmp_path: Path) -> None:
    assert _found(_written(tmp_path, tool="; horis:idempotent true")) == []


def test_a_tool_that_requires_approval_is_silent(tmp_path: Path) -> None:
    # an approval holds for one instance and one call: a second instance waits for a person
    # to approve its call again before the tool can act
    assert _found(_written(tmp_path, tool="; horis:requiresApproval true")) == []


def test_a_guard_that_never_closes_is_said_once_by_its_own_warning(tmp_path: Path) -> None:
    # :cleared is written by no tool: the guard never closes, which the unclosed-guard warning
    # says at the guard; the rerun warning would be the same mistake said twice
    path = _written(tmp_path, "FILTER NOT EXISTS { ?this :cleared ?c }")
    (p,) = _found(path)
    assert "which :lab.escalate (not idempotent) never writes" in p.message, p.message
    assert "nothing stops" not in p.message


def test_a_for_each_step_guarded_on_each_item_is_silent(tmp_path: Path) -> None:
    path = tmp_path / "lab.ttl"
    text = (
        LAB.replace("GUARD", "?this :hasResult ?r . FILTER NOT EXISTS { ?r :escalatedTo ?c }")
        .replace('horis:arg "result" ; horis:var "this"', 'horis:arg "result" ; horis:var "r"')
        .replace("STEP_EXTRA", "; horis:forEach true").replace("TOOL_EXTRA", "")
        .replace(":cleared a", ":hasResult a owl:ObjectProperty .\n:cleared a")
    )
    path.write_text(text, encoding="utf-8")
    assert _found(path) == []
    unguarded = text.replace(" FILTER NOT EXISTS { ?r :escalatedTo ?c }", "")
    path.write_text(unguarded, encoding="utf-8")
    (p,) = _found(path)
    assert (p.hint or "").startswith("add FILTER NOT EXISTS { ?r :escalatedTo ?x }"), p.hint


DECIDED = """
:Review horis:start :IsCritical .
:IsCritical a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :value ?v . FILTER (?v > 5) RULE" ;
                 horis:next :Escalate ] ;
    horis:otherwise :Hold .
:Hold a horis:WaitStep ; horis:wake horis:OperatorInput ; horis:delivery horis:Final ;
    horis:reason "Look at it." ;
    horis:until "?this :cleared true . UNTIL" ; horis:next :Escalate .
"""


def _decided(tmp_path: Path, rule: str, until: str) -> Path:
    path = tmp_path / "lab.ttl"
    text = LAB.replace("GUARD", "").replace("STEP_EXTRA", "").replace("TOOL_EXTRA", "")
    text = text.replace(":Review a horis:Workflow ; horis:focusType :LabResult ; horis:start "
                        ":Escalate .", ":Review a horis:Workflow ; horis:focusType :LabResult .")
    path.write_text(text + DECIDED.replace("RULE", rule).replace("UNTIL", until),
                    encoding="utf-8")
    return path


def test_every_way_in_guarded_a_decisions_rule_and_a_waits_until_is_silent(
    tmp_path: Path,
) -> None:
    guard = "FILTER NOT EXISTS { ?this :escalatedTo ?c }"
    assert [p for p in _found(_decided(tmp_path, guard, guard)) if p.node == ":Escalate"] == []
    # one way in unguarded is a way a rerun takes
    for rule, until in ((guard, ""), ("", guard)):
        found = [p for p in _found(_decided(tmp_path, rule, until)) if p.node == ":Escalate"]
        assert [p.message for p in found] == [WARNING], (rule, until, found)


def test_a_tool_that_writes_nothing_is_told_to_record_what_it_does(tmp_path: Path) -> None:
    path = tmp_path / "lab.ttl"
    text = re.sub(r"    horis:effect \[.*?\n    \] ;\n", "", LAB, flags=re.S)
    path.write_text(text.replace("GUARD", "").replace("STEP_EXTRA", "")
                    .replace("TOOL_EXTRA", ""), encoding="utf-8")
    found = [p for p in _found(path) if p.node == ":Escalate"]
    assert [p.severity for p in found] == ["warning"], found
    assert "lab.escalate is not idempotent and writes nothing" in found[0].message
    assert (found[0].hint or "").startswith(
        "declare in :lab.escalate's horis:effect what its call records (horis:asserts) and add "
        "FILTER NOT EXISTS on it to :Escalate's horis:requires")


def test_the_shipped_lab_workflow_without_its_guard_is_warned_of(tmp_path: Path) -> None:
    # the very mistake that paged a clinician twice: validate now says it, with the fix
    shipped = (ROOT / "workflows" / "lab_review.ttl").read_text(encoding="utf-8")
    guard = " FILTER NOT EXISTS { ?this :escalatedTo ?paged } "
    assert guard in shipped
    (tmp_path / "lab_review.ttl").write_text(shipped.replace(guard, ""), encoding="utf-8")
    done = horismos_forked(tmp_path, "validate", "lab_review.ttl", str(ROOT / "ontologies"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"lab_review\.ttl:\d+: warning: :Escalate: its tool :lab\.escalate is not idempotent "
        r"and nothing stops :Escalate on a second run of the same focus", done.stdout
    ), done.stdout
    assert "add FILTER NOT EXISTS { ?this :escalatedTo ?x } to :Escalate's horis:requires" in (
        done.stdout)
    as_shipped = horismos_forked(tmp_path, "validate", str(ROOT / "workflows" / "lab_review.ttl"),
                                 str(ROOT / "ontologies"))
    assert as_shipped.returncode == 0 and "warning" not in as_shipped.stdout, as_shipped.stdout


TELL = """
:notifiedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:lab.tell a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "result" ; horis:type :LabResult ] ] ;
    horis:effect [ horis:subject "result" ;
        horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ] ] ;
    horis:binding "python:lab_client.tell" .
:Tell a horis:ActionStep ; horis:tool :lab.tell ;
    horis:bind [ horis:arg "result" ; horis:var "this" ] .
"""
GUARDED = "FILTER NOT EXISTS { ?this :escalatedTo ?c }"


def _told(tmp_path: Path, guard: str, way: str) -> list[str | None]:
    path = _written(tmp_path, guard, step=f"; {way} :Tell")
    path.write_text(path.read_text(encoding="utf-8") + TELL, encoding="utf-8")
    return [p.node for p in _found(path) if "nothing stops" in p.message]


def test_a_step_after_a_guarded_step_is_stopped_there_on_a_rerun(tmp_path: Path) -> None:
    # the first instance went on to :Tell after :Escalate's call succeeded: the second stops
    # at :Escalate, blocked, and never tells again
    assert _told(tmp_path, GUARDED, "horis:next") == []
    # a call that failed went by horis:onError and wrote nothing: a rerun passes :Escalate
    # again and reaches :Tell
    assert _told(tmp_path, GUARDED, "horis:onError") == [":Tell"]
    # unguarded, both act again
    assert _told(tmp_path, "", "horis:next") == [":Escalate", ":Tell"]


def test_a_read_only_tool_that_is_not_idempotent_is_said_once_at_the_tool(
    tmp_path: Path,
) -> None:
    (p,) = _found(_written(tmp_path, tool="; horis:sideEffect horis:ReadOnly"))
    assert p.node == ":lab.escalate" and p.message.startswith("horis:sideEffect horis:ReadOnly")


def test_each_run_on_a_step_whose_tool_is_idempotent_is_a_warning_at_its_line(
    tmp_path: Path,
) -> None:
    """``horis:eachRun true`` beside a tool declared ``horis:idempotent true`` was accepted
    without a word: it silences nothing there (no rerun warning is given for such a tool),
    and it reads as if the tool acted again each run, which its declaration denies."""
    path = _written(tmp_path, step=";\n    horis:eachRun true", tool="; horis:idempotent true")
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == (
        "warning", _line_of(path, "    horis:eachRun true ."), ":Escalate"), p
    assert p.message == (
        "horis:eachRun true says nothing here: its tool :lab.escalate is horis:idempotent "
        "true, so calling it again on a second run of the focus changes nothing, and there is "
        "no rerun warning for horis:eachRun to silence"), p.message
    assert p.hint == (
        "remove horis:eachRun true; or, if :lab.escalate does act again on each call (sends "
        "a notice, charges), it is not idempotent: remove horis:idempotent true from "
        ":lab.escalate"), p.hint
    # either fix is quiet; a tool that is not idempotent keeps horis:eachRun's meaning
    assert _found(_written(tmp_path, tool="; horis:idempotent true")) == []
    assert _found(_written(tmp_path, step=";\n    horis:eachRun true")) == []
    # as the modeler runs it: at file:line, and the file still validates
    _written(tmp_path, step=";\n    horis:eachRun true", tool="; horis:idempotent true")
    done = horismos_forked(tmp_path, "validate", "lab.ttl")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert f"lab.ttl:{p.line}: warning: :Escalate: horis:eachRun true says nothing here" in (
        done.stdout), done.stdout


def test_each_run_on_a_wait_or_a_decision_step_is_a_warning_at_its_line(
    tmp_path: Path,
) -> None:
    """On a wait or a decision step, which call no tool, horis:eachRun does nothing: said at
    its line (the vocabulary gives it action steps only)."""
    path = _written(tmp_path, guard="FILTER NOT EXISTS { ?this :escalatedTo ?c }")
    path.write_text(path.read_text(encoding="utf-8").replace(
        "horis:start :Escalate", "horis:start :Hold") + """
:Hold a horis:WaitStep ; horis:reason "Hold" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :cleared true ." ;
    horis:eachRun true ;
    horis:next :Pick .
:Pick a horis:DecisionStep ;
    horis:eachRun true ;
    horis:when [ horis:requires "?this :cleared true ." ; horis:next :Escalate ] ;
    horis:otherwise :Escalate .
""", encoding="utf-8")
    found = {(p.node, p.line): p for p in _found(path) if "eachRun" in p.message}
    lines = [i + 1 for i, t in enumerate(path.read_text().splitlines())
             if t == "    horis:eachRun true ;"]
    assert set(found) == {(":Hold", lines[0]), (":Pick", lines[1])}, found
    assert all(p.severity == "warning" and "does nothing" in p.message
               for p in found.values()), found
