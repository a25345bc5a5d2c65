"""The website on a phone and in dark mode: nothing hidden, nothing cut off, nothing raw.

Needs ``make book`` first and Chromium (see ``conftest.py``); every page is opened with the
network blocked, at 390 px (a phone: touch, 3x pixels) and 1280 px, in light and dark mode.
Each check measures the rendered page:

- every text the course or the theme draws has a contrast of at least 4.5:1 (WCAG AA)
  against what is behind it, in light and dark mode (computed from the colours of the
  rendered elements, transparency and opacity included);
- no display equation, table or output block hides more than 8 px of its content
  (``scrollWidth - clientWidth``), on a phone or a desktop;
- no raw TeX (``$...$``, ``\\(``, ``\\[``) and no Markdown backtick in any page's visible
  text (code excepted: cells' inputs and inline code show source on purpose), nor in the
  search page's results;
- code cells keep their lines whole (they scroll sideways; a wrapped line splits an
  identifier);
- one search field on each page, its magnifier clear of the query;
- one rule each for titles, citations, slider directions and figures in dark mode;
- a slider whose frame is still loading says so (a throttled connection).
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _site_pages import parametrize_pages, reader_pages

pytestmark = pytest.mark.site

PHONE, DESKTOP = 390, 1280
SCRUBBER = 'class="attnlab-explorer"'
MIN_CONTRAST = 4.5
MAX_HIDDEN = 8


def _site(config: pytest.Config) -> Path:
    return Path(config.getoption("--site-dir"))


def _pages(site: Path) -> list[Path]:
    return reader_pages(site, search=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    site = _site(metafunc.config)
    if "any_page" in metafunc.fixturenames:
        parametrize_pages(metafunc, "any_page", site, _pages(site))


def _need(page: Path | None) -> Path:
    if page is None:
        pytest.fail("no built page: run make book first")
    return page


_READY = """async () => {
    // MathJax has typeset every formula (when the book was built, or in the browser), and
    // _static/attnlab-tables.js has stacked the tables too wide for the column.
    const mathjax = document.querySelector('script[src*="mathjax"]');
    for (let i = 0; i < 200 && mathjax && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
        await new Promise((done) => setTimeout(done, 50));
    }
    if (mathjax) await MathJax.startup.promise;
    for (let i = 0; i < 100 && !document.documentElement.dataset.attnlabFitted; i++) {
        await new Promise((done) => setTimeout(done, 50));
    }
    // and the colours have settled (the theme fades them in when it switches to dark)
    await Promise.race([
        Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null))),
        new Promise((done) => setTimeout(done, 3000)),
    ]);
    return !!document.documentElement.dataset.attnlabFitted;
}"""


def _open(reader: Any, path: Path, width: int, dark: bool = False) -> Any:
    r = reader(width, dark=dark)
    page = r.page
    page.goto(path.as_uri(), wait_until="load")
    assert page.evaluate(_READY), f"{path.name}: the tables were never fitted"
    return page


# --------------------------------------------------------------------------- contrast

CONTRAST = """() => {
  // Every visible text node: its colour (with opacity) over the colours behind it (every
  // ancestor's background, composed from the page down), as WCAG 2 computes contrast.
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", {willReadFrequently: true});
  const cache = new Map();
  function rgba(css) {  // any CSS colour (rgb, oklch, color-mix, ...) as [r, g, b, a]
    if (!cache.has(css)) {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "rgba(0, 0, 0, 0)";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      cache.set(css, [d[0], d[1], d[2], d[3] / 255]);
    }
    return cache.get(css);
  }
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  function luminance(c) {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }
  const found = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    if (el.closest("mjx-assistive-mml, script, style, noscript, template")) continue;
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rect = range.getBoundingClientRect();
    if (rect.width < 1 || rect.height < 1) continue;
    const chain = [];
    let opacity = 1, clipped = false;
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      const r = e.getBoundingClientRect();
      if (s.overflow === "hidden" && (r.width <= 1 || r.height <= 1)) clipped = true;  // visually hidden
      opacity *= parseFloat(s.opacity);
      chain.push(e);
    }
    if (clipped) continue;
    let bg = [255, 255, 255];
    for (const e of chain.reverse()) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) bg = over(c, bg);
    }
    const c = rgba(getComputedStyle(el).color);
    const fg = over([c[0], c[1], c[2], c[3] * opacity], bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    found.push([Math.round(ratio * 100) / 100, n.textContent.trim().slice(0, 40),
                el.tagName.toLowerCase() + "." + String(el.className).split(" ").join("."),
                getComputedStyle(el).color, `rgb(${bg.map(Math.round).join(", ")})`]);
  }
  return found;
}"""


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_text_has_a_contrast_of_4_5_to_1(reader: Any, any_page: Path, dark: bool):
    page = _open(reader, _need(any_page), DESKTOP, dark)
    texts = page.evaluate(CONTRAST)
    assert len(texts) >= 10, f"only {len(texts)} texts found"
    low = sorted(t for t in texts if t[0] < MIN_CONTRAST)
    assert low == [], f"{len(low)} texts under {MIN_CONTRAST}:1, e.g. {low[:5]}"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize(
    "name",
    ["intro.html", "chapters/07_transformer.html", "exercises/02_similarity.html"],
)
def test_texts_have_a_contrast_of_4_5_to_1_on_a_phone(reader: Any, site: Path, name, dark):
    """The phone's own layout too: its header buttons, stacked tables, the score table."""
    page = _open(reader, site / name, PHONE, dark)
    texts = page.evaluate(CONTRAST)
    assert len(texts) >= 10, f"only {len(texts)} texts found"
    low = sorted(t for t in texts if t[0] < MIN_CONTRAST)
    assert low == [], f"{len(low)} texts under {MIN_CONTRAST}:1, e.g. {low[:5]}"


def test_the_score_table_and_checks_are_readable_in_dark_mode(reader: Any, site: Path):
    """The case that was invisible (1.01:1): the exercise names in the score table."""
    page = _open(reader, site / "exercises" / "02_similarity.html", DESKTOP, dark=True)
    texts = page.evaluate(CONTRAST)
    score = [t for t in texts if t[2].startswith("code") and t[1] in {"softmax", "dot"}]
    assert score, "no exercise name of the score table found"
    assert min(t[0] for t in score) >= 7, score
    boxes = page.locator(".attnlab-result")
    assert boxes.count() >= 5
    light = boxes.first.evaluate("(b) => getComputedStyle(b).backgroundColor")
    assert light not in {"rgb(245, 245, 245)", "rgb(232, 245, 233)"}, "a light box in dark mode"


NAME_BREAKS = """() => [...document.querySelectorAll(".attnlab-score td code")].map((code) => {
  // Where each rendered line of an exercise's name ends: the character before each break.
  const text = code.firstChild ? code.textContent : "";
  const ends = [];
  const range = document.createRange();
  let top = null;
  let i = 0;
  for (const node of code.childNodes) {
    if (node.nodeType !== Node.TEXT_NODE) continue;
    for (let k = 0; k < node.length; k++, i++) {
      range.setStart(node, k);
      range.setEnd(node, k + 1);
      const y = Math.round(range.getBoundingClientRect().top);
      if (top !== null && y > top + 2) ends.push(text[i - 1]);
      top = y;
    }
  }
  return [text, ends];
})"""


def test_exercise_names_wrap_only_after_an_underscore_on_a_phone(reader: Any, site: Path):
    """Chapter 3's score table showed ``self_attention_modul`` / ``e`` on a phone."""
    page = _open(reader, site / "exercises" / "03_qkv.html", PHONE)
    names = page.evaluate(NAME_BREAKS)
    assert len(names) >= 5, names
    bad = [(text, ends) for text, ends in names if any(end != "_" for end in ends)]
    assert bad == [], f"names split inside a word: {bad}"
    status = page.locator(".attnlab-score tr.attnlab-not-attempted td:nth-child(3)").first
    assert status.evaluate("(td) => td.getClientRects().length === 1 && td.offsetHeight < 40")


# --------------------------------------------------------------------------- overflow

HIDDEN = """() => {
  // What a reader cannot see without scrolling sideways inside a box: display equations,
  // tables (the article's and the outputs'), output blocks.
  const boxes = document.querySelectorAll(
    'mjx-container[display="true"], article table, div.cell_output div.output pre, ' +
    'div.cell_output div.output.text_html');
  const found = [];
  for (const box of boxes) {
    if (!box.checkVisibility()) continue;
    const article = box.closest("article") || document.body;
    const right = box.getBoundingClientRect().right - article.getBoundingClientRect().right;
    const hidden = Math.max(box.scrollWidth - box.clientWidth, Math.round(right));
    if (hidden > 0) {
      found.push([hidden, box.tagName.toLowerCase() + "." + String(box.className).split(" ").join("."),
                  (box.innerText || "").trim().slice(0, 60)]);
    }
  }
  return found;
}"""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_no_equation_table_or_output_hides_more_than_8_px(reader, any_page: Path, width):
    page = _open(reader, _need(any_page), width)
    hidden = [h for h in page.evaluate(HIDDEN) if h[0] > MAX_HIDDEN]
    assert hidden == [], f"{len(hidden)} boxes hide more than {MAX_HIDDEN} px: {hidden[:5]}"


def test_a_wide_table_is_stacked_on_a_phone_with_every_column(reader: Any, site: Path):
    """Chapter 7's families table lost its last column on a phone; stacked, each cell is
    headed by its column's title."""
    page = _open(reader, site / "chapters" / "07_transformer.html", PHONE)
    tables = page.locator("article table.attnlab-stacked")
    assert tables.count() >= 1, "no table was stacked on the phone"
    text = tables.first.inner_text()
    assert "self-attention mask" in text, text[:300]
    desktop = _open(reader, site / "chapters" / "07_transformer.html", DESKTOP)
    assert desktop.locator("article table.attnlab-stacked").count() == 0, "stacked on a desktop"


CODE_LINES = """() => [...document.querySelectorAll(
    "div.cell_input div.highlight pre, article div.highlight:not(.cell_output *) pre")]
  .filter((pre) => pre.checkVisibility())
  .map((pre) => {
    const s = getComputedStyle(pre);
    const lines = pre.textContent.replace(/\\n$/, "").split("\\n").length;
    const inner = pre.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom);
    return [lines, Math.round(inner / parseFloat(s.lineHeight)), s.whiteSpace,
            pre.textContent.split("\\n")[0].slice(0, 40)];
  })"""


def test_code_blocks_keep_their_lines_whole_on_a_phone(reader: Any, site: Path) -> None:
    pages = [p for p in _pages(site) if p.parent.name in {"chapters", "solutions"}]
    assert pages
    checked = 0
    for path in pages:
        page = _open(reader, path, PHONE)
        for lines, shown, white_space, first in page.evaluate(CODE_LINES):
            assert white_space == "pre", f"{path.name}: {first!r} wraps ({white_space})"
            assert shown == lines, f"{path.name}: {first!r}: {lines} lines shown as {shown}"
            checked += 1
    assert checked >= 100, f"only {checked} code blocks"


# --------------------------------------------------------------------------- raw text

RAW = """() => {
  // The visible text of each block, after MathJax; code (cells' inputs, inline code)
  // left out: code shows its source on purpose (notation.md shows the TeX not to write).
  const blocks = new Map();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest("script, style, noscript, template, mjx-container, .cell_input, code, " +
        "div.highlight:not(.cell_output *), dialog:not([open])")) continue;
    if (!el.checkVisibility()) continue;
    const block = el.closest("p, li, td, th, dt, dd, h1, h2, h3, h4, h5, h6, pre, summary, div") || el;
    blocks.set(block, (blocks.get(block) || "") + n.textContent);
  }
  return [...blocks.values()];
}"""

RAW_PATTERNS = {
    "$...$": re.compile(r"\$[^$\n]+\$"),
    "\\(": re.compile(r"\\\("),
    "\\[": re.compile(r"\\\["),
    "backtick": re.compile(r"`"),
}


def raw_findings(texts: list[str]) -> list[str]:
    """The texts that show TeX or Markdown as typed, with what gave them away."""
    found = []
    for text in texts:
        for name, pattern in RAW_PATTERNS.items():
            m = pattern.search(text)
            if m:
                found.append(f"{name}: ...{text[max(0, m.start() - 30) : m.end() + 30]}...")
                break
    return found


def test_raw_findings_finds_what_it_should() -> None:
    assert raw_findings(["replace `raise NotImplementedError(...)` with"]) != []
    assert raw_findings(["dividing by $\\sqrt{d}$ change"]) != []
    assert raw_findings(["Why divide by \\(\\sqrt{d}\\)?"]) != []
    assert raw_findings(["costs $5 and $6 in two lines\n"]) != []
    assert raw_findings(["Why divide by √d?", "a price: $5", "x = 1\n"]) == []


def test_no_raw_tex_or_markdown_in_visible_text(reader: Any, any_page: Path) -> None:
    page = _open(reader, _need(any_page), DESKTOP)
    found = raw_findings(page.evaluate(RAW))
    assert found == [], f"{len(found)} raw texts: {found[:5]}"


@pytest.fixture(scope="module")
def http_site(site: Path) -> Iterator[str]:
    """The website served over HTTP on localhost (the search page fetches each result's
    page for its snippet, which a page opened from disk may not)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a page closed while its frames were still loading

    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _served(browser: Any, width: int = DESKTOP, dark: bool = False) -> tuple[Any, Any]:
    phone = width < 600
    context = browser.new_context(
        viewport={"width": width, "height": 844 if phone else 900},
        device_scale_factor=3 if phone else 1,
        has_touch=phone,
        is_mobile=phone,
        color_scheme="dark" if dark else "light",
    )
    errors: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    return context, page


_SEARCH_DONE = """() => {
    const s = document.querySelector("#search-results .search-summary");
    return !!s && /found|did not match/.test(s.textContent)
        && [...document.querySelectorAll("#search-results li")].every((li) => li.querySelector("p.context"));
}"""


@pytest.mark.parametrize("query", ["softmax", "sqrt", "infinity", "mask"])
def test_search_results_show_no_raw_tex(browser: Any, http_site: str, query: str) -> None:
    context, page = _served(browser)
    try:
        page.goto(f"{http_site}/search.html?q={query}", wait_until="load")
        page.wait_for_function(_SEARCH_DONE, timeout=15000)
        results = page.locator("#search-results li")
        assert results.count() >= 1, f"no result for {query!r}"
        texts = page.evaluate(
            "() => [...document.querySelectorAll('#search-results li')].map((li) => li.innerText)"
        )
        assert raw_findings(texts) == [], raw_findings(texts)[:5]
    finally:
        context.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_search_results_have_a_contrast_of_4_5_to_1(browser, http_site: str, width, dark):
    context, page = _served(browser, width, dark)
    try:
        page.goto(f"{http_site}/search.html?q=softmax", wait_until="load")
        page.wait_for_function(_SEARCH_DONE, timeout=15000)
        page.evaluate(_READY)
        texts = page.evaluate(CONTRAST)
        snippets = [t for t in texts if t[2].startswith("p.context")]
        assert len(snippets) >= 20, f"only {len(snippets)} snippets"
        low = sorted(t for t in texts if t[0] < MIN_CONTRAST)
        assert low == [], f"{len(low)} texts under {MIN_CONTRAST}:1, e.g. {low[:5]}"
    finally:
        context.close()


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_search_from_disk_finds_pages_and_logs_no_error(reader: Any, site: Path, width: int):
    """A page opened from disk may not fetch another: the results come without snippets,
    and without the two console errors a result that Sphinx's search would log."""
    r = reader(width)
    r.page.goto((site / "search.html").as_uri() + "?q=softmax", wait_until="load")
    r.page.wait_for_function(
        "() => /found|did not match/.test("
        "(document.querySelector('#search-results .search-summary') || {}).textContent)",
        timeout=15000,
    )
    r.page.wait_for_timeout(500)  # a snippet's fetch would fail by now
    found = r.page.locator("#search-results li").count()
    assert found >= 20, f"'softmax' found on {found} pages"
    assert (r.errors, r.blocked) == ([], []), (r.errors[:3], r.blocked[:3])


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        ("Why divide by \\(\\sqrt{d}\\)?", "Why divide by √d?"),
        ("with \\(-\\infty\\) scores", "with −∞ scores"),
        ("\\(\\mathrm{softmax}(q k^\\top / \\sqrt{d})\\)", "softmax(qkᵀ/√d)"),
        ("\\(x_{t-1}\\) and \\(e^{x_i - m}\\)", "xₜ₋₁ and e^(xᵢ−m)"),
        ("\\(\\frac{1}{D}\\sum_j x_j\\)", "1/DΣⱼxⱼ"),
    ],
)
def test_search_makes_formulas_readable(browser: Any, http_site: str, tex: str, text: str):
    context, page = _served(browser)
    try:
        page.goto(f"{http_site}/search.html", wait_until="load")
        assert page.evaluate("(t) => window.attnlabReadableTeX(t)", tex).replace(" ", "") == (
            text.replace(" ", "")
        )
    finally:
        context.close()


# --------------------------------------------------------------------------- search field

SEARCH_CONTROLS = """() => [...document.querySelectorAll(
    "form.bd-search input, .search-button__button, .search-button-field")]
  .filter((e) => e.checkVisibility() && e.getBoundingClientRect().width > 0
                 && !e.closest("dialog:not([open])"))
  .map((e) => { const r = e.getBoundingClientRect();
                return [e.tagName.toLowerCase() + "." + String(e.className).split(" ").join("."),
                        r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth]; })"""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
@pytest.mark.parametrize(
    "name", ["chapters/02_similarity.html", "chapters/07_transformer.html", "search.html"]
)
def test_one_search_field_per_page(reader: Any, site: Path, width: int, name: str) -> None:
    """One search control, in view when the page opens (the sidebar's field was scrolled
    out of view on a desktop with the sidebar, to show the page's entry)."""
    page = _open(reader, site / name, width)
    controls = page.evaluate(SEARCH_CONTROLS)
    assert len(controls) == 1, f"{len(controls)} search controls: {controls}"
    assert controls[0][1], f"the search control is out of view: {controls[0][0]}"
    header = page.locator("header.bd-header")
    if width == DESKTOP and header.count():
        box = header.bounding_box()
        assert box is None or box["height"] == 0, "an empty header takes room on a desktop"


def test_the_magnifier_is_clear_of_the_query_on_a_phone(reader: Any, site: Path) -> None:
    r = reader(PHONE)
    r.page.goto((site / "search.html").as_uri() + "?q=softmax", wait_until="load")
    gap = r.page.evaluate(
        """() => {
        const icon = document.querySelector("form.bd-search .fa-magnifying-glass");
        const input = document.querySelector("form.bd-search input");
        const range = document.createRange();
        const style = getComputedStyle(input);
        return [icon.getBoundingClientRect().right,
                input.getBoundingClientRect().left + parseFloat(style.paddingLeft),
                input.value];
    }"""
    )
    icon_right, text_left, value = gap
    assert value == "softmax"
    assert icon_right <= text_left, (
        f"the magnifier ends at {icon_right}, the query starts at {text_left}"
    )


# --------------------------------------------------------------------------- consistency


def _h1(path: Path) -> str:
    m = re.search(r"<h1[^>]*>(.*?)</h1>", path.read_text(encoding="utf-8"), re.DOTALL)
    assert m, f"{path.name} has no title"
    return re.sub(r"<[^>]+>|¶|#", "", m[1]).strip()


def test_exercise_and_solution_titles_follow_one_rule(site: Path) -> None:
    """``Exercises: N. Title`` (and ``Solutions: ...``), the chapter's title up to its colon."""
    chapters = sorted((site / "chapters").glob("*.html"))
    assert chapters
    for chapter in chapters:
        short = _h1(chapter).split(":")[0]
        assert re.match(r"\d+\. ", short), short
        for part in ("exercises", "solutions"):
            path = site / part / chapter.name
            if path.is_file():
                assert _h1(path) == f"{part.capitalize()}: {short}", (path, _h1(path))


def test_citations_follow_one_style(site: Path) -> None:
    """(Author, year) everywhere: the chapters write it so, the bibliography's citations too."""
    bracketed = re.compile(r"\[[A-Z][^\]\[]{0,40}(?:et al\.)?,? \d{4}\]")
    after_comma = re.compile(r",\s*\([A-Z][^()]{0,40}, \d{4}\)")  # "an equation, (X, 2017)"
    for path in _pages(site):
        text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
        assert not bracketed.search(text), f"{path.name}: {bracketed.search(text)[0]}"
        assert not after_comma.search(text), f"{path.name}: {after_comma.search(text)[0]}"
    intro = re.sub(r"<[^>]+>", "", (site / "intro.html").read_text(encoding="utf-8"))
    assert "(Vaswani et al., 2017)" in intro


def test_numeric_sliders_increase_to_the_right(site: Path) -> None:
    import json

    checked = 0
    for path in sorted((site / "chapters").glob("*.html")):
        for raw in re.findall(r"^  var data = (\{.*\});$", path.read_text(encoding="utf-8"), re.M):
            data = json.loads(raw)
            for name, labels in zip(data["names"], data["labels"], strict=True):
                try:
                    values = [float(t.replace("−", "-")) for t in labels]
                except ValueError:
                    continue  # words, not numbers
                assert values == sorted(values), f"{path.name}: {name} runs {labels}"
                checked += 1
    assert checked >= 20, f"only {checked} numeric sliders"


FIGURES = """() => [...document.querySelectorAll("div.cell_output img, img.attnlab-frame")]
  .filter((img) => img.checkVisibility())
  .map((img) => { const s = getComputedStyle(img);
                  return [img.className || "static", s.filter, s.backgroundColor]; })"""


def test_every_figure_gets_one_treatment_in_dark_mode(reader: Any, site: Path) -> None:
    """Static figures and slider frames alike: on white paper, at full brightness."""
    page = _open(reader, site / "chapters" / "05_positional.html", DESKTOP, dark=True)
    figures = page.evaluate(FIGURES)
    kinds = {kind for kind, _, _ in figures}
    assert {"static", "attnlab-frame"} <= kinds, kinds
    for kind, filter_, background in figures:
        assert (filter_, background) == ("none", "rgb(255, 255, 255)"), (kind, filter_)


# --------------------------------------------------------------------------- slow sliders

SLIDER_STATE = """(root) => {
  const img = root.querySelector("img.attnlab-frame");
  return {busy: root.getAttribute("aria-busy") === "true", complete: img.complete,
          opacity: parseFloat(getComputedStyle(img).opacity),
          cue: getComputedStyle(root.querySelector(".attnlab-loading")).visibility,
          src: img.getAttribute("src"), label: root.querySelector(".attnlab-value").textContent};
}"""


