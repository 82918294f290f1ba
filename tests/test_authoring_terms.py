"""The terms a contract is typed with, held to the loaded ontology before anything runs: a
misspelt datatype, a class, property or focus type declared nowhere, and a value of the wrong
kind for its property — each at its file and line, with what to write instead.

Each test edits one line of ``workflows/triage.ttl`` or ``workflows/lab_review.ttl`` (the line
found by its text, so the edit cannot silently miss) and loads it as ``horismos validate`` does.
A misspelt datatype and a range contradicted are errors; a term declared nowhere is a warning,
as in a pattern, since world data may use it (``validate --world`` then drops it).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from rdflib import URIRef
from workflow_edits import (
    LAB,
    REBOOKING,
    TRIAGE,
    edited,
    ontology_edited,
    problems,
    the_error,
    the_one,
)

from horismos import load_definitions

# -- a datatype that is none ------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "node", "opens", "also"), [
    pytest.param(":queueRef ; horis:type xsd:string", ":queueRef ; horis:type xsd:sting",
                 ":ehr.assign_queue",
                 "asserted property :queueRef has horis:type xsd:sting, which is no XSD or RDF "
                 "datatype and is not declared a rdfs:Datatype", "",
                 id="asserted-property"),
    pytest.param('"ref"     ; horis:type xsd:string', '"ref"     ; horis:type xsd:strng',
                 ":ehr.notify_nurse",
                 'argument "ref" has horis:type xsd:strng, which is no XSD or RDF datatype',
                 "every call is refused", id="argument"),
])
def test_a_misspelt_datatype_is_an_error_with_a_did_you_mean(
        tmp_path: Path, old: str, new: str, node: str, opens: str, also: str) -> None:
    """The gate would commit a literal typed xsd:sting, which no string comparison matches;
    an argument of such a type refuses every call."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    p = the_one(problems(path, TRIAGE), "error")
    assert (p.file, p.line, p.node) == (str(path), line, node)
    assert p.message.startswith(opens)
    assert also in p.message
    assert p.hint == "did you mean xsd:string?"


def test_an_xsd_term_that_is_a_facet_not_a_datatype_is_an_error(tmp_path: Path) -> None:
    """rdflib's XSD namespace knows xsd:pattern (a facet): no literal is written in it."""
    path, line = edited(tmp_path, LAB, ":archiveRef ; horis:type xsd:string",
                        ":archiveRef ; horis:type xsd:pattern")
    p = the_one(problems(path, LAB), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":lab.file_result")
    assert "horis:type xsd:pattern, which is no XSD or RDF datatype" in p.message
    assert p.hint is not None and "xsd:string, xsd:integer" in p.hint
    assert "declare xsd:pattern a rdfs:Datatype" in p.hint


def test_a_datatype_the_files_declare_is_a_datatype(tmp_path: Path) -> None:
    """A datatype of the ontology's own (``a rdfs:Datatype``) is a literal's type, not a
    class whose nodes the runtime would look for."""
    path, _ = edited(tmp_path, TRIAGE, '"ref"     ; horis:type xsd:string',
                     '"ref"     ; horis:type :QueueCode')
    declared = tmp_path / "codes.ttl"
    declared.write_text("@prefix : <http://example.org/ehr#> .\n"
                        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                        ":QueueCode a rdfs:Datatype .\n", encoding="utf-8")
    defs = load_definitions([path, TRIAGE[1], declared])
    assert defs.warnings == []
    ref = next(a for a in defs.tools[defs.expand(":ehr.notify_nurse")].args if a.name == "ref")
    assert ref.is_class is False


# -- a class, a property or a focus type declared nowhere -------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "opens", "also", "hint"), [
    pytest.param(TRIAGE, '"nurse"   ; horis:type :Nurse', '"nurse"   ; horis:type :Nurs',
                 ":ehr.notify_nurse", 'argument "nurse" has horis:type :Nurs, a class no '
                 "loaded ontology declares and no loaded data uses", "",
                 "did you mean :Nurse?", id="class-of-an-argument"),
    pytest.param(LAB, ":escalatedTo ; horis:type :Clinician",
                 ":escalatedTo ; horis:type :Clinicain", ":lab.escalate",
                 "asserted property :escalatedTo has horis:type :Clinicain, a class no loaded "
                 "ontology declares", "the gate refuses every value",
                 "did you mean :Clinician?", id="class-of-an-asserted-property"),
    pytest.param(TRIAGE, "horis:property :queueRef", "horis:property :queueRf",
                 ":ehr.assign_queue", "horis:property :queueRf is declared by no loaded "
                 "ontology and used by no loaded data", "", "did you mean :queueRef?",
                 id="asserted-property"),
    pytest.param(TRIAGE, "horis:focusType :Patient", "horis:focusType :Patinet", ":Triage",
                 "horis:focusType :Patinet is declared by no loaded ontology",
                 "the workflow has nothing to run for", "did you mean :Patient?",
                 id="focus-type"),
])
def test_a_term_declared_nowhere_is_a_warning_with_a_did_you_mean(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, opens: str,
        also: str, hint: str) -> None:
    path, line = edited(tmp_path, pair, old, new)
    p = the_one(problems(path, pair), "warning")
    assert (p.file, p.line, p.node) == (str(path), line, node)
    assert p.message.startswith(opens)
    assert also in p.message
    assert p.hint == hint


def test_a_did_you_mean_never_offers_a_tool_or_a_step_for_a_domain_term(tmp_path: Path) -> None:
    """A property declared nowhere was offered the closest name the files hold, tools and
    steps too: `:fetchedAt` got "did you mean :t.fetch?", `:page` "did you mean :Page?" (a
    step). A domain term is never a definition; the nearest domain term is offered, or none."""
    (tmp_path / "defs.ttl").write_text("""\
@prefix :      <http://example.org/feed#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Feed a owl:Class .
:pageCount a owl:DatatypeProperty .
:fetch a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "feed" ; horis:type :Feed ] ] ;
    horis:effect [ horis:subject "feed" ;
                   horis:asserts [ horis:property :fetched ; horis:type xsd:dateTime ] ;
                   horis:asserts [ horis:property :pageCont ; horis:type xsd:integer ] ] ;
    horis:binding "python:feeds.fetch" .
:Paging a horis:Workflow ; horis:focusType :Feed ; horis:start :Page .
:Page a horis:ActionStep ; horis:tool :fetch ; horis:bind [ horis:arg "feed" ; horis:var "this" ] .
""", encoding="utf-8")
    defs = load_definitions([tmp_path / "defs.ttl"])
    hints = {p.message.split()[1]: p.hint for p in defs.warnings if "declared by no" in p.message}
    assert hints == {":fetched": "declare it in the ontology, or check the spelling",
                     ":pageCont": "did you mean :pageCount?"}, hints


def test_a_term_declared_nowhere_inside_filter_not_exists_is_a_warning(tmp_path: Path) -> None:
    """The guard against queueing a patient twice, misspelt inside its ``FILTER NOT EXISTS``,
    never matched, so it held on every run and the patient was queued again: the walk the
    pattern checks share skipped an ``EXISTS`` group's triples, which rdflib keeps as parsed."""
    guard = "FILTER NOT EXISTS { ?this :queuedAt ?t }"
    path, line = edited(tmp_path, TRIAGE, guard, guard.replace(":queuedAt", ":queuedAtt"))
    p = the_one(problems(path, TRIAGE), "warning")
    # at the line the misspelt term is written on, not the pattern's first
    assert (p.file, p.line, p.node) == (str(path), line, ":QueuePatient")
    assert p.message.startswith("horis:requires uses :queuedAtt, which no loaded ontology")
    assert p.hint == "did you mean :queuedAt?"
    # what it does: the guard always holds, so the step fires again (not "cannot match",
    # which said the opposite, that the step would never fire)
    assert p.message.endswith("so its FILTER NOT EXISTS never finds it and never holds the "
                              "step back")
    used = "?this :acuity ?queue ."
    path, _ = edited(tmp_path, TRIAGE, used, used.replace(":acuity", ":acuty"))
    assert the_one(problems(path, TRIAGE), "warning").message.endswith(
        "so the pattern cannot match")


@pytest.mark.parametrize(("old", "new", "severity", "said", "hint"), [
    pytest.param(":destination ?dest ; :seatsLeft ?seats .",
                 ":destination ?dest ; :seatLeft ?seats .",
                 "warning", "horis:query uses :seatLeft, which no loaded ontology declares",
                 "did you mean :seatsLeft?", id="undeclared"),
    pytest.param("?seats > 0 &&", '?seats > "0" &&', "warning",
                 'the FILTER compares ?seats (its value) with "0", a string',
                 "write 0 without quotes", id="literal-of-another-type"),
    pytest.param("?old :status :Cancelled", "?old :Flight :Cancelled", "error",
                 "horis:query uses :Flight as a property, but it is a class",
                 "write ?x a :Flight", id="class-for-a-property"),
])
def test_a_candidates_query_is_held_to_the_ontology_as_a_pattern_is(
        tmp_path: Path, old: str, new: str, severity: str, said: str, hint: str) -> None:
    """The proposal's horis:candidates query was checked to parse, and no more: a misspelt
    property in it passed validate, the query gave no option, and every instance went to
    the fallback ("no candidates") as if the graph had none — where the same slip in a
    horis:requires is reported at its line."""
    path, line = edited(tmp_path, REBOOKING, old, new)
    p = the_one(problems(path, REBOOKING), severity)
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight"), p
    assert said in p.message, p.message
    assert p.hint is not None and p.hint.startswith(hint), p.hint


