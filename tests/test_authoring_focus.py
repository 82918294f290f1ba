"""Patterns that are about no instance in particular, caught before anything runs.

Each mistake was made in a copy of a shipped workflow and passed ``horismos validate``; what
the run then did is said in each test. A pattern is tried with ?this bound to the instance's
focus: one that never names it (nor reaches it through an argument given from ?this) holds,
and binds its variables, for any match in the world.
"""

from __future__ import annotations

from pathlib import Path

from workflow_edits import LAB, REBOOKING, TRIAGE, edited, problems, the_error, the_one


def test_a_decision_rule_that_never_names_this_is_a_warning(tmp_path: Path) -> None:
    # Every result took rule 1 as soon as any result in the world was critical: a normal
    # 4.1 paged the on-call doctor, and the run exited 0.
    path, line = edited(tmp_path, LAB, '""" ?this :value ?v ; a ?kind .',
                        '""" ?result :value ?v ; a ?kind .')
    w = the_one(problems(path, LAB), "warning")
    assert (w.line, w.node) == (line, ":IsCritical")
    assert "never names ?this" in w.message and "rule" in w.message
    assert w.hint is not None and "write ?this where ?result stands" in w.hint


def test_an_action_steps_pattern_that_never_names_this_is_a_warning(tmp_path: Path) -> None:
    # With another patient already queued, :patient42's step failed "2 solutions for the
    # arguments", naming the other patient's queue entry, after assign_queue had acted.
    path, line = edited(
        tmp_path, TRIAGE,
        '''    horis:requires """ ?this :queueRef ?ref .
                       ?nurse a :Nurse ; :onDuty true .
                       FILTER NOT EXISTS { ?this :assignedNurse ?n } """ ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .''',
        '''    horis:requires """ ?patient :queueRef ?ref .
                       ?nurse a :Nurse ; :onDuty true .
                       FILTER NOT EXISTS { ?patient :assignedNurse ?n } """ .''')
    w = the_one(problems(path, TRIAGE), "warning")
    assert (w.line, w.node) == (line, ":NotifyNurse")
    assert "never names ?this" in w.message and "?patient" in w.message


def test_a_pattern_variable_named_as_an_argument_given_from_this_is_a_warning(
        tmp_path: Path) -> None:
    # `patient` comes from ?this, but the pattern's ?patient was any queued patient: the
    # nurse was paged with another patient's queue reference, or the step failed with two.
    path, line = edited(tmp_path, TRIAGE, '''    horis:requires """ ?this :queueRef ?ref .''',
                        '''    horis:requires """ ?patient :queueRef ?ref .''')
    w = the_one(problems(path, TRIAGE), "warning")
    assert (w.line, w.node) == (line, ":NotifyNurse")
    assert 'horis:bind gives argument "patient" from ?this' in w.message
    assert w.hint == "write ?this for ?patient in the pattern"


def test_a_candidates_query_that_never_names_this_is_a_warning(tmp_path: Path) -> None:
    # A Boston passenger was offered, and rebooked onto, a New York flight: the options were
    # every scheduled flight to wherever any cancelled flight went.
    path, line = edited(tmp_path, REBOOKING, "        ?this :flight ?old .",
                        "        ?booking :flight ?old .")
    w = the_one(problems(path, REBOOKING), "warning")
    assert (w.line, w.node) == (line, ":ProposeFlight")
    assert "candidates query never names ?this" in w.message


def test_this_in_a_tools_own_requires_is_an_error(tmp_path: Path) -> None:
    # A tool's horis:requires sees its arguments; ?this there was bound to nothing and
    # matched any node, so an "urgent only" guard let a routine patient through.
    path, line = edited(tmp_path, TRIAGE, '    horis:binding "python:ehr_client.assign_queue" ;',
                        '    horis:requires "?this :acuity :urgent ." ;\n'
                        '    horis:binding "python:ehr_client.assign_queue" ;')
    e = the_error(problems(path, TRIAGE))
    assert (e.line, e.node) == (line, ":ehr.assign_queue")
    assert "sees its arguments, not ?this" in e.message
    assert e.hint is not None and "(?patient, ?queue)" in e.hint
    # the same guard about the argument is what was meant, and is valid
    path, _ = edited(tmp_path, TRIAGE, '    horis:binding "python:ehr_client.assign_queue" ;',
                     '    horis:requires "?patient :acuity :urgent ." ;\n'
                     '    horis:binding "python:ehr_client.assign_queue" ;')
    assert problems(path, TRIAGE) == []


def test_the_shipped_workflows_are_about_their_focus() -> None:
    # :Escalate picks any on-call clinician (no ?this in its pattern) for the result it is
    # given from ?this: about the focus, and not warned of.
    for pair in (TRIAGE, LAB, REBOOKING):
        assert problems(pair[0], pair) == []


