"""The built website renders with no network: no remote script or stylesheet, a local MathJax.

Reads the HTML of ``make book`` (``_build/html``; another folder with ``--site-dir``) without a
browser, so it runs in well under a second; ``tests/test_site.py`` checks the same pages in
Chromium. Without a built website these tests skip locally and fail under CI. The Sphinx
extension that copies MathJax (``tools/attnlab_book.py``) is also tested on its own.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlsplit

import pytest
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parent.parent

MATH = 'class="math notranslate'
"""How Sphinx marks a formula in the HTML; a page with one loads MathJax."""

MATHJAX_SCRIPT = "startup.js"
MATHJAX_NEEDS = (
    "core.js",
    "input/tex.js",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
    "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
    "output/chtml/fonts/woff-v2/MathJax_Math-Italic.woff",
    "input/tex/extensions/boldsymbol.js",
    "LICENSE",
)
"""Files MathJax loads relative to its script (fonts, autoloaded TeX packages), and its licence."""

THEME_MODES = {"light", "dark", "auto"}
"""The colour modes pydata-sphinx-theme accepts; anything else logs a console error."""


class _Page(HTMLParser):
    """The scripts, stylesheets and default colour mode of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.stylesheets: list[str] = []
        self.default_mode: str | None = None
        self.seen_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        elif tag == "link" and {"stylesheet", "preload", "modulepreload"} & set(
            a.get("rel", "").split()
        ):
            self.stylesheets.append(a.get("href", ""))
        elif tag == "body" and not self.seen_body:
            self.seen_body = True
            self.default_mode = a.get("data-default-mode")


def _parse(page: Path) -> _Page:
    parsed = _Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    parsed.close()
    return parsed


def _pages(site: Path) -> list[Path]:
    skip = {"_static", "_sources", "_images"}
    pages = [p for p in sorted(site.rglob("*.html")) if skip.isdisjoint(p.relative_to(site).parts)]
    assert pages, f"no HTML page in {site}"
    return pages


def _is_remote(url: str) -> bool:
    return url.startswith("//") or urlsplit(url).scheme in {"http", "https"}


def _local_file(page: Path, url: str) -> Path:
    """The file a relative ``src``/``href`` of ``page`` points to (query string dropped)."""
    return (page.parent / unquote(urlsplit(url).path)).resolve()


@pytest.mark.parametrize(
    ("url", "remote"),
    [
        ("https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js", True),
        ("http://example.org/a.css", True),
        ("//unpkg.com/thebe@0.8.2/lib/index.js", True),
        ("../_static/mathjax/tex-mml-chtml.js?v=1", False),
        ("_static/styles/theme.css", False),
    ],
)
def test_is_remote(url: str, remote: bool) -> None:
    assert _is_remote(url) is remote


def test_no_page_loads_a_remote_script_or_stylesheet(site: Path) -> None:
    remote = {}
    for page in _pages(site):
        parsed = _parse(page)
        urls = [u for u in parsed.scripts + parsed.stylesheets if _is_remote(u)]
        if urls:
            remote[str(page.relative_to(site))] = urls
    assert remote == {}, "these pages need the network to render"


def test_local_assets_exist(site: Path) -> None:
    missing = {}
    for page in _pages(site):
        parsed = _parse(page)
        urls = [u for u in parsed.scripts + parsed.stylesheets if not _is_remote(u)]
        lost = [u for u in urls if not _local_file(page, u).is_file()]
        if lost:
            missing[str(page.relative_to(site))] = lost
    assert missing == {}, "these pages load files that are not in the website"


def test_formulas_are_typeset_when_the_book_is_built(site: Path) -> None:
    """Every formula is HTML in the page (MathJax ran when the book was built), so no page
    loads MathJax's script (0.76 MB); the web fonts its stylesheet names are in the site."""
    import re

    math_pages = [p for p in _pages(site) if MATH in p.read_text(encoding="utf-8")]
    assert site / "chapters" / "02_similarity.html" in math_pages, "chapter 2 shows no formula"
    typeset = 0
    for page in math_pages:
        where = page.relative_to(site)
        text = page.read_text(encoding="utf-8")
        mathjax = [u for u in _parse(page).scripts if "mathjax" in u.lower()]
        assert mathjax == [], f"{where} loads {mathjax}"
        formulas = re.findall(r'class="math notranslate nohighlight"[^>]*>(.{0,40})', text)
        untypeset = [f for f in formulas if not f.startswith("<mjx-container")]
        assert untypeset == [], f"{where}: {len(untypeset)} formulas left as TeX: {untypeset[:3]}"
        assert "<mjx-merror" not in text, f"{where} has a TeX error"
        typeset += len(formulas)
        fonts = re.findall(r'src: url\("([^"]+\.woff)"\)', text)
        assert fonts, f"{where}: MathJax's stylesheet names no font"
        for font in fonts:
            assert _local_file(page, font).is_file(), f"{where}: {font} is not in the website"
    assert typeset >= 1000, f"only {typeset} formulas"


def test_a_formula_is_typeset_with_its_hidden_mathml(book_ext: ModuleType) -> None:
    renderer = book_ext.MathRenderer(book_ext.mathjax_source())
    page = (
        "<html><head></head><body><p>"
        '<span class="math notranslate nohighlight">\\(\\sqrt{d} &lt; 1\\)</span></p>'
        '<div class="math notranslate nohighlight">\\[\\begin{aligned} a &amp;= b \\\\ '
        "c &amp;= d \\end{aligned}\\]</div>"
        '<script defer="defer" src="_static/mathjax/startup.js?v=1"></script></body></html>'
    )
    out = book_ext.typeset_page(page, renderer, "fonts")
    assert out.count("<mjx-container") == 2
    assert 'display="true"' in out.split("<div", 1)[1]
    assert "<msqrt><mi>d</mi></msqrt><mo>&lt;</mo><mn>1</mn>" in out  # what a screen reader gets
    assert "<mjx-merror" not in out and "\\(" not in out and "startup.js" not in out
    assert (
        '<style id="MJX-CHTML-styles">' in out and 'url("fonts/MathJax_Main-Regular.woff")' in out
    )
    # A page an earlier build typeset (Sphinx rewrites only changed pages) stays as it is:
    # typesetting it again took its HTML for TeX (pages of 9 MB).
    assert book_ext.typeset_page(out, renderer, "fonts") == out


def test_no_page_loads_the_font_awesome_script_or_preloads_its_fonts(site: Path) -> None:
    """Either theme pin's script that redraws the icons as SVG (0.17: scripts/fontawesome.js,
    0.15: vendor/fontawesome/6.5.2/js/all.min.js; 1.5 MB on every page) is dropped, and so are
    0.15's font preloads: the theme's stylesheet draws the icons from the web fonts."""
    themed = 0
    for page in _pages(site):
        parsed = _parse(page)
        where = page.relative_to(site)
        assert not [u for u in parsed.scripts if "fontawesome" in u.lower()], where
        fonts = [u for u in parsed.stylesheets if "/webfonts/" in u and "fontawesome" in u]
        assert not fonts, f"{where} preloads {fonts}"
        themed += any("pydata-sphinx-theme" in u for u in parsed.stylesheets)
    assert themed >= 10, f"only {themed} pages use the theme's stylesheet"


def test_pages_have_a_valid_theme_mode(site: Path) -> None:
    # Pages without the attribute are not themed (index.html only redirects to the intro).
    modes = {str(p.relative_to(site)): _parse(p).default_mode for p in _pages(site)}
    assert modes["chapters/02_similarity.html"] is not None, "the theme sets no default mode"
    wrong = {page: m for page, m in modes.items() if m is not None and m not in THEME_MODES}
    assert wrong == {}, f"pydata-sphinx-theme accepts only {sorted(THEME_MODES)}"


@pytest.fixture(scope="module")
def book_ext() -> ModuleType:
    """``tools.attnlab_book``, the Sphinx extension (imported as every tool is)."""
    from tools import attnlab_book

    return attnlab_book


def test_extension_copies_what_mathjax_loads(book_ext: ModuleType, tmp_path: Path) -> None:
    target = book_ext.copy_mathjax(book_ext.mathjax_source(), tmp_path / "_static")
    assert target == tmp_path / "_static" / "mathjax"
    assert (target / MATHJAX_SCRIPT).is_file()
    for name in MATHJAX_NEEDS:
        assert (target / name).is_file(), f"{name} was not copied"
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    assert size < 3_000_000, f"{size} bytes of MathJax: only the needed files are copied"


def test_extension_names_the_missing_package(
    book_ext: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book_ext, "MATHJAX_DIST", "no-such-package-attnlab")
    with pytest.raises(ExtensionError, match=r"no-such-package-attnlab.*pip install"):
        book_ext.mathjax_source()


