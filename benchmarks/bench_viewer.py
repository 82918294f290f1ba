"""What ``horismos trace view`` costs as a trace grows: seconds to write the page, its bytes,
and (with Chromium) how long the page takes to open and to draw the table as it scrolls.

    python benchmarks/bench_viewer.py [--sizes 1000 10000 100000] [--no-browser]

The traces are synthetic but made of real events: the instance and step events of the
recorded triage runs in tests/fixtures/traces/recorded/ (completed, rejected, failed, blocked
and timed-out steps, with their reads, outcomes and effects), repeated with fresh instance ids
and clock values and written through :class:`horismos.Trace`, so each is a valid hash-chained
trace of about the requested number of events. Writing them is not timed.

Generation is what the command does: read and check the trace (hash chain), build the view
model, gzip it, write the file; printed by the clock, and as this process's CPU time (on a
shared machine the steadier figure) with the part spent reading the trace. In the browser
(headless Chromium through Selenium and Debian's chromedriver, when installed): ``open`` is
from navigation start to the page's data inflated and its first rows drawn; ``scroll`` jumps
the instance table to 100 positions spread over its whole length and reports the median and
worst time to draw each view, and the most rows ever in the DOM (the table draws only the
rows in view).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from horismos import Trace, read_trace
from horismos._viewer import trace_page

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "fixtures" / "traces" / "recorded"
SOURCES = ["triage-all.jsonl", "triage-failures.jsonl", "triage-timeout.jsonl"]
_DROP = {"type", "seq", "prev", "hash", "sig"}


def _instances() -> list[list[dict[str, Any]]]:
    """Each recorded instance's events (its instance event and its steps), in order."""
    out: list[list[dict[str, Any]]] = []
    for name in SOURCES:
        by: dict[str, list[dict[str, Any]]] = {}
        for e in read_trace(RECORDED / name):
            if e.get("type") in ("instance", "step"):
                by.setdefault(e["instance"], []).append(e)
        out.extend(by.values())
    return out


def write_trace(path: Path, events: int) -> int:
    """A valid trace of about ``events`` events; returns how many it has."""
    templates = _instances()
    header = read_trace(RECORDED / SOURCES[0])[0]
    start = dt.datetime(2026, 12, 1, 8, 0, tzinfo=dt.UTC)
    tr = Trace(path)
    tr.emit("header", **{k: v for k, v in header.items() if k not in _DROP | {"focus"}},
            focus=[])
    n, t = 1, start
    counts: dict[str, int] = {}
    while n < events - 1:
        group = templates[n % len(templates)]
        old = group[0]["instance"]
        new = f"urn:horismos:instance:{uuid.uuid4().hex}"
        for e in group:
            text = json.dumps({k: v for k, v in e.items() if k not in _DROP})
            fields = json.loads(text.replace(old, new))
            if fields.get("clock"):
                shift = []
                for _ in fields["clock"]:
                    t += dt.timedelta(milliseconds=3)
                    shift.append(t.isoformat())
                fields["clock"] = shift
            tr.emit(e["type"], **fields)
            n += 1
        last = group[-1]
        status = last.get("status") if last.get("status") in ("blocked", "waiting") else (
            "completed" if last.get("status") == "completed" else "failed")
        counts[status] = counts.get(status, 0) + 1
    tr.emit("end", status="failed", instances=counts, world_digest=header["world_digest"])
    tr.close()
    return n + 1


def generate(trace: Path, page: Path) -> tuple[float, float, float]:
    """Seconds by the clock, CPU seconds, and of those the CPU seconds reading the trace."""
    t0, c0 = time.perf_counter(), time.process_time()
    events = read_trace(trace)
    c1 = time.process_time()
    page.write_text(trace_page(events, source=trace.name), encoding="utf-8")
    return time.perf_counter() - t0, time.process_time() - c0, c1 - c0


def browser() -> Any | None:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    if not Path("/usr/bin/chromedriver").exists():
        return None
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", f"--user-data-dir={tempfile.mkdtemp()}",
              "--window-size=1400,1000"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def in_browser(driver: Any, page: Path) -> tuple[float, float, float, int]:
    driver.get(page.as_uri())
    deadline = time.monotonic() + 120
    while not driver.execute_script("return !!(window.horismos && window.horismos.ready)"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{page} did not open within 120 s")
        time.sleep(0.05)
    opened = driver.execute_script("return window.horismos.readyAt")
    times = driver.execute_script("""
        const rows = document.getElementById('rows'), out = [];
        let most = 0;
        for (let k = 0; k < 100; k++) {
          const t = performance.now();
          rows.scrollTop = (rows.scrollHeight - rows.clientHeight) * k / 99;
          window.horismos && renderRows(false);
          out.push(performance.now() - t);
          most = Math.max(most, document.querySelectorAll('#rows .row').length);
        }
        return [out, most];""")
    drawn, most = times
    return opened / 1e3, statistics.median(drawn), max(drawn), most


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    driver = None if args.no_browser else browser()
    print(f"{'events':>8} {'trace MB':>9} {'generate s (CPU s, reading)':>28} {'page MB':>8}"
          + ("  open s  scroll ms (median/worst)  rows in DOM" if driver else ""))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in args.sizes:
                trace, page = Path(tmp) / f"t{size}.jsonl", Path(tmp) / f"t{size}.html"
                n = write_trace(trace, size)
                took, cpu, reading = generate(trace, page)
                line = (f"{n:>8,} {trace.stat().st_size / 1e6:>9.1f} "
                        f"{f'{took:.2f} ({cpu:.2f}, {reading:.2f})':>28} "
                        f"{page.stat().st_size / 1e6:>8.2f}")
                if driver is not None:
                    opened, median, worst, most = in_browser(driver, page)
                    line += f"  {opened:>6.2f}  {median:>8.2f} / {worst:>6.2f}  {most:>16}"
                print(line, flush=True)
    finally:
        if driver is not None:
            driver.quit()


if __name__ == "__main__":
    main()
