"""The ``horis:`` vocabulary as a closed namespace: a misspelt term fails at import.

The ontology file ``horismos/ontology/horis.ttl`` declares the same terms; a test keeps the two
in step.
"""

from __future__ import annotations

from rdflib import Namespace, URIRef
from rdflib.namespace import DefinedNamespace

__all__ = ["HORIS", "NS", "PROV"]

NS = "https://w3id.org/horismos#"


class HORIS(DefinedNamespace):
    """Terms of ``https://w3id.org/horismos#``."""

    _fail = True
    _NS = Namespace(NS)
    # ``as`` is a Python keyword: reach it as ``HORIS["as"]``.
    _extras = ["as"]  # noqa: RUF012  (DefinedNamespace reads it; an annotation would make it a term)

    # Classes: what authors declare
    Tool: URIRef
    Workflow: URIRef
    Step: URIRef
    ActionStep: URIRef
    DecisionStep: URIRef
    ProposalStep: URIRef
    WaitStep: URIRef
    McpServer: URIRef
    Adapter: URIRef
    CommandBinding: URIRef
    # Classes: what the runtime writes
    Instance: URIRef
    StepExecution: URIRef
    Approval: URIRef
    Reconciliation: URIRef
    IdempotencyKey: URIRef
    Provenance: URIRef
    # Classes: closed value sets of the individuals below
    WakeKind: URIRef
    DeliveryKind: URIRef
    SideEffectClass: URIRef
    InstanceStatus: URIRef

    # Individuals
    now: URIRef
    OperatorInput: URIRef
    External: URIRef
    Timer: URIRef
    TaskResult: URIRef
    System: URIRef
    Final: URIRef
    Silent: URIRef
    ReadOnly: URIRef
    HostStateWrite: URIRef
    ExternalCommit: URIRef
    ToolProvenance: URIRef
    HumanProvenance: URIRef
    AdapterProvenance: URIRef
    SystemProvenance: URIRef
    ModelProvenance: URIRef
    Running: URIRef
    Completed: URIRef
    Waiting: URIRef
    Blocked: URIRef
    Failed: URIRef
    FhirJsonLd: URIRef

    # Tools
    takes: URIRef
    arg: URIRef
    name: URIRef
    type: URIRef
    optional: URIRef
    sent: URIRef
    effect: URIRef
    subject: URIRef
    asserts: URIRef
    property: URIRef
    value: URIRef
    many: URIRef
    fromText: URIRef
    key: URIRef
    shape: URIRef
    binding: URIRef
    timeout: URIRef
    idempotent: URIRef
    inline: URIRef
    retries: URIRef
    maxResultBytes: URIRef
    sideEffect: URIRef
    requiresApproval: URIRef
    header: URIRef
    fromEnv: URIRef
    # MCP servers
    command: URIRef
    args: URIRef
    env: URIRef
    url: URIRef
    # Adapters
    baseUrl: URIRef
    tokenFromEnv: URIRef
    grantedScope: URIRef
    mapping: URIRef
    adapter: URIRef
    commitScope: URIRef
    # Command bindings
    argv: URIRef
    root: URIRef
    workdir: URIRef
    previewBytes: URIRef
    retainBytes: URIRef
    quotaBytes: URIRef
    minFreeBytes: URIRef
    captureDir: URIRef

    # Workflows and steps
    focusType: URIRef
    start: URIRef
    maxSteps: URIRef
    tool: URIRef
    requires: URIRef
    bind: URIRef
    var: URIRef
    next: URIRef
    onError: URIRef
    forEach: URIRef
    eachRun: URIRef
    when: URIRef
    order: URIRef
    otherwise: URIRef
    candidates: URIRef
    query: URIRef
    rankBy: URIRef
    model: URIRef
    confidence: URIRef
    fallback: URIRef
    reason: URIRef
    wake: URIRef
    delivery: URIRef
    until: URIRef
    onTimeout: URIRef
    onPartial: URIRef

    # Instance state and effect provenance, written by the runtime
    workflow: URIRef
    focus: URIRef
    status: URIRef
    currentStep: URIRef
    version: URIRef
    variable: URIRef
    provenance: URIRef
    step: URIRef
    instance: URIRef
    settles: URIRef
    calledBinding: URIRef
    blockedBy: URIRef
    blockedAt: URIRef
    failedAt: URIRef
    error: URIRef
    errorKind: URIRef
    startedBy: URIRef
    brief: URIRef
    fingerprint: URIRef
    usedUp: URIRef
    usedWithKey: URIRef
    answer: URIRef
    implementation: URIRef
    code: URIRef
    approvalsAsked: URIRef
    lapsed: URIRef
    verdict: URIRef
    reconciles: URIRef
    callStartedAt: URIRef
    # Projections of systems of record, written by the runtime
    remoteId: URIRef
    sourceVersion: URIRef
    readAt: URIRef
    location: URIRef
    sourceJson: URIRef
    resource: URIRef


# Each declared term as a plain class attribute too: DefinedNamespace answers ``HORIS.version``
# through its metaclass's __getattr__ every time (1-12 µs, dozens of times a step). Found as an
# attribute, it costs nothing; an undeclared term still falls through to it and fails.
for _term in HORIS.__annotations__:
    setattr(HORIS, _term, HORIS[_term])
del _term

PROV = Namespace("http://www.w3.org/ns/prov#")