@pytest.mark.parametrize(("drop", "said"), [
    pytest.param(False, "its horis:requires reads ?option as a node", id="next-pattern"),
    pytest.param(True, 'it gives ?option to argument "flight" of :airline.rebook, which takes a '
                 "node of :Flight", id="next-argument"),
])
def test_candidates_of_the_other_kind_than_the_next_step_takes_are_an_error(
        tmp_path: Path, drop: bool, said: str) -> None:
    """Candidates that are a flight's seat count (a literal), not the flight: the next step's
    pattern (``?option :operatedBy ?carrier``) dropped every one and every instance went to
    the fallback; without that pattern, the model's choice ("12") was refused by the tool's
    argument check, after the proposal had been recorded."""
    old = "?option a :Flight ; :status :Scheduled ; :destination ?dest ; :seatsLeft ?seats ."
    path, line = edited(tmp_path, REBOOKING, old, old.replace("?option", "?f").replace(
        "?seats .", "?option ."))
    text = path.read_text().replace("?seats > 0 && ?option != ?old", "?option > 0 && ?f != ?old")
    if drop:
        text = text.replace("?option :operatedBy ?carrier . ?carrier :acceptsRebooking true .", "")
    path.write_text(text)
    p = the_error(problems(path, REBOOKING))
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight"), p
    assert p.message.startswith("the horis:candidates query binds ?option to a literal, but "
                                "horis:next :RebookOnProposal takes the option as a node")
    assert said in p.message, p.message
    assert p.hint is not None and "bind ?option to the nodes to choose among" in p.hint


def test_a_term_declared_nowhere_is_quiet_when_the_world_uses_it(tmp_path: Path) -> None:
    """As for a pattern's terms: world data may use what the ontology does not declare."""
    path, _ = edited(tmp_path, TRIAGE, "horis:focusType :Patient", "horis:focusType :Walkin")
    command = ["validate", str(path), str(TRIAGE[1])]
    p = horismos_forked(".", *command, timeout=120)
    assert p.returncode == 0 and "horis:focusType :Walkin is declared" in p.stdout, p.stdout
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/ehr#> .\n:p1 a :Walkin .\n")
    p = horismos_forked(".", *command, "--world", str(tmp_path / "w.ttl"), "--store", "memory",
                        timeout=120)
    assert p.returncode == 0 and ":Walkin" not in p.stdout, p.stdout + p.stderr


def test_a_node_neither_the_definitions_nor_the_world_hold_is_a_warning_against_a_world(
        tmp_path: Path) -> None:
    # `?this :acuity :Urgent` (the world has :urgent): every patient was blocked at the first
    # step; `horis:value :nurse07` pointed every patient's :assignedNurse at no node. Only
    # world data holds individuals, so they are judged when validate is given a world.
    world = str(Path(__file__).parent.parent / "examples" / "triage" / "world.ttl")
    path, _ = edited(tmp_path, TRIAGE, '""" ?this :acuity ?queue .',
                     '""" ?this :acuity :Urgent . ?queue a :AcuityLevel .')
    text = path.read_text().replace(
        "        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;",
        "        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;\n"
        "        horis:asserts [ horis:property :assignedNurse ; horis:value :nurse07 ] ;", 1)
    path.write_text(text)
    line = next(i for i, x in enumerate(text.splitlines(), 1) if ":Urgent" in x)
    command = ["validate", str(path), str(TRIAGE[1])]
    alone = horismos_forked(".", *command, timeout=120)
    assert alone.returncode == 0 and ":Urgent" not in alone.stdout, alone.stdout
    p = horismos_forked(".", *command, "--world", world, "--store", "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    urgent = next(x for x in p.stdout.splitlines() if ":Urgent" in x)
    assert urgent.startswith(f"{path}:{line}: warning: :QueuePatient: horis:requires names "
                             ":Urgent, which neither the definitions nor the world hold")
    assert urgent.endswith("did you mean :urgent?")
    nurse = next(x for x in p.stdout.splitlines() if ":nurse07" in x)
    assert "horis:value :nurse07 of :assignedNurse is a node neither" in nurse



@pytest.mark.parametrize(("pattern", "written"), [
    # the queue given by BIND: every call was refused ("must be a node of class
    # :AcuityLevel"), after the steps before it had acted, and it validated against a world
    pytest.param('""" ?this a :Patient . BIND(:stat AS ?queue)', "BIND(:stat", id="bind"),
    pytest.param('""" ?this a :Patient . VALUES ?queue { :stat }', "VALUES", id="values"),
    # compared in a FILTER: never true, so every patient was blocked
    pytest.param('""" ?this :acuity ?queue . FILTER (?queue = :stat)', "FILTER", id="filter"),
])
def test_a_node_a_bind_values_or_filter_names_that_nothing_holds_is_a_warning_against_a_world(
        tmp_path: Path, pattern: str, written: str) -> None:
    world = str(Path(__file__).parent.parent / "examples" / "triage" / "world.ttl")
    path, _ = edited(tmp_path, TRIAGE, '""" ?this :acuity ?queue .', pattern)
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if written in x)
    command = ["validate", str(path), str(TRIAGE[1]), "--world", world, "--store", "memory"]
    p = horismos_forked(".", *command, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    (said,) = [x for x in p.stdout.splitlines() if ":stat" in x]
    assert said.startswith(
        f"{path}:{line}: warning: :QueuePatient: horis:requires names :stat, which neither the "
        "definitions nor the world hold, so it is no node of the world: a FILTER's = with it "
        "never holds (its != always does), and a call given it by BIND or VALUES as a node of "
        "a class is refused"), said
    held = tmp_path / "held.ttl"
    held.write_text("@prefix : <http://example.org/ehr#> .\n:stat a :AcuityLevel .\n")
    quiet = horismos_forked(".", *command, "--world", str(held), timeout=120)
    assert ":stat" not in quiet.stdout, quiet.stdout


def test_a_node_misspelling_an_individual_of_the_definitions_is_a_warning_without_a_world(
        tmp_path: Path) -> None:
    """`?old :status :Canceled` where the ontology declares `:Cancelled a :FlightStatus`:
    validate without --world said valid, and every booking of a cancelled flight was left
    unrebooked. Beside a world that holds :Canceled it is dropped; beside one that does
    not, it is said once, keeping the definitions' name as the did-you-mean."""
    status = "?old :status :Cancelled ;"
    path, line = edited(tmp_path, REBOOKING, status, "?old :status :Canceled ;")
    command = ["validate", str(path), str(REBOOKING[1])]
    alone = horismos_forked(".", *command, timeout=120)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    (warned,) = [x for x in alone.stdout.splitlines() if ":Canceled" in x]
    assert warned.startswith(f"{path}:{line}: warning: ")
    assert ("horis:query names :Canceled, which the definitions do not declare, though "
            "they declare :Cancelled (a :FlightStatus)") in warned
    assert warned.endswith("did you mean :Cancelled?")
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/travel#> .\n:f1 a :Flight .\n")
    beside = horismos_forked(".", *command, "--world", str(world), "--store", "memory",
                             timeout=120)
    (warned,) = [x for x in beside.stdout.splitlines() if ":Canceled" in x]
    assert "neither the definitions nor the world hold" in warned
    assert warned.endswith("did you mean :Cancelled?")
    world.write_text("@prefix : <http://example.org/travel#> .\n:f1 :status :Canceled .\n")
    held = horismos_forked(".", *command, "--world", str(world), "--store", "memory", timeout=120)
    assert ":Canceled" not in held.stdout, held.stdout
    # another node of a numbered series is the world's to hold, not a typo
    path, _ = edited(tmp_path, REBOOKING, status, "?old :status :Cancelled2 ;")
    assert not [p for p in problems(path, REBOOKING) if ":Cancelled2" in p.message]


def _world_warnings(world: Path) -> list[str]:
    """What ``validate --world world`` of triage says of the world file."""
    p = horismos_forked(".", "validate", *map(str, TRIAGE), "--world", str(world), "--store",
                        "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return [x for x in p.stdout.splitlines() if str(world) in x]


def test_a_world_fact_misspelling_an_ontology_term_is_a_warning_at_the_world_files_line(
        tmp_path: Path) -> None:
    """`:p2 :acuty :routine` and `:n2 a :Nrse` loaded without a word: no pattern ever
    matched them, and the run said the patient was blocked as if the fact were missing. A
    term of another vocabulary, or one the world declares itself, is the world's own."""
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
        ":p1 a :Patient ; :acuity :urgent ; foaf:name \"Ada\" .\n"
        ":p2 a :Patient ;\n"
        "    :acuty :routine .\n"
        ":n2 a :Nrse ; :onDuty true .\n"
        ":note a owl:DatatypeProperty .\n"
        ":p1 :note \"seen\" .\n")
    warned = _world_warnings(world)
    assert warned == [
        f"{world}:6: warning: :p2: the world uses the property :acuty, which no loaded "
        "ontology declares and no definition names, so no step's pattern reads these facts "
        "— did you mean :acuity?",
        f"{world}:7: warning: :n2: the world uses the class :Nrse, which no loaded ontology "
        "declares and no definition names, so no step's pattern, argument or focus type "
        "matches these nodes — did you mean :Nurse?",
    ], warned


def test_a_world_value_of_the_other_kind_than_its_range_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """`:n1 :onDuty "true"` loaded as a string: NotifyNurse's `:onDuty true` never matched
    it, and every patient was blocked as if no nurse were on duty. Said once per property
    and kind of value; values of the range say nothing."""
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":p1 a :Patient ; :acuity :urgent .\n"
        ":p2 a :Patient ; :acuity \"routine\" .\n"
        ":n1 a :Nurse ; :onDuty \"true\" .\n"
        ":n2 a :Nurse ; :onDuty \"false\" .\n"
        ":n3 a :Nurse ; :onDuty true .\n"
        ":n4 a :Nurse ; :onDuty 0 .\n"
        ":n5 a :Nrse .\n")
    warned = _world_warnings(world)
    assert warned == [
        f"{world}:3: warning: :p2: the world gives :acuity \"routine\", a literal, where its "
        "values are nodes (it is an owl:ObjectProperty): a pattern matching :acuity with a "
        "value of its range never matches it — write the node meant, with its prefix, or "
        "correct :acuity's rdfs:range",
        f"{world}:4: warning: :n1: the world gives :onDuty \"true\", a literal of xsd:string, "
        "where its rdfs:range is xsd:boolean: a pattern matching :onDuty with a value of its "
        "range never matches it — write true without quotes",
        f"{world}:7: warning: :n4: the world gives :onDuty 0, a literal of xsd:integer, where "
        "its rdfs:range is xsd:boolean: a pattern matching :onDuty with a value of its range "
        "never matches it — write false without quotes",
        f"{world}:8: warning: :n5: the world uses the class :Nrse, which no loaded ontology "
        "declares and no definition names, so no step's pattern, argument or focus type "
        "matches these nodes — did you mean :Nurse?",
    ], warned


