"""The docs cannot drift from what they describe, and a newcomer can finish the README.

The generated reference pages (CLI, Python API, the ``horis:`` vocabulary through pyLODE) are
made again from the code and the ontology and compared with the checked-in files; every
relative link in the README and docs/ leads to a file that exists. The commands the README and
the guide show are read out of the pages and run as written, as subprocesses in a copy of the
example files, and what they print is held to what the pages show.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from forked import horismos_forked
from oxigraph_server import OxigraphServer

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("page", sorted(GENERATE.PAGES))
def test_a_generated_reference_page_matches_what_the_code_makes_now(page: str) -> None:
    path = ROOT / "docs" / "reference" / page
    assert path.is_file(), f"docs/reference/{page} is missing; write it with: {GENERATE.REGENERATE}"
    made = GENERATE.PAGES[page]()
    assert path.read_text(encoding="utf-8") == made, (
        f"docs/reference/{page} differs from what {GENERATE.PAGES[page].__name__}() makes from "
        f"the code and the ontology now; regenerate it with: {GENERATE.REGENERATE}")


def test_the_vocabulary_page_documents_every_term_of_the_ontology() -> None:
    from rdflib import Graph

    ontology = Graph().parse(GENERATE.ONTOLOGY)
    terms = {str(s) for s in ontology.subjects() if str(s).startswith("https://w3id.org/horismos#")}
    page = (ROOT / "docs" / "reference" / "vocabulary.html").read_text(encoding="utf-8")
    undocumented = sorted(t for t in terms if t not in page)
    assert not undocumented, f"terms missing from docs/reference/vocabulary.html: {undocumented}"


def test_the_cli_page_lists_every_command() -> None:
    from horismos._cli import COMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    missing = [c.name for c in COMMANDS if f"## horismos {c.name}\n" not in page]
    assert not missing, f"commands missing from docs/reference/cli.md: {missing}"


def test_the_readme_is_an_introduction_not_a_reference() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, (
        f"README.md has {len(lines)} lines; keep it to 150 (what it is, the two commands, one "
        "example, where to read on) and move the rest to a page under docs/")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _anchors(page: Path) -> set[str]:
    """The anchors a Markdown page's headings get on GitHub: lower case, punctuation dropped,
    spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(document: Path) -> None:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        page = document.parent / path if path else document
        if not page.exists() or (anchor and page.suffix == ".md"
                                 and anchor not in _anchors(page)):
            broken.append(target)
    assert not broken, f"{document.relative_to(ROOT)} links to missing pages or headings: {broken}"


def _python_samples() -> list[tuple[str, int, str]]:
    """Each ```python block of the README and docs/: its page, its line, its code."""
    samples = []
    for document in _documents():
        text = document.read_text(encoding="utf-8")
        for block in re.finditer(r"```python\n(.*?)```", text, re.S):
            line = text.count("\n", 0, block.start()) + 2
            samples.append((str(document.relative_to(ROOT)), line, block.group(1)))
    return samples


@pytest.mark.parametrize("page,line,code", _python_samples(),
                         ids=[f"{page}:{line}" for page, line, _ in _python_samples()])
def test_every_python_sample_is_python_a_reader_can_paste(page: str, line: int,
                                                           code: str) -> None:
    """A sample is pasted into a file or a prompt as it is: one that does not compile (an
    ``await`` outside any function) fails before it shows anything."""
    try:
        compile(code, f"{page}:{line}", "exec")
    except SyntaxError as error:
        pytest.fail(f"{page}, the Python sample at line {line}, is not Python: {error}")


# -- the commands the pages show, run as written ------------------------------------------------


def _shell_lines(page: str) -> list[str]:
    """Each command of the page's ```sh blocks: continuations joined, comments dropped, and
    of a README line that installs first (``… && .venv/bin/horismos run …``) the last part."""
    text = (ROOT / page).read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("&&")[-1].strip()
            if line:
                lines.append(line)
    return lines


