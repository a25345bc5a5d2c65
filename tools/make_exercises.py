"""Generate ``exercises/NN_*.ipynb`` from ``solutions/NN_*.ipynb``, the only place exercises are authored.

Rules, applied to every solution notebook:

* In code cells, the lines from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` (nbgrader's
  markers, each alone on its line, any indentation) become one line,
  ``raise NotImplementedError("Exercise N.k")``, at the marker's indentation: N is the
  chapter number from the file name, k counts the answers of the notebook from 1; the
  first code cell with answers after an ``## Exercise N.k`` heading takes that heading's
  number for all its answers (a class's ``__init__`` and ``forward`` are one exercise),
  and counting goes on from it.
* A prediction is an answer outside any block that is one assignment (``answer = 0.5``),
  or that ends by assigning the name a line just above the marker sets to ``...`` or
  ``None`` (a worked computation): its stub is ``answer = ...  # your prediction`` (the
  placeholder line goes), so the check cell below runs and says "not attempted yet"
  instead of the cell stopping on a traceback.
* **Run All reaches the score cell.** Jupyter's and Colab's Run All stop at the first
  error, whatever a cell's tags, so an untouched exercise notebook must raise nowhere.
  A solution is refused (nothing is written, ``--check`` fails) when its exercise
  notebook would raise at Run All, as far as the code shows (:func:`run_all_problems`):

  - a stub that runs when its cell runs (outside every ``def``) and is not a prediction;
  - code that runs when its cell runs and calls an exercise's function or class (one
    whose body is a stub), or a function of the notebook that calls one, or hands one
    to anything but a ``check_*`` grader; unless it is inside
    ``with skip_if_unfinished():`` (``attnlab.grading``, which says the exercise is not
    done yet) or a ``try`` that catches ``NotImplementedError``;
  - a cell tagged ``raises-exception`` (Run All ignores the tag).

  The test suite also runs every generated notebook as Run All does.
* Markdown between ``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->`` is removed, even
  across cells (every cell in between is dropped); a cell left empty is dropped.
* Cells tagged ``solution-only`` are dropped. A markdown cell tagged ``solutions-link`` is
  rewritten to point from the exercise to its solution.
* The title: when the first cell is a markdown cell whose first line is a level-1 heading
  starting with ``# Solutions:``, that prefix becomes ``# Exercises:`` (the rest of the
  cell is kept). Other titles, and headings in later cells, are kept as they are.
* A banner for learners is added after the title cell (first, if the notebook starts with
  none): replace each stub, run the check cell, and a link to the worked solutions for when
  they are done or stuck after the hints; tagged ``generated-banner``. The note for
  contributors (the notebook is generated: edit the solution notebook and run
  ``make exercises``) goes in the notebook's metadata (``attnlab.generated_from`` and
  ``attnlab.note``), where no learner looks: not in a cell, which Jupyter and Colab would
  show.
* Outputs and execution counts are cleared; cell ids are the solution's.
* **The graders read the worked solutions' code** (to generate the mistakes they diagnose,
  :mod:`attnlab.grading.mutants`): the same run writes ``lib/attnlab/grading/solution_code.json``
  (when the repository has that package): for each chapter, the notebooks' imports (not
  the graders'), the source of every function and class its code cells define (markers
  kept, so that the graders know which lines are the answer) and the answer of every
  prediction, by the name of the question its cell checks. ``--check`` fails when it is
  stale.

Usage::

    python tools/make_exercises.py           # (re)write exercises/
    python tools/make_exercises.py --check   # exit 1 if exercises/ is stale or hand-edited

``make exercises`` runs the first and then executes the notebooks; ``make test`` runs the
second. ``--root`` points at another checkout (the tests use it).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

from attnlab import course

ROOT = Path(__file__).resolve().parent.parent
CODE_BEGIN = "### BEGIN SOLUTION"
CODE_END = "### END SOLUTION"
CODE_MARKER = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>### (?:BEGIN|END) SOLUTION)[ \t]*$")
MD_BEGIN = "<!-- BEGIN SOLUTION -->"
MD_END = "<!-- END SOLUTION -->"
SOLUTION_ONLY = "solution-only"
SOLUTIONS_LINK = "solutions-link"
RAISES = "raises-exception"
GUARD = "skip_if_unfinished"
"""``with skip_if_unfinished():`` (attnlab.grading) lets a block use an unfinished exercise."""
GRADER_PREFIX = "check_"
SOLUTION_CODE = Path("lib/attnlab/grading/solution_code.json")
"""The worked solutions' code, for the graders (written with the exercises)."""
BANNER_ID = "generated-banner"
BANNER_TAG = "generated-banner"
SOLUTIONS_TITLE = "# Solutions:"
EXERCISES_TITLE = "# Exercises:"