def test_a_list_as_a_value_of_a_node_property_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """`:ada :hasRequest ( :r1 :r2 :r3 )`: the value is one node, the list, so the
    forEach over a hire's requests found one item, the list's blank node, and the instance was
    blocked naming a generated id. Said once a property; a blank node that is no list is
    not said."""
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":p1 a :Patient ; :acuity :urgent .\n"
        ":p2 a :Patient ; :acuity :routine ;\n"
        "    :assignedNurse ( :n1 :n2 ) .\n"
        ":p3 a :Patient ; :acuity :routine ; :assignedNurse ( :n2 ) .\n"
        ":p4 a :Patient ; :acuity :routine ; :assignedNurse :n1 , [ a :Nurse ] .\n")
    warned = _world_warnings(world)
    assert warned == [
        f"{world}:4: warning: :p2: the world gives :assignedNurse a list ( :n1 … ), which is "
        "one node, the list, where its values are nodes (it is an owl:ObjectProperty): a "
        "pattern ?x :assignedNurse ?v binds the list itself and never one of its members, so "
        "a step reading each member (a horis:forEach over them) finds one item, the list, and "
        "none of them — write the members as values of :assignedNurse, with commas "
        "(:assignedNurse :n1, …), or read them with ?x :assignedNurse/rdf:rest*/rdf:first ?v",
    ], warned


def test_an_owl_same_as_of_a_node_the_definitions_name_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """`:top owl:sameAs :urgent` in the world, `:urgent` what the definitions name: no
    entailment derives from owl:sameAs, so a rule testing `:acuity :urgent` never matched the
    patient filed under `:top`, who took horis:otherwise. Said once a node; a sameAs between
    two nodes the definitions never name is the world's own, and a link out to a name the
    world says nothing else of hides nothing."""
    more = tmp_path / "levels.ttl"
    more.write_text("@prefix : <http://example.org/ehr#> .\n"
                    ":urgent a :AcuityLevel .\n:routine a :AcuityLevel .\n")
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        ":p1 a :Patient ; :acuity :top .\n"
        ":p2 a :Patient ; :acuity :urgent .\n"
        ":n1 owl:sameAs :n2 .\n"
        ":top owl:sameAs :urgent .\n"
        ":urgent owl:sameAs :high .\n"
        # a link out: nothing else is said of the other name, so no pattern misses anything
        ":routine owl:sameAs <http://dbpedia.org/resource/Routine> .\n")
    p = horismos_forked(".", "validate", *map(str, TRIAGE), str(more), "--world", str(world),
                        "--store", "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    warned = [x for x in p.stdout.splitlines() if str(world) in x]
    assert warned == [
        f"{world}:6: warning: :top: the world says :top owl:sameAs :urgent, and the "
        "definitions name :urgent: no --entailment derives from owl:sameAs, so a pattern "
        "naming :urgent never matches what the world says of :top — write :urgent where the "
        "world writes :top: one name for one node",
    ], warned


def test_a_world_value_misspelling_an_individual_of_its_range_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """`:acuity :urgnt` where the world's acuity levels are :urgent and :routine loaded
    without a word: QueuePatient bound ?queue to :urgnt, and the tool's :AcuityLevel argument
    refused every call. Said once, at the line writing it, with the individual meant."""
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":urgent a :AcuityLevel .\n"
        ":routine a :AcuityLevel .\n"
        ":p1 a :Patient ; :acuity :urgent .\n"
        ":p2 a :Patient ;\n"
        "    :acuity :urgnt .\n"
        ":p3 a :Patient ; :acuity :urgnt .\n", encoding="utf-8")
    assert _world_warnings(world) == [
        f"{world}:6: warning: :p2: the world gives :acuity :urgnt, which is no :AcuityLevel "
        "(its individuals are :routine, :urgent) and of which nothing is said: an argument "
        "typed :AcuityLevel refuses it, and a pattern naming one of them never matches it "
        "— did you mean :urgent?",
    ]


def test_a_word_for_a_boolean_is_warned_of_without_rdflibs_own_warning(tmp_path: Path) -> None:
    """`:onDuty "yes"`: the hint tries "yes" as an xsd:boolean, and rdflib's "Parsing weird
    boolean" was printed under validate's own warning, with a path into rdflib."""
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n:n1 a :Nurse ; :onDuty \"yes\" .\n",
                     encoding="utf-8")
    p = horismos_forked(".", "validate", *map(str, TRIAGE), "--world", str(world), "--store",
                        "memory", timeout=120)
    assert p.returncode == 0 and ':onDuty "yes", a literal of xsd:string' in p.stdout, p.stdout
    assert p.stderr == ""


def test_a_value_not_among_an_enumerated_range_is_a_warning_listing_its_members(
        tmp_path: Path) -> None:
    """A range the ontology enumerates (owl:oneOf) holds its members only: a value spelt like
    none of them is still said, with the members to choose from."""
    more = tmp_path / "levels.ttl"
    more.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        ":AcuityLevel owl:oneOf ( :urgent :routine ) .\n", encoding="utf-8")
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     ":p1 a :Patient ; :acuity :emergency .\n", encoding="utf-8")
    p = horismos_forked(".", "validate", *map(str, TRIAGE), str(more), "--world", str(world),
                        "--store", "memory", timeout=120)
    warned = [x for x in p.stdout.splitlines() if str(world) in x]
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(warned) == 1 and warned[0].startswith(f"{world}:2: warning: :p1: "), warned
    assert warned[0].endswith("— write one of :routine, :urgent, or add :emergency to the "
                              "owl:oneOf of :AcuityLevel"), warned


@pytest.mark.parametrize("facts", [
    pytest.param(":p2 a :Patient ; :acuity :urgent2 .\n", id="numbered-series"),
    pytest.param(":p2 a :Patient ; :acuity :urgnt .\n:urgnt a :AcuityLevel .\n",
                 id="typed-in-the-world"),
    pytest.param(":p2 a :Patient ; :acuity :urgnt .\n"
                 ":urgnt <http://www.w3.org/2000/01/rdf-schema#label> \"kept\" .\n",
                 id="described-in-the-world"),
    pytest.param(":p2 a :Patient ; :assignedNurse :nurse77 .\n", id="range-of-nodes-unseen"),
])
def test_a_value_the_world_holds_or_a_range_not_enumerated_says_nothing(
        tmp_path: Path, facts: str) -> None:
    """Another of a numbered series, an individual the world types or says anything of, and a
    nurse where no nurse is typed are the world's own: none is warned of."""
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     ":urgent a :AcuityLevel .\n:routine a :AcuityLevel .\n" + facts,
                     encoding="utf-8")
    assert _world_warnings(world) == []


@pytest.mark.parametrize(("written", "held"), [(":Urgent", ":urgent"), (":urgent", ":Urgent"),
                                               (":URGENT", ":urgent"), (":Nowhere", None)])
def test_a_node_in_another_case_is_found_by_bound_look_ups_not_a_scan_of_the_world(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        written: str, held: str | None) -> None:
    """The hint for a node the world holds in another case was one query comparing every
    node of the world in lower case: 0.7 s at 100,000 triples, 7 s at a million, for each
    node missing. Every query validate asks now has the node asked about bound."""
    from horismos._cli import main
    from horismos._stores.oxigraph import OxigraphStore

    path, _ = edited(tmp_path, TRIAGE, '""" ?this :acuity ?queue .',
                     f'""" ?this :acuity {written} . ?queue a :AcuityLevel .')
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     + (f":p1 :acuity {held} .\n" if held else ":p1 :acuity :low .\n")
                     + ":p1 :queuedAt :q .\n:Patient :holds :nurse07 .\n")
    asked: list[tuple[str, dict]] = []
    select = OxigraphStore.select

    def recorded(self: OxigraphStore, query: str, bindings: dict, ns: dict) -> list:
        asked.append((query, dict(bindings)))
        return select(self, query, bindings, ns)

    monkeypatch.setattr(OxigraphStore, "select", recorded)
    code = main(["validate", str(path), str(TRIAGE[1]), "--world", str(world),
                 "--store", "oxigraph"])
    out = capsys.readouterr().out
    assert code == 0, out
    line = next(x for x in out.splitlines() if f"names {written}," in x)
    assert line.endswith(f"did you mean {held}?" if held else "or load the data that holds it")
    assert asked and all(  # the subject's look-up is _world.states', which binds ?s
        len(b) == 1 and isinstance(next(iter(b.values())), URIRef) for _, b in asked), asked