def _argv(line: str) -> list[str]:
    return shlex.split(line, comments=True)[1:]


def _shown(page: str, after: str) -> str:
    """The first unlabelled ``` block of ``page`` after the text ``after``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    block = re.search(r"```\n(.*?)```", text[text.index(after):], re.S)
    assert block is not None, f"{page}: no output block after {after!r}"
    return block.group(1)


def _ids_out(text: str) -> str:
    """Instance ids are new on every run."""
    return re.sub(r"(?m)(^\[[0-9a-f]{8}\]|^[0-9a-f]{8}(?=  ))", "ID", text)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example files where the README runs its commands: a clone's root."""
    root = tmp_path_factory.mktemp("clone")
    for folder in ("workflows", "ontologies", "examples"):
        shutil.copytree(ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert line.split()[0].endswith("horismos"), line
    done = horismos_forked(cwd, *_argv(line), timeout=120)
    assert "Traceback" not in done.stdout + done.stderr, f"{line}\n{done.stderr}"
    return done


def test_the_readme_commands_print_what_the_readme_shows(clone: Path) -> None:
    first, *then = [c for c in _shell_lines("README.md") if "pytest" not in c]
    done = _run(first, clone)
    shown = _shown("README.md", "The first command above runs it")
    assert done.returncode == 0, done.stderr
    assert _ids_out(done.stdout) == _ids_out(shown), (
        f"README.md's first command printed\n{done.stdout}\nwhere the README shows\n{shown}")
    validate, run_all, replay = then
    assert _run(validate, clone).returncode == 0
    assert _run(run_all, clone).returncode == 4  # :patient44 has no acuity: blocked
    done = _run(replay, clone)
    assert (done.returncode, done.stdout.split()[0]) == (0, "same"), done.stdout + done.stderr


def test_the_readme_python_example_runs(clone: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    done = subprocess.run([sys.executable, "-c", code.group(1) + "\nprint(run.status)\n"],
                          cwd=clone, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["completed"], done.stderr


def test_the_first_workflow_guide_ends_with_the_table_it_shows(clone: Path) -> None:
    page = "docs/guide/first-workflow.md"
    lines = _shell_lines(page)
    run_all = next(c for c in lines if " run " in c)
    done = _run(run_all, clone)
    table = _shown(page, "and ends with a table")
    assert done.returncode == 4
    assert _ids_out(done.stdout).endswith(_ids_out(table)), done.stdout
    assert (clone / "world.trig").is_file() and (clone / "triage.jsonl").is_file()
    graph = next(c for c in lines if " graph " in c)
    assert _run(graph, clone).stdout.startswith("flowchart TD")


def test_the_proposals_guide_waits_then_resumes_with_the_id_the_run_printed(clone: Path) -> None:
    run, resume = _shell_lines("docs/guide/proposals-and-waits.md")
    done = _run(run, clone)
    assert done.returncode == 3, done.stdout + done.stderr  # Brian's booking waits
    waiting = re.search(r"^\[([0-9a-f]{8})\] :booking2  :AskOperator  waiting", done.stdout, re.M)
    assert waiting is not None, done.stdout
    resume = re.sub(r"--instance \w+", f"--instance {waiting.group(1)}", resume)
    done = _run(resume, clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ":airline.rebook(booking=:booking2, flight=:VS3)  completed" in done.stdout


def test_the_tool_catalog_guide_commands_run(clone: Path) -> None:
    listed, discovered, called, inventory = _shell_lines("docs/guide/tool-catalog.md")
    assert '"name": "ehr.assign_queue"' in _run(listed, clone).stdout
    assert _run(discovered, clone).stdout.startswith("1. ehr.assign_queue  executable")
    done = _run(called, clone)
    assert done.returncode == 0 and "completed" in done.stdout.splitlines()[0], done.stdout
    assert _run(inventory, clone).returncode == 0


def _console_commands(page: str, heading: str) -> list[str]:
    """The ``$ horismos …`` commands of the first ```console block under ``heading``:
    continuations joined, a trailing ``&`` (run in the background) and comments dropped."""
    text = (ROOT / page).read_text(encoding="utf-8")
    block = re.search(r"```console\n(.*?)```", text[text.index(heading):], re.S)
    assert block is not None, f"{page}: no console block under {heading!r}"
    commands = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        if line.startswith("$ horismos "):
            commands.append(line.removeprefix("$ ").split("#")[0].strip().removesuffix("&"))
    return commands


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """The example files in a folder of the test's own, for pages whose commands write a
    trace the README's already took the name of."""
    for folder in ("workflows", "ontologies", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_stores_page_runs_two_workers_on_the_world_it_loads(fresh: Path,
                                                               server: OxigraphServer) -> None:
    """docs/stores.md "Many workers on one world": the world loaded into the server is the
    one the two runs work on (it loaded a ward.ttl no page makes)."""
    load, *runs = [c.replace("http://127.0.0.1:7878", server.url)
                   for c in _console_commands("docs/stores.md", "## Many workers on one world")]
    done = _run(load, fresh)
    assert done.returncode == 0, done.stderr
    first, second = (_run(c, fresh) for c in runs)
    assert first.returncode == 4, first.stdout + first.stderr  # :patient44 blocks
    assert "3 instances: 1 blocked, 2 completed" in first.stdout
    assert (second.returncode, second.stdout.split()) == (0, ["0", "instances"]), second.stderr


def _times_out(text: str) -> str:
    """Instance ids, clock times and durations are new on every run."""
    text = re.sub(r"(?m)^instance [0-9a-f]{8}", "instance ID", text)
    text = re.sub(r"\d\d:\d\d:\d\d\.\d{3}", "TIME", text)
    return re.sub(r"\d+\.\d ms", "MS", text)


def test_the_replay_guide_records_replays_and_reads_as_it_shows(fresh: Path) -> None:
    """docs/guide/replay-in-ci.md "Record, replay, read", run as written: each replay prints
    the line the page shows or says, ``trace show`` the timeline it shows."""
    page = "docs/guide/replay-in-ci.md"
    run, replayed, copy, folder, show, export, *_ = _shell_lines(page)
    assert copy.startswith("cp run.jsonl traces/"), copy
    assert _run(run, fresh).returncode == 4  # :patient44 is blocked
    shown = _shown(page, "A trace that replays the same")
    done = _run(replayed, fresh)
    assert (done.returncode, done.stdout) == (0, shown.splitlines()[0] + "\n"), done.stdout
    (fresh / "traces").mkdir()
    shutil.copy(fresh / "run.jsonl", fresh / "traces")
    done = _run(folder, fresh)
    said = "(definitions changed since recording)"  # as the page says under the block
    assert done.returncode == 0 and done.stdout.startswith("same      traces/run.jsonl: "), (
        done.stdout + done.stderr)
    assert done.stdout.rstrip().endswith(said), done.stdout
    timeline = _shown(page, "`trace show` names IRIs as `run` does")
    done = _run(show, fresh)
    assert done.returncode == 0, done.stderr
    assert _times_out(timeline) in _times_out(done.stdout), done.stdout
    assert _run(export, fresh).returncode == 0
    from rdflib import Graph
    assert len(Graph().parse(fresh / "run.prov.ttl")) > 0
    # its Python, pasted beside the trace: each field reads as its comment says
    import contextlib

    (sample,) = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"),
                           re.S)
    scope: dict[str, object] = {}
    with contextlib.chdir(fresh):
        exec(compile(sample, f"{page}, its Python sample", "exec"), scope)
    report = scope["report"]
    assert report.diverged is False and report.first_divergence is None  # type: ignore[attr-defined]
    assert isinstance(report.steps, int) and report.steps > 0  # type: ignore[attr-defined]
    assert report.complete is True  # type: ignore[attr-defined]


def test_the_viewer_page_commands_write_their_pages(fresh: Path) -> None:
    """docs/viewer.md: each command, run as written over the traces the README and the replay
    guide record (``monday.jsonl`` and ``tuesday.jsonl`` two runs of yours), writes its page."""
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot draws the diagrams; the page says to install it")
    record = next(c for c in _shell_lines("README.md") if " --trace run.jsonl" in c)
    for name in ("run.jsonl", "monday.jsonl", "tuesday.jsonl"):
        assert _run(record.replace("run.jsonl", name), fresh).returncode == 4
    (fresh / "traces").mkdir()
    shutil.copy(fresh / "run.jsonl", fresh / "traces")
    for line in _shell_lines("docs/viewer.md"):
        done = _run(line, fresh)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        written = fresh / _argv(line)[_argv(line).index("--html" if "--html" in line else "-o") + 1]
        page = written / "run.html" if written.is_dir() else written
        assert page.read_text(encoding="utf-8").startswith(
            "<svg" if page.suffix == ".svg" else "<!DOCTYPE html>"), line


def test_the_first_workflow_python_runs_and_saves_its_trace(fresh: Path) -> None:
    """docs/guide/first-workflow.md "The same from Python", pasted into a file and run."""
    text = (ROOT / "docs" / "guide" / "first-workflow.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text[text.index("## The same from Python"):], re.S)
    assert code is not None
    source = code.group(1) + "\nprint(run.status, len(run.steps))\n"
    done = subprocess.run([sys.executable, "-c", source], cwd=fresh, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.split() == ["completed", "2"], done.stderr
    assert (fresh / "trace.jsonl").is_file()


def test_the_first_workflow_web_service_answers_an_event_delivered_twice_once(
        tmp_path: Path) -> None:
    """docs/guide/first-workflow.md "In a web service, one instance per event", pasted into
    app.py beside the pharmacy workflow it was measured on: it named asyncio, JSONResponse,
    NotHeld, agent and world without defining them, and had no app to serve."""
    text = (ROOT / "docs" / "guide" / "first-workflow.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text[text.index("In a web service"):], re.S)
    assert code is not None
    for name in ("pharmacy.ttl", "pharmacy_tools.py"):
        shutil.copy(ROOT / "benchmarks" / "pharmacy" / name, tmp_path / name)
    (tmp_path / "app.py").write_text(code.group(1), encoding="utf-8")
    (tmp_path / "rx.ttl").write_text(
        "@prefix : <http://example.org/pharmacy#> .\n"
        ':rx1 a :Prescription ; :rxNumber "RX-1" ; :refillsLeft 2 ; :patient :p1 .\n'
        ":p1 a :Patient .\n", encoding="utf-8")
    assert horismos_forked(tmp_path, "load", "rx.ttl", "--store", "oxigraph:world",
                           timeout=120).returncode == 0
    client = ("import json\nfrom starlette.testclient import TestClient\nfrom app import app\n"
              "with TestClient(app) as c:\n"
              "    for rx in ('rx1', 'rx1', 'nope'):\n"
              "        print(json.dumps(c.post('/event', json={'rx': rx}).json()))\n")
    done = subprocess.run([sys.executable, "-c", client], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    first, again, unknown = (json.loads(line) for line in done.stdout.splitlines())
    assert first["status"] == "completed", done.stdout + done.stderr
    assert again == first  # delivered again: answered its instance as it stands
    assert "is not a :Prescription" in unknown["error"], unknown


def test_the_catalog_page_approves_then_calls_as_it_shows(tmp_path: Path) -> None:
    """docs/catalog.md "approve": the two commands run as written, over the `:ehr.transfer` the
    page declares and the function and store it says; the call went without `--tools` and
    was refused (binding), exit 5, and a retry with the same approval is refused."""
    page = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    declared = re.search(r"```turtle\n(.*?)```", page[page.index("## Declaring"):], re.S)
    assert declared is not None
    (tmp_path / "defs.ttl").write_text(
        "@prefix : <http://example.org/ehr#> .\n@prefix horis: <https://w3id.org/horismos#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        ":Patient a owl:Class . :Ward a owl:Class .\n"
        ":consented a owl:DatatypeProperty ; rdfs:range xsd:boolean .\n"
        ":bedRef a owl:DatatypeProperty ; rdfs:range xsd:string .\n" + declared.group(1),
        encoding="utf-8")
    (tmp_path / "transfer.py").write_text('def transfer(patient, ward): return {"bedRef": "B-1"}\n')
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/ehr#> .\n"
                                    ":p1 a :Patient ; :consented true . :w1 a :Ward .\n")
    assert horismos_forked(tmp_path, "load", "w.ttl", "--store", "oxigraph:world",
                           timeout=120).returncode == 0
    approve, call = _shell_lines("docs/catalog.md")[-4:-2]
    approve = approve.removeprefix("fp=$(").removesuffix(")")
    fp = _run(approve, tmp_path)
    assert fp.returncode == 0, fp.stderr
    call = call.replace('"$fp"', fp.stdout.strip())
    done = _run(call, tmp_path)
    assert done.returncode == 0 and ": completed" in done.stdout, done.stdout + done.stderr
    again = _run(call, tmp_path)
    assert again.returncode == 2 and "refused (approval_used)" in again.stdout, again.stdout


def test_the_bindings_guide_mcp_example_runs(fresh: Path) -> None:
    """docs/guide/bindings.md: the ward server over stdio, one step bound to its tool."""
    (line,) = _shell_lines("docs/guide/bindings.md")
    done = _run(line, fresh)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 instances: 2 completed" in done.stdout
    assert (fresh / "mcp.jsonl").is_file()


def test_the_approval_walkthrough_waits_is_approved_and_calls(fresh: Path) -> None:
    """docs/guide/doing-no-harm.md "Policy and approval in runs", as the page says to try it:
    the run waits, ``approve`` takes the id and fingerprint it printed, ``resume`` calls."""
    page = "docs/guide/doing-no-harm.md"
    triage = (fresh / "workflows" / "triage.ttl").read_text(encoding="utf-8")
    tool = ':ehr.assign_queue a horis:Tool ;\n'
    assert tool in triage and "copy `workflows/triage.ttl` to `defs.ttl`" in (
        ROOT / page).read_text(encoding="utf-8")
    (fresh / "defs.ttl").write_text(
        triage.replace(tool, tool + "    horis:requiresApproval true ;\n"), encoding="utf-8")
    run, approve, resume = _shell_lines(page)
    done = _run(run, fresh)
    assert done.returncode == 3, done.stdout + done.stderr
    short = re.search(r"^\[([0-9a-f]{8})\] :patient42  :QueuePatient  .*  waiting$", done.stdout,
                      re.M)
    fingerprint = re.search(r"^    Fingerprint: ([0-9a-f]{64})$", done.stdout, re.M)
    assert short is not None and fingerprint is not None, done.stdout
    for line in (approve, resume):
        line = line.replace(" ID ", f" {short.group(1)} ").replace(" HEX ",
                                                                   f" {fingerprint.group(1)} ")
        done = _run(line, fresh)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    assert ":ehr.assign_queue(patient=:patient42, queue=:urgent)  completed" in done.stdout
    assert (fresh / "done.trig").is_file()


def test_the_durability_guides_failed_row_is_what_instances_prints(fresh: Path) -> None:
    """docs/guide/durability.md "Operating instances": a tool raising for :patient43, the
    table's failed row says why as ``horismos instances`` does. The page showed the error
    without its kind, ``tool_error:``, which the text above it says leads."""
    (fresh / "raising.py").write_text(
        "def assign_queue(patient, queue):\n"
        "    if patient.endswith('patient43'):\n"
        "        raise ConnectionError('EHR refused the connection: queue service down')\n"
        "    return {'queueRef': 'Q-URGENT-1'}\n\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    return {'assignedNurse': nurse}\n", encoding="utf-8")
    triage = (fresh / "workflows" / "triage.ttl").read_text(encoding="utf-8")
    (fresh / "triage.ttl").write_text(triage.replace("python:ehr_client.", "python:"),
                                      encoding="utf-8")
    store = ("--store", "oxigraph:store")
    assert _run("horismos load examples/triage/world.ttl --store oxigraph:store",
                fresh).returncode == 0
    defs = ("triage.ttl", "ontologies/ehr.ttl")
    ran = horismos_forked(fresh, "run", *defs, *store, "--tools", "raising.py", "--all",
                          timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # an instance failed
    listed = horismos_forked(fresh, "instances", *defs, *store, timeout=120)
    (printed,) = [r for r in listed.stdout.splitlines() if ":patient43" in r]
    (shown,) = [r for r in _shown("docs/guide/durability.md", "`InstanceSummary` records")
                .splitlines() if ":patient43" in r]
    assert printed.split("  ")[-1] == shown.split("  ")[-1], (printed, shown)


def test_the_catalog_page_hands_the_tools_to_a_model_as_functions_it_accepts(
        fresh: Path) -> None:
    """docs/catalog.md "Handing the tools to a model", against a local model server speaking
    OpenAI's wire format, which refuses a function name with a dot as the real API does: the
    tools offered by their short names (``ehr.assign_queue``) were a 400 for the whole
    request. The sample maps the names, and the call the model asks for lands, guarded."""
    from servers.llm_server import LlmServer

    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    start = text.index("## Handing the tools to a model")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert code is not None
    functions = (ROOT / "examples" / "triage" / "ehr_client.py").read_text(encoding="utf-8")
    source = (functions + code.group(1)
              + "\nprint(json.dumps([json.loads(m['content'])['status'] for m in messages"
                " if m['role'] == 'tool']))\n")
    script = [{"tool_calls": [
        {"name": "ehr__assign_queue", "arguments": {"patient": ":patient42", "queue": ":urgent"}},
        {"name": "ehr__assign_queue", "arguments": {"patient": 42, "queue": ":urgent"}},
    ]}]
    with LlmServer(script, key="sk-test") as model:
        done = subprocess.run(
            [sys.executable, "-c", source], cwd=fresh, capture_output=True, text=True,
            timeout=120, env={**os.environ, "OPENAI_BASE_URL": f"{model.url}/v1",
                              "OPENAI_API_KEY": "sk-test"})
        offered = [t["function"]["name"] for t in model.requests[0]["body"]["tools"]]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["completed", "refused"]
    assert sorted(offered) == ["ehr__assign_queue", "ehr__notify_nurse"]


def test_the_catalog_pages_python_lists_discovers_calls_and_checks_as_it_says(
        fresh: Path) -> None:
    """docs/catalog.md "Python", pasted after the functions it names: it ran nowhere, so a
    renamed keyword or field would have reached readers first. Each line runs; the call
    completes and writes its trace; the inventory it compares with is the one shipped."""
    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text[text.index("\n## Python\n"):], re.S)
    assert code is not None
    functions = (ROOT / "examples" / "triage" / "ehr_client.py").read_text(encoding="utf-8")
    source = (functions + code.group(1)
              + "\nimport json\n"
              + "print(json.dumps([found[0].availability, result.status, drift, fp[:8]]))\n")
    done = subprocess.run([sys.executable, "-c", source], cwd=fresh,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ehr.assign_queue" in done.stdout  # the list's lines
    availability, status, drift, _ = json.loads(done.stdout.splitlines()[-1])
    assert (availability, status, drift) == ("executable", "completed", []), done.stdout
    assert (fresh / "call.jsonl").stat().st_size > 0
