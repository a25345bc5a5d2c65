"""The README's by-hand recipe for the CPU build of PyTorch ends on the CPU build.

pip reads the pin ``torch==2.13.0`` as satisfied by the CPU index's ``2.13.0+cpu`` (a local
version label is ignored by ``==`` without one) and, when both are offered, prefers it
(``2.13.0+cpu`` sorts after ``2.13.0``). The former recipe, ``pip install torch --index-url
.../cpu`` and then ``pip install -c constraints.txt -e ".[lab]"``, broke as soon as the first
line brought another version than the pin: the second then replaced it with PyPI's (CUDA) build.

No network: two local file indexes stand in for PyPI (``torch-2.13.0``, ``torch-2.14.0``) and
for PyTorch's CPU index (``torch-2.13.0+cpu``, ``torch-2.14.0+cpu``), with tiny wheels named
like theirs; ``course[lab]`` (which needs ``torch>=2.5``) stands in for ``-e ".[lab]"``. The
README's commands run as written, with the real constraints.txt, on a scratch environment;
the last with ``--dry-run --report``, whose report says what it would install.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.tags import sys_tags

ROOT = Path(__file__).resolve().parent.parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PACKAGE = '-e ".[lab]"'  # in the README; the stand-in package below replaces it
OLD_RECIPE = [  # the README's recipe before: kept to show that this test tells them apart
    f"pip install torch --index-url {CPU_INDEX}",
    f"pip install -c constraints.txt {PACKAGE}",
]


def _pin() -> str:
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.startswith("torch=="):
            return next(iter(Requirement(line).specifier)).version
    raise AssertionError("constraints.txt pins no torch")


PIN = _pin()
NEWER = ".".join([*PIN.split(".")[:1], str(int(PIN.split(".")[1]) + 1), "0"])


def readme_recipe() -> list[str]:
    """The commands of the README's by-hand recipe ("Without a GPU"), one per entry."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Without a GPU", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, "the README's 'Without a GPU' section has no bash block"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    text = " ".join(line.removesuffix("\\") for line in lines if line)
    return [command.strip() for command in text.split("&&")]


def _wheel_tag() -> str:
    tags = [str(tag) for tag in sys_tags()]
    return next((tag for tag in tags if "manylinux_2_28" in tag), tags[0])


def _add_wheel(
    index: Path, name: str, version: str, tag: str, requires: tuple[str, ...] = ()
) -> None:
    """A tiny wheel in a simple index laid out as PyPI's: simple/<name>/index.html links it."""
    files, page = index / "files", index / "simple" / name
    files.mkdir(parents=True, exist_ok=True)
    page.mkdir(parents=True, exist_ok=True)
    wheel = files / f"{name}-{version}-{tag}.whl"
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nProvides-Extra: lab\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{name}/__init__.py", f"__version__ = {version!r}\n")
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(
            f"{info}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n"
        )
        records = (f"{name}/__init__.py", f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD")
        archive.writestr(f"{info}/RECORD", "".join(f"{r},,\n" for r in records))
    link = f'<a href="../../files/{wheel.name.replace("+", "%2B")}">{wheel.name}</a>\n'
    with open(page / "index.html", "a") as html:
        html.write(link)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("indexes")
    pypi, cpu = root / "pypi", root / "cpu"
    tag = _wheel_tag()
    for version in (PIN, NEWER):
        _add_wheel(pypi, "torch", version, tag)  # PyPI's: the CUDA build on Linux
        _add_wheel(cpu, "torch", f"{version}+cpu", tag)  # PyTorch's CPU index
    _add_wheel(pypi, "course", "0.1.0", "py3-none-any", ("torch>=2.5",))
    return {"pypi": pypi / "simple", "cpu": cpu / "simple"}


class Scratch:
    """A scratch environment, and pip run on it the way the README's reader runs it."""

    def __init__(self, folder: Path, pypi: Path) -> None:
        self.folder = folder
        self.failure = ""
        venv.create(folder / "env", with_pip=False)
        self.python = folder / "env" / ("Scripts" if os.name == "nt" else "bin") / "python"
        (folder / "constraints.txt").write_text((ROOT / "constraints.txt").read_text())
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.upper().startswith("PIP_") and not key.upper().endswith("_PROXY")
        }
        self.env.update(
            PIP_CONFIG_FILE=os.devnull,  # none of this machine's pip settings
            PIP_INDEX_URL=pypi.as_uri(),  # "PyPI": the default index
            PIP_CACHE_DIR=str(folder / "cache"),
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            PIP_NO_INPUT="1",
            PIP_RETRIES="0",
            PIP_TIMEOUT="5",
        )

    def pip(self, command: str, *extra: str) -> subprocess.CompletedProcess[str]:
        words = shlex.split(command)
        assert words[:2] == ["pip", "install"], command
        return subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(self.python), *words[1:], *extra],
            cwd=self.folder,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )

    def torch(self) -> str | None:
        """The installed torch's version; None when there is none."""
        code = "import importlib.metadata as m\nfor d in m.distributions(name='torch'): print(d.version)"
        found = subprocess.run([self.python, "-c", code], capture_output=True, text=True)
        return found.stdout.strip() or None

    def run(self, commands: list[str], cpu_index: str) -> tuple[str | None, dict | None]:
        """Every command but the last as written (stopping at a failure, as `&&` does), the
        last with --dry-run --report: the torch it ends on and the report (None, and the
        failing command's output in `self.failure`, when a command failed)."""
        commands = [
            c.replace(CPU_INDEX, cpu_index).replace(PACKAGE, "course[lab]") for c in commands
        ]
        for command in commands[:-1]:
            done = self.pip(command)
            if done.returncode != 0:
                self.failure = done.stdout + done.stderr
                return self.torch(), None
        report = self.folder / "report.json"
        done = self.pip(commands[-1], "--dry-run", "--report", str(report))
        assert done.returncode == 0, done.stdout + done.stderr
        planned = json.loads(report.read_text())
        torch = _torch_planned(planned)
        return (torch[0]["metadata"]["version"] if torch else self.torch()), planned