def test_world_values_an_ontology_allows_say_nothing_and_a_warning_is_at_its_own_line(
        tmp_path: Path) -> None:
    """A whole number where a range is xsd:double (a pattern compares numbers by value), a
    literal of a datatype the files declare, and a literal in a language were warned of; and
    `:onDuty "1"` was placed at the line of `:onDutyFrom "1"`, whose name begins alike."""
    more = tmp_path / "more.ttl"
    more.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        ":weightKg a owl:DatatypeProperty ; rdfs:range xsd:double .\n"
        ":bedCode rdfs:range :BedCode . :BedCode a rdfs:Datatype .\n"
        ":onDutyFrom a owl:DatatypeProperty ; rdfs:range xsd:string .\n"
        ":code a owl:DatatypeProperty ; rdfs:range xsd:integer .\n", encoding="utf-8")
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":p1 a :Patient ; :weightKg 71 , 68.5 ; :bedCode \"B14\" .\n"
        ":n7 a :Nurse ; :onDutyFrom \"1\" .\n"
        ":n8 a :Nurse ; :onDuty \"1\" .\n"
        ":p2 a :Patient ; :code \"x\"@en .\n", encoding="utf-8")
    p = horismos_forked(".", "validate", *map(str, TRIAGE), str(more), "--world", str(world),
                        "--store", "memory", timeout=120)
    warned = [x for x in p.stdout.splitlines() if str(world) in x]
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert [w.split(": warning: ")[0] for w in warned] == [f"{world}:4", f"{world}:5"], warned
    assert ':onDuty "1", a literal of xsd:string' in warned[0], warned
    assert ':code "x"@en, a literal of rdf:langString' in warned[1], warned
    assert "ill-typed" not in p.stderr, p.stderr


# -- an ontology's link to a class or property of a near name -------------------------------


@pytest.mark.parametrize(("old", "new", "node", "said", "hint"), [
    pytest.param(":Patient a owl:Class ; rdfs:subClassOf :Person",
                 ":Patient a owl:Class ; rdfs:subClassOf :Persn", ":Patient",
                 "rdfs:subClassOf :Persn names a class no loaded file declares or says "
                 "anything of: what is said of the class meant", "did you mean :Person?",
                 id="superclass"),
    pytest.param(":onDuty a owl:DatatypeProperty ; rdfs:domain :Nurse",
                 ":onDuty a owl:DatatypeProperty ; rdfs:domain :Nurs", ":onDuty",
                 "rdfs:domain :Nurs names a class no loaded file declares",
                 "did you mean :Nurse?", id="domain"),
    pytest.param(":assignedNurse a owl:ObjectProperty ;",
                 ":assignedNurse a owl:ObjectProperty ; rdfs:subPropertyOf :notifiedAtt ;",
                 ":assignedNurse", "rdfs:subPropertyOf :notifiedAtt names a property no loaded "
                 "file declares", "did you mean :notifiedAt?", id="superproperty"),
])
def test_an_ontology_linking_a_near_name_nothing_declares_is_a_warning_at_the_link(
        tmp_path: Path, old: str, new: str, node: str, said: str, hint: str) -> None:
    """:Patient rdfs:subClassOf :Persn validated: what the files say of :Person never
    reached a patient, an argument typed :Person refused every one."""
    ontology, line = ontology_edited(tmp_path, old, new)
    p = the_one(problems(TRIAGE[0], TRIAGE, ontology), "warning")
    assert (p.file, p.line, p.node) == (str(ontology), line, node), str(p)
    assert said in p.message and p.hint == hint, str(p)


def test_a_link_to_an_undeclared_super_property_never_suggests_its_own_subject(
        tmp_path: Path) -> None:
    """`:assignedNurse rdfs:subPropertyOf :assignedTo` (a super-property of another
    vocabulary's style) was asked "did you mean :assignedNurse?": the property itself."""
    ontology, _ = ontology_edited(tmp_path, ":assignedNurse a owl:ObjectProperty ;",
                                  ":assignedNurse a owl:ObjectProperty ; "
                                  "rdfs:subPropertyOf :assignedTo ;")
    said = [p for p in problems(TRIAGE[0], TRIAGE, ontology) if ":assignedTo" in p.message]
    assert all("did you mean :assignedNurse" not in str(p) for p in said), said


@pytest.mark.parametrize("new", [
    pytest.param(":Patient a owl:Class ; rdfs:subClassOf :Person , :LegalSubject",
                 id="a-superclass-of-no-near-name"),
    pytest.param(":Patient a owl:Class ; rdfs:subClassOf :Person , :Persn .\n"
                 ":Persn rdfs:label \"A person, as the registry records one\"",
                 id="a-term-the-files-describe"),
])
def test_an_undeclared_superclass_of_no_near_name_or_described_says_nothing(
        tmp_path: Path, new: str) -> None:
    ontology, _ = ontology_edited(tmp_path, ":Patient a owl:Class ; rdfs:subClassOf :Person",
                                  new)
    assert problems(TRIAGE[0], TRIAGE, ontology) == []


@pytest.mark.parametrize(("new", "offset", "node", "cycle", "said"), [
    pytest.param(":Person a owl:Class ; rdfs:subClassOf :Patient ;", 0, ":Person",
                 ":Patient → :Person → :Patient", "every :Person is a :Patient",
                 id="two-classes"),
    pytest.param(":Person a owl:Class ; rdfs:subClassOf :Staff .\n"
                 ":Staff rdfs:subClassOf :Nurse .\n:Person", 1, ":Staff",
                 ":Nurse → :Person → :Staff → :Nurse", "every :Staff is a :Nurse",
                 id="three-classes"),
])
def test_a_cycle_of_subclasses_is_a_warning_at_the_link_that_closes_it(
        tmp_path: Path, new: str, offset: int, node: str, cycle: str, said: str) -> None:
    """:Person rdfs:subClassOf :Patient beside :Patient rdfs:subClassOf :Person validated:
    under RDFS the two are one class, so every nurse was a patient."""
    ontology, line = ontology_edited(tmp_path, ":Person a owl:Class ;", new)
    (p,) = [x for x in problems(TRIAGE[0], TRIAGE, ontology) if "cycle" in x.message]
    assert p.severity == "warning", str(p)
    assert (p.file, p.line, p.node) == (str(ontology), line + offset, node), str(p)
    assert f"closes a cycle of subclasses ({cycle})" in p.message and said in p.message, str(p)
    assert p.hint is not None and "owl:equivalentClass" in p.hint, str(p)


def test_a_cycle_closed_by_a_link_written_apart_is_said_at_that_link(tmp_path: Path) -> None:
    """``:Person rdfs:subClassOf :Patient .`` written after :Person's declaration was said
    at the declaration, a line with no rdfs:subClassOf on it (review)."""
    ontology, _ = ontology_edited(tmp_path, ":Person a owl:Class ;", ":Person a owl:Class ;")
    text = ontology.read_text(encoding="utf-8")
    ontology.write_text(text + "\n:Person rdfs:subClassOf :Patient .\n", encoding="utf-8")
    (p,) = [x for x in problems(TRIAGE[0], TRIAGE, ontology) if "cycle" in x.message]
    assert (p.line, p.node) == (text.count("\n") + 2, ":Person"), str(p)


def test_a_cycle_closed_apart_from_a_declaration_with_a_superclass_is_said_at_its_link(
        tmp_path: Path) -> None:
    """``:Person rdfs:subClassOf :Patient .`` written apart, where :Person's declaration
    names a superclass of its own, was said at that superclass's line (review)."""
    ontology, _ = ontology_edited(tmp_path, ":Person a owl:Class ;",
                                  ":Person a owl:Class ;\n    rdfs:subClassOf :Agent ;")
    text = ontology.read_text(encoding="utf-8")
    ontology.write_text(text + "\n:Agent a owl:Class .\n:Person rdfs:subClassOf :Patient .\n",
                        encoding="utf-8")
    (p,) = [x for x in problems(TRIAGE[0], TRIAGE, ontology) if "cycle" in x.message]
    assert (p.file, p.line, p.node) == (str(ontology), text.count("\n") + 3, ":Person"), str(p)
    assert p.message.startswith("rdfs:subClassOf :Patient closes a cycle of subclasses"), str(p)


def test_a_class_said_its_own_subclass_or_equivalent_to_another_says_nothing(
        tmp_path: Path) -> None:
    """RDFS entails ``:A rdfs:subClassOf :A``; ``owl:equivalentClass`` is how one class has
    two names on purpose."""
    ontology, _ = ontology_edited(tmp_path, ":Person a owl:Class ;",
                                  ":Human owl:equivalentClass :Person .\n"
                                  ":Person a owl:Class ; rdfs:subClassOf :Person ;")
    assert problems(TRIAGE[0], TRIAGE, ontology) == []


# -- a value of the wrong kind for its property -----------------------------------------------


def test_a_literal_for_an_object_property_is_an_error_naming_its_range(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, ":assignedNurse ; horis:type :Nurse",
                        ":assignedNurse ; horis:type xsd:string")
    p = the_one(problems(path, TRIAGE), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.notify_nurse")
    assert p.message == ("asserted property :assignedNurse is an owl:ObjectProperty and has "
                         "rdfs:range :Nurse (its values are nodes), but horis:type xsd:string "
                         "makes the tool's value a literal")
    assert p.hint == "write horis:type :Nurse, the rdfs:range of :assignedNurse"


def test_a_node_for_a_datatype_property_is_an_error_naming_its_range(tmp_path: Path) -> None:
    path, line = edited(tmp_path, LAB, ":archiveRef ; horis:type xsd:string",
                        ":archiveRef ; horis:type :Clinician")
    p = the_one(problems(path, LAB), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":lab.file_result")
    assert p.message == ("asserted property :archiveRef is an owl:DatatypeProperty and has "
                         "rdfs:range xsd:string (its values are literals), but horis:type "
                         ":Clinician makes the tool's value a node")
    assert p.hint == "write horis:type xsd:string, the rdfs:range of :archiveRef"


@pytest.mark.parametrize(("new", "said", "hint"), [
    pytest.param(":assignedNurse ; horis:value horis:now",
                 "asserted property :assignedNurse is an owl:ObjectProperty and has rdfs:range "
                 ":Nurse (its values are nodes), but horis:value horis:now is a literal",
                 "write horis:value with the IRI of a node (:someNode), not a literal",
                 id="the-time-for-a-node"),
    pytest.param(":queuedAt ; horis:value :urgent",
                 "asserted property :queuedAt is an owl:DatatypeProperty and has rdfs:range "
                 "xsd:dateTime (its values are literals), but horis:value :urgent is a node",
                 'write horis:value with a literal ("…" or "…"^^xsd:dateTime)',
                 id="a-node-for-a-time"),
    pytest.param(":queuedAt ; horis:type xsd:string",
                 "asserted property :queuedAt has rdfs:range xsd:dateTime, but horis:type "
                 "xsd:string makes the tool's value a literal of xsd:string, which is not one",
                 "write horis:type xsd:dateTime, the rdfs:range of :queuedAt",
                 id="a-string-for-a-time"),
    pytest.param(':queuedAt ; horis:value "soon"',
                 "asserted property :queuedAt has rdfs:range xsd:dateTime, but horis:value "
                 '"soon" is a literal of xsd:string, which is not one',
                 "write horis:value with a literal of xsd:dateTime",
                 id="a-fixed-string-for-a-time"),
])
def test_a_value_its_property_cannot_take_is_an_error(
        tmp_path: Path, new: str, said: str, hint: str) -> None:
    """A horis:value lands as it is written, and a horis:type is what the gate holds the
    tool's value to: a literal under an object property, or a string where the ontology says
    times go, was committed as data, and every query comparing times missed it."""
    path, line = edited(tmp_path, TRIAGE, ":queuedAt ; horis:value horis:now", new)
    p = the_one(problems(path, TRIAGE), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue")
    assert p.message == said
    assert p.hint == hint


def test_a_datatype_derived_from_the_range_fits_it(tmp_path: Path) -> None:
    """An xsd:dateTimeStamp is an xsd:dateTime: nothing to say."""
    path, _ = edited(tmp_path, TRIAGE, ":queuedAt ; horis:value horis:now",
                     ":queuedAt ; horis:type xsd:dateTimeStamp")
    assert [p for p in problems(path, TRIAGE) if p.severity == "error"] == []


def test_a_range_alone_is_enough_to_contradict(tmp_path: Path) -> None:
    """A property given only an rdfs:range (no owl: kind) is held to it all the same."""
    ontology = tmp_path / "lab.ttl"
    text = LAB[1].read_text(encoding="utf-8")
    old = ":escalatedTo a owl:ObjectProperty ; rdfs:domain :LabResult ;"
    assert text.count(old) == 1
    ontology.write_text(text.replace(old, ":escalatedTo rdfs:domain :LabResult ;"),
                        encoding="utf-8")
    path, line = edited(tmp_path, LAB, ":escalatedTo ; horis:type :Clinician",
                        ":escalatedTo ; horis:type xsd:anyURI")
    p = the_one(problems(path, LAB, ontology), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":lab.escalate")
    assert p.message.startswith("asserted property :escalatedTo has rdfs:range :Clinician (its "
                                "values are nodes), but horis:type xsd:anyURI")
    assert p.hint == "write horis:type :Clinician, the rdfs:range of :escalatedTo"


# -- a literal that is not of its datatype ------------------------------------------------------


def test_a_literal_not_of_its_datatype_is_an_error_where_the_runtime_reads_it(
        tmp_path: Path) -> None:
    """``horis:value "abc"^^xsd:integer`` loaded with one unplaced line from rdflib, and the
    effect wrote text its own datatype refuses on every call: now it is refused at its line."""
    old = "horis:property :queueRef ; horis:type xsd:string ]"
    path, line = edited(tmp_path, TRIAGE, old, old + ' ; horis:asserts [ horis:property '
                        ':triagePriority ; horis:value "abc"^^xsd:integer ]')
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue"), p
    assert p.message.startswith('horis:value "abc"^^xsd:integer: "abc" is not a valid '
                                "xsd:integer"), p
    assert 'such as "42"' in (p.hint or "")


def test_a_literal_not_of_its_datatype_elsewhere_is_a_warning(tmp_path: Path) -> None:
    ontology = tmp_path / TRIAGE[1].name
    text = TRIAGE[1].read_text(encoding="utf-8")
    ontology.write_text(text + '\n:urgent rdfs:comment "soon"^^xsd:date .\n', encoding="utf-8")
    found = problems(TRIAGE[0], TRIAGE, ontology)
    p = the_one(found, "warning")
    assert p.line == text.count("\n") + 2 and p.file == str(ontology), p
    assert '"soon" is not a valid xsd:date' in p.message and "2026-12-01" in (p.hint or "")
    assert not [q for q in found if q.severity == "error"]


# -- a literal of a datatype that is none -------------------------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "opens", "hint"), [
    pytest.param(LAB, "FILTER (?v > ?limit)", 'FILTER (?v > "6.0"^^xsd:decmal)', ":IsCritical",
                 'horis:requires: "6.0"^^xsd:decmal: xsd:decmal is no XSD or RDF datatype and '
                 "is not declared a rdfs:Datatype, so no value the world holds equals the "
                 "literal, and a FILTER comparing with it is never true",
                 "did you mean xsd:decimal?", id="filter"),
    pytest.param(TRIAGE, "?nurse a :Nurse ; :onDuty true .",
                 '?nurse a :Nurse ; :onDuty "true"^^<http://www.w3.org/2001/XMLSchema#bool> .',
                 ":NotifyNurse", 'horis:requires: "true"^^xsd:bool: xsd:bool is no XSD or RDF '
                 "datatype", "did you mean xsd:boolean?", id="triple-pattern"),
    pytest.param(REBOOKING, "?option a :Flight ;", '?option a :Flight ; :status "x"^^rdf:HTM ;',
                 ":ProposeFlight", 'horis:query: "x"^^rdf:HTM: rdf:HTM is no XSD or RDF datatype',
                 "did you mean rdf:HTML?", id="candidates"),
    pytest.param(TRIAGE, "horis:property :queueRef ; horis:type xsd:string",
                 'horis:property :queueRef ; horis:value "Q-A-1"^^xsd:strng', ":ehr.assign_queue",
                 'horis:value "Q-A-1"^^xsd:strng: xsd:strng is no XSD or RDF datatype and is not '
                 "declared a rdfs:Datatype, so the literal is of a datatype nothing reads: it is "
                 "never equal to, nor ordered with, a string, a number or a date",
                 "did you mean xsd:string?", id="effect"),
])
def test_a_literal_of_a_misspelt_datatype_is_an_error_with_a_did_you_mean(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, opens: str,
        hint: str) -> None:
    """``FILTER (?v > "6.0"^^xsd:decmal)`` was never true, so the critical result was filed;
    ``horis:value "A-1"^^xsd:strng`` landed a literal nothing reads on every call. Both
    validated: a ``horis:type xsd:strng`` was the only datatype judged."""
    path, line = edited(tmp_path, pair, old, new)
    text = path.read_text(encoding="utf-8")
    if "@prefix rdf:" not in text:
        path.write_text("@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n" + text,
                        encoding="utf-8")
        line += 1
    p = the_error(problems(path, pair))
    assert (p.file, p.line, p.node) == (str(path), line, node), p
    assert p.message.startswith(opens), p.message
    assert p.hint == hint


