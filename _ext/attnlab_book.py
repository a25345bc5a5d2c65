"""Sphinx extension for the attnlab book: MathJax served from the website itself, not a CDN.

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
old library. :func:`invalidate_if_library_changed` stores a hash of the library next to the
cache and empties the cache when the library has changed; ``tools/execute_notebooks.py``
(``make notebooks``) fills and reads the same cache under the same rule, so the notebooks are
executed once for the website and the committed files alike.

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

Five touches to the written pages, each small and each tested in ``tests/test_site.py``:

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


def library_hash(package_dir: Path) -> str:
    """SHA-256 over the paths and contents of every ``.py`` file under ``package_dir``."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        digest.update(str(path.relative_to(package_dir)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def invalidate_if_library_changed(cache: Path, package_dir: Path) -> bool:
    """Empty the execution cache ``cache`` if ``package_dir`` changed since it was filled.

    The one cache rule of the course, applied by the book (below) and by
    ``tools/execute_notebooks.py``: a notebook is re-executed when its code cells change
    (jupyter-cache's key) or when the library does (a stamp next to the cache).

    Returns:
        Whether the library changed (or no stamp existed yet).
    """
    stamp = cache.with_name(cache.name + ".lib-sha256")
    current = library_hash(package_dir)
    if stamp.exists() and stamp.read_text().strip() == current:
        return False
    if cache.exists():
        logger.info("attnlab_book: lib/attnlab changed; emptying the execution cache %s", cache)
        shutil.rmtree(cache)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(current + "\n")
    return True


def _invalidate_stale_cache(app: Sphinx, config: Any) -> None:
    """Empty the notebook execution cache when ``lib/attnlab`` changed since it was filled."""
    cache_path = getattr(config, "nb_execution_cache_path", "")
    package_dir = Path(app.srcdir) / "lib" / "attnlab"
    if not cache_path or not package_dir.is_dir():
        return
    cache = Path(cache_path)
    if not cache.is_absolute():
        cache = Path(app.srcdir) / cache
    if invalidate_if_library_changed(cache, package_dir):
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


def _rewrite_pages(app: Sphinx, exception: Exception | None) -> None:
    """The last touches to every written page: no fontawesome.js, image size attributes,
    slider frames in files."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for path in outdir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        lean = size_attributes(drop_fontawesome_script(text))
        if "attnlab-explorer" in lean:
            lean = externalize_frames(lean, path.parent, outdir)
        if lean != text:
            path.write_text(lean, encoding="utf-8")


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


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension with Sphinx."""
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _invalidate_stale_cache)
    app.connect("env-get-outdated", _reexecute_notebooks)
    app.connect("config-inited", _use_local_mathjax)
    app.connect("builder-inited", _install_mathjax)
    app.connect("html-page-context", _drop_thebe)
    app.connect("html-page-context", _reading_order)
    app.connect("doctree-read", _strip_solution_markers)
    app.connect("build-finished", _rewrite_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
