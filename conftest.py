"""nbval compares the text outputs that committed notebooks keep (see tools/execute_notebooks.py).

Committed notebooks carry text outputs only: figures, slider frames and widget views are
drawn again when the book is built. A fresh run under ``pytest --nbval`` produces them all,
so before nbval compares a cell, the fresh outputs go through the same rule
(``lean_outputs``) as the committed ones. Every text output is still compared, strictly.
This file sits at the repository root so that it applies to ``chapters/``, ``solutions/``
and ``exercises/`` alike.
"""

from __future__ import annotations

import time
from pathlib import Path


def _execute_notebooks():
    """``tools.execute_notebooks``, imported when first needed (nbval may be absent)."""
    from tools import execute_notebooks

    return execute_notebooks


# --------------------------------------------------------------------------------------------
# The text of every figure: while nbval runs a notebook, its kernel records the texts of
# every figure it draws (tools/figure_text.py), for tests/test_figure_text.py to read.


def _figure_text_hooks() -> None:
    """Wrap nbval's kernel start so that each notebook's kernel records its figures' text."""
    from nbval.plugin import IPyNbFile

    if getattr(IPyNbFile.setup, "attnlab_figure_text", False):
        return
    from tools import figure_text

    setup, teardown = IPyNbFile.setup, IPyNbFile.teardown

    def setup_and_record(self):
        setup(self)
        recorder = figure_text.start_record(Path(str(self.fspath)))
        # silent: no output and no execution count, so the notebook runs exactly as before
        msg_id = self.kernel.kc.execute(recorder, silent=True, stop_on_error=False)
        self.kernel.await_idle(msg_id, 60)

    def teardown_and_finish(self):
        teardown(self)  # the kernel has run every cell and stopped: nothing more is drawn
        figure_text.finish_record(Path(str(self.fspath)))

    setup_and_record.attnlab_figure_text = True
    IPyNbFile.setup = setup_and_record
    IPyNbFile.teardown = teardown_and_finish


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: no notebook is compared
        return
    if config.getoption("--nbval-fill-cache", None):
        _fill_cache_hooks(config.getoption("--nbval-fill-cache"))
    if config.getoption("--nbval", False) or config.getoption("--nbval-lax", False):
        _figure_text_hooks()
    if getattr(IPyNbCell.compare_outputs, "attnlab_lean", False):
        return
    lean_outputs = _execute_notebooks().lean_outputs
    compare = IPyNbCell.compare_outputs

    def compare_lean(self, test, ref, skip_compare=None):
        return compare(self, lean_outputs(test), ref, skip_compare)

    compare_lean.attnlab_lean = True
    IPyNbCell.compare_outputs = compare_lean


# --------------------------------------------------------------------------------------------
# One execution per notebook: nbval's run fills the book's execution cache.
#
# `make test` validates every notebook with nbval (a fresh kernel runs it; every text output
# is compared with the committed one) and builds the book, which must show figures drawn by
# the current code. With ``--nbval-fill-cache DIR`` each notebook that nbval ran, every cell
# without an error, is also stored in the book's jupyter-cache at DIR, with every output
# (figures and slider frames included), exactly as the book's own executor (nbclient) would
# have recorded it: the kernel messages nbval read are replayed through nbclient's own output
# handling. The book build that follows finds each notebook in the cache (keyed by the code
# cells; emptied when lib/attnlab changes, see tools/execute_notebooks.py) and executes
# nothing; a notebook nbval did not run through (a failure, a skipped cell) is not stored,
# so the book executes it itself.


def pytest_addoption(parser):
    parser.addoption(
        "--nbval-fill-cache",
        metavar="DIR",
        default=None,
        help="store each notebook nbval ran without error, with all its outputs, in the "
        "book's execution cache DIR (jupyter-cache), so the book build executes nothing",
    )


def _fill_cache_hooks(cache_dir: str) -> None:
    """Wrap nbval so that each notebook it runs through is stored in ``cache_dir``."""
    from nbval.kernel import RunningKernel
    from nbval.plugin import IPyNbCell, IPyNbFile

    if getattr(IPyNbFile, "attnlab_fill_cache", None) is not None:
        IPyNbFile.attnlab_fill_cache = cache_dir
        return
    IPyNbFile.attnlab_fill_cache = cache_dir
    get_kernel_message = IPyNbFile.get_kernel_message
    runtest = IPyNbCell.runtest
    teardown = IPyNbFile.teardown

    def execute_cell_input_recorded(self, cell_input, allow_stdin=None):
        # As Jupyter and nbclient run a cell: with history (nbval's own call has
        # store_history=False), so execution counts and the In[n] of tracebacks are the
        # book's. Outputs are compared as before (nbval ignores both).
        self.attnlab_msg_id = self.kc.execute(
            cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False
        )
        return self.attnlab_msg_id

    def get_kernel_message_recorded(self, timeout=None, stream="iopub"):
        msg = get_kernel_message(self, timeout=timeout, stream=stream)
        if stream == "iopub" and getattr(self, "attnlab_messages", None) is not None:
            self.attnlab_messages.append(msg)
        return msg

    def runtest_recorded(self):
        nbfile = self.parent
        if not hasattr(nbfile, "attnlab_cells"):
            nbfile.attnlab_cells, nbfile.attnlab_complete = {}, True
            nbfile.attnlab_seconds = 0.0
        nbfile.attnlab_messages = []
        start = time.perf_counter()
        try:
            runtest(self)
        except BaseException:  # a failure, an error or a skip: the book executes it itself
            nbfile.attnlab_complete = False
            raise
        finally:
            messages, nbfile.attnlab_messages = nbfile.attnlab_messages, None
            nbfile.attnlab_seconds += time.perf_counter() - start
        msg_id = getattr(nbfile.kernel, "attnlab_msg_id", None)
        mine = [m for m in messages if m["parent_header"].get("msg_id") == msg_id]
        if not mine or mine[-1]["msg_type"] != "status" or not self.cell.source.strip():
            nbfile.attnlab_complete = False  # not read up to its idle status, or empty
        nbfile.attnlab_cells[self.cell_num] = mine

    def teardown_and_store(self):
        teardown(self)
        cells = getattr(self, "attnlab_cells", None)
        if cells is None or not getattr(self, "attnlab_complete", False):
            return
        path, cache = Path(str(self.fspath)), Path(IPyNbFile.attnlab_fill_cache)
        _store_executed(path, cells, cache, self.attnlab_seconds)

    RunningKernel.execute_cell_input = execute_cell_input_recorded
    IPyNbFile.get_kernel_message = get_kernel_message_recorded
    IPyNbCell.runtest = runtest_recorded
    IPyNbFile.teardown = teardown_and_store


def _store_executed(path: Path, cells: dict, cache_dir: Path, seconds: float) -> None:
    """Replay each code cell's kernel messages through nbclient into ``path``; cache it."""
    import platform
    import warnings

    import nbformat
    from jupyter_cache.base import CacheBundleIn
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    nb = nbformat.read(path, as_version=4)
    code = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    if sorted(cells) != list(range(len(code))):
        return  # nbval did not run every code cell
    try:
        client = NotebookClient(nb, record_timing=False)  # the book's executor's settings
        # What nbclient takes from the kernel's kernel_info reply (the same interpreter).
        nb.metadata["language_info"] = {
            **nb.metadata.get("language_info", {}),
            "version": platform.python_version(),
        }
        for num, index in enumerate(code):
            cell = nb.cells[index]
            cell.outputs = []  # as nbclient starts each cell
            client.clear_before_next_output = False
            for msg in cells[num]:
                try:
                    client.process_message(msg, cell, index)
                except CellExecutionComplete:
                    break
        client.set_widgets_metadata()
    except Exception as err:  # never fail a test run for the cache's sake
        warnings.warn(f"{path}: not cached ({err!r}); the book will execute it", stacklevel=1)
        return
    cache = _execute_notebooks().open_cache(cache_dir)
    cache.cache_notebook_bundle(
        CacheBundleIn(nb, str(path.resolve()), data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )
