"""``horismos_forked`` answers as ``subprocess.run`` would, and ``forked.Popen`` behaves as
``subprocess.Popen`` does: the suite's ~1,000 commands rely on them for their exit codes, output,
timeouts, signals and separation from one another."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from forked import Popen, horismos_forked, run

SCRIPT = """import os, signal, sys, time
what = sys.argv[1]
if what == "sleep":
    time.sleep(30)
elif what == "term":
    os.kill(os.getpid(), signal.SIGTERM)
elif what == "write":  # past a file size limit: the write refused, or the process killed
    try:
        with open("big", "wb") as f:
            f.write(b"x" * 4096)
    except OSError as e:
        print(e.errno)
elif what == "show":
    print(os.getcwd(), os.environ.get("FORKED_MARK", "-"), sys.stdin.read() or "-")
    os.environ["FORKED_MARK"] = "left"
    os.chdir("/")
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    (tmp_path / "s.py").write_text(SCRIPT)
    return tmp_path / "s.py"


def test_a_command_past_its_timeout_is_killed_and_the_next_one_answers_for_itself(
        tmp_path: Path, script: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        horismos_forked(tmp_path, "sleep", script=script, timeout=0.5)
    done = horismos_forked(tmp_path, "exit", "3", script=script, timeout=30)
    assert done.returncode == 3


def test_a_command_killed_by_a_signal_answers_minus_its_number(
        tmp_path: Path, script: Path) -> None:
    assert horismos_forked(tmp_path, "term", script=script).returncode == -15


def test_a_file_size_limit_and_ignored_signals_are_set_as_a_preexec_fn_sets_them(
        tmp_path: Path, script: Path) -> None:
    """``file_size`` and ``ignore`` start the command as a ``preexec_fn`` setting RLIMIT_FSIZE
    and SIGXFSZ ignored starts a fresh one: its write past the limit fails with EFBIG (not
    killing it), and a signal ignored does not end it."""
    limited = horismos_forked(tmp_path, "write", script=script, file_size=1000,
                              ignore=(signal.SIGXFSZ,))
    assert (limited.returncode, limited.stdout) == (0, f"{errno.EFBIG}\n"), limited.stderr
    assert horismos_forked(tmp_path, "write", script=script).stdout == ""  # none by default
    assert horismos_forked(tmp_path, "term", script=script,
                           ignore=(signal.SIGTERM,)).returncode == 0


def test_folder_environment_and_stdin_are_each_commands_own(
        tmp_path: Path, script: Path) -> None:
    (tmp_path / "a").mkdir()
    first = horismos_forked(tmp_path / "a", "show", script=script, input="given")
    second = horismos_forked(tmp_path, "show", script=script)
    assert first.stdout.split() == [str(tmp_path / "a"), "-", "given"]
    assert second.stdout.split() == [str(tmp_path), "-", "-"]


def test_commands_from_two_threads_at_once_both_answer(tmp_path: Path, script: Path) -> None:
    """One uses the forking process; the other, finding it busy, starts an interpreter."""
    codes: list[int] = []

    def run(code: str) -> None:
        codes.append(horismos_forked(tmp_path, "exit", code, script=script).returncode)

    threads = [threading.Thread(target=run, args=(str(n),)) for n in (4, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [4, 5]


BESIDE = """import os, signal, sys, time
print(os.getpid(), os.getsid(0), "horismos._cli" in sys.modules,
      os.getcwd(), os.environ.get("FORKED_MARK", "-"),
      signal.getsignal(signal.SIGINT) is signal.default_int_handler,
      signal.getsignal(signal.SIGTERM) is signal.SIG_IGN, flush=True)
print("err", file=sys.stderr, flush=True)
for line in sys.stdin:
    if line.strip() == "exit":
        sys.exit(7)
    print(line.strip().upper(), flush=True)
"""


def _beside(tmp_path: Path, **options: object) -> Popen:
    return Popen([sys.executable, "beside.py"], cwd=tmp_path, stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def test_a_command_started_beside_the_tests_is_this_process_child_forked_from_the_zygote(
        tmp_path: Path) -> None:
    """Three at once, each talking over its own pipes: each is this process's own child (its
    own pid, waited for and signalled here), forked from the zygote (the command line is
    imported already), in its folder, environment and session as asked."""
    (tmp_path / "beside.py").write_text(BESIDE)
    procs = [_beside(tmp_path), _beside(tmp_path, start_new_session=True,
                                        env={**os.environ, "FORKED_MARK": "given"}),
             _beside(tmp_path, ignore=(signal.SIGTERM,))]
    said = [p.stdout.readline().split() for p in procs if p.stdout]
    for p, (pid, _, imported, cwd, _, sigint, _) in zip(procs, said, strict=True):
        # its parent, once Popen has answered (it may have looked before its go-between ended)
        parent = int(Path(f"/proc/{p.pid}/stat").read_text().rpartition(")")[2].split()[1])
        assert (int(pid), parent, imported, cwd, sigint) == (
            p.pid, os.getpid(), "True", str(tmp_path), "True")
    assert int(said[0][1]) == os.getsid(0) and int(said[1][1]) == procs[1].pid
    assert [s[4] for s in said] == ["-", "given", "-"]
    assert [s[6] for s in said] == ["False", "False", "True"]
    out, err = procs[0].communicate("hello\nexit\n", timeout=30)
    assert (procs[0].returncode, out, err) == (7, "HELLO\n", "err\n")
    procs[1].send_signal(signal.SIGTERM)
    assert procs[1].wait(30) == -signal.SIGTERM
    procs[2].terminate()  # ignored
    with pytest.raises(subprocess.TimeoutExpired):
        procs[2].wait(0.5)
    procs[2].kill()
    assert procs[2].wait(30) == -signal.SIGKILL


def test_a_horismos_command_started_beside_the_tests_answers_as_a_fresh_one(
        tmp_path: Path) -> None:
    """``python -m horismos`` through the zygote: its usage error on stderr, exit code 2."""
    p = Popen([sys.executable, "-m", "horismos", "bogus"], cwd=tmp_path,
              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 2 and "invalid choice: 'bogus'" in out, out


def test_a_command_the_zygote_cannot_start_is_started_the_ordinary_way(tmp_path: Path) -> None:
    """A ``preexec_fn`` (which only a fresh child can run) starts a fresh interpreter, still
    this process's child."""
    (tmp_path / "beside.py").write_text(BESIDE)
    p = Popen([sys.executable, "beside.py"], cwd=tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
              preexec_fn=os.getpid)
    out, _ = p.communicate("exit\n", timeout=60)
    pid, _, imported, *_ = out.split()
    assert (int(pid), imported, p.returncode) == (p.pid, "False", 7)


def test_run_answers_as_subprocess_run_over_pipes(tmp_path: Path, script: Path) -> None:
    """``forked.run``: a file size limit on the files the command writes (not its pipes), its
    exit code and output, and past its timeout the command killed and TimeoutExpired."""
    limited = run([sys.executable, str(script), "write"], cwd=tmp_path, capture_output=True,
                  text=True, file_size=1000, ignore=(signal.SIGXFSZ,))
    assert (limited.returncode, limited.stdout) == (0, f"{errno.EFBIG}\n"), limited.stderr
    assert run([sys.executable, str(script), "exit", "3"], cwd=tmp_path).returncode == 3
    with pytest.raises(subprocess.TimeoutExpired):
        run([sys.executable, str(script), "sleep"], cwd=tmp_path, timeout=0.5)


@pytest.mark.usefixtures("forked_popen")
def test_a_process_asyncio_starts_under_forked_popen_is_forked_and_waited_for(
        tmp_path: Path) -> None:
    """What the MCP SDK's stdio_client does (anyio, then asyncio, then ``subprocess.Popen``):
    the command forked from the zygote, in its own session as asked, and its exit code read by
    asyncio's own child watcher."""
    import asyncio

    (tmp_path / "beside.py").write_text(BESIDE)

    async def talk() -> tuple[list[str], int]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "beside.py", cwd=tmp_path, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        assert proc.stdout is not None and proc.stdin is not None
        said = (await proc.stdout.readline()).decode().split()
        proc.stdin.write(b"exit\n")
        return said, await asyncio.wait_for(proc.wait(), 30)

    (pid, session, imported, *_), code = asyncio.run(talk())
    assert (imported, int(session), code) == ("True", int(pid), 7)
