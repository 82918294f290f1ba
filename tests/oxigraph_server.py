"""Real ``oxigraph serve`` processes on free loopback ports, for the ``sparql:URL`` store.

The ``oxigraph`` package from PyPI (in the test extra) puts the server next to the venv's
Python; nothing else needs installing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
from listening import free_port

__all__ = ["OxigraphServer", "ServerPool", "oxigraph_command"]


def oxigraph_command() -> str:
    here = Path(sys.executable).parent / "oxigraph"
    found = str(here) if here.exists() else shutil.which("oxigraph")
    if found is None:
        raise RuntimeError("the oxigraph server is not installed: pip install -e '.[test]'")
    return found


class OxigraphServer:
    """``oxigraph serve --location DIR --bind 127.0.0.1:PORT``, up when the constructor returns;
    ``mode="serve-read-only"``: one that refuses every update."""

    def __init__(self, location: Path, mode: str = "serve") -> None:
        self.location, self.mode = location, mode
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = location.with_suffix(".log")
        self.start()

    def start(self, wait: float = 20) -> None:
        """Start (again, after :meth:`stop`: same folder, same port), waiting up to ``wait``
        seconds for it to answer (a restart replays what its log holds first)."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [oxigraph_command(), self.mode, "--location", str(self.location),
                 "--bind", f"127.0.0.1:{self.port}"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + wait
        while True:
            try:
                httpx.get(self.url + "/query", params={"query": "ASK {}"}, timeout=1)
                return
            except httpx.HTTPError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"oxigraph serve did not start: "
                                       f"{self.log.read_text(errors='replace')}") from None
                time.sleep(0.02)

    @property
    def store(self) -> str:
        return f"sparql:{self.url}"

    def clear(self) -> None:
        httpx.post(self.url + "/update", content=b"CLEAR ALL",
                   headers={"Content-Type": "application/sparql-update"}).raise_for_status()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class ServerPool:
    """Servers reused across tests: each world of a test gets one of its own, emptied first."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.servers: list[OxigraphServer] = []
        self.used = 0

    def fresh(self) -> str:
        if self.used == len(self.servers):
            self.servers.append(OxigraphServer(self.root / f"db{len(self.servers)}"))
        server = self.servers[self.used]
        server.clear()
        self.used += 1
        return server.store

    def release(self) -> None:
        self.used = 0

    def close(self) -> None:
        for s in self.servers:
            s.stop()