@pytest.mark.parametrize(("pair", "old", "new", "node", "opens", "hint"), [
    pytest.param(LAB, "FILTER (?v > ?limit)", 'FILTER (?v > "6,0"^^xsd:decimal)', ":IsCritical",
                 'horis:requires: "6,0"^^xsd:decimal: "6,0" is not a valid xsd:decimal, so it is '
                 "kept as text, which no value of xsd:decimal equals or is ordered with: a FILTER "
                 "comparing with it is never true",
                 "write 6.0 without quotes (a point, not a comma, before the decimals)",
                 id="decimal-comma"),
    pytest.param(TRIAGE, "?nurse a :Nurse ; :onDuty true .",
                 '?nurse a :Nurse ; :onDuty "yes"^^xsd:boolean .', ":NotifyNurse",
                 'horis:requires: "yes"^^xsd:boolean: "yes" is not a valid xsd:boolean',
                 "write true or false, without quotes", id="triple-pattern"),
    pytest.param(REBOOKING, "?option a :Flight ;",
                 '?option a :Flight ; :seatsLeft "1 000"^^xsd:integer ;', ":ProposeFlight",
                 'horis:query: "1 000"^^xsd:integer: "1 000" is not a valid',
                 "write 1000 without quotes (no thousands separator)", id="candidates"),
])
def test_a_literal_of_a_pattern_not_of_its_datatype_is_an_error_at_its_line(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, opens: str,
        hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``FILTER (?s < "0,8"^^xsd:decimal)`` guarding a payout was never true, and every claim
    was blocked at it; ``validate`` said "valid" under rdflib's one line naming neither file
    nor pattern (``an ill-typed literal … is kept as text: [<class
    'decimal.ConversionSyntax'>]``)."""
    path, line = edited(tmp_path, pair, old, new)
    p = the_error(problems(path, pair))
    assert (p.file, p.line, p.node) == (str(path), line, node), p
    assert p.message.startswith(opens), p.message
    assert p.hint == hint
    assert "ConversionSyntax" not in capsys.readouterr().err


def test_a_language_tag_on_a_string_in_a_pattern_is_told_to_be_dropped(tmp_path: Path) -> None:
    """``?this :queueRef "Q-1"@en`` never matches a queue reference, an ``xsd:string``: the
    hint was ``write "Q-1"^^xsd:string``, where the tag is what to take out."""
    path, _ = edited(tmp_path, TRIAGE, "?this :queueRef ?ref .", '?this :queueRef "Q-1"@en .')
    found = [p for p in problems(path, TRIAGE) if "@en" in p.message]
    assert found and found[0].hint == 'write "Q-1", without its language tag @en', found


def test_a_literal_of_a_misspelt_datatype_in_an_ontology_is_an_error_at_its_line(
        tmp_path: Path) -> None:
    ontology = tmp_path / LAB[1].name
    text = LAB[1].read_text(encoding="utf-8")
    ontology.write_text(text + ':k0 a :LabResult ; :value "6.8"^^xsd:decimall .\n',
                        encoding="utf-8")
    p = the_error(problems(LAB[0], LAB, ontology))
    assert (p.file, p.line) == (str(ontology), text.count("\n") + 1), p
    assert p.message.startswith(':value "6.8"^^xsd:decimall: xsd:decimall is no XSD')
    assert p.hint == "did you mean xsd:decimal?"


def test_a_literal_of_a_domains_own_datatype_is_not_judged(tmp_path: Path) -> None:
    """Only XSD's and RDF's namespaces are closed: a datatype of FHIR's, or one the files
    declare, is the domain's to define."""
    path, _ = edited(tmp_path, LAB, "FILTER (?v > ?limit)",
                     'FILTER (?v > ?limit && ?v != "6.0"^^<http://hl7.org/fhir/decimal> '
                     '&& ?v != "7"^^:Millimolar)')
    ontology = tmp_path / LAB[1].name
    ontology.write_text(LAB[1].read_text(encoding="utf-8")
                        + ":Millimolar a rdfs:Datatype .\n"
                        + ':k0 a :LabResult ; :value "6.1"^^<http://hl7.org/fhir/decimal> .\n',
                        encoding="utf-8")
    assert problems(path, LAB, ontology) == []


# -- one prefix, two namespaces ---------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "said", "hint"), [
    pytest.param("@prefix :      <http://example.org/ehr#> .",
                 "@prefix :      <http://example.org/ehr/> .",
                 "the prefix : means <http://example.org/ehr/> in this file but "
                 "<http://example.org/ehr#> in ehr.ttl",
                 "write @prefix : <http://example.org/ehr#> . as ehr.ttl does",
                 id="workflow-binds-it-elsewhere"),
    pytest.param("@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .",
                 "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .\n"
                 "@prefix :      <http://example.org/EHR#> .",
                 "the prefix : is declared a second time in this file, as "
                 "<http://example.org/EHR#>: from here on it no longer means "
                 "<http://example.org/ehr#> (line 1)",
                 "remove this @prefix and keep @prefix : <http://example.org/ehr#> .",
                 id="declared-twice-in-one-file"),
])
def test_a_prefix_bound_to_two_namespaces_is_one_warning_at_its_declaration(
        tmp_path: Path, old: str, new: str, said: str, hint: str) -> None:
    """It was a dozen "declared by no loaded ontology" warnings, one per term, none naming
    the prefix, with a did-you-mean cut short (<http://example.org/ehr/PQueuePatient?)."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    line += new.count("\n")
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line) == (str(path), line), str(p)
    assert p.message.startswith(said), str(p)
    assert ":Patient" in p.message and "name nothing loaded declares" in p.message
    assert p.hint is not None and p.hint.startswith(hint), str(p)


def test_the_ontologys_prefix_bound_elsewhere_is_said_where_the_workflow_uses_it(
        tmp_path: Path) -> None:
    ontology = tmp_path / "ehr.ttl"
    ontology.write_text(TRIAGE[1].read_text(encoding="utf-8").replace(
        "<http://example.org/ehr#>", "<http://example.org/ehr/>"), encoding="utf-8")
    p = the_one(problems(TRIAGE[0], TRIAGE, ontology), "warning")
    assert (p.file, p.line) == (str(TRIAGE[0]), 1), str(p)
    assert p.hint == "write @prefix : <http://example.org/ehr/> . as ehr.ttl does"


def test_a_prefix_of_another_name_over_a_near_namespace_is_one_warning(tmp_path: Path) -> None:
    """A workflow writing ``ex:`` over ``<http://example.org/ehr/>`` where the ontology binds
    ``:`` to ``<…/ehr#>``: each of its terms was its own "declared by no loaded ontology"
    warning (one per term, none naming the prefix), where ``:`` bound the same way gave one.
    Now it is one warning at the ``@prefix`` line, naming both namespaces and the file."""
    text = TRIAGE[0].read_text(encoding="utf-8")
    text = text.replace("@prefix :      <http://example.org/ehr#> .",
                        "@prefix ex:    <http://example.org/ehr/> .")
    text = re.sub(r"(?<![\w:>]):(?=[A-Za-z])", "ex:", text)
    path = tmp_path / TRIAGE[0].name
    path.write_text(text, encoding="utf-8")
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line) == (str(path), 1), str(p)
    assert p.message.startswith(
        "the prefix ex: means <http://example.org/ehr/> in this file, where ehr.ttl binds : to "
        "<http://example.org/ehr#>; ex:"), str(p)
    assert "they name nothing loaded declares" in p.message, str(p)
    assert p.hint == ("write @prefix ex: <http://example.org/ehr#> . (the namespace ehr.ttl "
                      "binds : to)")


def test_one_term_lost_to_a_prefix_is_said_in_the_singular(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, "horis:focusType :Patient",
                     "horis:focusType ex:Patient")
    text = path.read_text(encoding="utf-8")
    path.write_text("@prefix ex: <http://example.org/ehr/> .\n" + text, encoding="utf-8")
    found = [p for p in problems(path, TRIAGE) if "the prefix ex:" in p.message]
    assert len(found) == 1, "\n".join(map(str, problems(path, TRIAGE)))
    assert "ex:Patient is declared under <http://example.org/ehr#> (in ehr.ttl), so as "
    "written here it names nothing loaded declares and every check or call that uses it " in (
        found[0].message), str(found[0])


def test_each_file_misbinding_a_prefix_alike_is_warned_at_its_own_line(tmp_path: Path) -> None:
    """The workflow and the tools each bind ``:`` to ``<http://example.org/ehr/>``, the
    ontology to ``<…/ehr#>``. Each file names the other's terms, so none was "undeclared": the
    tools file was said nothing, and the one warning there was, of the workflow, was folded
    away by any other clash losing the same term. Each file now has its warning, at its own
    ``@prefix`` line, naming the terms it loses."""
    text = TRIAGE[0].read_text(encoding="utf-8").replace(
        "<http://example.org/ehr#>", "<http://example.org/ehr/>")
    cut = text.index("# The workflow")
    head = text[: text.index("# Tools")]
    tools, workflow = tmp_path / "tools.ttl", tmp_path / "workflow.ttl"
    tools.write_text(text[:cut], encoding="utf-8")
    workflow.write_text(head + text[cut:], encoding="utf-8")
    found = load_definitions([tools, workflow, TRIAGE[1]]).warnings
    clashes = sorted((p for p in found if "the prefix :" in p.message), key=lambda p: p.file)
    assert [(p.file, p.line) for p in clashes] == [(str(tools), 1), (str(workflow), 1)], (
        "\n".join(map(str, found)))
    for p in clashes:
        assert p.message.startswith("the prefix : means <http://example.org/ehr/> in this file "
                                    "but <http://example.org/ehr#> in ehr.ttl; "), str(p)
    assert ":Patient" in clashes[0].message and ":Nurse" in clashes[0].message, str(clashes[0])


def test_among_many_files_binding_a_prefix_the_one_declaring_the_terms_is_named(
        tmp_path: Path) -> None:
    """In a project every file of which binds ``:`` to a namespace of its own, a workflow that
    binds it wrongly is warned once, at its @prefix line, pointed at the file that declares
    the terms it lost, not at the first file binding ``:`` otherwise; the other files, which
    lose no term, are not warned. Which files bind a prefix is indexed once per load (each
    file's @prefix lines were read again for every prefix of every other file)."""
    path, line = edited(tmp_path, TRIAGE, "@prefix :      <http://example.org/ehr#> .",
                        "@prefix :      <http://example.org/ehr/> .")
    others = [LAB[0], LAB[1], REBOOKING[0], REBOOKING[1]]
    for i in range(8):  # more files binding `:` elsewhere, before and after the ontology
        extra = tmp_path / f"extra{i}.ttl"
        extra.write_text(f"@prefix : <http://example.org/extra{i}#> .\n"
                         "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                         f":Thing{i} a owl:Class .\n", encoding="utf-8")
        others.insert(i, extra)
    defs = load_definitions([*others[:6], TRIAGE[1], *others[6:], path])
    clashes = [p for p in defs.warnings if "the prefix :" in p.message]
    assert len(clashes) == 1, "\n".join(map(str, clashes))
    (p,) = clashes
    assert (p.file, p.line) == (str(path), line), str(p)
    assert p.message.startswith("the prefix : means <http://example.org/ehr/> in this file but "
                                "<http://example.org/ehr#> in ehr.ttl"), str(p)
    assert p.hint == "write @prefix : <http://example.org/ehr#> . as ehr.ttl does"


def test_a_did_you_mean_for_a_term_no_prefix_writes_is_a_whole_iri(tmp_path: Path) -> None:
    """The hint sliced the name as if it were a CURIE, cutting the IRI's closing >."""
    other = tmp_path / "other.ttl"
    other.write_text("<http://example.org/other/Nurse> a <http://www.w3.org/2002/07/owl#Class> .\n")
    path, line = edited(tmp_path, TRIAGE, '"nurse"   ; horis:type :Nurse',
                        '"nurse"   ; horis:type <http://example.org/other/Nurs>')
    defs = load_definitions([path, TRIAGE[1], other])
    (p,) = [p for p in defs.warnings if "Nurs>" in p.message]
    assert (p.file, p.line) == (str(path), line)
    assert p.hint == "did you mean <http://example.org/other/Nurse>?"


# -- a property where a class goes, a class where a property goes -----------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "said", "hint"), [
    pytest.param(TRIAGE, 'horis:name "queue"   ; horis:type :AcuityLevel',
                 'horis:name "queue"   ; horis:type :acuity', ":ehr.assign_queue",
                 'argument "queue" has horis:type :acuity, a property, not a class',
                 "write horis:type :AcuityLevel, the rdfs:range of :acuity", id="argument"),
    pytest.param(LAB, "horis:property :escalatedTo ; horis:type :Clinician",
                 "horis:property :escalatedTo ; horis:type :onCall", ":lab.escalate",
                 "asserted property :escalatedTo has horis:type :onCall, a property",
                 "write horis:type :Clinician, the rdfs:range of :escalatedTo", id="asserted-type"),
    pytest.param(TRIAGE, "horis:property :queueRef ; horis:type xsd:string",
                 "horis:property :Patient ; horis:type xsd:string", ":ehr.assign_queue",
                 "horis:property :Patient is a class, not a property",
                 "write the property", id="asserted-property"),
    pytest.param(LAB, "horis:focusType :LabResult ;", "horis:focusType :value ;",
                 ":ReviewResult", "horis:focusType :value is a property, not a class",
                 "write horis:focusType :LabResult, the rdfs:domain of :value", id="focus-type"),
    pytest.param(TRIAGE, "?nurse a :Nurse ; :onDuty true .", "?nurse a :onDuty ; :onDuty true .",
                 ":NotifyNurse", "reads `a :onDuty`, but :onDuty is a property",
                 "write ?x :onDuty ?value", id="pattern-class"),
    pytest.param(TRIAGE, '""" ?this :queueRef ?ref .', '""" ?this :Patient ?ref .',
                 ":NotifyNurse", "uses :Patient as a property, but it is a class",
                 "write ?x a :Patient", id="pattern-property"),
])
def test_a_property_for_a_class_or_a_class_for_a_property_is_an_error(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, said: str,
        hint: str) -> None:
    # Declared, so no undeclared-term check saw them; each passed validate and then refused
    # every call ("must be a node of class :acuity"), ran no instance and exited 0 (a focus
    # type), rejected every answer after the tool acted, or blocked the step after the steps
    # before it had acted.
    path, line = edited(tmp_path, pair, old, new)
    e = the_error(problems(path, pair))
    assert (e.line, e.node) == (line, node), e
    assert said in e.message
    assert e.hint is not None and e.hint.startswith(hint), e.hint


