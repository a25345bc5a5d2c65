"""The version matrix: the library, the graders and two notebooks in other environments.

`make test` runs everything in `.venv` (one Python, the pinned versions). This script adds
the environments learners and Colab have that `.venv` is not:

* ``py3.10``: the oldest Python the README promises, with the pins of ``constraints.txt``
  (its lines for Python 3.10);
* ``py3.13``: the newest Python the README promises, with the same pins;
* ``lowest``: Python 3.10 with the *lowest* version of every dependency that
  ``pyproject.toml`` allows (``uv pip install --resolution lowest-direct``): numpy 1.24,
  torch 2.5, ipywidgets 7, ... Each lower bound there is one that this environment tested.

Each environment is made by ``uv`` in ``_build/matrix/NAME`` (packages hard-linked from uv's
cache, so a second run installs in seconds), then runs the tests whose outcome depends on
the versions installed (``TESTS`` below: the graders, the parity with PyTorch, similarity,
the widgets in a real kernel, so the live slider is tested on ipywidgets 7 and 8) and nbval
over ``chapters/02_similarity.ipynb`` and ``solutions/02_similarity.ipynb``. It prints one
table: environment, Python, key versions, install time and size, pass counts, test time
(wall and CPU), and a closing line with the totals.

Usage: ``python tools/test_matrix.py [--full] [NAME ...]`` (default: all three; ``--full``:
every test that does not need the built website). Under CI
(``$CI`` set) a missing Python is a failure; locally that environment is skipped.
Exit status: 0 when every environment that ran passed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "_build" / "matrix"
NOTEBOOKS = ("chapters/02_similarity.ipynb", "solutions/02_similarity.ipynb")
NBVAL = (
    "--nbval",
    "--nbval-current-env",
    "--nbval-sanitize-with",
    "tests/nbval_sanitize.cfg",
)
# What each environment runs by default: the tests whose outcome depends on the versions
# installed, in a few minutes (CI's budget): the graders (every exercise's reference and
# planted mistakes, through the library), the parity with PyTorch, similarity, masking and
# input validation (the array-api-compat and dtype paths), the widgets (ipywidgets 7 or 8 in
# a real kernel, pillow, playwright) and the pins; with nbval over chapter 2 and its
# solutions (ipykernel, nbval, matplotlib). `make test` runs the rest once, in .venv;
# `--full` runs it here too (every test that does not need the built website: about 5
# CPU-minutes per environment).
TESTS = (
    "tests/grading",
    "tests/test_similarity.py",
    "tests/test_masking.py",
    "tests/test_validate.py",
    "tests/test_vs_pytorch.py",
    "tests/test_modern.py",  # RMSNorm, GELU against torch's; the SiLU and erf paths of NumPy
    "tests/test_decoding.py",  # sorting, cumsum, searchsorted and the generator across versions
    "tests/test_widgets.py",
    "tests/test_env.py",
)
NEEDS_SITE = (  # the built website, or (test_figure_text.py) what nbval recorded
    "test_site.py",
    "test_site_readers.py",
    "test_site_phone.py",
    "test_book.py",
    "test_book_offline.py",
    "test_figure_text.py",
)
# The generated mistakes (every mutant of every reference, the slowest grader test) parse and
# rewrite the references with `ast`, which changes with Python, not with the libraries: they
# run where Python differs from `.venv`'s in the oldest and newest way (``lowest``, Python
# 3.10; ``py3.13``), not a second time on Python 3.10 with the pins (``py3.10``), which runs
# every other test of ``TESTS`` (the learners' corpora included: they read NumPy's and
# PyTorch's error messages, and only this environment has NumPy 2.2).
MUTANTS = "tests/grading/test_mutants.py"
SELECT = ("-m", "not slow")  # models that train for tens of seconds: `make test` has them
SHOWN = ("numpy", "torch", "matplotlib", "ipywidgets", "ipykernel", "array-api-compat")


@dataclass(frozen=True)
class Env:
    name: str
    python: str  # "3.10"
    lowest: bool = False  # lowest allowed versions instead of the pins
    mutants: bool = True  # runs MUTANTS (see there)


ENVS = (
    Env("py3.10", "3.10", mutants=False),
    Env("py3.13", "3.13"),
    Env("lowest", "3.10", lowest=True),
)


@dataclass
class Row:
    env: Env
    status: str = "skipped"
    python: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    install_s: float = 0.0
    install_cpu: float = 0.0
    size_mb: float = 0.0
    counts: dict[str, str] = field(default_factory=dict)
    test_s: float = 0.0
    test_cpu: float = 0.0


def find_python(version: str) -> str | None:
    """An interpreter for ``version``: ``pythonX.Y`` on the PATH, else a pyenv install."""
    candidates = [shutil.which(f"python{version}")]
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(
        (str(p) for p in Path(pyenv_root).glob(f"versions/{version}.*/bin/python{version}")),
        reverse=True,
    )
    for path in filter(None, candidates):
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue  # e.g. a pyenv shim for a version that is not selected here
        if out == version:
            return path
    return None


def uv() -> str:
    """The ``uv`` of the running environment (the ``dev`` extra installs it)."""
    here = Path(sys.executable).parent / "uv"
    found = str(here) if here.exists() else shutil.which("uv")
    if not found:
        sys.exit("test_matrix: uv is not installed: pip install -c constraints.txt uv")
    return found


def run(cmd: list[str], log: Path, row: Row, what: str, **kw) -> int:
    """Run ``cmd`` with its output appended to ``log``; add its CPU time to ``row``."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, **kw)
        # wait4: this process's CPU time (and its children's), not the other environments'.
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    setattr(row, what, getattr(row, what) + usage.ru_utime + usage.ru_stime)
    return proc.returncode