class SolutionError(ValueError):
    """A solution notebook that cannot give a working exercise notebook."""

    what = "solution"


class MarkerError(SolutionError):
    """Unbalanced or misplaced solution markers in a solution notebook."""

    what = "solution markers"


class RunAllError(SolutionError):
    """An exercise notebook that would stop with an error at Run All, left untouched."""

    what = "Run All"


@dataclass(frozen=True)
class Pair:
    """A solution notebook and the exercise notebook generated from it."""

    solution: Path
    exercise: Path
    chapter: int


def pairs(root: Path) -> list[Pair]:
    """Every ``solutions/NN_*.ipynb`` with its ``exercises/`` counterpart, sorted by name."""
    found = []
    for path in sorted((root / "solutions").glob("*.ipynb")):
        if course.FILE_NAME.match(path.name):  # a chapter's notebook: NN_slug.ipynb
            found.append(Pair(path, root / "exercises" / path.name, course.number(path)))
    return found


# ---------------------------------------------------------------------------- code cells


PREDICTION_STUB = "{name} = ...  # your prediction"
PLACEHOLDER = re.compile(r"^(?P<name>[A-Za-z_]\w*) = (?:\.\.\.|None)\s*(?:#.*)?$")
"""A line that sets a prediction's name to a placeholder, as solutions used to spell out."""


def prediction_name(answer: list[str], placeholder: str | None) -> str | None:
    """The name ``answer`` (the lines between the markers) assigns, if it is a prediction.

    A prediction is unindented code whose last statement assigns one name, and which is
    either that one statement (``answer = 0.5``) or completes the ``placeholder`` name
    the line above the marker set. Anything else (a function body, other code) is not.
    """
    if not answer or answer[0][:1] in (" ", "\t"):
        return None
    try:
        tree = ast.parse("\n".join(answer))
    except SyntaxError:
        return None
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Assign) or len(last.targets) != 1:
        return None
    name = last.targets[0].id if isinstance(last.targets[0], ast.Name) else None
    if len(tree.body) == 1 or (name is not None and name == placeholder):
        return name
    return None


EXERCISE_HEADING = re.compile(r"^#{1,6}\s+Exercise\s+(?P<number>\d+\.\d+)\b", re.MULTILINE)
"""A markdown heading that opens an exercise: ``## Exercise 9.6: RMSNorm ...``."""


def stub_code(
    source: str, chapter: int, first: int, where: str, label: str | None = None
) -> tuple[str, list[str]]:
    """Replace each marked answer in ``source`` with a stub.

    Args:
        source: a code cell's source.
        chapter: N in ``"Exercise N.k"``.
        first: k of the first answer in this cell.
        where: ``"solutions/02_x.ipynb, cell 4 (id ...)"``, for error messages.
        label: the exercise every answer of the cell belongs to (``"Exercise 9.6"``, from
            the heading above the cell): a class's ``__init__`` and ``forward`` are one
            exercise; without it, each answer counts as the next exercise.

    Returns:
        The new source and the stubs' exercise labels (``["Exercise 2.1", ...]``).

    Raises:
        MarkerError: a marker inside a line of code, a nested or unclosed BEGIN, or an END
            without its BEGIN.
    """
    out: list[str] = []
    labels: list[str] = []
    open_at: int | None = None
    answer: list[str] = []
    for number, line in enumerate(source.split("\n"), start=1):
        match = CODE_MARKER.match(line)
        if match is None:
            for marker in (CODE_BEGIN, CODE_END):
                if marker in line:
                    raise MarkerError(
                        f"{where}, line {number}: `{marker}` must be alone on its line, "
                        f"found {line.strip()!r}"
                    )
            if open_at is None:
                out.append(line)
            else:
                answer.append(line)
            continue
        if match["marker"] == CODE_BEGIN:
            if open_at is not None:
                raise MarkerError(
                    f"{where}, line {number}: `{CODE_BEGIN}` inside the answer opened at "
                    f"line {open_at} (missing `{CODE_END}`?)"
                )
            open_at = number
            answer = []
            labels.append(label or f"Exercise {chapter}.{first + len(labels)}")
            out.append(f'{match["indent"]}raise NotImplementedError("{labels[-1]}")')
        else:
            if open_at is None:
                raise MarkerError(f"{where}, line {number}: `{CODE_END}` without `{CODE_BEGIN}`")
            open_at = None
            above = PLACEHOLDER.match(out[-2]) if len(out) > 1 else None
            placeholder = above["name"] if above is not None else None
            indented = out[-1].startswith((" ", "\t"))
            name = None if indented else prediction_name(answer, placeholder)
            if name is not None:
                out[-1] = PREDICTION_STUB.format(name=name)
                if name == placeholder:
                    del out[-2]
    if open_at is not None:
        raise MarkerError(f"{where}, line {open_at}: `{CODE_BEGIN}` is never closed")
    return "\n".join(out), labels


