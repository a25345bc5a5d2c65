"""Sphinx extension for the attnlab book: formulas typeset when the book is built, MathJax
served from the website itself, not a CDN.

**Formulas typeset at build time.** When the book is built, MathJax 3 runs in V8 (the
``mini-racer`` package, a dev dependency) and every formula of every page becomes HTML,
with MathJax's stylesheet for that page's characters and its web fonts
(:func:`prerender_math`): a page loads no MathJax script (0.76 MB) and shows its formulas
at once. Without ``mini-racer`` the pages keep MathJax's script, as below.

Sphinx's ``sphinx.ext.mathjax`` loads MathJax from a CDN by default, so a reader without a
network sees raw LaTeX. This extension makes the built website self-contained: it points
``mathjax_path`` at a copy inside ``_static/`` and copies, at build time, the few MathJax 3
files the pages need from the installed Python package ``django-static-mathjax``
(MathJax 3.2.2, Apache-2.0):

- ``startup.js``, MathJax's loader, and the components it loads (``MATHJAX_COMPONENTS``,
  set in ``mathjax3_config``): the core, TeX input, HTML output with its font data, and
  the hidden MathML that screen readers read. 0.76 MB per page with math, where the usual
  all-in-one ``tex-mml-chtml.js`` is 1.17 MB: it adds MathML input, which the course does
  not use, and the right-click menu (0.43 MB);
- ``output/chtml/fonts/woff-v2/``, the fonts the output loads relative to its location;
- ``input/tex/extensions/``, the TeX packages it autoloads on first use
  (``\\boldsymbol``, ``\\color``, ``\\cancel``, ``\\bbox``, ...);
- ``LICENSE``, which the Apache licence asks to ship with the copy.

About 1.6 MB in all. The files are never committed and never put in the repository's
``_static/`` folder: Jupyter Book adds every ``.js`` file found there to every page, which
would load MathJax twice.

Why hand-written: no maintained Sphinx extension ships MathJax for offline use
(``sphinx.ext.mathjax`` only takes a path or URL, and ``sphinx.ext.imgmath`` renders images
with a LaTeX installation instead), so this module does the copy itself. It is registered in
``_config.yml`` under ``sphinx: local_extensions``, so a bare ``jupyter-book build .`` uses it.
It sets ``mathjax_path`` itself: do not set it in ``_config.yml``.

It also keeps the notebook execution cache honest. jupyter-cache keys a notebook by its code
cells only, so after an edit to ``lib/attnlab`` the book would reuse outputs computed by the
old library. The rule that prevents it lives in ``tools/execute_notebooks.py`` (``make
notebooks``), which fills and reads the same cache: :func:`invalidate_if_library_changed`
stores a hash of the library next to the cache and empties the cache when the library has
changed. The book applies it before reading any page, so the notebooks are executed once for
the website and the committed files alike.

Two choices about what a learner sees, tested in ``tests/test_site.py`` and
``tests/test_book_offline.py``:

- **Solutions off the reading path.** The "previous"/"next" links at the bottom of a page
  follow the reading order: each chapter, its exercises, the next chapter. The worked
  solutions (a separate part of the table of contents) are reached by the links on the
  exercise pages; a solutions page's "previous"/"next" lead to the other solutions. The
  table of contents cannot say this, so :func:`_reading_order` rewrites the two links.
- **No solution markers.** ``### BEGIN SOLUTION`` / ``### END SOLUTION`` delimit the
  answers for ``tools/make_exercises.py``; :func:`_strip_solution_markers` removes those
  lines from the code shown on the website (the notebooks keep them).

Touches to the written pages, each small and each tested in ``tests/test_site.py``,
``tests/test_site_phone.py`` or ``tests/test_book_offline.py``:

- **No thebe.** Jupyter Book always loads sphinx-thebe, whose inline config script Sphinx 7.4
  writes twice into every page (the second ``const THEBE_JS_URL`` throws a SyntaxError).
  The course offers no live code on the website (Colab and Binder are the launch buttons),
  so :func:`_drop_thebe` removes thebe's scripts from every page.
- **No fontawesome.js.** pydata-sphinx-theme 0.17 adds a 1.45 MB script to every page that
  redraws its ~20 icons as SVG (0.15, Python 3.10's pin, the same as ``all.min.js``).
  Its stylesheet already draws the same icons from the Font Awesome web fonts it ships
  (157 KB for the solid set, loaded once), so :func:`drop_fontawesome_script` removes the
  script from the written pages.
- **Figures sized before they load.** The notebooks draw figures with twice the pixels
  (``InlineBackend.figure_formats = ["retina"]``, set in every notebook's setup cell), and
  IPython records each figure's size on the page in the output's metadata. myst-nb turns it
  into ``style="width: Wpx; height: Hpx"``, a fixed height that squashes the figure when a
  phone's column narrows it. :func:`size_attributes` writes the two numbers as ``width``
  and ``height`` attributes instead: the browser reserves the figure's box (no layout
  jump while it loads) and scales it with the column (``_static/attnlab.css``).
- **Slider frames in files.** A scrubber's frames are base64 inside its script (a notebook
  output is one file); :func:`externalize_frames` moves them into ``_images/frames/`` so a
  page downloads only the frames a reader looks at.
- **Nothing loaded for nothing.** :func:`lighten` drops the ipywidgets state myst-nb
  embeds (the website shows scrubbers, never live widgets), the search code and index
  that pydata-sphinx-theme 0.17 loads on every page (only the search page needs them) and
  sphinx-design's assets where no element uses them; :func:`subset_fontawesome` keeps of
  Font Awesome only the icons the website shows.
- **One search field.** :func:`_one_search_field` keeps pydata-sphinx-theme from adding a
  header that holds only a second search field (``_static/attnlab.css`` hides the others
  on the search page, which has its own).
- **Formulas in folded questions.** ``$...$`` in a ``<summary>`` (raw HTML, which MyST
  leaves alone) is made a formula MathJax typesets (:func:`summary_math`), as Jupyter
  and Colab do.
- **Round-bracket citations.** ``bibtex_reference_style: author_year_round`` (registered
  here) cites "(Vaswani et al., 2017)", as the chapters write it.
- **The menu on phones.** pydata-sphinx-theme 0.17.1 and sphinx-book-theme 1.3 bind their
  sidebar toggles with ``document.querySelector(".primary-toggle")``, the first of two
  buttons, which is hidden below 992 px: the visible button does nothing (upstream
  pydata-sphinx-theme issue #2451). ``_static/attnlab-toggles.js`` forwards a click on
  any other toggle to the bound one. Remove it once the theme binds every toggle.
  (pydata-sphinx-theme 0.15 and sphinx-book-theme 1.1, Python 3.10's pin, have one toggle
  of each kind, slide the sidebars in from the side and need nothing: the script finds
  nothing to forward there.)
"""

