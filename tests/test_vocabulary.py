"""The vocabulary module, the OWL ontology and the authoring shapes stay in step.

``horismos._vocab.HORIS`` is the closed Python namespace; ``horis.ttl`` declares the same
terms; ``horis-shapes.ttl`` rejects what authors get wrong with a message saying what to write.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
from pyshacl import validate
from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef
from rdflib.namespace import SH

from horismos._vocab import HORIS, NS

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY_FILES = ("horis.ttl", "horis-shapes.ttl")


def _packaged(name: str):
    return importlib.resources.files("horismos") / "ontology" / name


@pytest.fixture(scope="module")
def ontology() -> Graph:
    return Graph().parse(data=_packaged("horis.ttl").read_text(encoding="utf-8"), format="turtle")


@pytest.fixture(scope="module")
def shapes() -> Graph:
    return Graph().parse(
        data=_packaged("horis-shapes.ttl").read_text(encoding="utf-8"), format="turtle"
    )


def _vocab_terms() -> set[URIRef]:
    names = set(HORIS.__annotations__) | set(HORIS._extras)
    return {URIRef(NS + name) for name in names}


# --- (a) the Python namespace and the ontology declare the same terms ---------------------


def test_every_vocab_term_is_declared_in_the_ontology(ontology: Graph) -> None:
    undeclared = sorted(t for t in _vocab_terms() if (t, RDF.type, None) not in ontology)
    assert not undeclared, f"in _vocab.py but not declared in horis.ttl: {undeclared}"


def test_every_ontology_term_is_in_the_vocab(ontology: Graph) -> None:
    used = {
        node
        for triple in ontology
        for node in triple
        if isinstance(node, URIRef) and str(node).startswith(NS)
    }
    unknown = sorted(used - _vocab_terms())
    assert not unknown, f"in horis.ttl but missing from _vocab.HORIS: {unknown}"


def test_ontology_header(ontology: Graph) -> None:
    header = URIRef("https://w3id.org/horismos")
    assert (header, RDF.type, OWL.Ontology) in ontology
    assert ontology.value(header, OWL.versionInfo) == Literal("0.1.0")
    assert ontology.value(header, RDFS.label) is not None
    assert ontology.value(header, RDFS.comment) is not None


def test_every_term_has_a_label_and_a_comment(ontology: Graph) -> None:
    bare = sorted(
        t
        for t in _vocab_terms()
        if ontology.value(t, RDFS.label) is None or ontology.value(t, RDFS.comment) is None
    )
    assert not bare, f"terms without rdfs:label or rdfs:comment: {bare}"


def test_step_kinds_are_steps(ontology: Graph) -> None:
    for kind in (HORIS.ActionStep, HORIS.DecisionStep, HORIS.ProposalStep, HORIS.WaitStep):
        assert (kind, RDFS.subClassOf, HORIS.Step) in ontology


def test_as_is_reachable_by_item_access() -> None:
    assert HORIS["as"] == URIRef(NS + "as")


# --- (b) the namespace is closed --------------------------------------------------------


def test_misspelt_term_raises() -> None:
    with pytest.raises(AttributeError):
        _ = HORIS.ActionStpe


# --- (c) the shapes are well-formed SHACL -----------------------------------------------


def test_shapes_conform_to_shacl_shacl(shapes: Graph) -> None:
    # meta_shacl=True raises when the shapes graph does not conform to SHACL-SHACL.
    conforms, _, text = validate(Graph(), shacl_graph=shapes, meta_shacl=True)
    assert conforms, text


def test_every_constraint_has_a_message(shapes: Graph) -> None:
    # A shape that reports violations must say what to write: it carries its own sh:message,
    # or (shapes only referenced through sh:node) is wrapped by a property shape that has one.
    referenced = set(shapes.objects(None, SH.node))
    silent = []
    for shape in set(shapes.subjects(SH.path, None)) | set(shapes.subjects(RDF.type, SH.NodeShape)):
        is_member = any(True for _ in shapes.subjects(RDF.first, shape))
        has_own_constraints = any(
            p not in (RDF.type, SH.property, SH.targetClass, SH.path)
            and not str(p).startswith(str(SH) + "target")
            for p in shapes.predicates(shape, None)
        )
        if is_member or shape in referenced or not has_own_constraints:
            continue
        if shapes.value(shape, SH.message) is None:
            silent.append(shape)
    assert not silent, f"shapes without sh:message: {silent}"


# --- (d) the files ship inside the package ----------------------------------------------


@pytest.mark.parametrize("name", ONTOLOGY_FILES)
def test_files_ship_inside_the_package(name: str) -> None:
    resource = _packaged(name)
    assert resource.is_file()
    assert resource.read_text(encoding="utf-8").startswith("@prefix")


@pytest.mark.parametrize("name", ONTOLOGY_FILES)
def test_ontologies_dir_links_to_the_packaged_files(name: str) -> None:
    link = ROOT / "ontologies" / name
    assert link.is_symlink()
    assert not Path(link.readlink()).is_absolute()
    assert link.resolve() == (ROOT / "horismos" / "ontology" / name).resolve()


# --- (e) the shapes accept the SPEC's samples and reject broken ones ---------------------

PREFIXES = """\
@prefix :      <http://example.org/ehr#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

