"""The tool catalog: list (static), discover (context-aware), guarded call, approvals, inventory.

Through the Python API (``agent.catalog``) on tools declared inline, and through the real
command line (``python -m horismos tools …``) on the project's examples. Every refusal is
checked to leave the world exactly as it was and the tool uncalled.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from conftest import EX, PREFIXES, WARD, facts
from forked import horismos_forked
from rdflib import Literal, Namespace

from horismos import Agent, TraceError, World, check_inventory, read_trace, replay

ROOT = Path(__file__).resolve().parent.parent
INVENTORY = ROOT / "examples" / "inventory.json"
TOKEN = "HORISMOS_CATALOG_TEST_TOKEN"
EX_EHR = Namespace("http://example.org/ehr#")

CATALOG = """
:c.assign a horis:Tool ;
    rdfs:label "Assign a patient to a queue" ;
    rdfs:comment "Queues the patient by acuity and returns a reference." ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]
    ] ;
    horis:requires "?patient :acuity ?queue ." ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:assign" .

:c.capacity a horis:Tool ;
    rdfs:label "Read a ward's capacity" ;
    rdfs:comment "Looks up how many beds the ward has; writes nothing." ;
    horis:takes [
        horis:arg [ horis:name "ward" ; horis:type :Ward ] ;
        horis:arg [ horis:name "maxBeds" ; horis:type xsd:integer ; horis:optional true ]
    ] ;
    horis:binding "python:capacity" ;
    horis:idempotent true .

:c.bill a horis:Tool ;
    rdfs:label "Bill the insurer for a patient" ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "amount" ; horis:type xsd:decimal ]
    ] ;
    horis:effect [ horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:sideEffect horis:ExternalCommit ;
    horis:binding "python:bill" .

:c.transfer a horis:Tool ;
    rdfs:label "Transfer a patient to a ward" ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "ward" ; horis:type :Ward ]
    ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:requiresApproval true ;
    horis:binding "python:transfer" .

:c.page a horis:Tool ;
    rdfs:label "Page the nurse on duty" ;
    horis:takes [ horis:arg [ horis:name "nurse" ; horis:type :Nurse ] ] ;
    horis:header [ horis:name "Authorization" ; horis:fromEnv "HORISMOS_CATALOG_TEST_TOKEN" ] ;
    horis:sideEffect horis:ReadOnly ;
    horis:binding "https://pager.invalid/page" .

:c.archive a horis:Tool ;
    rdfs:label "Archive a patient record" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:not_registered" .

