"""Three domains written from the docs alone, as a modeler new to Horismos writes them —
insurance claims (a proposal ranking adjusters, waits for a supervisor and for documents, a
decision on amounts), a warehouse (a forEach over order lines on an MCP tool, an HTTP tool, a
second workflow) and freezer alarms (subclassed focus, onError, a wait that times out into an
escalation). Each must validate clean and run; then one mistake at a time is made in one of
its files, and must be caught at that file and line with what to write instead."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Literal, URIRef

from horismos import Agent, AuthoringError, Problem, UsageError, World, load_definitions
from horismos._contract import unbound_arguments
from horismos._timeouts import parse_timeout

HERE = Path(__file__).resolve().parent / "fixtures" / "modeler"
CLAIMS = HERE / "claims"
WAREHOUSE = HERE / "warehouse"
IOT = HERE / "iot"
DEFINITIONS = {
    CLAIMS: ("ontology.ttl", "tools.ttl", "workflow.ttl"),
    WAREHOUSE: ("ontology.ttl", "tools.ttl", "workflow.ttl", "returns.ttl"),
    IOT: ("domain.ttl", "flow.ttl"),
}


def found(folder: Path) -> list[Problem]:
    """Every error and warning the definitions of ``folder`` give, as ``validate`` finds them."""
    try:
        return list(load_definitions([folder / f for f in DEFINITIONS[folder.parent / folder.name]
                                      if (folder / f).exists()]).warnings)
    except AuthoringError as e:
        return list(e.problems)


def edited(tmp_path: Path, domain: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    """A copy of ``domain`` whose file ``name`` has its one ``old`` replaced by ``new``; the
    copy's folder and the line ``old`` was on."""
    folder = tmp_path / domain.name
    shutil.copytree(domain, folder)
    text = (folder / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not written once in {name}"
    (folder / name).write_text(text.replace(old, new), encoding="utf-8")
    return folder, text[: text.index(old)].count("\n") + 1


def found_in(folder: Path, domain: Path) -> list[Problem]:
    try:
        return list(load_definitions([folder / f for f in DEFINITIONS[domain]]).warnings)
    except AuthoringError as e:
        return list(e.problems)


def the_one(problems: list[Problem], severity: str) -> Problem:
    assert len(problems) == 1 and problems[0].severity == severity, "\n".join(map(str, problems))
    return problems[0]


@pytest.mark.parametrize("domain", [CLAIMS, WAREHOUSE, IOT], ids=lambda d: d.name)
def test_each_domain_as_written_validates_clean(domain: Path) -> None:
    assert found(domain) == []


def test_the_claims_domain_runs_with_the_proposal_and_the_supervisors_pick() -> None:
    # The two warnings validate gave of this model were false: the proposal's choice reached
    # :AssignAdjuster (adjuster=:alice), and the supervisor's pick reached :AssignPicked.
    import importlib.util

    spec = importlib.util.spec_from_file_location("claims_client", CLAIMS / "claims_client.py")
    assert spec is not None and spec.loader is not None
    client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client)
    tools = {f"claims_client.{n}": getattr(client, n)
             for n in ("assign_adjuster", "request_documents", "pay", "reject")}
    agent = Agent.from_files(*(CLAIMS / f for f in DEFINITIONS[CLAIMS]), tools=tools)
    world = World.from_files(CLAIMS / "world.ttl")
    run = agent.run(world, workflow=":HandleClaim", focus=":claim1")
    assert run.status == "completed"
    assigned = [r for r in run.steps if r.step.endswith("AssignAdjuster")]
    assert [str(a["adjuster"]) for a in assigned[0].args] == ["<http://example.org/claims#alice>"]
    run = agent.run(world, workflow=":HandleClaim", focus=":claim2")
    assert run.status == "waiting"
    run = agent.resume(world, run.instance, facts=":claim2 :supervisorPick :bob .")
    picked = [r for r in run.steps if r.step.endswith("AssignPicked")]
    assert [str(a["adjuster"]) for a in picked[0].args] == ["<http://example.org/claims#bob>"]


def test_a_second_run_of_a_rejected_claim_does_not_reject_it_again() -> None:
    # :RejectOverLimit had no guard: a second run of :claim2 (over its policy's limit) told
    # the claimant again that it was rejected. Its horis:requires now asks that it was not
    # rejected already; the reminder for documents says horis:eachRun true, and is sent again
    import importlib.util

    spec = importlib.util.spec_from_file_location("claims_client", CLAIMS / "claims_client.py")
    assert spec is not None and spec.loader is not None
    client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client)
    calls: list[str] = []

    def counted(name: str) -> Callable[..., Any]:
        def call(**kwargs: Any) -> Any:
            calls.append(name)
            return getattr(client, name)(**kwargs)
        return call

    tools = {f"claims_client.{n}": counted(n)
             for n in ("assign_adjuster", "request_documents", "pay", "reject")}
    agent = Agent.from_files(*(CLAIMS / f for f in DEFINITIONS[CLAIMS]), tools=tools)
    world = World.from_files(CLAIMS / "world.ttl")
    run = agent.run(world, workflow=":HandleClaim", focus=":claim2")
    run = agent.resume(world, run.instance, facts=":claim2 :supervisorPick :bob .")
    run = agent.resume(world, run.instance, facts=":claim2 :documentsReceived true .")
    assert run.status == "completed", run.error
    assert calls == ["assign_adjuster", "request_documents", "reject"]
    again = agent.run(world, workflow=":HandleClaim", focus=":claim2")
    assert again.status == "blocked" and again.steps[-1].step.endswith("RejectOverLimit")
    assert calls.count("reject") == 1 and calls.count("request_documents") == 2, calls


