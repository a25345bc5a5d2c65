"""README's layout table names every module of the library, in its folder, and nothing else.

intro.md's chapter list is held against the chapters by tests/test_claims_intro.py.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "attnlab"


def _library_row() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `lib/attnlab/` |")]
    assert len(rows) == 1, "README's layout table must have one row for lib/attnlab/"
    return rows[0]


def _listed(row: str) -> set[str]:
    """``folder/module`` for each module named inside a folder's parentheses, ``module`` for
    each named outside them."""
    listed = set()
    for folder, names in re.findall(r"`(\w+)/`[^(`]*\(([^)]*)\)", row):
        listed |= {f"{folder}/{name}" for name in re.findall(r"`(\w+)`", names)}
    outside = re.sub(r"\([^)]*\)", "", row.split("|")[2])
    listed |= set(re.findall(r"`(\w+)`", outside))
    return listed


def _modules() -> set[str]:
    """The library's modules as README names them: ``folder/module``, or ``module`` at the
    top; a package of data (``__init__`` alone) by its name."""
    found = set()
    for path in LIB.rglob("*.py"):
        rel = path.relative_to(LIB).with_suffix("")
        parts = rel.parts
        if parts[-1] == "__init__":
            if len(parts) == 2 and not any(
                p.suffix == ".py" for p in path.parent.iterdir() if p != path
            ):
                found.add(parts[0])  # a package that only ships files: data_files
            continue
        found.add("/".join(parts))
    return found


def test_readme_names_every_module_in_its_folder() -> None:
    listed, modules = _listed(_library_row()), _modules()
    assert modules - listed == set(), (
        f"modules README's layout table leaves out: {sorted(modules - listed)}"
    )
    assert listed - modules == set(), (
        f"README names modules that are not there: {sorted(listed - modules)}"
    )


def test_readme_names_the_four_layers() -> None:
    row = _library_row()
    folders = {p.name for p in LIB.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    named = set(re.findall(r"`(\w+)/`", row)) | {"data_files"}
    assert folders == named, (folders, named)


def test_every_path_of_the_layout_table_exists() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Working on the course")[1]
    paths = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
    assert "lib/attnlab/" in paths and "chapters/" in paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing
