"""The shipped lab workflow pages the on-call clinician once a result, however often it runs.

``:Escalate`` called ``:lab.escalate`` (not idempotent: it pages a person) with no guard, so
``run --focus :k1`` again on a world kept on disk started another instance, as
``docs/deployment.md`` says a rerun of a finished focus does, and paged Dr Lee a second time
about the same result. What limits a rerun is the step's own ``horis:requires``; the step now
asks that the result was not escalated already, as the triage example's queueing does."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

ROOT = Path(__file__).resolve().parent.parent

PAGER = '''
from pathlib import Path


def escalate(result, clinician):
    with open(Path(__file__).with_name("paged.log"), "a") as f:
        f.write(f"{clinician} {result}\\n")
    return {"escalatedTo": clinician}


def file_result(result):
    return {"archiveRef": "ARCH-00001"}
'''


def test_a_rerun_of_an_escalated_result_is_blocked_at_escalate_and_pages_no_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "lab_client.py").write_text(PAGER, encoding="utf-8")
    store = f"oxigraph:{tmp_path / 'world'}"
    loaded = horismos_forked(tmp_path, "load", str(ROOT / "examples" / "lab" / "world.ttl"),
                             "--store", store)
    assert loaded.returncode == 0, loaded.stderr
    run = ("run", str(ROOT / "workflows" / "lab_review.ttl"), str(ROOT / "ontologies"),
           "--store", store, "--tools", "lab_client.py", "--focus", ":k1")
    first = horismos_forked(tmp_path, *run)
    assert first.returncode == 0, first.stdout + first.stderr
    assert ":ReviewResult :k1: completed after 2 steps" in first.stdout, first.stdout
    again = horismos_forked(tmp_path, *run)
    assert again.returncode == 4, again.stdout + again.stderr
    assert (":ReviewResult :k1: blocked at :Escalate: FILTER NOT EXISTS { ?this :escalatedTo "
            "?paged } does not hold for ?this = :k1") in again.stdout, again.stdout
    assert (tmp_path / "paged.log").read_text(encoding="utf-8").splitlines() == [
        "http://example.org/lab#drLee http://example.org/lab#k1"
    ]
