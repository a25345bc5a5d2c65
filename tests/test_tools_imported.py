"""One way to import the repository's own modules outside the package: ``tools.NAME``.

``tools/__init__.py`` says how each user (the tests, the book, a tool) puts the repository's
root on the import path; nothing loads a module by its file path or edits ``sys.path``.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()

LOADING = re.compile(r"spec_from_file_location|\brunpy\b|sys\.path\.(insert|append)")

# A learner's answer written to a temporary file and loaded from it, so that the grader
# can quote its lines: that is a file of the test's own making, not a module of the repository.
LOADS_A_TEMPORARY_FILE = {"tests/grading/test_ch08_corpus.py"}


def _python_files() -> list[Path]:
    skip = {".venv", "_build", ".git", "node_modules"}
    return [
        path
        for path in ROOT.rglob("*.py")
        if not skip & set(path.relative_to(ROOT).parts) and path.resolve() != THIS
    ]


def test_no_module_is_loaded_by_its_path() -> None:
    found = {
        str(path.relative_to(ROOT))
        for path in _python_files()
        if LOADING.search(path.read_text(encoding="utf-8"))
    }
    assert found - LOADS_A_TEMPORARY_FILE == set(), "import it as tools.NAME (tools/__init__.py)"
    assert found == LOADS_A_TEMPORARY_FILE, "the exception is gone: remove it from this test"


def test_the_tests_and_the_book_put_the_root_on_the_import_path() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^pythonpath = \["\."\]$', pyproject, re.MULTILINE)
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"] == {"tools.attnlab_book": "."}
    assert not (ROOT / "_ext").exists(), "the book's extension lives in tools/"


def test_the_tools_import_each_other_by_package() -> None:
    from tools import attnlab_book, execute_notebooks, figure_text

    assert (
        attnlab_book.invalidate_if_library_changed
        is execute_notebooks.invalidate_if_library_changed
    )
    assert figure_text.library_hash is execute_notebooks.library_hash