:c.discharge a horis:Tool ;
    rdfs:label "Discharge a patient" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:requires "?patient :consented true ." ;
    horis:effect [ horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:discharge" .

:Discharge a horis:Workflow ; horis:focusType :Patient ; horis:start :Leave .
:Leave a horis:ActionStep ; horis:tool :c.discharge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""

WORLD = WARD + """
:w1 a :Ward ; :capacity 12 .
:p2 :consented true .
"""

LIST_KEYS = ["name", "iri", "label", "description", "input_schema", "effect_schema", "lane",
             "side_effect", "requires_approval", "dependencies", "readiness"]


@pytest.fixture
def clinic(build, recorder, monkeypatch):
    """The catalog's tools with every python:NAME but ``not_registered`` registered."""
    monkeypatch.delenv(TOKEN, raising=False)
    tools = {name: recorder.tool(name, {"ref": "R-1"}) for name in
             ("assign", "bill", "transfer", "discharge")}
    tools["capacity"] = recorder.tool("capacity", None)
    return build(CATALOG, WORLD, tools=tools)


def by_name(entries):
    return {e.name: e for e in entries}


# -- list ---------------------------------------------------------------------------------

def test_list_gives_each_tool_with_exactly_the_catalog_keys(clinic):
    agent, _ = clinic
    entries = agent.catalog.list()
    assert [e.name for e in entries] == sorted(e.name for e in entries)
    assert {e.name for e in entries} == {"c.archive", "c.assign", "c.bill", "c.capacity",
                                         "c.discharge", "c.page", "c.transfer"}
    for e in entries:
        assert list(e.to_json()) == LIST_KEYS
    text = json.dumps([e.to_json() for e in entries])
    assert "executable" not in text and "blocked" not in text  # never context-dependent


def test_input_schema_is_closed_with_required_args_and_class_args_as_iris(clinic):
    agent, _ = clinic
    schema = by_name(agent.catalog.list())["c.capacity"].input_schema
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["ward"]  # maxBeds is horis:optional
    ward = schema["properties"]["ward"]
    assert ward["type"] == "string" and ward["format"] == "iri"
    assert ":Ward" in ward["description"] and str(EX.Ward) in ward["description"]
    assert schema["properties"]["maxBeds"]["type"] == "integer"
    amount = by_name(agent.catalog.list())["c.bill"].input_schema["properties"]["amount"]
    assert amount["type"] == "number" and "xsd:decimal" in amount["description"]


def test_effect_schema_has_the_returned_fields_and_what_the_runtime_writes(build):
    agent, _ = build(CATALOG + """
:c.stamp a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:asserts [ horis:property :ref ; horis:type xsd:string ; horis:optional true ] ;
        horis:asserts [ horis:property :nurseOf ; horis:type :Nurse ; horis:many true ] ;
        horis:asserts [ horis:property :stampedAt ; horis:value horis:now ]
    ] ;
    horis:binding "python:stamp" .
""")
    e = by_name(agent.catalog.list())["c.stamp"].effect_schema
    assert e["additionalProperties"] is False and e["x-horis-subject"] == "patient"
    assert set(e["properties"]) == {"ref", "nurseOf"}
    assert e["required"] == ["nurseOf"]
    assert e["properties"]["nurseOf"]["type"] == "array"
    assert e["properties"]["nurseOf"]["items"]["format"] == "iri"
    assert e["properties"]["ref"]["x-horis-property"] == str(EX.ref)
    assert e["x-horis-runtime-writes"] == [{"property": str(EX.stampedAt), "value": "horis:now"}]
    assert by_name(agent.catalog.list())["c.capacity"].effect_schema is None


def test_side_effect_lane_approval_dependencies_and_readiness(clinic):
    agent, _ = clinic
    e = by_name(agent.catalog.list())
    # a declared effect defaults to HostStateWrite, none to ReadOnly when the tool is
    # idempotent (a tool that is not acts when called, effect declared or not: c.archive);
    # horis:sideEffect wins
    assert e["c.assign"].side_effect == "HostStateWrite"
    assert e["c.capacity"].side_effect == "ReadOnly"
    assert e["c.archive"].side_effect == "HostStateWrite"
    assert e["c.bill"].side_effect == "ExternalCommit"
    assert e["c.page"].side_effect == "ReadOnly"
    assert (e["c.assign"].lane, e["c.page"].lane) == ("python", "http")
    assert e["c.transfer"].requires_approval and not e["c.assign"].requires_approval
    assert e["c.page"].dependencies == {"binding": "https://pager.invalid/page",
                                        "mcp_server": None, "env": [TOKEN],
                                        "hosts": ["pager.invalid"]}
    assert e["c.archive"].readiness == "catalog_only"       # python:not_registered
    assert e["c.assign"].readiness == "model_callable"
    assert e["c.transfer"].readiness == "context_loadable"  # needs an approval
    assert e["c.bill"].readiness == "context_loadable"      # ExternalCommit: not by default
    assert e["c.page"].readiness == "model_callable"        # env is context: discover's


def test_list_names_the_mcp_server_a_tool_depends_on_without_connecting():
    agent = Agent.from_files(ROOT / "examples" / "mcp" / "clinic.ttl")
    (entry,) = agent.catalog.list()
    assert entry.lane == "mcp"
    assert entry.dependencies["mcp_server"] == "ward"
    assert entry.readiness == "model_callable"
    assert entry.effect_schema["properties"]["bed"]["x-horis-property"].endswith("#bedRef")


# -- tool-level preconditions ------------------------------------------------------------------

def test_tool_preconditions_hold_for_a_step(clinic, recorder):
    agent, world = clinic
    before = facts(world)
    run = agent.run(world, focus=str(EX.p1))  # p1 has not consented
    assert run.status == "blocked"
    assert ":consented true" in (run.blocked_by or "")
    assert recorder.count("discharge") == 0 and facts(world) == before
    assert agent.run(world, focus=str(EX.p2)).status == "completed"
    assert recorder.count("discharge") == 1


def test_tool_preconditions_hold_for_a_direct_call(clinic, recorder):
    agent, world = clinic
    before = world.canonical()
    blocked = agent.catalog.call("c.discharge", {"patient": str(EX.p1)}, world)
    assert blocked.status == "blocked" and blocked.error["kind"] == "precondition"
    assert ":consented true" in blocked.error["message"]
    assert world.canonical() == before and recorder.count("discharge") == 0
    done = agent.catalog.call("c.discharge", {"patient": str(EX.p2)}, world)
    assert done.status == "completed"
    assert (EX.p2, EX.ref, Literal("R-1")) in world.graph


# -- discover ----------------------------------------------------------------------------------

def test_discover_matches_tokens_not_the_whole_query(clinic):
    agent, _ = clinic
    found = agent.catalog.discover("queue, then assign!", include_blocked=True)
    assert found[0].entry.name == "c.assign"
    assert {w["token"] for w in found[0].why_selected} == {"queue", "assign"}
    assert found[0].why_selected[1] == {"token": "assign", "fields": ["name", "label"]}
    assert agent.catalog.discover("sign", include_blocked=True) == []  # no substring matches
    queued = agent.catalog.discover("queued", include_blocked=True)
    assert [d.entry.name for d in queued] == ["c.assign"]


def test_discover_ranks_by_matched_tokens_then_by_name(clinic):
    agent, _ = clinic
    found = agent.catalog.discover("patient ward", include_blocked=True)
    ranked = [(d.matched, d.entry.name) for d in found]
    assert ranked == sorted(ranked, key=lambda r: (-r[0], r[1]))
    assert ranked[0] == (2, "c.transfer")  # patient and ward both match
    assert {n for m, n in ranked if m == 1} >= {"c.archive", "c.assign", "c.discharge"}


def test_discover_says_why_each_tool_is_blocked_and_hides_blocked_ones(clinic, monkeypatch):
    agent, world = clinic
    found = {d.entry.name: d for d in agent.catalog.discover(
        "patient ward nurse page bill", world, str(EX.p1), include_blocked=True)}
    reasons = {n: {b["reason"] for b in d.why_blocked} for n, d in found.items()}
    assert reasons["c.archive"] == {"binding"}
    assert reasons["c.bill"] == {"policy"}
    assert reasons["c.discharge"] == {"precondition"}
    assert found["c.discharge"].why_blocked[0]["pattern"] == "?patient :consented true ."
    assert "approval" in reasons["c.transfer"]
    assert reasons["c.page"] == {"env", "argument"}  # no token; focus p1 is no :Nurse
    assert "no argument of c.page takes the focus" in found["c.page"].why_blocked[-1]["message"]
    assert found["c.assign"].availability == "executable"
    # the focus bound "patient", the tool's precondition then bound "queue"
    assert found["c.assign"].bound_args == {"patient": str(EX.p1), "queue": str(EX.urgent)}
    shown = agent.catalog.discover("patient ward nurse page bill", world, str(EX.p1))
    assert {d.entry.name for d in shown} == {n for n, d in found.items()
                                             if d.availability == "executable"}
    monkeypatch.setenv(TOKEN, "secret")
    paged = agent.catalog.discover("page", world, str(EX.n1))
    assert [d.entry.name for d in paged] == ["c.page"] and paged[0].why_blocked == ()


def test_discover_unblocks_an_approved_payload_and_a_widened_policy(clinic):
    agent, world = clinic
    fp = agent.catalog.approve("c.transfer", {"patient": str(EX.p1), "ward": str(EX.w1)})
    blocked = agent.catalog.discover("transfer", world, str(EX.p1), include_blocked=True)
    assert blocked[0].availability == "blocked"  # ward unbound: no exact payload to approve
    assert agent.catalog.discover("bill", allow=["ReadOnly", "HostStateWrite",
                                                 "ExternalCommit"])[0].entry.name == "c.bill"
    assert len(fp) == 64


# -- call ----------------------------------------------------------------------------------------

def test_an_argument_not_sent_is_in_the_input_schema_marked_and_kept_from_the_call(
        build, recorder):
    # The caller names the patient (the effect's subject); horis:sent false keeps it from the
    # function, and the input schema says so.
    defs = CATALOG.replace('horis:arg [ horis:name "patient" ; horis:type :Patient ] ;\n'
                           '        horis:arg [ horis:name "queue"',
                           'horis:arg [ horis:name "patient" ; horis:type :Patient ; '
                           'horis:sent false ] ;\n        horis:arg [ horis:name "queue"', 1)
    tools = {name: recorder.tool(name, {"ref": "R-1"}) for name in
             ("assign", "bill", "transfer", "discharge", "capacity")}
    agent, world = build(defs, WORLD, tools=tools)
    schema = by_name(agent.catalog.list())["c.assign"].input_schema
    assert schema["required"] == ["patient", "queue"]
    patient = schema["properties"]["patient"]
    assert patient["x-horis-sent"] is False
    assert "not sent to the tool's binding (horis:sent false)" in patient["description"]
    assert "x-horis-sent" not in schema["properties"]["queue"]
    result = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent"}, world)
    assert result.status == "completed"
    assert recorder.args("assign") == [{"queue": EX.urgent}]
    assert (EX.p1, EX.ref, Literal("R-1")) in world.graph


def test_call_runs_through_gate_and_transaction_and_traces_it(clinic, recorder):
    agent, world = clinic
    result = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent"}, world)
    assert result.status == "completed"
    assert recorder.args("assign") == [{"patient": EX.p1, "queue": EX.urgent}]
    envelope = result.to_json()
    assert list(envelope) == ["status", "content", "artifacts", "effects", "gate", "error"]
    assert envelope["gate"] == {"conforms": True, "messages": []}
    assert envelope["effects"] == [[EX.p1.n3(), EX.ref.n3(), '"R-1"']]
    assert {"type": "json", "json": {"ref": "R-1"}} in envelope["content"]
    graph = next(a["iri"] for a in envelope["artifacts"] if a["type"] == "named_graph")
    assert (EX.p1, EX.ref, Literal("R-1"), graph) in {
        (s, p, o, str(g)) for s, p, o, g in world.store.quads()}
    types = [e["type"] for e in result.trace.events]
    assert types == ["header", "step", "end"]
    step = result.trace.events[1]
    assert step["kind"] == "ToolCall" and step["tool"] == str(EX["c.assign"])
    assert "c.assign(patient=:p1, queue=:urgent): completed" in result.receipt()


@pytest.mark.parametrize("field", ["status", "exit_status", "effects", "receipt", "content",
                                   "artifacts", "gate", "error"])
def test_a_result_field_passed_as_input_is_refused_as_such(clinic, recorder, field):
    agent, world = clinic
    before = world.canonical()
    result = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent",
                                             field: "x"}, world)
    assert result.status == "refused" and result.error["kind"] == "schema"
    assert f'"{field}" is a result field' in result.error["message"]
    assert world.canonical() == before and recorder.calls == []


