"""Hostile definitions and bad input: only code the user named runs, mistakes are found before
the first step, results are bounded, secrets stay out of what is printed and stored.

CLI cases run the real program in a scratch folder; API cases a real Agent and World.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EX, PREFIXES, TRIAGE, Build, Recorder
from forked import horismos_forked

from horismos import Agent, AuthoringError, ToolError

# A tool that hands its argument to a shell, written as a hostile definitions file would.
SHELL = PREFIXES + """
:Job a owl:Class .
:command a owl:DatatypeProperty ; rdfs:domain :Job ; rdfs:range xsd:string .
:t.run a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "command" ; horis:type xsd:string ] ] ;
    horis:sideEffect horis:ReadOnly ;
    horis:binding "python:os.system" .
:Jobs a horis:Workflow ; horis:focusType :Job ; horis:start :Go .
:Go a horis:ActionStep ; horis:tool :t.run ; horis:requires "?this :command ?command ." .
"""


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout


# -- 1. a Turtle file cannot choose the code it runs ------------------------------------------

@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    marker = tmp_path / "pwned"
    (tmp_path / "sec.ttl").write_text(SHELL)
    (tmp_path / "w.ttl").write_text(PREFIXES + f':j1 a :Job ; :command "touch {marker}" .\n')
    # a module in the current directory that leaves a mark when imported
    (tmp_path / "evil.py").write_text(
        f"open({str(tmp_path / 'imported')!r}, 'w').close()\n"
        "def f(command):\n    return None\n")
    return tmp_path


def test_a_python_binding_to_a_module_nobody_allowed_runs_nothing(hostile: Path) -> None:
    p = horismos("run", "sec.ttl", "--world", "w.ttl", "--all", cwd=hostile)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--allow-module os" in p.stderr and "cannot choose the code" in p.stderr
    assert not (hostile / "pwned").exists()
    no_traceback(p)

    call = horismos("tools", "call", "t.run", "sec.ttl", "--args",
                    f'{{"command": "touch {hostile / "pwned"}"}}', cwd=hostile)
    assert call.returncode == 5, call.stdout + call.stderr  # refused: binding
    assert "refused (binding)" in call.stdout
    assert not (hostile / "pwned").exists()


def test_listing_validating_and_discovering_import_nothing(hostile: Path) -> None:
    (hostile / "sec.ttl").write_text(SHELL.replace("python:os.system", "python:evil.f"))
    listing = horismos("tools", "list", "sec.ttl", cwd=hostile)
    assert listing.returncode == 0, listing.stderr
    assert "catalog_only" in listing.stdout and "model_callable" not in listing.stdout
    for args in (("validate", "sec.ttl"), ("validate", "sec.ttl", "--tools", "nosuch.py"),
                 ("tools", "discover", "run a command", "sec.ttl"),
                 ("tools", "inventory", "sec.ttl")):
        horismos(*args, cwd=hostile)
    assert not (hostile / "imported").exists()


def test_the_catalog_imports_nothing_and_leaves_sys_path_alone(hostile: Path,
                                                             monkeypatch) -> None:
    monkeypatch.chdir(hostile)
    (hostile / "sec.ttl").write_text(SHELL.replace("python:os.system", "python:this.s"))
    path, modules = list(sys.path), set(sys.modules)
    agent = Agent.from_files(hostile / "sec.ttl")
    (entry,) = agent.catalog.list()
    assert entry.readiness == "catalog_only"
    assert sys.path == path and "this" not in set(sys.modules) - modules


def test_an_allowed_module_is_reached(hostile: Path) -> None:
    (hostile / "sec.ttl").write_text(SHELL.replace("python:os.system", "python:evil.f"))
    p = horismos("run", "sec.ttl", "--world", "w.ttl", "--all", "--allow-module", "evil",
                 cwd=hostile)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (hostile / "imported").exists() and not (hostile / "pwned").exists()
    listing = horismos("tools", "list", "sec.ttl", "--allow-module", "evil", cwd=hostile)
    assert "model_callable" in listing.stdout


def test_allow_modules_in_python_covers_submodules(build: Build) -> None:
    defs = TRIAGE.replace("python:assign", "python:json.decoder.scanstring")
    agent, _ = build(defs)
    (entry,) = agent.catalog.list()
    assert entry.readiness == "catalog_only"
    allowed = Agent(agent.definitions, allow_modules=["json"])
    assert allowed.catalog.list()[0].readiness == "model_callable"


# -- 15.3 found before the first step ----------------------------------------------------------

TWO_STEPS = TRIAGE.replace(":Queue a horis:ActionStep ;", ":Queue a horis:ActionStep ; "
                           "horis:next :Stamp ;") + """
