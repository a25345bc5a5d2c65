"""Execute notebooks in place, so that the committed files carry their outputs.

Each notebook runs top to bottom in a fresh ``python3`` kernel of the interpreter running
this script, with the notebook's folder as working directory and a time limit per cell. A
cell may raise only if it is tagged ``raises-exception``. The saved file is deterministic:
no execution timings, no widget state, a fixed kernelspec and ``language_info`` (without the
Python version), and widget views get ids derived from their position, so executing an
unchanged notebook twice gives the same bytes. A notebook that fails is not saved.

Usage::

    python tools/execute_notebooks.py DIR_OR_FILE... [--timeout SECONDS]

Directories are searched for ``*.ipynb`` (not recursively). ``make exercises`` and
``make notebooks`` call this.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import nbformat
from ipykernel.kernelspec import get_kernel_dict
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import default

KERNEL_NAME = "python3"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL_NAME}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class ThisInterpreterSpecs(KernelSpecManager):
    """Kernel specs where ``python3`` is always this interpreter (not one found on a path)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name == KERNEL_NAME:
            spec = get_kernel_dict()  # argv starts with sys.executable
            return KernelSpec(
                argv=spec["argv"],
                display_name=spec["display_name"],
                language=spec["language"],
                metadata=spec.get("metadata", {}),
            )
        return super().get_kernel_spec(kernel_name)


class ThisInterpreterKernelManager(AsyncKernelManager):
    """Starts ``python3`` kernels of this interpreter."""

    @default("kernel_spec_manager")
    def _kernel_spec_manager_default(self) -> KernelSpecManager:
        return ThisInterpreterSpecs(data_dir=self.data_dir)

    if "transport_encryption" in AsyncKernelManager.class_trait_names():  # jupyter_client >= 8.10

        @default("transport_encryption")
        def _transport_encryption_default(self) -> str:
            return "auto"  # CurveZMQ keys when the kernel supports them (and no warning)


class NotebookFailed(RuntimeError):
    """A cell raised (without the ``raises-exception`` tag), timed out, or the kernel died."""


def notebooks(targets: list[str]) -> list[Path]:
    """The notebooks named by ``targets`` (files, or folders holding ``*.ipynb``), sorted."""
    found: list[Path] = []
    for target in targets:
        path = Path(target)
        if path.is_dir():
            found += sorted(p for p in path.glob("*.ipynb") if p.is_file())
        elif path.suffix == ".ipynb" and path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{target} is neither a notebook nor a folder")
    return found


def normalise(nb: nbformat.NotebookNode, name: str) -> None:
    """Drop what changes from run to run: timings, widget state, the Python version, ids."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    for index, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        for number, output in enumerate(cell.get("outputs", [])):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and "model_id" in view:
                seed = f"{name}:{cell.get('id', index)}:{number}"
                view["model_id"] = uuid.uuid5(uuid.NAMESPACE_URL, seed).hex


def execute(path: Path, timeout: int) -> nbformat.NotebookNode:
    """Run ``path`` and return the executed notebook (normalised, not saved).

    Raises:
        NotebookFailed: naming the notebook, the cell (index and id) and the error.
    """
    nb = nbformat.read(path, as_version=4)
    current: dict[str, Any] = {"index": None}

    def on_cell_start(cell: Any, cell_index: int) -> None:
        current["index"] = cell_index

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=ThisInterpreterKernelManager,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        allow_errors=False,  # cells tagged raises-exception may still raise (nbclient)
        record_timing=False,
        store_widget_state=False,
        on_cell_start=on_cell_start,
    )
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as err:
        index = current["index"]
        where = f"{path}"
        if index is not None:
            cell = nb.cells[index]
            first = next((line for line in cell.source.split("\n") if line.strip()), "")
            where += f", cell {index} (id {cell.get('id', '?')}, starting {first.strip()!r})"
        kind = {CellTimeoutError: "timed out", DeadKernelError: "killed the kernel"}.get(
            type(err), "raised an error"
        )
        raise NotebookFailed(f"{where} {kind}:\n{ANSI.sub('', str(err)).strip()}") from None
    normalise(nb, path.name)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="+", metavar="DIR_OR_FILE")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per cell (default: 180)")
    args = parser.parse_args(argv)
    try:
        paths = notebooks(args.targets)
    except FileNotFoundError as err:
        print(f"execute_notebooks: {err}", file=sys.stderr)
        return 2
    failures = []
    for path in paths:
        start = time.perf_counter()
        try:
            nb = execute(path, args.timeout)
        except NotebookFailed as err:
            failures.append(path)
            print(f"FAILED {err}", file=sys.stderr)
            continue
        nbformat.write(nb, path)
        print(f"executed {path} ({time.perf_counter() - start:.1f} s)")
    if failures:
        names = ", ".join(str(p) for p in failures)
        print(f"execute_notebooks: {len(failures)} notebook(s) failed: {names}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