# -- proposals --------------------------------------------------------------------------------


def test_a_next_step_given_the_choice_by_its_arguments_name_is_no_warning(tmp_path: Path) -> None:
    # :AssignAdjuster's tool takes "adjuster" and the proposal binds ?adjuster (horis:as):
    # the argument is given by the variable of its name, as the runner gives it. validate
    # warned "never reads ?adjuster … the choice is dropped" of this correct model.
    assert not [p for p in found(CLAIMS) if "never reads" in p.message]
    # bound to another variable, the choice is dropped: still a warning
    folder, _ = edited(
        tmp_path, CLAIMS, "workflow.ttl",
        ':AssignAdjuster a horis:ActionStep ;\n    horis:tool :claims.assign_adjuster ;\n'
        '    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;',
        ':AssignAdjuster a horis:ActionStep ;\n    horis:tool :claims.assign_adjuster ;\n'
        '    horis:requires "?a a :Adjuster ." ;\n'
        '    horis:bind [ horis:arg "claim" ; horis:var "this" ] , '
        '[ horis:arg "adjuster" ; horis:var "a" ] ;')
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.node == ":PickAdjuster" and "never reads ?adjuster" in w.message


def test_a_step_reading_the_supervisors_answer_after_the_fallback_is_no_warning(
        tmp_path: Path) -> None:
    # On the fallback :AskSupervisor waits until `?this :supervisorPick ?adjuster`, and
    # :AssignPicked reads ?adjuster through that same triple: the person's pick. validate
    # warned that the tool "acts on an option neither the model nor a person chose".
    assert not [p for p in found(CLAIMS) if "neither the model nor a person" in p.message]
    # a step that binds ?adjuster to any adjuster is still warned of
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl",
                       'horis:requires "?this :supervisorPick ?adjuster ." ;',
                       'horis:requires "?adjuster a :Adjuster ; :available true ." ;')
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert "leads on to :AssignPicked, which reads ?adjuster" in w.message


@pytest.mark.parametrize("old, new", [
    # the proposal's choice given from a misspelt variable: "never reads ?adjuster, the
    # choice is dropped" was said beside the error, of a step that does mean to read it
    (':AssignAdjuster a horis:ActionStep ;\n    horis:tool :claims.assign_adjuster ;\n'
     '    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;',
     ':AssignAdjuster a horis:ActionStep ;\n    horis:tool :claims.assign_adjuster ;\n'
     '    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;\n'
     '    horis:bind [ horis:arg "adjuster" ; horis:var "adjustr" ] ;'),
    # the supervisor's pick, read by the pattern, given from a misspelt variable: a warning
    # told to "write ?adjustr for ?adjuster in the pattern", copying the slip
    ('    horis:requires "?this :supervisorPick ?adjuster ." ;\n'
     '    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;',
     '    horis:requires "?this :supervisorPick ?adjuster ." ;\n'
     '    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;\n'
     '    horis:bind [ horis:arg "adjuster" ; horis:var "adjustr" ] ;'),
])
def test_an_argument_given_a_misspelt_variable_is_said_once_with_the_variable_meant(
        tmp_path: Path, old: str, new: str) -> None:
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl", old, new)
    p = the_one(found_in(folder, CLAIMS) + _after_load(folder), "error")
    assert "horis:bind names ?adjustr, which nothing binds" in p.message
    assert p.hint is not None and p.hint.startswith("did you mean ?adjuster?")


def test_a_proposal_whose_as_names_no_candidate_is_said_once_not_again_at_the_next_step(
        tmp_path: Path) -> None:
    # horis:as "adj" where the candidates bind ?adjuster: beside the proposal's error, the
    # next step's "adjuster" argument was "required, but … did you mean ?adj?", a consequence
    # pointing at the slip's copy
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", 'horis:as "adjuster" ;',
                          'horis:as "adj" ;')
    p = the_one(found_in(folder, CLAIMS) + _after_load(folder), "error")
    assert (p.node, p.line) == (":PickAdjuster", line - 6) and "never binds ?adj," in p.message
    assert p.hint is not None and "it binds ?adjuster" in p.hint