TOOL = """\
:ehr.assign_queue a horis:Tool ;
    rdfs:label "Assign a patient to a triage queue" ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]
    ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]
    ] ;
    horis:binding "python:ehr_client.assign_queue" ;
    horis:timeout "5s" ;
    horis:idempotent false .
"""

WORKFLOW = '''\
:Triage a horis:Workflow ;
    horis:focusType :Patient ;
    horis:start :QueuePatient .

:QueuePatient a horis:ActionStep ;
    horis:tool :ehr.assign_queue ;
    horis:requires """ ?this :acuity ?queue .
                       FILTER NOT EXISTS { ?this :queuedAt ?t } """ ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:next :Route ;
    horis:onError :AskHuman .
'''

OTHER_STEPS = """\
:Route a horis:DecisionStep ;
    horis:when [ horis:requires "?this :acuity :High" ; horis:next :PickOption ; horis:order 1 ] ;
    horis:otherwise :AskHuman .

:PickOption a horis:ProposalStep ;
    horis:candidates [ horis:query "SELECT ?option WHERE { ?this :eligibleFor ?option }" ] ;
    horis:rankBy "customer preference expressed in the request" ;
    horis:model "anthropic:claude-fable-5" ;
    horis:confidence 0.8 ;
    horis:fallback :AskHuman ;
    horis:as "option" ;
    horis:next :AskHuman .

:AskHuman a horis:WaitStep ;
    horis:reason "a nurse must confirm the queue" ;
    horis:wake horis:OperatorInput , horis:Timer ;
    horis:delivery horis:Final ;
    horis:until "?this :confirmedBy ?nurse" ;
    horis:timeout "2m" ;
    horis:onTimeout :Route .
"""

SERVERS = """\
:ehr-server a horis:McpServer ; horis:command "python" ; horis:args ( "-m" "ehr_mcp" ) .
:ehr-cloud  a horis:McpServer ; horis:url "http://127.0.0.1:8765/mcp" .
"""

CORRECT = PREFIXES + TOOL + WORKFLOW + OTHER_STEPS + SERVERS


def _messages(data: str, shapes: Graph) -> tuple[bool, list[str]]:
    conforms, report, _ = validate(Graph().parse(data=data, format="turtle"), shacl_graph=shapes)
    messages = [str(m) for m in report.objects(None, SH.resultMessage)]
    return conforms, messages


def _broken(old: str, new: str) -> str:
    assert old in CORRECT, old
    return CORRECT.replace(old, new, 1)


def test_spec_sample_conforms(shapes: Graph) -> None:
    conforms, messages = _messages(CORRECT, shapes)
    assert conforms, messages


def test_spec_sample_conforms_with_the_ontology_and_rdfs_inference(
    shapes: Graph, ontology: Graph
) -> None:
    # Domains and ranges must not make a correct sample invalid once entailed.
    data = Graph().parse(data=CORRECT, format="turtle") + ontology
    conforms, _, text = validate(data, shacl_graph=shapes, inference="rdfs")
    assert conforms, text


