"""The HTML viewer and the rendered diagrams, as users get them: the real ``horismos`` command
writes each page, Graphviz's real ``dot`` lays out each diagram, and a real headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, driven by Selenium) opens each page from
file://. One browser serves the whole module. Each page's screenshot is written under the
test's temporary folder (its path is printed with ``-s``).

Outside CI the tests that need a program skip when it is missing, saying which; in CI (``CI``
set) they run, and .ci/run installs the programs first.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from horismos import Trace, read_trace
from horismos._cli import main
from horismos._run_counts import count_runs
from horismos._view_model import view_model

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "fixtures" / "traces"
RECORDED = TRACES / "recorded"
DEFINITIONS = [str(TRACES / "definitions")]
ALL_KINDS = str(ROOT / "tests" / "fixtures" / "viewer" / "all_kinds.ttl")
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def need(*programs: str) -> None:
    """Skip outside CI when a program is missing; in CI a missing one fails the test."""
    missing = [p for p in programs if shutil.which(p) is None and not Path(p).exists()]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"needs {', '.join(missing)} (apt-get install chromium chromium-driver "
                    "graphviz; .ci/run installs them in CI)")


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def horismos(*args: str, cwd: Path) -> Done:
    """The command line's ``main`` in this process (a new Python each time costs seconds
    on a busy machine; test_cli.py covers the console script): exit code and both streams."""
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(here)
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    return Done(code, out.getvalue(), err.getvalue())


def page_data(html: str) -> dict[str, Any]:
    """The data a page embeds, inflated as the page's script inflates it."""
    blob = re.search(r'<script id="horismos-data"[^>]*>([^<]*)</script>', html)
    assert blob is not None
    return json.loads(gzip.decompress(base64.b64decode(blob[1])))


# -- the view model and the counts, without a browser ---------------------------------------

def test_view_model_gives_each_instance_its_status_where_it_stopped_and_its_steps() -> None:
    events = read_trace(RECORDED / "triage-failures.jsonl")
    m = view_model(events, source="triage-failures.jsonl")
    S, inst, steps = m["strings"], m["instances"], m["steps"]
    assert [S[s] for s in inst["status"]] == ["failed", "failed", "blocked"]
    assert [S[s] for s in steps["status"]] == ["rejected", "failed", "blocked"]
    assert steps["seq"] == [2, 4, 6] and steps["inst"] == [0, 1, 2]
    rejected = m["details"][0]
    assert rejected["gate"]["messages"][0]["path"] == ":queueRef"
    assert rejected["outcomes"] == [{"returned": {"@map": {"queueRef": "queue 7"}}}]
    assert "reads" not in events[2] or rejected["reads"] == len(events[2]["reads"])
    assert rejected["hash"] == events[2]["hash"][:23]
    assert ["ehr", "http://example.org/ehr#"] in m["prefixes"]
    assert m["run"]["complete"] and m["run"]["status"] == "failed"
    assert all(0 <= t0 <= t1 for t0, t1 in zip(steps["t0"], steps["t1"], strict=True))


def test_a_trace_cut_mid_run_shows_the_instance_still_running(tmp_path: Path) -> None:
    lines = (RECORDED / "triage-timeout.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:3]))  # header, instance, the first step: no end event
    m = view_model(read_trace(cut), source="cut.jsonl")
    assert m["run"]["complete"] is False and m["run"]["status"] == "stopped"
    assert [m["strings"][s] for s in m["instances"]["status"]] == ["running"]


def test_counts_per_step_and_edge_across_traces() -> None:
    counts = count_runs(read_trace(RECORDED / name) for name in (
        "triage-all.jsonl", "triage-failures.jsonl", "triage-timeout.jsonl"))
    q, n = "http://example.org/ehr#QueuePatient", "http://example.org/ehr#NotifyNurse"
    assert counts.traces == 3 and counts.instances == 7
    assert counts.started["http://example.org/ehr#Triage"] == 7
    assert counts.visits[q] == 7 and counts.visits[n] == 3
    assert counts.edges[(q, n)] == 3
    assert counts.ended[q] == {"blocked": 2, "failed": 2}
    assert counts.ended[n] == {"failed": 1}  # the nurse pager that timed out
    assert counts.statuses[n]["timed_out"] == 1


# -- the command line ------------------------------------------------------------------------

def test_graph_svg_draws_kinds_and_edge_kinds_apart(tmp_path: Path) -> None:
    need("dot")
    p = horismos("graph", ALL_KINDS, "--format", "svg", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    svg = p.stdout
    assert svg.startswith("<svg") and "<?xml" not in svg
    for kind in ("DecisionStep", "ProposalStep", "WaitStep", "ActionStep"):
        assert f'class="node step {kind}"' in svg
    assert svg.count("<polygon") >= 3  # diamond, hexagon and the box's outline
    for kind, look in (("onError", 'stroke="#c0392b" stroke-dasharray="5,2"'),
                       ("fallback", 'stroke="#c46a00" stroke-dasharray="5,2"'),
                       ("onTimeout", 'stroke="#7a3db8" stroke-dasharray="1,5"')):
        edge = re.search(rf'<g id="edge&#45;s\d&#45;s\d&#45;{kind}" class="edge {kind}">'
                         r"(.*?)</g>", svg, re.S)
        assert edge is not None, kind
        assert look in edge[1], (kind, edge[1])


def test_graph_without_dot_says_to_install_graphviz(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on it
    p = horismos("graph", ALL_KINDS, "--format", "svg", "-o", "d.svg", cwd=tmp_path)
    assert p.returncode == 2
    assert "install Graphviz" in p.stderr and "apt-get install graphviz" in p.stderr
    assert not (tmp_path / "d.svg").exists()
    p = horismos("graph", ALL_KINDS, "--format", "mermaid", "--trace", "x.jsonl", cwd=tmp_path)
    assert p.returncode == 2 and "--format svg or html" in p.stderr


def test_trace_view_writes_one_page_that_asks_for_nothing(tmp_path: Path) -> None:
    trace = RECORDED / "triage-failures.jsonl"
    p = horismos("trace", "view", str(trace), "-o", "run.html", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    html = (tmp_path / "run.html").read_text()
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<link" not in html and "@import" not in html and "url(http" not in html
    assert "default-src 'none'" in html  # and the browser is told to refuse any request
    data = page_data(html)
    assert data["mode"] == "trace" and len(data["instances"]["id"]) == 3
    assert "reads" not in json.dumps(data["details"][0]).replace('"reads":', "")
    bad = horismos("trace", "view", str(tmp_path / "none.jsonl"), "-o", "x.html",
                   cwd=tmp_path)
    assert bad.returncode == 2 and "no such file; check the path" in bad.stderr
    assert not (tmp_path / "x.html").exists()


def test_replay_html_for_a_folder_writes_one_page_per_trace(tmp_path: Path) -> None:
    need("dot")
    traces = tmp_path / "traces"
    traces.mkdir()
    for name in ("triage-all.jsonl", "urgent-only-diverges.jsonl"):
        shutil.copy(RECORDED / "snapshot" / name, traces / name)
    p = horismos("replay", str(traces), *DEFINITIONS, "--html", "pages", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr  # one of them diverges
    same = page_data((tmp_path / "pages" / "triage-all.html").read_text())
    assert same["mode"] == "replay" and same["replay"]["diverged"] is False
    assert same["replay"]["verdict"].startswith("same")
    diverged = page_data((tmp_path / "pages" / "urgent-only-diverges.html").read_text())
    assert diverged["replay"]["diverged"] and diverged["replay"]["field"]


# -- in the browser --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    need(CHROMIUM, CHROMEDRIVER, "dot")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # the explicit driver and browser paths: Selenium Manager never looks for (or downloads)
    # either; SE_OFFLINE tells it not to try the network should it be asked anyway
    os.environ.setdefault("SE_OFFLINE", "true")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def open_page(driver: Any, page: Path) -> None:
    """Load ``page`` and wait for its data to be drawn; fail on any console error or on any
    request for something other than the page itself."""
    driver.get_log("browser"), driver.get_log("performance")  # earlier pages' entries
    driver.get(page.as_uri())
    deadline = time.monotonic() + 20
    while not driver.execute_script("return !!(window.horismos && window.horismos.ready)"):
        assert time.monotonic() < deadline, driver.get_log("browser")
        time.sleep(0.05)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    sent = [json.loads(e["message"])["message"]["params"] for e in driver.get_log("performance")
            if '"Network.requestWillBeSent"' in e["message"]]
    # the browser's own new-tab page (chrome://, and its chrome-untrusted:// frames) loads
    # its resources on the first start, some of them only once the page is open
    own = ("chrome:", "chrome-untrusted:")
    asked = {
        r["request"]["url"]
        for r in sent
        if not r["documentURL"].startswith(own) and not r["request"]["url"].startswith(own)
    }
    assert asked == {page.as_uri()}, asked


def shoot(driver: Any, shots: Path, name: str) -> Path:
    path = shots / f"{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    print(f"screenshot: {path}")
    return path


def by_css(driver: Any, css: str) -> list[Any]:
    return driver.find_elements("css selector", css)


def test_viewer_shows_instances_steps_panel_and_links_to_the_diagram(
        browser: Any, shots: Path, tmp_path: Path) -> None:
    page = tmp_path / "failures.html"
    p = horismos("trace", "view", str(RECORDED / "triage-failures.jsonl"), *DEFINITIONS,
                 "-o", str(page), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    open_page(browser, page)
    rows = by_css(browser, "#rows .row")
    assert [r.find_element("css selector", ".c-status").text for r in rows] == [
        "failed", "failed", "blocked"]
    assert [r.find_element("css selector", ".c-focus").text for r in rows] == [
        "ehr:patient42", "ehr:patient43", "ehr:patient44"]
    by_css(browser, '#filters button[data-status="blocked"]')[0].click()
    assert [r.text.split()[2] for r in by_css(browser, "#rows .row")] == ["ehr:patient44"]
    by_css(browser, '#filters button[data-status="all"]')[0].click()
    by_css(browser, "#rows .row")[0].click()
    steps = by_css(browser, "#steplist li")
    assert [s.text.split()[:2] for s in steps] == [["#2", "ehr:QueuePatient"]]
    assert len(by_css(browser, "#timeline rect.bar")) == 1
    steps[0].click()
    panel = by_css(browser, "#panel")[0].text
    assert "rejected: nothing of the result landed" in panel
    assert "a queue reference looks like Q-<LEVEL>-<number>" in panel
    assert "patient ehr:patient42" in panel and "queue ehr:urgent" in panel
    assert '"queueRef": "queue 7"' in panel  # the tool's outcome
    assert "event 2 of 8 (line 3)" in panel
    shoot(browser, shots, "viewer")
    by_css(browser, "#to-diagram")[0].click()
    assert by_css(browser, "#view-diagram")[0].is_displayed()
    node = by_css(browser, "#diagram g.node.hl")
    assert len(node) == 1 and "QueuePatient" in node[0].text
    assert "2 blocked" not in node[0].text and "1 blocked, 2 failed" in node[0].text
    shoot(browser, shots, "viewer-diagram")


def test_viewer_shows_effects_with_prefixes_and_a_wait(
        browser: Any, shots: Path, tmp_path: Path) -> None:
    """A run with a proposal, effects and an instance still waiting: the real rebooking
    example, recorded here."""
    trace = tmp_path / "rebooking.jsonl"
    definitions = [str(ROOT / "workflows" / "rebooking.ttl"),
                   str(ROOT / "ontologies" / "travel.ttl")]
    p = horismos("run", *definitions, "--world", str(ROOT / "examples" / "rebooking" / "world.ttl"),
                 "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"),
                 "--all", "--trace", str(trace), "--out", str(tmp_path / "world.trig"),
                 cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr  # one booking waits for an operator
    bare, page = tmp_path / "bare.html", tmp_path / "rebooking.html"
    assert horismos("trace", "view", str(trace), "-o", str(bare), cwd=tmp_path).returncode == 0
    open_page(browser, bare)
    assert not by_css(browser, "#to-diagram")  # no definitions given: no diagram tab
    assert not by_css(browser, "#tab-diagram")[0].is_displayed()
    assert horismos("trace", "view", str(trace), *definitions, "-o", str(page),
                    cwd=tmp_path).returncode == 0
    open_page(browser, page)
    assert [r.find_element("css selector", ".c-status").text
            for r in by_css(browser, "#rows .row")] == ["completed", "waiting"]
    # the page opens on the instance that did not complete: its wait is drawn hatched
    assert len(by_css(browser, "#timeline rect.bar.wait")) == 1
    assert "AskOperator" in by_css(browser, "#step-title")[0].text
    shoot(browser, shots, "viewer-rebooking")
    by_css(browser, "#to-diagram")[0].click()
    nodes = {n.get_attribute("id"): n.text for n in by_css(browser, "#diagram g.node")}
    assert "1 waiting" in nodes["step-s2"] and "AskOperator" in nodes["step-s2"]
    assert by_css(browser, "#edge-s0-s2-fallback")[0].text.strip() == "fallback ×1"
    shoot(browser, shots, "diagram-rebooking")
    by_css(browser, "#tab-instances")[0].click()
    by_css(browser, "#rows .row")[0].click()
    by_css(browser, "#steplist li")[1].click()
    effects = by_css(browser, "#panel pre.effects")[0].text
    resumed = tmp_path / "resumed.jsonl"  # the operator answers: the resume's own trace
    iid = browser.execute_script("return window.horismos.data.instances.id[1]")
    p = horismos("resume", *definitions, "--world", str(tmp_path / "world.trig"),
                 "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"),
                 "--instance", iid, "--facts", "<http://example.org/travel#booking2> "
                 "<http://example.org/travel#operatorChoice> <http://example.org/travel#VS3> .",
                 "--trace", str(resumed), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    m = view_model(read_trace(resumed), source="resumed.jsonl")
    assert m["instances"]["id"] == [iid] and m["instances"]["continued"] == [1]
    assert m["strings"][m["instances"]["focus"][0]] == "http://example.org/travel#booking2"
    assert [o["type"] for o in m["others"]] == ["resume"] and m["others"][0]["inst"] == 0
    assert "travel:booking1 travel:rebookedOn travel:BA175 ." in effects
    assert "^^xsd:dateTime ." in effects
    assert "@prefix travel: <http://example.org/travel#> ." in by_css(
        browser, "#panel pre.prefixes")[0].text


def test_replay_report_highlights_the_divergence_with_both_sides(
        browser: Any, shots: Path, tmp_path: Path) -> None:
    page = tmp_path / "replay.html"
    p = horismos("replay", str(RECORDED / "snapshot" / "urgent-only-diverges.jsonl"),
                 *DEFINITIONS, "--html", str(page), cwd=tmp_path)
    assert p.returncode == 1 and p.stdout.startswith("DIVERGED"), p.stdout + p.stderr
    open_page(browser, page)
    assert "DIVERGED" in by_css(browser, "#verdict")[0].text
    recorded = by_css(browser, "#recorded pre")[0].text
    now = by_css(browser, "#now pre")[0].text
    assert recorded and now and recorded != now
    data = browser.execute_script("return window.horismos.data.replay")
    assert data["diverged"] and data["field"] in p.stdout
    assert f"event {data['event']} (line {data['event'] + 1})" in p.stdout
    divergent = by_css(browser, "#steplist li.divergent")
    assert len(divergent) == 1 and divergent[0].get_attribute("data-seq") == str(data["event"])
    assert len(by_css(browser, "#rows .row.divergent")) == 1
    assert "Replay diverged at this event" in by_css(browser, "#panel")[0].text
    shoot(browser, shots, "replay")


def test_graph_page_draws_the_nodes_with_counts(
        browser: Any, shots: Path, tmp_path: Path) -> None:
    page = tmp_path / "graph.html"
    traces = [str(RECORDED / n) for n in ("triage-all.jsonl", "triage-failures.jsonl",
                                          "triage-timeout.jsonl")]
    p = horismos("graph", *DEFINITIONS, "--format", "html", *[a for t in traces
                                                               for a in ("--trace", t)],
                 "-o", str(page), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    open_page(browser, page)
    nodes = {n.get_attribute("id"): n.text for n in by_css(browser, "#diagram g.node")}
    assert set(nodes) == {"workflow-0", "step-s0", "step-s1"}
    assert "7 started" in nodes["workflow-0"]
    assert "ran ×7" in nodes["step-s0"] and "2 blocked, 2 failed" in nodes["step-s0"]
    assert "ran ×3" in nodes["step-s1"] and "1 failed" in nodes["step-s1"]
    assert by_css(browser, "#edge-s0-s1-next")[0].text.strip() == "×3"
    rows = [r.text for r in by_css(browser, "#counts tr")]
    assert rows[1:] == [":QueuePatient 7 3 2 2 0", ":NotifyNurse 3 2 0 1 0"]
    shoot(browser, shots, "diagram")


def synthetic_trace(path: Path, copies: int) -> None:
    """A valid trace of ``copies`` times the recorded failures run's three instances, each
    with a fresh id (written through Trace, so the chain holds)."""
    events = read_trace(RECORDED / "triage-failures.jsonl")
    drop = {"type", "seq", "prev", "hash", "sig"}
    tr = Trace(path)
    tr.emit("header", **{k: v for k, v in events[0].items() if k not in drop})
    for _ in range(copies):
        ids: dict[str, str] = {}
        for e in events[1:-1]:
            old = e["instance"]
            new = ids.setdefault(old, f"urn:horismos:instance:{uuid.uuid4().hex}")
            tr.emit(e["type"], **json.loads(json.dumps(
                {k: v for k, v in e.items() if k not in drop}).replace(old, new)))
    tr.emit("end", **{k: v for k, v in events[-1].items() if k not in drop})
    tr.close()


def test_a_large_trace_draws_only_the_rows_in_view(browser: Any, tmp_path: Path) -> None:
    trace, page = tmp_path / "large.jsonl", tmp_path / "large.html"
    synthetic_trace(trace, 1000)  # 3,000 instances, 6,002 events
    assert horismos("trace", "view", str(trace), "-o", str(page), cwd=tmp_path).returncode == 0
    open_page(browser, page)
    assert by_css(browser, "#shown")[0].text == "3,000 shown"
    assert len(by_css(browser, "#rows .row")) < 60
    browser.execute_script("const r = document.getElementById('rows');"
                           "r.scrollTop = r.scrollHeight; renderRows(false);")
    numbers = [int(r.text.split()[0]) for r in by_css(browser, "#rows .row")]
    assert max(numbers) == 3000 and len(numbers) < 60
    by_css(browser, '#filters button[data-status="blocked"]')[0].click()
    assert by_css(browser, "#shown")[0].text == "1,000 shown"
    search = by_css(browser, "#search")[0]
    search.send_keys("patient43")
    assert by_css(browser, "#shown")[0].text == "0 shown"  # blocked ones are patient44


def test_each_command_writing_a_file_says_what_it_wrote_where(tmp_path: Path) -> None:
    """``trace view``, ``graph -o`` and ``replay --html`` printed nothing on success: a user
    could not tell a page written from a command that did nothing. Each now says one line,
    on stdout as ``backup`` does; ``replay``'s on stderr, its stdout being one verdict a
    trace."""
    trace = str(RECORDED / "triage-failures.jsonl")
    events = len(read_trace(trace))
    p = horismos("trace", "view", trace, "-o", "run.html", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"wrote trace view to run.html ({events} events)\n"
    p = horismos("graph", *DEFINITIONS, "-o", "flow.mmd", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "wrote mermaid diagram of :Triage to flow.mmd\n"
    assert (tmp_path / "flow.mmd").read_text().startswith("flowchart")
    p = horismos("replay", str(RECORDED / "triage-patient42.jsonl"), *DEFINITIONS,
                 "--html", "report.html", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("same") and p.stdout.count("\n") == 1  # one line a trace
    assert "wrote replay report of triage-patient42.jsonl to report.html" in p.stderr
    assert (tmp_path / "report.html").is_file()