from __future__ import annotations

import base64
import hashlib
import html
import importlib.metadata
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

from tools.execute_notebooks import invalidate_if_library_changed

logger = logging.getLogger(__name__)

MATHJAX_DIST = "django-static-mathjax"
"""The Python package (on PyPI) that holds a full MathJax 3 release."""

MATHJAX_ROOT = "mathjax/static/mathjax/es5"
"""Where the package keeps MathJax's browser components, relative to site-packages."""

MATHJAX_DIR = "mathjax"
"""The folder under the website's ``_static/`` that receives the copy."""

MATHJAX_SCRIPT = "startup.js"
"""The script a page loads: MathJax's loader, which then loads ``MATHJAX_COMPONENTS``."""

MATHJAX_COMPONENTS = ("input/tex", "output/chtml", "a11y/assistive-mml")
"""What the loader loads (with their dependencies: ``core``, the output's font data)."""

MATHJAX_FILES = (
    MATHJAX_SCRIPT,
    "core.js",
    *(f"{name}.js" for name in MATHJAX_COMPONENTS),
    "output/chtml/fonts/tex.js",
    "output/chtml/fonts/woff-v2",
    "input/tex/extensions",
)
"""What the pages need, relative to ``MATHJAX_ROOT`` (and to the copy)."""


