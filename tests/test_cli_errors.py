"""What a command-line user reads when the system fails under a command (a full disk, a file
size limit, a store's digest it cannot write back, a server that is not listening, an input
that is no file): what was being read or written and what to do, never a traceback nor the
system's bare text ("[Errno 28] No space left on device")."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from forked import horismos_forked, run
from listening import free_port
from test_cli import ROOT, TOOLS, TRIAGE, WORLD, horismos, no_traceback


def test_a_trace_the_disk_refuses_is_named_with_what_to_do(tmp_path: Path) -> None:
    """`--trace /dev/full`: the user read "[Errno 28] No space left on device", no file named."""
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "/dev/full", cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (
        2, "horismos run: error: /dev/full: the disk is full; free space on it, then run the "
           "command again\n"), p.stderr


def test_stdout_the_disk_refuses_says_an_output_could_not_be_written(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "horismos", "graph", *TRIAGE], cwd=tmp_path,
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert "Errno" not in p.stderr and "Traceback" not in p.stderr
    assert (p.returncode, p.stderr) == (
        2, "horismos graph: error: an output could not be written: the disk is full; free "
           "space on it, then run the command again\n"), p.stderr


def test_a_digest_the_store_cannot_write_on_closing_is_said_once_in_words(
        tmp_path: Path) -> None:
    """A run whose every commit landed, then the store's digest refused on closing (a file
    size limit, as a full disk): RocksDB's bare "IO error: While appending to file: …: File
    too large" was all the user read. The limit is set just past the store's largest file
    (RocksDB's own log, whose writes may fail, aside), a little more each try, until the run
    commits and its closing write is what is refused (a refused commit is the run's error,
    the digest refused after it a line "also: …")."""
    made = tmp_path / "made"
    assert horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), "--store",
                    "oxigraph:made", cwd=tmp_path).returncode == 0
    largest = max(f.stat().st_size for f in made.iterdir()
                  if not f.name.startswith("LOG"))
    said = []
    for margin in range(500, 8000, 250):
        shutil.rmtree(tmp_path / "st", ignore_errors=True)
        shutil.copytree(made, tmp_path / "st")
        p = horismos_forked(tmp_path, "run", *TRIAGE, *TOOLS, "--all", "--store",
                            "oxigraph:st", timeout=120, file_size=largest + margin,
                            ignore=(signal.SIGXFSZ,))
        no_traceback(p)
        said.append(p.stderr)
        if "on closing" in p.stderr and "also:" not in p.stderr:  # not after its commit's
            break
    assert "horismos run: error: the store at st could not write its digest on closing (" in (
        said[-1]), said
    assert said[-1].count("horismos") == 1, said[-1]
    assert said[-1].endswith("what was committed stays, and the next command that asks for "
                             "its digest recomputes it once: lift the limit (ulimit -f) or "
                             "write to another disk, then run the command again\n")
    digest = horismos("digest", "--store", "oxigraph:st", "--check", cwd=tmp_path)
    assert digest.returncode == 0, digest.stdout + digest.stderr


def test_a_store_left_open_whose_digest_the_disk_refuses_at_exit_says_one_line(
        tmp_path: Path) -> None:
    """A process that never closes its store (an embedding program; a command that leaves
    it to exit) closes it in an exit hook: a digest the disk refused there was printed as
    "Exception ignored in atexit callback" and a traceback."""
    (tmp_path / "left_open.py").write_text(textwrap.dedent("""
        import resource, signal
        from rdflib import Literal, URIRef
        from horismos import World
        from horismos._stores import Change
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        world = World.open("oxigraph:st")
        world.commit(Change(add=[(URIRef("urn:a"), URIRef("urn:p"), Literal(1), None)]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
    """))
    p = run([sys.executable, "left_open.py"], cwd=tmp_path, capture_output=True, text=True,
            timeout=120)  # piped: its own file size limit leaves a pipe alone
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("horismos: error: the store at st could not write its digest "
                               "on closing ("), p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr


TRACE = str(ROOT / "tests" / "fixtures" / "traces" / "recorded" / "triage-all.jsonl")
STDIN = "'-' names no file, and stdin is not read here"
SAVE = "give the file's name (save what a pipe gives to a file first)"


@pytest.mark.parametrize(("args", "said"), [
    (["validate", "-"], f"-: error: {STDIN} — {SAVE}\n"),
    (["run", *TRIAGE, "--world", "-", "--all"], f"  -: error: {STDIN} — {SAVE}\n"),
    (["trace", "show", "-"], f"horismos trace show: error: -: {STDIN}; {SAVE}\n"),
    (["replay", "-", *TRIAGE], f"horismos replay: error: -: {STDIN}; {SAVE}\n"),
    (["tools", "call", "ehr.assign_queue", "--args", "@-", *TRIAGE],
     f"horismos tools call: error: --args @-: {STDIN}; give the JSON itself (--args "
     """'{"patient": ":patient42"}') or @FILE, a file holding it\n""")])
def test_dash_as_an_input_says_stdin_is_not_read_there(
        tmp_path: Path, args: list[str], said: str) -> None:
    """`-` read as a file's name: "no such file or folder", as if a file named "-" were
    missing, where the user meant stdin."""
    p = horismos(*args, cwd=tmp_path)
    no_traceback(p)
    assert p.returncode in (1, 2), p.stdout + p.stderr
    assert said in p.stdout + p.stderr, p.stdout + p.stderr
    assert "no such file" not in p.stdout + p.stderr


def test_replay_of_a_named_pipe_is_refused_not_waited_on_forever(tmp_path: Path) -> None:
    """replay read a pipe's header line, then opened it again for its events and waited for
    a second writer forever (SIGTERM did not end it)."""
    os.mkfifo(tmp_path / "pipe")
    p = horismos_forked(tmp_path, "replay", "pipe", *TRIAGE, timeout=60)
    assert (p.returncode, p.stderr) == (
        2, "horismos replay: error: pipe: a named pipe, which replay reads twice, its header "
           "then its events; save the trace to a file and give that\n"), p.stderr


def test_replay_of_a_folder_holding_a_named_pipe_is_refused_not_waited_on_forever(
        tmp_path: Path) -> None:
    """Only the path given was checked: a pipe among a folder's *.jsonl was read as a trace,
    and replay waited for its writer forever (killed here, -9, when the wait passes 60 s)."""
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACE, tmp_path / "traces" / "a.jsonl")
    os.mkfifo(tmp_path / "traces" / "b.jsonl")
    try:
        p = horismos_forked(tmp_path, "replay", "traces", *TRIAGE, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("replay waited on the pipe in the folder")
    assert (p.returncode, p.stderr) == (
        2, "horismos replay: error: traces/b.jsonl: a named pipe, which replay reads twice, "
           "its header then its events; save the trace to a file and give that\n"), p.stderr


@pytest.mark.parametrize(("make", "said"), [
    (lambda b: b.symlink_to("gone.jsonl"),
     "a symbolic link to gone.jsonl, which does not exist; give the trace it should point to"),
    (Path.mkdir, "a folder, not a trace; give the traces in it, or rename it")])
def test_replay_of_a_folder_says_what_its_jsonl_that_is_no_file_is(
        tmp_path: Path, make: Callable[[Path], object], said: str) -> None:
    """Any *.jsonl of a folder that is not a regular file was "a named pipe (or a device)":
    a link to a trace removed and a folder named b.jsonl too."""
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACE, tmp_path / "traces" / "a.jsonl")
    make(tmp_path / "traces" / "b.jsonl")
    p = horismos("replay", "traces", *TRIAGE, cwd=tmp_path)
    assert (p.returncode, p.stderr) == (
        2, f"horismos replay: error: traces/b.jsonl: {said}\n"), p.stderr


def test_a_file_named_dash_is_read_as_any_other(tmp_path: Path) -> None:
    """`touch ./-; horismos trace show -` was refused as stdin, the file there unread."""
    shutil.copy(TRACE, tmp_path / "-")
    p = horismos("trace", "show", "-", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert p.stdout == horismos("trace", "show", TRACE, cwd=tmp_path).stdout


def test_a_trace_this_user_may_not_write_is_not_told_to_be_made_readable(
        tmp_path: Path) -> None:
    """`--trace /sys/trace.jsonl` (a folder no user may make a file in, root included): the
    user was told "this user may not read it; give it read permission (chmod a+r)"."""
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", "--trace", "/sys/trace.jsonl",
                 cwd=tmp_path)
    no_traceback(p)
    assert (p.returncode, p.stderr) == (
        2, "horismos run: error: /sys/trace.jsonl: this user may not read or write it there; "
           "give it (or the folder it is made in) the permission the command needs (chmod), "
           "or run as a user who may\n"), p.stderr


def test_a_commit_the_disk_refuses_names_the_store_and_what_to_do(tmp_path: Path) -> None:
    """RocksDB's refusal of a commit (a file over the size limit, EFBIG) came out as its own
    OSError, "IO error: While appending to file: st/000010.log: File too large", which the
    command line said as "an output could not be written", no store named."""
    (tmp_path / "commits.py").write_text(textwrap.dedent("""
        import resource, signal
        from pathlib import Path
        from rdflib import Literal, URIRef
        from horismos import StoreError, World
        from horismos._stores import Change
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        world = World.open("oxigraph:st")
        biggest = max(f.stat().st_size for f in Path("st").iterdir())
        resource.setrlimit(resource.RLIMIT_FSIZE, (biggest + 20_000, resource.RLIM_INFINITY))
        try:
            for i in range(100_000):
                world.commit(Change(add=[(URIRef(f"urn:a{i}"), URIRef("urn:p"),
                                          Literal("x" * 200), None)]))
        except StoreError as e:
            print("refused:", e)
        try:
            world.close()  # RocksDB refuses writes after the one it failed: said once
        except StoreError:
            pass
    """))
    p = horismos_forked(tmp_path, script=tmp_path / "commits.py", timeout=120)
    assert p.returncode == 0, p.stderr
    said = p.stdout.splitlines()[0]
    assert said.startswith("refused: the store at st could not write a commit: the file "
                           "would pass the size limit of this process (IO error: "), said
    assert said.endswith("File too large); nothing of it landed — lift the limit (ulimit -f) "
                         "or write to another disk, then run the command again"), said


def test_a_store_whose_digest_the_disk_refused_on_closing_is_let_go(tmp_path: Path) -> None:
    """The refused digest was raised before the store was let go: it stayed open, its lock
    held, and opening it again in the process said "lock hold by current process"."""
    (tmp_path / "reopen.py").write_text(textwrap.dedent("""
        import resource, signal
        from rdflib import Literal, URIRef
        from horismos import StoreError, World
        from horismos._stores import Change
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        world = World.open("oxigraph:st")
        world.commit(Change(add=[(URIRef("urn:a"), URIRef("urn:p"), Literal(1), None)]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
        try:
            world.close()
        except StoreError as e:
            print("refused:", e)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        with World.open("oxigraph:st") as again:
            print("opened again:", len(again.canonical().splitlines()))
    """))
    p = horismos_forked(tmp_path, script=tmp_path / "reopen.py", timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("refused: the store at st could not write its digest on "
                               "closing ("), p.stdout
    assert p.stdout.endswith("\nopened again: 1\n"), p.stdout


INTERRUPTING_TOOLS = '''
import functools, os, resource, runpy, signal
from pathlib import Path

_real = runpy.run_path(os.environ["REAL_TOOLS"])
assign_queue = _real["assign_queue"]


@functools.wraps(_real["notify_nurse"])
def notify_nurse(*args, **kwargs):
    """Ctrl-C during the call, and the process may write no file more than MARGIN bytes past
    the store's log as it is now."""
    log = max(f.stat().st_size for f in Path("st").glob("*.log"))
    resource.setrlimit(resource.RLIMIT_FSIZE, (log + int(os.environ["MARGIN"]),) * 2)
    os.kill(os.getpid(), signal.SIGINT)
    return _real["notify_nurse"](*args, **kwargs)


assign_queue.__module__ = notify_nurse.__module__ = __name__
'''


def test_ctrl_c_after_commits_says_interrupted_when_the_digest_is_refused_too(
        tmp_path: Path) -> None:
    """World's exit let close's error replace the block's: a Ctrl-C after commits exited 2
    with the digest's message, not 130 with "interrupted; what stays". The limit is the
    smallest margin past the store's log (to 64 bytes, searched by halves) at which the
    interrupted step's commit still lands: the digest written on closing is refused (or one
    a little past it: a commit's size varies from run to run)."""
    (tmp_path / "ehr_client.py").write_text(INTERRUPTING_TOOLS)

    def run(margin: int) -> subprocess.CompletedProcess[str]:
        shutil.rmtree(tmp_path / "st", ignore_errors=True)
        return horismos_forked(
            tmp_path, "run", *TRIAGE, *WORLD, "--tools", "ehr_client.py", "--all", "--store",
            "oxigraph:st", timeout=120, ignore=(signal.SIGXFSZ,),
            env={**os.environ, "MARGIN": str(margin),
                 "REAL_TOOLS": str(ROOT / "examples" / "triage" / "ehr_client.py")})

    for _ in range(2):  # the search again, should RocksDB's log differ from the runs it made
        low, high = 0, 1 << 16
        while high - low > 64:
            middle = (low + high) // 2
            low, high = (low, middle) if "interrupted;" in run(middle).stderr else (middle, high)
        # a step's commit is not the same size each run (its ids, its times): near the limit
        # found, one run's commit may be refused where the last one's landed; a few margins past
        # it. On a loaded machine RocksDB's background work moved the limit past all of them
        # once (the log written by then is not the same from run to run): then searched again
        for margin in range(high, high + 16 * 64, 64):
            p = run(margin)
            no_traceback(p)
            if p.returncode == 130 and "also:" in p.stderr:
                break
        if p.returncode == 130 and "also:" in p.stderr:
            break
    assert p.returncode == 130, p.stderr
    lines = p.stderr.splitlines()
    assert lines[-2].startswith("horismos run: interrupted; what had been committed stays"), (
        p.stderr)
    assert lines[-1].startswith("horismos run: also: the store at st could not write its "
                                "digest on closing ("), p.stderr


def test_a_turtle_file_given_to_tools_says_it_is_turtle_and_where_it_goes(
        tmp_path: Path) -> None:
    """`--tools triage.ttl` was imported as the module "triage.ttl": "No module named
    'triage'; run from the folder that holds it, or give the path of the .py file"."""
    for given in (TRIAGE[0], "triage.ttl"):
        p = horismos("run", *TRIAGE, *WORLD, "--tools", given, "--all", cwd=tmp_path)
        assert (p.returncode, p.stderr) == (
            2, f"horismos run: error: --tools {given}: a Turtle file, not Python: give it "
               "among the definitions' FILE_OR_DIR arguments, without --tools; --tools takes "
               "a Python module or a .py file whose functions back python: bindings\n"), p.stderr


def test_validate_shows_a_binary_files_control_characters_escaped(tmp_path: Path) -> None:
    """The line a syntax error was met on was echoed as it was: a NUL byte, a bell, and an
    escape sequence that cleared the user's terminal."""
    (tmp_path / "odd.ttl").write_bytes(b"\x00\x01garbage\x07\x1b[2J here\n")
    p = horismos("validate", "odd.ttl", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("odd.ttl:1: error: Turtle syntax error: expected directive or "
                               "statement, at: \\x00\\x01garbage\\x07\\x1b[2J here — "), p.stdout
    assert not any(c in p.stdout for c in "\x00\x01\x07\x1b")


def test_an_unreachable_sparql_server_is_said_in_words(tmp_path: Path) -> None:
    """Nothing listening at the URL: "cannot be reached ([Errno 111] Connection refused)"."""
    url = f"http://127.0.0.1:{free_port()}/world"
    p = horismos("run", *TRIAGE, "--store", f"sparql:{url}", "--all", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (
        2, f"horismos run: error: the SPARQL server at {url} cannot be reached: nothing "
           "listens at that address and port (the connection was refused); check the URL, "
           "and start the server if it is not running (oxigraph serve --location DIR --bind "
           "HOST:PORT)\n"), p.stderr


def test_a_huge_argument_is_not_echoed_whole_in_the_refusal(tmp_path: Path) -> None:
    """A 5 MB string given where a node is taken: its refusal was 5 MB of stderr text (10 MB
    in --format json), the value echoed whole."""
    (tmp_path / "huge.json").write_text('{"patient": "' + "x" * 5_000_000 + '"}')
    for fmt in ("text", "json"):
        p = horismos("tools", "call", "ehr.assign_queue", "--args", "@huge.json", *TRIAGE,
                     *WORLD, *TOOLS, "--format", fmt, cwd=tmp_path)
        no_traceback(p)
        assert p.returncode == 5, p.stderr
        assert len(p.stdout + p.stderr) < 5000, len(p.stdout + p.stderr)
        assert "… (4,999," in p.stdout and "characters cut) …" in p.stdout, p.stdout[:1000]
        quote = '\\"' if fmt == "json" else '"'  # the reason the cut value ends with survives
        assert (f"' is neither an IRI nor a CURIE with a declared prefix; argument {quote}queue"
                f"{quote} is required") in p.stdout, p.stdout[-1000:]


def test_tools_discover_given_a_file_first_says_the_query_comes_first(tmp_path: Path) -> None:
    """`tools discover triage.ttl ehr.ttl` searched for the words "triage.ttl", and said no
    executable tool matched them, exit 1."""
    p = horismos("tools", "discover", *TRIAGE, cwd=tmp_path)
    assert (p.returncode, p.stderr) == (
        2, f"horismos tools discover: error: {TRIAGE[0]} names a file, where the QUERY comes "
           f"first: horismos tools discover 'WORDS' {TRIAGE[0]} …\n"), p.stdout + p.stderr


def test_a_tool_not_found_is_said_by_the_tools_action_that_looked(tmp_path: Path) -> None:
    """`horismos tools call ehr.nosuch …` said `horismos tools: error: no tool named …`, where
    argparse's own errors of the same command say `horismos tools call:`; a script running
    several tools actions could not tell which had failed."""
    p = horismos("tools", "call", "ehr.nosuch", *TRIAGE, "--args", "{}", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (
        2, "horismos tools call: error: no tool named 'ehr.nosuch' (declared: "
           "ehr.assign_queue, ehr.notify_nurse)\n"), p.stdout + p.stderr


def test_validate_leaves_a_tab_and_unicode_spacing_as_they_are(tmp_path: Path) -> None:
    """Every character str.isprintable() refuses was escaped: a tab shown as \\t, a zero-width
    joiner as \\u200d, an ideographic space as \\u3000, which a terminal shows harmlessly; a
    C1 control (CSI, \\x9b) is escaped as C0's are."""
    (tmp_path / "odd.ttl").write_text("garbage\there\u200d\u3000x\x9b2J\n", encoding="utf-8")
    p = horismos("validate", "odd.ttl", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "statement, at: garbage\there\u200d\u3000x\\x9b2J — " in p.stdout, p.stdout


@pytest.mark.parametrize(("system", "hint"), [
    ("No space left on device", "free space on it, then run the command again"),
    ("File too large", "lift the limit (ulimit -f) or write to another disk, then run the "
                       "command again")])
def test_a_write_rocksdb_reports_without_an_errno_is_worded_by_its_text(
        system: str, hint: str) -> None:
    """RocksDB's errors carry the system's text, no errno: the digest refused on closing said
    "free space … or lift the file size limit" whatever the disk had refused."""
    from horismos._os_words import written

    refused = written(OSError(f"IO error: While appending to file: st/000045.log: {system}"))
    assert refused is not None and refused[1] == hint


class _FlushRefused:
    """An oxigraph store whose flush the disk refuses; everything else the store's own."""

    def __init__(self, store: object) -> None:
        self.store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_flush_refused_on_closing_is_a_note_on_the_blocks_own_error(tmp_path: Path) -> None:
    """The flush on closing ran outside what turns an OSError into a StoreError, and
    `World.__exit__` keeps the block's own error only under a StoreError: a Ctrl-C in the
    block was replaced by the flush's bare OSError (exit 2, not 130)."""
    from horismos import StoreError, World

    store = f"oxigraph:{tmp_path / 'st'}"
    # OSError: [Errno 28] in place of the KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt) as raised, World.open(store) as world:
        world.store._store = _FlushRefused(world.store._store)
        raise KeyboardInterrupt
    assert raised.value.__notes__ == [
        f"also: the store at {tmp_path / 'st'} could not flush on closing ([Errno 28] No "
        "space left on device); what was committed stays: free space on it, then run the "
        "command again"], raised.value.__notes__
    # its own error when the block raised none; the store let go, though refused
    with pytest.raises(StoreError, match="could not flush on closing"), World.open(store) as world:
        world.store._store = _FlushRefused(world.store._store)
    World.open(store).close()  # "lock hold by current process"


NOT_CLOSED = '''
import runpy, sys
from horismos import StoreError, World

closes = World.close

def close(self):  # closed, then refused as a digest the disk refuses is
    closes(self)
    raise StoreError("the store at st could not write its digest on closing")

def digest(self):  # what reading the world met
    raise {error}

World.close, World.digest = close, digest
sys.argv[0] = "horismos"
runpy.run_module("horismos", run_name="__main__")
'''


@pytest.mark.parametrize(("error", "said"), [
    ("UnicodeDecodeError('utf-8', b'\\\\xff', 0, 1, 'invalid start byte')",
     "an input is not UTF-8 text (invalid start byte at byte 0); give text files in UTF-8"),
    ("RecursionError()", "an input is nested too deeply to be read")])
def test_a_store_that_could_not_close_is_said_after_an_input_unread(
        tmp_path: Path, error: str, said: str) -> None:
    """An input not UTF-8, or nested too deeply, was said without the note on it: the store
    that then could not close was not told."""
    assert horismos("load", *WORLD[1:], "--store", "oxigraph:st", cwd=tmp_path).returncode == 0
    (tmp_path / "not_closed.py").write_text(NOT_CLOSED.format(error=error), encoding="utf-8")
    p = horismos_forked(tmp_path, "digest", "--store", "oxigraph:st",
                        script=tmp_path / "not_closed.py", timeout=120)
    assert (p.returncode, p.stderr) == (2, (
        f"horismos digest: error: {said}\n"
        "horismos digest: also: the store at st could not write its digest on closing\n")), (
        p.stderr)


def test_definitions_with_no_workflow_say_so_not_name_the_workflow(tmp_path: Path) -> None:
    """``horismos run ontologies/ehr.ttl …`` (the workflow's file left out) and
    ``agent.run(world)`` of an agent loaded from tools alone said "name the workflow to run
    (declared: none)": a name asked for, none there to give. Each says no workflow is
    declared, and to give its file."""
    from horismos import Agent, UsageError, World

    done = horismos("run", TRIAGE[1], *WORLD, "--focus", ":patient42", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "declare no horis:Workflow: give the Turtle file" in done.stderr
    assert "declared: none" not in done.stderr
    no_traceback(done)
    agent = Agent.from_files(TRIAGE[1])
    with pytest.raises(UsageError, match="declare no horis:Workflow"):
        agent.run(World.from_files(WORLD[1]), focus=":patient42")