def _after_load(folder: Path) -> list[Problem]:
    """The errors found once the definitions of ``folder`` (the claims domain) have loaded:
    the arguments nothing binds, in what the load made of them when it failed too."""
    try:
        defs = load_definitions([folder / f for f in DEFINITIONS[CLAIMS]])
    except AuthoringError as e:
        assert e.definitions is not None
        defs = e.definitions
    return unbound_arguments(defs)


def test_a_next_to_another_workflows_first_step_says_no_term_chains_workflows(
        tmp_path: Path) -> None:
    # :RejectNoDocs sent on to :RequestAgain, the start of :Reopen: most likely meant to start
    # :Reopen, which no term does; the step ran as one of :HandleClaim's, without a word
    reopen = ("\n:Reopen a horis:Workflow ;\n    horis:focusType :Claim ;\n"
              "    horis:start :RequestAgain .\n\n"
              ":RequestAgain a horis:ActionStep ;\n    horis:tool :claims.request_documents ;\n"
              "    horis:eachRun true ;\n"
              '    horis:bind [ horis:arg "claim" ; horis:var "this" ] .\n')
    old = ('    horis:requires """ BIND("no documents within 14 days" AS ?reason) '
           'FILTER NOT EXISTS { ?this :rejectionReason ?x } """ ;\n'
           '    horis:bind [ horis:arg "claim" ; horis:var "this" ] .\n')
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", old,
                          old[:-3] + ";\n    horis:next :RequestAgain .\n" + reopen)
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert (w.file, w.line, w.node) == (str(folder / "workflow.ttl"), line + 2, ":RejectNoDocs")
    assert w.message.startswith("horis:next :RequestAgain goes to the first step of another "
                                "workflow, :Reopen: no :Reopen instance is started here")
    assert w.hint is not None and "no horis: term starts another workflow" in w.hint
    assert "run --workflow :Reopen" in w.hint


# -- two workflows ----------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, node, written", [
    (":ShipStandard a horis:ActionStep ;",
     ":ShipStandard a horis:ActionStep ; horis:next :Restock ;", ":ShipStandard",
     "horis:next :Restock"),
    ("horis:next :ShipExpress ]", "horis:next :Restock ]", ":ChooseCarrier",
     "horis:next :Restock ]"),
    ("horis:start :ReserveLines .", "horis:start :Restock .", ":Fulfil", "horis:start :Restock"),
])
def test_a_flow_into_another_workflows_step_is_warned_of_where_it_crosses(
        tmp_path: Path, old: str, new: str, node: str, written: str) -> None:
    # :Fulfil (orders) sent on to :Restock of :HandleReturn (order lines). The warning was at
    # returns.ttl, at :Restock's horis:bind — right for its own workflow — and its hint "send
    # :Fulfil to a step of its own" left the modeler to find which of :Fulfil's steps did.
    folder, _ = edited(tmp_path, WAREHOUSE, "workflow.ttl", old, new)
    w = [p for p in found_in(folder, WAREHOUSE) if "unreachable" not in p.message]
    w0 = the_one(w, "warning")
    assert w0.file == str(folder / "workflow.ttl") and w0.node == node
    assert w0.line is not None and written in (folder / "workflow.ttl").read_text(
        encoding="utf-8").splitlines()[w0.line - 1]
    assert "into a step of :HandleReturn" in w0.message and ":Order" in w0.message
    assert w0.hint is not None and w0.hint.endswith("at a step of :Fulfil's own")


def test_a_flow_crossing_into_another_workflow_twice_is_warned_of_once_at_its_first_edge(
        tmp_path: Path) -> None:
    # :ChooseCarrier's rules go on to both steps of a two-step :HandleReturn, each giving ?this
    # as an order line: one warning for :Fulfil, at the edge of its first step (by IRI) that
    # leaves, to the step of theirs first by IRI; not one per step of theirs it reaches. The
    # edge is found among the step's ways out, not by trying every pair of steps.
    rules = ("horis:next :ShipExpress ] ,\n"
             '    [ horis:order 2 ; horis:requires "?this :priority false ." ;\n'
             "      horis:next :Restock2 ] ,\n"
             '    [ horis:order 3 ; horis:requires "?this :weightKg ?w ." ;\n'
             "      horis:next :Restock ] ;")
    folder, _ = edited(tmp_path, WAREHOUSE, "workflow.ttl", "horis:next :ShipExpress ] ;", rules)
    returns = folder / "returns.ttl"
    returns.write_text(returns.read_text(encoding="utf-8").replace(
        "horis:tool :returns.restock ;", "horis:tool :returns.restock ; horis:next :Restock2 ;")
        + "\n:Restock2 a horis:ActionStep ;\n    horis:tool :returns.restock ;\n"
        '    horis:bind [ horis:arg "line" ; horis:var "this" ] .\n', encoding="utf-8")
    w0 = the_one(found_in(folder, WAREHOUSE), "warning")
    assert w0.file == str(folder / "workflow.ttl") and w0.node == ":ChooseCarrier", str(w0)
    assert w0.line is not None and "horis:next :Restock ]" in (
        folder / "workflow.ttl").read_text(encoding="utf-8").splitlines()[w0.line - 1], str(w0)
    assert w0.message.startswith("horis:next :Restock leads :Fulfil into a step of "
                                 ":HandleReturn"), str(w0)


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, meant", [
    ("horis:otherwise :SeniorReview", "horis:otherwise :SenorReview", ":SeniorReview"),
    ("horis:onTimeout :RejectNoDocs", "horis:onTimeout :RejectNoDoc", ":RejectNoDocs"),
    ("horis:tool :claims.pay ;", "horis:tool :claims.payy ;", ":claims.pay"),
])
def test_a_misspelt_step_or_tool_gets_the_name_meant(
        tmp_path: Path, old: str, new: str, meant: str) -> None:
    # The hint listed the first eight steps in alphabetical order: :SeniorReview, the one
    # meant, was cut off ("…").
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", old, new)
    e = the_one([p for p in found_in(folder, CLAIMS) if p.severity == "error"], "error")
    assert e.line == line and e.file == str(folder / "workflow.ttl")
    assert e.hint is not None and e.hint.startswith(f"did you mean {meant}?")