def mathjax_source() -> Path:
    """The installed MathJax 3 ``es5`` folder.

    Returns:
        The folder holding ``startup.js`` and the other components.

    Raises:
        ExtensionError: if ``django-static-mathjax`` is not installed or lacks a needed file.
    """
    install = "pip install -c constraints.txt -e '.[dev]'"
    try:
        dist = importlib.metadata.distribution(MATHJAX_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise ExtensionError(
            f"attnlab_book: the website serves MathJax itself, from the Python package "
            f"{MATHJAX_DIST}, which is not installed; run: {install}"
        ) from None
    root = Path(str(dist.locate_file(MATHJAX_ROOT)))
    missing = [name for name in MATHJAX_FILES if not (root / name).exists()]
    if missing:
        raise ExtensionError(
            f"attnlab_book: {MATHJAX_DIST} {dist.version} lacks {', '.join(missing)} "
            f"under {root}; reinstall it: {install}"
        )
    return root


def copy_mathjax(source: Path, static_dir: Path) -> Path:
    """Copy the MathJax files the pages need into a website's ``_static`` folder.

    Args:
        source: the MathJax ``es5`` folder (see ``mathjax_source``).
        static_dir: the built website's ``_static`` folder.

    Returns:
        The folder that now holds ``startup.js``.
    """
    target = static_dir / MATHJAX_DIR
    for name in MATHJAX_FILES:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, dirs_exist_ok=True)
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)
    licence = source.parent / "LICENSE"
    if licence.is_file():
        shutil.copy2(licence, target / "LICENSE")
    return target


def _use_local_mathjax(app: Sphinx, config: Any) -> None:
    # Relative to _static/ (Sphinx's rule for a mathjax_path that is not a URL).
    config.mathjax_path = f"{MATHJAX_DIR}/{MATHJAX_SCRIPT}"
    # Sphinx writes this as `window.MathJax = {...}` before the script; myst-parser adds
    # its options to the same dict.
    mathjax = dict(config.mathjax3_config or {})
    mathjax["loader"] = {**mathjax.get("loader", {}), "load": list(MATHJAX_COMPONENTS)}
    config.mathjax3_config = mathjax


def _install_mathjax(app: Sphinx) -> None:
    # Before any page is written, so that Sphinx can stamp the script URL with its checksum.
    if app.builder.format != "html":
        return
    target = copy_mathjax(mathjax_source(), Path(app.outdir) / "_static")
    logger.info("attnlab_book: MathJax served locally from %s", target)


def _invalidate_stale_cache(app: Sphinx, config: Any) -> None:
    """Empty the notebook execution cache when ``lib/attnlab`` changed since it was filled."""
    cache_path = getattr(config, "nb_execution_cache_path", "")
    package_dir = Path(app.srcdir) / "lib" / "attnlab"
    if not cache_path or not package_dir.is_dir():
        return
    cache = Path(cache_path)
    if not cache.is_absolute():
        cache = Path(app.srcdir) / cache
    filled = cache.exists()
    if invalidate_if_library_changed(cache, package_dir):
        if filled:
            logger.info("attnlab_book: lib/attnlab changed; emptied the execution cache %s", cache)
        app.attnlab_lib_changed = True  # read by _reexecute_notebooks


def _reexecute_notebooks(app: Sphinx, env: Any, added: Any, changed: Any, removed: Any) -> list:
    """After a library change, re-read every notebook (Sphinx would keep the old doctrees)."""
    if not getattr(app, "attnlab_lib_changed", False):
        return []
    return [d for d in env.found_docs if str(env.doc2path(d)).endswith(".ipynb")]


