"""The built website: every slider scrubber works in a real browser, with no network at all.

Needs ``make book`` first (``_build/html``; another folder with ``--site-dir``) and Chromium.
Without them these tests skip locally and fail under CI. Every built chapter page that holds
a scrubber is tested, so new chapters are covered automatically.
"""

from __future__ import annotations

import re
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


def _prev_next(page: Path, site: Path) -> tuple[str | None, str | None]:
    """The targets of a page's "previous" and "next" links, relative to the site."""
    text = page.read_text(encoding="utf-8")
    found = []
    for kind in ("left-prev", "right-next"):
        match = re.search(rf'<a class="{kind}"\s+href="([^"#]+)', text)
        found.append(
            (page.parent / match[1]).resolve().relative_to(site.resolve()).as_posix()
            if match
            else None
        )
    return found[0], found[1]


def test_reading_order_is_chapter_then_exercises_and_solutions_are_off_it(site: Path) -> None:
    chapters = sorted((site / "chapters").glob("*.html"))
    assert chapters, f"no chapter page in {site}"
    for chapter in chapters:
        exercises = site / "exercises" / chapter.name
        if not exercises.is_file():
            continue
        assert _prev_next(chapter, site)[1] == f"exercises/{chapter.name}", chapter.name
        prev, next_ = _prev_next(exercises, site)
        assert prev == f"chapters/{chapter.name}", exercises.name
        later = [c for c in chapters if c.name > chapter.name]
        assert next_ == (f"chapters/{later[0].name}" if later else "references.html"), next_
    for page in site.rglob("*.html"):
        if page.parent.name == "solutions":
            continue
        assert not any(t and t.startswith("solutions/") for t in _prev_next(page, site)), (
            f"{page.relative_to(site)} leads to the solutions by previous/next"
        )


def test_solution_pages_show_no_solution_markers(site: Path) -> None:
    pages = sorted((site / "solutions").glob("*.html"))
    assert pages, f"no solutions page in {site}"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        # the code markers (an HTML comment <!-- BEGIN SOLUTION --> is invisible)
        assert "### BEGIN SOLUTION" not in text, page.name
        assert "### END SOLUTION" not in text, page.name
        assert "Why it works" in text or page.stem != "02_similarity", page.name


def _img_tags(page: str) -> list[dict[str, str]]:
    from html.parser import HTMLParser

    found: list[dict[str, str]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "img":
                found.append({k: v or "" for k, v in attrs})

    Parser().feed(page)
    return found


def test_every_figure_has_its_size_and_twice_the_pixels(site: Path) -> None:
    """Static figures and slider frames: width/height set (no layout jump while loading),
    drawn with 2x the pixels (sharp on high-density screens)."""
    import base64
    import io

    from PIL import Image

    pages = sorted((site / "chapters").glob("*.html"))
    assert pages, f"no chapter pages in {site}"
    checked = 0
    for page in pages:
        for img in _img_tags(page.read_text(encoding="utf-8")):
            src = img.get("src", "")
            # The figures: slider frames (data URIs) and the notebooks' figure files; not
            # the theme's icons and logos.
            if src.startswith("data:image/png;base64,"):
                data = base64.b64decode(src.split(",", 1)[1])
            elif src.startswith("../_images/"):
                data = (page.parent / src).read_bytes()
            else:
                continue
            where = f"{page.name}: {src[:60]}"
            assert img.get("width") and img.get("height"), f"{where} has no width/height"
            with Image.open(io.BytesIO(data)) as image:
                size = image.size
            shown = (int(img["width"]), int(img["height"]))
            assert abs(size[0] - 2 * shown[0]) <= 2, f"{where}: {size} pixels for {shown}"
            assert abs(size[1] - 2 * shown[1]) <= 2, f"{where}: {size} pixels for {shown}"
            checked += 1
    assert checked >= 40, f"only {checked} figures found"


def test_slider_frames_are_files_the_page_loads_on_demand(site: Path) -> None:
    """No frame is inlined as base64 (a page would download every frame of every slider);
    each scrubber names its frames, and each named file is in the website."""
    import json
    import math

    pages = _pages_with_scrubbers(site)
    assert pages, f"no chapter page in {site} has a scrubber"
    named = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "data:image/png;base64,iVBOR" not in text, f"{page.name} inlines a PNG"
        datas = re.findall(r"^  var data = (\{.*\});$", text, re.MULTILINE)
        assert len(datas) == text.count(SCRUBBER), f"{page.name}: a scrubber without data"
        for raw in datas:
            data = json.loads(raw)
            assert data["dir"] == "../_images/frames/", f"{page.name}: frames in {data['dir']}"
            assert len(data["frames"]) == math.prod(data["shape"])
            for name in data["frames"]:
                assert (page.parent / data["dir"] / f"{name}.png").is_file(), f"{name} missing"
                named += 1
    assert named >= 100, f"only {named} frames"