# -- prefixes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, old, new, prefix", [
    ("tools.ttl", "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .",
     "@prefix xsd:   <http://www.w3.org/2001/XMLSchema> .", "xsd"),
    ("ontology.ttl", "@prefix owl:  <http://www.w3.org/2002/07/owl#> .",
     "@prefix owl:  <https://www.w3.org/2002/07/owl#> .", "owl"),
    ("ontology.ttl", "@prefix sh:   <http://www.w3.org/ns/shacl#> .",
     "@prefix sh:   <http://www.w3.org/ns/shacl/> .", "sh"),
])
def test_a_standard_prefix_bound_to_a_near_miss_is_an_error_at_its_line(
        tmp_path: Path, name: str, old: str, new: str, prefix: str) -> None:
    # `@prefix xsd: <…/XMLSchema>` (no #) was said to be "declared a second time in this
    # file", at no line — it was declared once — then every term followed as `xsd1:string`,
    # a prefix the file never wrote. An owl: or sh: over the wrong IRI said nothing at all:
    # `:ClaimShape a sh:NodeShape` was no shape, and the gate never checked it.
    folder, line = edited(tmp_path, CLAIMS, name, old, new)
    problems = found_in(folder, CLAIMS)
    at = [p for p in problems if p.file == str(folder / name) and p.line == line]
    assert len(at) == 1 and at[0].severity == "error", "\n".join(map(str, problems))
    assert f"the prefix {prefix}: is bound to <" in at[0].message
    assert "second time" not in "\n".join(map(str, problems))
    std = new.split("<")[1].split(">")[0]
    assert at[0].hint is not None and at[0].hint.startswith(f"write @prefix {prefix}: <")
    assert f"<{std}>" not in at[0].hint


@pytest.mark.parametrize("name", ["ontology.ttl", "tools.ttl"])
def test_what_follows_from_a_misbound_xsd_is_sent_back_to_its_line(
        tmp_path: Path, name: str) -> None:
    # Each range or horis:type the prefix made a class was its own error elsewhere, naming
    # xsd1:string (a prefix no file wrote) and hinting "write horis:type xsd1:string" or
    # "sh:datatype xsd:string in the shape" — what was written already.
    folder, line = edited(tmp_path, CLAIMS, name,
                          "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> ."
                          if name == "tools.ttl" else
                          "@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .",
                          "@prefix xsd: <http://www.w3.org/2001/XMLSchema> .")
    problems = found_in(folder, CLAIMS)
    said = "\n".join(map(str, problems))
    assert "xsd1" not in said, said
    follow = [p for p in problems if (p.file, p.line) != (str(folder / name), line)]
    assert len(follow) >= 2, said
    for p in follow:
        assert (p.hint or "").startswith(f"as {name}:{line} binds xsd:, xsd:"), str(p)
        assert (p.hint or "").endswith(
            "mend that @prefix (write @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .) "
            "first"), str(p)


def test_a_prefix_of_the_files_own_namespace_is_no_near_miss(tmp_path: Path) -> None:
    # a namespace that merely resembles a standard one in another scheme is still the file's
    sh = "@prefix sh:   <http://www.w3.org/ns/shacl#> ."
    folder, _ = edited(tmp_path, CLAIMS, "ontology.ttl", sh, sh + "\n"
                       "@prefix shx:  <http://example.org/shacl#> .")
    assert found_in(folder, CLAIMS) == []