def _is_thebe(script: Any) -> bool:
    """Is this page script one of sphinx-thebe's (its file or its inline config)?"""
    filename = str(getattr(script, "filename", "") or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return "thebe" in filename or "THEBE_JS_URL" in body


def _drop_thebe(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any):
    """Remove sphinx-thebe's scripts from a page (the course offers no live code here)."""
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [s for s in scripts if not _is_thebe(s)]


FONTAWESOME_SCRIPT = re.compile(
    r'[ \t]*<script[^>]*src="[^"]*'
    r'(?:scripts/fontawesome\.js|vendor/fontawesome/[^"/]+/js/all\.min\.js)'
    r'[^"]*"[^>]*>\s*</script>\n?'
)
"""pydata-sphinx-theme's Font Awesome script tag: 0.17's ``<script defer
src=".../scripts/fontawesome.js?digest=...">``, or 0.15's (Python 3.10's pin)
``<script src=".../vendor/fontawesome/6.5.2/js/all.min.js?digest=...">``, the same 1.49 MB
(0.54 MB gzip) SVG redrawing beside the same stylesheet (0.15 links Font Awesome's
``all.min.css``, which holds the icons and their ``@font-face``)."""


FONT_PRELOAD = re.compile(r'[ \t]*<link rel="preload" as="font"[^>]*fontawesome[^>]*>\n?')
"""pydata-sphinx-theme 0.15's (Python 3.10's pin) ``<link rel="preload" as="font" crossorigin>``
for three Font Awesome fonts: a CORS request that fails on a page opened from disk (an
error in the console), and 0.4 MB downloaded whether the page shows an icon of a font or
not. Without it the stylesheet's ``@font-face`` loads the fonts the page uses, as 0.17 does."""


def drop_fontawesome_script(page: str) -> str:
    """``page`` without the fontawesome.js tag (the stylesheet's web fonts draw the icons)
    and without the themes' preloading of those fonts."""
    return FONT_PRELOAD.sub("", FONTAWESOME_SCRIPT.sub("", page))


SIZED_IMAGE = re.compile(
    r'(<img\b[^>]*?)\sstyle="width:\s*(\d+(?:\.\d+)?)px;\s*height:\s*(\d+(?:\.\d+)?)px;?"'
)
"""An ``<img>`` whose size docutils wrote as a style (from a figure's output metadata)."""


def size_attributes(page: str) -> str:
    """``page`` with each image's fixed style size written as ``width``/``height`` attributes.

    ``<img src="a.png" style="width: 320px; height: 240px;" />`` becomes
    ``<img src="a.png" width="320" height="240" />``: the same size and aspect ratio, which
    a narrower column may now shrink (the attributes give the ratio, CSS the height).
    """
    return SIZED_IMAGE.sub(
        lambda m: f'{m[1]} width="{round(float(m[2]))}" height="{round(float(m[3]))}"', page
    )


FRAMES_DIR = "_images/frames"
"""Where the website keeps the slider frames, one PNG file per distinct frame."""

_EXPLORER_DATA = re.compile(r"^(  var data = )(\{.*\});$", re.MULTILINE)
"""The one line of a scrubber's script that holds its data (``attnlab.drawing.widgets._JS``)."""

_FIRST_FRAME = re.compile(
    r'(<img class="attnlab-frame" src=")data:image/png;base64,([A-Za-z0-9+/=]+)(")'
)


def externalize_frames(page: str, page_dir: Path, outdir: Path) -> str:
    """``page`` with its slider frames moved out of the HTML into PNG files.

    A scrubber made by ``attnlab.drawing.widgets.explore`` carries every frame as base64 in its
    script, so that a notebook's output is one self-contained file. On the website that
    would make a reader download every frame of every slider (a third larger as base64)
    before the page is usable. Here each frame becomes ``_images/frames/<sha256>.png``
    (content-addressed: a frame shared by two pages or two sliders is stored once), the
    script gets the folder (``data.dir``, relative to the page) and the file names, and
    the first ``<img>`` points at its file. The page then loads the frame it shows; the
    scrubber's script loads the others when the reader reaches for a slider.

    Args:
        page: the HTML of one written page.
        page_dir: the folder of that page in the built website.
        outdir: the built website's root folder.

    Returns:
        The page, unchanged if it has no scrubber.
    """
    target = outdir / FRAMES_DIR

    def store(b64: str) -> str:
        data = base64.b64decode(b64)
        name = hashlib.sha256(data).hexdigest()[:20]
        path = target / f"{name}.png"
        if not path.exists():
            target.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return name

    rel = Path(os.path.relpath(target, page_dir)).as_posix() + "/"

    def script(m: re.Match) -> str:
        data = json.loads(m[2])
        if "dir" in data or not isinstance(data.get("frames"), list):
            return m[0]
        data["frames"] = [store(b64) for b64 in data["frames"]]
        data["dir"] = rel
        payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
        return m[1] + payload + ";"

    page = _EXPLORER_DATA.sub(script, page)
    return _FIRST_FRAME.sub(lambda m: f"{m[1]}{rel}{store(m[2])}.png{m[3]}", page)


WIDGET_STATE = re.compile(
    r'[ \t]*<script type="application/vnd\.jupyter\.widget-state\+json">.*?</script>\n?', re.DOTALL
)
"""The ipywidgets state myst-nb writes into a page whose notebook recorded widgets: what a
widget manager would need to draw the live sliders. The website shows the scrubbers
instead and loads no widget manager, so this is dead weight (88-168 KB on a chapter page,
slider frames included as base64)."""

SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
    r'searchindex\.js)[^"]*"></script>\n?'
)
"""pydata-sphinx-theme 0.17 loads Sphinx's search code and the whole search index (115 KB)
on every page, for its search-as-you-type box, which the course does not turn on: the
search field leads to the search page, which loads them itself."""