:t.stamp a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "note" ; horis:type xsd:string ] ] ;
    horis:binding "python:stamp" .
:Stamp a horis:ActionStep ; horis:tool :t.stamp ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_a_required_argument_nothing_gives_is_refused_before_any_call(
        build: Build, recorder: Recorder) -> None:
    agent, world = build(TWO_STEPS, tools={"assign": recorder.tool("assign", {"ref": "R-1"}),
                                           "stamp": recorder.tool("stamp")})
    with pytest.raises(AuthoringError) as e:
        agent.run(world, focus=str(EX.p1))
    (p,) = e.value.problems
    assert 'argument "note" of :t.stamp is required' in p.message and p.line is not None
    assert recorder.calls == []


def test_a_function_that_does_not_fit_its_arguments_is_refused_before_any_call(
        build: Build, recorder: Recorder) -> None:
    def stamp(patient, memo):  # the Turtle says "note"
        return None

    defs = TWO_STEPS.replace('horis:var "this" ] .', 'horis:var "this" ] ; '
                             'horis:requires "?this :ref ?note ." .')
    agent, world = build(defs, tools={"assign": recorder.tool("assign", {"ref": "R-1"}),
                                      "stamp": stamp})
    with pytest.raises(ToolError, match=r"no parameter 'note'.*did you mean 'memo'"):
        agent.run(world, focus=str(EX.p1))
    assert recorder.calls == []


@pytest.mark.parametrize(("signature", "declared", "fits"), [
    ("patient, queue", "", True),
    ("**kw", "", True),
    ("patient, queue, extra=1", "", True),
    ("queue", "sent", True),                  # patient is horis:sent false: never passed
    ("patient, queue", "sent", False),        # ... so a parameter for it must have a default
    ("patient, queue=None", "optional", True),
    ("patient, queue", "optional", False),    # queue may be left out: needs a default
    ("patient, /, queue", "", False),         # positional-only: arguments are passed by name
    ("patient", "", False),                   # no parameter for queue
])
def test_a_signature_is_held_to_sent_optional_and_kwargs(signature, declared, fits) -> None:
    from horismos._bindings.python import signature_problems
    from horismos._model import Arg, Tool

    ns: dict = {}
    exec(f"def f({signature}): pass", ns)
    args = (Arg("patient", EX.Patient, True, sent=declared != "sent"),
            Arg("queue", EX.AcuityLevel, True, optional=declared == "optional"))
    tool = Tool(EX.t, "t", None, None, args, None, "python:f", 1.0)
    assert (signature_problems(tool, ns["f"]) == []) is fits


