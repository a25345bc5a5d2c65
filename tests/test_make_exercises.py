"""tools/make_exercises.py: stubs, numbering, title, banner, dropped cells, idempotence, --check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from tools import make_exercises

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "make_exercises.py"


def md(source, cid, tags=None):
    cell = nbformat.v4.new_markdown_cell(source, id=cid)
    if tags:
        cell.metadata["tags"] = tags
    return cell


def code(source, cid, tags=None, executed=False):
    cell = nbformat.v4.new_code_cell(source, id=cid)
    if tags:
        cell.metadata["tags"] = tags
    if executed:
        cell.execution_count = 7
        cell.outputs = [nbformat.v4.new_output("stream", text="an output\n")]
        cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00.000Z"}
    return cell


SOFTMAX_SOLUTION = '''def softmax(x, axis=-1):
    """Stable softmax."""
    ### BEGIN SOLUTION
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)
    ### END SOLUTION'''

NESTED_SOLUTION = """class Net:
    def forward(self, x):
        if x:
            ### BEGIN SOLUTION
            return x
            ### END SOLUTION
        return None"""

TOP_LEVEL_SOLUTION = """answer = ...  # replace ... with your prediction
### BEGIN SOLUTION
six = 6
answer = six * 7
### END SOLUTION
print(answer)"""


def solution_cells():
    return [
        md("# Solutions: similarity\n\nSolutions: the answers are below.", "title"),
        md("Some prose.", "prose"),
        code("import numpy as np", "imports", executed=True),
        md("### Exercise 2.1: softmax", "ex1"),
        code(SOFTMAX_SOLUTION, "ex1-code", executed=True),
        code("check_softmax(softmax)", "ex1-check", executed=True),
        md("<!-- BEGIN SOLUTION -->\nThe max cancels in the ratio.\n<!-- END SOLUTION -->", "md-answer"),
        md("Before <!-- BEGIN SOLUTION -->hidden words<!-- END SOLUTION -->after.", "inline"),
        md("<!-- BEGIN SOLUTION -->\nStart of a long answer", "long-1"),
        code("print('worked example')", "long-code"),
        md("End of it.\n<!-- END SOLUTION -->\nKept text.", "long-2"),
        code(NESTED_SOLUTION, "nested"),
        code(TOP_LEVEL_SOLUTION, "top-level"),
        code("print('only in the solutions')", "solution-only", tags=["solution-only"]),
        md("These are the solutions.", "link", tags=["solutions-link"]),
    ]  # fmt: skip


def write_solution(root, cells=None, name="02_demo.ipynb"):
    nb = nbformat.v4.new_notebook(cells=solution_cells() if cells is None else cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    path = root / "solutions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def run_script(*args):
    """The real command line, in a new interpreter."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def run(capsys):
    """``make_exercises.py --root ROOT ARGS...`` in this process (the tool's ``main``)."""

    def run_in_process(root, *args):
        code = make_exercises.main(["--root", str(root), *args])
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return run_in_process


@pytest.fixture
def generated(tmp_path, run):
    write_solution(tmp_path)
    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "exercises" / "02_demo.ipynb"
    return path, nbformat.read(path, as_version=4)


def by_id(nb):
    return {cell.id: cell for cell in nb.cells}


# ------------------------------------------------------------------ generation


def test_stub_replaces_the_answer_at_the_marker_indentation(generated):
    cells = by_id(generated[1])
    assert cells["ex1-code"].source == (
        'def softmax(x, axis=-1):\n    """Stable softmax."""\n'
        '    raise NotImplementedError("Exercise 2.1")'
    )
    assert cells["nested"].source == (
        "class Net:\n    def forward(self, x):\n        if x:\n"
        '            raise NotImplementedError("Exercise 2.2")\n        return None'
    )
    assert cells["top-level"].source == "answer = ...  # your prediction\nprint(answer)"


def test_no_generated_cell_is_tagged_raises_exception(generated):
    # Run All in Jupyter and Colab ignores the tag: no exercise cell may need it.
    for cell in generated[1].cells:
        assert "raises-exception" not in cell.metadata.get("tags", []), cell.id