def _parse(source: str) -> ast.Module | None:
    """A code cell as Python (IPython magics and shell escapes blanked), or ``None``."""
    python = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )
    try:
        return ast.parse(python)
    except SyntaxError:
        return None


def _is_stub(node: ast.AST, labels: list[str] | None = None) -> bool:
    """Is ``node`` ``raise NotImplementedError("Exercise N.k")`` (of ``labels``, if given)?"""
    exc = node.exc if isinstance(node, ast.Raise) else None
    return (
        isinstance(exc, ast.Call)
        and isinstance(exc.func, ast.Name)
        and exc.func.id == "NotImplementedError"
        and any(
            isinstance(a, ast.Constant)
            and isinstance(a.value, str)
            and (a.value in labels if labels is not None else STUB.fullmatch(a.value))
            for a in exc.args
        )
    )


STUB = re.compile(r"Exercise \d+\.\d+")
DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
"""Nodes whose body runs when called, not when the cell runs."""


def _executed(node: ast.AST, guarded: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``node`` that runs when the cell runs, with whether it is guarded.

    Bodies of functions and lambdas are skipped (their decorators and default values run).
    A ``try`` whose handlers catch ``NotImplementedError`` and a ``with skip_if_unfinished()``
    guard their bodies.
    """
    for child in ast.iter_child_nodes(node):
        if isinstance(child, DEFERRED):
            at_definition = [*getattr(child, "decorator_list", []), *child.args.defaults]
            at_definition += [d for d in child.args.kw_defaults if d is not None]
            for expr in at_definition:
                yield expr, guarded
                yield from _executed(expr, guarded)
            continue
        yield child, guarded
        if isinstance(child, ast.Try | getattr(ast, "TryStar", ast.Try)) and any(
            _catches_stub(h) for h in child.handlers
        ):
            for stmt in child.body:
                yield stmt, True
                yield from _executed(stmt, True)
            for part in (*child.handlers, *child.orelse, *child.finalbody):
                yield part, guarded
                yield from _executed(part, guarded)
        elif isinstance(child, ast.With) and any(_is_guard(i.context_expr) for i in child.items):
            for item in child.items:
                yield from _executed(item, guarded)
            for stmt in child.body:
                yield stmt, True
                yield from _executed(stmt, True)
        else:
            yield from _executed(child, guarded)


def _catches_stub(handler: ast.ExceptHandler) -> bool:
    """Does ``except ...:`` catch a stub's ``NotImplementedError``?"""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {k.id if isinstance(k, ast.Name) else getattr(k, "attr", None) for k in kinds}
    return handler.type is None or bool(
        names & {"NotImplementedError", "RuntimeError", "Exception", "BaseException"}
    )


def _is_guard(expr: ast.expr) -> bool:
    """Is ``expr`` a call of ``skip_if_unfinished`` (bare or as an attribute)?"""
    func = expr.func if isinstance(expr, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == GUARD) or (
        isinstance(func, ast.Attribute) and func.attr == GUARD
    )


def runs_when_executed(source: str, labels: list[str]) -> bool:
    """Does a stub of ``labels`` run when the cell runs (i.e. is it outside every ``def``)?"""
    tree = _parse(source)
    if tree is None:  # fall back on indentation: an unindented stub runs
        return any(
            f'raise NotImplementedError("{label}")' in source.split("\n") for label in labels
        )
    return any(_is_stub(node, labels) for node, _ in _executed(tree))


def _loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _unfinished_names(trees: list[ast.Module]) -> set[str]:
    """Names that raise a stub's error when called, while the notebook is untouched.

    An exercise's function or class (a stub in its body), and, in turn, each function,
    class or lambda of the notebook that uses one of those names in its body.
    """
    uses: dict[str, set[str]] = {}
    unfinished: set[str] = set()
    for tree in trees:
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if any(_is_stub(n) for n in ast.walk(stmt)):
                    unfinished.add(stmt.name)
                uses.setdefault(stmt.name, set()).update(_loaded_names(stmt))
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                lambdas = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Lambda)]
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for name in _loaded_names(target) | _stored_names(target):
                        for fn in lambdas:
                            uses.setdefault(name, set()).update(_loaded_names(fn.body))
    grew = True
    while grew:
        grew = False
        for name, used in uses.items():
            if name not in unfinished and used & unfinished:
                unfinished.add(name)
                grew = True
    return unfinished


def _stored_names(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def run_all_problems(cells: list[tuple[str, str, list[str]]]) -> list[str]:
    """Why the exercise notebook made of ``cells`` would stop at Run All, if the code shows it.

    Args:
        cells: ``(where, source, tags)`` of every code cell of the generated notebook, in
            order; ``where`` names the solution cell for the messages.

    Returns:
        One message per problem (empty: Run All reaches the end, as far as can be seen
        without running it): a stub that runs with its cell, a call of an unfinished
        exercise that runs with its cell, or a ``raises-exception`` tag.
    """
    trees = [_parse(source) for _, source, _ in cells]
    unfinished = _unfinished_names([t for t in trees if t is not None])
    fix = (
        f"put the lines that use it under `with {GUARD}():` (from attnlab.grading), which "
        "says the exercise is not done yet instead of stopping"
    )
    problems = []
    for (where, source, tags), tree in zip(cells, trees, strict=True):
        if RAISES in tags:
            problems.append(
                f"{where}: tagged `{RAISES}`, but Jupyter's and Colab's Run All ignore the tag "
                "and stop at the first error: make the cell run without one"
            )
        if tree is None:
            continue
        lines = source.split("\n")
        for node, guarded in _executed(tree):
            number = getattr(node, "lineno", 1)
            line = f"line {number}: `{lines[number - 1].strip()}`"
            if isinstance(node, ast.Raise) and _is_stub(node) and not guarded:
                problems.append(
                    f"{where}, {line}: this stub runs when its cell runs, so Run All stops "
                    "here; put the answer inside a function, or make it a prediction (one "
                    "assignment, or a worked answer under a placeholder `answer = ...` line)"
                )
            if not isinstance(node, ast.Call) or guarded:
                continue
            callee = _callee(node)
            if isinstance(node.func, ast.Name) and callee in unfinished:
                problems.append(
                    f"{where}, {line}: calls `{callee}`, which raises until an exercise is "
                    f"done, so Run All stops here; {fix}"
                )
            elif not (callee or "").startswith(GRADER_PREFIX):
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    if isinstance(arg, ast.Name) and arg.id in unfinished:
                        what = f"`{arg.id}`"
                    elif isinstance(arg, ast.Lambda) and _loaded_names(arg) & unfinished:
                        what = f"a lambda that uses `{min(_loaded_names(arg) & unfinished)}`"
                    else:
                        continue
                    problems.append(
                        f"{where}, {line}: hands {what}, which raises until an exercise is "
                        f"done, to `{callee}`, so Run All may stop here; {fix}"
                    )
    return problems


# ---------------------------------------------------------------------------- markdown


def strip_markdown(source: str, inside: bool, where: str) -> tuple[str, bool]:
    """Remove the text between markdown solution markers.

    Args:
        source: a markdown cell's source.
        inside: whether a region opened in an earlier cell is still open.
        where: for error messages.

    Returns:
        The kept text and whether a region is still open at the end of the cell.
    """
    kept: list[str] = []
    rest = source
    while True:
        marker = MD_END if inside else MD_BEGIN
        wrong = MD_BEGIN if inside else MD_END
        at, wrong_at = rest.find(marker), rest.find(wrong)
        if wrong_at != -1 and (at == -1 or wrong_at < at):
            problem = "nested in an open one" if inside else "without a BEGIN before it"
            raise MarkerError(f"{where}: `{wrong}` {problem}")
        if at == -1:
            if not inside:
                kept.append(rest)
            return "".join(kept), inside
        if not inside:
            kept.append(rest[:at])
        rest = rest[at + len(marker) :]
        inside = not inside


# ---------------------------------------------------------------------------- notebooks


def cell_id(cell: nbformat.NotebookNode, stem: str, index: int) -> str:
    """The solution cell's id, or one derived from the notebook name and position."""
    existing = cell.get("id")
    if existing:
        return existing
    return hashlib.sha1(f"{stem}:{index}".encode()).hexdigest()[:8]


def banner(pair: Pair) -> nbformat.NotebookNode:
    """The learners' banner: what to do, and where the worked solutions are."""
    text = (
        f"> **Exercises for chapter {pair.chapter}.** Replace each "
        "`raise NotImplementedError(...)` with your code, run the cell, then run the check "
        "cell below it. For a prediction, replace the `...` of `answer = ...` with your "
        "answer and run the cell.\n"
        ">\n"
        f"> The [worked solutions](../solutions/{pair.solution.name}) are there for when you "
        "are done or stuck after the hints."
    )
    cell = nbformat.v4.new_markdown_cell(text, id=BANNER_ID)
    cell.metadata["tags"] = [BANNER_TAG]
    return cell


def maintainer_note(pair: Pair, root: Path) -> dict[str, str]:
    """The contributors' note, kept in the notebook's metadata (no learner sees it)."""
    source = pair.solution.relative_to(root).as_posix()
    return {
        "generated_from": source,
        "note": (
            f"Generated from {source} by tools/make_exercises.py; do not edit by hand: "
            "edit that notebook and run `make exercises`."
        ),
    }


def exercises_title(source: str) -> str:
    """``# Solutions: x`` -> ``# Exercises: x`` (first line only); other sources unchanged."""
    head, newline, rest = source.lstrip().partition("\n")
    if not head.startswith(SOLUTIONS_TITLE):
        return source
    return EXERCISES_TITLE + head[len(SOLUTIONS_TITLE) :] + newline + rest


def solutions_link(pair: Pair) -> str:
    return (
        "Stuck after the hints? The worked answers are in "
        f"[the solution notebook](../solutions/{pair.solution.name})."
    )


def generate(pair: Pair, root: Path) -> nbformat.NotebookNode:
    """The exercise notebook for ``pair`` (not written).

    Raises:
        MarkerError: unbalanced or misplaced markers, naming the notebook and cell.
        RunAllError: the exercise notebook would stop at Run All (:func:`run_all_problems`).
    """
    solution = nbformat.read(pair.solution, as_version=4)
    rel = pair.solution.relative_to(root).as_posix()
    cells: list[nbformat.NotebookNode] = []
    inside_markdown = False
    answers = 0
    exercise_label: str | None = None  # a "## Exercise N.k" heading no answer has used
    code_cells: list[tuple[str, str, list[str]]] = []
    for index, original in enumerate(solution.cells):
        cid = cell_id(original, pair.solution.stem, index)
        where = f"{rel}, cell {index} (id {cid})"
        cell = copy.deepcopy(original)
        cell["id"] = cid
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            heading = EXERCISE_HEADING.search(cell.source)
            if heading is not None:
                exercise_label = f"Exercise {heading['number']}"
            text, inside_markdown = strip_markdown(cell.source, inside_markdown, where)
            if SOLUTION_ONLY in tags or not text.strip():
                continue
            cell.source = solutions_link(pair) if SOLUTIONS_LINK in tags else text.strip("\n")
        elif inside_markdown or SOLUTION_ONLY in tags:
            continue
        elif cell.cell_type == "code":
            cell.source, labels = stub_code(
                cell.source, pair.chapter, answers + 1, where, exercise_label
            )
            if labels and exercise_label is not None:  # the heading's exercise, done
                answers = int(exercise_label.rsplit(".", 1)[1])
                exercise_label = None
            else:
                answers += len(labels)
            code_cells.append((where, cell.source, tags))
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
        if tags:
            cell.metadata["tags"] = tags
        cells.append(cell)
    if inside_markdown:
        raise MarkerError(f"{rel}: `{MD_BEGIN}` is never closed")
    problems = run_all_problems(code_cells)
    if problems:
        raise RunAllError("\n  ".join(problems))

    starts_with_title = (
        cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ")
    )
    if starts_with_title:
        cells[0].source = exercises_title(cells[0].source)
    at = 1 if starts_with_title else 0
    cells[at:at] = [banner(pair)]
    ids = [c["id"] for c in cells]
    if len(set(ids)) != len(ids):
        raise MarkerError(
            f"{rel}: duplicate cell ids {sorted({i for i in ids if ids.count(i) > 1})}"
        )

    exercise = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(solution.metadata))
    exercise.metadata.pop("widgets", None)
    exercise.metadata["attnlab"] = maintainer_note(pair, root)
    exercise.nbformat_minor = max(solution.nbformat_minor, 5)
    nbformat.validate(exercise)
    return exercise