@pytest.mark.parametrize(("old", "new", "node", "said", "hint"), [
    pytest.param(":Triage a horis:Workflow ;", ":Triage a horis:workflow ;", ":Triage",
                 "horis:workflow is a property, not a class", "did you mean horis:Workflow?",
                 id="workflow-property-as-class"),
    pytest.param(":ehr.notify_nurse a horis:Tool ;", ":ehr.notify_nurse a horis:tool ;",
                 ":ehr.notify_nurse", "horis:tool is a property, not a class",
                 "did you mean horis:Tool?", id="tool-property-as-class"),
    pytest.param("    horis:tool :ehr.notify_nurse ;", "    horis:Tool :ehr.notify_nurse ;",
                 ":NotifyNurse", "horis:Tool is a class, not a property",
                 "did you mean horis:tool?", id="tool-class-as-predicate"),
])
def test_a_horis_term_of_the_wrong_kind_is_one_error_at_its_line(
        tmp_path: Path, old: str, new: str, node: str, said: str, hint: str) -> None:
    # Real terms, so no typo check saw them: `a horis:workflow` validated with two warnings
    # that the steps were unreachable, `a horis:tool` was blamed on the step calling the tool
    # (33 lines below), `horis:Tool :x` was "the ActionStep names no tool" without a hint.
    path, line = edited(tmp_path, TRIAGE, old, new)
    p = horismos_validate(path)
    assert p.returncode == 1, p.stdout + p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith(f"{path}:{line}: error: {node}: {said}"), p.stdout
    assert first.endswith(f" — {hint}"), p.stdout
    assert "invalid: 1 error" in p.stdout, p.stdout
    assert "Traceback" not in p.stdout + p.stderr


def horismos_validate(path: Path) -> subprocess.CompletedProcess[str]:
    """``horismos validate`` of the edited workflow with its ontology, as a modeler runs it."""
    return horismos_forked(path.parent, "validate", str(path), str(TRIAGE[1]), timeout=120)


def test_an_argument_given_from_this_of_a_class_the_focus_is_not_is_a_warning(
        tmp_path: Path) -> None:
    # :ReviewResult for clinicians: every :Escalate and :File call was refused ("must be a
    # node of class :LabResult; the graph gives :drLee") after the decision ran.
    path, _ = edited(tmp_path, LAB, "horis:focusType :LabResult ;",
                     "horis:focusType :Clinician ;")
    found = problems(path, LAB)
    assert [(p.severity, p.node) for p in found] == [("warning", ":Escalate"),
                                                     ("warning", ":File")]
    assert 'gives argument "result" of :lab.escalate (a :LabResult) from ?this' in found[0].message
    assert found[0].hint is not None and "horis:focusType :LabResult" in found[0].hint
    assert found[0].line is not None  # at the step's horis:bind of the argument
    line = path.read_text().splitlines()[found[0].line - 1]
    assert line.strip().startswith('horis:bind [ horis:arg "result"')


@pytest.mark.parametrize(("old", "new", "said", "hint"), [
    # a nurse's property read of the patient: the step blocked every patient
    ("?this :queueRef ?ref .", "?this :queueRef ?ref ; :onDuty true .",
     "horis:requires reads :onDuty of ?this, but :onDuty has rdfs:domain :Nurse",
     "read a property of :Patient"),
    # the patient as the nurse a patient was given
    ("?this :queueRef ?ref .", "?this :queueRef ?ref . ?p :assignedNurse ?this .",
     "horis:requires reads :assignedNurse pointing at ?this, but :assignedNurse has "
     "rdfs:range :Nurse", "read a property of :Patient"),
])
def test_a_property_of_another_class_than_the_focus_read_of_this_is_a_warning_at_its_line(
        tmp_path: Path, old: str, new: str, said: str, hint: str) -> None:
    """It validated; the pattern never held for a patient, so every instance was blocked (a
    decision rule's, never taken: every instance went down the other branch, its tools
    called), and nothing had said why."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line, p.node) == (str(path), line, ":NotifyNurse")
    assert p.message.startswith(said)
    assert p.message.endswith(":Triage runs for nodes of :Patient (its horis:focusType): unless "
                              "a node is both, that part of the pattern never matches")
    assert p.hint is not None and p.hint.startswith(hint)


def test_a_step_of_another_workflow_reached_with_another_focus_is_a_warning(
        tmp_path: Path) -> None:
    # Triage sent on to the lab's :File: after both ehr tools acted for :patient42, :File was
    # refused ("argument result must be a node of class :LabResult; the graph gives
    # :patient42"), and validate had said valid.
    bind = '    horis:bind [ horis:arg "patient" ; horis:var "this" ] '
    path, _ = edited(tmp_path, TRIAGE, bind + ".",
                     bind + ";\n    horis:next <http://example.org/lab#File> .")
    defs = load_definitions([path, TRIAGE[1], *LAB])
    w = the_one(defs.warnings, "warning")
    # at the horis:next that crosses over, the mistake, not at :File's right horis:bind
    assert w.file == str(path) and w.line is not None
    assert "horis:next <http://example.org/lab#File>" in path.read_text().splitlines()[w.line - 1]
    assert "runs for nodes of" in w.message and "Patient" in w.message
    assert w.hint is not None and w.hint.startswith("point horis:next at a step of :Triage")


def test_a_focus_type_defined_by_a_class_expression_is_a_warning_naming_owl_rl(
        tmp_path: Path) -> None:
    # :HighResult ≡ results interpreted :High. Under the default rdfs entailment `run --all`
    # found no node of it and exited 0 with nothing done; validate instead warned that the
    # steps' :LabResult arguments were unrelated, hinting to run on every result.
    ontology = tmp_path / "lab.ttl"
    ontology.write_text(LAB[1].read_text(encoding="utf-8") + """
