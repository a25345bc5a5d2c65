"""The website as readers meet it: on a phone (390 px, touch) and a desktop (1280 px).

Needs ``make book`` first and Chromium (see ``conftest.py``); every page is opened with the
network blocked. What a reader needs, each checked on every page that has it:

- the menu button opens a visible chapter list on a phone (and the page-contents button
  its list); on a desktop the sidebar toggle hides the sidebar. With either theme pin:
  pydata-sphinx-theme 0.16+ (Python 3.11+) opens the lists as ``<dialog>`` boxes,
  0.15 (Python 3.10) slides the sidebars in from the side (see ``Sidebars``);
- dragging a slider with the mouse only moves it forward, and the slider stays put while
  its value changes; touch targets are at least 24 px tall (WCAG 2.2, 2.5.8);
- no JavaScript or console error at all, in light and dark mode; every formula typeset;
- the page follows the system's colour scheme;
- no page is wider than the phone;
- page weight: what a reader downloads (the page and every file it loads).

The round-two checks (contrast, nothing hidden or raw, search, consistency, slow sliders)
are in ``tests/test_site_phone.py``.
"""

from __future__ import annotations

import gzip
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from _site_pages import parametrize_pages, reader_pages

pytestmark = pytest.mark.site

PHONE, DESKTOP = 390, 1280
SCRUBBER = 'class="attnlab-explorer"'
MB = 1_000_000


def _site(config: pytest.Config) -> Path:
    return Path(config.getoption("--site-dir"))


