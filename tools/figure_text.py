"""The text of every figure a notebook draws, recorded while nbval runs it.

A figure's titles, axis labels, tick labels, legends and annotations exist only while the
notebook runs: the committed notebooks keep no images, and an image keeps no text. So when
``pytest --nbval`` starts a notebook's kernel, ``conftest.py`` runs :data:`RECORDER` in it
first (silently: no output, no execution count), and from then on every figure the kernel
draws, static or a slider frame, appends its texts to a record, as JSON lines. The first
line, written before the kernel starts, names the notebook and :func:`digest`, the hash of
its code cells and of ``lib/attnlab``, so that a record made from other code is recognised
as stale; the last, ``{"complete": true}``, is written when nbval is done with the
notebook. Records are kept per Python environment and per pytest process, so that two
nbval runs at once (``make test`` runs two, and the version matrix more) never write into
one file; :func:`read_record` returns the newest complete one. ``tests/test_figure_text.py``
reads them.

Run ``python -m tools.figure_text [NOTEBOOK ...]`` to print what was recorded (as a module:
it imports ``tools.execute_notebooks``, see ``tools/__init__.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat

from tools.execute_notebooks import library_hash

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "_build" / "figure-text"

# Runs in the notebook's kernel: wraps Figure.draw (every static figure and every slider
# frame is drawn through it) to append the visible texts of the figure just drawn.
RECORDER = """
def _attnlab_record_figure_text(path):
    import json

    import matplotlib.figure
    import matplotlib.text

    draw = matplotlib.figure.Figure.draw

    def draw_and_record(self, renderer):
        result = draw(self, renderer)
        texts = [
            t.get_text()
            for t in self.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip()
        ]
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(json.dumps(t) + "\\n" for t in dict.fromkeys(texts))
        return result

    matplotlib.figure.Figure.draw = draw_and_record


_attnlab_record_figure_text({path!r})
del _attnlab_record_figure_text
"""


def _records(notebook: Path) -> Path:
    """The folder of ``notebook``'s records, in this Python environment's own folder."""
    env = hashlib.sha256(sys.prefix.encode()).hexdigest()[:10]
    relative = notebook.resolve().relative_to(ROOT)
    return RECORDS / env / str(relative.with_suffix("")).replace("/", "__")


def record_path(notebook: Path, pid: int | None = None) -> Path:
    """The record of ``notebook`` written by process ``pid`` (default: this one)."""
    return _records(notebook) / f"{os.getpid() if pid is None else pid}.jsonl"


def digest(notebook: Path) -> str:
    """A hash of ``notebook``'s code cells and of ``lib/attnlab``: what draws its figures."""
    nb = nbformat.read(notebook, as_version=4)
    code = "\0".join(c.source for c in nb.cells if c.cell_type == "code")
    h = hashlib.sha256(code.encode())
    h.update(library_hash(ROOT / "lib" / "attnlab").encode())
    return h.hexdigest()


def _lines(path: Path) -> list[Any]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):  # removed meanwhile, or a line half written
        return []


def _complete(lines: list[Any]) -> bool:
    return len(lines) >= 2 and lines[-1] == {"complete": True}


def start_record(notebook: Path) -> str:
    """Begin this process's record of ``notebook`` (dropping complete older ones, which it
    replaces; a record still being written by another run is left alone). Returns the code
    that :data:`RECORDER` runs in the notebook's kernel to fill it."""
    path = record_path(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob("*.jsonl"):
        if old != path and _complete(_lines(old)):
            old.unlink(missing_ok=True)
    header = {"notebook": str(notebook.resolve().relative_to(ROOT)), "digest": digest(notebook)}
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return RECORDER.format(path=str(path))


def finish_record(notebook: Path) -> None:
    """Mark this process's record of ``notebook`` complete: nbval ran every cell."""
    path = record_path(notebook)
    if path.is_file():
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"complete": True}) + "\n")


def read_record(notebook: Path) -> tuple[str, list[str]] | None:
    """``(digest, texts)`` of the newest complete record of ``notebook``, each text once;
    ``None`` if there is none."""
    folder = _records(notebook)
    paths = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in paths:
        lines = _lines(path)
        if _complete(lines):
            return lines[0]["digest"], list(dict.fromkeys(lines[1:-1]))
    return None


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(
        p for d in ("chapters", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb")
    )
    for path in paths:
        record = read_record(path)
        if record is None:
            print(f"{path}: no record (run nbval on it)")
            continue
        fresh = "" if record[0] == digest(path) else " (stale: the code changed since)"
        print(f"{path}: {len(record[1])} texts{fresh}")
        for text in record[1]:
            print(f"    {text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
