"""Run a command as if on another machine: other SIMD kernels, another thread count.

The committed notebooks' text outputs must read the same on every machine (README, "Same
outputs on every machine"). `make test` checks that by running nbval twice: once as this
machine is, once under this script, which changes every numeric path that the environment
can change without another CPU:

* PyTorch's own kernels: ``ATEN_CPU_CAPABILITY=default`` (no AVX2/AVX-512 code; other
  vector widths, so other summation orders and other ``exp``/``tanh`` approximations);
* PyTorch's BLAS (MKL) and oneDNN: ``MKL_ENABLE_INSTRUCTIONS=SSE4_2``,
  ``DNNL_MAX_CPU_ISA=SSE41`` (other matmul kernels and blockings);
* NumPy's own kernels: ``NPY_DISABLE_CPU_FEATURES`` set to every feature NumPy can dispatch
  to on this CPU (its names differ between NumPy versions, so they are read from NumPy);
* NumPy's BLAS (OpenBLAS): ``OPENBLAS_CORETYPE=Sandybridge`` (another kernel family);
* the thread count: one thread (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS``), where `make test` otherwise leaves the default, so every
  parallel reduction is split differently.

Before running the command it checks, in a fresh interpreter, that PyTorch and NumPy did
take the settings (a setting that silently did nothing would make the second run prove
nothing), prints one line saying what changed, and exits with the command's status.

Usage: ``python tools/other_machine.py [--show] [--] COMMAND [ARG ...]``.
``--show`` prints the settings and the check, and runs nothing.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

X86 = platform.machine().lower() in ("x86_64", "amd64")

PROBE = """
import json, numpy, torch
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
except ImportError:  # NumPy 1.x
    from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
print(json.dumps({
    "torch_capability": torch.backends.cpu.get_cpu_capability(),
    "torch_threads": torch.get_num_threads(),
    "numpy_dispatch": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
}))
"""


def probe(env: dict[str, str]) -> dict:
    """What PyTorch and NumPy use in a fresh interpreter with ``env``."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def other_machine_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the other machine's settings."""
    env = dict(os.environ if base is None else base)
    for key in ("ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES"):
        env.pop(key, None)
    dispatch = probe(env)["numpy_dispatch"]  # what NumPy would use here, by its own names
    env.update(
        ATEN_CPU_CAPABILITY="default",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
    )
    if X86:  # the kernel names below exist on x86-64 only
        env.update(
            MKL_ENABLE_INSTRUCTIONS="SSE4_2",
            DNNL_MAX_CPU_ISA="SSE41",
            OPENBLAS_CORETYPE="Sandybridge",
        )
    if dispatch:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dispatch)
    return env


def describe(before: dict, after: dict) -> str:
    """One line: what the other machine changes, checked in a fresh interpreter."""
    if after["torch_capability"] != "DEFAULT":
        raise SystemExit(
            f"other_machine: PyTorch ignored ATEN_CPU_CAPABILITY=default "
            f"(it still uses {after['torch_capability']})"
        )
    if after["torch_threads"] != 1:
        raise SystemExit(f"other_machine: PyTorch uses {after['torch_threads']} threads, not 1")
    if after["numpy_dispatch"]:
        raise SystemExit(
            f"other_machine: NumPy still dispatches to {' '.join(after['numpy_dispatch'])}"
        )
    numpy_off = " ".join(before["numpy_dispatch"]) or "nothing to turn off on this CPU"
    blas = ", MKL SSE4_2, oneDNN SSE41, OpenBLAS Sandybridge" if X86 else ""
    return (
        f"other machine: PyTorch kernels {before['torch_capability']} -> DEFAULT, "
        f"threads {before['torch_threads']} -> 1, NumPy kernels off: {numpy_off}{blas}"
    )


def main(argv: list[str]) -> int:
    show = bool(argv) and argv[0] == "--show"
    argv = argv[1:] if show else argv
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv and not show:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    env = other_machine_env()
    print(describe(probe(dict(os.environ)), probe(env)), flush=True)
    if show:
        for key in sorted(set(env) - set(os.environ) | {k for k in env if k in os.environ}):
            if os.environ.get(key) != env[key]:
                print(f"  {key}={env[key]}")
        return 0
    return subprocess.call(argv, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
