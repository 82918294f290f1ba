"""Where a node's description starts, found from one index of the file's line openings.

Why: each warning placed at a node asked :meth:`ParsedFile.subject_line`, which searched every
line of the file for that node: 400 warnings about 400 tools of one file read it 400 times,
most of a two-second ``validate``. The lines found are the same; the file is searched once."""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph, URIRef

from horismos._sources import ParsedFile

EX = "http://example.org/m#"

TEXT = """\
@prefix :      <http://example.org/m#> .
@prefix horis: <https://w3id.org/horismos#> .

# :t1 is mentioned here first, in a comment, not at a line's start
:t10 a horis:Tool ; horis:binding "python:m.t10" .
:t1 a horis:Tool ;
    horis:binding "python:m.t1" .
:lab.escalate a horis:Tool .
:lab a horis:Tool .
<http://example.org/m#long> a horis:Tool .
  :indented a horis:Tool .
:dashed-name a horis:Tool .
:endsthere.
"""


class _Counted(ParsedFile):
    """A parsed file that counts the lines :meth:`find` is asked to search."""

    searched = 0

    def find(self, node, text, start=0):  # type: ignore[no-untyped-def]
        _Counted.searched += 1
        return super().find(node, text, start)


def _parsed(tmp_path: Path, cls: type[ParsedFile] = ParsedFile) -> ParsedFile:
    path = tmp_path / "m.ttl"
    path.write_text(TEXT, encoding="utf-8")
    g = Graph()
    g.parse(path, format="turtle")
    return cls(path, g)


def test_each_node_is_found_where_its_description_starts(tmp_path: Path) -> None:
    f = _parsed(tmp_path)
    lines = TEXT.splitlines()

    def line_of(opening: str) -> int:
        return next(i for i, t in enumerate(lines, 1) if t.startswith(opening))

    assert f.subject_line(URIRef(EX + "t1")) == line_of(":t1 a")  # not :t10, not the comment
    assert f.subject_line(URIRef(EX + "t10")) == line_of(":t10 a")
    assert f.subject_line(URIRef(EX + "lab.escalate")) == line_of(":lab.escalate a")
    assert f.subject_line(URIRef(EX + "lab")) == line_of(":lab a")  # not :lab.escalate's
    assert f.subject_line(URIRef(EX + "long")) == line_of("<http://example.org/m#long>")
    assert f.subject_line(URIRef(EX + "indented")) == line_of("  :indented")
    assert f.subject_line(URIRef(EX + "dashed-name")) == line_of(":dashed-name")
    assert f.subject_line(URIRef(EX + "dashed")) is None  # part of a longer name
    assert f.subject_line(URIRef(EX + "endsthere")) == line_of(":endsthere.")
    assert f.subject_line(URIRef(EX + "nowhere")) is None


def test_the_file_is_searched_once_for_every_node_asked_of(tmp_path: Path) -> None:
    f = _parsed(tmp_path, _Counted)
    _Counted.searched = 0
    for i in range(400):
        f.subject_line(URIRef(f"{EX}n{i}"))
    # each node searched every line before: 400 nodes x 14 lines
    assert _Counted.searched < 100, _Counted.searched
