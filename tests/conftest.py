"""Shared fixtures: a headless Chromium (Debian's, never a downloaded build) with no network.

The browser is found with ``$ATTNLAB_CHROMIUM`` or on the ``PATH``. Without one the browser
tests skip locally but fail under CI (``$CI`` set): under CI the test fails, never skips.

Under CI the Hypothesis profile ``"ci"`` is loaded: derandomized (the same examples on every
run, so a red build can be reproduced), no deadline (shared runners are slow and uneven),
the failing example printed as a reproduction blob, and no example database. (Recent
Hypothesis versions ship a similar built-in ``"ci"`` profile; registering it here keeps
older versions allowed by pyproject.toml reproducible too.)
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    database=None,  # nothing to replay from: each CI run starts clean
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--site-dir",
        default=str(ROOT / "_build" / "html"),
        help="the built website tested by tests/test_site.py (default: _build/html)",
    )


def skip_or_fail(reason: str) -> None:
    """``pytest.skip`` locally, ``pytest.fail`` under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (under CI the test fails, never skips)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def site(pytestconfig: pytest.Config) -> Path:
    """The built website (``--site-dir``, default ``_build/html``)."""
    site = Path(pytestconfig.getoption("--site-dir"))
    if not (site / "index.html").is_file():
        skip_or_fail(f"no built website in {site}: run make book first")
    return site


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The browser executable: ``$ATTNLAB_CHROMIUM``, else the first Chromium on the PATH."""
    path = os.environ.get("ATTNLAB_CHROMIUM") or next(
        (p for p in map(shutil.which, BROWSER_NAMES) if p), None
    )
    if not path or not os.access(path, os.X_OK):
        skip_or_fail("no Chromium found: apt-get install chromium, or set ATTNLAB_CHROMIUM")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the whole session, driven by Playwright's sync API."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class OfflinePage:
    """A page that may load ``file:`` and ``data:`` URLs only; everything else is aborted.

    ``blocked`` lists the URLs the page tried to fetch from the network; ``errors`` the
    JavaScript errors and console errors (except the failed loads of blocked URLs).
    """

    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)  # every file: URL requested


def _offline(context: Any) -> OfflinePage:
    """A new page of ``context`` that may load ``file:`` and ``data:`` URLs only."""
    page = context.new_page()
    result = OfflinePage(page)

    def route(r: Any) -> None:
        url = r.request.url
        if url.startswith(("file:", "data:")):
            if url.startswith("file:"):
                result.loaded.append(url)
            r.continue_()
        else:
            result.blocked.append(url)
            r.abort()

    def console(msg: Any) -> None:
        if msg.type != "error":
            return
        if msg.text.startswith("Failed to load resource") and (
            msg.location.get("url") in result.blocked
        ):
            return  # already reported in `blocked`
        result.errors.append(f"console: {msg.text} ({msg.location.get('url')})")

    context.route("**/*", route)
    page.on("console", console)
    page.on("pageerror", lambda err: result.errors.append(f"page error: {err}"))
    return result


@pytest.fixture
def offline_page(browser: Any) -> Iterator[OfflinePage]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    yield _offline(context)
    context.close()


@pytest.fixture
def reader(browser: Any) -> Iterator[Any]:
    """``reader(width, dark=False, touch=False)``: an offline page as a reader's device shows it.

    390 px is a phone (touch, 3x pixels), anything wider a desktop browser; ``dark`` sets
    the system's colour scheme. Contexts are closed after the test.
    """
    contexts: list[Any] = []

    def open_(width: int, dark: bool = False, touch: bool | None = None) -> OfflinePage:
        phone = width < 600
        context = browser.new_context(
            viewport={"width": width, "height": 844 if phone else 900},
            device_scale_factor=3 if phone else 1,
            has_touch=phone if touch is None else touch,
            is_mobile=phone,
            color_scheme="dark" if dark else "light",
        )
        contexts.append(context)
        return _offline(context)

    yield open_
    for context in contexts:
        context.close()