@pytest.mark.parametrize(("args", "kind", "words"), [
    ({"patient": ":p1", "queue": ":urgent", "priority": 1}, "schema", 'unknown argument'),
    ({"patient": ":p1"}, "schema", 'argument "queue" is required'),
    ({"patient": ":p1", "queue": 7}, "schema", "got number 7"),
    ({"patient": "nowhere", "queue": ":urgent"}, "schema", "neither an IRI nor a CURIE"),
    # an agent leaving out the ':' is told the name to write
    ({"patient": "p1", "queue": ":urgent"}, "schema", "did you mean :p1?"),
    ({"patient": ":n1", "queue": ":urgent"}, "argument_type", ":n1 is a :Nurse"),
    ({"patient": ":p3", "queue": ":urgent"}, "precondition", "?patient :acuity ?queue"),
    ({"patient": ":p1", "queue": ":routine"}, "precondition", "?patient :acuity ?queue"),
])
def test_every_refusal_changes_nothing(clinic, recorder, args, kind, words):
    agent, world = clinic
    before = world.canonical()
    result = agent.catalog.call("c.assign", args, world)
    assert result.status in ("refused", "blocked")
    assert result.error["kind"] == kind and words in result.error["message"]
    assert result.effects == [] and result.gate is None
    assert world.canonical() == before and recorder.calls == []
    assert "nothing changed" in result.receipt()