def test_the_workflow_files_horis_prefix_misspelt_beside_the_tools_is_an_error(
        tmp_path: Path) -> None:
    # "4 tools, 0 workflows, 0 steps: valid (1 warning)", exit 0: the tools file declared
    # its tools, and every workflow and step was lost by the one prefix of workflow.ttl.
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl",
                          "@prefix horis: <https://w3id.org/horismos#> .",
                          "@prefix horis: <http://w3id.org/horismos#> .")
    e = the_one(found_in(folder, CLAIMS), "error")
    assert e.file == str(folder / "workflow.ttl") and e.line == line
    assert e.hint == "write @prefix horis: <https://w3id.org/horismos#> ."


# -- Turtle -----------------------------------------------------------------------------------


def test_a_long_string_opened_with_other_quotes_is_placed_where_it_opens(tmp_path: Path) -> None:
    # The candidates query opened with ''' and closed with """: the string runs to the end of
    # the file. The error was put at line 80, the last """ of the file, inside that string.
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl",
                          'horis:candidates [ horis:query """',
                          "horis:candidates [ horis:query '''")
    e = the_one(found_in(folder, CLAIMS), "error")
    assert e.file == str(folder / "workflow.ttl") and e.line == line
    assert "unterminated string" in e.message


# -- type tests -------------------------------------------------------------------------------


def test_a_type_test_that_names_the_subclass_too_is_no_warning(tmp_path: Path) -> None:
    # `{ ?adjuster a :Adjuster } UNION { ?adjuster a :Senior }` was warned to match "only nodes
    # typed :Adjuster itself, not those typed with a subclass (:Senior)", with the hint "or
    # test the subclass meant": what it does.
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl",
                       "?adjuster a :Adjuster ; :region ?r ; :available true .",
                       "{ ?adjuster a :Adjuster } UNION { ?adjuster a :Senior }\n"
                       "        ?adjuster :region ?r ; :available true .")
    with (folder / "ontology.ttl").open("a", encoding="utf-8") as f:
        f.write(":Senior a owl:Class ; rdfs:subClassOf :Adjuster .\n"
                ":Principal a owl:Class ; rdfs:subClassOf :Senior .\n")
    # :Principal, a subclass the pattern does not name, is still missed
    ws = found_in(folder, CLAIMS)
    assert ws and all(w.severity == "warning" for w in ws)
    assert all("not those typed with a subclass (:Principal)" in w.message for w in ws)
    with (folder / "workflow.ttl").open(encoding="utf-8") as f:
        text = f.read()
    (folder / "workflow.ttl").write_text(text.replace(
        "UNION { ?adjuster a :Senior }",
        "UNION { ?adjuster a :Senior } UNION { ?adjuster a :Principal }"), encoding="utf-8")
    assert found_in(folder, CLAIMS) == []


# -- sub-SELECTs ------------------------------------------------------------------------------


def test_a_sub_select_that_does_not_select_this_is_a_warning(tmp_path: Path) -> None:
    # `horis:requires "SELECT ?amount WHERE { ?this :amount ?amount }"` validated; the run
    # of :claim1 failed "2 solutions for the arguments of claims.pay (claim=:claim1,
    # amount=9000; claim=:claim1, amount=800)": the sub-SELECT's ?this was any claim.
    old = 'horis:requires """ ?this :amount ?amount .\n'
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", old,
                          'horis:requires """ { SELECT ?amount WHERE { ?this :amount ?amount } }\n')
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.node == ":Pay" and w.line == line
    assert "the sub-SELECT (SELECT ?amount) names ?this but does not select it" in w.message
    assert w.hint is not None and w.hint.startswith("select ?this too")
    # as the hint says: the run pays :claim1 its own amount
    folder, _ = edited(tmp_path / "fixed", CLAIMS, "workflow.ttl", old,
                       'horis:requires """ { SELECT ?this ?amount\n'
                       '    WHERE { ?this :amount ?amount } }\n')
    assert found_in(folder, CLAIMS) == []
    import importlib.util

    spec = importlib.util.spec_from_file_location("claims_client", CLAIMS / "claims_client.py")
    assert spec is not None and spec.loader is not None
    client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client)
    agent = Agent.from_files(*(folder / f for f in DEFINITIONS[CLAIMS]),
                             tools={f"claims_client.{n}": getattr(client, n)
                                    for n in ("assign_adjuster", "request_documents", "pay",
                                              "reject")})
    run = agent.run(World.from_files(CLAIMS / "world.ttl"), workflow=":HandleClaim",
                    focus=":claim1")
    assert run.status == "completed"
    paid = [r for r in run.steps if r.step.endswith("#Pay")]
    assert len(paid) == 1 and len(paid[0].args) == 1 and "800" in str(paid[0].args[0]["amount"])


def test_a_sub_select_that_names_no_this_is_no_warning(tmp_path: Path) -> None:
    # an adjuster's load, counted over every claim: a sub-SELECT of its own, rightly
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl",
                       "?adjuster a :Adjuster ; :region ?r ; :available true .",
                       "?adjuster a :Adjuster ; :region ?r ; :available true .\n"
                       "        { SELECT ?adjuster (COUNT(?c) AS ?load)\n"
                       "          WHERE { ?c :assignedAdjuster ?adjuster } GROUP BY ?adjuster }")
    assert found_in(folder, CLAIMS) == []


