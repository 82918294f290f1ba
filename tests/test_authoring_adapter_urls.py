"""An adapter's ``horis:baseUrl`` carrying a credential (``?access_token=…``), as an HTTP
binding's or an MCP server's URL may not: it validated, and every hydration, decision and
commit sent it, copied into errors and traces. Now validate says it at the ``horis:baseUrl``
and run, tools call and hydrate refuse before any request, the tool never called."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from forked import horismos_forked

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fhir"
BASE = 'horis:baseUrl "http://127.0.0.1:8089/fhir"'
WORLD = """@prefix fhir: <http://hl7.org/fhir/> .
<http://127.0.0.1:8089/fhir/MedicationRequest/mr1> a fhir:MedicationRequest ;
    fhir:status "active" .
"""
TOOLS = """def dispense(request):
    open("calls.log", "a").write(request + "\\n")
    return {}
"""


def _pharmacy(tmp_path: Path, base: str) -> int:
    shutil.copy(EXAMPLE / "pharmacy.ttl", tmp_path / "pharmacy.ttl")
    text = (tmp_path / "pharmacy.ttl").read_text(encoding="utf-8")
    assert text.count(BASE) == 1
    (tmp_path / "pharmacy.ttl").write_text(text.replace(BASE, base), encoding="utf-8")
    (tmp_path / "w.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "pharmacy.py").write_text(TOOLS, encoding="utf-8")
    return text[: text.index(BASE)].count("\n") + 1


def test_a_token_in_an_adapters_base_url_is_an_error_and_refuses_the_run(tmp_path: Path) -> None:
    line = _pharmacy(tmp_path, 'horis:baseUrl "http://127.0.0.1:8089/fhir?access_token=s3cr3t"')
    env = {**os.environ, "EHR_TOKEN": "t"}
    check = horismos_forked(tmp_path, "validate", "pharmacy.ttl", env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert check.stdout.startswith(
        f"pharmacy.ttl:{line}: error: :ehr: the URL of adapter ehr "
        "(http://127.0.0.1:8089/fhir?access_token=***) carries credentials (query value "
        '"access_token")'), check.stdout
    assert 'horis:tokenFromEnv "EHR_TOKEN"' in check.stdout and "s3cr3t" not in check.stdout
    run = horismos_forked(tmp_path, "run", "pharmacy.ttl", "--world", "w.ttl", "--all",
                          "--tools", "pharmacy.py", "--allow",
                          "ReadOnly,HostStateWrite,ExternalCommit", env=env)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "the horis:baseUrl of adapter ehr carries credentials" in run.stderr
    assert "s3cr3t" not in run.stdout + run.stderr
    assert not (tmp_path / "calls.log").exists()
    hydrate = horismos_forked(tmp_path, "hydrate", "pharmacy.ttl", "--id", "Patient/p1",
                              "--out", "x.trig", env=env)
    assert hydrate.returncode != 0 and "carries credentials" in hydrate.stderr
    assert not (tmp_path / "x.trig").exists()


def test_a_base_url_with_a_harmless_query_says_nothing_of_credentials(tmp_path: Path) -> None:
    _pharmacy(tmp_path, 'horis:baseUrl "http://127.0.0.1:8089/fhir?_format=json"')
    env = {**os.environ, "EHR_TOKEN": "t"}
    check = horismos_forked(tmp_path, "validate", "pharmacy.ttl", env=env)
    assert check.returncode == 0 and "credentials" not in check.stdout, check.stdout
