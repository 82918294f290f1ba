"""HTTP(S) bindings against a real server on 127.0.0.1: a JSON POST of exactly the declared
arguments, and every kind of answer a server can give — good, slow, 500, non-JSON, oversized,
out of contract, a redirect — each either landing or taking ``horis:onError``.
"""

from __future__ import annotations

import datetime as dt
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Namespace, URIRef
from servers.http_server import Received, serve

from horismos import (
    Agent,
    AuthoringError,
    NotSent,
    OutcomeUnknown,
    ResultTooLarge,
    Run,
    ToolError,
    ToolTimeout,
    Unreachable,
    UnreadableAnswer,
    World,
)

EX = Namespace("http://example.org/http#")
TOKEN = "Bearer s3cret-token-value"

PREFIXES = """\
@prefix :      <http://example.org/http#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
"""

WARD = """
:p1 a :Patient ; :level 3 ; :urgent true ; :since "2024-05-01T10:00:00Z"^^xsd:dateTime ;
    :weight 71.5 .
:p2 a :Patient ; :level 1 ; :urgent false ; :since "2024-05-02T08:30:00Z"^^xsd:dateTime ;
    :weight 60.0 .
"""

REF = 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'


def tool(name: str, url: str, effect: str = REF, *, args: str = "", timeout: str = "5s",
         extra: str = "") -> str:
    return f"""
:{name} a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] {args} ] ;
    horis:effect [ horis:subject "patient" ; {effect} ] ;
    horis:binding "{url}" ;
    horis:timeout "{timeout}" {extra} .
"""


def step(name: str, tool_name: str, nxt: str | None = None, *, requires: str | None = None,
         ) -> str:
    parts = [f":{name} a horis:ActionStep", f"horis:tool :{tool_name}",
             'horis:bind [ horis:arg "patient" ; horis:var "this" ]']
    if requires:
        parts.append(f'horis:requires "{requires}"')
    if nxt:
        parts += [f"horis:next :{nxt}", f"horis:onError :{nxt}"]
    return " ;\n    ".join(parts) + " .\n"


def workflow(start: str) -> str:
    return f":Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :{start} .\n"


def load(folder: Path, defs: str, world: str = WARD) -> tuple[Agent, World]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "defs.ttl").write_text(PREFIXES + defs, encoding="utf-8")
    (folder / "world.ttl").write_text(PREFIXES + world, encoding="utf-8")
    return Agent.from_files(folder / "defs.ttl"), World.from_files(folder / "world.ttl")


def value(world: World, node: URIRef, prop: URIRef) -> Any:
    values = list(world.graph.objects(node, prop))
    assert len(values) <= 1, values
    return values[0].toPython() if values else None


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Received]]:
    httpd, base, received = serve()
    yield base, received
    httpd.shutdown()
    httpd.server_close()


ANSWERS = ["Extra", "Error", "Html", "Big", "BigChunked", "Redirect", "List", "Slow"]


@pytest.fixture(scope="module")
def main(server, tmp_path_factory) -> tuple[Run, World, Path, Received]:
    base, received = server
    folder = tmp_path_factory.mktemp("http")
    defs = "".join([
        tool("t.good", f"{base}/good",
             args='; horis:arg [ horis:name "level" ; horis:type xsd:integer ] ; '
                  'horis:arg [ horis:name "urgent" ; horis:type xsd:boolean ] ; '
                  'horis:arg [ horis:name "since" ; horis:type xsd:dateTime ] ; '
                  'horis:arg [ horis:name "weight" ; horis:type xsd:decimal ]',
             extra='; horis:header [ horis:name "Authorization" ; '
                   'horis:fromEnv "HORIS_TEST_TOKEN" ]'),
        *(tool(f"t.{n.lower()}", f"{base}/{n.lower().replace('bigchunked', 'big-chunked')}",
               # 1 s against the server's 2 s: the request is surely sent before the timeout
               # fires, even on a loaded machine (at 300 ms it sometimes was not, and the
               # step saw a call never sent instead of an unknown outcome)
               timeout="1s" if n == "Slow" else "5s") for n in ANSWERS),
        tool("t.noop", f"{base}/noop",
             'horis:asserts [ horis:property :doneAt ; horis:value horis:now ]'),
        workflow("Good"),
        step("Good", "t.good", "Extra",
             requires="?this :level ?level ; :urgent ?urgent ; :since ?since ; "
                      ":weight ?weight ."),
        *(step(n, f"t.{n.lower()}", nxt) for n, nxt in zip(ANSWERS, [*ANSWERS[1:], "Done"],
                                                           strict=True)),
        step("Done", "t.noop"),
    ])
    agent, world = load(folder, defs)
    trace = folder / "trace.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HORIS_TEST_TOKEN", TOKEN)
        run = agent.run(world, all=True, trace=trace)
    return run, world, trace, received


def steps(run: Run) -> dict[str, Any]:
    return {s.step.fragment: s for s in run.instances[0].steps}


def test_every_instance_completes_taking_on_error_on_every_bad_answer(main) -> None:
    run = main[0]
    assert run.status == "completed", run.error
    assert [s.status for s in steps(run).values()] == [
        "completed", "rejected", "failed", "failed", "failed", "failed", "failed", "failed",
        "timed_out", "completed"]


def test_good_answer_lands(main) -> None:
    _, world, _, _ = main
    assert value(world, EX.p1, EX.queueRef) == "H-p1"
    assert value(world, EX.p2, EX.queueRef) == "H-p2"


def test_exactly_the_declared_arguments_are_posted_as_json_values(main) -> None:
    received = main[3]
    bodies = [b for p, _, b in received.requests if p == "/good"]
    assert {"patient": str(EX.p1), "level": 3, "urgent": True, "weight": 71.5,
            "since": dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC).isoformat()} in bodies


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_a_duration_negative_in_years_and_days_is_sent_as_written(server, tmp_path, store):
    """``"-P1Y1D"^^xsd:duration`` (minus a year and a day), an argument of an HTTP tool, is
    posted as ``"-P1Y1D"``: the step failed with ``t.echo raised ValueError: Duration cannot
    have negative years and negative days``, blaming the tool for a value rdflib's writer
    refuses, though the tool was never called."""
    base, received = server
    defs = tool("t.echo", f"{base}/echo", 'horis:asserts [ horis:property :receivedArgs ; '
                'horis:key "received" ; horis:type xsd:string ]',
                args='; horis:arg [ horis:name "grace" ; horis:type xsd:duration ]',
                extra="; horis:idempotent true")
    (tmp_path / "defs.ttl").write_text(
        PREFIXES + defs + workflow("Echo")
        + step("Echo", "t.echo", requires="?this :grace ?grace ."), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        PREFIXES + ':p1 a :Patient ; :grace "-P1Y1D"^^xsd:duration .\n', encoding="utf-8")
    done = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--store", store,
                           "--focus", ":p1", "--allow-host", "127.0.0.1", "--out", "out.trig",
                           timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "completed after 1 step" in done.stdout
    _, body = received.last("/echo")
    assert body == {"patient": str(EX.p1), "grace": "-P1Y1D"}
    after = World.from_files(tmp_path / "out.trig")
    assert json.loads(value(after, EX.p1, EX.receivedArgs))["grace"] == "-P1Y1D"


def test_an_argument_not_sent_is_not_in_the_body(server, tmp_path) -> None:
    # The patient is the effect's subject, read from the graph; horis:sent false keeps it out
    # of the POST, which carries the level only.
    base, received = server
    defs = tool("t.echo", f"{base}/echo", 'horis:asserts [ horis:property :receivedArgs ; '
                'horis:key "received" ; horis:type xsd:string ]',
                args='; horis:arg [ horis:name "level" ; horis:type xsd:integer ]').replace(
        'horis:type :Patient ]', 'horis:type :Patient ; horis:sent false ]')
    agent, world = load(tmp_path, defs + workflow("Echo")
                        + step("Echo", "t.echo", requires="?this :level ?level ."))
    run = agent.run(world, focus=EX.p2)
    assert run.status == "completed", run.error
    _, body = received.last("/echo")
    assert body == {"level": 1}
    assert json.loads(value(world, EX.p2, EX.receivedArgs)) == {"level": 1}


def test_headers_come_from_the_environment_and_never_reach_the_trace(main) -> None:
    _, _, trace, received = main
    headers, _ = received.last("/good")
    assert headers["Authorization"] == TOKEN
    assert "s3cret" not in trace.read_text()


def test_field_outside_the_effect_rejects_the_result(main) -> None:
    run, world, _, _ = main
    extra = steps(run)["Extra"]
    assert extra.status == "rejected" and "internal" in str(extra.error)
    assert value(world, EX.p1, EX.queueRef) == "H-p1"   # the step's queueRef did not land


@pytest.mark.parametrize(("name", "words"), [
    ("Error", ["answered 500", "database on fire"]),
    ("Html", ["text/html, not JSON", "<html>"]),
    ("Big", [f"more than {1 << 20:,} bytes", "horis:maxResultBytes"]),
    ("BigChunked", [f"more than {1 << 20:,} bytes", "horis:maxResultBytes"]),
    ("Redirect", ["answered 302", "redirects are not followed", "/good"]),
    ("List", ["a JSON list, not an object"]),
])
def test_bad_answers_are_tool_errors(main, name, words) -> None:
    """An error answered (500, a redirect) says the tool did not act; a success whose body
    is no result (HTML, a list, past the limit) may have acted: held like a timeout."""
    error = steps(main[0])[name].error
    kind = {"Html": UnreadableAnswer, "List": UnreadableAnswer}.get(name, ToolError)
    assert type(error) is (ResultTooLarge if name.startswith("Big") else kind)
    for w in words:
        assert w in str(error)


def test_a_success_that_is_no_result_holds_a_charge_in_doubt(server, tmp_path) -> None:
    """A 200 with an HTML body: the service did what it does, and nothing of it landed.
    The next catalog call is refused, not sent (a plain tool error before: it was sent)."""
    base, received = server
    agent, world = load(tmp_path, tool("t.charge", f"{base}/html",
                                       extra="; horis:idempotent false"))
    allow = ["ReadOnly", "HostStateWrite", "ExternalCommit"]
    sent = [p for p, _, _ in received.requests].count("/html")  # the server serves the module
    first = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=allow)
    assert first.status == "failed" and first.error is not None
    assert first.error["kind"] == "unreadable_answer", first.error
    again = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=allow)
    assert again.status == "refused" and again.error is not None
    assert again.error["kind"] == "outcome_unknown"
    assert [p for p, _, _ in received.requests].count("/html") == sent + 1


def test_slow_answer_is_a_timeout(main) -> None:
    error = steps(main[0])["Slow"].error
    # the request was sent and no answer came: the non-idempotent tool may have acted
    assert isinstance(error, OutcomeUnknown) and isinstance(error.cause, ToolTimeout)


@pytest.mark.parametrize("path", ["cut", "stall"])
def test_an_answer_cut_off_after_its_headers_leaves_the_call_in_doubt(server, tmp_path,
                                                                      path) -> None:
    """A 200 whose body never fully arrives is a success the engine never received: the
    call may have acted, so a tool that is not idempotent is not called again (it was
    counted as answered once the headers came, and retried or called anew)."""
    base, received = server
    defs = (tool("t.charge", f"{base}/{path}", timeout="1s", extra="; horis:retries 2")
            + workflow("A") + step("A", "t.charge"))
    agent, world = load(tmp_path, defs)
    before = len([r for r in received.requests if r[0] == f"/{path}"])

    first = agent.run(world, focus=EX.p1)
    again = agent.run(world, focus=EX.p1)

    assert isinstance(first.error.cause, OutcomeUnknown), first.error
    assert again.status == "failed" and isinstance(again.error.cause, OutcomeUnknown)
    assert len([r for r in received.requests if r[0] == f"/{path}"]) == before + 1
    assert value(world, EX.p1, EX.queueRef) is None


def test_missing_environment_variable_refuses_the_run_before_any_request(
        server, tmp_path, monkeypatch) -> None:
    base, received = server
    monkeypatch.delenv("HORIS_TEST_TOKEN", raising=False)
    defs = tool("t.good", f"{base}/echo", 'horis:asserts [ horis:property :received ; '
                'horis:type xsd:string ]', extra='; horis:header [ horis:name "X-Api-Key" ; '
                'horis:fromEnv "HORIS_TEST_TOKEN" ]') + workflow("A") + step("A", "t.good")
    agent, world = load(tmp_path, defs)
    sent = len(received.requests)
    with pytest.raises(ToolError, match=r"header X-Api-Key .* environment variable "
                                        r"HORIS_TEST_TOKEN, which is not set"):
        agent.run(world, focus=EX.p1)
    assert len(received.requests) == sent