# ------------------------------------------------------------------ the solutions' code


def _checked_name(tree: ast.Module) -> str | None:
    """``x`` for a cell that calls ``check_x(...)``, else ``None``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = _callee(node)
            if callee and callee.startswith(GRADER_PREFIX):
                return callee[len(GRADER_PREFIX) :]
    return None


def _answer_lines(source: str) -> str:
    """The lines between the markers of a cell (the first answer), markers left out."""
    lines, inside = [], False
    for line in source.split("\n"):
        match = CODE_MARKER.match(line)
        if match:
            if match["marker"] == CODE_END:
                break
            inside = True
            continue
        if inside:
            lines.append(line)
    return "\n".join(lines)


def chapter_code(path: Path, root: Path) -> dict[str, object]:
    """One solution notebook's code, as the graders read it (see the module's docstring)."""
    notebook = nbformat.read(path, as_version=4)
    imports: list[str] = []
    definitions: dict[str, str] = {}
    answers: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code" or "remove-cell" in cell.metadata.get("tags", []):
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        python = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.split("\n")
        )
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                if module and module.startswith("attnlab.grading"):
                    continue
                line = ast.get_source_segment(python, node)
                if line and line not in imports:
                    imports.append(line)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                lines = python.split("\n")
                end = node.end_lineno or node.lineno
                while end < len(lines) and lines[end].startswith((" ", "\t")):
                    end += 1  # comments after the last statement: an END marker
                first = node.lineno - len(node.decorator_list)
                definitions[node.name] = "\n".join(lines[first - 1 : end]).rstrip()
        top_level_answer = any(
            CODE_MARKER.match(line) and not line.startswith((" ", "\t"))
            for line in cell.source.split("\n")
        )
        checked = _checked_name(tree)
        if top_level_answer and checked:
            answers[checked] = _answer_lines(cell.source)
    return {
        "notebook": path.relative_to(root).as_posix(),
        "imports": imports,
        "definitions": definitions,
        "answers": answers,
    }


def solution_code(root: Path) -> str | None:
    """The text of ``SOLUTION_CODE`` for ``root``, or ``None`` where it has no graders."""
    if not (root / SOLUTION_CODE).parent.is_dir():
        return None
    chapters = {str(pair.chapter): chapter_code(pair.solution, root) for pair in pairs(root)}
    document = {
        "note": "Generated from solutions/ by tools/make_exercises.py; do not edit by hand: "
        "edit the solution notebook and run `make exercises`.",
        "chapters": chapters,
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def serialise(nb: nbformat.NotebookNode) -> str:
    """The bytes ``nbformat.write`` would produce (so a rewrite with no change is a no-op)."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def comparable(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    """What ``--check`` compares: cell types, sources and tags (not outputs or metadata)."""
    return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]


def difference(expected: nbformat.NotebookNode, found: nbformat.NotebookNode) -> str | None:
    """The first difference between two notebooks' cells, in words, or ``None``."""
    note = expected.metadata.get("attnlab")
    if found.metadata.get("attnlab") != note:
        return f"metadata `attnlab` differs: expected {note!r}"
    want, got = comparable(expected), comparable(found)
    for index, (w, g) in enumerate(zip(want, got, strict=False)):
        if w == g:
            continue
        cid = found.cells[index].get("id", "?")
        what = ("cell type", "source", "tags")[[w[i] == g[i] for i in range(3)].index(False)]
        detail = ""
        if what == "source":
            w_lines, g_lines = w[1].split("\n"), g[1].split("\n")
            line = next(
                (i for i, (a, b) in enumerate(zip(w_lines, g_lines, strict=False)) if a != b),
                min(len(w_lines), len(g_lines)),
            )
            expected_line = w_lines[line] if line < len(w_lines) else "(no line)"
            found_line = g_lines[line] if line < len(g_lines) else "(no line)"
            detail = f" at line {line + 1}: expected {expected_line!r}, found {found_line!r}"
        elif what == "cell type":
            detail = f": expected {w[0]}, found {g[0]}"
        else:
            detail = f": expected {w[2]}, found {g[2]}"
        return f"cell {index} (id {cid}): {what} differs{detail}"
    if len(want) != len(got):
        return f"{len(got)} cells, expected {len(want)}"
    return None