@pytest.mark.parametrize(
    "preface", ["", "answer = ...  # replace the raise below\n", "answer = None  # yours\n"]
)
def test_a_prediction_becomes_an_ellipsis_the_check_can_grade(preface):
    source = (
        f"# Predict: the weight (a number).\n{preface}"
        "### BEGIN SOLUTION\nanswer = 0.5\n### END SOLUTION\ncheck_weight(answer)"
    )
    stub, labels = make_exercises.stub_code(source, 4, 3, "here")
    assert stub == (
        "# Predict: the weight (a number).\nanswer = ...  # your prediction\ncheck_weight(answer)"
    )
    assert labels == ["Exercise 4.3"]  # still counted: the next answer is 4.4
    assert not make_exercises.runs_when_executed(stub, labels)  # no raises-exception tag


@pytest.mark.parametrize(
    "answer",
    [
        "answer = 0.5\nother = 1",  # two statements
        "a, b = 1, 2",  # not one name
        "answer += 1",  # not an assignment
        "print(0.5)",
    ],
)
def test_only_one_assignment_to_one_name_is_a_prediction(answer):
    source = f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION"
    stub, _ = make_exercises.stub_code(source, 4, 1, "here")
    assert stub == 'raise NotImplementedError("Exercise 4.1")'


def test_a_worked_prediction_completes_its_placeholder():
    source = (
        "answer = ...  # replace ... with your prediction\n### BEGIN SOLUTION\n"
        "ffn = 2 * 768 * 3072\nanswer = ffn + 768\n### END SOLUTION\ncheck(answer)"
    )
    stub, _ = make_exercises.stub_code(source, 7, 1, "here")
    assert stub == "answer = ...  # your prediction\ncheck(answer)"


def test_an_indented_assignment_is_not_a_prediction():
    source = "def f():\n    ### BEGIN SOLUTION\n    y = 2\n    ### END SOLUTION\n    return y"
    stub, _ = make_exercises.stub_code(source, 4, 1, "here")
    assert stub == 'def f():\n    raise NotImplementedError("Exercise 4.1")\n    return y'


def test_a_placeholder_for_another_name_is_kept():
    source = "guess = None\n### BEGIN SOLUTION\nanswer = 2\n### END SOLUTION"
    stub, _ = make_exercises.stub_code(source, 4, 1, "here")
    assert stub == "guess = None\nanswer = ...  # your prediction"


def test_numbering_uses_the_chapter_of_the_file_name(tmp_path, run):
    cells = [
        code(SOFTMAX_SOLUTION, "a"),
        code(NESTED_SOLUTION, "b"),
        code(SOFTMAX_SOLUTION, "c"),
    ]
    write_solution(tmp_path, cells, name="07_transformer.ipynb")
    assert run(tmp_path).returncode == 0
    nb = nbformat.read(tmp_path / "exercises" / "07_transformer.ipynb", as_version=4)
    stubs = [
        line
        for c in nb.cells
        if c.cell_type == "code"
        for line in c.source.split("\n")
        if "NotImplementedError" in line
    ]
    assert [s.strip() for s in stubs] == [
        'raise NotImplementedError("Exercise 7.1")',
        'raise NotImplementedError("Exercise 7.2")',
        'raise NotImplementedError("Exercise 7.3")',
    ]


def test_no_answer_survives(generated):
    text = generated[0].read_text(encoding="utf-8")
    for answer in ("np.exp(x - x.max", "return x\\n", "answer = 42", "cancels", "hidden words",
                   "long answer", "worked example", "End of it", "only in the solutions",
                   "BEGIN SOLUTION", "END SOLUTION"):  # fmt: skip
        assert answer not in text, answer


def test_markdown_answers_and_solution_only_cells_are_dropped(generated):
    cells = by_id(generated[1])
    for dropped in ("md-answer", "long-1", "long-code", "solution-only"):
        assert dropped not in cells
    assert cells["inline"].source == "Before after."
    assert cells["long-2"].source == "Kept text."


def test_solutions_title_becomes_exercises_title(generated):
    title = generated[1].cells[0]
    assert title.id == "title"
    assert title.source == "# Exercises: similarity\n\nSolutions: the answers are below."


@pytest.mark.parametrize(
    "title",
    ["# Chapter 2: similarity", "## Solutions: similarity", "# Solutions of chapter 2", "Solutions: similarity"],
)  # fmt: skip
def test_other_titles_are_kept(tmp_path, run, title):
    later = "# Solutions: not the first cell"
    write_solution(tmp_path, [md(title, "title"), md(later, "later"), code(SOFTMAX_SOLUTION, "b")])
    assert run(tmp_path).returncode == 0
    nb = nbformat.read(tmp_path / "exercises" / "02_demo.ipynb", as_version=4)
    assert by_id(nb)["title"].source == title
    assert by_id(nb)["later"].source == later


def test_banner_follows_the_title_and_speaks_to_learners(generated):
    nb = generated[1]
    assert [c.id for c in nb.cells[:2]] == ["title", "generated-banner"]
    assert nb.cells[2].id != "generated-note"
    banner = nb.cells[1]
    assert banner.cell_type == "markdown"
    assert banner.metadata["tags"] == ["generated-banner"]
    for words in ("Replace each `raise NotImplementedError(...)` with your code", "check cell",
                  "[worked solutions](../solutions/02_demo.ipynb)",
                  "when you are done or stuck after the hints"):  # fmt: skip
        assert words in banner.source
    for maintainers_only in ("generated", "make_exercises", "make exercises", "by hand"):
        assert maintainers_only not in banner.source


def test_maintainer_note_is_in_the_metadata_where_no_learner_looks(generated):
    nb = generated[1]
    note = nb.metadata["attnlab"]
    assert note["generated_from"] == "solutions/02_demo.ipynb"
    for words in ("Generated from solutions/02_demo.ipynb by tools/make_exercises.py",
                  "edit that notebook and run `make exercises`"):  # fmt: skip
        assert words in note["note"]
    for cell in nb.cells:
        assert "make_exercises" not in cell.source and "by hand" not in cell.source


def test_banner_comes_first_without_a_title(tmp_path, run):
    write_solution(tmp_path, [md("No title here.", "a"), code(SOFTMAX_SOLUTION, "b")])
    assert run(tmp_path).returncode == 0
    nb = nbformat.read(tmp_path / "exercises" / "02_demo.ipynb", as_version=4)
    assert [c.id for c in nb.cells] == ["generated-banner", "a", "b"]


def test_solutions_link_is_adapted(generated):
    link = by_id(generated[1])["link"]
    assert "(../solutions/02_demo.ipynb)" in link.source
    assert "These are the solutions" not in link.source


def test_outputs_counts_and_timings_are_cleared_and_ids_kept(generated):
    nb = generated[1]
    solution_ids = {c.id for c in solution_cells()}
    assert {c.id for c in nb.cells} <= solution_ids | {"generated-banner"}
    for cell in nb.cells:
        assert "execution" not in cell.metadata
        if cell.cell_type == "code":
            assert cell.outputs == []
            assert cell.execution_count is None
    assert "widgets" not in nb.metadata
    assert nb.metadata["kernelspec"]["name"] == "python3"
    nbformat.validate(nb)


def test_generation_is_idempotent(generated, tmp_path, run):
    path, _ = generated
    first = path.read_bytes()
    again = run(tmp_path)
    assert again.returncode == 0
    assert "0 changed" in again.stdout
    assert path.read_bytes() == first


# ------------------------------------------------------------------ Run All
# Jupyter's and Colab's Run All stop at the first error and ignore `raises-exception`: a
# solution whose untouched exercise notebook would raise at the top level of a cell is
# refused. (tests/test_exercises_run_all.py runs every real notebook as Run All does.)

OFFSET_SOLUTION = """def offset_matrix(k, d_model):
    ### BEGIN SOLUTION
    return np.eye(d_model)
    ### END SOLUTION"""

SHIFT_DEMO = """pe = al.sinusoidal_encoding(20, 8)
shifted = pe[:-3] @ offset_matrix(3, 8).T
print(np.allclose(shifted, pe[3:]))"""

MODULE_SOLUTION = """class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        ### BEGIN SOLUTION
        self.d = d
        ### END SOLUTION"""


def run_all_problems(root, *sources, tags=None):
    """What the generator says of a notebook under ``root`` whose code cells are ``sources``."""
    cells = [code(source, f"c{i}") for i, source in enumerate(sources)]
    if tags:
        cells[-1].metadata["tags"] = tags
    path = write_solution(root, [md("# Solutions: demo", "title"), *cells], "05_demo.ipynb")
    pair = make_exercises.Pair(path, root / "exercises" / path.name, 5)
    try:
        make_exercises.generate(pair, root)
    except make_exercises.RunAllError as err:
        return str(err)
    return ""


def test_a_stub_outside_every_function_is_refused(tmp_path, run):
    top_level = "### BEGIN SOLUTION\nsix = 6\nanswer = six * 7\n### END SOLUTION\nprint(answer)"
    write_solution(tmp_path, [md("# Title", "title"), code(top_level, "worked")])
    for args in ((), ("--check",)):
        done = run(tmp_path, *args)
        assert done.returncode == 1
        assert "Run All: solutions/02_demo.ipynb, cell 1 (id worked), line 1" in done.stderr
        assert "this stub runs when its cell runs, so Run All stops here" in done.stderr
    assert not (tmp_path / "exercises" / "02_demo.ipynb").exists()  # nothing written


def test_a_call_of_an_exercise_at_the_top_of_a_cell_is_refused(tmp_path):
    # Chapter 5's mistake: a demo cell after the stub called the learner's function.
    checked = "check_offset_matrix(offset_matrix)"
    problems = run_all_problems(tmp_path, OFFSET_SOLUTION, checked, SHIFT_DEMO)
    assert "cell 3 (id c2), line 2: `shifted = pe[:-3] @ offset_matrix(3, 8).T`" in problems
    assert "calls `offset_matrix`, which raises until an exercise is done" in problems
    assert "with skip_if_unfinished():" in problems  # the fix, named
    assert "c1" not in problems  # handing it to its grader is how it is checked


def test_the_raises_exception_tag_is_refused(tmp_path):
    problems = run_all_problems(tmp_path, OFFSET_SOLUTION, "x = 1", tags=["raises-exception"])
    assert "cell 2 (id c1): tagged `raises-exception`" in problems
    assert "ignore the tag" in problems


@pytest.mark.parametrize(
    "demo",
    [
        "with skip_if_unfinished():\n    print(offset_matrix(3, 8))",
        "with torch.no_grad(), grading.skip_if_unfinished():\n    m = offset_matrix(3, 8)",
        "try:\n    m = offset_matrix(3, 8)\nexcept NotImplementedError:\n    print('later')",
        "try:\n    m = offset_matrix(3, 8)\nexcept (ValueError, NotImplementedError):\n    pass",
        "def later():\n    return offset_matrix(3, 8)",  # defined, not called
        "show = lambda: offset_matrix(3, 8)",
        "check_offset_matrix(offset_matrix)",
        "np.eye(8) @ al.offset_matrix(3, 8)",  # the library's, not the learner's
        "answer = ...  # your prediction\ncheck_self_dot(answer)",
    ],
)
def test_code_that_cannot_reach_a_stub_at_run_all_is_accepted(tmp_path, demo):
    assert run_all_problems(tmp_path, OFFSET_SOLUTION, demo) == ""


@pytest.mark.parametrize(
    ("demo", "words"),
    [
        ("def shift():\n    return offset_matrix(3, 8)\n\nshift()", "calls `shift`"),
        ("f = lambda k: offset_matrix(k, 8)\nfor k in range(3):\n    f(k)", "calls `f`"),
        ("explore(lambda k: offset_matrix(k, 8))", "hands a lambda that uses `offset_matrix`"),
        ("def draw(fig, k):\n    offset_matrix(k, 8)\n\nexplore(draw)", "hands `draw`"),
        ("for k in range(3):\n    print(offset_matrix(k, 8))", "calls `offset_matrix`"),
        ("try:\n    m = offset_matrix(3, 8)\nexcept ValueError:\n    pass", "calls `offset"),
        ("with torch.no_grad():\n    m = offset_matrix(3, 8)", "calls `offset_matrix`"),
        ("layer = Layer(8)", "calls `Layer`"),
    ],
)
def test_code_that_reaches_a_stub_at_run_all_is_refused(tmp_path, demo, words):
    problems = run_all_problems(tmp_path, OFFSET_SOLUTION, MODULE_SOLUTION, demo)
    assert words in problems, problems
    assert "Run All" in problems


# ------------------------------------------------------------------ --check


def test_check_passes_when_current(generated, tmp_path, run):
    done = run(tmp_path, "--check")
    assert done.returncode == 0, done.stderr
    assert "up to date (1 notebooks)" in done.stdout


def test_check_ignores_outputs(generated, tmp_path, run):
    path, nb = generated
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="executed\n")]
            cell.execution_count = 1
    nbformat.write(nb, path)
    assert run(tmp_path, "--check").returncode == 0


def test_check_fails_when_the_solution_changed(generated, tmp_path, run):
    cells = solution_cells()
    cells[1] = md("Some better prose.", "prose")
    write_solution(tmp_path, cells)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "exercises/02_demo.ipynb is stale or was edited by hand" in done.stderr
    assert "cell 2 (id prose): source differs" in done.stderr
    assert "make exercises" in done.stderr


def test_check_fails_when_the_exercise_was_edited_by_hand(generated, tmp_path, run):
    path, nb = generated
    by_id(nb)["ex1-code"].source += "\n    return 0"
    nbformat.write(nb, path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "exercises/02_demo.ipynb" in done.stderr
    assert "(id ex1-code): source differs at line 4" in done.stderr


def test_check_fails_when_tags_or_cells_change(generated, tmp_path, run):
    path, nb = generated
    nb.cells.append(nbformat.v4.new_code_cell("extra = 1"))
    nbformat.write(nb, path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "cells, expected" in done.stderr

    write_solution(tmp_path)
    assert run(tmp_path).returncode == 0
    nb = nbformat.read(path, as_version=4)
    by_id(nb)["ex1-check"].metadata["tags"] = ["hide-input"]
    nbformat.write(nb, path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "(id ex1-check): tags differs" in done.stderr


def test_check_fails_when_the_maintainer_note_is_removed(generated, tmp_path, run):
    path, nb = generated
    del nb.metadata["attnlab"]
    nbformat.write(nb, path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "(id title): source differs" not in done.stderr  # the renamed title is expected
    assert "exercises/02_demo.ipynb is stale or was edited by hand: metadata" in done.stderr


def test_check_fails_when_the_banner_is_removed(generated, tmp_path, run):
    path, nb = generated
    nb.cells = [c for c in nb.cells if c.id != "generated-banner"]
    nbformat.write(nb, path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "exercises/02_demo.ipynb is stale or was edited by hand: cell 1" in done.stderr


def test_check_fails_when_an_exercise_is_missing(tmp_path, run):
    write_solution(tmp_path)
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "exercises/02_demo.ipynb is missing" in done.stderr


def test_check_and_write_fail_on_an_exercise_without_solution(generated, tmp_path, run):
    (tmp_path / "exercises" / "03_orphan.ipynb").write_bytes(generated[0].read_bytes())
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "exercises/03_orphan.ipynb has no solution notebook" in done.stderr
    assert run(tmp_path).returncode == 1


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f():\n    ### BEGIN SOLUTION\n    return 1", "line 2: `### BEGIN SOLUTION` is never closed"),
        ("def f():\n    return 1\n    ### END SOLUTION", "line 3: `### END SOLUTION` without"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "line 2: `### BEGIN SOLUTION` inside the answer"),
        ("x = 1  ### BEGIN SOLUTION\n### END SOLUTION", "must be alone on its line"),
    ],
)  # fmt: skip
def test_unbalanced_code_markers_name_the_notebook_and_cell(tmp_path, source, message, run):
    write_solution(tmp_path, [md("# Title", "title"), code(source, "broken")])
    for args in ((), ("--check",)):
        done = run(tmp_path, *args)
        assert done.returncode == 1
        assert "solutions/02_demo.ipynb, cell 1 (id broken)" in done.stderr
        assert message in done.stderr
    assert not (tmp_path / "exercises" / "02_demo.ipynb").exists()  # nothing written


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (["<!-- BEGIN SOLUTION -->\nanswer"], "`<!-- BEGIN SOLUTION -->` is never closed"),
        (["answer\n<!-- END SOLUTION -->"], "cell 0 (id md0): `<!-- END SOLUTION -->` without"),
        (["<!-- BEGIN SOLUTION -->", "<!-- BEGIN SOLUTION -->"], "cell 1 (id md1): `<!-- BEGIN SOLUTION -->` nested"),
    ],
)  # fmt: skip
def test_unbalanced_markdown_markers_are_reported(tmp_path, sources, message, run):
    write_solution(tmp_path, [md(s, f"md{i}") for i, s in enumerate(sources)])
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "solutions/02_demo.ipynb" in done.stderr
    assert message in done.stderr


def test_the_repository_exercises_are_current(capsys):
    # What `make test` runs: every exercises/ notebook matches its solution, none is orphaned.
    code = make_exercises.main(["--check"])
    out = capsys.readouterr()
    assert code == 0, out.err
    n = len(make_exercises.pairs(REPO))
    assert f"exercises/ is up to date ({n} notebooks)" in out.out
    assert make_exercises.orphans(REPO) == []
    assert n == len(list((REPO / "solutions").glob("[0-9][0-9]_*.ipynb")))


def test_the_command_line_exits_1_when_stale(generated, tmp_path):
    path, nb = generated
    nb.cells[0].source = "# Edited by hand"
    nbformat.write(nb, path)
    done = run_script("--root", str(tmp_path), "--check")
    assert done.returncode == 1
    assert (
        "exercises/02_demo.ipynb is stale or was edited by hand: cell 0 (id title)" in done.stderr
    )


# ------------------------------------------------------------------ the solutions' code


def test_the_graders_get_the_solutions_code_and_check_fails_when_it_is_stale(tmp_path, run):
    (tmp_path / "lib" / "attnlab" / "grading").mkdir(parents=True)
    cells = solution_cells()
    cells.append(code(TOP_LEVEL_SOLUTION + "\ncheck_answer(answer)", "checked-prediction"))
    write_solution(tmp_path, cells)
    assert run(tmp_path).returncode == 0
    target = tmp_path / make_exercises.SOLUTION_CODE
    chapter = json.loads(target.read_text(encoding="utf-8"))["chapters"]["2"]
    assert chapter["notebook"] == "solutions/02_demo.ipynb"
    assert chapter["imports"] == ["import numpy as np"]
    assert chapter["definitions"]["softmax"] == SOFTMAX_SOLUTION  # markers kept
    assert chapter["definitions"]["Net"] == NESTED_SOLUTION
    assert chapter["answers"] == {"answer": "six = 6\nanswer = six * 7"}
    assert run(tmp_path, "--check").returncode == 0
    target.write_text(target.read_text(encoding="utf-8").replace("x.max", "x.min"))
    done = run(tmp_path, "--check")
    assert done.returncode == 1
    assert "solution_code.json is stale or was edited by hand" in done.stderr


def test_without_a_grading_package_no_solution_code_is_written(generated, tmp_path):
    assert not (tmp_path / make_exercises.SOLUTION_CODE).exists()


def test_every_stub_of_a_class_names_the_exercise_of_its_heading():
    """A class's __init__ and forward are one exercise: both stubs name the heading's number
    (they were counted as two, so forward said "Exercise 9.7" while working on 9.6)."""
    source = (
        "class MyNorm(nn.Module):\n"
        "    def __init__(self, d):\n"
        "        ### BEGIN SOLUTION\n        super().__init__()\n        ### END SOLUTION\n"
        "    def forward(self, x):\n"
        "        ### BEGIN SOLUTION\n        return x\n        ### END SOLUTION\n"
    )
    stub, labels = make_exercises.stub_code(source, 9, 6, "here", "Exercise 9.6")
    assert labels == ["Exercise 9.6", "Exercise 9.6"]
    assert stub.count('raise NotImplementedError("Exercise 9.6")') == 2
    heading = make_exercises.EXERCISE_HEADING.search("## Exercise 9.6: RMSNorm ★★☆ (15 min)")
    assert heading is not None and heading["number"] == "9.6"


def test_the_committed_stubs_name_the_exercise_they_sit_under():
    """Each stub names an exercise its heading names ("## Exercise 9.6", or both of
    "## Exercises 3.5–3.6", where a class's two methods are two exercises)."""
    heading = re.compile(r"^#{1,6}\s+Exercises?\b.*$", re.MULTILINE)
    checked = 0
    for path in sorted((REPO / "exercises").glob("0*.ipynb")):
        named: set[str] = set()
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                for line in heading.findall(cell.source):
                    named = set(re.findall(r"\d+\.\d+", line))
                continue
            for raised in re.findall(r'NotImplementedError\("Exercise ([\d.]+)"\)', cell.source):
                assert raised in named, f"{path.name}: a stub says {raised} under {named}"
                checked += 1
    assert checked >= 30