def test_a_header_value_written_in_turtle_is_an_authoring_error(tmp_path) -> None:
    defs = tool("t.good", "http://127.0.0.1:1/good",
                extra='; horis:header [ horis:name "Authorization" ; horis:value "Bearer x" ]')
    with pytest.raises(AuthoringError, match="horis:header needs horis:name and horis:fromEnv"):
        load(tmp_path, defs + workflow("A") + step("A", "t.good"))


def test_refused_connection_is_unreachable_and_blocks_the_step(tmp_path) -> None:
    """Nothing was sent: the step, with no horis:onError, is blocked to be tried again (see
    test_unreached_endpoint.py), not failed for good."""
    defs = tool("t.gone", "http://127.0.0.1:1/good") + workflow("A") + step("A", "t.gone")
    agent, world = load(tmp_path, defs)
    run = agent.run(world, focus=EX.p1)
    assert run.status == "blocked"
    assert isinstance(run.steps[0].error, Unreachable)
    assert "POST http://127.0.0.1:1/good failed: ConnectError" in str(run.steps[0].error)


def test_a_connection_still_being_made_at_the_timeout_was_not_sent(tmp_path) -> None:
    """A host that drops the connection attempt (here a socket whose queue is full, which
    never accepts): the call's 1 s runs out while it connects. The request never left, so a
    tool that is not idempotent is not held in doubt — the next call is made, not refused —
    and the words say it was not sent, not that the tool "did not answer"."""
    from listening import dropping

    with dropping() as port:
        defs = tool("t.far", f"http://127.0.0.1:{port}/good", timeout="1s")
        agent, world = load(tmp_path, defs + workflow("A") + step("A", "t.far"))
        said = []
        for _ in range(2):
            called = agent.catalog.call("t.far", {"patient": EX.p1}, world)
            assert called.status == "timed_out", called
            assert called.error is not None and called.error["kind"] == "timeout"
            said.append(called.error["message"])
    assert said[0] == said[1]
    assert "t.far was not sent within 1s (horis:timeout): it never left" in said[0]
    assert "did not answer" not in said[0]


@pytest.fixture(scope="module")
def https_server(server, tmp_path_factory) -> Iterator[str]:
    """The same answers over TLS with a self-signed certificate no client trusts."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    httpd, base, _ = serve()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    yield base.replace("http://", "https://")
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def https_cert(https_server, tmp_path_factory) -> Path:
    """The self-signed certificate ``https_server`` presents (written by its fixture)."""
    return next(tmp_path_factory.getbasetemp().glob("tls*/cert.pem"))


def test_a_certificate_the_process_is_told_to_trust_is_trusted_after_one_it_was_not(
    https_server, https_cert, tmp_path, monkeypatch
) -> None:
    """Every HTTPS client verifies with one context a process (horismos/_tls.py), built once
    for each SSL_CERT_FILE: a process refused the server, then given its certificate by the
    variable, trusts it (a context kept whatever the variable said would refuse it still)."""
    defs = tool("t.good", f"{https_server}/good") + workflow("A") + step("A", "t.good")
    agent, world = load(tmp_path, defs)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    refused = agent.run(world, focus=EX.p1)
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused.error)
    monkeypatch.setenv("SSL_CERT_FILE", str(https_cert))
    trusted = agent.run(world, focus=EX.p2)
    assert trusted.status == "completed", trusted.error
    monkeypatch.delenv("SSL_CERT_FILE")
    again = agent.run(world, focus=EX.p1)
    assert "CERTIFICATE_VERIFY_FAILED" in str(again.error)


def test_tls_certificates_are_verified(https_server, tmp_path) -> None:
    defs = tool("t.good", f"{https_server}/good") + workflow("A") + step("A", "t.good")
    agent, world = load(tmp_path, defs)
    run = agent.run(world, focus=EX.p1)
    assert run.status == "failed"  # not a server down for now: trying later is no better
    assert type(run.steps[0].error) is NotSent
    assert "CERTIFICATE_VERIFY_FAILED" in str(run.error)
    assert value(world, EX.p1, EX.queueRef) is None