# -- shapes the flow meets --------------------------------------------------------------------


def test_a_required_property_written_on_the_other_branch_is_not_said_to_come_later(
        tmp_path: Path) -> None:
    # The warning is right — :LogCheck lands a sensor without :alertedTech — but said
    # :FreezerAlarm "writes only later, at :PageTech", a step on the other side of :TooWarm
    # that an instance at :LogCheck never reaches.
    folder, _ = edited(tmp_path, IOT, "domain.ttl",
                       "sh:property [ sh:path :note ; sh:maxLength 200 ] .",
                       "sh:property [ sh:path :note ; sh:maxLength 200 ] ;\n"
                       "    sh:property [ sh:path :alertedTech ; sh:minCount 1 ] .")
    w = the_one(found_in(folder, IOT), "warning")
    assert w.node == ":LogCheck" and "later" not in w.message
    assert "writes only at :PageTech, which an instance that runs this step never reaches" \
        in w.message


def test_a_later_step_reading_the_focuss_own_adjuster_after_the_fallback_is_no_warning(
        tmp_path: Path) -> None:
    # :NotifyAdjuster, after :Pay, reads `?this :assignedAdjuster ?adjuster`: the claim's own
    # adjuster, the supervisor's pick on the fallback's way. It was warned to act "on an
    # option neither the model nor a person chose".
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl",
                       ":Pay a horis:ActionStep ;\n    horis:tool :claims.pay ;",
                       ":Pay a horis:ActionStep ;\n    horis:tool :claims.pay ;\n"
                       "    horis:next :NotifyAdjuster ;")
    with (folder / "workflow.ttl").open("a", encoding="utf-8") as f:
        f.write(":NotifyAdjuster a horis:ActionStep ;\n"
                "    horis:tool :claims.notify ;\n"
                '    horis:requires "?this :assignedAdjuster ?adjuster ." ;\n'
                '    horis:bind [ horis:arg "claim" ; horis:var "this" ] .\n')
    with (folder / "tools.ttl").open("a", encoding="utf-8") as f:
        f.write(":claims.notify a horis:Tool ;\n"
                "    horis:takes [ horis:arg [ horis:name \"claim\" ; horis:type :Claim ] ;\n"
                "                  horis:arg [ horis:name \"adjuster\" ;\n"
                "                              horis:type :Adjuster ] ] ;\n"
                '    horis:binding "python:claims_client.notify" ;\n'
                "    horis:idempotent true .\n")
    assert found_in(folder, CLAIMS) == []
    # read from any adjuster, it is still warned of
    text = (folder / "workflow.ttl").read_text(encoding="utf-8")
    (folder / "workflow.ttl").write_text(text.replace(
        'horis:requires "?this :assignedAdjuster ?adjuster ." ;',
        'horis:requires "?adjuster a :Adjuster ; :available true ." ;'), encoding="utf-8")
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert "leads on to :NotifyAdjuster, which reads ?adjuster" in w.message


# -- the ontology's own vocabulary ------------------------------------------------------------


@pytest.mark.parametrize("old, new, meant", [
    (":paymentRef a owl:DatatypeProperty", ":paymentRef a owl:DataTypeProperty",
     "owl:DatatypeProperty"),
    (':Adjuster a owl:Class ; rdfs:label "Adjuster" .',
     ':Adjuster a owl:Class ; rdfs:lable "Adjuster" .', "rdfs:label"),
    (":paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .",
     ":paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:strng .",
     "xsd:string"),
    (':Adjuster a owl:Class ; rdfs:label "Adjuster" .',
     ':Adjuster a owl:class ; rdfs:label "Adjuster" .', "owl:Class"),
])
def test_a_misspelt_owl_rdfs_or_xsd_term_in_the_ontology_is_a_warning(
        tmp_path: Path, old: str, new: str, meant: str) -> None:
    # Each validated with no word: the property was of no kind, the range no datatype, and the
    # checks that read them (an effect's type against the range) were skipped.
    folder, line = edited(tmp_path, CLAIMS, "ontology.ttl", old, new)
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.file == str(folder / "ontology.ttl") and w.line == line
    assert "is not a term of" in w.message
    assert w.hint == f"did you mean {meant}?"


# -- decisions --------------------------------------------------------------------------------