def test_an_argument_given_a_value_of_the_other_kind_is_an_error(tmp_path: Path) -> None:
    # The nurse given ?ref, the object of the DatatypeProperty :queueRef: "argument nurse
    # must be a node of class :Nurse; the graph gives "Q-URGENT-1"", after assign_queue acted.
    nurse = '    horis:bind [ horis:arg "patient" ; horis:var "this" ] .'
    path, line = edited(tmp_path, TRIAGE, nurse,
                        nurse[:-1] + ', [ horis:arg "nurse" ; horis:var "ref" ] .')
    e = the_error(problems(path, TRIAGE))
    assert (e.line, e.node) == (line, ":NotifyNurse")
    assert 'argument "nurse" of :ehr.notify_nurse takes a node (of class :Nurse)' in e.message
    assert "?ref is a literal" in e.message
    # a string argument given the focus, a node
    path, line = edited(tmp_path, TRIAGE, nurse,
                        nurse[:-1] + ', [ horis:arg "ref" ; horis:var "this" ] .')
    e = the_error(problems(path, TRIAGE))
    assert 'argument "ref" of :ehr.notify_nurse takes a literal (of xsd:string)' in e.message
    assert "?this is the instance's focus, a node" in e.message


def test_a_for_each_step_writing_one_valued_properties_on_its_focus_is_a_warning(
        tmp_path: Path) -> None:
    # Two nurses on duty, horis:forEach true: both were paged, and the patient ended with two
    # :assignedNurse, which the effect declares single-valued (each call judged alone).
    bind = '    horis:bind [ horis:arg "patient" ; horis:var "this" ] '
    path, line = edited(tmp_path, TRIAGE, bind + ".", bind + ";\n    horis:forEach true .")
    w = the_one(problems(path, TRIAGE), "warning")
    assert (w.line, w.node) == (line + 1, ":NotifyNurse")
    assert "every call writes :assignedNurse on the focus" in w.message
    assert w.hint is not None and w.hint.startswith("declare horis:many true on :assignedNurse")


def test_a_candidates_select_that_does_not_give_the_option_is_an_error(tmp_path: Path) -> None:
    # SELECT ?old ?flight with horis:as left at "option": every booking went to the operator
    # with "no candidates", and an answer naming a flight to another city was then accepted.
    query = 'horis:candidates [ horis:query """'
    path, line = edited(tmp_path, REBOOKING, query + "\n        ?this :flight ?old .",
                        query + "SELECT ?old ?option2 WHERE {\n        ?this :flight ?old .")
    text = path.read_text().replace("FILTER (?seats > 0 && ?option != ?old)\"\"\"",
                                    "FILTER (?seats > 0 && ?option != ?old) BIND(?option AS "
                                    "?option2) }\"\"\"")
    path.write_text(text)
    e = the_error(problems(path, REBOOKING))
    assert (e.line, e.node) == (line, ":ProposeFlight")
    assert "SELECT gives ?old, ?option2, not ?option" in e.message


def test_a_fallback_without_a_confidence_is_a_warning(tmp_path: Path) -> None:
    # With no horis:confidence the step acted on a ranking of confidence 0 and rebooked the
    # passenger; the operator the fallback named was never asked.
    path, _ = edited(tmp_path, REBOOKING, "    horis:confidence 0.7 ;\n", "")
    w = the_one(problems(path, REBOOKING), "warning")
    assert w.node == ":ProposeFlight" and "but no horis:confidence" in w.message
    assert "horis:fallback" in path.read_text().splitlines()[(w.line or 0) - 1]


def test_a_misspelt_argument_in_a_tools_own_requires_is_a_warning(tmp_path: Path) -> None:
    # "?nures :onDuty true ." held for any on-duty node: `tools call` paged an off-duty nurse.
    path, line = edited(tmp_path, TRIAGE, '    horis:binding "python:ehr_client.notify_nurse" ;',
                        '    horis:requires "?nures :onDuty true ." ;\n'
                        '    horis:binding "python:ehr_client.notify_nurse" ;')
    w = the_one(problems(path, TRIAGE), "warning")
    assert (w.line, w.node) == (line, ":ehr.notify_nurse")
    assert "?nures, which is no argument of the tool" in w.message
    assert w.hint == "did you mean ?nurse?"


def test_a_confidence_that_lets_the_offline_rankers_tie_through_is_a_warning(
        tmp_path: Path) -> None:
    # horis:confidence 0.5 with lexical:bm25: Brian's wish fits two flights equally (0.5),
    # and he was rebooked onto the first by IRI instead of going to the operator.
    path, line = edited(tmp_path, REBOOKING, "    horis:confidence 0.7 ;",
                        "    horis:confidence 0.5 ;")
    w = the_one(problems(path, REBOOKING), "warning")
    assert (w.line, w.node) == (line, ":ProposeFlight")
    assert "lets a tie through" in w.message
    assert w.hint == "write horis:confidence above 0.5 (0.6, say), so a tie goes to :AskOperator"


def test_a_for_each_items_variable_given_from_this_is_told_to_bind_the_item(
        tmp_path: Path) -> None:
    # A forEach over a return's line items with `horis:bind [ horis:arg "line" ; horis:var
    # "this" ]` was told "write ?this for ?line in the pattern": the pattern then had no item,
    # and every call was given the return itself. The bind is what is wrong.
    path, line = edited(
        tmp_path, TRIAGE,
        '''    horis:requires """ ?this :queueRef ?ref .''',
        '''    horis:forEach true ;\n    horis:requires """ ?patient :queueRef ?ref .''')
    (w,) = [p for p in problems(path, TRIAGE) if "horis:bind gives argument" in p.message]
    assert (w.line, w.node) == (line + 1, ":NotifyNurse")
    assert w.hint == ('give "patient" from ?patient: horis:bind [ horis:arg "patient" ; '
                      'horis:var "patient" ] (a horis:forEach step calls its tool once per '
                      "?patient; from ?this, every call is given the focus)"), w.hint
