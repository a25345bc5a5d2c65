"""Notebook Markdown reads cleanly where learners open it: Jupyter, Colab and the website.

Jupyter and Colab render a notebook's Markdown with a plain CommonMark renderer (plus
tables), which knows nothing of MyST: a role such as ``{doc}`x``` or a directive fence such
as ```` ```{note} ```` is shown raw. Each Markdown cell is rendered here with markdown-it-py
in CommonMark mode, as Jupyter would, and the rendered tokens are searched for what MyST
would have turned into something else. Links between notebooks are plain relative links,
which both Jupyter and the website follow, so each must point at a file that exists.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for d in ("chapters", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb")
)
PAGES = sorted(ROOT.glob("*.md"))
ROLE = re.compile(r"\{[a-zA-Z][\w:-]*\}$")  # text that ends where a role's `content` starts
TARGET = re.compile(r"^\([\w-]+\)=$")  # a MyST label line: (my-label)=
LEAK = re.compile(
    r"\bthe seeds\b|\bseeds'|\bseed (?:notes|material|text)|source notes|lecture notes|course's notes|source material|"
    r"this course's sources|how (?:this|the) course was made",
    re.IGNORECASE,
)

commonmark = MarkdownIt("commonmark").enable("table")


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def myst_leftovers(markdown: str) -> list[str]:
    """What a plain CommonMark renderer would show raw: roles, directive fences, targets."""
    found = []
    for token in commonmark.parse(markdown):
        if token.type == "fence" and token.info.strip().startswith("{"):
            found.append(f"directive fence ```{token.info.strip()}")
        if token.type != "inline":
            continue
        if TARGET.match(token.content.strip()):
            found.append(f"label target {token.content.strip()}")
        if token.content.lstrip().startswith(":::"):
            found.append(f"colon fence {token.content.strip().splitlines()[0]}")
        children = token.children or []
        for before, after in itertools.pairwise(children):
            if before.type == "text" and after.type == "code_inline":
                role = ROLE.search(before.content)
                if role:
                    found.append(f"role {role.group(0)}`{after.content}`")
    return found


def relative_links(markdown: str) -> list[str]:
    """Every link target that is neither a URL nor an anchor on the same page."""
    targets = []
    for token in commonmark.parse(markdown):
        for child in token.children or []:
            href = child.attrs.get("href") if child.type == "link_open" else None
            if href and not re.match(r"^[a-z]+:|^#", href):
                targets.append(href)
    return targets


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]


def findings(path: Path, check) -> list[str]:
    """``check(markdown)``'s findings over every Markdown cell of a notebook, by cell."""
    return [f"cell {i}: {found}" for i, source in markdown_cells(path) for found in check(source)]


def test_the_checker_finds_what_jupyter_would_show_raw():
    sample = (
        "See {doc}`../chapters/02_similarity` and {cite}`vaswani2017attention`.\n\n"
        "```{note}\nA note.\n```\n\n:::{tip}\nA tip.\n:::\n\n(my-label)=\n\n"
        "Plain `code`, a [link](02_x.ipynb), $x^2$ and {a set} stay.\n"
    )
    found = myst_leftovers(sample)
    assert found == [
        "role {doc}`../chapters/02_similarity`",
        "role {cite}`vaswani2017attention`",
        "directive fence ```{note}",
        "colon fence :::{tip}",
        "label target (my-label)=",
    ]
    assert myst_leftovers("A set {1, 2} and `code`; a dict {'a': 1}.") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_markdown_has_no_myst_syntax(path):
    problems = findings(path, myst_leftovers)
    assert not problems, f"{path.name} shows raw MyST in Jupyter and Colab: {problems}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_links_point_at_files_that_exist(path):
    broken = []
    for index, source in markdown_cells(path):
        for href in relative_links(source):
            target = (path.parent / href.split("#")[0]).resolve()
            if not target.exists():
                broken.append(f"cell {index}: {href}")
    assert not broken, f"{path.name} links to missing files: {broken}"


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=_ids(NOTEBOOKS + PAGES))
def test_the_course_never_speaks_of_how_it_was_made(path):
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        texts = [(i, c.source) for i, c in enumerate(nb.cells)]
    else:
        texts = [(0, path.read_text(encoding="utf-8"))]
    found = [f"cell {i}: {m.group(0)!r}" for i, text in texts for m in LEAK.finditer(text)]
    assert not found, f"{path.name} mentions its making or sources: {found}"


CODE_WIDTH = 84  # chapters/ruff.toml's line length: what a code block shows without scrolling


def long_code_lines(markdown: str) -> list[str]:
    """Lines of fenced or indented code blocks wider than :data:`CODE_WIDTH` characters."""
    return [
        line
        for token in commonmark.parse(markdown)
        if token.type in ("fence", "code_block")
        for line in token.content.splitlines()
        if len(line) > CODE_WIDTH
    ]


def test_the_width_checker_finds_long_code_lines():
    wide = "x = " + "1 + " * 25 + "1"
    assert long_code_lines(f"Text {wide}.\n\n```python\nshort()\n{wide}\n```\n") == [wide]
    assert long_code_lines(f"```\nshort()\n```\n\n    {wide[:80]}\n") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_code_in_markdown_fits_a_code_block(path):
    # Code cells are held to this width by ruff; code shown inside Markdown is not.
    found = findings(path, long_code_lines)
    assert not found, f"{path.name} has code lines wider than {CODE_WIDTH}: {found}"
