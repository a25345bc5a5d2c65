"""The built website: every slider scrubber works in a real browser, with no network at all.

Needs ``make book`` first (``_build/html``; another folder with ``--site-dir``) and Chromium.
Without them these tests skip locally and fail under CI. Every built chapter page that holds
a scrubber is tested, so new chapters are covered automatically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.site

SCRUBBER = 'class="attnlab-explorer"'
MIN_SCRUBBERS = {"02_similarity": 3, "03_qkv": 4}
"""Chapters that must have at least this many scrubbers (any other page: at least 1)."""


def _site(config: pytest.Config) -> Path:
    return Path(config.getoption("--site-dir"))


def _pages_with_scrubbers(site: Path) -> list[Path]:
    pages = sorted((site / "chapters").glob("*.html"))
    return [p for p in pages if SCRUBBER in p.read_text(encoding="utf-8")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "page_path" in metafunc.fixturenames:
        pages = _pages_with_scrubbers(_site(metafunc.config))
        ids = [p.stem for p in pages] or ["no-built-page"]
        metafunc.parametrize("page_path", pages or [None], ids=ids)


@pytest.fixture
def page_file(site: Path, page_path: Path | None) -> Path:
    if page_path is None:
        pytest.fail(f"no page in {site / 'chapters'} has a slider scrubber")
    return page_path


def test_similarity_chapter_renders_scrubbers_not_widgets(site: Path) -> None:
    page = site / "chapters" / "02_similarity.html"
    assert page.is_file(), "chapters/02_similarity.ipynb was not built"
    text = page.read_text(encoding="utf-8")
    assert text.count(SCRUBBER) >= MIN_SCRUBBERS["02_similarity"]
    # The live widget view needs a kernel and widget JavaScript from a CDN: never on the site.
    assert 'type="application/vnd.jupyter.widget-view+json"' not in text
    assert "@jupyter-widgets/html-manager" not in text


def _open(offline: Any, page_file: Path) -> Any:
    page = offline.page
    page.goto(page_file.as_uri(), wait_until="load")
    return page


def _state(root: Any) -> dict[str, Any]:
    return root.evaluate(
        """(root) => ({
            src: root.querySelector("img.attnlab-frame").src,
            labels: [...root.querySelectorAll(".attnlab-label")].map((e) => e.textContent),
            values: [...root.querySelectorAll("input.attnlab-slider")].map((i) => i.value),
            maxima: [...root.querySelectorAll("input.attnlab-slider")].map((i) => i.max),
            enabled: [...root.querySelectorAll("input.attnlab-slider")].every((i) => !i.disabled),
        })"""
    )


def _screenshot(root: Any) -> bytes:
    img = root.locator("img.attnlab-frame")
    img.evaluate("(img) => img.decode()")
    return img.screenshot()


def test_every_scrubber_moves_its_figure(offline_page: Any, page_file: Path) -> None:
    page = _open(offline_page, page_file)
    roots = page.locator("div.attnlab-explorer")
    n = roots.count()
    assert n >= MIN_SCRUBBERS.get(page_file.stem, 1), f"{n} scrubbers on {page_file.name}"
    srcs = [_state(roots.nth(i))["src"] for i in range(n)]
    for i in range(n):
        root = roots.nth(i)
        before = _state(root)
        assert before["enabled"], f"scrubber {i + 1}: its script did not run"
        for j in range(len(before["values"])):
            where = f"scrubber {i + 1}, slider {before['labels'][j]!r}"
            shot = _screenshot(root)
            at_end = before["values"][j] == before["maxima"][j]
            root.locator("input.attnlab-slider").nth(j).focus()
            page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            after = _state(root)
            assert after["values"][j] != before["values"][j], f"{where}: the key did nothing"
            assert after["src"] != before["src"], f"{where}: the image source did not change"
            assert after["labels"][j] != before["labels"][j], f"{where}: the label did not change"
            assert _screenshot(root) != shot, f"{where}: the figure looks the same"
            srcs[i] = after["src"]
            now = [_state(roots.nth(k))["src"] for k in range(n)]
            assert now == srcs, f"{where}: moving it changed another scrubber"
            before = after


def test_pages_need_no_network_and_log_no_errors(offline_page: Any, page_file: Path) -> None:
    page = _open(offline_page, page_file)
    root = page.locator("div.attnlab-explorer").first
    root.locator("input.attnlab-slider").first.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)  # let late requests and errors surface
    assert offline_page.blocked == [], "the page tried to load from the network"
    assert offline_page.errors == [], "errors on the page (none is allowed)"
