"""tools/execute_notebooks.py: runs in the notebook's folder, saves outputs, same bytes twice."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from tools import execute_notebooks

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def execute(capsys, tmp_path):
    """``execute_notebooks.py TARGETS...`` in this process (the kernels are new processes),
    with an execution cache of its own (never the book's)."""

    def run(*targets):
        args = [*map(str, targets), "--timeout", "60", "--cache", str(tmp_path / "cache")]
        code = execute_notebooks.main(args)
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return run


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    for source, tags in cells:
        cell = nbformat.v4.new_code_cell(source)
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nb.metadata["language_info"] = {"name": "python", "version": "3.0.0"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nb


def test_executes_in_place_deterministically_and_reports_failures(tmp_path, execute):
    folder = tmp_path / "chapters"
    folder.mkdir()
    (folder / "data.txt").write_text("read from the notebook's folder")
    good = folder / "good.ipynb"
    nbformat.write(
        notebook(
            ("print(open('data.txt').read())", None),
            ("import sys\nsys.executable", None),
            ("1 / 0", ["raises-exception"]),
            ("import ipywidgets\nipywidgets.IntSlider(value=3)", None),
        ),
        good,
    )
    bad = folder / "bad.ipynb"
    nbformat.write(notebook(("x = 1", None), ("undefined_name", None)), bad)
    bad_before = bad.read_bytes()

    done = execute(folder)
    assert done.returncode == 1
    assert "bad.ipynb, cell 1" in done.stderr and "'undefined_name'" in done.stderr
    assert "NameError" in done.stderr
    assert bad.read_bytes() == bad_before  # a failed notebook is not saved

    nb = nbformat.read(good, as_version=4)
    outputs = [cell.outputs for cell in nb.cells]
    assert outputs[0][0]["text"] == "read from the notebook's folder\n"
    assert ast.literal_eval(outputs[1][0]["data"]["text/plain"]) == sys.executable
    assert outputs[2][0]["ename"] == "ZeroDivisionError"
    assert [c.execution_count for c in nb.cells] == [1, 2, 3, 4]
    assert "widgets" not in nb.metadata
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "version" not in nb.metadata["language_info"]
    assert all("execution" not in cell.metadata for cell in nb.cells)

    first = good.read_bytes()
    again = execute(good)
    assert again.returncode == 0, again.stderr
    assert good.read_bytes() == first


def test_missing_target_is_an_error(tmp_path, execute):
    done = execute(tmp_path / "nowhere.ipynb")
    assert done.returncode == 2
    assert "nowhere.ipynb is neither a notebook nor a folder" in done.stderr


def test_committed_outputs_keep_text_only(tmp_path, execute):
    path = tmp_path / "figures.ipynb"
    nbformat.write(
        notebook(
            ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt", None),
            ("plt.plot([1, 2]); plt.show()", None),
            ("from IPython.display import HTML\nHTML('<b>bold</b>')", None),
            ("import ipywidgets\nipywidgets.IntSlider(value=3)", None),
            ("print('kept'); 41 + 1", None),
        ),
        path,
    )
    assert execute(path).returncode == 0
    nb = nbformat.read(path, as_version=4)
    kinds = [[sorted(o.get("data", {})) or o.output_type for o in c.outputs] for c in nb.cells]
    assert kinds[2] == [["text/plain"]]  # the HTML display keeps its text only
    assert kinds[3] == [["text/plain"]]  # the widget view is gone, its repr stays
    assert kinds[4] == ["stream", ["text/plain"]]
    for cell in nb.cells:
        for out in cell.outputs:
            assert not set(out.get("data", {})) - {"text/plain"}
            assert "image/png" not in out.get("data", {})
    assert (
        execute_notebooks.lean_outputs(
            [{"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}}]
        )
        == []
    )


def test_an_unchanged_notebook_comes_from_the_cache(tmp_path, execute):
    path = tmp_path / "clock.ipynb"
    nbformat.write(notebook(("import time\nprint(time.time_ns())", None)), path)
    first = execute(path)
    assert first.returncode == 0 and "executed in" in first.stdout
    stamp = nbformat.read(path, as_version=4).cells[0].outputs[0]["text"]
    again = execute(path)
    assert again.returncode == 0 and "from the cache" in again.stdout
    assert nbformat.read(path, as_version=4).cells[0].outputs[0]["text"] == stamp
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\nprint('changed')"
    nbformat.write(nb, path)
    changed = execute(path)
    assert "executed in" in changed.stdout  # a code change misses the cache
    assert nbformat.read(path, as_version=4).cells[0].outputs[0]["text"] != stamp