def test_solution_markers_are_removed_and_the_answer_kept(book_ext: ModuleType) -> None:
    code = (
        "def dot(a, b):\n"
        '    """Dot product."""\n'
        "    ### BEGIN SOLUTION\n"
        "    return (a * b).sum(-1)\n"
        "    ### END SOLUTION\n"
        "answer = ...\n"
        "### BEGIN SOLUTION\n"
        "answer = 0.25\n"
        "### END SOLUTION"
    )
    assert book_ext.strip_solution_markers(code) == (
        'def dot(a, b):\n    """Dot product."""\n    return (a * b).sum(-1)\n'
        "answer = ...\nanswer = 0.25\n"
    )
    assert book_ext.strip_solution_markers("x = 1  # ### BEGIN SOLUTION\n") == (
        "x = 1  # ### BEGIN SOLUTION\n"
    )  # only a marker alone on its line


def test_reading_order_skips_the_solutions(book_ext: ModuleType) -> None:
    order = [
        "intro", "notation", "chapters/01_a", "exercises/01_a", "chapters/02_b",
        "exercises/02_b", "solutions/01_a", "solutions/02_b", "references",
    ]  # fmt: skip
    relations = {
        d: ["intro", order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None]
        for i, d in enumerate(order)
    }

    def neighbours(doc: str) -> tuple[str | None, str | None]:
        return book_ext.reading_neighbours(relations, doc)

    assert neighbours("chapters/01_a") == ("notation", "exercises/01_a")
    assert neighbours("exercises/01_a") == ("chapters/01_a", "chapters/02_b")
    assert neighbours("exercises/02_b") == ("chapters/02_b", "references")
    assert neighbours("references") == ("exercises/02_b", None)
    assert neighbours("solutions/01_a") == (None, "solutions/02_b")
    assert neighbours("solutions/02_b") == ("solutions/01_a", None)


def test_no_page_carries_widget_state_or_loads_the_search_index_for_nothing(site: Path) -> None:
    """The ipywidgets state (88-168 KB a chapter, nothing reads it) is dropped; the search
    code and its 115 KB index load on the search page only."""
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(site)
        assert "application/vnd.jupyter.widget-state+json" not in text, where
        index = [u for u in _parse(page).scripts if "searchindex" in u or "searchtools" in u]
        if page.name == "search.html":
            assert len(index) == 2, f"{where} must load the search code and index: {index}"
        else:
            assert index == [], f"{where} loads {index}"


def test_font_awesome_is_cut_to_the_icons_shown(site: Path) -> None:
    """Every icon a page names has its rule and its glyph; the fonts hold no others."""
    import re

    from fontTools.ttLib import TTFont

    sheet = next(
        p for p in (site / "_static" / "styles").glob("*.css") if "fa-bars" in p.read_text()
    )
    css = sheet.read_text(encoding="utf-8")
    rules = dict(
        (name, int(code, 16))
        for names, code in re.findall(
            r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\([0-9a-f]+)"\}', css
        )
        for name in re.findall(r"\.fa-([a-z0-9-]+):before", names)
    )
    assert len(rules) < 200, f"{len(rules)} icon rules kept"
    fonts = sorted(
        (site / "_static" / "vendor" / "fontawesome" / "webfonts").glob("*.attnlab.woff")
    )
    assert len(fonts) == 3, fonts
    assert 'format("woff2")' not in css and css.count('.attnlab.woff) format("woff")') == 3
    glyphs = set()
    for font in fonts:
        glyphs |= set(TTFont(font).getBestCmap())
        assert font.stat().st_size < 20_000, f"{font.name}: {font.stat().st_size} bytes"
    shown = set()
    for page in _pages(site):
        shown |= set(re.findall(r'class="[^"]*\bfa-([a-z0-9-]+)', page.read_text(encoding="utf-8")))
    icons = shown & set(rules)
    assert {"bars", "magnifying-glass"} <= icons, sorted(shown)
    missing = sorted(name for name in icons if rules[name] not in glyphs)
    assert missing == [], f"icons without a glyph: {missing}"


def test_summary_formulas_are_typeset(book_ext: ModuleType) -> None:
    raw = "<details>\n<summary>16. What does dividing by $\\sqrt{d}$ change?</summary>\n"
    assert book_ext.summary_math(raw) == (
        '<details>\n<summary>16. What does dividing by <span class="math notranslate '
        'nohighlight">\\(\\sqrt{d}\\)</span> change?</summary>\n'
    )
    assert book_ext.summary_math("<p>costs $5</p>") == "<p>costs $5</p>"  # only in summaries
    assert book_ext.summary_math("<summary>$$x$$ and \\$5</summary>") == (
        "<summary>$$x$$ and \\$5</summary>"
    )