:Interpretation a owl:Class .
:High a :Interpretation .
:interpretation a owl:ObjectProperty ; rdfs:domain :LabResult ; rdfs:range :Interpretation .
:HighResult a owl:Class ;
    owl:equivalentClass [ a owl:Restriction ; owl:onProperty :interpretation ;
                          owl:hasValue :High ] .
""", encoding="utf-8")
    path, line = edited(tmp_path, LAB, "horis:focusType :LabResult ;",
                        "horis:focusType :HighResult ;")
    w = the_one(problems(path, LAB, ontology), "warning")
    assert (w.line, w.node) == (line, ":ReviewResult")
    assert "defined by an OWL class expression" in w.message
    assert w.hint is not None and w.hint.startswith("run with --entailment owl-rl")


@pytest.mark.parametrize(("written", "hint"), [
    ("<http://example.org/ehr/acuity>",
     "did you mean :acuity (in <http://example.org/ehr#>, not <http://example.org/ehr/>)?"),
    ("<https://example.org/ehr#acuity>",
     "did you mean :acuity (in <http://example.org/ehr#>, not <https://example.org/ehr#>)?"),
    ("<acuity>", "did you mean :acuity? <acuity> is a relative IRI"),
])
def test_a_term_of_another_namespace_names_the_one_declared_with_its_local_name(
        tmp_path: Path, written: str, hint: str) -> None:
    """A slash for the hash, https for http: the warning said "declare it in the ontology",
    the fix the modeler least needed, while the ontology declares :acuity."""
    path, line = edited(tmp_path, TRIAGE, "?this :acuity ?queue .", f"?this {written} ?queue .")
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.line, p.node) == (line, ":QueuePatient")
    assert p.hint == hint


@pytest.mark.parametrize("written", [":destination ?option", "a :Airport"])
def test_candidates_of_a_class_the_next_steps_argument_does_not_take_are_a_warning(
        tmp_path: Path, written: str) -> None:
    """The flight's destination (an :Airport) offered for a :Flight: the model chose :JFK and
    the rebooking tool's argument check refused it, on every instance."""
    old = "?option a :Flight ; :status :Scheduled ; :destination ?dest ; :seatsLeft ?seats ."
    new = "?f a :Flight ; :status :Scheduled ; :destination ?dest ; :seatsLeft ?seats ."
    new += " ?f :destination ?option ." if written.startswith(":") else " ?option a :Airport ."
    path, line = edited(tmp_path, REBOOKING, old, new)
    path.write_text(path.read_text().replace("?option != ?old", "?f != ?old"))
    p = the_one(problems(path, REBOOKING), "warning")
    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight"), p
    assert p.message.startswith("the horis:candidates query gives nodes of :Airport as ?option, "
                                "but horis:next :RebookOnProposal gives ?option to argument "
                                '"flight" of :airline.rebook, which takes a :Flight'), p.message
    assert p.hint == "have the candidates query give nodes of :Flight as ?option"


@pytest.mark.parametrize("written", ["?this :acuity ?nurse .", "?nurse a :AcuityLevel ."])
def test_an_argument_given_a_node_of_an_unrelated_class_is_a_warning(
        tmp_path: Path, written: str) -> None:
    """?nurse bound to the patient's acuity level: the patient was queued, then paging the
    "nurse" :urgent was refused ("must be a node of class :Nurse"), on every patient."""
    path, line = edited(tmp_path, TRIAGE, "?nurse a :Nurse ; :onDuty true .", written)
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line, p.node) == (str(path), line, ":NotifyNurse"), p
    assert p.message.startswith('horis:requires binds ?nurse to nodes of :AcuityLevel, but it '
                                'gives argument "nurse" of :ehr.notify_nurse, which takes a '
                                ":Nurse"), p.message
    assert p.hint is not None and p.hint.startswith("bind ?nurse to a :Nurse in the pattern")


def test_a_class_only_a_minus_names_says_nothing_of_the_argument(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, "?nurse a :Nurse ; :onDuty true .",
                     "?nurse :onDuty true . MINUS { ?nurse a :Patient }")
    assert problems(path, TRIAGE) == []


@pytest.mark.parametrize(("typ", "warned"), [
    ("xsd:integer", True), ("xsd:dateTime", True),
    # it derives from string, but the call takes exactly its datatype, and assign_queue's
    # effect writes :queueRef as xsd:string: every page was refused
    # (tests/test_authoring_arg_datatypes.py)
    ("xsd:normalizedString", True),
    ("rdfs:Literal", False),
])
def test_an_argument_given_a_value_of_another_datatype_is_a_warning(
        tmp_path: Path, typ: str, warned: bool) -> None:
    """"ref" declared xsd:integer, given :queueRef (an xsd:string): the patient was queued,
    then the page was refused ("must be a literal of datatype xsd:integer") every time."""
    path, _ = edited(tmp_path, TRIAGE, 'horis:name "ref"     ; horis:type xsd:string',
                     f'horis:name "ref"     ; horis:type {typ}')
    found = problems(path, TRIAGE)
    if not warned:
        assert found == []
        return
    p = the_one(found, "warning")
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if ":queueRef ?ref" in x)
    assert (p.line, p.node) == (line, ":NotifyNurse"), p
    assert p.message.startswith("horis:requires binds ?ref to a value of :queueRef, whose "
                                'rdfs:range is xsd:string, but it gives argument "ref" of '
                                f":ehr.notify_nurse, which takes a literal of {typ}"), p.message
    assert p.hint is not None and p.hint.startswith('declare "ref" horis:type xsd:string')


_OVERLAPPING = (
    ":onDuty a owl:DatatypeProperty ;",
    ":Triager a owl:Class ; rdfs:subClassOf :Person .\n"
    ":HeadNurse a owl:Class ; rdfs:subClassOf :Nurse .\n"
    ":caredBy a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Person .\n"
    ":onDuty a owl:DatatypeProperty ;",
)


def test_a_class_under_two_ranges_keeps_its_individuals_for_both(tmp_path: Path) -> None:
    """:Nurse is of the range of :assignedNurse and of :caredBy's (:Person): it was kept for
    one of them, chosen by the hash seed, so :okafr for :okafor was said in some runs only
    (review)."""
    from horismos._world_individuals import IndividualsSeen

    onto, _ = ontology_edited(tmp_path, *_OVERLAPPING)
    seen = IndividualsSeen.of(load_definitions([TRIAGE[0], onto]))
    ehr = "http://example.org/ehr#"
    nurse = next(c for c in seen.watched if c.value == ehr + "Nurse")
    assert seen.watched[nurse] == {URIRef(ehr + "Nurse"), URIRef(ehr + "Person")}
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":okafor a :HeadNurse ; :onDuty true .\n"
        ":ruiz a :Nurse ; :onDuty false .\n"
        ":patient42 a :Patient ; :assignedNurse :okafr .\n", encoding="utf-8")
    for seed in ("0", "2", "5", "7"):
        p = horismos_forked(".", "validate", str(TRIAGE[0]), str(onto), "--world", str(world),
                            "--store", "memory", env={**os.environ, "PYTHONHASHSEED": seed},
                            timeout=120)
        said = [x for x in p.stdout.splitlines() if ":okafr" in x]
        assert len(said) == 1 and "did you mean :okafor?" in said[0], (seed, p.stdout)


def test_a_warning_on_a_blank_node_two_subjects_hold_is_placed_at_the_named_one(tmp_path):
    """A property shape written as a blank node that a manifest's expected result also names
    (``sh:sourceShape``, as the W3C suite's files do) was placed at whichever holder the
    graph's hash order met first: at the shape's line in some runs, at the file in others."""
    shapes = tmp_path / "shapes.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix ex: <http://example.org/ex#> .\n"
        "ex:report sh:result [ sh:sourceShape _:works ] .\n"
        "ex:PersonShape a sh:NodeShape ;\n"
        "    sh:property _:works .\n"
        "_:works sh:path ex:worksFor ;\n"
        "    sh:class ex:Company .\n", encoding="utf-8")
    placed = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        p = horismos_forked(".", "validate", str(shapes),
                            env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120)
        placed |= {line.split(" is declared")[0] for line in p.stdout.splitlines()
                   if "ex:Company" in line}
    assert placed == {f"{shapes}:5: warning: ex:PersonShape: sh:class ex:Company"}


def test_a_misspelt_term_written_twice_is_said_at_its_first_line_in_every_process(
        tmp_path: Path) -> None:
    """A misspelt horis: term is said once, at the statement where the graph's iteration met
    it first: an order set by the process's hash seed, so two runs of validate on one file
    named different lines (and, where another check spoke at the one line, different
    errors). It is said at the line written first now, whatever the seed."""
    text = TRIAGE[0].read_text(encoding="utf-8").replace("horis:idempotent", "horis:idempotnt")
    path = tmp_path / "triage.ttl"
    path.write_text(text, encoding="utf-8")
    first = 1 + text[: text.index("horis:idempotnt")].count("\n")
    said = set()
    for seed in ("1", "2", "3", "4"):
        p = horismos_forked(tmp_path, "validate", str(path), str(TRIAGE[1]),
                            env=os.environ | {"PYTHONHASHSEED": seed}, timeout=120)
        assert p.returncode == 1, p.stdout + p.stderr
        said.add(p.stdout)
    (out,) = said
    assert f"triage.ttl:{first}: error:" in out and "horis:idempotnt is not a Horismos term" \
        in out, out
    assert out.count("horis:idempotnt is not a Horismos term") == 1, out
