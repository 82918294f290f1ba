"""The command line as users run it: subprocesses in scratch folders, exit codes per SPEC §4."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from forked import Popen, horismos_forked
from in_process import horismos_in_process, horismos_load
from leave_files import WAITING
from rdflib import Dataset, Literal, Namespace

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
TOOLS = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
EX = Namespace("http://example.org/ehr#")


SCRIPT = Path(sys.executable).parent / "horismos"


def horismos(*args: str, cwd: Path, script: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m horismos ARGS`` (or the console script) in ``cwd``; both streams as text."""
    if not script:
        return horismos_forked(cwd, *args, timeout=120)
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout


def sigint_at(handler: signal.Handlers) -> Callable[[], None]:
    """A ``preexec_fn``: the child starts with SIGINT at ``handler``, whatever this process
    has. A shell starts a background job (``pytest … &`` in a script, as a load generator)
    with SIGINT ignored, and its children inherit that: a Ctrl-C test then interrupted
    nothing, and failed only when the suite was started so."""
    def preexec() -> None:
        signal.signal(signal.SIGINT, handler)

    return preexec


def test_console_script_validates_the_example(tmp_path: Path) -> None:
    assert SCRIPT.exists(), "pip install -e . declares the horismos console script"
    p = horismos("validate", *TRIAGE, cwd=tmp_path, script=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 tools, 1 workflow, 2 steps: valid" in p.stdout


def test_validate_broken_file_exits_1_naming_file_and_line(tmp_path: Path) -> None:
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    bad = tmp_path / "bad.ttl"
    bad.write_text(text.replace("horis:tool :ehr.notify_nurse ;", "horis:tool :ehr.notify_nurz ;"))
    line = next(i for i, t in enumerate(bad.read_text().splitlines(), 1)
                if "horis:tool :ehr.notify_nurz" in t)  # the line of the broken reference
    p = horismos("validate", "bad.ttl", TRIAGE[1], cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"bad.ttl:{line}: error: :NotifyNurse:" in p.stdout
    assert ":ehr.notify_nurz" in p.stdout
    assert "invalid: 1 error" in p.stdout
    no_traceback(p)


def test_run_one_focus_by_curie_completes_and_prints_each_step(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient43", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    queue = next(ln for ln in lines if ":QueuePatient" in ln)
    assert queue.startswith("[") and ":patient43" in queue
    assert ":ehr.assign_queue(patient=:patient43, queue=:routine)" in queue
    assert queue.endswith("completed, 2 effects")
    assert any(':ehr.notify_nurse(nurse=:nurse7, patient=:patient43, ref="Q-ROUTINE-1")' in ln
               for ln in lines if ":NotifyNurse" in ln)
    assert ":Triage :patient43: completed after 2 steps" in p.stdout


def test_run_blocked_focus_exits_4_and_names_the_pattern(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient44", cwd=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr
    assert "blocked at :QueuePatient" in p.stdout
    assert "?this :acuity ?queue" in p.stdout


def test_run_all_says_of_each_blocked_instance_why_it_is_blocked(tmp_path: Path) -> None:
    """Each blocked line names its own focus and the pattern that failed for it. The reason
    was cached by the record's id(), which Python hands to the next record once a finished
    instance's are freed: now and then a patient was shown another's reason."""
    (tmp_path / "defs.ttl").write_text("""
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
:Patient a owl:Class . :acuity a owl:ObjectProperty . :ward a owl:ObjectProperty .
:seen a owl:DatatypeProperty .
:t.see a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :seen ; horis:value horis:now ] ] ;
    horis:binding "python:see" ; horis:idempotent true .
:See a horis:Workflow ; horis:focusType :Patient ; horis:start :Look .
:Look a horis:ActionStep ; horis:tool :t.see ;
    horis:requires "?this :acuity ?a . ?this :ward ?w ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/clinic#> .\n" + "".join(
        f":p{i} a :Patient ; {':acuity :high' if i % 2 else ':ward :w1'} .\n"
        for i in range(300)))
    (tmp_path / "tools.py").write_text("def see(patient):\n    return {}\n")
    p = horismos("run", "defs.ttl", "--world", "world.ttl", "--tools", "tools.py", "--all",
                 cwd=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr
    lines = [ln for ln in p.stdout.splitlines() if "blocked: ?this" in ln]
    assert len(lines) == 300
    for line in lines:
        focus = line.split()[1]
        missing = ":ward" if int(focus[2:]) % 2 else ":acuity"
        reason = f"?this {missing} ?{missing[1]} . has no solution for ?this = {focus}"
        assert line.endswith(reason), line


def test_run_all_prints_a_summary_table(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", cwd=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr  # the worst instance is blocked
    assert "3 instances: 1 blocked, 2 completed" in p.stdout
    rows = {ln.split()[1]: ln.split()[2:4] for ln in p.stdout.splitlines()
            if ln[10:18] == ":patient"}  # after the instance id
    assert rows == {":patient42": ["completed", ":NotifyNurse"],
                    ":patient43": ["completed", ":NotifyNurse"],
                    ":patient44": ["blocked", ":QueuePatient"]}
    assert p.stderr == ""  # no progress bar when stderr is not a terminal
    quiet = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--quiet", cwd=tmp_path)
    assert quiet.stdout.startswith("3 instances: 1 blocked, 2 completed\nid "), quiet.stdout


def test_unknown_workflow_is_a_usage_error(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--workflow", ":Nope", "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 2
    assert "no workflow :Nope (declared: :Triage)" in p.stderr
    no_traceback(p)


def test_a_misspelt_command_is_answered_with_the_one_meant(tmp_path: Path) -> None:
    """`horismos rnu …` listed all sixteen commands and left the reader to find `run`."""
    p = horismos("rnu", *TRIAGE, *WORLD, "--focus", ":patient42", cwd=tmp_path)
    assert p.returncode == 2
    assert "'rnu' is no command: did you mean run?" in p.stderr, p.stderr
    no_traceback(p)
    p = horismos("xyzzy", cwd=tmp_path)  # nothing near: the commands listed, as before
    assert p.returncode == 2 and "invalid choice: 'xyzzy' (choose from 'validate'" in p.stderr


def test_a_prefix_of_version_or_help_still_answers_with_no_command(tmp_path: Path) -> None:
    """argparse takes `--vers` for `--version`, and `--help` beside any option (`-q --help`):
    both were refused, exit 2, as options given with no command."""
    p = horismos("--vers", cwd=tmp_path)
    assert (p.returncode, p.stdout.strip()) == (0, "horismos 0.1.0"), p.stdout + p.stderr
    for given in (["-q", "--help"], ["-q", "-h"], ["--all", "--hel"]):
        p = horismos(*given, cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.startswith("usage: horismos "), p.stdout
    p = horismos("--all", "-q", cwd=tmp_path)  # no help asked: still named
    assert p.returncode == 2 and "unrecognized arguments: --all -q; name a command" in p.stderr
    p = horismos("rnu", "--help", cwd=tmp_path)  # a misspelt command still says the one meant
    assert p.returncode == 2 and "'rnu' is no command: did you mean run?" in p.stderr, p.stderr


def test_the_help_names_every_exit_code_a_command_exits_with(tmp_path: Path) -> None:
    """`horismos --help` listed 0 to 4: a `tools call` refused exits 5, and a run whose focus
    another process drives 6 (`run --no-again`, `resume`), neither explained there."""
    from horismos._cli_common import EXIT, EXIT_USAGE
    from horismos._cli_tools import EXIT_CALL

    p = horismos("--help", cwd=tmp_path)
    said = p.stdout[p.stdout.index("exit codes:"):]
    for code in sorted({*EXIT.values(), *EXIT_CALL.values(), EXIT_USAGE}):
        assert f" {code} " in said.replace("\n", " "), (code, said)


def test_a_misspelt_option_is_named_by_its_command_with_the_one_meant(tmp_path: Path) -> None:
    """`run … --wrld world.ttl` printed the top-level usage (`horismos [-h] [--version]
    COMMAND …`) and named no option; the command's own usage now, and `--world` meant."""
    p = horismos("run", *TRIAGE, "--wrld", WORLD[1], *TOOLS, "--all", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("usage: horismos run "), p.stderr
    assert "horismos run: error: unrecognized arguments: --wrld (did you mean --world?)" in (
        p.stderr), p.stderr
    p = horismos("tools", "list", *TRIAGE, "--fromat", "json", cwd=tmp_path)
    assert p.returncode == 2
    assert "horismos tools list: error: unrecognized arguments: --fromat (did you mean " \
        "--format?)" in p.stderr, p.stderr


def test_validate_and_run_list_what_is_wrong_by_line(tmp_path: Path) -> None:
    """docs/guide/first-workflow.md: errors and warnings "sorted by file and line". The
    warnings came first and the errors the run-time checks found after, line 61 before 53."""
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    (tmp_path / "triage.ttl").write_text(text.replace("?this :acuity ?queue", "?this :acuty ?queue")
                                         .replace('horis:var "this"', 'horis:var "thiss"'))
    for command in ("validate", "run"):
        extra = [*WORLD, "--all"] if command == "run" else []
        p = horismos(command, "triage.ttl", TRIAGE[1], *extra, cwd=tmp_path)
        lines = [int(ln.split(":")[1]) for ln in (p.stdout + p.stderr).splitlines()
                 if ln.strip().startswith("triage.ttl:")]
        assert len(lines) == 3 and lines == sorted(lines), p.stdout + p.stderr


def test_run_with_authoring_errors_exits_2_listing_them(tmp_path: Path) -> None:
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    (tmp_path / "bad.ttl").write_text(text.replace('"5s"', '"5 parsecs"'))
    p = horismos("run", "bad.ttl", TRIAGE[1], *WORLD, *TOOLS, "--all", cwd=tmp_path)
    assert p.returncode == 2
    assert "bad.ttl:" in p.stderr and "5 parsecs" in p.stderr
    no_traceback(p)


def test_tools_module_in_the_current_directory_backs_bare_names(tmp_path: Path) -> None:
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    (tmp_path / "wf.ttl").write_text(text.replace("python:ehr_client.", "python:"))
    (tmp_path / "mytools.py").write_text(
        "def assign_queue(patient, queue):\n    return {'queueRef': 'Q-LOCAL-1'}\n\n"
        "def notify_nurse(patient, nurse, ref):\n    return {'assignedNurse': nurse}\n")
    args = ("run", "wf.ttl", TRIAGE[1], *WORLD, "--focus", ":patient42")
    # The console script, unlike python -m, does not put the current directory on sys.path.
    p = horismos(*args, "--tools", "mytools", cwd=tmp_path, script=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'ref="Q-LOCAL-1"' in p.stdout
    unbound = horismos(*args, cwd=tmp_path)  # no --tools: the binding cannot resolve
    assert unbound.returncode == 2
    assert 'binding "python:' in unbound.stderr and "--tools MODULE" in unbound.stderr
    no_traceback(unbound)


def test_a_rejected_result_without_on_error_fails_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "ehr_client.py").write_text(
        # computed at the call: a constant written out is refused before the run
        "def assign_queue(patient, queue):\n    return {'queueRef': 'not a ' + 'reference'}\n\n"
        "def notify_nurse(patient, nurse, ref):\n    return {'assignedNurse': nurse}\n")
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "ehr_client", "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "rejected by the gate" in p.stdout
    assert ":patient42 :queueRef: a queue reference looks like" in p.stdout


def test_out_and_trace_hold_the_committed_effects(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient43", "--out", "world.trig",
                 "--trace", "run.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    ds = Dataset()
    ds.parse(tmp_path / "world.trig", format="trig")
    refs = [(o, g) for _, _, o, g in ds.quads((EX.patient43, EX.queueRef, None, None))]
    assert [str(o) for o, _ in refs] == ["Q-ROUTINE-1"]
    assert str(refs[0][1]).startswith("urn:horismos:effect:")  # each step its own graph
    assert list(ds.quads((EX.patient43, EX.assignedNurse, EX.nurse7, None)))
    assert not list(ds.quads((EX.patient42, EX.queueRef, None, None)))  # only what ran
    events = (tmp_path / "run.jsonl").read_text().splitlines()
    assert '"type":"header"' in events[0] and len(events) >= 4
    nq = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42", "--out", "w.nq",
                  cwd=tmp_path)
    assert nq.returncode == 0
    ds2 = Dataset()
    ds2.parse(tmp_path / "w.nq", format="nquads")
    assert [o for _, _, o, _ in ds2.quads((EX.patient42, EX.queueRef, None, None))] == [
        Literal("Q-URGENT-1")]


def test_graph_draws_steps_and_edges(tmp_path: Path) -> None:
    p = horismos("graph", *TRIAGE, "--format", "mermaid", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("flowchart TD")
    assert 's0[":QueuePatient<br/>tool :ehr.assign_queue"]' in p.stdout
    assert 's1[":NotifyNurse<br/>tool :ehr.notify_nurse"]' in p.stdout
    assert "s0 --> s1" in p.stdout
    lab = [str(ROOT / "workflows" / "lab_review.ttl"), str(ROOT / "ontologies" / "lab.ttl")]
    dot = horismos("graph", *lab, "--format", "dot", "--workflow", ":ReviewResult", cwd=tmp_path)
    assert dot.returncode == 0, dot.stderr
    assert 's0 [label=":IsCritical\\nDecisionStep", shape=diamond];' in dot.stdout
    assert 's0 -> s2 [label="otherwise"];' in dot.stdout
    assert 's0 -> s1 [label="when ?this :value ?v' in dot.stdout


def test_bad_bytes_deep_nesting_and_ctrl_c_end_in_a_message_not_a_traceback(
        tmp_path: Path) -> None:
    (tmp_path / "garbage.bin").write_bytes(b"\xff\xfe\x00garbage\x80\x81")
    binary = horismos("tools", "call", "ehr.notify_nurse", *TRIAGE, *WORLD,
                      "--args", "@garbage.bin", cwd=tmp_path)
    assert binary.returncode == 2 and "not UTF-8" in binary.stderr, binary.stderr
    no_traceback(binary)
    deep = horismos("tools", "call", "ehr.notify_nurse", *TRIAGE, *WORLD,
                    "--args", "[" * 100_000, cwd=tmp_path)
    assert deep.returncode == 2 and "nested too deeply" in deep.stderr, deep.stderr
    no_traceback(deep)

    # Ctrl-C while a tool runs: the run stops with a word, its exit code 130
    (tmp_path / "slow.py").write_text(
        "import time\n"
        "def assign_queue(patient, queue):\n"
        "    open('started', 'w').close()\n"
        "    time.sleep(60)\n"
        "def notify_nurse(nurse, patient, ref):\n"
        "    return {'assignedNurse': nurse}\n")
    text = (ROOT / "workflows" / "triage.ttl").read_text().replace(
        "python:ehr_client.assign_queue", "python:slow.assign_queue").replace(
        "python:ehr_client.notify_nurse", "python:slow.notify_nurse").replace('"5s"', '"90s"')
    (tmp_path / "slow.ttl").write_text(text)
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", "slow.ttl", TRIAGE[1], *WORLD,
         "--tools", "slow.py", "--focus", ":patient42"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # SIGINT: default
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err and "Traceback" not in out + err


INTERRUPT_AT_IMPORT = """
import runpy, signal, sys
at = sys.argv[1]
class Interrupt:
    def find_spec(self, name, path, target=None):
        if name == at:
            signal.raise_signal(signal.SIGINT)
sys.meta_path.insert(0, Interrupt())
sys.argv = ["horismos", *sys.argv[2:]]
runpy.run_module("horismos", run_name="__main__", alter_sys=True)
"""
"""``python -c INTERRUPT_AT_IMPORT MODULE ARGS…``: ``python -m horismos ARGS…`` given a Ctrl-C
just as it starts to import MODULE, the moment no timing could hit twice."""


@pytest.mark.parametrize("module", ["horismos._agent", "horismos._cli", "horismos._cli_run"])
def test_ctrl_c_while_the_command_starts_is_one_line_not_a_traceback(
        tmp_path: Path, module: str) -> None:
    """The first second of every command is imports (the package's, then the command line's
    own), before any handler exists: a Ctrl-C there printed a 20-line traceback from inside
    an import or ``dataclasses``."""
    p = subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, module, "validate", *TRIAGE],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       preexec_fn=sigint_at(signal.default_int_handler))
    assert p.returncode in (130, -signal.SIGINT), p.stdout + p.stderr
    assert p.stderr.strip() == "horismos: interrupted while starting; nothing was done"
    assert p.stdout == ""


IMPORT_FAILS_THEN_CTRL_C = """
import sys
sys.modules["pyoxigraph"] = None  # an environment missing a dependency
try:
    import horismos
except ImportError:
    pass
raise KeyboardInterrupt
"""


def test_a_program_whose_import_of_horismos_failed_keeps_pythons_ctrl_c(tmp_path: Path) -> None:
    """An import failing inside ``horismos/__init__.py`` left Horismos's hook installed: the
    program's every later uncaught Ctrl-C said "horismos: interrupted while starting"."""
    p = subprocess.run([sys.executable, "-c", IMPORT_FAILS_THEN_CTRL_C], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert "horismos" not in p.stderr, p.stderr
    assert "Traceback" in p.stderr and p.stderr.rstrip().endswith("KeyboardInterrupt")


HOOK_WHILE_IMPORTING = """
import sys
def mine(*exc): pass
sys.excepthook = mine
seen = []
class Watch:
    def find_spec(self, name, path, target=None):
        seen.append(sys.excepthook is mine)
sys.meta_path.insert(0, Watch())
import horismos
print(len(seen) > 1, all(seen), sys.excepthook is mine)
"""


def test_a_program_importing_horismos_keeps_its_own_excepthook(tmp_path: Path) -> None:
    """Only the command line gets the one-line Ctrl-C hook: a program's own hook was replaced
    while Horismos imported (a Ctrl-C then said "horismos: interrupted while starting")."""
    p = subprocess.run([sys.executable, "-c", HOOK_WHILE_IMPORTING], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.stdout.split() == ["True", "True", "True"], p.stdout + p.stderr


def test_a_program_named_horismos_py_keeps_its_own_excepthook(tmp_path: Path) -> None:
    """A script was taken for the console script by its name without the suffix: a user's
    ``horismos.py`` had its hook replaced while it imported Horismos."""
    (tmp_path / "horismos.py").write_text(HOOK_WHILE_IMPORTING)
    # -P: the script's folder is not searched first, so `import horismos` is the package's
    p = subprocess.run([sys.executable, "-P", "horismos.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.stdout.split() == ["True", "True", "True"], p.stdout + p.stderr


@pytest.mark.parametrize(("argv0", "console_script"), [
    ("/usr/local/bin/horismos", True), (r"C:\Python311\Scripts\horismos.exe", True),
    (r"C:\Python311\Scripts\horismos-script.py", True),
    (r"C:\Python311\Scripts\horismos-script.pyw", True),
    ("horismos.py", False), ("/srv/app/horismos.exe.py", False), ("horismos-cli", False)])
def test_the_console_script_is_known_by_every_name_pip_gives_it(
        argv0: str, console_script: bool) -> None:
    """Pip's Windows launcher (``horismos.exe``, or ``horismos-script.py`` beside an older
    one) was no command line: a Ctrl-C as it started printed the traceback."""
    from horismos._quiet_start import _is_the_command_line

    argv0 = argv0.replace("\\", os.sep)
    assert _is_the_command_line([argv0, "validate"], ["python", argv0]) is console_script


@pytest.mark.parametrize("options", [["-m", "horismos"], ["-Bm", "horismos"],
                                     ["-W", "ignore", "-Xutf8", "-mhorismos"],
                                     ["-m", "horismos.__main__"]])
def test_ctrl_c_while_python_m_horismos_starts_is_one_line_however_its_options_are_written(
        tmp_path: Path, options: list[str]) -> None:
    """The command line was found by "-m" followed by "horismos" in the interpreter's
    arguments: with flags joined (``python -Bm horismos``, ``-Im``) a Ctrl-C as it started
    printed a traceback."""
    site = tmp_path / "site"
    site.mkdir()  # imported at start-up, before -m runs: a Ctrl-C as the CLI imports _agent
    (site / "sitecustomize.py").write_text(
        "import signal, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'horismos._agent':\n"
        "            signal.raise_signal(signal.SIGINT)\n"
        "sys.meta_path.insert(0, Interrupt())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    p = subprocess.run([sys.executable, *options, "validate", *TRIAGE], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120,
                       preexec_fn=sigint_at(signal.default_int_handler))
    assert p.returncode in (130, -signal.SIGINT), p.stdout + p.stderr
    assert p.stderr.strip() == "horismos: interrupted while starting; nothing was done"


def _counted_refills(tmp_path: Path) -> None:
    """The refill workflow of bench_peers over 2,000 prescriptions, in ``tmp_path``, with a
    dispense that notes each call in ``dispensed`` (a stop must leave at most one more)."""
    peers = ROOT / "benchmarks" / "peers"
    (tmp_path / "counted.py").write_text(
        "import time\n"
        "def decide_refill(rx, refills):\n"
        "    return {'refillApproved': True}\n"
        "def notify(rx, ref):\n"
        "    return {'notifiedBy': 'sms'}\n"
        "def dispense(rx):\n"
        "    with open('dispensed', 'a') as f:\n"
        "        f.write(str(rx) + '\\n')\n"
        "    time.sleep(0.01)\n"
        "    return {'dispenseRef': 'D-' + str(rx)[-4:]}\n")
    (tmp_path / "refill.ttl").write_text(
        (peers / "refill.ttl").read_text().replace("python:pharmacy_tools.", "python:counted."))
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/pharmacy#> .\n"
        + "".join(f":rx{i} a :Prescription ; :refillsLeft 1 .\n" for i in range(2000)))


def _signalled_mid_run(tmp_path: Path, world: list[str], sig: signal.Signals,
                       sigint: signal.Handlers = signal.SIG_DFL) -> tuple[int, str, str, int]:
    """`run --all` of :func:`_counted_refills` on ``world``, started with SIGINT at
    ``sigint`` (as a terminal's foreground job, by default), sent ``sig`` once 20 dispenses
    are made: its exit code, stdout, stderr, and how many dispenses came after the signal."""
    pharmacy = ROOT / "benchmarks" / "peers" / "pharmacy.ttl"
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", "refill.ttl", str(pharmacy), *world,
         "--tools", "counted.py", "--all"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ignore=(signal.SIGINT,) if sigint == signal.SIG_IGN else ())
    dispensed = tmp_path / "dispensed"
    deadline = time.monotonic() + 60
    while not (dispensed.exists() and len(dispensed.read_text().splitlines()) >= 20):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(sig)
    at_signal = len(dispensed.read_text().splitlines())
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, len(dispensed.read_text().splitlines()) - at_signal


def test_ctrl_c_stops_a_run_of_inline_tools_before_its_next_step(tmp_path: Path) -> None:
    """An inline tool runs on the run's own thread and the run never waits between steps, so
    a Ctrl-C reached it only when every instance had run: `run --all` went on dispensing
    (15,000 more prescriptions, 48 s) and then said "interrupted". It stops at the next step."""
    _counted_refills(tmp_path)
    code, out, err, more = _signalled_mid_run(tmp_path, ["--world", "world.ttl"], signal.SIGINT)
    assert code == 130, out + err
    assert "interrupted" in err and "Traceback" not in out + err
    # the world was in memory: it said "what had been committed stays", and running the same
    # command again started from the file and dispensed again
    assert "nothing of it was kept" in err and "stays" not in err, err
    assert more <= 1, f"{more} dispensed after the Ctrl-C"
    assert out.count("completed, 2 effects") < 3 * 2000


def test_sigterm_stops_a_run_as_ctrl_c_does_and_keeps_the_store_digest(tmp_path: Path) -> None:
    """SIGTERM is how systemd, Kubernetes and `timeout` stop a process. Python's default ended
    the run at once, mid-instance, with no `finally` and no `atexit`: an on-disk store's digest
    (removed while commits land, written back on close) was lost, so the next command, even a
    read, re-hashed every quad of the world. It stops between two steps, as on Ctrl-C, closes
    the store, and exits 143."""
    import pyoxigraph

    from horismos._stores.oxigraph import _DIGEST_GRAPH, _DIGEST_NODE, _LTHASH

    _counted_refills(tmp_path)
    loaded = horismos("load", "world.ttl", "--store", "oxigraph:store", cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    code, out, err, more = _signalled_mid_run(tmp_path, ["--store", "oxigraph:store"],
                                              signal.SIGTERM)
    assert code == 143, out + err
    assert "terminated" in err and "Traceback" not in out + err
    assert "what had been committed stays" in err, err
    assert more <= 1, f"{more} dispensed after the SIGTERM"
    store = pyoxigraph.Store(str(tmp_path / "store"))
    kept = list(store.quads_for_pattern(_DIGEST_NODE, _LTHASH, None, _DIGEST_GRAPH))
    assert len(kept) == 1, "the store's digest was not written back"
    del store
    checked = horismos("digest", "--store", "oxigraph:store", "--check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_sigterm_stops_a_run_started_with_ctrl_c_ignored(tmp_path: Path) -> None:
    """A shell starts a background job (`horismos run --all … &` in a container's script) and
    `nohup` its command with SIGINT ignored. SIGTERM was handled by raising SIGINT, so it was
    ignored too: `docker stop` or `kill` left the run dispensing until a SIGKILL ended it
    mid-instance. It stops between two steps, as in the foreground."""
    _counted_refills(tmp_path)
    code, out, err, more = _signalled_mid_run(tmp_path, ["--world", "world.ttl"],
                                              signal.SIGTERM, sigint=signal.SIG_IGN)
    assert code == 143, out + err
    assert "terminated" in err and "Traceback" not in out + err
    assert more <= 1, f"{more} dispensed after the SIGTERM"


def test_replay_reexecuting_without_the_tools_is_a_usage_error(tmp_path: Path) -> None:
    """It reported every trace DIVERGED (exit 1), as if the run had changed."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "t.jsonl", cwd=tmp_path)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    bare = horismos("replay", "t.jsonl", *TRIAGE, "--reexecute-idempotent", cwd=tmp_path)
    assert bare.returncode == 2, bare.stdout + bare.stderr
    assert "bindings of ehr.notify_nurse do not resolve here: give --tools" in bare.stderr
    tooled = horismos("replay", "t.jsonl", *TRIAGE, "--reexecute-idempotent", *TOOLS,
                      cwd=tmp_path)
    assert tooled.returncode == 0 and tooled.stdout.startswith("same "), tooled.stdout


def test_a_repeated_argument_a_cut_trace_and_load_into_memory_say_what_is_wrong(
        tmp_path: Path) -> None:
    twice = horismos("tools", "call", "ehr.notify_nurse", *TRIAGE, *WORLD, "--args",
                     '{"nurse": ":nurse7", "nurse": ":nurse8"}', cwd=tmp_path)
    assert twice.returncode == 2, twice.stdout + twice.stderr
    assert 'the argument "nurse" is given twice' in twice.stderr  # the stdlib kept the last

    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "t.jsonl", cwd=tmp_path)
    assert ran.returncode == 4
    first = (tmp_path / "t.jsonl").read_text().splitlines()[0]
    (tmp_path / "cut.jsonl").write_text(first[: len(first) // 2])
    cut = horismos("trace", "show", "cut.jsonl", cwd=tmp_path)
    assert "its first line was cut off as it was written" in cut.stdout + cut.stderr, cut.stderr
    no_traceback(cut)

    memory = horismos("load", TRIAGE[0], "--store", "memory", cwd=tmp_path)
    assert memory.returncode == 2 and "keeps nothing after this process" in memory.stderr


def test_the_default_store_is_said_to_be_the_default_in_memory(tmp_path: Path) -> None:
    """Without --store, a refusal named "--store oxigraph", an option the command line never
    gave, and not that the world was held in memory."""
    pharmacy = str(ROOT / "examples" / "fhir" / "pharmacy.ttl")
    load = horismos("hydrate", pharmacy, "--id", "Patient/p1", cwd=tmp_path)
    assert load.returncode == 2, load.stdout + load.stderr
    assert ("--store oxigraph (the default: the world in this process's memory) keeps "
            "nothing after this process") in load.stderr, load.stderr
    listed = horismos("instances", *TRIAGE, cwd=tmp_path)
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert ("--store oxigraph (the default: the world in this process's memory) starts "
            "empty") in listed.stderr, listed.stderr
    memory = horismos("load", TRIAGE[0], "--store", "memory", cwd=tmp_path)
    assert "--store memory (the world in this process's memory) keeps" in memory.stderr


def test_discover_with_a_focus_the_world_does_not_hold_says_so(tmp_path: Path) -> None:
    """It said "no executable tool matches", as if the query were at fault."""
    p = horismos("tools", "discover", "notify nurse", *TRIAGE, *WORLD, "--focus", ":nosuch",
                 cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "focus :nosuch is no node of the world" in p.stderr


def test_run_all_over_a_world_with_no_focus_node_says_why_nothing_ran(tmp_path: Path) -> None:
    """A world whose data is in another namespace ran "0 instances", exit 0, and no word."""
    text = (ROOT / "examples" / "triage" / "world.ttl").read_text()
    assert "<http://example.org/ehr#>" in text
    (tmp_path / "w.ttl").write_text(text.replace("<http://example.org/ehr#>",
                                                 "<http://example.org/ehr/>"))
    p = horismos("run", *TRIAGE, "--world", "w.ttl", *TOOLS, "--all", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == "\n0 instances\n", p.stdout  # no table header over no rows
    assert "no node of :Patient (horis:focusType) is in the world" in p.stderr


def test_every_output_file_in_a_missing_folder_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    """``run --out`` refused a missing folder up front while the other writers failed on
    the write itself, each in its own words; every one now says the same, and writes
    nothing."""
    ran = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "t.jsonl", cwd=tmp_path)
    assert (tmp_path / "t.jsonl").is_file(), ran.stdout + ran.stderr
    missing = str(tmp_path / "nowhere" / "out")
    for args in (["run", *TRIAGE, *WORLD, *TOOLS, "--all", "--out", missing + ".trig"],
                 ["trace", "export", "t.jsonl", "-o", missing + ".ttl"],
                 ["trace", "view", "t.jsonl", "-o", missing + ".html"],
                 ["graph", *TRIAGE, "-o", missing + ".mmd"],
                 ["tools", "inventory", *TRIAGE, "-o", missing + ".json"]):
        p = horismos(*args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stdout + p.stderr)
        assert "does not exist; create it first" in p.stderr, (args, p.stderr)
        no_traceback(p)
    assert not (tmp_path / "nowhere").exists()




@pytest.mark.parametrize(("verb", "asked"), [
    (["tools", "call", "airline.rebook"], ["--args", '{"booking": ":nobody", "flight": ":VS3"}']),
    (["run"], ["--focus", ":nobody"]),
    (["resume"], ["--instance", "urn:horismos:instance:nobody"]),
])
def test_a_refused_command_leaves_the_stored_world_as_it_was(
        tmp_path: Path, verb: list[str], asked: list[str]) -> None:
    """The ontology's individuals (:Scheduled, :Cancelled) are placed in a world a command
    runs against; a command refused before it began (an argument, a focus of the wrong type,
    an instance that does not wait) left them there, and `tools call` said "nothing changed
    in the world"."""
    defs = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl"),
            "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py")]
    world = str(ROOT / "examples" / "rebooking" / "world.ttl")
    horismos_load(tmp_path, "oxigraph:st", world)
    before = horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout
    refused = horismos(*verb, *defs, *asked, "--store", "oxigraph:st", cwd=tmp_path)
    assert refused.returncode in (2, 5), refused.stdout + refused.stderr
    no_traceback(refused)
    assert horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout == before


def test_a_lone_surrogate_in_a_call_s_arguments_is_refused_before_the_call(
        tmp_path: Path) -> None:
    """JSON's "\\ud800" reads as half a surrogate pair: the call was made and committed, then
    printing its receipt raised UnicodeEncodeError — a traceback after a call that acted."""
    horismos_load(tmp_path, "oxigraph:st", WORLD[1])
    before = horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout
    (tmp_path / "args.json").write_text(
        '{"patient": ":patient42", "nurse": ":nurse7", "ref": "\\ud800"}', encoding="utf-8")
    call = horismos("tools", "call", "ehr.notify_nurse", *TRIAGE, *TOOLS, "--args", "@args.json",
                    "--store", "oxigraph:st", cwd=tmp_path)
    no_traceback(call)
    assert call.returncode == 5, call.stdout + call.stderr
    assert 'argument "ref" holds' in call.stdout and "valid Unicode" in call.stdout
    assert horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout == before


def test_a_run_refused_before_it_starts_leaves_the_trace_it_was_given(tmp_path: Path) -> None:
    """Running again for a focus whose instance waits is refused (exit 2): the trace file
    named again, the record of the first run, was truncated to nothing."""
    (tmp_path / "leave.ttl").write_text(WAITING)
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/leave#> .\n:r1 a :Request .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    first = horismos("run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r1",
                     "--trace", "t.jsonl", cwd=tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    recorded = (tmp_path / "t.jsonl").read_bytes()
    assert recorded
    again = horismos("run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r1",
                     "--trace", "t2.jsonl", cwd=tmp_path)  # t.jsonl itself is never taken
    assert again.returncode == 2 and "waiting" in again.stderr, again.stdout + again.stderr
    no_traceback(again)
    assert (tmp_path / "t.jsonl").read_bytes() == recorded
    assert not (tmp_path / "t2.jsonl").exists()  # no empty file where no run was


def test_run_all_again_when_every_focus_waits_says_so_not_that_none_exists(
        tmp_path: Path) -> None:
    """On a store that outlives the run, a second `run --all` leaves waiting instances to
    resume or wake. It said that no node of the focus type was in the world."""
    (tmp_path / "leave.ttl").write_text(WAITING)
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/leave#> .\n"
                                    ":r1 a :Request .\n:r2 a :Request .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    first = horismos("run", "leave.ttl", "--store", "oxigraph:st", "--all", cwd=tmp_path)
    assert "2 waiting" in first.stdout, first.stdout + first.stderr
    again = horismos("run", "leave.ttl", "--store", "oxigraph:st", "--all", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "each of the 2 nodes of :Request already has an instance of :Leave" in again.stderr
    assert "horismos resume" in again.stderr and "is in the world" not in again.stderr


def test_a_literal_over_16_mib_in_the_definitions_is_a_located_error(tmp_path: Path) -> None:
    """The definitions digest parses them with pyoxigraph, whose buffer holds 16 MiB a term:
    a longer literal was a MemoryError traceback on every command that loads definitions."""
    (tmp_path / "big.ttl").write_text('@prefix : <http://x/> .\n:a :b "small" .\n:c :b "'
                                      + "x" * (17 << 20) + '" .\n', encoding="utf-8")
    p = horismos("run", "big.ttl", "--all", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "big.ttl:3: error: :c: a literal of 17 MiB is longer than 16 MiB" in p.stderr
    assert "keep large content outside the definitions and refer to it by IRI" in p.stderr


def test_commands_that_read_a_world_refuse_a_path_that_holds_no_store(tmp_path: Path) -> None:
    """pyoxigraph creates a store wherever it is opened: `instances` at a mistyped path said
    "no instances" and left an empty store there, `digest` wrote RocksDB files into a folder
    of the user's own, `serve` served the new empty world. Only `load` (and `run` or `serve`
    with --world) make a world."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("mine")
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    for args in (["instances", "--store", "oxigraph:typo"],
                 ["digest", "--store", "oxigraph:folder"],
                 ["wake", *TRIAGE, "--store", "oxigraph:typo"],
                 ["resume", *TRIAGE, "--store", "oxigraph:typo", "--instance", "x"],
                 ["tools", "reconcile", "ehr.notify_nurse", *TRIAGE, "--store", "oxigraph:typo",
                  "--args", "{}"],
                 ["serve", *TRIAGE, "--store", "oxigraph:typo"],
                 ["serve", *TRIAGE, "--store", "journal:typo", "--transport", "http"]):
        p = horismos(*args, cwd=tmp_path)
        no_traceback(p)
        store = args[args.index("--store") + 1]
        assert p.returncode == 2, (args, p.stdout + p.stderr)
        assert (f"no store at {store.partition(':')[2]}; create one with "
                f"`horismos load FILES --store {store}`") in p.stderr, (args, p.stderr)
    # a worker takes only a shared world: said before a store is made at the path
    p = horismos("worker", *TRIAGE, "--store", "oxigraph:typo", "--broker",
                 "redis://127.0.0.1:1/0", cwd=tmp_path)
    assert p.returncode == 2 and "not shared by other processes" in p.stderr, p.stderr
    assert not (tmp_path / "typo").exists()
    assert [f.name for f in (tmp_path / "folder").iterdir()] == ["notes.txt"]
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    p = horismos("instances", "--store", "oxigraph:st", cwd=tmp_path)
    assert p.returncode == 0 and "no instances" in p.stdout, p.stdout + p.stderr


UNREADABLE = Path("/proc/self/mem")
"""Opens for anyone, root too, and its first byte is no memory: reading it fails (EIO)."""


@pytest.mark.skipif(not UNREADABLE.exists(), reason="needs Linux's /proc/self/mem")
def test_a_file_that_cannot_be_read_is_named_with_what_to_do(tmp_path: Path) -> None:
    """`load` printed "[Errno 5] Input/output error" (or "[Errno 13] Permission denied:
    'w.ttl'"); `run --world` and `trace show` printed the system's words without the file."""
    (tmp_path / "w.ttl").symlink_to(UNREADABLE)
    (tmp_path / "t.jsonl").symlink_to(UNREADABLE)
    (tmp_path / "folder").mkdir()
    said = ("w.ttl: error: cannot read it ([Errno 5] Input/output error) — check that it is "
            "a file this user may read, on a disk that answers")
    for args, code, text in (
            (["load", "w.ttl", "--store", "oxigraph:st"], 1,
             f"horismos load: 1 error in the files:\n  {said}\n"),
            (["run", *TRIAGE, *TOOLS, "--world", "w.ttl", "--all"], 2,
             f"horismos run: 1 error in the world data:\n  {said}\n"),
            (["trace", "show", "t.jsonl"], 2,
             "horismos trace show: error: t.jsonl: cannot read it ([Errno 5] Input/output "
             "error); check that it is a file this user may read, on a disk that answers\n"),
            (["tools", "call", "ehr.notify_nurse", *TRIAGE, *WORLD, "--args", "@folder"], 2,
             "horismos tools call: error: --args @folder: this is a folder, not a file; give a "
             "file in it\n")):
        p = horismos(*args, cwd=tmp_path)
        assert (p.returncode, p.stderr) == (code, text), args


def test_an_error_of_the_system_no_table_words_names_the_file_and_what_to_do(
        tmp_path: Path) -> None:
    """A name too long, or a socket given as a file, met no words of Horismos's: `load`
    printed the system's bare "[Errno 36] File name too long: 'aaa…'", and a trace written
    to a socket was told to check "that the disks … have space"."""
    long = "a" * 300
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "t.jsonl"))
    todo = ("check the path (each name in it, and that it is a plain file or folder), that "
            "this user may use it, and that its disk answers; then run the command again")
    try:
        for args, code, text in (
                (["load", f"{long}.ttl", "--store", "oxigraph:st"], 1,
                 f"horismos load: error: {long}.ttl: cannot read or write it ([Errno 36] File "
                 f"name too long); {todo}\n"),
                (["load", "w.ttl", "--store", f"journal:{long}"], 1,
                 f"horismos load: error: {long}/snapshot.nq: cannot read or write it ([Errno 36] "
                 f"File name too long); {todo}\n"),
                (["run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "t.jsonl"], 2,
                 "horismos run: error: t.jsonl: cannot read or write it ([Errno 6] No such "
                 f"device or address); {todo}\n")):
            p = horismos(*args, cwd=tmp_path)
            assert (p.returncode, p.stderr) == (code, text), args
    finally:
        server.close()


@pytest.mark.parametrize(("command", "code"), [
    (["load", "pipe.ttl", "--store", "oxigraph:st"], 0),
    (["run", *TRIAGE, "--world", "pipe.ttl", *TOOLS, "--all"], 4)])  # one instance blocks
def test_a_named_pipe_given_as_world_data_is_read_once(
        tmp_path: Path, command: list[str], code: int) -> None:
    """Every input was opened and closed before the load, a named pipe too, and the loader
    opened it again to scan it for blank nodes: its writer was killed (SIGPIPE) or gone, and
    the load then waited for another forever."""
    os.mkfifo(tmp_path / "pipe.ttl")
    world = ROOT / "examples" / "triage" / "world.ttl"
    writer = subprocess.Popen(["cp", str(world), "pipe.ttl"], cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True)
    try:
        p = horismos_forked(tmp_path, *command, timeout=60)
    finally:
        writer.kill()
        _, written = writer.communicate()
    assert p.returncode == code, p.stdout + p.stderr
    assert writer.returncode == 0, written


@pytest.mark.skipif(not UNREADABLE.exists(), reason="needs Linux's /proc/self/mem")
def test_every_input_that_cannot_be_read_is_said_in_the_same_words(tmp_path: Path) -> None:
    """`resume --facts` and `tools inventory --check` printed "Input/output error" alone, a
    folder given as a trace was "no such trace file", a symbolic link loop "no such file or
    folder", and `digest FILE` called its bad world data "the definitions"."""
    (tmp_path / "w.ttl").symlink_to(UNREADABLE)
    (tmp_path / "loop.ttl").symlink_to("loop.ttl")
    (tmp_path / "folder").mkdir()
    (tmp_path / "bad.ttl").write_text("@prefix : <http://x/> .\n:a :b")
    eio = "cannot read it ([Errno 5] Input/output error); check that it is a file this user " \
          "may read, on a disk that answers"
    folder = "folder: this is a folder, not a file; give a file in it"
    for args, code, text in (
            (["resume", *TRIAGE, *WORLD, "--instance", "urn:horismos:instance:x",
              "--facts", "w.ttl"], 2, f"horismos resume: error: --facts w.ttl: {eio}\n"),
            (["tools", "inventory", *TRIAGE, "--check", "w.ttl"], 2,
             f"horismos tools inventory: error: --check w.ttl: {eio}\n"),
            (["trace", "show", "folder"], 2, f"horismos trace show: error: {folder}\n"),
            (["trace", "view", "folder", "-o", "x.html"], 2,
             f"horismos trace view: error: {folder}\n"),
            (["graph", *TRIAGE, "--format", "svg", "--trace", "folder"], 2,  # its traces
             "horismos graph: error: folder: no *.jsonl traces in this folder\n"),
            (["digest", "bad.ttl", "--store", "memory"], 2,
             "horismos digest: 1 error in the world data:\n  bad.ttl:2: error: cannot read "
             "world data: the file ends inside a statement — end it with ' .', and close every "
             "string, '[' and '(' it opens\n")):
        p = horismos(*args, cwd=tmp_path)
        assert (p.returncode, p.stderr) == (code, text), (args, p.stdout)
    p = horismos("validate", "loop.ttl", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("loop.ttl: error: its symbolic links lead round in a circle — "
                               "point the link at the file itself\n"), p.stdout


def test_world_data_ending_inside_a_statement_is_said_at_its_last_line(tmp_path: Path) -> None:
    """A last statement missing its '.': the parser names the line after the file's end,
    empty, and "Unexpected end", with "fix the syntax at that line". Said at the statement,
    with the fix, by `load` and by every command that reads world data."""
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n:d :e :f\n\n")
    fix = "the file ends inside a statement — end it with ' .', and close every string, '[' and "
    load = horismos("load", "w.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert (load.returncode, load.stderr) == (
        1, f"horismos load: w.ttl:3: error: cannot read world data: {fix}'(' it opens\n"
    ), load.stderr
    digest = horismos("digest", "w.ttl", "--store", "memory", cwd=tmp_path)
    assert digest.returncode == 2 and f"w.ttl:3: error: cannot read world data: {fix}" in (
        digest.stderr), digest.stderr
    # a comment after it is no statement: still said at the statement
    (tmp_path / "c.ttl").write_text("@prefix : <http://x/> .\n:d :e :f\n\n# the end\n")
    load = horismos("load", "c.ttl", "--store", "oxigraph:st2", cwd=tmp_path)
    assert load.stderr.startswith(
        "horismos load: c.ttl:2: error: cannot read world data: the file ends inside"
    ), load.stderr


@pytest.mark.parametrize(("command", "code"), [
    (["load", "big.ttl", "--store", "oxigraph:st"], 1),
    (["run", *TRIAGE, "--world", "big.ttl", "--store", "oxigraph:st", "--all"], 2)])
def test_a_store_that_cannot_write_says_so_not_that_the_file_cannot_be_read(
        tmp_path: Path, command: list[str], code: int) -> None:
    """RocksDB's own write error while loading (a full disk, a file over the size limit) was
    reported as the input's "cannot read it ... on a disk that answers"."""
    with (tmp_path / "big.ttl").open("w") as f:
        f.write("@prefix : <http://x/> .\n")
        f.writelines(f':s{i} :p "value number {i}, padded to make a store file grow" .\n'
                     for i in range(50_000))
    p = horismos_forked(tmp_path, *command, timeout=120, file_size=256 * 1024,
                        ignore=(signal.SIGXFSZ,))
    if "cannot open the store" in p.stderr:
        pytest.skip(f"this RocksDB cannot open a store under the limit: {p.stderr}")
    no_traceback(p)
    assert p.returncode == code, p.stdout + p.stderr
    assert p.stderr.startswith(f"horismos {command[0]}: error: the store oxigraph:st could not "
                               "write what big.ttl holds: the file would pass the size limit "
                               "of this process (IO error: "), p.stderr
    assert p.stderr.endswith("File too large); lift the limit (ulimit -f) or write to another "
                             "disk, then run the command again\n"), p.stderr
    assert "cannot read" not in p.stderr


def test_an_output_of_dash_is_refused_not_written_as_a_file_named_dash(tmp_path: Path) -> None:
    """`run --trace -` ran and wrote its trace into a file named "-" where stdout was meant."""
    for args in (["run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "-"],
                 ["trace", "export", str(ROOT / "tests" / "fixtures" / "traces" / "recorded"
                                         / "triage-all.jsonl"), "--output", "-"]):
        p = horismos(*args, cwd=tmp_path)
        option, command = args[-2], " ".join(args[:2] if args[0] == "trace" else args[:1])
        assert (p.returncode, p.stderr) == (
            2, f"horismos {command}: error: {option} -: {option} writes a file, not stdout; "
               "give a file name\n"), p.stdout + p.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_folder_output_of_dash_is_refused_not_made_as_a_folder_named_dash(
        tmp_path: Path) -> None:
    """`replay DIR DEFS --html -` wrote its pages into a folder named "-" where stdout was
    meant; so did every option that writes a file per thing into a folder."""
    recorded = str(ROOT / "tests" / "fixtures" / "traces" / "recorded")
    nowhere = "http://127.0.0.1:9/"
    for args in (["replay", recorded, str(ROOT / "tests" / "fixtures" / "traces" / "definitions"),
                  "--html", "-"],
                 ["wake", *TRIAGE, *WORLD, *TOOLS, "--traces", "-"],
                 ["serve", *TRIAGE, *TOOLS, "--trace-dir", "-"],
                 ["worker", *TRIAGE, "--store", f"sparql:{nowhere}", "--broker", nowhere,
                  "--traces", "-"]):
        p = horismos(*args, cwd=tmp_path)
        option = args[-2]
        assert (p.returncode, p.stderr) == (
            2, f"horismos {args[0]}: error: {option} -: {option} writes files into a folder, "
               "not stdout; give a folder name\n"), p.stdout + p.stderr
    assert list(tmp_path.iterdir()) == []


def test_load_of_a_missing_file_lists_it_and_makes_no_store(tmp_path: Path) -> None:
    """`load` printed "1 authoring error(s):" where every other command says what holds the
    error, and made an empty store at --store before it found the file missing."""
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    p = horismos("load", "w.ttl", "typo.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stderr == ("horismos load: 1 error in the files:\n  typo.ttl: error: no such file "
                        "or folder — give an existing Turtle file or a folder of .ttl files\n")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["w.ttl"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_load_of_a_file_this_user_may_not_read_says_so_and_loads_none(tmp_path: Path) -> None:
    """Root reads a 0o000 file, so this runs only as another user; the file that fails for
    root too is /proc/self/mem, above."""
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    (tmp_path / "secret.ttl").write_text("@prefix : <http://x/> .\n:d :e :f .\n")
    (tmp_path / "secret.ttl").chmod(0)
    p = horismos("load", "w.ttl", "secret.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stderr == ("horismos load: 1 error in the files:\n  secret.ttl: error: this user "
                        "may not read it — give it read permission (chmod a+r), or run as a "
                        "user who may read it\n")
    assert not (tmp_path / "st").exists()


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_store_path_starting_with_a_tilde_is_in_the_home_folder(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No shell expands the ``~`` in ``--store oxigraph:~/w``: it was a folder named ``~``,
    refused as "the folder ~ does not exist" (or made in the current folder)."""
    from horismos import World

    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    (here / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    env = {**os.environ, "HOME": str(home)}
    for args in (["load", "w.ttl"], ["instances"]):
        p = horismos_forked(here, *args, "--store", f"{kind}:~/w", env=env, timeout=120)
        no_traceback(p)
        assert p.returncode == 0, (args, p.stdout + p.stderr)
    assert (home / "w").is_dir() and sorted(f.name for f in here.iterdir()) == ["w.ttl"]
    monkeypatch.setenv("HOME", str(home))
    with World.open(f"{kind}:~/w", create=False) as world:
        assert "<http://x/a> <http://x/b> <http://x/c>" in world.snapshot()


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_new_store_in_a_missing_folder_or_at_a_file_is_refused_and_nothing_made(
        tmp_path: Path, kind: str) -> None:
    """`oxigraph:` at a mistyped parent said RocksDB's "While mkdir if missing"; `journal:`
    made every missing folder, and the run then failed on the empty world it had made,
    leaving the new store at the typo. A file where the store's folder goes got errno text."""
    (tmp_path / "notes.txt").write_text("mine")
    for path, said in (("typo/deeper/world.db", "the folder typo/deeper does not exist; "
                                                "create it first"),
                       ("notes.txt", "this is a file, and a store is a folder")):
        p = horismos("run", *TRIAGE, *TOOLS, "--focus", ":patient43",
                     "--world", str(ROOT / "examples" / "triage" / "world.ttl"),
                     "--store", f"{kind}:{path}", cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 2 and f"error: {kind}:{path}: {said}" in p.stderr, p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["notes.txt"]
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_tools_naming_a_folder_is_refused_saying_it_is_no_module(tmp_path: Path) -> None:
    """A folder with no ``__init__.py`` imports as an empty namespace package: `--tools
    tools` (the folder the .py files are in) registered nothing, and every python: binding
    was reported unregistered, as if the functions were missing."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "ehr_client.py").write_text(
        (ROOT / "examples" / "triage" / "ehr_client.py").read_text())
    for given in ("tools", "tools/"):
        p = horismos("validate", *TRIAGE, "--tools", given, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 2, p.stdout + p.stderr
        assert (f"error: --tools {given}: this is a folder, not a Python module; give a .py "
                "file in it (--tools tools/NAME.py)") in p.stderr, p.stderr
    p = horismos("validate", *TRIAGE, "--tools", "tools/ehr_client.py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_tools_name_beside_a_folder_of_that_name_imports_the_py_file(tmp_path: Path) -> None:
    """Python imports ``ehr_client.py`` before an ``ehr_client/`` folder with no
    ``__init__.py``: `--tools ehr_client` there registered the .py file's functions, then was
    refused as naming a folder."""
    (tmp_path / "ehr_client").mkdir()
    (tmp_path / "ehr_client.py").write_text(
        (ROOT / "examples" / "triage" / "ehr_client.py").read_text())
    p = horismos("validate", *TRIAGE, "--tools", "ehr_client", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 tools, 1 workflow, 2 steps: valid" in p.stdout, p.stdout


@pytest.mark.parametrize("command", [["validate", *TRIAGE], ["hydrate", *TRIAGE]])
def test_an_allow_host_that_names_no_host_is_refused_by_every_command(
        tmp_path: Path, command: list[str]) -> None:
    """`validate` builds no host policy, so it said "valid" of `--allow-host
    https://api.example.org` (a URL), which `run` then refused; now argparse refuses it."""
    p = horismos(*command, "--allow-host", "https://api.example.org", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert ("error: argument --allow-host: allowed host 'https://api.example.org': give a host "
            "name (api.example.org)") in p.stderr, p.stderr


@pytest.mark.parametrize("entry", ["api.example.org:8443", "[::1]", "[::1]:8080"])
def test_an_allow_host_with_a_port_or_brackets_is_refused_as_it_is_read(
        tmp_path: Path, entry: str) -> None:
    """A URL's host is compared bare (no port, no brackets): such an entry passed the check
    and then matched no URL, so every call to the host it meant was refused at run time."""
    from horismos import UsageError
    from horismos._bindings.reach import Hosts

    p = horismos("validate", *TRIAGE, "--allow-host", entry, cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert (f"error: argument --allow-host: allowed host {entry!r}: give a host name or IP "
            "address, without a port or brackets") in p.stderr, p.stderr
    with pytest.raises(UsageError, match="without a port or brackets"):
        Hosts((entry,))
    bare = Hosts(("api.example.org", "::1"))  # what to write instead reaches every port
    assert bare.problem("https://api.example.org:8443/v1", resolve=False) is None
    assert bare.problem("http://[::1]:8080/", resolve=False) is None


def test_serve_that_cannot_listen_says_whether_to_change_the_port_or_the_host(
        tmp_path: Path) -> None:
    """Every refusal to listen said "give a free port": a mistyped --host (an address this
    machine does not have) sent the user looking for a busy port."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        busy = horismos("serve", *TRIAGE, *TOOLS, "--transport", "http", "--port", port,
                        cwd=tmp_path)
        elsewhere = horismos("serve", *TRIAGE, *TOOLS, "--transport", "http",
                             "--host", "192.0.2.1", "--port", port, cwd=tmp_path)  # TEST-NET-1
    for p in (busy, elsewhere):
        no_traceback(p)
        assert p.returncode == 2, p.stdout + p.stderr
    assert busy.stderr.rstrip().endswith("(Address already in use); give a free port")
    assert elsewhere.stderr.rstrip().endswith(
        "; give an address of this machine (127.0.0.1, 0.0.0.0) or a name that resolves to "
        "one"), elsewhere.stderr


def test_options_with_no_command_and_facts_given_a_folder_are_named(tmp_path: Path) -> None:
    """`horismos --all -q` was told only that a COMMAND is required, never that its options
    went unread; `resume --facts DIR` that DIR was "no such file"."""
    p = horismos("--all", "-q", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2 and ("error: unrecognized arguments: --all -q; name a command "
                                  "first (horismos --help lists them)") in p.stderr, p.stderr
    (tmp_path / "answers").mkdir()
    p = horismos("resume", *TRIAGE, "--world", TRIAGE[1], "--instance", "x", "--facts", "answers",
                 cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "error: --facts answers: this is a folder; give the Turtle file in it" in p.stderr


RECORDED = ROOT / "tests" / "fixtures" / "traces"


def test_an_output_folder_or_page_that_cannot_be_written_is_refused_before_anything_is_done(
        tmp_path: Path) -> None:
    """Each was found at the first file written, after the work it records: `wake --traces
    F` (a file) after it had resumed an instance, whose world was then never written to
    --out; `replay --html` after the replay, its report printed as if all went well."""
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "adir").mkdir()
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    trace = str(RECORDED / "recorded" / "triage-patient42.jsonl")
    for args, said in (
            (["wake", *TRIAGE, "--store", "oxigraph:st", "--traces", "afile"],
             "--traces afile: cannot be the folder to write into"),
            (["worker", *TRIAGE, "--store", "sparql:http://127.0.0.1:9/", "--broker",
              "redis://127.0.0.1:9/0", "--traces", "afile"],
             "--traces afile: cannot be the folder to write into"),
            (["serve", *TRIAGE, "--trace-dir", "afile"],
             "--trace-dir afile: cannot be the folder to write into"),
            (["replay", trace, *TRIAGE, "--html", "adir"],
             "--html adir: this is a folder; give a file name in it"),
            (["replay", str(RECORDED / "recorded"), *TRIAGE, "--html", "afile"],
             "--html afile: cannot be the folder to write into")):
        p = horismos(*args, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 2 and said in p.stderr, (args, p.stdout + p.stderr)
        assert p.stdout == "", (args, p.stdout)
    assert (tmp_path / "afile").read_text() == "mine" and not any((tmp_path / "adir").iterdir())


def _rehashed(path: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    """The recorded triage trace, edited by ``edit`` and hashed again (as anyone can: the
    chain has no key)."""
    from horismos import Trace, read_trace

    events = read_trace(RECORDED / "recorded" / "triage-patient42.jsonl")
    edit(events)
    trace = Trace()
    for e in events:
        trace.emit(e["type"], **{k: v for k, v in e.items()
                                 if k not in ("type", "seq", "prev", "hash")})
    return trace.save(path)


def test_a_rehashed_trace_with_fields_of_the_wrong_shape_is_refused_not_a_traceback(
        tmp_path: Path) -> None:
    """Each command that reads a trace took its fields as a run writes them: an edited trace
    whose chain was hashed again gave an AttributeError or a KeyError traceback."""
    edits: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
        "counts": (lambda ev: ev[4].update(instances=3),
                   "event 4 (line 5) is not a well-formed end event: its 'instances' is 3"),
        "workflow": (lambda ev: ev[0].pop("workflow"),  # replay's to read
                     "event 0 (line 1) is not a well-formed header event: it has no 'workflow'"),
        "focus": (lambda ev: ev[1].pop("focus"),  # an instance event's, PROV-O's and replay's
                  "event 1 (line 2) is not a well-formed instance event: it has no 'focus'"),
        "instance": (lambda ev: ev[1].pop("instance"),  # the viewer's and PROV-O's
                     "event 1 (line 2) is not a well-formed instance event: it has no 'instance'"),
        "graph": (lambda ev: ev[2].update(graph="effect graph"),  # PROV-O writes it in <…>
                  "event 2 (line 3) is not a well-formed step event: a value in it is of a "
                  "shape no run writes ('effect graph' is not an IRI)"),
        "args": (lambda ev: ev[2].update(args=[None]),
                 "event 2 (line 3) is not a well-formed step event"),
        "clock": (lambda ev: ev[2].update(clock=["noon"]),
                  "event 2 (line 3) is not a well-formed step event"),
    }
    defs = str(RECORDED / "definitions")
    for name, (edit, said) in edits.items():
        trace = str(_rehashed(tmp_path / f"{name}.jsonl", edit))
        commands = [["trace", "show", trace], ["trace", "export", trace],
                    ["trace", "view", trace, "-o", "v.html"], ["replay", trace, defs],
                    ["graph", defs, "--format", "svg", "--trace", trace]]
        if name != "counts":  # what only some commands take apart
            commands = {"args": commands[:2], "focus": commands[1:2] + commands[3:4],
                        "instance": commands[1:3], "graph": commands[1:2]}.get(
                name, commands[3:4])
        for args in commands:
            p = horismos(*args, cwd=tmp_path)
            no_traceback(p)
            assert p.returncode in (1, 2), (name, args, p.stdout + p.stderr)
            assert said in p.stdout + p.stderr, (name, args, p.stdout + p.stderr)
            assert "the trace was edited after it was written, or written by something " \
                   "other than Horismos" in p.stdout + p.stderr


def test_a_store_that_cannot_be_opened_says_another_process_holds_it_only_when_one_does(
        tmp_path: Path) -> None:
    """Every error opening an on-disk store ended "(another process may hold it …)", also a
    file where the store's folder should be, which no other process explains."""
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "w.ttl").write_text("@prefix : <http://x/> .\n:a :b :c .\n")
    p = horismos("load", "w.ttl", "--store", "oxigraph:notes.txt", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "oxigraph:notes.txt: this is a file, and a store is a folder of its own files" \
           in p.stderr and "another process" not in p.stderr, p.stderr
    holder = subprocess.Popen([sys.executable, "-c", "import pyoxigraph, sys\n"
                               "s = pyoxigraph.Store('st'); print('open', flush=True)\n"
                               "sys.stdin.read()"], cwd=tmp_path, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        p = horismos("load", "w.ttl", "--store", "oxigraph:st", cwd=tmp_path)
        assert p.returncode == 2 and "(a process holds it open:" in p.stderr, p.stderr
    finally:
        holder.communicate("")


def test_trace_show_of_a_tools_call_trace_says_it_is_a_catalog_call(tmp_path: Path) -> None:
    """A call's header names the tool, not a workflow: the timeline read it as a run and
    printed "run of None for 0 focus node(s)", and "(no instances)" at its end."""
    p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *WORLD, *TOOLS, "--args",
                 '{"patient": ":patient42", "queue": ":urgent"}', "--trace", "call.jsonl",
                 cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = horismos("trace", "show", "call.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    first, *_, end, _world = shown.stdout.splitlines()
    assert first.startswith("catalog call of :ehr.assign_queue (horismos tools call), recorded ")
    assert end == "end: completed"


def test_trace_show_of_a_python_catalog_call_names_no_command_it_was_not_made_by(
        tmp_path: Path) -> None:
    """`catalog.call(…, trace=…)` from a program: its timeline said "catalog call of
    :ehr.assign_queue (horismos tools call)", as a served call's did, though no command made
    it (the header records the process, and no lane for a Python program)."""
    from horismos import Agent, World

    agent = Agent.from_files(*TRIAGE, tools={
        "ehr_client.assign_queue": lambda patient, queue: {"queueRef": "Q-URGENT-1"}})
    world = World.from_files(WORLD[1])
    result = agent.catalog.call("ehr.assign_queue", {"patient": ":patient42", "queue": ":urgent"},
                                world, trace=str(tmp_path / "call.jsonl"))
    assert result.status == "completed", result.receipt()
    shown = horismos("trace", "show", "call.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.stdout.startswith(
        "catalog call of :ehr.assign_queue (catalog.call from Python), recorded "), shown.stdout


def test_an_option_holding_text_no_iri_is_says_which_and_why(tmp_path: Path) -> None:
    """`--focus '<not an iri>'` printed rdflib's warning line, then "rdflib.term.URIRef('not
    an iri') cannot be stored: Invalid IRI code point ' '" from the store."""
    for option, shown in (("--focus", "focus '<not an iri>'"),
                          ("--workflow", "workflow '<not an iri>'")):
        p = horismos("run", *TRIAGE, *WORLD, option, "<not an iri>",
                     *(["--all"] if option == "--workflow" else []), cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 2, p.stdout + p.stderr
        assert p.stderr == (f"horismos run: error: {shown} is not an IRI: it contains ' '; "
                            "write it as <IRI> or as a CURIE with a declared prefix\n"), p.stderr
    p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *WORLD, *TOOLS, "--args",
                 '{"patient": "<not an iri>", "queue": ":urgent"}', cwd=tmp_path)
    assert p.returncode == 5, p.stdout + p.stderr
    assert ("argument \"patient\" must name a node of class :Patient: '<not an iri>' is not an "
            "IRI: it contains ' '") in p.stdout
    assert "rdflib" not in p.stdout + p.stderr and "valid URI" not in p.stderr


def test_validate_reports_a_turtle_syntax_error_at_the_line_to_change(tmp_path: Path) -> None:
    """rdflib's line count ran past the end of a short file (a 4-line file's error at line 7),
    a missing dot was reported at the statement after it, and one at the very end of a file
    with no newline was "string index out of range" with no line at all."""
    head = "@prefix : <http://x/> .\n:a :b :c .\n"
    cases = {
        "string.ttl": (head + ':d :e "unterminated .\n:f :g :h .\n', 3),
        "long.ttl": (head + ':d :e """opened\nnever closed\n\n', 3),
        "last.ttl": (head + ":d :e :f\n", 3),
        "cut.ttl": (head + ":d :e :f", 3),
        "middle.ttl": ("@prefix : <http://x/> .\n:a :b :c\n# next\n:d :e :f .\n", 2),
        "one.ttl": ("@prefix : <http://x/> . :a :b\n", 1),
    }
    for name, (text, line) in cases.items():
        (tmp_path / name).write_text(text)
        p = horismos("validate", name, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"{name}:{line}: error: Turtle syntax error: " in p.stdout, (name, p.stdout)


@pytest.mark.parametrize(("old", "new", "hint"), [
    pytest.param('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                 'horis:bind [ horis:arg "patient" ; horis:var ?this ] .', 'quote it: "this"',
                 id="var"),
    pytest.param('horis:requires """ ?this :queueRef ?ref .\n'
                 '                       ?nurse a :Nurse ; :onDuty true .\n'
                 '                       FILTER NOT EXISTS { ?this :assignedNurse ?n } """ ;',
                 "horis:requires ?this ;",
                 'put the pattern in a string: horis:requires """ ?this … """', id="requires"),
])
def test_a_bare_sparql_variable_in_turtle_is_an_error_at_its_line(
        tmp_path: Path, old: str, new: str, hint: str) -> None:
    """rdflib's Turtle parser reads ``?this`` as an N3 variable and fails inside itself: the
    modeler was told "cannot parse as turtle: 'NoneType' object has no attribute
    'newUniversal'", with no line."""
    text = Path(TRIAGE[0]).read_text(encoding="utf-8")
    assert text.count(old) == 1
    (tmp_path / "triage.ttl").write_text(text.replace(old, new), encoding="utf-8")
    line = text[: text.index(old)].count("\n") + 1
    p = horismos("validate", "triage.ttl", TRIAGE[1], cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines()[0] == (
        f"triage.ttl:{line}: error: ?this is a SPARQL variable where Turtle expects a value"
        f" — {hint}"), p.stdout
    assert "newUniversal" not in p.stdout + p.stderr


@pytest.mark.parametrize(("written", "shown", "held", "encoded"), [
    pytest.param("a\\u0001b", "a\\u0001b", "a control character (U+0001)", "%01", id="u-escape"),
    pytest.param("a\tb", "a\tb", "a tab", "%09", id="raw-tab"),
    pytest.param("a\\u007Fb", "a\\u007Fb", "a control character (U+007F)", "%7F", id="del"),
    pytest.param("a b", "a b", "a space", "%20", id="space"),
    pytest.param("a\\uFFFDb", "a\\uFFFDb", "the replacement character (U+FFFD)", "%EF%BF%BD",
                 id="replacement"),
    pytest.param("a\\uFDD0b", "a\\uFDD0b", "U+FDD0, which is no character", "%EF%B7%90",
                 id="noncharacter"),
    pytest.param("a\\U0001FFFEb", "a\\U0001FFFEb", "U+1FFFE, which is no character",
                 "%F0%9F%BF%BE", id="noncharacter-plane-1"),
    pytest.param("a\\uFFF0b", "a\\uFFF0b", "the character U+FFF0", "%EF%BF%B0", id="specials"),
    pytest.param("a\\U000E0000b", "a\\U000E0000b", "the character U+E0000", "%F3%A0%80%80",
                 id="tag"),
    pytest.param("a\\uE000b", "a\\uE000b", "a private-use character (U+E000) outside a query",
                 "%EE%80%80", id="private-use"),
])
def test_an_iri_holding_a_control_character_is_an_error_at_its_line(
        tmp_path: Path, written: str, shown: str, held: str, encoded: str) -> None:
    """rdflib's Turtle parser decodes ``\\u0001`` inside ``<…>`` and keeps a raw tab there:
    `validate` said "valid", and the first store to meet the IRI refused it (or the
    definitions' digest died in rdflib with a traceback, for a space)."""
    text = Path(TRIAGE[0]).read_text(encoding="utf-8")
    text += f"\n# the next line's IRI\n:urgent rdfs:seeAlso <http://example.org/{written}> .\n"
    (tmp_path / "triage.ttl").write_text(text, encoding="utf-8")
    line = text.count("\n")
    p = horismos("validate", "triage.ttl", TRIAGE[1], cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stdout) == (1, (
        f"triage.ttl:{line}: error: <http://example.org/{shown}> is not an IRI: it holds "
        f"{held}, which no IRI may hold (RFC 3987), and a store refuses it — write the "
        f"character percent-encoded ({encoded}), or remove it\ninvalid: 1 error\n")), p.stdout


def test_an_iri_a_store_holds_is_valid_however_far_from_ascii(tmp_path: Path) -> None:
    """What the store takes, validate takes: an accented letter, a letter of another
    script, a private-use character in a query (RFC 3987 allows it there)."""
    text = Path(TRIAGE[0]).read_text(encoding="utf-8") + (
        "\n:urgent rdfs:seeAlso <http://example.org/caf\u00e9>, <http://example.org/\u03b1\u03b2>,"
        " <http://example.org/a?q=\\uE000> .\n")
    (tmp_path / "triage.ttl").write_text(text, encoding="utf-8")
    p = horismos("validate", "triage.ttl", TRIAGE[1], cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.endswith(": valid\n"), p.stdout + p.stderr
    p = horismos("load", "triage.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_an_iri_slip_after_an_escaped_quote_in_a_name_is_said_at_its_own_line(
        tmp_path: Path) -> None:
    """`ex:it\\'s` (a local name with an escaped quote) was read as a string opening, which
    ran to the end of its line and took that line break with it: the slip two lines on was
    said one line too early."""
    (tmp_path / "apos.ttl").write_text(
        "@prefix ex: <http://example.org/> .\n"
        "ex:it\\'s ex:p ex:c .\n"
        "ex:c ex:p ex:d .\n"
        "ex:d ex:p <http://example.org/a\\u0001b> .\n", encoding="utf-8")
    p = horismos("validate", "apos.ttl", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("apos.ttl:4: error: <http://example.org/a\\u0001b> is not an IRI"), \
        p.stdout


@pytest.mark.parametrize("world", [
    pytest.param("positional", id="world-among-the-files"),
    pytest.param("--world", id="world-option"),
])
def test_run_says_validates_warnings_before_its_first_step_wherever_the_world_is(
        tmp_path: Path, world: str) -> None:
    """With the world among the files (`run FILES... world.ttl`), the warnings were held to a
    world made of the definitions themselves, where every term they name is "used": a tool
    argument typed :Nurs said nothing, the non-idempotent first tool acted, and the run then
    failed at the next step. Both ways of giving the world say the same warning."""
    text = Path(TRIAGE[0]).read_text(encoding="utf-8")
    old = 'horis:name "nurse"   ; horis:type :Nurse ]'
    assert text.count(old) == 1
    (tmp_path / "triage.ttl").write_text(text.replace(old, old.replace(":Nurse", ":Nurs")),
                                         encoding="utf-8")
    line = text[: text.index(old)].count("\n") + 1
    data = WORLD[1]
    given = [data] if world == "positional" else ["--world", data]
    p = horismos("run", "triage.ttl", TRIAGE[1], *given, *TOOLS, "--focus", ":patient42",
                 "--store", "memory", cwd=tmp_path)
    no_traceback(p)
    assert p.stderr.splitlines()[0] == (
        f"triage.ttl:{line}: warning: :ehr.notify_nurse: argument \"nurse\" has horis:type "
        ":Nurs, a class no loaded ontology declares and no loaded data uses, so no node is one "
        "and every call is refused — did you mean :Nurse?"), p.stderr


def test_a_blocked_instance_is_told_how_to_be_tried_again(tmp_path: Path) -> None:
    """A step blocked by the policy says to widen it with --allow; `resume` then said only
    that a blocked instance cannot be resumed, and a second `run --all` that every node
    already had an instance "done or being run, or waiting": neither said that `run --focus`
    tries a blocked instance again (`run --all` on a shared store leaves it be)."""
    (tmp_path / "pay.ttl").write_text("""\
@prefix :      <http://example.org/pay#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a rdfs:Class .
:t.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:pay" ; horis:sideEffect horis:ExternalCommit .
:Pay a horis:Workflow ; horis:focusType :Patient ; horis:start :P .
:P a horis:ActionStep ; horis:tool :t.pay ; horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (tmp_path / "pay_tools.py").write_text("def pay(patient):\n    return {'ref': 'R'}\n")
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/pay#> .\n:p1 a :Patient .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    run = ("run", "pay.ttl", "--store", "oxigraph:st", "--tools", "pay_tools.py")
    first = horismos(*run, "--all", cwd=tmp_path)
    assert first.returncode == 4, first.stdout + first.stderr
    short = first.stdout.split("]")[0].lstrip("[")
    resumed = horismos("resume", "pay.ttl", "--store", "oxigraph:st", "--tools", "pay_tools.py",
                       "--instance", short, cwd=tmp_path)
    assert resumed.returncode == 2 and "blocked" in resumed.stderr, resumed.stderr
    assert "--focus :p1" in resumed.stderr, resumed.stderr
    no_traceback(resumed)
    again = horismos(*run, "--all", cwd=tmp_path)  # tried again: still outside the policy
    assert again.returncode == 4 and short in again.stdout, again.stdout + again.stderr
    widened = horismos(*run, "--focus", ":p1", "--allow", "ReadOnly,HostStateWrite,ExternalCommit",
                       cwd=tmp_path)
    assert widened.returncode == 0 and short in widened.stdout, widened.stdout + widened.stderr


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_run_on_a_store_not_made_yet_without_a_world_is_refused_and_makes_none(
        tmp_path: Path, kind: str) -> None:
    """``run --store oxigraph:NEW`` with no ``--world`` made an empty store, found no focus in
    it and failed, leaving the store behind at what may be a mistyped path. With ``--world``
    a new store is still made, to load it into."""
    p = horismos("run", *TRIAGE, "--store", f"{kind}:new", "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no store at" in p.stderr and "horismos load" in p.stderr
    assert not (tmp_path / "new").exists()
    no_traceback(p)
    p = horismos("run", *TRIAGE, "--store", f"{kind}:new", "--focus", ":patient42", "-q",
                 "--world", str(ROOT / "examples" / "triage" / "world.ttl"), "--tools",
                 str(ROOT / "examples" / "triage" / "ehr_client.py"), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "new").is_dir()


LOGGED = """\
@prefix :      <http://example.org/guests#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Guest a owl:Class . :logged a owl:DatatypeProperty .
:t.log a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "guest" ; horis:type :Guest ] ] ;
    horis:effect [ horis:asserts [ horis:property :logged ; horis:type xsd:string ] ] ;
    horis:binding "python:guests.log" ;
    horis:idempotent false .
:Simple a horis:Workflow ; horis:focusType :Guest ; horis:start START .
:Nap a horis:WaitStep ; horis:reason "an operator's word" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ; horis:until "?this :ready true ." ; horis:next :Log .
:Log a horis:ActionStep ; horis:tool :t.log ;
    horis:bind [ horis:arg "guest" ; horis:var "this" ] .
"""

GUESTS = """\
import signal
import socket


def log(guest):
    with open("calls.log", "a") as f:
        f.write(guest + "\\n")
    with open("calls.log") as f:
        if len(f.read().split()) == int(open("interrupt-at").read()):
            signal.raise_signal(signal.SIGINT)  # Ctrl-C as the call returns
    return {"logged": "yes"}
"""


@pytest.mark.parametrize("lane", ["run", "resume"])
def test_ctrl_c_after_a_call_still_writes_out(tmp_path: Path, lane: str) -> None:
    """A Ctrl-C (or any error) part-way through ``run --all`` or ``resume`` with ``--out``
    wrote no file, though the tools called before it had acted: going on from the old file
    called a tool that is not idempotent again. The file is now written with what landed, so
    the call is not made twice."""
    start = ":Log" if lane == "run" else ":Nap"
    (tmp_path / "d.ttl").write_text(LOGGED.replace("START", start))
    (tmp_path / "guests.py").write_text(GUESTS)
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/guests#> .\n"
                                    ":g1 a :Guest . :g2 a :Guest .\n")
    calls = tmp_path / "calls.log"

    def interrupted(*args: str, at: int) -> subprocess.CompletedProcess[str]:
        (tmp_path / "interrupt-at").write_text(str(at))
        return horismos_forked(tmp_path, *args, timeout=120)  # SIGINT: KeyboardInterrupt

    tools = ("--tools", "guests", "--store", "memory")
    if lane == "run":
        p = interrupted("run", "d.ttl", "--world", "w.ttl", *tools, "--all", "--out",
                        "s1.trig", at=1)  # at the last call, the run had ended: said so
        again = ("run", "d.ttl", "--world", "s1.trig", *tools, "--all", "--out", "s2.trig")
    else:
        waiting = interrupted("run", "d.ttl", "--world", "w.ttl", *tools, "--focus", ":g1",
                              "--out", "s0.trig", at=0)
        assert waiting.returncode == 3, waiting.stdout + waiting.stderr
        listed = horismos("instances", "d.ttl", "--world", "s0.trig", "--store", "memory",
                          "--format", "json", cwd=tmp_path)
        (iid,) = [i["instance"] for i in json.loads(listed.stdout)]
        resume = ("resume", "d.ttl", "--world", "s0.trig", *tools, "--instance", iid,
                  "--facts", ":g1 :ready true .")
        p = interrupted(*resume, "--out", "s1.trig", at=1)
        again = ("resume", "d.ttl", "--world", "s1.trig", *tools, "--instance", iid,
                 "--out", "s2.trig")
    # at the resumed instance's one call, the Ctrl-C may reach it only once it has ended:
    # then it is said to have, and exits 0, its --out written as ever
    ended = lane == "resume" and p.returncode == 0
    assert p.returncode == 130 or ended, p.stdout + p.stderr
    no_traceback(p)
    assert (tmp_path / "s1.trig").exists(), p.stdout + p.stderr
    # it said "nothing of it was kept, nor written to --out" of the file it had written
    assert "nor written to --out" not in p.stderr, p.stderr
    assert ended or "was written to --out s1.trig, so go on from it (--world s1.trig)" in p.stderr
    logged = calls.read_text().split()
    interrupted(*again, at=0)
    called = calls.read_text().split()
    assert called[: len(logged)] == logged and len(set(called)) == len(called), called


@pytest.mark.parametrize("store", ["memory", "oxigraph:st"])
def test_a_tool_result_naming_an_iri_with_a_c1_control_is_refused_at_its_step_only(
        tmp_path: Path, store: str) -> None:
    """A tool answering `URIRef("…#nurse\\u0085one")` ended the whole `run --all` with "an
    input is not UTF-8 text" (exit 2): the gate's message for the refused IRI was written
    with a UTF-8 encoding read back as ASCII, an instance was left running and the other
    foci never ran. The step is refused by the gate; the run goes on."""
    (tmp_path / "ehr_client.py").write_text(
        "from rdflib import URIRef\n"
        "def assign_queue(patient, queue):\n    return {'queueRef': 'Q-URGENT-1'}\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    return {'assignedNurse': URIRef('http://example.org/ehr#nurse\\u0085one')}\n")
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "ehr_client.py", "--all", "--store", store,
                 "--out", "after.trig", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "not UTF-8" not in p.stderr, p.stderr
    assert p.stdout.count("rejected by the gate: nothing landed") == 2, p.stdout
    assert "3 instances: 1 blocked, 2 failed" in p.stdout, p.stdout
    assert "is not an IRI: it contains '\\x85'" in p.stdout, p.stdout
    after = Dataset()
    after.parse(tmp_path / "after.trig", format="trig")
    assert not list(after.quads((None, EX.assignedNurse, None, None))), "the refused step landed"
    assert len(list(after.quads((None, EX.queueRef, None, None)))) == 2  # the steps before it did


SLOW_GUESTS = """\
import signal, sys, threading, time

def log(guest):
    open('calls.log', 'a').write(guest + '\\n')
    for _ in range(1000):  # until the command awaits its answer, asleep in select
        main = sys._current_frames().get(threading.main_thread().ident)
        if main is not None and main.f_code.co_name == 'select':
            break
        time.sleep(0.01)
    signal.raise_signal(signal.SIGNAME)  # caught on the tool's thread, once it has acted
    time.sleep(30)
    open('finished', 'w').close()  # only if the command waited for it
    return {'logged': 'yes'}
"""


def _stopped_mid_call(tmp_path: Path, signame: str, *command: str
                      ) -> subprocess.CompletedProcess[str]:
    """``horismos COMMAND`` on the guests' world, its tool given SIGNAME mid-call."""
    (tmp_path / "d.ttl").write_text(LOGGED.replace("START", ":Log"))
    (tmp_path / "guests.py").write_text(SLOW_GUESTS.replace("SIGNAME", signame))
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/guests#> .\n:g1 a :Guest .\n")
    assert horismos("load", "w.ttl", "--store", "oxigraph:st", cwd=tmp_path).returncode == 0
    p = horismos_forked(tmp_path, *command, timeout=120)  # SIGINT: KeyboardInterrupt
    # the process waited for the tool: its prompt given back only once the tool had finished
    assert not (tmp_path / "finished").exists(), p.stdout + p.stderr
    assert p.returncode == (130 if signame == "SIGINT" else 143), p.stdout + p.stderr
    no_traceback(p)
    return p


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_ctrl_c_during_a_tools_call_points_to_reconcile_not_to_running_again(
        tmp_path: Path, signame: str) -> None:
    """A Ctrl-C as a catalog call's tool returned said "an instance stopped mid-step is
    continued by running the same command again": a call has no instance, and the same
    command again is refused, the call in doubt. It now says so, and what clears it. Caught
    on the tool's thread, a Ctrl-C (a SIGTERM) was heard only once the tool returned, 30 s
    later; the command now stops at once, the call left in doubt."""
    call = ("tools", "call", "t.log", "d.ttl", "--tools", "guests", "--store", "oxigraph:st",
            "--args", '{"guest": ":g1"}')
    p = _stopped_mid_call(tmp_path, signame, *call)
    assert "running the same command again" not in p.stderr, p.stderr
    assert "`horismos tools reconcile` clears it" in p.stderr, p.stderr
    again = horismos(*call, cwd=tmp_path)
    assert again.returncode == 5 and "outcome_unknown" in again.stdout, again.stdout
    assert (tmp_path / "calls.log").read_text().split() == ["http://example.org/guests#g1"]


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_ctrl_c_during_a_runs_tool_stops_the_run_not_once_the_tool_returns(
        tmp_path: Path, signame: str) -> None:
    """``run --focus`` calling a sync tool on its thread (not ``horis:inline``) heard a Ctrl-C
    (a SIGTERM) caught on that thread only once the tool returned. It stops at once; the step
    keeps its intent, so running again does not call the tool a second time."""
    run = ("run", "d.ttl", "--tools", "guests", "--store", "oxigraph:st", "--focus", ":g1")
    p = _stopped_mid_call(tmp_path, signame, *run)
    assert "an instance stopped mid-step is continued by running the same command" in p.stderr
    again = horismos(*run, cwd=tmp_path)
    assert again.returncode == 1 and "is not called again" in again.stdout, again.stdout
    assert (tmp_path / "calls.log").read_text().split() == ["http://example.org/guests#g1"]


@pytest.mark.parametrize(("written", "what", "fix"), [
    (':a :p "unclosed .', "a string opened at line 2, column 7, is never closed",
     'close it with " on line 2 (a text of several lines is written between """ and """)'),
    (":a :p 'unclosed .", "a string opened at line 2, column 7, is never closed",
     "close it with ' on line 2"),
    (":a :p <http://example.org/unclosed .", "an IRI opened at line 2, column 7, is never "
     "closed", "close it with '>' on line 2"),
])
def test_world_data_with_a_string_left_open_is_said_at_its_quote_with_the_fix(
        tmp_path: Path, written: str, what: str, fix: str) -> None:
    """The parser read on to the end of the file and said "Parser error between line 2
    column 7 and line 20003 column 1: Unexpected end of file — fix the syntax at that line":
    the line was right, nothing said what was wrong with it. Said as the quote it is, by
    `load` and by every command that reads world data."""
    rows = "".join(f":s{i} :p {i} .\n" for i in range(20000))
    (tmp_path / "w.ttl").write_text(f"@prefix : <http://x/> .\n{written}\n{rows}")
    said = f"w.ttl:2: error: cannot read world data: {what} (the parser read on to the end of "
    load = horismos("load", "w.ttl", "--store", "oxigraph:st", cwd=tmp_path)
    assert load.returncode == 1 and load.stderr.startswith(f"horismos load: {said}"), load.stderr
    assert fix in load.stderr, load.stderr
    run = horismos("run", *TRIAGE, "--world", "w.ttl", "--all", cwd=tmp_path)
    assert run.returncode == 2 and said in run.stderr and fix in run.stderr, run.stderr


def test_instances_says_what_a_waiting_instance_waits_for(tmp_path: Path) -> None:
    """`instances --status waiting`, as the proposals guide says to find the id to resume:
    given the definitions, a waiting row's why is its wait's `horis:reason`, as `run`'s table
    says it, and for a step waiting for approval, the tool whose call it is. It said `-`, and
    the operator had to find the run's output to learn what to answer."""
    rebooking = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl")]
    ran = horismos("run", *rebooking, "--world", str(ROOT / "examples" / "rebooking" / "world.ttl"),
                   "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"), "--all",
                   "--out", "after.trig", cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    listed = horismos("instances", *rebooking, "--world", "after.trig", "--status", "waiting",
                      cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = listed.stdout.splitlines()[1:]
    assert row.endswith("  The ranker is not sure which flight fits what the customer asked "
                        "for; pick one of the legal options."), listed.stdout
    triage = (ROOT / "workflows" / "triage.ttl").read_text(encoding="utf-8")
    tool = ":ehr.assign_queue a horis:Tool ;\n"
    (tmp_path / "defs.ttl").write_text(triage.replace(tool, tool + "    horis:requiresApproval "
                                                      "true ;\n"), encoding="utf-8")
    defs = ["defs.ttl", str(ROOT / "ontologies" / "ehr.ttl")]
    ran = horismos("run", *defs, *WORLD, *TOOLS, "--focus", ":patient42", "--out", "asks.trig",
                   cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    listed = horismos("instances", *defs, "--world", "asks.trig", "--format", "json",
                      cwd=tmp_path)
    (waiting,) = [r for r in json.loads(listed.stdout) if r["status"] == "waiting"]
    assert waiting["why"].startswith("waits for approval of its call of ehr.assign_queue"), (
        waiting)