def test_a_rule_left_without_order_after_a_numbered_one_is_a_warning(tmp_path: Path) -> None:
    # `amount <= 1000 → :Pay`, written after `horis:order 1` (over the policy limit → reject)
    # without its horis:order 2, is at 0 and tried first: a claim of 800 on a policy covering
    # 500 is paid. validate said valid.
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", "        horis:order 2 ;\n", "")
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.node == ":CheckAmount" and w.line == line - 1  # its horis:when [
    assert "tried before the rule of horis:order 1" in w.message
    assert w.hint is not None and w.hint.endswith("horis:order 2")
    # as the run tries them: the unnumbered rule first
    defs = load_definitions([folder / f for f in DEFINITIONS[CLAIMS]])
    decision = defs.steps[URIRef("http://example.org/claims#CheckAmount")]
    assert [str(r.next).rsplit("#")[1] for r in decision.rules] == ["Pay", "RejectOverLimit"]


def test_a_rule_without_order_written_first_is_no_warning(tmp_path: Path) -> None:
    # written first, it is tried first, as it reads
    folder, _ = edited(tmp_path, CLAIMS, "workflow.ttl", "        horis:order 1 ;\n", "")
    assert found_in(folder, CLAIMS) == []


# -- kinds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("extra, said", [
    ("?amount :coverageLimit ?l .", "the subject of ?amount :coverageLimit"),
    ("?amount a :Policy .", "typed :Policy (?amount a :Policy)"),
])
def test_a_variable_both_literal_and_node_is_a_warning(
        tmp_path: Path, extra: str, said: str) -> None:
    # :amount is an owl:DatatypeProperty: its values are literals, which have no properties
    # and no type. The pattern never held, :Pay was blocked for every claim, and validate
    # said valid.
    old = 'horis:requires """ ?this :amount ?amount .'
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", old, f"{old} {extra}")
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.node == ":Pay" and w.line == line
    assert "?amount is a literal, a value of :amount, and a node" in w.message and said in w.message


def test_a_variable_literal_on_one_side_of_a_union_and_node_on_the_other_is_no_warning(
        tmp_path: Path) -> None:
    folder, _ = edited(
        tmp_path, CLAIMS, "workflow.ttl", 'horis:requires """ ?this :amount ?amount .',
        'horis:requires """ ?this :amount ?amount .\n'
        "    { ?this :region ?x } UNION { ?this :underPolicy ?x . ?x a :Policy }")
    assert found_in(folder, CLAIMS) == []


def test_the_same_bind_written_twice_is_a_warning_not_an_error(tmp_path: Path) -> None:
    # A copied line: `horis:bind [ horis:arg "claim" ; horis:var "this" ]` twice. It was the
    # error "the run would take one and silently drop the rest", and the run was refused,
    # though both are the same and the run gives ?this either way.
    bind = 'horis:bind [ horis:arg "claim" ; horis:var "this" ] ;\n    horis:next :WaitForDocs'
    folder, line = edited(tmp_path, CLAIMS, "workflow.ttl", bind,
                          'horis:bind [ horis:arg "claim" ; horis:var "this" ] ;\n    ' + bind)
    w = the_one(found_in(folder, CLAIMS), "warning")
    assert w.node == ":RequestDocs" and w.line in (line, line + 1)
    assert 'gives argument "claim" from ?this twice, the same each time' in w.message


# -- timeouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, old, written, meant", [
    ("workflow.ttl", 'horis:timeout "P14D" ;', "14d", "P14D"),
    ("workflow.ttl", 'horis:timeout "P14D" ;', "2 weeks", "P14D"),
    # XSD allows a fraction only in the seconds: "P3.5D" is no duration
    ("workflow.ttl", 'horis:timeout "P14D" ;', "3.5d", "P3DT12H"),
    ("workflow.ttl", 'horis:timeout "P14D" ;', "0.5d", "PT12H"),
    ("workflow.ttl", 'horis:timeout "P14D" ;', "P2W", "P14D"),
    # days after the T, among the times: "PT21D" was told only the list of forms
    ("workflow.ttl", 'horis:timeout "P14D" ;', "PT21D", "P21D"),
    ("workflow.ttl", 'horis:timeout "P14D" ;', "PT1D2H", "P1DT2H"),
    ("tools.ttl", 'horis:timeout "10s" ;', "10 seconds", "10s"),
    ("tools.ttl", 'horis:timeout "10s" ;', "10", "10s"),
    ("tools.ttl", 'horis:timeout "10s" ;', "10S", "10s"),
    # a short form names one unit: together they are one xsd:duration
    ("tools.ttl", 'horis:timeout "10s" ;', "1h30m", "PT1H30M"),
    ("tools.ttl", 'horis:timeout "10s" ;', "2m30s", "PT2M30S"),
])
def test_a_timeout_in_a_unit_the_parser_does_not_take_gets_the_one_to_write(
        tmp_path: Path, name: str, old: str, written: str, meant: str) -> None:
    # "14d" is how a person writes two weeks; the hint listed "250ms", "5s", "2m", "1h" and
    # xsd:durations, and left the modeler to work out that days are "P14D".
    folder, line = edited(tmp_path, CLAIMS, name, old, f'horis:timeout "{written}" ;')
    e = the_one(found_in(folder, CLAIMS), "error")
    assert e.line == line and f'horis:timeout "{written}" is not a length of time' in e.message
    assert e.hint is not None and e.hint.startswith(f'write "{meant}"')
    assert parse_timeout(Literal(meant)) > 0  # what it says to write is taken


