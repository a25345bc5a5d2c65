"""tools/other_machine.py: the second nbval run of `make test` really runs other kernels."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools import other_machine

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "other_machine.py"


# Sums and transcendental functions whose last bits depend on the vector width, the
# summation order and the BLAS kernel: the things that differed between two CPUs.
DIGITS = """
import json, numpy as np, torch
torch.manual_seed(0)
a = torch.randn(257, 300)
b = torch.randn(300, 129)
x = np.random.default_rng(0).normal(size=100_003)
m = np.random.default_rng(1).normal(size=(300, 300))
print(json.dumps({
    "torch_sum": a.sum().item(),
    "torch_exp": torch.exp(a).sum().item(),
    "torch_tanh": torch.tanh(a).double().sum().item(),
    "torch_matmul": (a @ b).double().sum().item(),
    "torch_softmax": torch.softmax(a, dim=-1).double().pow(2).sum().item(),
    "numpy_exp": float(np.exp(x.astype(np.float32)).astype(np.float64).sum()),
    "numpy_tanh": float(np.tanh(x).sum()),
    "numpy_matmul": float((m @ m).sum()),
}))
"""


def _digits(env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", DIGITS], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def here_env():
    env = dict(os.environ)
    for key in ("ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES", "OMP_NUM_THREADS"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="module")
def other_env(here_env):
    return other_machine.other_machine_env(here_env)


@pytest.fixture(scope="module")
def here(here_env):
    return other_machine.probe(here_env)


def test_the_settings_take_effect(here, other_env):
    after = other_machine.probe(other_env)
    assert after["torch_capability"] == "DEFAULT"
    assert after["torch_threads"] == 1
    assert after["numpy_dispatch"] == []
    assert other_env["OMP_NUM_THREADS"] == "1"
    line = other_machine.describe(here, after)
    assert line.startswith("other machine: PyTorch kernels ")
    assert "-> DEFAULT, threads " in line and " -> 1, NumPy kernels off: " in line


def test_a_setting_that_does_nothing_is_an_error():
    ignored = {"torch_capability": "AVX2", "torch_threads": 1, "numpy_dispatch": []}
    with pytest.raises(SystemExit, match="ignored ATEN_CPU_CAPABILITY"):
        other_machine.describe(ignored, ignored)
    still = {"torch_capability": "DEFAULT", "torch_threads": 1, "numpy_dispatch": ["X86_V3"]}
    with pytest.raises(SystemExit, match="NumPy still dispatches to X86_V3"):
        other_machine.describe(still, still)
    two = {"torch_capability": "DEFAULT", "torch_threads": 2, "numpy_dispatch": []}
    with pytest.raises(SystemExit, match="2 threads"):
        other_machine.describe(two, two)


def test_it_changes_the_last_digits(here, here_env, other_env):
    """The second run would prove nothing if every printed digit came out the same anyway."""
    if here["torch_capability"] == "DEFAULT" and not here["numpy_dispatch"]:
        pytest.skip("this CPU has no vector kernels to turn off: both runs are the same here")
    mine, other = _digits(here_env), _digits(other_env)
    for key in mine:  # same numbers to float32 rounding: other kernels, same maths
        assert other[key] == pytest.approx(mine[key], rel=1e-4, abs=1e-3), key
    differ = [key for key in mine if mine[key] != other[key]]
    assert differ, "no last digit changed: the other machine runs the same kernels"
    if here["torch_capability"] != "DEFAULT":
        assert any(key.startswith("torch_") for key in differ), differ
    if here["numpy_dispatch"]:
        assert any(key.startswith("numpy_") for key in differ), differ


def test_it_runs_the_command_in_that_environment(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(
        "import os, sys, torch\n"
        "print(torch.backends.cpu.get_cpu_capability(), os.environ['OMP_NUM_THREADS'])\n"
        "sys.exit(3)\n"
    )
    run = subprocess.run(
        [sys.executable, str(TOOL), "--", sys.executable, str(script)],
        capture_output=True,
        text=True,
    )
    out = run.stdout.splitlines()
    assert out[0].startswith("other machine: ")
    assert out[-1] == "DEFAULT 1"
    assert run.returncode == 3  # the command's own status


def test_make_test_runs_nbval_on_both_machines():
    recipe = (ROOT / "Makefile").read_text()
    body = recipe.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    runs = re.findall(r"-m pytest \$\(NOTEBOOKS\) \$\(NBVAL_FLAGS\)", body)
    assert len(runs) == 2, body
    assert "tools/other_machine.py -- $(PY) -m pytest $(NOTEBOOKS) $(NBVAL_FLAGS)" in body
    assert "[ $$other -eq 0 ]" in body
