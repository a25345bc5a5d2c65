"""Ask PyTorch's CPU wheel index once, before pip is told to use it.

    python tools/torch_index.py https://download.pytorch.org/whl/cpu

prints ``--extra-index-url https://download.pytorch.org/whl/cpu`` when the index answers, and
nothing (with one line on stderr saying why) when it does not.

The Makefile and binder/postBuild put this script's output on pip's command line. pip itself
would retry an extra index it cannot reach for every package it looks up (five retries each,
with back-off: close to half an hour for the course's ~200 packages behind a firewall) and
then take the default index anyway. One request with a short timeout tells the two cases
apart: when the index does not answer, the script says so in one line and prints nothing,
so pip installs from the default index (PyPI: on Linux, its CUDA build of torch).

The request goes the way pip's would: through the proxy pip is configured with (``--proxy``
in the environment as PIP_PROXY or in a pip configuration file), else the environment's
HTTPS_PROXY/HTTP_PROXY/NO_PROXY, and with pip's ``cert`` bundle when one is configured. It
uses only the standard library, since it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT_S = 5.0


@functools.cache
def _pip_config() -> dict[str, str]:
    """pip's settings from its configuration files and environment (`pip config list`)."""
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    return dict(re.findall(r"^([\w:.-]+)='(.*)'$", listing, flags=re.MULTILINE))


def pip_setting(name: str) -> str | None:
    """The value pip would use for `name` (e.g. "proxy"): its environment variable, then the
    [install] and [global] sections of pip's configuration files; None when none sets it."""
    env = os.environ.get("PIP_" + name.upper().replace("-", "_"))
    if env:
        return env
    found = _pip_config()
    return found.get(f"install.{name}") or found.get(f"global.{name}") or None


def probe(index: str, timeout: float = TIMEOUT_S) -> str | None:
    """None when `index` serves torch's page within `timeout` seconds, else the reason."""
    url = index.rstrip("/") + "/torch/"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":  # a local mirror: a folder, as pip reads it
        path = urllib.request.url2pathname(parts.path)
        return None if os.path.isdir(path) else f"no folder {path}"
    handlers: list[urllib.request.BaseHandler] = []
    proxy = pip_setting("proxy")
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    cert = pip_setting("cert")
    if cert and os.path.isfile(cert):
        handlers.append(
            urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cert))
        )
    elif cert and os.path.isdir(cert):
        handlers.append(
            urllib.request.HTTPSHandler(context=ssl.create_default_context(capath=cert))
        )
    opener = urllib.request.build_opener(*handlers)  # the environment's proxies unless pip's
    request = urllib.request.Request(url, headers={"User-Agent": "attnlab index probe"})
    result = [f"no answer in {timeout:g} s"]

    def ask() -> None:
        try:
            with opener.open(request, timeout=timeout) as response:
                ok = 200 <= response.status < 300
                result[0] = None if ok else f"HTTP {response.status}"
        except urllib.error.HTTPError as error:
            result[0] = f"HTTP {error.code}"
        except (OSError, ValueError) as error:  # URLError, timeouts and TLS errors are OSErrors
            reason = getattr(error, "reason", error)
            result[0] = f"{type(reason).__name__}: {reason}".rstrip(": ")

    # The timeout bounds the whole request: a socket's timeout does not cover the DNS lookup.
    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    asking.join(timeout)
    return result[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", nargs="?", default="", help="the index URL; empty: no index")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds (default 5)")
    args = parser.parse_args(argv)
    if not args.index:
        return 0
    reason = probe(args.index, args.timeout)
    if reason is None:
        print("--extra-index-url", args.index)
    else:
        print(
            f"The torch index {args.index} did not answer ({reason}): installing torch"
            " from the default index instead (on Linux: PyPI's CUDA build)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