DESIGN_ASSETS = re.compile(
    r'[ \t]*<(?:link rel="stylesheet" type="text/css" href="[^"]*'
    r'(?:sphinx-design\.min\.css|sphinx-thebe\.css)[^"]*" />|'
    r'script[^>]*src="[^"]*design-tabs\.js[^"]*"></script>)\n?'
)
"""sphinx-design's stylesheet and tab script (62 KB) and sphinx-thebe's stylesheet, which
Jupyter Book loads on every page: dropped from pages that use no ``sd-`` element (thebe is
dropped altogether, see :func:`_drop_thebe`)."""


def lighten(page: str, is_search_page: bool) -> str:
    """``page`` without what it loads for nothing: the widget state, the search code and
    index (except on the search page), sphinx-design's assets where no element uses them."""
    page = WIDGET_STATE.sub("", page)
    if not is_search_page:
        page = SEARCH_SCRIPTS.sub("", page)
    if not re.search(r'class="[^"]*\bsd-', page):
        page = DESIGN_ASSETS.sub("", page)
    return page


FA_WEBFONTS = "vendor/fontawesome/webfonts"
"""Where the theme keeps the Font Awesome fonts, under the website's ``_static/``."""

_FA_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\([0-9a-f]+)"\}')
_FA_CLASS = re.compile(r"\bfa-([a-z0-9-]+)")
_CSS_CODEPOINT = re.compile(r'"\\(f[0-9a-f]{3}|e[0-9a-f]{3})"')


def used_icons(outdir: Path) -> set[str]:
    """The Font Awesome icon names (``bars``, ``magnifying-glass``, ...) any built page or
    script of the website names in a class."""
    names: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]:
        if FA_WEBFONTS in path.as_posix() or "mathjax" in path.parts:
            continue
        names |= set(_FA_CLASS.findall(path.read_text(encoding="utf-8", errors="ignore")))
    return names


def subset_fontawesome(outdir: Path) -> dict[str, int]:
    """Keep of Font Awesome only the icons the website shows.

    The theme's stylesheet holds a rule for each of Font Awesome's ~1,900 icons (72 KB) and
    its fonts every glyph (274 KB for the solid and brand sets), for the ~20 icons a page
    shows. This keeps the rules of the icons that a page or script names (see
    :func:`used_icons`) and, in the fonts, their glyphs and every glyph another stylesheet
    rule draws by code point (``content: "\\f105"``); the fonts are written as WOFF files
    next to the originals, and the ``@font-face`` rules point at them.

    Returns:
        The bytes saved, by file name (empty when the theme has no Font Awesome).
    """
    from fontTools import subset

    static = outdir / "_static"
    sheets = [p for p in (static / "styles").glob("*.css") if _FA_RULE.search(p.read_text())]
    fonts = static / FA_WEBFONTS
    if not sheets or not fonts.is_dir():
        return {}
    names = used_icons(outdir)
    saved: dict[str, int] = {}
    codepoints: set[int] = set()
    kept: list[int] = []

    def keep(m: re.Match) -> str:
        selectors = [sel for sel in m[1].split(",") if sel]
        if any(sel[len(".fa-") : -len(":before")] in names for sel in selectors):
            kept.append(int(m[2], 16))
            return m[0]
        return ""

    for sheet in sheets:
        css = sheet.read_text(encoding="utf-8")
        lean = _FA_RULE.sub(keep, css)
        rest = _FA_RULE.sub("", lean)
        codepoints |= {int(c, 16) for c in _CSS_CODEPOINT.findall(rest)}
        saved[sheet.name] = len(css.encode()) - len(lean.encode())
        sheet.write_text(lean, encoding="utf-8")
    codepoints |= set(kept)
    for other in static.rglob("*.css"):
        if other not in sheets and "mathjax" not in other.parts:
            css = other.read_text(encoding="utf-8", errors="ignore")
            codepoints |= {int(c, 16) for c in _CSS_CODEPOINT.findall(css)}
    for ttf in sorted(fonts.glob("*.ttf")):
        options = subset.Options()
        options.flavor = "woff"
        options.layout_features = ["*"]
        font = subset.load_font(str(ttf), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(codepoints))
        subsetter.subset(font)
        lean_font = ttf.with_name(ttf.stem + ".attnlab.woff")
        subset.save_font(font, str(lean_font), options)
        woff2 = ttf.with_suffix(".woff2")
        saved[woff2.name] = woff2.stat().st_size - lean_font.stat().st_size
    for sheet in sheets:
        css = sheet.read_text(encoding="utf-8")
        css = re.sub(
            r'url\(([^)]*/webfonts/)([a-z0-9-]+)\.woff2\) format\("woff2"\)',
            r'url(\1\2.attnlab.woff) format("woff")',
            css,
        )
        sheet.write_text(css, encoding="utf-8")
    return saved