def orphans(root: Path) -> list[Path]:
    """Exercise notebooks without a solution notebook to generate them from."""
    solutions = {p.solution.name for p in pairs(root)}
    return [p for p in sorted((root / "exercises").glob("*.ipynb")) if p.name not in solutions]


def check(root: Path) -> list[str]:
    """Every problem with ``exercises/`` under ``root``, as messages (empty: up to date)."""
    problems = []
    for pair in pairs(root):
        rel = pair.exercise.relative_to(root).as_posix()
        try:
            expected = generate(pair, root)
        except SolutionError as err:
            problems.append(f"{err.what}: {err}")
            continue
        if not pair.exercise.exists():
            problems.append(f"{rel} is missing (generated from {pair.solution.name})")
            continue
        diff = difference(expected, nbformat.read(pair.exercise, as_version=4))
        if diff:
            problems.append(f"{rel} is stale or was edited by hand: {diff}")
    for path in orphans(root):
        rel = path.relative_to(root).as_posix()
        problems.append(f"{rel} has no solution notebook (solutions/{path.name}) to generate it")
    try:
        code = solution_code(root)
    except SolutionError as err:  # pragma: no cover - generate() reports it first
        problems.append(f"{err.what}: {err}")
        code = None
    target = root / SOLUTION_CODE
    if code is not None and (not target.exists() or target.read_text(encoding="utf-8") != code):
        problems.append(f"{SOLUTION_CODE.as_posix()} is stale or was edited by hand")
    return problems


