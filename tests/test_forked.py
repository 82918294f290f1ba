"""``horismos_forked`` answers as ``subprocess.run`` would: the suite's ~1,000 commands rely on
it for their exit codes, output, timeouts and separation from one another."""

from __future__ import annotations

import errno
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from forked import horismos_forked

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