MATHJAX_RENDERER = (
    "startup.js",
    "core.js",
    "adaptors/liteDOM.js",
    "input/tex-full.js",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
)
"""MathJax's components that typeset at build time, relative to ``MATHJAX_ROOT``: the TeX
input with every extension (nothing to load on demand), HTML output, the hidden MathML that
screen readers read, and MathJax's own DOM for a page-less JavaScript engine."""

FONTS_PLACEHOLDER = "attnlab-mathjax-fonts"
"""Where the fonts are, in the stylesheet MathJax writes; each page gets its own relative path."""

_MATHJAX_SETUP = """
var window = this, global = this;
var MathJax = {
  loader: {load: []},
  startup: {typeset: false, adaptor: "liteAdaptor", handler: "HTMLHandler", document: ""},
  chtml: {fontURL: "FONTS"},
};
""".replace("FONTS", FONTS_PLACEHOLDER)

_MATHJAX_RENDER = """
function attnlabTypeset(items) {
  var adaptor = MathJax.startup.adaptor;
  MathJax.startup.output.clearCache();  // the stylesheet of this page's characters only
  var html = items.map(function (item) {
    return adaptor.outerHTML(MathJax.tex2chtml(item[0], {display: item[1]}));
  });
  return JSON.stringify({html: html, css: adaptor.textContent(MathJax.chtmlStylesheet())});
}
"""

MATH_ELEMENT = re.compile(
    r'(<(span|div) class="math notranslate nohighlight"[^>]*>)([^<]*)(</\2>)', re.DOTALL
)
"""A formula as Sphinx writes it: ``\\(...\\)`` in a ``<span>``, ``\\[...\\]`` in a ``<div>``
(escaped TeX, no tag inside: a formula typeset already is HTML and is not matched again)."""

MATHJAX_SCRIPTS = re.compile(
    r"[ \t]*<script>window\.MathJax = .*?</script>\n?|"
    r'[ \t]*<script[^>]*src="[^"]*mathjax/startup\.js[^"]*"></script>\n?',
    re.DOTALL,
)


