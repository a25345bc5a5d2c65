"""Every "Taught in:" line of the library's docstrings names notebooks that exist.

Docstrings say where an object is taught (``Taught in: chapters/03_qkv.ipynb``), so that a
reader of the code can find the prose. A renamed or unwritten chapter would leave the line
pointing nowhere; this test keeps the two in step.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lib" / "attnlab"
NOTEBOOK = re.compile(r"\b(?:chapters|solutions|exercises)/\d{2}_[a-z0-9_]+\.ipynb")
LINE = re.compile(r"Taught in:\s*(?P<rest>.*)")


def taught_in_lines() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = LINE.search(line)
            if match:
                found.append((path.relative_to(ROOT).as_posix(), number, match["rest"]))
    return found


LINES = taught_in_lines()


def test_the_library_says_where_it_is_taught():
    assert len(LINES) >= 40
    modules = {path for path, _, _ in LINES}
    assert {"lib/attnlab/mechanism/attention.py", "lib/attnlab/mechanism/similarity.py"} <= modules


@pytest.mark.parametrize(("path", "number", "rest"), LINES, ids=[f"{p}:{n}" for p, n, _ in LINES])
def test_taught_in_names_existing_notebooks(path, number, rest):
    named = NOTEBOOK.findall(rest)
    generic = rest.startswith("every chapter")
    assert named or generic, f"{path}:{number} names no notebook: {rest!r}"
    missing = [n for n in named if not (ROOT / n).is_file()]
    assert not missing, f"{path}:{number} names notebooks that do not exist: {missing}"