def test_a_compound_timeout_of_no_time_is_not_told_a_duration_of_none(tmp_path: Path) -> None:
    folder, _ = edited(tmp_path, CLAIMS, "tools.ttl", 'horis:timeout "10s" ;',
                       'horis:timeout "0h0m" ;')
    e = the_one(found_in(folder, CLAIMS), "error")
    assert e.hint is not None and "PT0H0M" not in e.hint, str(e)


# -- validate --connect -----------------------------------------------------------------------


def _validate_connect(folder: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(folder, "validate", "--connect", *DEFINITIONS[WAREHOUSE], timeout=120)


def test_a_server_that_does_not_start_is_reported_once_at_its_declaration(
        tmp_path: Path) -> None:
    # `horis:args ( "-m" "stock_srv" )`: the error was at the line of each tool bound to the
    # server, one per tool, none at the server whose command was wrong.
    folder, line = edited(tmp_path, WAREHOUSE, "tools.ttl", 'horis:command "python" ;',
                          'horis:command "python" ;')
    text = (folder / "tools.ttl").read_text(encoding="utf-8")
    (folder / "tools.ttl").write_text(text.replace('"stock_server"', '"stock_srv"'),
                                      encoding="utf-8")
    p = _validate_connect(folder)
    assert p.returncode == 1, p.stdout + p.stderr
    errors = [ln for ln in p.stdout.splitlines() if ": error: " in ln]
    assert len(errors) == 1, p.stdout
    assert errors[0].startswith(f"tools.ttl:{line}: error: :stock: ")
    assert "which stock.reserve is bound to, could not start" in errors[0]
    assert "No module named stock_srv" in errors[0]


def test_a_tool_the_server_lacks_is_reported_at_its_binding(tmp_path: Path) -> None:
    folder, line = edited(tmp_path, WAREHOUSE, "tools.ttl", '"mcp://stock/reserve"',
                          '"mcp://stock/reserv"')
    p = _validate_connect(folder)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith(f"tools.ttl:{line}: error: :stock.reserve: "), p.stdout
    assert 'has no tool "reserv"' in p.stdout and "it offers: reserve" in p.stdout


def test_run_refuses_a_tool_the_server_lacks_at_its_binding_with_the_name_meant(
        tmp_path: Path) -> None:
    # validate --connect said it at the binding's line; run said only "horismos run: error:
    # MCP server … has no tool", with no file or line, as if the server were at fault
    folder, line = edited(tmp_path, WAREHOUSE, "tools.ttl", '"mcp://stock/reserve"',
                          '"mcp://stock/reserv"')
    p = horismos_forked(folder, "run", *DEFINITIONS[WAREHOUSE], "--world", "world.ttl",
                        "--workflow", ":Fulfil", "--all", timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f"horismos run: error: tools.ttl:{line}: MCP server "), p.stderr
    assert 'has no tool "reserv"' in p.stderr
    assert "did you mean mcp://stock/reserve?" in p.stderr
    assert "Traceback" not in p.stderr


def test_the_warehouse_validates_clean_against_its_live_server() -> None:
    p = _validate_connect(WAREHOUSE)
    assert p.returncode == 0 and p.stdout.strip().endswith("valid"), p.stdout + p.stderr


# -- tool names -------------------------------------------------------------------------------


def test_two_tools_of_one_short_name_are_warned_of_and_the_catalog_asks_which(
        tmp_path: Path) -> None:
    # A second file declared its own :claims.pay in another namespace: validate said valid,
    # and `tools call claims.pay` called whichever the graph listed first.
    folder = tmp_path / "claims"
    shutil.copytree(CLAIMS, folder)
    (folder / "extra.ttl").write_text(
        "@prefix :      <http://example.org/other#> .\n"
        "@prefix horis: <https://w3id.org/horismos#> .\n"
        "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .\n"
        ":claims.pay a horis:Tool ;\n"
        '    horis:takes [ horis:arg [ horis:name "n" ; horis:type xsd:string ] ] ;\n'
        '    horis:binding "python:claims_client.pay" .\n', encoding="utf-8")
    files = [folder / f for f in (*DEFINITIONS[CLAIMS], "extra.ttl")]
    defs = load_definitions(files)
    w = the_one(list(defs.warnings), "warning")
    assert w.file == str(folder / "extra.ttl") and w.line == 4
    assert "2 tools are named claims.pay" in w.message
    agent = Agent.from_files(*files, tools={"claims_client.pay": lambda **kw: {}})
    with pytest.raises(UsageError, match=r"'claims\.pay' names 2 tools"):
        agent.catalog.tool("claims.pay")
    assert str(agent.catalog.tool("http://example.org/claims#claims.pay").iri).startswith(
        "http://example.org/claims#")
