"""A tool that is not idempotent is not called on a node that already breaks a shape for good.

A result only adds values to its subject. When the subject already holds a value its shape's
pattern refuses, more values than its ``sh:maxCount``, or a property its closed shape does not
allow, the gate rejects whatever the tool returns: the tool acted, nothing of it landed, and
the call was left in doubt. Such a call is now not made: the step blocks with
``ShapesBrokenAlready``, naming each value. A tool that is idempotent is still called and
judged, and a node that breaks only what a result can mend (a value it lacks) is still called.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import EX, PREFIXES, step_events
from forked import horismos_forked
from test_gate_reads import DEFS as GATE_READS

from horismos import ShapesBrokenAlready, replay

IDEMPOTENT = " horis:idempotent true ;"
# test_gate_reads's tools, workflows and shapes (a reference at most, a bed at most for an
# inpatient, a closed case), its tools made not idempotent, and a pattern and a consent more
DEFS = GATE_READS.replace(IDEMPOTENT, "") + """
:Formed a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :ref ; sh:pattern "^R-" ] ;
    sh:property [ sh:path :consent ; sh:minCount 1 ] .
"""

WORLD = """
:legacy a :Patient ; :consent true ; :ref "old-7" .
:twobeds a :Inpatient ; :consent true ; :bed "B1", "B2" .
:noconsent a :Patient .
:one a :Patient ; :consent true ; :ref "R-1" .
:fine a :Patient ; :consent true .
:stray a :Case ; :note "left over" .
"""


def _agent(build, idempotent: bool = False):
    calls: list[str] = []

    def file(**_: object) -> dict[str, str]:
        calls.append("called")
        return {"ref": "R-7"}

    defs = DEFS.replace(":t.close a horis:Tool ;", ":t.close a horis:Tool ;" + IDEMPOTENT) if (
        idempotent) else DEFS
    agent, world = build(defs, WORLD, tools={"file": file})
    return agent, world, calls


def test_a_call_on_a_node_that_breaks_a_shape_for_good_is_not_made(build, tmp_path: Path):
    agent, world, calls = _agent(build)
    before = world.canonical(include_instances=False)
    for focus, said in (("legacy", '(value: "old-7")'), ("twobeds", "More than 1 values")):
        run = agent.run(world, workflow=str(EX.File), focus=str(EX[focus]),
                        trace=tmp_path / f"{focus}.jsonl")
        assert run.status == "blocked", (focus, run.status)
        (step,) = run.instances[0].steps
        assert step.status == "blocked" and isinstance(step.error, ShapesBrokenAlready)
        assert str(step.error).startswith(f":{focus} already breaks the domain shapes, so t.file "
                                          "is not called"), step.error
        assert said in str(step.error) and "correct the world's data" in str(step.error)
        assert step.error.broken and all(m.focus == f":{focus}" for m in step.error.broken)
        # the run's own trace replays to the same block, its reads answered as recorded
        report = replay(tmp_path / f"{focus}.jsonl", agent)
        assert not report.diverged, report.first_divergence
    assert calls == [], "the tool was called"
    assert world.canonical(include_instances=False) == before


def test_a_closed_shape_with_a_stray_property_blocks_only_a_tool_that_is_not_idempotent(build):
    agent, world, calls = _agent(build)
    run = agent.run(world, workflow=str(EX.Close), focus=str(EX.stray))
    assert run.status == "blocked" and calls == []
    error = run.instances[0].steps[0].error
    assert isinstance(error, ShapesBrokenAlready) and "note" in str(error)
    assert [m.focus for m in error.broken] == [":stray"]
    # an idempotent tool is called, then judged: rejected, as before
    agent, world, calls = _agent(build, idempotent=True)
    run = agent.run(world, workflow=str(EX.Close), focus=str(EX.stray))
    assert calls == ["called"] and step_events(run)[0]["status"] == "rejected"


def test_what_a_result_could_mend_or_a_value_still_in_bounds_does_not_stop_the_call(build):
    """A missing :consent (sh:minCount) breaks the shape too, but values added could mend it:
    the call is made, and the gate judges the result. One reference of at most one is not
    broken yet: the call is made, and the second it adds is rejected."""
    agent, world, calls = _agent(build)
    statuses = {
        focus: step_events(agent.run(world, workflow=str(EX.File), focus=str(EX[focus])))[0][
            "status"]
        for focus in ("noconsent", "one", "fine")
    }
    assert statuses == {"noconsent": "rejected", "one": "rejected", "fine": "completed"}
    assert calls == ["called"] * 3


def test_a_catalog_call_on_such_a_node_is_blocked_before_it_is_made(tmp_path: Path):
    """``horismos tools call``: blocked, the envelope's error kind ``broken_already``, the tool
    never run, nothing changed."""
    (tmp_path / "defs.ttl").write_text(
        PREFIXES + DEFS + """
:Patient a owl:Class . :Case a owl:Class .
:ref a owl:DatatypeProperty . :bed a owl:DatatypeProperty . :consent a owl:DatatypeProperty .
:note a owl:DatatypeProperty .
""")
    (tmp_path / "world.ttl").write_text(PREFIXES + WORLD)
    (tmp_path / "tools.py").write_text(
        "from pathlib import Path\n"
        "def file(**_):\n"
        "    Path('called').write_text('yes')\n"
        "    return {'ref': 'R-7'}\n")
    done = horismos_forked(tmp_path, "tools", "call", "t.file", "defs.ttl", "--tools", "tools.py",
                           "--args", '{"patient": ":legacy"}', "--world", "world.ttl",
                           "--format", "json")
    assert done.returncode == 4, done.stdout + done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["status"] == "blocked"
    assert envelope["error"]["kind"] == "broken_already"
    assert '(value: "old-7")' in envelope["error"]["message"]
    assert not (tmp_path / "called").exists()