class MathRenderer:
    """MathJax 3 in V8 (the ``mini-racer`` package): TeX to HTML when the book is built.

    A page then needs no MathJax script (0.76 MB, and the formulas would appear only once
    it had run): its formulas are HTML and CSS, with MathJax's web fonts.
    """

    def __init__(self, source: Path) -> None:
        from py_mini_racer import MiniRacer

        self._js = MiniRacer()
        self._js.eval(_MATHJAX_SETUP)
        for name in MATHJAX_RENDERER:
            self._js.eval((source / name).read_text(encoding="utf-8"))
        self._js.eval("MathJax.startup.defaultReady();" + _MATHJAX_RENDER)

    def typeset(self, formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
        """``(TeX, display)`` pairs -> their HTML and the stylesheet they need."""
        out = json.loads(self._js.call("attnlabTypeset", [list(f) for f in formulas]))
        return out["html"], out["css"]


def typeset_page(page: str, renderer: MathRenderer, fonts: str) -> str:
    """``page`` with every formula typeset, MathJax's stylesheet in its head (its fonts at
    ``fonts``, relative to the page) and no MathJax script; unchanged without formulas."""
    found = list(MATH_ELEMENT.finditer(page))
    if not found or 'id="MJX-CHTML-styles"' in page:
        # no formula, or typeset by an earlier build (Sphinx rewrites only the pages whose
        # source changed; the others keep their HTML, and a second pass would typeset the
        # HTML itself as TeX)
        return MATHJAX_SCRIPTS.sub("", page)
    formulas = []
    for m in found:
        tex = html.unescape(m[3]).strip()
        display = tex.startswith("\\[")
        formulas.append((tex[2:-2].strip() if tex[:2] in ("\\(", "\\[") else tex, display))
    rendered, css = renderer.typeset(formulas)
    out, end = [], 0
    for m, math in zip(found, rendered, strict=True):
        out += [page[end : m.start()], m[1], math, m[4]]
        end = m.end()
    out.append(page[end:])
    page = MATHJAX_SCRIPTS.sub("", "".join(out))
    css = "\n".join(line.strip() for line in css.replace(FONTS_PLACEHOLDER, fonts).splitlines())
    style = f'<style id="MJX-CHTML-styles">\n{css}\n</style>\n'
    return page.replace("</head>", style + "</head>", 1)


def prerender_math(outdir: Path) -> int:
    """Typeset the formulas of every page of the built website (see :class:`MathRenderer`).

    Returns:
        How many formulas were typeset; 0 (the pages keep MathJax's script, which typesets
        them in the browser) when ``mini-racer`` is not installed.
    """
    try:
        renderer = MathRenderer(mathjax_source())
    except ImportError:
        logger.info("attnlab_book: mini-racer is not installed; MathJax typesets in the browser")
        return 0
    fonts_dir = outdir / "_static" / MATHJAX_DIR / "output" / "chtml" / "fonts" / "woff-v2"
    count = 0
    for path in sorted(outdir.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        if "math notranslate" not in text and "mathjax" not in text:
            continue
        fonts = Path(os.path.relpath(fonts_dir, path.parent)).as_posix()
        lean = typeset_page(text, renderer, fonts)
        count += len(MATH_ELEMENT.findall(text))
        if lean != text:
            path.write_text(lean, encoding="utf-8")
    return count


def _rewrite_pages(app: Sphinx, exception: Exception | None) -> None:
    """The last touches to every written page: no fontawesome.js, image size attributes,
    nothing loaded for nothing (:func:`lighten`), slider frames in files; then Font Awesome
    cut down to the icons the website shows (:func:`subset_fontawesome`)."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for path in outdir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        lean = size_attributes(drop_fontawesome_script(text))
        lean = lighten(lean, is_search_page=path == outdir / "search.html")
        if "attnlab-explorer" in lean:
            lean = externalize_frames(lean, path.parent, outdir)
        if lean != text:
            path.write_text(lean, encoding="utf-8")
    formulas = prerender_math(outdir)
    logger.info("attnlab_book: %d formulas typeset", formulas)
    saved = subset_fontawesome(outdir)
    logger.info("attnlab_book: Font Awesome subset, %d bytes saved", sum(saved.values()))


SOLUTION_MARKER = re.compile(r"^[ \t]*### (?:BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)
"""nbgrader's markers around an answer in ``solutions/``, each alone on its line."""


def strip_solution_markers(code: str) -> str:
    """``code`` without its ``### BEGIN/END SOLUTION`` lines (the answer itself stays)."""
    return SOLUTION_MARKER.sub("", code)


def _strip_solution_markers(app: Sphinx, doctree: Any) -> None:
    """The solutions pages show the answers, not the markers that delimit them."""
    from docutils import nodes

    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if "SOLUTION" in text and SOLUTION_MARKER.search(text):
            lean = strip_solution_markers(text)
            block.rawsource = lean
            block.children = [nodes.Text(lean)]


def is_solution(docname: str | None) -> bool:
    """Is ``docname`` a worked-solutions page (``solutions/NN_slug``)?"""
    return bool(docname) and docname.startswith("solutions/")


def reading_neighbours(relations: dict, docname: str) -> tuple[str | None, str | None]:
    """The previous and next pages of ``docname`` in the reading order.

    The reading order is the table of contents without the worked solutions: chapter,
    its exercises, the next chapter, ... A solutions page's neighbours are the solutions
    pages before and after it. ``relations`` is Sphinx's ``{docname: [parent, prev, next]}``.
    """
    own = is_solution(docname)

    def walk(start: str | None, step: int) -> str | None:
        seen = set()
        while start is not None and start not in seen and is_solution(start) != own:
            seen.add(start)
            start = relations.get(start, [None, None, None])[step]
        return start

    _, prev, next_ = relations.get(docname, [None, None, None])
    return walk(prev, 1), walk(next_, 2)


def _reading_order(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any):
    """Point the "previous" and "next" links along the reading order (no solutions)."""
    relations = app.env.collect_relations()
    if pagename not in relations:
        return
    neighbours = reading_neighbours(relations, pagename)
    for key, docname in zip(("prev", "next"), neighbours, strict=True):
        if docname is None:
            context[key] = None
        elif not context.get(key) or context[key].get("link") != app.builder.get_relative_uri(
            pagename, docname
        ):
            title = app.env.titles[docname].astext() if docname in app.env.titles else docname
            context[key] = {
                "link": app.builder.get_relative_uri(pagename, docname),
                "title": html.escape(title),
            }


def _one_search_field(app: Sphinx, config: Any) -> None:
    """No search field in the header: the sidebar has one (a desktop), the article header
    its magnifier (a phone).

    pydata-sphinx-theme 0.16+ puts a search field in the header unless ``navbar_persistent``
    is set in ``html_theme_options``; sphinx-book-theme empties it in its ``theme.conf``,
    which that check does not read, so a desktop showed a 64 px header holding only a second
    search field. Jupyter Book writes ``html_theme_options`` from ``_config.yml``'s ``html``
    keys; this adds the one option it lacks.
    """
    options = dict(config.html_theme_options or {})
    options.setdefault("navbar_persistent", [])
    config.html_theme_options = options


def register_round_citations() -> None:
    """``bibtex_reference_style: author_year_round``: sphinxcontrib-bibtex's author-year
    citations in round brackets, "(Vaswani et al., 2017)", as the chapters write them."""
    from dataclasses import dataclass, field

    import sphinxcontrib.bibtex.plugin as plugin
    from sphinxcontrib.bibtex.style.referencing import BracketStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    def round_brackets() -> BracketStyle:
        return BracketStyle(left="(", right=")")

    @dataclass
    class RoundAuthorYear(AuthorYearReferenceStyle):
        bracket_parenthetical: BracketStyle = field(default_factory=round_brackets)
        bracket_textual: BracketStyle = field(default_factory=round_brackets)
        bracket_author: BracketStyle = field(default_factory=round_brackets)
        bracket_label: BracketStyle = field(default_factory=round_brackets)
        bracket_year: BracketStyle = field(default_factory=round_brackets)

    plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYear, force=True
    )


SUMMARY_MATH = re.compile(r"(<summary\b[^>]*>)(.*?)(</summary>)", re.DOTALL)
_DOLLARS = re.compile(r"(?<![\\$])\$([^$\n]+?)\$(?!\$)")


def summary_math(raw: str) -> str:
    """``raw`` HTML with each ``$...$`` inside a ``<summary>`` made a formula MathJax typesets.

    Jupyter and Colab typeset ``$...$`` anywhere in a Markdown cell, raw HTML included; MyST
    leaves raw HTML alone, so on the website a question folded in ``<details>`` showed its
    formula as ``$\\sqrt{d}$``. Written as Sphinx writes inline math, it is typeset there too.
    """

    def inside(m: re.Match) -> str:
        body = _DOLLARS.sub(r'<span class="math notranslate nohighlight">\\(\1\\)</span>', m[2])
        return m[1] + body + m[3]

    return SUMMARY_MATH.sub(inside, raw)


def _typeset_summaries(app: Sphinx, doctree: Any) -> None:
    from docutils import nodes

    for raw in doctree.findall(nodes.raw):
        if "html" in raw.get("format", "").split() and "<summary" in raw.astext():
            text = raw.astext()
            lean = summary_math(text)
            if lean != text:
                raw.children = [nodes.Text(lean)]
                raw.rawsource = lean
                doctree["attnlab_summary_math"] = True


def _load_mathjax_for_summaries(app: Sphinx, pagename: str, templatename: str, context: dict,
                                doctree: Any) -> None:  # fmt: skip
    """A page whose only formulas are in summaries loads MathJax too."""
    if doctree is not None and doctree.get("attnlab_summary_math"):
        domain = app.env.get_domain("math")
        domain.data.setdefault("has_equations", {})[pagename] = True


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension with Sphinx."""
    app.setup_extension("sphinx.ext.mathjax")
    register_round_citations()
    app.connect("config-inited", _one_search_field)
    app.connect("doctree-read", _typeset_summaries)
    app.connect("html-page-context", _load_mathjax_for_summaries, priority=100)
    app.connect("config-inited", _invalidate_stale_cache)
    app.connect("env-get-outdated", _reexecute_notebooks)
    app.connect("config-inited", _use_local_mathjax)
    app.connect("builder-inited", _install_mathjax)
    app.connect("html-page-context", _drop_thebe)
    app.connect("html-page-context", _reading_order)
    app.connect("doctree-read", _strip_solution_markers)
    app.connect("build-finished", _rewrite_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
