"""The docs cannot drift from what they describe, and a newcomer can finish the README.

The generated reference pages (CLI, Python API, the ``horis:`` vocabulary through pyLODE) are
made again from the code and the ontology and compared with the checked-in files; every
relative link in the README and docs/ leads to a file that exists.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("page", sorted(GENERATE.PAGES))
def test_a_generated_reference_page_matches_what_the_code_makes_now(page: str) -> None:
    path = ROOT / "docs" / "reference" / page
    assert path.is_file(), f"docs/reference/{page} is missing; write it with: {GENERATE.REGENERATE}"
    made = GENERATE.PAGES[page]()
    assert path.read_text(encoding="utf-8") == made, (
        f"docs/reference/{page} differs from what {GENERATE.PAGES[page].__name__}() makes from "
        f"the code and the ontology now; regenerate it with: {GENERATE.REGENERATE}")


def test_the_vocabulary_page_documents_every_term_of_the_ontology() -> None:
    from rdflib import Graph

    ontology = Graph().parse(GENERATE.ONTOLOGY)
    terms = {str(s) for s in ontology.subjects() if str(s).startswith("https://w3id.org/horismos#")}
    page = (ROOT / "docs" / "reference" / "vocabulary.html").read_text(encoding="utf-8")
    undocumented = sorted(t for t in terms if t not in page)
    assert not undocumented, f"terms missing from docs/reference/vocabulary.html: {undocumented}"


def test_the_cli_page_lists_every_command() -> None:
    from horismos._cli import COMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    missing = [c.name for c in COMMANDS if f"## horismos {c.name}\n" not in page]
    assert not missing, f"commands missing from docs/reference/cli.md: {missing}"


def test_the_readme_is_an_introduction_not_a_reference() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, (
        f"README.md has {len(lines)} lines; keep it to 150 (what it is, the two commands, one "
        "example, where to read on) and move the rest to a page under docs/")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _anchors(page: Path) -> set[str]:
    """The anchors a Markdown page's headings get on GitHub: lower case, punctuation dropped,
    spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(document: Path) -> None:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        page = document.parent / path if path else document
        if not page.exists() or (anchor and page.suffix == ".md"
                                 and anchor not in _anchors(page)):
            broken.append(target)
    assert not broken, f"{document.relative_to(ROOT)} links to missing pages or headings: {broken}"
