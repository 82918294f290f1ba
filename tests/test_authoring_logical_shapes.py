"""A domain shape that refuses, through ``sh:or``, ``sh:and``, ``sh:xone``, ``sh:not`` or
``sh:node``, every value a tool's effect writes: a payout (not idempotent) writing its
``:paymentRef`` as ``xsd:string`` beside ``sh:or ( [ sh:datatype xsd:integer ] [ sh:class
:Supplier ] )`` validated; the run paid, the gate rejected the answer, nothing landed, and
the guard ``FILTER NOT EXISTS { ?this :paymentRef ?p }`` still held for the next run. Found
walking a replenishment domain; the same constraint written plainly (``sh:datatype
xsd:integer``) was an error at load already."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/repl#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a owl:Class .
:Supplier a owl:Class .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:string .

:ItemShape a sh:NodeShape ;
    sh:targetClass :Item ;
    sh:property [ sh:path :paymentRef ; sh:maxCount 1 ; CONSTRAINT ] .
SHAPES

:fin.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:finance.pay" ;
    horis:idempotent false .

:Settle a horis:Workflow ; horis:focusType :Item ; horis:start :Pay .

:Pay a horis:ActionStep ;
    horis:tool :fin.pay ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?p }" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""

FINANCE = '''
from pathlib import Path

def pay(item):
    with open(Path(__file__).with_name("paid.log"), "a") as f:
        f.write(str(item) + "\\n")
    return {"paymentRef": "PAY-1"}
'''


def _written(tmp_path: Path, constraint: str) -> Path:
    shapes = "\n".join(shape for name, shape in _NAMED.items() if name in constraint)
    text = FILE.replace("CONSTRAINT", constraint).replace("SHAPES", shapes)
    (tmp_path / "repl.ttl").write_text(text, encoding="utf-8")
    (tmp_path / "finance.py").write_text(FINANCE, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/repl#> .\n:bolts a :Item .\n", encoding="utf-8")
    return tmp_path


_NAMED = {
    ":RefShape": ":RefShape a sh:NodeShape ; sh:datatype xsd:integer .",
    ":TextShape": ':TextShape a sh:NodeShape ; sh:pattern "^PAY-" .',
    ":code": ":code a owl:DatatypeProperty .",
    ":LoopShape": ":LoopShape a sh:NodeShape ; sh:node :LoopShape .",
}
_ASSERTS = FILE[: FILE.index("horis:asserts [ horis:property :paymentRef")].count("\n") + 1


@pytest.mark.parametrize("constraint", [
    'sh:or ( [ sh:pattern "^PAY-" ] [ sh:datatype xsd:integer ] )',
    "sh:and ( [ sh:datatype xsd:string ] [ sh:minLength 3 ] )",
    "sh:xone ( [ sh:datatype xsd:string ] [ sh:nodeKind sh:IRI ] )",
    "sh:not [ sh:datatype xsd:integer ]",
    "sh:not [ sh:nodeKind sh:IRI ]",
    "sh:node :TextShape",
    "sh:or ( [ sh:path :code ; sh:minCount 1 ] [ sh:datatype xsd:integer ] )",
])
def test_a_shape_some_string_meets_stays_clean(tmp_path: Path, constraint: str) -> None:
    done = horismos_forked(_written(tmp_path, constraint), "validate", "repl.ttl")
    assert ": error: " not in done.stdout and ": warning: " not in done.stdout, done.stdout


@pytest.mark.parametrize(("constraint", "requires"), [
    ("sh:or ( [ sh:datatype xsd:integer ] [ sh:class :Supplier ] )",
     "sh:or (…), and each of its members refuses a literal of xsd:string (sh:datatype "
     "xsd:integer; sh:class :Supplier (a node of that class; a literal is an instance of no "
     "class))"),
    ("sh:xone ( [ sh:datatype xsd:integer ] [ sh:nodeKind sh:IRI ] )",
     "sh:xone (…), and each of its members refuses a literal of xsd:string (sh:datatype "
     "xsd:integer; sh:nodeKind sh:IRI)"),
    ("sh:and ( [ sh:pattern \"^PAY-\" ] [ sh:nodeKind sh:IRI ] )",
     "sh:and (…) with a member requiring sh:nodeKind sh:IRI"),
    ("sh:not [ sh:datatype xsd:string ]",
     "sh:not [ sh:datatype xsd:string ], which a literal of xsd:string always meets"),
    ("sh:node :RefShape", "sh:node :RefShape, whose shape requires sh:datatype xsd:integer"),
])
def test_a_shape_refusing_every_value_the_effect_writes_is_an_error_before_any_call(
    tmp_path: Path, constraint: str, requires: str
) -> None:
    folder = _written(tmp_path, constraint)
    done = horismos_forked(folder, "validate", "repl.ttl")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"repl.ttl:{_ASSERTS}: error: :fin.pay: the effect writes :paymentRef as a literal of "
        f"xsd:string, but shape :ItemShape requires {requires}: the gate would reject every "
        "call of :fin.pay that writes it, after the tool has acted"
        + done.stdout.splitlines()[0].split("after the tool has acted", 1)[1]), done.stdout
    run = horismos_forked(folder, "run", "repl.ttl", "--world", "world.ttl",
                          "--tools", "finance.py", "--all")
    assert run.returncode == 2, run.stdout + run.stderr
    assert not (folder / "paid.log").exists()  # the payout was never made


def test_a_shape_that_reaches_itself_through_sh_node_is_judged_not_a_traceback(
    tmp_path: Path,
) -> None:
    """A shape whose ``sh:node`` leads back to itself: the effect check followed it, each
    level counting its depth anew, until Python's recursion limit, and `validate` stopped
    with "an input is nested too deeply to be read" (exit 2), checking nothing else. It is
    followed a few levels, and judged as what it says: nothing a string cannot meet."""
    done = horismos_forked(_written(tmp_path, "sh:node :LoopShape"), "validate", "repl.ttl")
    assert done.returncode in (0, 1) and "nested too deeply" not in done.stderr, done.stderr
    assert ": error: :fin.pay: the effect writes" not in done.stdout, done.stdout


def test_a_recursive_shape_is_a_warning_at_its_line_and_no_python_warning_reaches_stderr(
    tmp_path: Path,
) -> None:
    """SHACL leaves a recursive shape's validation undefined; pySHACL printed its
    ``ShapeRecursionWarning`` with a source line on stderr, amid ``validate``'s and ``run``'s
    output, and validate said nothing of the recursion. It is a warning at the shape's line,
    said once for a cycle of two shapes (one through a property shape, one through
    ``sh:or``), and the run lands the payment in silence."""
    folder = _written(tmp_path, "sh:node :LoopShape")
    text = (folder / "repl.ttl").read_text(encoding="utf-8").replace(
        ":LoopShape a sh:NodeShape ; sh:node :LoopShape .",
        ":LoopShape a sh:NodeShape ;\n    sh:or ( [ sh:datatype xsd:string ] [ sh:node :Back ] ) ."
        "\n:Back a sh:NodeShape ; sh:property [ sh:path :code ; sh:node :LoopShape ] .",
    )
    (folder / "repl.ttl").write_text(text, encoding="utf-8")
    line = text[: text.index(":Back a sh:NodeShape")].count("\n") + 1
    done = horismos_forked(folder, "validate", "repl.ttl")
    warned = [w for w in done.stdout.splitlines() if "reaches itself" in w]
    assert warned == [
        f"repl.ttl:{line}: warning: :Back: the shape :Back reaches itself (:Back sh:property "
        "[ ], [ ] sh:node :LoopShape, :LoopShape sh:or [ ], [ ] sh:node :Back): SHACL leaves "
        "the validation of a recursive shape undefined, so engines differ: pySHACL, the gate's "
        "reference, takes the shape as met where it comes back to it — end the recursion: "
        "name the nested nodes' constraints in a shape of their own that does not lead back "
        "to this one"
    ], done.stdout
    assert done.stderr == "", done.stderr
    run = horismos_forked(folder, "run", "repl.ttl", "--world", "world.ttl",
                          "--tools", "finance.py", "--all", "--allow",
                          "ReadOnly,HostStateWrite,ExternalCommit")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stderr, run.stderr
    assert (folder / "paid.log").read_text(encoding="utf-8") == "http://example.org/repl#bolts\n"
