"""nbval compares the text outputs that committed notebooks keep (see tools/execute_notebooks.py).

Committed notebooks carry text outputs only: figures, slider frames and widget views are
drawn again when the book is built. A fresh run under ``pytest --nbval`` produces them all,
so before nbval compares a cell, the fresh outputs go through the same rule
(``lean_outputs``) as the committed ones. Every text output is still compared, strictly.
This file sits at the repository root so that it applies to ``chapters/``, ``solutions/``
and ``exercises/`` alike.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_TOOL = Path(__file__).resolve().parent / "tools" / "execute_notebooks.py"


def _lean_outputs():
    spec = importlib.util.spec_from_file_location("attnlab_execute_notebooks", _TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lean_outputs


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: no notebook is compared
        return
    if getattr(IPyNbCell.compare_outputs, "attnlab_lean", False):
        return
    lean_outputs = _lean_outputs()
    compare = IPyNbCell.compare_outputs

    def compare_lean(self, test, ref, skip_compare=None):
        return compare(self, lean_outputs(test), ref, skip_compare)

    compare_lean.attnlab_lean = True
    IPyNbCell.compare_outputs = compare_lean