def _torch_planned(report: dict) -> list[dict]:
    return [item for item in report["install"] if item["metadata"]["name"] == "torch"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_recipe_is_read_from_the_readme() -> None:
    commands = readme_recipe()
    assert len(commands) >= 1 and all(c.startswith("pip install ") for c in commands)
    assert any(CPU_INDEX in c for c in commands), commands
    assert commands[-1].endswith(PACKAGE) and "-c constraints.txt" in commands[-1]
    assert commands != OLD_RECIPE


@pytest.mark.parametrize(
    "before",
    [None, f"{NEWER}+cpu", NEWER],
    ids=["fresh", "newer-cpu-build-installed", "newer-pypi-build-installed"],
)
def test_the_readme_recipe_ends_on_the_pinned_cpu_build(
    tmp_path: Path, indexes: dict[str, Path], before: str | None
) -> None:
    scratch = Scratch(tmp_path, indexes["pypi"])
    if before is not None:  # e.g. what `pip install torch --index-url .../cpu` brings today
        index = indexes["cpu" if before.endswith("+cpu") else "pypi"].as_uri()
        done = scratch.pip(f"pip install torch=={before} --index-url {index}")
        assert done.returncode == 0, done.stderr
        assert scratch.torch() == before
    torch, report = scratch.run(readme_recipe(), indexes["cpu"].as_uri())
    assert report is not None, f"a command of the recipe failed: {scratch.failure}"
    assert torch == f"{PIN}+cpu", f"the recipe ends on torch {torch}, not the CPU build"
    for item in _torch_planned(report):  # the last command may install it, from the CPU index
        assert item["download_info"]["url"].startswith(indexes["cpu"].parent.as_uri())
    # The first line installed it; the last keeps it.
    assert scratch.torch() == f"{PIN}+cpu"
    assert _torch_planned(report) == [], "the last command would replace the CPU build"


def test_the_former_recipe_ended_on_pypis_build(tmp_path: Path, indexes: dict[str, Path]) -> None:
    scratch = Scratch(tmp_path, indexes["pypi"])
    torch, report = scratch.run(OLD_RECIPE, indexes["cpu"].as_uri())
    assert scratch.torch() == f"{NEWER}+cpu"  # what its first line brought
    assert report is not None and torch == PIN  # ... replaced by PyPI's build
    (planned,) = _torch_planned(report)
    assert planned["download_info"]["url"].startswith(indexes["pypi"].parent.as_uri())


def test_with_the_cpu_index_unreachable_the_recipe_stops(
    tmp_path: Path, indexes: dict[str, Path]
) -> None:
    scratch = Scratch(tmp_path, indexes["pypi"])
    commands = readme_recipe()
    unreachable = f"http://127.0.0.1:{_closed_port()}/whl/cpu"
    torch, report = scratch.run(commands, unreachable)
    assert report is None, "the recipe went on after PyTorch's index did not answer"
    assert re.search("no matching distribution", scratch.failure, re.IGNORECASE), scratch.failure
    assert torch is None, f"torch {torch} was installed without PyTorch's index"


def test_the_readme_names_the_pinned_version() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Without a GPU", 1)[1].split("\n## ", 1)[0]
    assert f"torch=={PIN}" in section and f"{PIN}+cpu" in section