def test_a_slider_says_when_its_frame_is_still_loading(browser: Any, http_site: str) -> None:
    """At 1.44 Mbit/s a frame takes about a second: until it is there, the old figure is
    dimmed and says "loading"; then the figure is the one the label names."""
    context, page = _served(browser, PHONE)
    try:
        page.goto(f"{http_site}/chapters/03_qkv.html", wait_until="load")
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": 150,
                "downloadThroughput": 1_440_000 / 8,
                "uploadThroughput": 750_000 / 8,
            },
        )
        root = page.locator("div.attnlab-explorer").first
        slider = root.locator("input.attnlab-slider").first
        slider.scroll_into_view_if_needed()
        slider.focus()
        before = root.evaluate(SLIDER_STATE)
        page.keyboard.press("ArrowRight")
        states = [root.evaluate(SLIDER_STATE)]
        for _ in range(80):  # up to 8 s
            page.wait_for_timeout(100)
            states.append(root.evaluate(SLIDER_STATE))
            if states[-1]["complete"] and not states[-1]["busy"]:
                break
        first = states[0]
        assert first["busy"] and not first["complete"], f"no cue at once: {first}"
        waiting = [s for s in states if not s["complete"]]
        assert all(s["busy"] for s in waiting), "a frame loaded with no cue"
        later = [s for s in waiting[3:]]  # after 300 ms
        assert later, f"the frame loaded in under 300 ms: {len(waiting)} polls"
        assert all(s["opacity"] < 1 and s["cue"] == "visible" for s in later), later[:2]
        assert states[-1]["complete"] and not states[-1]["busy"], f"still loading: {states[-1]}"
        page.wait_for_timeout(400)  # the figure fades back in
        last = root.evaluate(SLIDER_STATE)
        assert last["opacity"] == 1 and last["cue"] == "hidden", last
        assert last["src"] != before["src"] and last["label"] != before["label"], (before, last)
    finally:
        context.close()


# --------------------------------------------------------------------------- figure text

MIN_FIGURE_TEXT = 9.0
"""CSS pixels: the smallest text a figure may show on a phone (tick labels, legends, the
numbers written in cells and on bars); the page's body text is 16 px."""

SHOWN_FIGURES = """() => [...document.querySelectorAll("div.cell_output img[width], img.attnlab-frame")]
  .filter((img) => img.checkVisibility())
  .map((img) => {
    const root = img.closest(".attnlab-explorer");
    return [img.getAttribute("src"), img.getBoundingClientRect().width,
            parseFloat(img.getAttribute("width")), root ? root.id : null];
  })"""


def _text_sizes(png: Path) -> dict[str, float | None]:
    import json

    from PIL import Image

    with Image.open(png) as image:
        chunk = image.text.get("attnlab:text-px")  # written by attnlab.drawing.widgets
    assert chunk, (
        f"{png.name} does not record its text sizes (not drawn by attnlab.drawing.widgets)"
    )
    return json.loads(chunk)


def test_figure_text_is_at_least_9_px_on_a_phone(reader: Any, site: Path) -> None:
    """Each figure records its smallest text at its size on the page; the browser says how
    wide a phone shows it. Slider frames are shown as wide as the frame on the page."""
    import json

    smallest: list[tuple[float, str]] = []
    for path in sorted((site / "chapters").glob("*.html")):
        page = _open(reader, path, PHONE)
        html = path.read_text(encoding="utf-8")
        datas = [json.loads(raw) for raw in re.findall(r"^  var data = (\{.*\});$", html, re.M)]
        ids = re.findall(r'<div class="attnlab-explorer" id="([^"]+)"', html)
        by_id = dict(zip(ids, datas, strict=True))
        for src, shown, css_width, root in page.evaluate(SHOWN_FIGURES):
            scale = min(1.0, shown / css_width)
            files = [path.parent / src]
            if root:
                data = by_id[root]
                files = [path.parent / data["dir"] / f"{name}.png" for name in data["frames"]]
            for png in files:
                sizes = _text_sizes(png)
                px = sizes["min"] * scale
                smallest.append((round(px, 2), f"{path.name}: {png.name}"))
                note = sizes["annotation"]
                if note is not None:
                    smallest.append((round(note * scale, 2), f"{path.name}: {png.name} (numbers)"))
    assert len(smallest) >= 100, f"only {len(smallest)} figures"
    small = sorted(s for s in smallest if s[0] < MIN_FIGURE_TEXT)
    assert small == [], f"{len(small)} figures with text under {MIN_FIGURE_TEXT} px: {small[:5]}"