def test_validate_with_tools_reports_binding_mistakes_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "wf.ttl").write_text(PREFIXES + TWO_STEPS.replace(
        '"python:assign"', '"python:asign"').replace(
        'horis:var "this" ] .', 'horis:var "this" ] ; horis:requires "?this :ref ?note ." .'))
    (tmp_path / "mytools.py").write_text(
        "def assign(patient, queue):\n    return {'ref': 'R-1'}\n\n"
        "def stamp(patient, memo):\n    return None\n")
    ontology = str(Path(__file__).parent / "fixtures" / "engine" / "clinic.ttl")
    plain = horismos("validate", "wf.ttl", ontology, cwd=tmp_path)
    assert plain.returncode == 0, plain.stdout
    p = horismos("validate", "wf.ttl", ontology, "--tools", "mytools.py", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = (tmp_path / "wf.ttl").read_text().splitlines()
    at = {n for n, line in enumerate(lines, 1) if "horis:binding" in line}
    reported = [line for line in p.stdout.splitlines() if ": error: " in line]
    assert len(reported) == 2, p.stdout
    assert any("did you mean 'assign'" in r for r in reported)
    assert any("no parameter 'note'" in r and "did you mean 'memo'" in r for r in reported)
    assert {int(r.split(":")[1]) for r in reported} <= at
    no_traceback(p)


# -- 13.4 no traceback; outputs known writable before anything acts --------------------------

ROOT = Path(__file__).resolve().parent.parent
TRIAGE_FILES = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
TRIAGE_RUN = [*TRIAGE_FILES, "--world", str(ROOT / "examples" / "triage" / "world.ttl"),
              "--focus", ":patient42"]


@pytest.fixture
def counted(tmp_path: Path) -> Path:
    """The triage tools, each call leaving a line in calls.txt."""
    (tmp_path / "ehr_client.py").write_text(
        "def _mark(name):\n"
        f"    open({str(tmp_path / 'calls.txt')!r}, 'a').write(name + '\\n')\n\n"
        "def assign_queue(patient, queue):\n    _mark('assign')\n"
        "    return {'queueRef': 'Q-URGENT-1'}\n\n"
        "def notify_nurse(patient, nurse, ref):\n    _mark('notify')\n"
        "    return {'assignedNurse': nurse}\n")
    return tmp_path


@pytest.mark.parametrize("output", [
    ("--out", "/nonexistent/x.nq"), ("--trace", "missing/run.jsonl"), ("--trace", "."),
    ("--out", "."),
])
def test_an_output_that_cannot_be_written_is_refused_before_any_step(counted: Path,
                                                                     output) -> None:
    if output == ("--out", "."):
        output = ("--out", str(counted / "folder.nq"))
        (counted / "folder.nq").mkdir()
    p = horismos("run", *TRIAGE_RUN, "--tools", "ehr_client.py", *output, cwd=counted)
    assert p.returncode == 2, p.stdout + p.stderr
    assert output[0] in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (counted / "calls.txt").exists()
    no_traceback(p)
    call = horismos("tools", "call", "ehr.assign_queue", *TRIAGE_FILES, "--tools",
                    "ehr_client.py", "--world", str(ROOT / "examples" / "triage" / "world.ttl"),
                    "--args", '{"patient": ":patient42", "queue": ":urgent"}', *output,
                    cwd=counted)
    assert call.returncode == 2 and not (counted / "calls.txt").exists()
    no_traceback(call)


def test_trace_show_on_a_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe{}\n")
    p = horismos("trace", "show", "bin.jsonl", cwd=tmp_path)
    assert p.returncode == 2 and "not UTF-8" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    no_traceback(p)


@pytest.mark.parametrize("secret", ["", "short"])
def test_an_empty_or_short_trace_key_is_refused_before_any_step(
        counted: Path, secret: str, monkeypatch) -> None:
    """``HORISMOS_TRACE_HMAC_KEY=`` (a secret a deployment did not fill in) was taken as no
    key: the trace was written unsigned without a word. A short one was taken, and a key of a
    few characters is found by trying them all."""
    monkeypatch.setenv("HORISMOS_TRACE_HMAC_KEY", secret)
    p = horismos("run", *TRIAGE_RUN, "--tools", "ehr_client.py", "--trace", "t.jsonl",
                 cwd=counted)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "HORISMOS_TRACE_HMAC_KEY is set but" in p.stderr and "at least 16 bytes" in p.stderr
    assert not (counted / "calls.txt").exists() and not (counted / "t.jsonl").exists()
    no_traceback(p)
    p = horismos("serve", *TRIAGE_FILES, "--tools", "ehr_client.py", cwd=counted)
    assert p.returncode == 2 and "HORISMOS_TRACE_HMAC_KEY is set but" in p.stderr, p.stderr
    no_traceback(p)  # refused as it starts, not by every call once serving


def test_an_ill_typed_literal_in_the_world_is_one_warning_line(counted: Path) -> None:
    (counted / "bad.ttl").write_text(
        '@prefix : <http://example.org/ehr#> .\n'
        '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
        ':patient42 :queueRef "abc"^^xsd:integer .\n')  # read: the gate judges queueRef
    p = horismos("run", *TRIAGE_RUN, "--world", "bad.ttl", "--tools", "ehr_client.py",
                 cwd=counted)
    no_traceback(p)
    warned = [line for line in p.stderr.splitlines() if "ill-typed" in line]
    assert len(warned) == 1 and '"abc"^^<http://www.w3.org/2001/XMLSchema#integer>' in warned[0], (
        p.stderr)


# -- 13.6 secrets stay out of output, traces and the world -----------------------------------

SECRET_URL = "http://ops:hunter2@127.0.0.1:{port}/good?token=s3cr3t&ward=7"
HTTP_TOOL = PREFIXES + """
:t.remote a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "{url}" .
:Remote a horis:Workflow ; horis:focusType :Patient ; horis:start :Call .
:Call a horis:ActionStep ; horis:tool :t.remote ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
CLINIC = str(Path(__file__).parent / "fixtures" / "engine" / "clinic.ttl")


def leaked(*texts: str) -> bool:
    return any(s in t for t in texts for s in ("hunter2", "s3cr3t"))


@pytest.mark.parametrize(("header", "said"), [
    # a token pasted where the variable's name goes: refused, and never printed
    ('horis:name "Authorization" ; horis:fromEnv "Bearer s3cr3t-token"',
     "horis:fromEnv names the environment variable"),
    # not a header name: the request could not be sent, yet was reported as maybe acted on
    ('horis:name "Author ization:" ; horis:fromEnv "API_TOKEN"',
     "horis:name of a horis:header is an HTTP header name"),
])
def test_a_header_is_a_name_and_a_variable_checked_at_validate(
    tmp_path: Path, header: str, said: str
) -> None:
    (tmp_path / "remote.ttl").write_text(HTTP_TOOL.replace(
        "{url}", "http://127.0.0.1:9/x").replace(
        "horis:binding", f"horis:header [ {header} ] ;\n    horis:binding"))
    check = horismos("validate", "remote.ttl", CLINIC, cwd=tmp_path)
    assert check.returncode == 1 and said in check.stdout, check.stdout + check.stderr
    assert "remote.ttl:" in check.stdout
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    run = horismos("run", "remote.ttl", CLINIC, "--world", "w.ttl", "--all", cwd=tmp_path)
    assert run.returncode == 2 and said in run.stderr
    assert not leaked(check.stdout, check.stderr, run.stdout, run.stderr)
    no_traceback(run)


def test_credentials_in_a_binding_url_are_refused_and_never_shown(tmp_path: Path) -> None:
    from servers.http_server import serve

    server, base, received = serve()
    try:
        port = base.rsplit(":", 1)[1]
        (tmp_path / "remote.ttl").write_text(HTTP_TOOL.replace(
            "{url}", SECRET_URL.format(port=port)))
        (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        check = horismos("validate", "remote.ttl", CLINIC, cwd=tmp_path)
        assert check.returncode == 1, check.stdout
        assert "carries credentials (user info, query value \"token\")" in check.stdout
        assert "horis:fromEnv" in check.stdout and "remote.ttl:" in check.stdout
        run = horismos("run", "remote.ttl", CLINIC, "--world", "w.ttl", "--all",
                       "--trace", "t.jsonl", "--out", "out.nq", cwd=tmp_path)
        assert run.returncode == 2, run.stdout + run.stderr
        assert "carries credentials" in run.stderr and received.requests == []
        listing = horismos("tools", "list", "remote.ttl", CLINIC, "--format", "json",
                           cwd=tmp_path)
        assert "***@127.0.0.1" in listing.stdout and "token=***" in listing.stdout
        stored = [p.read_text() for p in tmp_path.glob("*.*") if p.suffix in (".jsonl", ".nq")]
        assert not leaked(check.stdout, run.stdout, run.stderr, listing.stdout, *stored)
    finally:
        server.shutdown()


def test_a_store_url_with_credentials_is_masked_in_errors(tmp_path: Path) -> None:
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    p = horismos("load", "w.ttl", "--store", "sparql:http://ops:hunter2@127.0.0.1:1/",
                 cwd=tmp_path)
    assert p.returncode == 1 and "cannot be reached" in p.stderr, p.stderr
    assert "***@127.0.0.1:1" in p.stderr and not leaked(p.stderr)


def test_redaction_keeps_the_endpoint_and_masks_only_secrets() -> None:
    from horismos._redact import redact_text, url_credentials

    text = "POST https://a:b@api.example.org/v1?api_key=K1&page=2&sessionId=S9 failed"
    assert redact_text(text) == ("POST https://***@api.example.org/v1?api_key=***&page=2"
                                 "&sessionId=*** failed")
    assert url_credentials("https://api.example.org/v1?page=2") == []


# -- 13.2 every binding's result is bounded ----------------------------------------------------

BIG = "x" * (2 << 20)  # 2 MiB: past the default cap of 1 MiB


def test_a_python_result_past_the_cap_is_refused_and_not_traced(build: Build,
                                                               tmp_path: Path) -> None:
    from horismos import ResultTooLarge

    agent, world = build(TRIAGE, tools={"assign": lambda patient, queue: {"ref": BIG}})
    run = agent.run(world, focus=str(EX.p1), trace=tmp_path / "big.jsonl")
    (rec,) = run.steps
    assert isinstance(rec.error, ResultTooLarge) and rec.error.limit == 1 << 20
    assert "horis:maxResultBytes" in str(rec.error)
    assert (EX.p1, EX.ref, None) not in world.graph
    assert (tmp_path / "big.jsonl").stat().st_size < 100_000


def test_a_tool_may_declare_a_larger_cap(build: Build) -> None:
    defs = TRIAGE.replace('horis:timeout "2s" .', 'horis:timeout "20s" ; '
                          'horis:maxResultBytes 3000000 .')
    big = "R-" + "7" * (2 << 20)
    agent, world = build(defs, tools={"assign": lambda patient, queue: {"ref": big}})
    run = agent.run(world, focus=str(EX.p1))
    assert run.status == "completed", run.error


def test_an_http_answer_past_the_tools_cap_is_not_read(tmp_path: Path) -> None:
    from servers.http_server import serve

    from horismos import ResultTooLarge, World

    server, base, _ = serve()
    try:
        defs = HTTP_TOOL.replace("{url}", f"{base}/good").replace(
            "horis:binding", "horis:maxResultBytes 8 ;\n    horis:binding")
        (tmp_path / "d.ttl").write_text(defs)
        (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        agent = Agent.from_files(tmp_path / "d.ttl", CLINIC)
        run = agent.run(World.from_files(tmp_path / "w.ttl"), focus=str(EX.p1))
        assert isinstance(run.steps[0].error, ResultTooLarge), run.steps[0].error
        assert "more than 8 bytes" in str(run.steps[0].error)
    finally:
        server.shutdown()


MCP_SERVER = Path(__file__).parent / "servers" / "mcp_server.py"


def test_an_mcp_answer_past_the_cap_is_dropped_as_it_arrives(tmp_path: Path) -> None:
    from horismos import ResultTooLarge, World

    defs = PREFIXES + f"""
:clinic a horis:McpServer ; horis:command "python" ; horis:args ( "{MCP_SERVER.as_posix()}" ) .
:Job a owl:Class .
:size a owl:DatatypeProperty .
:t.huge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "size" ; horis:type xsd:integer ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:key "queueRef" ;
                                   horis:type xsd:string ] ] ;
    horis:binding "mcp://clinic/huge" ; horis:timeout "60s" .
:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Big .
:Big a horis:ActionStep ; horis:tool :t.huge ; horis:requires "?this :size ?size ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    (tmp_path / "d.ttl").write_text(defs)
    # 8 MB each way round: far past the 1 MiB cap (and the session's 2 MiB message cap)
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient ; :size 8000000 .\n"
                                    ":p2 a :Patient ; :size 8000000 .\n")
    agent = Agent.from_files(tmp_path / "d.ttl", CLINIC)
    run = agent.run(World.from_files(tmp_path / "w.ttl"), all=True,
                    trace=tmp_path / "t.jsonl")
    errors = [i.steps[0].error for i in run.instances]
    assert len(errors) == 2 and all(isinstance(e, ResultTooLarge) for e in errors), errors
    assert "horis:maxResultBytes" in str(errors[0])
    assert (tmp_path / "t.jsonl").stat().st_size < 100_000  # the same session served both


# -- 13.3 only well-formed literals land -------------------------------------------------------

NUMBERS = PREFIXES + """
:t.measure a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :dose ; horis:type xsd:decimal ; horis:optional true ] ;
        horis:asserts [ horis:property :ratio ; horis:type xsd:double ; horis:optional true ] ;
        horis:asserts [ horis:property :note ; horis:type xsd:string ; horis:optional true ;
                        horis:many true ] ] ;
    horis:binding "python:measure" .
:Measure a horis:Workflow ; horis:focusType :Patient ; horis:start :M .
:M a horis:ActionStep ; horis:tool :t.measure ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize(("answer", "words"), [
    ({"dose": float("nan")}, "only xsd:double and xsd:float have NaN"),
    ({"dose": float("inf")}, "only xsd:double and xsd:float have NaN"),
    ({"dose": "NaN"}, "is not an xsd:decimal"),
    ({"note": b"\xff\xfe"}, "bytes are not text"),
    ({"note": "a\x00b"}, "U+0000"),
    ({"note": [{"a": 1}]}, "inside a value cannot be one literal"),
    ({3: "x"}, "keys are its fields' names"),
    ({"note": object()}, "is not a value RDF can hold"),
])
def test_a_value_rdf_cannot_carry_is_a_gate_rejection(tmp_path: Path, answer, words) -> None:
    from horismos import GateRejected, World

    (tmp_path / "d.ttl").write_text(NUMBERS)
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    agent = Agent.from_files(tmp_path / "d.ttl", CLINIC, tools={"measure": lambda patient: answer})
    world = World.from_files(tmp_path / "w.ttl")
    run = agent.run(world, focus=str(EX.p1))
    (rec,) = run.steps
    assert rec.status == "rejected" and isinstance(rec.error, GateRejected), rec.error
    assert words in str(rec.error)
    assert not set(world.graph.predicates(EX.p1)) - {EX.ref, __import__("rdflib").RDF.type}


def test_sets_spread_and_non_finite_doubles_read_back_from_out(tmp_path: Path) -> None:
    (tmp_path / "d.ttl").write_text(NUMBERS)
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n:p2 a :Patient .\n")
    (tmp_path / "measure.py").write_text(
        "def measure(patient):\n"
        "    inf = patient.endswith('p1')\n"
        "    return {'ratio': float('-inf') if inf else float('nan'), 'note': {'a', 'b'}}\n")
    for out in ("out.nq", "out.trig"):
        p = horismos("run", "d.ttl", CLINIC, "--world", "w.ttl", "--all", "--tools",
                     "measure.py", "--out", out, cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
        text = (tmp_path / out).read_text()
        assert '"-INF"^^' in text and '"NaN"^^' in text, text
        from rdflib import Dataset

        ds = Dataset()
        ds.parse(tmp_path / out)
        ratios = sorted(repr(o.toPython()) for _, _, o, _ in ds.quads((None, EX.ratio, None)))
        assert ratios == ["-inf", "nan"]  # read back as the values they were
        notes = sorted(str(o) for _, _, o, _ in ds.quads((EX.p1, EX.note, None)))
        assert notes == ["a", "b"]


# -- 13.8 outbound HTTP under the user's control -----------------------------------------------

def test_a_metadata_address_is_refused_unless_named(tmp_path: Path) -> None:
    from horismos import World

    (tmp_path / "d.ttl").write_text(HTTP_TOOL.replace(
        "{url}", "http://169.254.169.254/latest/meta-data/iam"))
    (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    agent = Agent.from_files(tmp_path / "d.ttl", CLINIC)
    with pytest.raises(ToolError, match="link-local or cloud metadata address"):
        agent.run(World.from_files(tmp_path / "w.ttl"), focus=str(EX.p1))
    assert agent.catalog.list()[0].readiness == "catalog_only"
    assert agent.catalog.list()[0].dependencies["hosts"] == ["169.254.169.254"]
    named = Agent(agent.definitions, allow_hosts=["169.254.169.254"])
    assert named.catalog.list()[0].readiness == "model_callable"
    wildcard = Agent(agent.definitions, allow_hosts=["169.254.0.0/16"])
    assert wildcard.catalog.list()[0].readiness == "model_callable"  # a network names it too
    for url in ("http://[fd00:ec2::254]/", "http://metadata.google.internal/computeMetadata/",
                "http://[::ffff:169.254.169.254]/"):
        from horismos._bindings.reach import Hosts

        assert "metadata" in (Hosts().problem(url) or ""), url


def test_an_allow_list_per_run_and_per_project(tmp_path: Path) -> None:
    from servers.http_server import serve

    server, base, received = serve()
    try:
        (tmp_path / "d.ttl").write_text(HTTP_TOOL.replace("{url}", f"{base}/good"))
        (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        run = ("run", "d.ttl", CLINIC, "--world", "w.ttl", "--all")
        refused = horismos(*run, "--allow-host", "api.example.org", cwd=tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "host 127.0.0.1 is not in the allowed hosts (api.example.org)" in refused.stderr
        assert received.requests == []
        listing = horismos("tools", "list", "d.ttl", CLINIC, "--format", "json",
                           "--allow-host", "*.example.org", cwd=tmp_path)
        assert '"hosts": [\n        "127.0.0.1"' in listing.stdout
        assert '"readiness": "catalog_only"' in listing.stdout
        (tmp_path / "pyproject.toml").write_text(
            '[tool.horismos]\nallow-hosts = ["127.0.0.0/8"]\n')
        allowed = horismos(*run, "--allow-host", "api.example.org", cwd=tmp_path)
        assert "allowed hosts" not in allowed.stderr, allowed.stderr
        assert len(received.requests) == 1  # reached (its answer is for another test)
    finally:
        server.shutdown()


def test_wake_holds_to_the_projects_allowed_hosts(tmp_path: Path) -> None:
    """The timer lane (``wake``, run from cron) reaches no host the project's allow-hosts leaves
    out, as ``run`` and ``resume`` do; ``--allow-host`` widens it as there."""
    from servers.http_server import serve

    server, base, received = serve()
    try:
        (tmp_path / "d.ttl").write_text(HTTP_TOOL.replace("{url}", f"{base}/good").replace(
            ":Remote a horis:Workflow ; horis:focusType :Patient ; horis:start :Call .",
            ":Remote a horis:Workflow ; horis:focusType :Patient ; horis:start :Pause .\n"
            ':Pause a horis:WaitStep ; horis:reason "a second" ; horis:wake horis:Timer ;\n'
            "    horis:delivery horis:Silent ;\n"
            '    horis:timeout "1s" ; horis:onTimeout :Call ; horis:next :Call .'))
        (tmp_path / "w.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        (tmp_path / "elsewhere").mkdir()
        started = horismos("run", "../d.ttl", CLINIC, "--world", "../w.ttl", "--all", "--out",
                           "../after.trig", cwd=tmp_path / "elsewhere")
        assert started.returncode == 3, started.stdout + started.stderr  # waiting
        (tmp_path / "pyproject.toml").write_text(
            '[tool.horismos]\nallow-hosts = ["api.example.org"]\n')
        time.sleep(1.2)
        wake = ("wake", "d.ttl", CLINIC, "--world", "after.trig", "--out", "woke.trig")
        refused = horismos(*wake, cwd=tmp_path)
        assert refused.returncode == 4, refused.stdout + refused.stderr  # blocked, not woken
        assert "host 127.0.0.1 is not in the allowed hosts (api.example.org)" in refused.stderr
        no_traceback(refused)
        assert received.requests == []
        allowed = horismos(*wake, "--allow-host", "127.0.0.1", cwd=tmp_path)
        assert "allowed hosts" not in allowed.stderr, allowed.stderr
        assert len(received.requests) == 1
    finally:
        server.shutdown()


# -- 13.5 traces tamper-evident as documented -------------------------------------------------

def _rehash(lines: list[str], sign=None) -> list[str]:
    """A consistent forgery: every ``prev`` and ``hash`` recomputed after an edit."""
    import hashlib
    import json

    prev, out = "sha256:" + "0" * 64, []
    for raw in lines:
        event = {k: v for k, v in json.loads(raw).items() if k not in ("hash", "sig")}
        event["prev"] = prev
        text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        event["hash"] = prev = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        if sign is not None:
            event["sig"] = sign(prev)
        out.append(json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    return out


@pytest.fixture
def recorded(build: Build, recorder: Recorder, tmp_path: Path):
    def record(name: str = "run.jsonl") -> Path:
        agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
        agent.run(world, focus=str(EX.p1), trace=tmp_path / name)
        return tmp_path / name
    return record


def test_data_after_the_end_event_and_missing_hashes_are_refused(recorded) -> None:
    from horismos import TraceTampered, read_trace

    path = recorded()
    text = path.read_text()
    path.write_text(text + text.splitlines()[1] + "\n")
    with pytest.raises(TraceTampered, match="after the end event"):
        read_trace(path)
    import json

    stripped = [json.dumps({k: v for k, v in json.loads(line).items() if k != "hash"})
                for line in text.splitlines()]
    path.write_text("\n".join(stripped) + "\n")
    with pytest.raises(TraceTampered, match="no hash"):
        read_trace(path)


def test_an_unkeyed_chain_does_not_stop_a_consistent_forgery_a_key_does(
        recorded, monkeypatch) -> None:
    from horismos import TraceTampered, read_trace

    monkeypatch.setenv("HORISMOS_TRACE_HMAC_KEY", "correct horse battery staple")
    path = recorded()
    assert all(e["sig"].startswith("hmac-sha256:") for e in read_trace(path))
    forged = _rehash([line.replace('"R-1"', '"R-2"') for line in path.read_text().splitlines()])
    path.write_text("\n".join(forged) + "\n")
    with pytest.raises(TraceTampered, match=r"not signed with an hmac-sha256 key, .* requires "
                       r"every event to be signed: .* HORISMOS_TRACE_HMAC_KEY unset only if"):
        read_trace(path)  # the forger had no key: refused, saying what the key asks
    monkeypatch.delenv("HORISMOS_TRACE_HMAC_KEY")
    assert read_trace(path)  # documented: without a key, a recomputed chain reads


def test_an_ed25519_signed_trace_verifies_with_the_public_key_only(
        recorded, monkeypatch, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from horismos import TraceTampered, read_trace

    key = Ed25519PrivateKey.generate()
    (tmp_path / "k.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    (tmp_path / "k.pub").write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    monkeypatch.setenv("HORISMOS_TRACE_SIGNING_KEY", str(tmp_path / "k.pem"))
    path = recorded()
    monkeypatch.delenv("HORISMOS_TRACE_SIGNING_KEY")
    monkeypatch.setenv("HORISMOS_TRACE_VERIFY_KEY", str(tmp_path / "k.pub"))
    assert read_trace(path)[-1]["type"] == "end"
    other = Ed25519PrivateKey.generate()
    forged = _rehash(path.read_text().splitlines(), sign=lambda d: "ed25519:" + __import__(
        "base64").b64encode(other.sign(d.encode())).decode())
    path.write_text("\n".join(forged) + "\n")
    with pytest.raises(TraceTampered, match="does not verify"):
        read_trace(path)