def size_mb(path: Path) -> float:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total / 1e6


def build(env: Env, row: Row, log: Path) -> bool:
    python = find_python(env.python)
    if python is None:
        row.status = f"no Python {env.python}"
        return False
    venv = MATRIX / env.name
    shutil.rmtree(venv, ignore_errors=True)
    uv_env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "VIRTUAL_ENV": str(venv)}
    start = time.perf_counter()
    make_venv = [uv(), "venv", "--quiet", "--python", python, str(venv)]
    if run(make_venv, log, row, "install_cpu", env=uv_env):
        row.status = "venv failed"
        return False
    # --compile-bytecode: uv leaves the packages uncompiled, and where Python may not write
    # its caches (PYTHONDONTWRITEBYTECODE, as on some CI machines) every process, each
    # kernel that a test or nbval starts included, would compile torch and NumPy again.
    install = [
        uv(),
        "pip",
        "install",
        "--compile-bytecode",
        "--python",
        str(venv / "bin" / "python"),
    ]
    if env.lowest:
        install += ["--resolution", "lowest-direct"]
    else:
        install += ["-c", "constraints.txt"]
    if run([*install, "-e", ".[dev]"], log, row, "install_cpu", env=uv_env):
        row.status = "install failed"
        return False
    row.install_s = time.perf_counter() - start
    row.size_mb = size_mb(venv)
    probe = (
        "import sys, importlib.metadata as m; print('%d.%d.%d' % sys.version_info[:3]); "
        f"print(*(m.version(n) for n in {SHOWN!r}))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    row.python = out[0]
    row.versions = dict(zip(SHOWN, out[1].split(), strict=True))
    return True


def test(env: Env, row: Row, log: Path, full: bool) -> bool:
    python = str(MATRIX / env.name / "bin" / "python")
    tests = ["tests", *(f"--ignore=tests/{name}" for name in NEEDS_SITE)] if full else TESTS
    if not (full or env.mutants):
        tests = [*tests, f"--ignore={MUTANTS}"]
    runs = {
        "tests": [
            python,
            "-m",
            "pytest",
            *tests,
            *SELECT,
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        "nbval": [python, "-m", "pytest", *NOTEBOOKS, *NBVAL, "-q", "-p", "no:cacheprovider"],
    }
    env_vars = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    ok = True
    start = time.perf_counter()
    for what, cmd in runs.items():
        # One torch/NumPy thread for the tests: the environments run side by side (and
        # beside `make test` in CI) on two cores; nbval keeps the notebooks' default.
        threads = {"OMP_NUM_THREADS": "1"} if what == "tests" else {}
        returncode = run(cmd, log, row, "test_cpu", env={**env_vars, **threads})
        tail = log.read_text().rstrip().rsplit("\n", 1)[-1]
        counts = re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", tail)
        row.counts[what] = ", ".join(f"{n} {word}" for n, word in counts) or "no result"
        ok &= returncode == 0
    row.test_s = time.perf_counter() - start
    return ok


def one(env: Env, full: bool) -> Row:
    """Build and test one environment; its status says how it went."""
    row = Row(env)
    log = MATRIX / f"{env.name}.log"
    log.write_text("")
    print(f"test_matrix: {env.name}: installing (log: {log.relative_to(ROOT)})", flush=True)
    if build(env, row, log):
        print(f"test_matrix: {env.name}: installed in {row.install_s:.0f} s; testing", flush=True)
        row.status = "passed" if test(env, row, log, full) else "FAILED"
    elif row.status.startswith("no Python") and not os.environ.get("CI"):
        row.status = "skipped"  # locally; under CI a missing Python fails
        print(f"test_matrix: {env.name}: skipped, no Python {env.python}", flush=True)
    if row.status not in ("passed", "skipped"):
        print(f"test_matrix: {env.name}: {row.status}; the end of its log:")
        print(log.read_text()[-3000:], flush=True)
    else:
        print(f"test_matrix: {env.name}: {row.status} in {row.test_s:.0f} s", flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", help="environments (default: all)")
    parser.add_argument("--full", action="store_true", help="every test but the website's")
    args = parser.parse_args()
    known = [e.name for e in ENVS]
    names = args.names or known
    if unknown := sorted(set(names) - set(known)):
        parser.error(f"unknown environments {unknown}; known: {known}")
    MATRIX.mkdir(parents=True, exist_ok=True)
    envs = [e for e in ENVS if e.name in names]
    # All at once: on CI's two cores the three take about half their summed CPU time.
    with ThreadPoolExecutor(max_workers=len(envs)) as pool:
        rows = list(pool.map(lambda env: one(env, args.full), envs))
    failed = any(r.status not in ("passed", "skipped") for r in rows)
    print("\nenvironment  python   " + "  ".join(SHOWN))
    for r in rows:
        versions = "  ".join(r.versions.get(n, "-") for n in SHOWN)
        print(f"{r.env.name:<12} {r.python or '-':<8} {versions}")
    print("\nenvironment  status   install (cpu)      size    tests / nbval    time (cpu)")
    for r in rows:
        print(
            f"{r.env.name:<12} {r.status:<8} {r.install_s:4.0f} s ({r.install_cpu:3.0f} s) "
            f"{r.size_mb:6.0f} MB   {r.counts.get('tests', '-')} / {r.counts.get('nbval', '-')}"
            f"   {r.test_s:4.0f} s ({r.test_cpu:3.0f} s)"
        )
    passed = failed_n = 0
    for r in rows:
        for counts in r.counts.values():
            passed += sum(int(n) for n in re.findall(r"(\d+) passed", counts))
            failed_n += sum(int(n) for n in re.findall(r"(\d+) (?:failed|errors?)", counts))
    # One closing line with the totals of every environment, as a test runner prints it.
    print(f"\nmatrix: {passed} passed, {failed_n} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
