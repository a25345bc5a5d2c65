"""Execute notebooks and commit their text outputs only: the course's one executor and cache.

The rule, also in the README ("Notebooks"):

* **One cache.** A notebook is executed at most once per version of its code cells and of
  ``lib/attnlab``: the executed copy, with every figure and slider frame, is stored in the
  book's execution cache (``_build/.jupyter_cache``, jupyter-cache, keyed by the code cells;
  emptied when the library changes: :func:`invalidate_if_library_changed`, the rule this
  script and the book's extension ``tools/attnlab_book.py`` both apply). ``make book`` takes
  every page from there, so after ``make notebooks`` the book executes nothing; a bare
  ``jupyter-book build .`` fills the same cache itself.
* **Lean files.** The committed ``.ipynb`` keeps text outputs only (``text/plain``,
  ``text/markdown``, ``text/latex``, streams and errors): no PNGs, no scrubber HTML, no widget
  views or state. :func:`lean_outputs` is the rule; the nbval comparison in ``make test``
  applies it to the fresh outputs too (``conftest.py``), so every text output is compared.
* **Deterministic.** No execution timings, no widget state, a fixed kernelspec and
  ``language_info`` (without the Python version): executing an unchanged notebook twice
  gives the same bytes.

Each notebook runs top to bottom in a fresh ``python3`` kernel of the interpreter running
this script, with the notebook's folder as working directory and a time limit per cell. A
cell may raise only if it is tagged ``raises-exception``. A notebook that fails is not saved.

Usage::

    python tools/execute_notebooks.py DIR_OR_FILE... [--timeout SECONDS] [--no-cache]

Directories are searched for ``*.ipynb`` (not recursively). ``make exercises`` and
``make notebooks`` call this.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import time
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
TEXT_MIME = ("text/plain", "text/markdown", "text/latex")
"""The only ``data`` a committed display output keeps (see :func:`lean_outputs`)."""
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / ".jupyter_cache"
"""The book's execution cache (``execute.cache`` in ``_config.yml``)."""
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


def normalise(nb: nbformat.NotebookNode) -> None:
    """Drop what changes from run to run: timings, widget state, the Python version."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def lean_outputs(outputs: list[Any]) -> list[Any]:
    """The outputs a committed notebook keeps: text only.

    Streams and errors are kept whole. A display or result keeps its ``TEXT_MIME`` data and
    no metadata; one with no text left (a bare image or widget view) is dropped. Figures
    and slider frames are drawn again when the book is built, so the website loses nothing.
    """
    kept = []
    for output in outputs:
        if output.get("output_type") not in ("display_data", "execute_result"):
            kept.append(output)
            continue
        data = {k: v for k, v in output.get("data", {}).items() if k in TEXT_MIME}
        if data:
            kept.append(nbformat.from_dict({**output, "data": data, "metadata": {}}))
    return kept


def lean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with :func:`lean_outputs` applied to every code cell (in place; returned)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = lean_outputs(cell.outputs)
    return nb


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
    normalise(nb)
    return nb


def library_hash(package_dir: Path) -> str:
    """SHA-256 over the paths and contents of every ``.py`` file under ``package_dir``."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        digest.update(str(path.relative_to(package_dir)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def invalidate_if_library_changed(cache: Path, package_dir: Path) -> bool:
    """Empty the execution cache ``cache`` if ``package_dir`` changed since it was filled.

    The one cache rule of the course, applied here (:func:`open_cache`) and by the book
    (``tools/attnlab_book.py``, before it reads any page): a notebook is re-executed when its code cells change
    (jupyter-cache's key) or when the library does (a stamp next to the cache).

    Returns:
        Whether the library changed (or no stamp existed yet).
    """
    stamp = cache.with_name(cache.name + ".lib-sha256")
    current = library_hash(package_dir)
    if stamp.exists() and stamp.read_text().strip() == current:
        return False
    if cache.exists():
        shutil.rmtree(cache)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(current + "\n")
    return True


def open_cache(path: Path = CACHE) -> Any:
    """The execution cache at ``path``, emptied first if ``lib/attnlab`` changed (the rule)."""
    from jupyter_cache import get_cache

    invalidate_if_library_changed(path, ROOT / "lib" / "attnlab")
    return get_cache(str(path))


def executed(path: Path, timeout: int, cache: Any | None) -> tuple[nbformat.NotebookNode, bool]:
    """The executed notebook (every output) and whether it came from the cache.

    Raises:
        NotebookFailed: see :func:`execute`.
    """
    if cache is not None:
        nb = nbformat.read(path, as_version=4)
        normalise(nb)  # the committed form: what the book reads and hashes
        try:
            _, merged = cache.merge_match_into_notebook(nb)
            normalise(merged)
            return merged, True
        except KeyError:
            pass
    start = time.perf_counter()
    nb = execute(path, timeout)
    if cache is not None:
        from jupyter_cache.base import CacheBundleIn

        bundle = CacheBundleIn(
            nb, str(path.resolve()), data={"execution_seconds": time.perf_counter() - start}
        )
        cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
    return nb, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="+", metavar="DIR_OR_FILE")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per cell (default: 180)")
    parser.add_argument(
        "--cache", type=Path, default=CACHE, help="the execution cache (default: the book's)"
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="execute even when the cache has the notebook"
    )
    args = parser.parse_args(argv)
    try:
        paths = notebooks(args.targets)
    except FileNotFoundError as err:
        print(f"execute_notebooks: {err}", file=sys.stderr)
        return 2
    cache = None if args.no_cache else open_cache(args.cache)
    failures = []
    for path in paths:
        start = time.perf_counter()
        try:
            nb, cached = executed(path, args.timeout, cache)
        except NotebookFailed as err:
            failures.append(path)
            print(f"FAILED {err}", file=sys.stderr)
            continue
        nbformat.write(lean(nb), path)
        how = "from the cache" if cached else f"executed in {time.perf_counter() - start:.1f} s"
        print(f"wrote {path} ({how})")
    if failures:
        names = ", ".join(str(p) for p in failures)
        print(f"execute_notebooks: {len(failures)} notebook(s) failed: {names}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
