"""A new user's walk on a fresh machine: the README's commands, the guides', and the slips a
first week makes (a store named, a module that does not import, files given in the wrong
place). Each test is a command that printed a traceback or did not say what to change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from forked import horismos_forked
from in_process import horismos_load
from listening import free_port
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from test_cli import ROOT, TOOLS, TRIAGE, WORLD, horismos, no_traceback

from horismos import Agent, UsageError, World


def test_run_all_on_the_memory_store_with_no_focus_node_ends_in_words(tmp_path: Path) -> None:
    """`run … --all --store memory` without --world: the definitions are the world, and hold
    no :Patient. rdflib read the empty VALUES of the batch's look-up as a list and raised
    AttributeError, a traceback, exit 1; the default store said "0 instances", exit 0."""
    p = horismos("run", *TRIAGE, *TOOLS, "--all", "--store", "memory", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 instances" in p.stdout
    assert "no node of :Patient (horis:focusType) is in the world" in p.stderr


def test_a_tools_module_calling_sys_exit_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """A tools file written as a script (`sys.exit(main())` not under `if __name__ ==
    "__main__"`): its exit code became the command's, silent — 3, which reads "waiting"."""
    (tmp_path / "script.py").write_text(
        "import sys\n\ndef assign_queue(patient, queue):\n    return {}\n\nsys.exit(3)\n"
    )
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "script.py", "--focus", ":patient42",
                 cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
    assert "--tools script.py: importing it called sys.exit(3) at " in p.stderr
    assert "script.py:6; fix the module" in p.stderr


def _bound_to(tmp_path: Path, module: str) -> str:
    """The triage workflow with its tools bound to ``module`` (for --allow-module)."""
    text = Path(TRIAGE[0]).read_text().replace("python:ehr_client.", f"python:{module}.")
    (tmp_path / "triage.ttl").write_text(text)
    return "triage.ttl"


def test_an_allowed_module_that_raises_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """`--allow-module M` where importing M raises (a setting it reads at import): the
    binding's import let the exception out, a traceback ending in the module's error."""
    (tmp_path / "ehr_live.py").write_text(
        "import os\n\nURL = os.environ['EHR_URL']\n\ndef assign_queue(patient, queue):\n"
        "    return {}\n"
    )
    p = horismos("run", _bound_to(tmp_path, "ehr_live"), TRIAGE[1], *WORLD,
                 "--allow-module", "ehr_live", "--focus", ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "importing 'ehr_live' raised KeyError: 'EHR_URL' at " in p.stderr
    assert "ehr_live.py:3; fix the module" in p.stderr


def test_an_allowed_module_calling_sys_exit_as_it_is_imported_is_said_exit_2(
    tmp_path: Path,
) -> None:
    """The same module exiting instead (`sys.exit("set EHR_URL")`): its text was printed
    and the command exited 1, "failed", before any step."""
    (tmp_path / "ehr_live.py").write_text("import sys\n\nsys.exit('set EHR_URL first')\n")
    p = horismos("run", _bound_to(tmp_path, "ehr_live"), TRIAGE[1], *WORLD,
                 "--allow-module", "ehr_live", "--focus", ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "importing 'ehr_live' called sys.exit('set EHR_URL first') at " in p.stderr


def test_a_trace_given_among_the_definitions_is_said_to_be_a_trace(tmp_path: Path) -> None:
    """`replay triage.ttl run.jsonl` (the trace second) and `graph run.jsonl …` read the
    trace as Turtle: "Turtle syntax error: expected directive or statement, at:
    {"approvals_bound":3,…" with a hint about ' .' and ';'."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for args in (["replay", TRIAGE[0], "run.jsonl"], ["graph", "run.jsonl", *TRIAGE],
                 ["validate", "run.jsonl", *TRIAGE]):
        p = horismos(*args, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == (1 if args[0] == "validate" else 2), p.stdout + p.stderr
        said = p.stdout + p.stderr
        assert "run.jsonl: error: a trace (one JSON event a line, what --trace writes), " \
               "not Turtle — give it where a trace goes: horismos replay run.jsonl " in said
        assert "Turtle syntax error" not in said


def test_an_rdf_file_given_as_a_trace_is_said_not_to_be_one(tmp_path: Path) -> None:
    """`trace show out.trig` (the run's --out for its --trace) said "not a JSON event
    (Expecting value)", the words of an edited trace."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--out",
                   "out.trig", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for args in (["trace", "show", "out.trig"], ["replay", "out.trig", *TRIAGE]):
        p = horismos(*args, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == (2 if args[0] == "trace" else 1), p.stdout + p.stderr
        assert "out.trig:1: not a trace: a trace is one JSON event a line (what --trace " \
               "writes), and this line is not JSON (Expecting value); an RDF file goes " \
               "among the definitions or to --world" in p.stdout + p.stderr


def test_a_one_line_file_of_another_kind_given_as_a_trace_is_said_not_to_be_one(
        tmp_path: Path) -> None:
    """A file of one line and no newline at its end (an N-Triples file of one triple, a
    note) was read as a trace whose first event was cut off as it was written: the words of
    a run killed mid-write, for a file that was never a trace."""
    (tmp_path / "one.nt").write_text("<urn:x:a> <urn:x:p> <urn:x:b> .")
    p = horismos("trace", "show", "one.nt", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "one.nt:1: not a trace: a trace is one JSON event a line" in p.stderr, p.stderr
    assert "cut off" not in p.stderr


def test_a_path_given_where_the_python_api_takes_a_world_says_how_to_make_one() -> None:
    """`agent.run("examples/triage/world.ttl", focus=…)`, the README's World.from_files
    left out: AttributeError: 'str' object has no attribute 'store', from inside the run
    (and from resume, approve, catalog.call, catalog.discover)."""
    agent = Agent.from_files(*TRIAGE)
    path = "examples/triage/world.ttl"
    said = (f"the world must be a horismos.World, not str {path!r}: World.from_files("
            '"world.ttl") reads files, World.open("oxigraph:PATH") opens a store')
    for call in (lambda: agent.run(path, focus=":patient42"),  # type: ignore[arg-type]
                 lambda: agent.resume(path, "abc"),  # type: ignore[arg-type]
                 lambda: agent.approve(path, "abc", "ff"),  # type: ignore[arg-type]
                 lambda: agent.catalog.call("ehr.assign_queue", {}, path),  # type: ignore[arg-type]
                 lambda: agent.catalog.discover("queue", path)):  # type: ignore[arg-type]
        with pytest.raises(UsageError) as e:
            call()
        assert str(e.value) == said


def test_a_tools_module_whose_functions_all_come_from_another_is_said(tmp_path: Path) -> None:
    """`--tools ehr_client.py` where the file imports its functions (or wraps each in a
    decorator of another module, without functools.wraps): nothing was registered, and
    each binding said "registered: none" and to register the function with --tools."""
    (tmp_path / "helpers.py").write_text(
        "def assign_queue(patient, queue):\n    return {'queueRef': 'Q-A-1'}\n\n"
        "def notify_nurse(patient, nurse, ref):\n    return {'assignedNurse': nurse}\n"
    )
    (tmp_path / "ehr_client.py").write_text("from helpers import assign_queue, notify_nurse\n")
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "ehr_client.py", "--focus", ":patient42",
                 cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(
        "horismos run: error: --tools ehr_client.py: it defines no function of its own: "
        "assign_queue, notify_nurse come from helpers (imported, or made there by a "
        "decorator), and --tools registers only the functions a module defines"), p.stderr
    assert "registered: none" not in p.stderr


def test_run_naming_no_workflow_of_several_says_so_before_any_warning(tmp_path: Path) -> None:
    """`run workflows/ --world … --focus :patient42`: three workflows and no --workflow. The
    warnings of all three (34, the ontology not given) came first, then the one line that
    said what to change."""
    p = horismos("run", str(Path(TRIAGE[0]).parent), *WORLD, *TOOLS, "--focus", ":patient42",
                 cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
    assert p.stderr == ("horismos run: error: name the workflow to run (declared: :Triage, "
                        ":ReviewResult, :Rebooking)\n")


def _no_dot(tmp_path: Path) -> dict[str, str]:
    """The environment with a PATH on which there is no Graphviz ``dot``."""
    empty = tmp_path / "bin"
    empty.mkdir()
    return {**os.environ, "PATH": str(empty)}


def test_replay_html_without_graphviz_writes_its_report_and_exits_by_the_replay(
    tmp_path: Path,
) -> None:
    """`replay run.jsonl … --html report.html` on a machine without Graphviz printed `same`,
    then exited 2 with no page, told to "use --format mermaid or dot", which replay has
    not: a CI job replaying its traces failed for want of a diagram."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    p = horismos_forked(tmp_path, "replay", "run.jsonl", *TRIAGE, "--html", "report.html",
                        env=_no_dot(tmp_path), timeout=120)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("same      run.jsonl:")
    assert p.stderr == ("note: report.html: written without the workflow diagram, which needs "
                        "Graphviz's dot program: install Graphviz (Debian/Ubuntu: apt-get "
                        "install graphviz; macOS: brew install graphviz)\n"
                        "wrote replay report of run.jsonl to report.html\n")
    assert "<svg" not in (tmp_path / "report.html").read_text()


def test_trace_view_without_graphviz_says_what_it_can_do_instead(tmp_path: Path) -> None:
    """`trace view run.jsonl DEFS -o run.html` without Graphviz said to "use --format
    mermaid or dot for text", an option trace view has not."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    p = horismos_forked(tmp_path, "trace", "view", "run.jsonl", *TRIAGE, "-o", "run.html",
                        env=_no_dot(tmp_path), timeout=120)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.endswith("install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: "
                             "brew install graphviz), or give no definitions, for the page "
                             "without its diagram\n"), p.stderr
    assert not (tmp_path / "run.html").exists()


def test_world_data_missing_a_dot_is_said_at_the_statement_that_lacks_it(tmp_path: Path) -> None:
    """`:patient45 :acuity :urgent` written without its '.': Oxigraph reads the next
    subject on and names the next line ("line 3 between columns 1 and 3: A dot is expected"),
    and the user was told to "fix the syntax at that line", a line with nothing wrong."""
    (tmp_path / "w.ttl").write_text(
        "@prefix : <http://example.org/ehr#> .\n:patient45 a :Patient ; :acuity :urgent\n"
        "\n# the next one\n  :patient46 a :Patient .\n"
    )
    p = horismos("run", *TRIAGE, "--world", "w.ttl", "--all", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert ("w.ttl:2: error: cannot read world data: a statement has no ' .' at its end (the "
            "parser read on to line 5) — end the statement on line 2 with ' .'") in p.stderr
    load = horismos("load", "w.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert (load.returncode, load.stderr) == (1, (
        "horismos load: w.ttl:2: error: cannot read world data: a statement has no ' .' at its "
        "end (the parser read on to line 5) — end the statement on line 2 with ' .'\n")
    ), load.stderr
    # a dot missing inside a line is said where the parser stopped, as before
    (tmp_path / "m.ttl").write_text("@prefix : <http://x/> .\n:a :b :c :d :e .\n")
    p = horismos("run", *TRIAGE, "--world", "m.ttl", "--all", cwd=tmp_path)
    assert "m.ttl:2: error: cannot read world data: Parser error at line 2" in p.stderr


def test_submit_waiting_with_no_worker_says_to_start_one(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    """`submit … --wait 2` with no worker taking tasks: "1 not started", then "see horismos
    instances", which lists no instance, since none was started."""
    horismos_load(tmp_path, server.store, WORLD[1])
    p = horismos_forked(tmp_path, "submit", *TRIAGE, "--store", server.store, "--broker",
                        broker.url, "--focus", ":patient42", "--wait", "2", timeout=60)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (1, "1 not started\n"), p.stdout + p.stderr
    assert p.stderr.endswith(
        f"horismos submit: none was started within 2s: is a worker taking tasks from "
        f"{broker.url}? Start one: horismos worker FILE_OR_DIR… --store {server.store} "
        f"--broker {broker.url} (--tools …)\n"), p.stderr


@pytest.mark.parametrize(("focus", "said"), [
    (":nurse7", " (it is :Nurse)"),
    (":patient24", ": the world holds nothing about it — check its spelling"),
])
def test_a_focus_not_of_the_focus_type_says_what_it_is(tmp_path: Path, focus: str,
                                                        said: str) -> None:
    """`--focus :patient24` (a typo of :patient42) and `--focus :nurse7` (a node of another
    workflow) both said only "is not a :Patient in the world"."""
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", focus, cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (2, (
        f"horismos run: error: focus {focus} is not a :Patient in the world{said}; give a "
        "node of the workflow's horis:focusType\n")), p.stdout + p.stderr


def test_hydrate_from_a_server_not_running_says_so_in_words(tmp_path: Path) -> None:
    """`hydrate examples/fhir/pharmacy.ttl --id Patient/p1 --out w.trig` before the README's
    EHR is started: "GET … failed: ConnectError: [Errno 111] Connection refused"."""
    port = free_port()
    text = (ROOT / "examples" / "fhir" / "pharmacy.ttl").read_text()
    (tmp_path / "pharmacy.ttl").write_text(text.replace("127.0.0.1:8089", f"127.0.0.1:{port}"))
    p = horismos_forked(tmp_path, "hydrate", "pharmacy.ttl", "--id", "Patient/p1", "--out",
                        "w.trig", env={**os.environ, "EHR_TOKEN": "demo-token"}, timeout=60)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (2, (
        f"horismos hydrate: error: adapter ehr: GET http://127.0.0.1:{port}/fhir/Patient/p1: "
        "the server cannot be reached: nothing listens at that address and port (the "
        "connection was refused); check the adapter's horis:baseUrl, and start the server if "
        "it is not running\n")), p.stderr


def test_an_mcp_server_by_url_not_running_says_so_in_words(tmp_path: Path) -> None:
    """The MCP example with its server at a `horis:url` not yet started: "could not start:
    ConnectError: All connection attempts failed — check its horis:command and horis:args,
    or horis:url", for a server declared by its URL alone."""
    port = free_port()
    text = (ROOT / "examples" / "mcp" / "clinic.ttl").read_text()
    declared = ':ward a horis:McpServer ;\n    horis:command "python" ;\n' \
               '    horis:args ( "-m" "ward_server" ) .'
    assert declared in text
    (tmp_path / "clinic.ttl").write_text(text.replace(
        declared, f':ward a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .'))
    p = horismos("run", "clinic.ttl", "--world", str(ROOT / "examples" / "mcp" / "world.ttl"),
                 "--all", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (2, (
        f'horismos run: error: ward.assign_bed (mcp://ward/assign_bed): MCP server "ward" '
        f"(http://127.0.0.1:{port}/mcp) could not start: it cannot be reached: nothing listens "
        "at that address and port (the connection was refused) — check its horis:url, and "
        "start the server if it is not running\n")), p.stderr


def test_graph_given_a_trace_of_another_workflow_says_so(tmp_path: Path) -> None:
    """`graph workflows/lab_review.ttl ontologies/lab.ttl --format svg --trace run.jsonl`,
    run.jsonl a triage run's: exit 0, the lab workflow drawn with "0 started", "ran ×0"."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lab = [str(ROOT / "workflows" / "lab_review.ttl"), str(ROOT / "ontologies" / "lab.ttl")]
    p = horismos("graph", *lab, "--format", "svg", "--trace", "run.jsonl", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", (
        "horismos graph: error: --trace run.jsonl records the workflow "
        "<http://example.org/ehr#Triage>, which these definitions do not declare; give the "
        "files it was recorded with\n")), p.stdout[:200] + p.stderr
    both = [*lab, *TRIAGE, "--format", "svg", "--trace", "run.jsonl"]
    p = horismos("graph", *both, "--workflow", ":ReviewResult", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (2, (
        "horismos graph: error: --trace run.jsonl records :Triage, which is not drawn "
        "(--workflow :ReviewResult); draw it with --workflow :Triage\n")), p.stderr
    p = horismos("graph", *both, cwd=tmp_path)  # every workflow drawn: its counts land
    assert p.returncode == 0 and "1 started" in p.stdout, p.stderr


def test_an_unknown_allow_class_is_said_as_the_option_it_was_given_by(tmp_path: Path) -> None:
    """`run … --allow readonly`: the error said "allow readonly:", no `--`, its words shared
    with Python's ``allow=``; each now says what its user wrote."""
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--allow", "readonly", "--focus",
                 ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", (
        "horismos run: error: --allow readonly: a policy names side-effect classes: ReadOnly, "
        "HostStateWrite, ExternalCommit; did you mean ReadOnly?\n")), p.stdout + p.stderr
    agent = Agent.from_files(*TRIAGE)
    with pytest.raises(UsageError, match=r"^allow=readonly: a policy names side-effect cl"):
        agent.run(World.from_files(WORLD[1]), focus=":patient42", allow="readonly")


def test_replay_given_the_files_of_another_workflow_says_which_to_give(tmp_path: Path) -> None:
    """`replay run.jsonl workflows/lab_review.ttl ontologies/lab.ttl`, run.jsonl a triage
    run's: "DIVERGED … (definitions changed since recording)", exit 1, as if the triage
    files had been edited; the files given were the wrong ones. An edit is still a
    divergence."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lab = [str(ROOT / "workflows" / "lab_review.ttl"), str(ROOT / "ontologies" / "lab.ttl")]
    said = ("horismos replay: error: run.jsonl records the workflow "
            "<http://example.org/ehr#Triage>, which these definitions do not declare; give "
            "the files it was recorded with\n")
    p = horismos("replay", "run.jsonl", *lab, cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", said), p.stdout + p.stderr
    text = Path(TRIAGE[0]).read_text()
    (tmp_path / "renamed.ttl").write_text(text.replace(":Triage a", ":Intake a"))
    p = horismos("replay", "run.jsonl", "renamed.ttl", TRIAGE[1], cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", said), p.stdout + p.stderr
    (tmp_path / "edited.ttl").write_text(text.replace(":onDuty true", ":onDuty false"))
    p = horismos("replay", "run.jsonl", "edited.ttl", TRIAGE[1], cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("DIVERGED") and "(definitions changed since recording)" in (
        p.stdout), p.stdout


def test_serve_given_a_port_and_no_transport_says_to_add_transport_http(tmp_path: Path) -> None:
    """`serve … --port 8765` without `--transport http`: 8765 is the default port, so the
    option given could not be told from none, and the server silently spoke stdio — to no
    client, while the user pointed one at http://127.0.0.1:8765/mcp. `--transport http`
    with no --port still listens on 8765."""
    p = horismos("serve", *TRIAGE, *TOOLS, "--port", "8765", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", (
        "horismos serve: error: --port 8765: --host and --port are for --transport http; add "
        "--transport http to serve over HTTP (over stdio, the default, the client starts this "
        "process and talks on its stdin and stdout)\n")), p.stdout + p.stderr
    p = horismos("serve", *TRIAGE, *TOOLS, "--host", "127.0.0.1", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
    assert p.stderr.startswith("horismos serve: error: --host 127.0.0.1: --host and --port "
                               "are for --transport http; add --transport http"), p.stderr
    served = subprocess.Popen([sys.executable, "-m", "horismos", "serve", *TRIAGE, *TOOLS,
                               "--transport", "http"], cwd=tmp_path, text=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        assert served.stderr is not None
        said = ""
        while "8765" not in said and (line := served.stderr.readline()):
            said = line  # the address announced, or 8765 in use here: either names it
    finally:
        served.kill()
        served.wait()
    assert said.startswith(("horismos serve: MCP over streamable HTTP at "
                            "http://127.0.0.1:8765/mcp", "horismos serve: error: --host "
                            "127.0.0.1 --port 8765: cannot listen there")), said


def test_trace_show_names_iris_as_the_other_commands_do(tmp_path: Path) -> None:
    """`trace show run.jsonl` printed `QueuePatient  ehr.assign_queue(patient=patient42,
    queue=urgent)` where run printed `:QueuePatient  :ehr.assign_queue(patient=:patient42,
    queue=:urgent)`: bare local names, of no namespace a reader can tell. Given the
    definitions it names by their prefixes; without, a trace records none, so the namespace
    of its workflow is named `:`, and said so under the header."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    p = horismos("trace", "show", "run.jsonl", *TRIAGE, cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("run of :Triage for 1 focus node(s), recorded "), lines[0]
    assert lines[3].startswith("  ran by process run@"), lines[3]
    assert lines[4] == "  policy allows HostStateWrite, ReadOnly", lines[4]
    assert lines[5].startswith("instance ") and lines[5].endswith(" for :patient42"), lines[5]
    assert lines[6].split("  ")[2:4] == [
        ":QueuePatient", ":ehr.assign_queue(patient=:patient42, queue=:urgent)"], lines[6]
    p = horismos("trace", "show", "run.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "  : is <http://example.org/ehr#>, the namespace of its workflow" in p.stdout
    assert (":QueuePatient  :ehr.assign_queue(patient=:patient42, queue=:urgent)"
            in p.stdout), p.stdout
    assert " patient42" not in p.stdout and "=urgent" not in p.stdout, p.stdout


def test_replay_names_the_diverging_step_as_the_other_commands_do(tmp_path: Path) -> None:
    """`replay run.jsonl edited.ttl …` said `step NotifyNurse for patient42` where run and
    trace show print `:NotifyNurse` and `:patient42`: the same step read two ways, a bare
    name of no namespace. It names them by the prefixes of the definitions given."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--trace",
                   "run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    text = Path(TRIAGE[0]).read_text()
    (tmp_path / "edited.ttl").write_text(text.replace(":onDuty true", ":onDuty false"))
    p = horismos("replay", "run.jsonl", "edited.ttl", TRIAGE[1], cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("DIVERGED  run.jsonl: event 3 (line 4), step :NotifyNurse "
                               "for :patient42: reads was null when recorded"), p.stdout


def test_run_without_tools_lists_every_binding_it_cannot_call(tmp_path: Path) -> None:
    """`run triage.ttl ehr.ttl --world … --focus :patient42` (no --tools) said one binding,
    `triage.ttl:37` notify_nurse, where validate lists both: a user registered that one, ran
    again, and met the next. It lists each, with its file and line, as validate does."""
    p = horismos("run", *TRIAGE, *WORLD, "--focus", ":patient42", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert lines[0] == "horismos run: error: 2 python: bindings of :Triage cannot be called:"
    assert [line.split(": ")[0:3] for line in lines[1:]] == [
        [f"  {TRIAGE[0]}:20", "error", ":ehr.assign_queue"],
        [f"  {TRIAGE[0]}:37", "error", ":ehr.notify_nurse"],
    ], p.stderr
    assert 'binding "python:ehr_client.notify_nurse" of ehr.notify_nurse: it is neither ' \
        "registered" in lines[2], lines[2]