BROKEN = {
    "tool without binding": (
        _broken('horis:binding "python:ehr_client.assign_queue" ;', ""),
        'horis:binding "python:',
    ),
    "arg without type": (
        _broken("; horis:type :AcuityLevel", ""),
        "Give the argument a horis:type",
    ),
    "arg without name": (
        _broken('horis:name "queue"   ;', ""),
        'horis:name "patient"',
    ),
    "workflow without start": (
        _broken(
            "horis:focusType :Patient ;\n    horis:start :QueuePatient .",
            "horis:focusType :Patient .",
        ),
        "horis:start :",
    ),
    "workflow without focus type": (
        _broken("horis:focusType :Patient ;\n    horis:start", "horis:start"),
        "horis:focusType :Patient",
    ),
    "asserts with both value and type": (
        _broken("horis:value horis:now ]", "horis:value horis:now ; horis:type xsd:dateTime ]"),
        "not both",
    ),
    "asserts without property": (
        _broken("horis:property :queueRef ;", ""),
        "horis:property :queuedAt",
    ),
    "two effects": (
        _broken("horis:timeout", "horis:effect [ ] ;\n    horis:timeout"),
        "single horis:effect",
    ),
    "quoted boolean": (
        _broken("horis:idempotent false", 'horis:idempotent "false"'),
        "horis:idempotent true",
    ),
    "negative retries": (
        _broken("horis:idempotent false", "horis:idempotent false ; horis:retries -1"),
        "horis:retries 2",
    ),
    "max steps not positive": (
        _broken("horis:start :QueuePatient .", "horis:start :QueuePatient ; horis:maxSteps 0 ."),
        "horis:maxSteps 200",
    ),
    "max steps quoted": (
        _broken("horis:start :QueuePatient .",
                'horis:start :QueuePatient ; horis:maxSteps "50" .'),
        "positive integer",
    ),
    "result cap not a positive integer": (
        _broken("horis:idempotent false", 'horis:idempotent false ; horis:maxResultBytes "1MB"'),
        "horis:maxResultBytes 5000000",
    ),
    "unknown side effect": (
        _broken("horis:idempotent false", "horis:idempotent false ; horis:sideEffect :Lots"),
        "horis:ReadOnly",
    ),
    "action step without tool": (
        _broken("horis:tool :ehr.assign_queue ;", ""),
        "horis:tool :",
    ),
    "precondition not a string": (
        _broken('horis:requires "?this :acuity :High"', "horis:requires :High"),
        'horis:requires "',
    ),
    "bind without var": (
        _broken('; horis:var "this" ]', "]"),
        'horis:var "this"',
    ),
    "when without next": (
        _broken("; horis:next :PickOption ;", ";"),
        "horis:next",
    ),
    "candidates without query": (
        _broken('horis:query "SELECT ?option WHERE { ?this :eligibleFor ?option }"', ""),
        "horis:query",
    ),
    "confidence out of range": (
        _broken("horis:confidence 0.8", "horis:confidence 1.5"),
        "horis:confidence 0.8",
    ),
    "confidence as a percentage": (
        _broken("horis:confidence 0.8", "horis:confidence 70"),
        "80% is 0.8",
    ),
    "unknown wake": (
        _broken("horis:Timer ;", ":Whenever ;"),
        "horis:OperatorInput",
    ),
    "unknown delivery": (
        _broken("horis:delivery horis:Final", "horis:delivery :Loud"),
        "horis:Silent",
    ),
    "mcp server with command and url": (
        _broken('horis:command "python" ;', 'horis:command "python" ; horis:url "http://x/mcp" ;'),
        "exactly one of horis:command",
    ),
    "mcp server with neither command nor url": (
        _broken('horis:url "http://127.0.0.1:8765/mcp" ', ""),
        "exactly one of horis:command",
    ),
    "mcp args not strings": (
        _broken('( "-m" "ehr_mcp" )', '( "-m" 8 )'),
        "member of horis:args is a string",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_sample_is_rejected_saying_what_to_write(case: str, shapes: Graph) -> None:
    data, expected = BROKEN[case]
    conforms, messages = _messages(data, shapes)
    assert not conforms
    assert any(expected in m for m in messages), messages


def test_a_step_budget_conforms(shapes: Graph) -> None:
    conforms, messages = _messages(
        _broken("horis:start :QueuePatient .", "horis:start :QueuePatient ; horis:maxSteps 200 ."),
        shapes)
    assert conforms, messages
