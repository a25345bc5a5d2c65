"""Run All on every untouched exercise notebook reaches the score cell.

A learner opens ``exercises/NN_*.ipynb`` and chooses Run All. Jupyter and Colab stop at the
first error, and neither reads the ``raises-exception`` tag (nbval and nbclient do, so a
tagged cell would pass them and still stop a learner). Each exercise notebook is generated
from its solution notebook as ``make exercises`` does, every tag that allows an error is
removed, and it runs top to bottom in a fresh kernel with no error allowed. Then:

- every check cell says "not attempted yet" (a stub, or a prediction left as ``...``);
- every cell that uses the learner's code outside a check says the exercise is not done yet;
- the score cell, the last one, lists every exercise of the chapter as not attempted, none
  as "not checked" (so every check ran), and shows the score: 0 of them.

``tools/make_exercises.py`` refuses, before anything runs, the solutions whose stubs it can
see would raise (tests/test_make_exercises.py); this test runs what it cannot see.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import nbformat
import pytest

from attnlab.grading.status import NOT_ATTEMPTED
from tools import execute_notebooks, make_exercises

ROOT = Path(__file__).resolve().parent.parent
RAISES = "raises-exception"


PAIRS = make_exercises.pairs(ROOT)


def run_all(nb: nbformat.NotebookNode, folder: Path, name: str) -> nbformat.NotebookNode:
    """``nb`` executed as Run All does: top to bottom, stopped by the first error, any tag."""
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        cell.metadata["tags"] = [t for t in tags if t != RAISES]
    path = folder / name
    nbformat.write(nb, path)
    try:
        return execute_notebooks.execute(path, timeout=300)
    except execute_notebooks.NotebookFailed as err:
        pytest.fail(f"Run All stops before the score cell:\n{err}")


def text(cell: nbformat.NotebookNode) -> str:
    """Everything a code cell showed as text: printed lines and its displayed results."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.data.get("text/plain", ""))
    return "".join(parts)


def calls(cell: nbformat.NotebookNode) -> set[str]:
    """The names called in a code cell (``check_softmax``, ``skip_if_unfinished``, ...)."""
    python = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.split("\n")
    )
    tree = ast.parse(python)
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


def test_every_solution_notebook_has_its_exercise_notebook():
    assert len(PAIRS) >= 8
    assert all(pair.exercise.is_file() for pair in PAIRS)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.exercise.stem)
def test_run_all_on_the_untouched_exercises_reaches_the_score(pair, tmp_path):
    generated = make_exercises.generate(pair, ROOT)
    folder = tmp_path / "exercises"  # the notebook's own folder name, as in the repository
    folder.mkdir()
    nb = run_all(generated, folder, pair.exercise.name)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]

    checks = [cell for cell in code if any(n.startswith("check_") for n in calls(cell))]
    assert checks, "no check cell"
    for cell in checks:
        shown = text(cell)
        assert shown.startswith("○ "), f"cell {cell.id}: {shown!r}"
        assert ": not attempted yet: " in shown, f"cell {cell.id}: {shown!r}"

    for cell in (cell for cell in code if "skip_if_unfinished" in calls(cell)):
        shown = text(cell)
        assert "○ not done yet: this cell uses exercise" in shown, f"cell {cell.id}: {shown!r}"

    module = importlib.import_module(f"attnlab.grading.ch{pair.chapter:02d}")
    names = [exercise.name for exercise in module.GRADERS]
    score = code[-1]
    assert calls(score) == {"summary"}, "the last code cell is not the score cell"
    lines = text(score).splitlines()
    assert lines[0] == f"Chapter {pair.chapter} exercises"
    rows = [line.split() for line in lines[1:-1]]
    assert rows == [["○", name, *NOT_ATTEMPTED.split()] for name in names]
    assert lines[-1] == f"Score: 0/{len(names)}"