def _pages(site: Path) -> list[Path]:
    return reader_pages(site, search=False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    site = _site(metafunc.config)
    if "any_page" in metafunc.fixturenames:
        parametrize_pages(metafunc, "any_page", site, _pages(site))
    if "slider_page" in metafunc.fixturenames:
        pages = [p for p in _pages(site) if SCRUBBER in p.read_text(encoding="utf-8")]
        metafunc.parametrize(
            "slider_page", pages or [None], ids=[p.stem for p in pages] or ["no-built-site"]
        )


def _need(page: Path | None) -> Path:
    if page is None:
        pytest.fail("no built page: run make book first")
    return page


def _open(reader_page: Any, path: Path) -> Any:
    page = reader_page.page
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_timeout(200)  # deferred theme scripts
    return page


def _chapter_page(site: Path) -> Path:
    pages = sorted((site / "chapters").glob("*.html"))
    assert pages, "no chapter page was built"
    return pages[0]


# --------------------------------------------------------------------------- navigation


@dataclass(frozen=True)
class Sidebars:
    """Where a theme version puts the chapter list and the page contents on a narrow screen.

    pydata-sphinx-theme 0.16+ (Python 3.11+: 0.17.1) moves each sidebar into a
    ``<dialog>`` that its toggle opens as a modal; 0.15 (Python 3.10's pin: 0.15.4, with
    sphinx-book-theme 1.1.4) slides the sidebar itself in from the side, its state in a
    hidden checkbox. Both close with Escape; on a desktop both hide the primary sidebar
    (``.bd-sidebar-primary``) with the same toggle.
    """

    primary: str  # what the menu button shows on a narrow screen
    secondary: str  # what the page-contents button shows
    is_open: str  # JavaScript: is the chapter list open? (an element of `primary`)

    @staticmethod
    def of(page: str) -> Sidebars:
        """The sidebars of a built page's theme, read from its HTML."""
        if '<dialog id="pst-primary-sidebar-modal"' in page:  # 0.16+
            return Sidebars(
                "#pst-primary-sidebar-modal", "#pst-secondary-sidebar-modal", "(d) => d.open"
            )
        if 'id="pst-primary-sidebar-checkbox"' in page:  # 0.15
            return Sidebars(
                ".bd-sidebar-primary",
                ".bd-sidebar-secondary",
                '() => document.getElementById("pst-primary-sidebar-checkbox").checked',
            )
        pytest.fail("the page has neither theme's sidebars (pydata-sphinx-theme 0.15-0.17)")


def _sidebars(path: Path) -> Sidebars:
    return Sidebars.of(path.read_text(encoding="utf-8"))


_FOCUS_INSIDE = "(box) => box.contains(document.activeElement)"

_SETTLED = "(box) => Promise.all(box.getAnimations({subtree: true}).map((a) => a.finished))"
"""Wait until the list has finished moving in (0.15 slides it in over a fraction of a
second; measured before that, it is still partly off-screen)."""


@pytest.mark.parametrize("width", [PHONE, 900])
def test_the_menu_button_opens_a_chapter_list(reader: Any, site: Path, width: int) -> None:
    r = reader(width)
    chapter = _chapter_page(site)
    sidebars = _sidebars(chapter)
    page = _open(r, chapter)
    toggles = page.locator(".primary-toggle:visible")
    assert toggles.count() >= 1, f"no visible menu button at {width} px"
    dialog = page.locator(sidebars.primary)
    assert not dialog.is_visible(), "the chapter list is shown before the menu is opened"
    toggles.first.click()
    dialog.wait_for(state="visible", timeout=2000)
    dialog.evaluate(_SETTLED)
    assert dialog.evaluate(sidebars.is_open), "the chapter list did not open"
    # Every chapter is listed by its title, "N. Title" (the current chapter's exercises
    # are listed under it; other chapters' sub-pages stay folded).
    links = dialog.locator("a.reference.internal:visible")
    titles = links.all_inner_texts()
    chapters = [t for t in titles if re.match(r"\d+\. ", t.strip())]
    assert len(chapters) >= len(list((site / "chapters").glob("*.html"))), titles
    box = links.first.bounding_box()
    assert box is not None and 0 <= box["x"] < width, "the chapter list is off-screen"
    # The keyboard follows: focus moves into the list (0.15 moves it 100 ms after the
    # click; Escape closes the list only from inside it).
    page.wait_for_function(_FOCUS_INSIDE, arg=dialog.element_handle(), timeout=2000)
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden", timeout=2000)
    assert r.errors == []


def test_the_contents_button_opens_the_page_contents_on_a_phone(reader: Any, site: Path):
    r = reader(PHONE)
    chapter = _chapter_page(site)
    page = _open(r, chapter)
    dialog = page.locator(_sidebars(chapter).secondary)
    assert not dialog.is_visible(), "the page contents are shown before the button is pressed"
    page.locator(".secondary-toggle:visible").first.click()
    dialog.wait_for(state="visible", timeout=2000)
    dialog.evaluate(_SETTLED)
    assert dialog.locator("a:visible").count() >= 3, "the page contents are empty"
    box = dialog.locator("a:visible").first.bounding_box()
    assert box is not None and 0 <= box["x"] < PHONE, "the page contents are off-screen"
    assert r.errors == []


def test_the_sidebar_toggle_hides_the_sidebar_on_a_desktop(reader: Any, site: Path) -> None:
    r = reader(DESKTOP)
    page = _open(r, _chapter_page(site))
    sidebar = page.locator(".bd-sidebar-primary")  # 0.17: also #pst-primary-sidebar
    assert sidebar.count() == 1
    assert sidebar.is_visible()
    page.locator(".primary-toggle:visible").first.click()
    page.wait_for_timeout(400)
    assert not sidebar.is_visible(), "the toggle did not hide the sidebar"
    assert r.errors == []


# --------------------------------------------------------------------------- sliders


_LABEL = """(input) => {
    const label = input.parentElement.querySelector(".attnlab-label");
    return [label.textContent, label.scrollWidth > label.clientWidth + 1];
}"""
"""A slider's ``name = value`` label, and whether the reader sees less than all of it."""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_dragging_a_slider_only_moves_it_forward(reader: Any, slider_page: Path, width: int):
    r = reader(width, touch=False)  # a mouse drag, also on the narrow screen
    page = _open(r, _need(slider_page))
    sliders = page.locator("div.attnlab-explorer input.attnlab-slider")
    assert sliders.count() >= 1
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        assert box is not None
        where = f"slider {i + 1} at {width} px"
        assert box["height"] >= 24, f"{where}: touch target {box['height']:.0f} px tall"
        label, cut = slider.evaluate(_LABEL)
        assert not cut, f"{where}: its label {label!r} is cut off"
        top = int(slider.get_attribute("max"))
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + 2, y)
        page.mouse.down()
        values, boxes = [], []
        steps = max(12, 3 * top)
        for k in range(steps + 1):
            page.mouse.move(box["x"] + 2 + (box["width"] - 4) * k / steps, y)
            values.append(int(slider.input_value()))
            boxes.append(slider.bounding_box())
        page.mouse.up()
        assert values == sorted(values), f"{where}: values went back during a drag: {values}"
        assert values[-1] == top, f"{where}: the drag did not reach the end: {values}"
        moved = [b for b in boxes if abs(b["x"] - box["x"]) > 0.5 or abs(b["y"] - box["y"]) > 0.5]
        assert not moved, f"{where}: the slider moved while dragged ({moved[0]} vs {box})"
    assert r.errors == []


# --------------------------------------------------------------------------- every page


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_no_errors_no_network_and_no_overflow(reader: Any, any_page: Path, width, dark):
    r = reader(width, dark=dark)
    page = _open(r, _need(any_page))
    page.wait_for_timeout(300)  # MathJax and late errors
    assert r.blocked == [], "the page tried to load from the network"
    assert r.errors == [], "errors on the page (none is allowed)"
    theme = page.evaluate("() => document.documentElement.dataset.theme")
    assert theme == ("dark" if dark else "light"), "the page ignores the system colour scheme"
    scroll = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide at {width} px"
    formulas, typeset, failed = page.evaluate(_TYPESET)
    assert typeset == formulas, f"MathJax typeset {typeset} of {formulas} formulas"
    assert failed == 0, f"{failed} formulas are TeX errors"


_TYPESET = """async () => {
    // Sphinx marks each formula with class "math"; MathJax puts an mjx-container inside
    // each once typeset: when the book is built (tools/attnlab_book.py), or in the browser
    // where the page still loads MathJax's script.
    const math = [...document.querySelectorAll(".math")];
    if (!math.length) return [0, 0, 0];
    if (document.querySelector('script[src*="mathjax"]')) {
        for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
            await new Promise((done) => setTimeout(done, 50));
        }
        await MathJax.startup.promise;
    }
    const done = math.filter((m) => m.querySelector("mjx-container")).length;
    return [math.length, done, document.querySelectorAll("mjx-merror").length];
}"""


def _weights(site: Path, reader_page: Any) -> dict[str, tuple[int, int]]:
    """``page -> (bytes on disk, bytes gzip-compressed)`` of everything a page loads.

    Every ``file:`` request the page makes (scripts, styles, fonts, images, MathJax's
    components) is counted once, with the page itself.
    """
    out = {}
    for path in _pages(site):
        reader_page.loaded.clear()
        reader_page.page.goto(path.as_uri(), wait_until="load")
        reader_page.page.wait_for_timeout(500)  # MathJax loads its fonts late
        files = {path} | {Path(unquote(urlparse(u).path)) for u in reader_page.loaded}
        files = {f for f in files if f.is_file()}
        assert len(files) > 5, f"{path.name}: loaded only {sorted(files)}"
        raw = sum(f.stat().st_size for f in files)
        packed = sum(len(gzip.compress(f.read_bytes(), 6)) for f in files)
        out[str(path.relative_to(site))] = (raw, packed)
    return out


def test_pages_are_light(reader: Any, site: Path) -> None:
    """What a page downloads with an empty cache, uncompressed: median at most 1.2 MB, no
    page over 2 MB (slider frames are files loaded on demand, the formulas typeset when the
    book is built, no widget state, the search index on the search page only, Font Awesome
    cut to its icons: before these, the median was 2.02 MB and the largest page 2.65 MB)."""
    r = reader(DESKTOP)
    weights = _weights(site, r)
    assert weights, "no built page"
    table = "\n".join(
        f"{p}: {a / MB:.2f} MB ({b / MB:.2f} MB gzip)" for p, (a, b) in weights.items()
    )
    raw = [a for a, _ in weights.values()]
    assert statistics.median(raw) <= 1.2 * MB, table
    assert max(raw) <= 2 * MB, table
    assert max(b for _, b in weights.values()) <= 1.5 * MB, table