@pytest.mark.parametrize(("args", "call"), [
    ({"patient": 42, "queue": ":urgent"}, "c.assign(patient=42, queue=:urgent)"),
    ({"patient": ":p1", "queue": "urgent"}, 'c.assign(patient=:p1, queue="urgent")'),
    ({"patient": ":p1", "queu": ":urgent"}, 'c.assign(patient=:p1, queu=":urgent")'),
    ({"patient": ":p1", "queue": ":urgent", "note": "x" * 80},
     'c.assign(patient=:p1, queue=:urgent, note="' + "x" * 38 + '…)'),
])
def test_a_refused_call_shows_the_arguments_it_was_given(clinic, recorder, args, call):
    """A call whose argument the schema refused was shown without it —
    ``c.assign(queue=:urgent): refused (schema)`` for ``{"patient": 42, …}`` — so the
    receipt, the envelope's summary and ``tools call`` read as if ``patient`` had not been
    given. Each refused value is shown as it was sent (its JSON, cut short)."""
    agent, world = clinic
    result = agent.catalog.call("c.assign", args, world)
    assert result.status == "refused" and result.error["kind"] == "schema"
    assert result.receipt().splitlines()[0] == f"{call}: refused (schema)"
    assert result.to_json()["content"][0]["text"].startswith(f"{call} refused (schema): ")
    assert recorder.calls == []


def test_arguments_given_as_json_text_are_refused_saying_to_parse_them(clinic, recorder):
    """A model's function call hands its arguments over as JSON text; passed on as they came
    (``catalog.call(name, call["arguments"], world)``) they were refused "the arguments must
    be a JSON object" — which the text holds. The refusal says they are JSON text, to parse
    first; nothing is called."""
    agent, world = clinic
    result = agent.catalog.call("c.assign", '{"patient": ":p1", "queue": ":urgent"}', world)
    assert result.status == "refused" and result.error["kind"] == "schema"
    assert "are JSON text, not an object: parse it first (json.loads)" in result.error["message"]
    assert recorder.calls == []
    other = agent.catalog.call("c.assign", "patient p1", world)
    assert "must be a JSON object" in other.error["message"]


def test_policy_refuses_external_commit_unless_allowed(clinic, recorder):
    agent, world = clinic
    args = {"patient": ":p1", "amount": 12.5}
    before = world.canonical()
    refused = agent.catalog.call("c.bill", args, world)
    assert refused.status == "refused" and refused.error["kind"] == "policy"
    assert world.canonical() == before and recorder.calls == []
    done = agent.catalog.call("c.bill", args, world, allow="ReadOnly,HostStateWrite,"
                                                          "ExternalCommit")
    assert done.status == "completed"
    assert recorder.args("bill")[0]["amount"] == pytest.approx(12.5)
    read_only = agent.catalog.call("c.capacity", {"ward": ":w1"}, world, allow=["ReadOnly"])
    assert read_only.status == "completed" and read_only.effects == []


def test_approval_is_the_sha256_of_the_exact_payload(clinic, recorder):
    agent, world = clinic
    args = {"patient": ":p1", "ward": ":w1"}
    fp = agent.catalog.approve("c.transfer", args)
    payload = json.dumps({"patient": str(EX.p1), "ward": str(EX.w1)}, sort_keys=True,
                         separators=(",", ":"))
    assert fp == hashlib.sha256(f"{EX['c.transfer']}\n{payload}".encode()).hexdigest()
    # the same payload however it is named: CURIE or IRI, tool by IRI
    assert agent.catalog.approve(str(EX["c.transfer"]),
                                 {"ward": str(EX.w1), "patient": str(EX.p1)}) == fp
    before = world.canonical()
    for approval in (None, agent.catalog.approve("c.transfer", {"patient": ":p2",
                                                                "ward": ":w1"})):
        refused = agent.catalog.call("c.transfer", args, world, approval=approval)
        assert refused.status == "refused" and refused.error["kind"] == "approval"
        assert world.canonical() == before and recorder.calls == []
    assert "different payload" in refused.error["message"]
    assert agent.catalog.call("c.transfer", args, world, approval=fp).status == "completed"


def test_a_missing_environment_variable_refuses_the_call(clinic):
    agent, world = clinic
    before = world.canonical()
    result = agent.catalog.call("c.page", {"nurse": ":n1"}, world)
    assert result.status == "refused" and result.error["kind"] == "env"
    assert TOKEN in result.error["message"] and world.canonical() == before


