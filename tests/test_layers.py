"""The library's layers import only downward: what the folders say is what the imports do.

From the top: ``grading/``, ``drawing/``, ``tasks/``, ``mechanism/``; below them all the
top-level modules (``_validate``, ``measure``, ``seed``, ``course``, ``data_files``). A module
may import from its own layer and from the layers below it, never from one above.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "attnlab"
ORDER = ["", "mechanism", "tasks", "drawing", "grading"]  # bottom to top ("" = top-level)


def _layer(parts: tuple[str, ...]) -> str:
    return parts[0] if len(parts) > 1 and parts[0] in ORDER else ""


def _imports(path: Path) -> set[tuple[str, ...]]:
    """The attnlab modules ``path`` imports, as paths inside the package (``("tasks", "loop")``)."""
    here = path.relative_to(LIB).with_suffix("").parts
    package = here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = base + tuple(node.module.split(".")) if node.module else base
                names = [(*target, a.name) for a in node.names] if not node.module else [target]
            elif node.module and node.module.split(".")[0] == "attnlab":
                names = [tuple(node.module.split(".")[1:])]
            else:
                continue
            found.update(n for n in names if n)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "attnlab":
                    found.add(tuple(alias.name.split(".")[1:]))
    return {n for n in found if n}


MODULES = sorted(p for p in LIB.rglob("*.py") if p.name != "__init__.py" or p.parent != LIB)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(LIB)))
def test_imports_run_only_downward(path: Path) -> None:
    mine = ORDER.index(_layer(path.relative_to(LIB).parts))
    above = {"/".join(target) for target in _imports(path) if ORDER.index(_layer(target)) > mine}
    assert not above, f"{path.relative_to(LIB)} imports from a layer above it: {sorted(above)}"


@pytest.mark.parametrize(
    ("module", "must_not_import"),
    [
        ("mechanism/multihead.py", "mechanism/config"),  # chapter 4 below chapter 7's config
        ("mechanism/kvcache.py", "mechanism/transformer"),  # the cache below its user
        ("tasks/heads.py", "tasks/training"),  # chapter 4 below chapter 7's training
        ("tasks/tokenizer.py", "tasks/embeddings"),  # no tokenizer <-> embeddings cycle
    ],
)
def test_the_layering_the_issue_named(module: str, must_not_import: str) -> None:
    imported = {"/".join(t) for t in _imports(LIB / module)}
    assert must_not_import not in imported, imported
    assert imported, "the scan sees the module's imports"