def write(root: Path) -> tuple[list[Path], list[str]]:
    """Regenerate every exercise notebook; return the files written and the problems."""
    generated, problems = [], []
    for pair in pairs(root):
        try:
            generated.append((pair, serialise(generate(pair, root))))
        except SolutionError as err:
            problems.append(f"{err.what}: {err}")
    if problems:  # write nothing when a solution is broken
        return [], problems
    written = []
    for pair, text in generated:
        if not pair.exercise.exists() or pair.exercise.read_text(encoding="utf-8") != text:
            pair.exercise.parent.mkdir(parents=True, exist_ok=True)
            pair.exercise.write_text(text, encoding="utf-8")
            written.append(pair.exercise)
    code, target = solution_code(root), root / SOLUTION_CODE
    if code is not None and (not target.exists() or target.read_text(encoding="utf-8") != code):
        target.write_text(code, encoding="utf-8")
        written.append(target)
    for path in orphans(root):
        rel = path.relative_to(root).as_posix()
        problems.append(
            f"{rel} has no solution notebook: delete it or restore solutions/{path.name}"
        )
    return written, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if exercises/ is stale")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        problems = check(root)
        for problem in problems:
            print(f"make_exercises --check: {problem}", file=sys.stderr)
        if problems:
            print("Regenerate with `make exercises`.", file=sys.stderr)
            return 1
        print(f"exercises/ is up to date ({len(pairs(root))} notebooks).")
        return 0
    written, problems = write(root)
    for path in written:
        print(f"wrote {path.relative_to(root).as_posix()}")
    for problem in problems:
        print(f"make_exercises: {problem}", file=sys.stderr)
    if not problems:
        print(f"{len(pairs(root))} exercise notebooks, {len(written)} changed.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