def test_an_mcp_servers_header_variable_is_the_tools_environment(build, monkeypatch):
    """A ``horis:url`` MCP server's ``horis:header … horis:fromEnv`` was left out of the
    tool's ``dependencies.env``: unset, ``discover`` said the tool executable and the call was
    refused as ``binding`` after the env check, not as ``env`` (docs/catalog.md)."""
    monkeypatch.delenv(TOKEN, raising=False)
    agent, world = build(f"""
:cloud a horis:McpServer ; horis:url "http://127.0.0.1:9/mcp" ;
    horis:header [ horis:name "Authorization" ; horis:fromEnv "{TOKEN}" ] .
:c.remote a horis:Tool ;
    rdfs:label "Assign a bed remotely" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "mcp://cloud/assign_bed" .
""")
    (entry,) = agent.catalog.list()
    assert entry.to_json()["dependencies"]["env"] == [TOKEN]
    (found,) = agent.catalog.discover("assign bed", world, include_blocked=True)
    assert found.availability == "blocked"
    assert [b["reason"] for b in found.why_blocked] == ["env"], found.why_blocked
    result = agent.catalog.call("c.remote", {"patient": ":p1"}, world)
    assert result.status == "refused" and result.error["kind"] == "env", result.error
    assert TOKEN in result.error["message"]


def test_an_unresolved_binding_refuses_the_call(clinic):
    agent, world = clinic
    result = agent.catalog.call("c.archive", {"patient": ":p1"}, world)
    assert result.status == "refused" and result.error["kind"] == "binding"
    assert "not_registered" in result.error["message"]


def test_a_result_outside_the_effect_is_rejected_by_the_gate(build, recorder):
    agent, world = build(CATALOG, WORLD, tools={
        "assign": recorder.tool("assign", {"ref": "R-1", "extra": "x"})})
    before = world.canonical(include_instances=False)
    result = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent"}, world)
    assert result.status == "rejected" and result.error["kind"] == "gate_rejected"
    assert result.gate["conforms"] is False and result.gate["messages"]
    assert world.canonical(include_instances=False) == before and recorder.count("assign") == 1
    # it answered, so it may have acted, and nothing of it landed: not made again blindly
    assert "tools reconcile c.assign" in result.error["message"]
    again = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent"}, world)
    assert again.status == "refused" and again.error["kind"] == "outcome_unknown"
    assert recorder.count("assign") == 1


def test_a_call_trace_is_saved_and_replay_refuses_it_as_not_a_run(clinic, tmp_path):
    agent, world = clinic
    path = tmp_path / "call.jsonl"
    result = agent.catalog.call("c.capacity", {"ward": ":w1"}, world, trace=path)
    assert {"type": "trace", "path": str(path)} in result.artifacts
    events = read_trace(path)  # hash chain and version checked
    assert events[0]["call"] == str(EX["c.capacity"]) and events[-1]["status"] == "completed"
    with pytest.raises(TraceError, match="direct tool call"):
        replay(path, agent)


# -- inventory -----------------------------------------------------------------------------------

def test_the_committed_inventory_matches_the_example_tools():
    agent = Agent.from_files(ROOT / "workflows", ROOT / "ontologies")
    drift = check_inventory(agent.catalog.inventory(), INVENTORY)
    assert drift == [], (
        "examples/inventory.json has drifted from workflows/ and ontologies/; regenerate it "
        "with `horismos tools inventory workflows ontologies --output examples/inventory.json`"
        "\n" + "\n".join(drift))


def test_an_inventory_reports_readable_drift(clinic, tmp_path):
    agent, _ = clinic
    inventory = agent.catalog.inventory()
    assert inventory["inventory_version"] == 1
    assert inventory["digest"].startswith("sha256:") and "readiness" not in inventory["tools"][0]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(inventory), encoding="utf-8")
    assert check_inventory(inventory, path) == []
    edited = json.loads(json.dumps(inventory))
    edited["tools"][0]["label"] = "Something else"
    edited["tools"].pop()
    path.write_text(json.dumps(edited), encoding="utf-8")
    drift = check_inventory(inventory, path)
    assert f"changed: {inventory['tools'][0]['name']}: label" in drift
    assert any(line.startswith("added: ") for line in drift)
    assert any(line.startswith("-") and "Something else" in line for line in drift)


# -- the command line ------------------------------------------------------------------------------

TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
TRIAGE_WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
TRIAGE_TOOLS = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, "tools", *args, timeout=120)


def test_cli_list_as_json_and_text(tmp_path):
    p = horismos("list", *TRIAGE, *TRIAGE_TOOLS, "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    entries = json.loads(p.stdout)
    assert [e["name"] for e in entries] == ["ehr.assign_queue", "ehr.notify_nurse"]
    assert all(list(e) == LIST_KEYS for e in entries)
    assert {e["readiness"] for e in entries} == {"model_callable"}  # --tools resolves them
    p = horismos("list", *TRIAGE, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "ehr.assign_queue  python  HostStateWrite  catalog_only" in p.stdout
    assert "args: patient: :Patient, queue: :AcuityLevel" in p.stdout


def test_cli_discover_with_a_focus(tmp_path):
    p = horismos("discover", "assign queue", *TRIAGE, *TRIAGE_WORLD, *TRIAGE_TOOLS,
                 "--focus", ":patient42", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    first = json.loads(p.stdout)[0]
    assert first["name"] == "ehr.assign_queue" and first["availability"] == "executable"
    assert first["bound_args"] == {"patient": "http://example.org/ehr#patient42"}
    p = horismos("discover", "notify nurse", *TRIAGE, *TRIAGE_WORLD, "--focus", ":urgent",
                 cwd=tmp_path)
    assert p.returncode == 1  # blocked (no --tools, and :urgent fits no argument): hidden
    assert "1 blocked tool; --include-blocked shows it" in p.stdout
    p = horismos("discover", "notify nurse", *TRIAGE, *TRIAGE_WORLD, "--focus", ":urgent",
                 "--include-blocked", cwd=tmp_path)
    assert p.returncode == 0
    assert "blocked (binding)" in p.stdout and "blocked (argument)" in p.stdout


def test_a_discovery_that_finds_nothing_names_the_words_its_misspellings_meant(
        tmp_path, monkeypatch):
    """``tools discover "qeue asign"`` said only "no executable tool matches": a person — or
    a model, over ``serve`` — misspelling one word learnt nothing of what to ask instead.
    Each query word no tool's words match is told the closest word the tools have."""
    import asyncio

    from horismos._serve import ServedTools

    p = horismos("discover", "qeue asign", *TRIAGE, *TRIAGE_TOOLS, cwd=tmp_path)
    assert p.returncode == 1
    assert p.stdout.strip() == ("no executable tool matches 'qeue asign'; did you mean "
                                "'queue' for 'qeue', 'assign' for 'asign'?")
    p = horismos("discover", "zebra", *TRIAGE, *TRIAGE_TOOLS, cwd=tmp_path)
    assert p.stdout.strip() == "no executable tool matches 'zebra'"
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "triage"))
    import ehr_client

    agent = Agent.from_files(*TRIAGE, tools={
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse})
    served = ServedTools(agent, World.from_files(ROOT / "examples" / "triage" / "world.ttl"))
    answer = asyncio.run(served.call("discover", {"query": "notfy"}))
    assert answer.content[0].text == (
        "no served tool matches 'notfy'; did you mean 'notify' for 'notfy'?")


def test_cli_call_lands_effects_and_refusals_change_nothing(tmp_path):
    call = ["call", "ehr.assign_queue", *TRIAGE, *TRIAGE_WORLD, *TRIAGE_TOOLS]
    p = horismos(*call, "--args", '{"patient": ":patient42", "queue": ":urgent"}',
                 "--out", "after.trig", "--trace", "call.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "completed" in p.stdout and ':patient42 :queueRef "Q-URGENT-1"' in p.stdout
    after = World.from_files(tmp_path / "after.trig")
    assert (EX_EHR.patient42, EX_EHR.queueRef, Literal("Q-URGENT-1")) in after.graph
    events = [json.loads(line) for line in (tmp_path / "call.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["header", "step", "end"]

    original = World.from_files(ROOT / "examples" / "triage" / "world.ttl").canonical()
    p = horismos(*call, "--args", '{"patient": ":patient42", "queue": ":urgent", '
                 '"exit_status": 0}', "--out", "refused.trig", "--format", "json", cwd=tmp_path)
    assert p.returncode == 5, p.stdout + p.stderr
    envelope = json.loads(p.stdout)
    assert envelope["status"] == "refused"
    assert '"exit_status" is a result field' in envelope["error"]["message"]
    assert World.from_files(tmp_path / "refused.trig").canonical() == original
    p = horismos(*call, "--args", '{"patient": ":patient44", "queue": ":urgent"}',
                 "--allow", "ReadOnly", cwd=tmp_path)
    assert p.returncode == 5 and "refused (policy)" in p.stdout
    p = horismos(*call, "--args", "{not json", cwd=tmp_path)
    assert p.returncode == 2 and "--args: not JSON" in p.stderr


TRANSFER = """
:c.transfer a horis:Tool ;
    rdfs:label "Transfer a patient to a ward" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "ward" ; horis:type :Ward ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:requiresApproval true ;
    horis:binding "python:transfer" .
"""
"""A tool that requires approval, bound to python:transfer."""


def transfer_project(tmp_path: Path) -> list[str]:
    """A tool that requires approval, bound to a function that logs each call in calls.log:
    the definitions and --tools to give the CLI."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + TRANSFER, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(PREFIXES + WORLD, encoding="utf-8")
    (tmp_path / "ward_tools.py").write_text(
        "def transfer(patient, ward):\n    open('calls.log', 'a').write(patient + '\\n')\n"
        "    return {'ref': 'R-9'}\n", encoding="utf-8")
    return ["defs.ttl", str(ROOT / "tests" / "fixtures" / "engine" / "clinic.ttl"),
            "--tools", "ward_tools"]


def test_cli_approve_then_call_with_python_name_tools(tmp_path):
    defs = transfer_project(tmp_path)
    store = ["--store", "oxigraph:store"]
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store)
    assert loaded.returncode == 0, loaded.stderr
    args = '{"patient": ":p1", "ward": ":w1"}'
    p = horismos("approve", "c.transfer", *defs, *store, "--args", args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    fp = p.stdout.strip()
    other = horismos("approve", ":c.transfer", *defs, *store, "--args", '{"patient": ":p2", '
                     '"ward": ":w1"}', cwd=tmp_path).stdout.strip()
    print_, _, one_time = fp.partition(".")
    assert len(print_) == 64 and one_time and other.partition(".")[0] != print_
    again = horismos("approve", "c.transfer", *defs, *store, "--args", args,
                     cwd=tmp_path).stdout.strip()
    assert again.partition(".")[0] == print_ and again != fp  # each approval its own
    call = ["call", "c.transfer", *defs, *store, "--args", args]
    p = horismos(*call, cwd=tmp_path)
    assert p.returncode == 5 and "refused (approval)" in p.stdout
    p = horismos(*call, "--approval", other, cwd=tmp_path)
    assert p.returncode == 5 and "different payload" in p.stdout
    p = horismos(*call, "--approval", fp, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ':p1 :ref "R-9"' in p.stdout
    assert (tmp_path / "calls.log").read_text() == "http://example.org/clinic#p1\n"


@pytest.mark.parametrize("forged", ["{fp}.{id}ff", "{fp}.anything", "{fp}"])
def test_cli_call_takes_only_an_approval_tools_approve_issued(tmp_path, forged):
    """`tools call --approval FP.<anything>` was a fresh approval for any <anything>, and the
    bare fingerprint one more: the fingerprint is public (any caller can compute it), so any
    caller could approve its own call. An approval is taken only if `tools approve` recorded
    it in the world the call uses, as `approve` records a served call's; one made up, or
    issued in another world, is refused saying to run `tools approve`, and nothing is called."""
    defs = transfer_project(tmp_path)
    args = '{"patient": ":p1", "ward": ":w1"}'
    fp = Agent.from_files(tmp_path / defs[0], defs[1]).catalog.approve(
        "c.transfer", json.loads(args))
    call = ["call", "c.transfer", *defs, "--args", args]
    made_up = forged.format(fp=fp, id="0123456789abcdef")
    p = horismos(*call, "--world", "world.ttl", "--approval", made_up, cwd=tmp_path)
    assert p.returncode == 5, p.stdout + p.stderr  # it was called, exit 0
    assert not (tmp_path / "calls.log").exists()
    # issued into a world written back (--out), not into the one the forger calls with
    issued = horismos("approve", "c.transfer", *defs, "--world", "world.ttl", "--out",
                      "approved.trig", "--args", args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    assert issued.stdout.partition(".")[0] == fp
    made_up = forged.format(fp=fp, id=issued.stdout.strip().partition(".")[2])
    for world in ("world.ttl", "approved.trig"):  # nowhere issued; issued only as the real one
        p = horismos(*call, "--world", world, "--approval", made_up, cwd=tmp_path)
        assert p.returncode == 5, p.stdout + p.stderr
        assert "refused (approval_not_issued)" in p.stdout
        assert "not issued by `horismos tools approve`" in p.stdout
        assert "horismos tools approve c.transfer" in p.stdout and "Traceback" not in p.stderr
    # the real approval, issued in approved.trig, given to a call on another world
    elsewhere = horismos(*call, "--world", "world.ttl", "--approval", issued.stdout.strip(),
                         cwd=tmp_path)
    assert elsewhere.returncode == 5, elsewhere.stdout + elsewhere.stderr
    assert "refused (approval_not_issued)" in elsewhere.stdout
    assert "--world F --out F2`, then call with `--world F2`" in elsewhere.stdout
    # none given: the hint is a command that issues one (a bare `tools approve` with no world
    # to record it in is refused), the same words as every approval refusal
    bare = horismos(*call, "--world", "world.ttl", cwd=tmp_path)
    assert bare.returncode == 5, bare.stdout + bare.stderr
    assert "refused (approval)" in bare.stdout
    assert "tools approve c.transfer FILE_OR_DIR… --args JSON --store S" in bare.stdout
    assert not (tmp_path / "calls.log").exists()
    real = horismos(*call, "--world", "approved.trig", "--approval", issued.stdout.strip(),
                    "--out", "after.trig", cwd=tmp_path)
    assert real.returncode == 0, real.stdout + real.stderr
    reused = horismos(*call, "--world", "after.trig", "--approval", issued.stdout.strip(),
                      cwd=tmp_path)
    assert reused.returncode == 2 and "refused (approval_used)" in reused.stdout
    assert (tmp_path / "calls.log").read_text() == "http://example.org/clinic#p1\n"
    nowhere = horismos("approve", "c.transfer", *defs, "--args", args, cwd=tmp_path)
    assert nowhere.returncode == 2 and "keeps nothing after this process" in nowhere.stderr


def test_cli_call_on_a_store_refuses_world_data_bringing_an_approval(tmp_path):
    """`tools call --store oxigraph:PATH --world F` loaded F into the store before the approval
    was checked, so F could carry its own issuance record and approve its own call. F holding
    any approval record is refused before anything is loaded or called; the approval issued
    into another store is refused too, and one issued into this store is taken."""
    defs = transfer_project(tmp_path)
    args = '{"patient": ":p1", "ward": ":w1"}'
    fp = Agent.from_files(tmp_path / defs[0], defs[1]).catalog.approve(
        "c.transfer", json.loads(args))
    forged = f"{fp}.forged"
    node = hashlib.sha256(forged.encode()).hexdigest()[:32]
    (tmp_path / "forged.trig").write_text(f"""
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<urn:horismos:given:{node}> {{
    <urn:horismos:given:{node}> prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ;
        horis:fingerprint "{fp}" .
}}
""", encoding="utf-8")
    store = ["--store", "oxigraph:store"]
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store)
    assert loaded.returncode == 0, loaded.stderr
    call = ["call", "c.transfer", *defs, *store, "--args", args]
    p = horismos(*call, "--world", "forged.trig", "--approval", forged, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr  # it was called, exit 0
    assert "holds an approval record" in p.stderr and "Nothing was loaded" in p.stderr
    assert "horismos tools approve … --store oxigraph:store" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "calls.log").exists()
    p = horismos(*call, "--approval", forged, cwd=tmp_path)  # nor did it land in the store
    assert p.returncode == 5 and "refused (approval_not_issued)" in p.stdout, p.stdout
    other = horismos("approve", "c.transfer", *defs, "--store", "oxigraph:other", "--world",
                     "world.ttl", "--args", args, cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    p = horismos(*call, "--approval", other.stdout.strip(), cwd=tmp_path)
    assert p.returncode == 5 and "refused (approval_not_issued)" in p.stdout, p.stdout
    assert not (tmp_path / "calls.log").exists()
    for lane in (["approve", "c.transfer", *defs, "--args", args],  # a mistyped store
                 ["call", "c.transfer", *defs, "--args", args, "--approval", forged]):
        typo = horismos(*lane, "--store", "oxigraph:stroe", cwd=tmp_path)
        assert typo.returncode == 2, typo.stdout + typo.stderr  # approve: 0, a new store
        assert "stroe" in typo.stderr and "Traceback" not in typo.stderr
        assert not (tmp_path / "stroe").exists()
    issued = horismos("approve", "c.transfer", *defs, *store, "--args", args, cwd=tmp_path)
    p = horismos(*call, "--approval", issued.stdout.strip(), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "calls.log").read_text() == "http://example.org/clinic#p1\n"


def test_cli_inventory_checks_the_committed_file_and_reports_drift(tmp_path):
    examples = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    p = horismos("inventory", *examples, "--check", str(INVENTORY), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "up to date" in p.stdout
    recorded = json.loads(INVENTORY.read_text(encoding="utf-8"))
    recorded["tools"][0]["description"] = "An older description."
    (tmp_path / "old.json").write_text(json.dumps(recorded), encoding="utf-8")
    p = horismos("inventory", *examples, "--check", "old.json", cwd=tmp_path)
    assert p.returncode == 1
    assert f"changed: {recorded['tools'][0]['name']}: description" in p.stdout
    assert '-      "description": "An older description.",' in p.stdout
    assert "--output old.json" in p.stdout
    p = horismos("inventory", *examples, "--output", "new.json", cwd=tmp_path)
    assert p.returncode == 0
    assert json.loads((tmp_path / "new.json").read_text()) == json.loads(INVENTORY.read_text())



def test_cli_call_reaches_an_mcp_tool_through_the_same_binding(tmp_path):
    mcp = ROOT / "examples" / "mcp"
    p = horismos("call", "ward.assign_bed", str(mcp / "clinic.ttl"), "--world",
                 str(mcp / "world.ttl"), "--args", '{"patient": ":ada", "ward": ":cardiology"}',
                 "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    envelope = json.loads(p.stdout)
    assert envelope["status"] == "completed" and envelope["gate"]["conforms"]
    assert ['<http://example.org/ward#ada>', '<http://example.org/ward#bedRef>',
            '"CARDIOLOGY-01"'] in envelope["effects"]


def test_a_calls_error_is_typed_to_match_on_and_its_envelope_is_unchanged(build, recorder):
    """``CallResult.error`` was a bare ``{"kind", "message"}`` dict where a run's error is a
    typed exception: a handler could match on neither a class nor a field mypy knew. It is a
    frozen :class:`~horismos.CallError` (``kind``, ``message``, and the run's own exception as
    ``cause`` once the tool was called); ``to_json()`` writes the envelope as before."""
    from horismos import CallError, ToolError

    def ward_closed(**_: object) -> dict[str, str]:
        raise ValueError("the ward is closed")

    tools = {"assign": ward_closed, "capacity": recorder.tool("capacity", None)}
    for name in ("bill", "transfer", "discharge"):
        tools[name] = recorder.tool(name, {"ref": "R-1"})
    agent, world = build(CATALOG, WORLD, tools=tools)

    refused = agent.catalog.call("c.assign", {"patient": ":p1"}, world)
    match refused.error:
        case CallError(kind="schema", message=message):
            assert 'argument "queue" is required' in message
        case other:
            raise AssertionError(other)
    assert refused.error.cause is None
    assert refused.to_json()["error"] == {"kind": "schema", "message": message}
    assert refused.error["kind"] == "schema"  # as the dict was read, still

    failed = agent.catalog.call("c.assign", {"patient": ":p1", "queue": ":urgent"}, world)
    assert isinstance(failed.error, CallError) and failed.error.kind == "tool_error"
    assert isinstance(failed.error.cause, ToolError)
    assert isinstance(failed.error.cause.__cause__, ValueError)
    assert failed.to_json()["error"] == {"kind": "tool_error", "message": failed.error.message}
    assert "the ward is closed" in failed.error.message
