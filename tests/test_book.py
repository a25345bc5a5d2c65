"""The book's structure: table of contents, notebooks, launch set-up, committed outputs."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIRS = ("chapters", "solutions", "exercises")
NOTEBOOKS = sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).glob("*.ipynb"))


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections", []))
            walk(entry.get("chapters", []))

    walk(toc.get("parts", []))
    walk(toc.get("chapters", []))
    return files


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found in chapters/, solutions/ or exercises/"


def test_every_toc_entry_exists_and_every_notebook_is_in_the_toc():
    files = _toc_files()
    for f in files:
        assert any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f
    for nb in NOTEBOOKS:
        assert str(nb.relative_to(ROOT).with_suffix("")) in files, f"{nb.name} is not in _toc.yml"


def test_each_exercise_page_follows_its_chapter_and_solutions_are_a_separate_part():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = {p["caption"]: p for p in toc["parts"]}
    chapters = parts["Chapters"]["chapters"]
    for chapter in chapters:
        stem = Path(chapter["file"]).name
        sections = [s["file"] for s in chapter.get("sections", [])]
        if (ROOT / "solutions" / f"{stem}.ipynb").exists():
            assert sections[:1] == [f"exercises/{stem}"], chapter
    solution_files = [c["file"] for c in parts["Solutions"]["chapters"]]
    assert solution_files == sorted(
        f"solutions/{p.stem}" for p in (ROOT / "solutions").glob("*.ipynb")
    )


def test_repository_url_is_set_once_and_used_by_every_colab_setup_cell():
    url = _config()["repository"]["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url), url
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        setup = [
            c for c in nb.cells if c.cell_type == "code" and 'find_spec("attnlab")' in c.source
        ]
        assert len(setup) == 1, f"{nb_path.name}: expected one Colab setup cell"
        assert f'REPO = "{url}"' in setup[0].source, f"{nb_path.name} installs from another URL"
        assert 'f"attnlab @ git+{REPO}"' in setup[0].source, f"{nb_path.name}: no pip install"
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert first_code is setup[0], f"{nb_path.name}: the setup cell must be the first code cell"


def test_every_notebook_has_the_same_setup_cell_and_draws_sharp_figures():
    """One setup cell, copied: it installs the package and asks for 2x figures ("retina"),
    whose size on the page IPython records (the website turns it into width/height)."""
    setups = {
        nb_path.name: next(
            c.source for c in nbformat.read(nb_path, as_version=4).cells if c.cell_type == "code"
        )
        for nb_path in NOTEBOOKS
    }
    assert len(set(setups.values())) == 1, sorted(setups)
    (setup,) = set(setups.values())
    assert '%config InlineBackend.figure_formats = ["retina"]' in setup.splitlines()


TEXT_MIME = {"text/plain", "text/markdown", "text/latex"}
MAX_NOTEBOOK_KB = 100


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_committed_notebook_keeps_text_outputs_only(nb_path):
    """No PNG, scrubber HTML or widget view in git: the book draws them when it is built."""
    nb = nbformat.read(nb_path, as_version=4)
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            extra = set(out.get("data", {})) - TEXT_MIME
            assert not extra, f"{nb_path.name}, cell {index}: {sorted(extra)} output committed"
            assert not out.get("metadata"), f"{nb_path.name}, cell {index}: output metadata"
    size_kb = nb_path.stat().st_size / 1024
    assert size_kb <= MAX_NOTEBOOK_KB, f"{nb_path.name} is {size_kb:.0f} KB"


STATIC_FIGURE = re.compile(r"\bplt\.(?:show|subplots|figure)\(|^figure\(draw", re.MULTILINE)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_every_static_figure_has_alt_text(nb_path):
    """A figure cell says what it shows (``metadata.mystnb.image.alt``, which the website
    puts in the image's alt attribute); without it a screen reader gets a file name."""
    nb = nbformat.read(nb_path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not STATIC_FIGURE.search(cell.source):
            continue
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
        assert len(alt.split()) >= 8, f"{nb_path.name}, cell {index}: a figure without alt text"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_every_slider_frame_is_legible(nb_path):
    """explore() warns about a frame whose text collides, is cut off or is too small on a
    phone (attnlab.drawing.widgets.layout_problems); the committed outputs, which nbval keeps equal
    to a fresh run, must carry no such warning."""
    nb = nbformat.read(nb_path, as_version=4)
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            assert "FigureLayoutWarning" not in text, (
                f"{nb_path.name}, cell {index}: a slider frame a reader cannot read:\n{text}"
            )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_executed_and_clean(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb.metadata, "widget state is saved in the notebook; strip it"
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code_cells]
    assert all(n is not None for n in counts), f"{nb_path.name} has unexecuted cells"
    assert counts == list(range(1, len(counts) + 1)), f"{nb_path.name} was not run top to bottom"
    for cell in code_cells:
        assert "sys.path" not in cell.source, "no sys.path hacks: attnlab is pip-installable"
        for out in cell.outputs:
            assert out.output_type != "error" or "raises-exception" in cell.metadata.get("tags", [])
            text = out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
            assert "Traceback" not in text


CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=_ids(CHAPTERS))
def test_chapter_has_sliders_figures_and_citations(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(re.findall(r"^explore\(", code, flags=re.M)) >= 3, "a chapter needs >= 3 sliders"
    bib_urls = set(re.findall(r"url\s*=\s*\{([^}]+)\}", (ROOT / "references.bib").read_text()))
    cited = set(re.findall(r"\]\((https?://[^)\s]+)\)", text)) & bib_urls
    assert cited, "a chapter cites its sources (a link to a paper listed in references.bib)"
    assert "seed_everything(" in code, "a chapter seeds its generators"
    for cell in nb.cells:
        if cell.cell_type == "code" and re.search(r"^explore\(", cell.source, flags=re.M):
            assert "nbval-ignore-output" not in cell.metadata.get("tags", []), (
                "a slider cell's text output is deterministic: nbval compares it"
            )


@pytest.mark.slow
def test_a_notebook_that_errors_fails_the_book_build(tmp_path):
    """With our _config.yml, a cell that raises (untagged) makes `jupyter-book build -W` fail."""
    import shutil
    import subprocess
    import sys

    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    for name in ("_config.yml", "notation.md", "references.md", "references.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    (tmp_path / "intro.md").write_text("# Intro\n\nA book with one broken notebook.\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: notation\n"
        "  - file: references\n  - file: broken\n"
    )
    nb = new_notebook(cells=[new_markdown_cell("# Broken"), new_code_cell("1 / 0")])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, tmp_path / "broken.ipynb")
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jb), "build", str(tmp_path), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0, "the build passed although a notebook raised"
    assert "Executing notebook failed" in result.stdout + result.stderr


def test_a_library_change_empties_the_execution_cache(tmp_path):
    """jupyter-cache keys notebooks by their code only; our extension adds the library's hash."""
    import types

    from tools import attnlab_book

    (tmp_path / "lib" / "attnlab").mkdir(parents=True)
    module = tmp_path / "lib" / "attnlab" / "m.py"
    module.write_text("x = 1\n")
    cache = tmp_path / "_build" / ".jupyter_cache"
    config = types.SimpleNamespace(nb_execution_cache_path="_build/.jupyter_cache")

    def build() -> bool:
        app = types.SimpleNamespace(srcdir=str(tmp_path))
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "entry").write_text("cached outputs")
        attnlab_book._invalidate_stale_cache(app, config)
        return getattr(app, "attnlab_lib_changed", False)

    assert build() is True  # first build: no stamp yet
    assert not cache.exists()
    assert build() is False  # nothing changed: the cache is kept
    assert (cache / "entry").exists()
    module.write_text("x = 2\n")
    assert build() is True  # the library changed: the cache is emptied
    assert not cache.exists()


def _book_extension():
    from tools import attnlab_book

    return attnlab_book


def test_figure_sizes_become_width_and_height_attributes():
    ext = _book_extension()
    page = (
        '<p><img alt="A plot" class="x" src="../_images/a.png" '
        'style="width: 548px; height: 413px;" /></p>'
        '<img src="b.png" style="width: 10.4px; height: 3px" />'
        '<img src="c.png" alt="no size" /><div style="width: 5px; height: 5px;"></div>'
    )
    assert ext.size_attributes(page) == (
        '<p><img alt="A plot" class="x" src="../_images/a.png" width="548" height="413" /></p>'
        '<img src="b.png" width="10" height="3" />'
        '<img src="c.png" alt="no size" /><div style="width: 5px; height: 5px;"></div>'
    )


@pytest.mark.filterwarnings("ignore::attnlab.drawing.widgets.FigureLayoutWarning")  # tiny frames
def test_slider_frames_move_into_files_named_by_their_content(tmp_path):
    import base64
    import json
    import re

    from attnlab.drawing.widgets import explore

    ext = _book_extension()

    def draw(fig, k):
        fig.subplots().plot([0, abs(k)])

    ex = explore(draw, figsize=(2, 1.5), dpi=30, k=[-1, 2, 1])  # frames 0 and 2 are equal
    page_dir = tmp_path / "chapters"
    html = f"<html><body>{ex.to_html()}\n{ex.to_html()}</body></html>"
    out = ext.externalize_frames(html, page_dir, tmp_path)

    assert "data:image/png;base64,iVBOR" not in out  # no PNG left in the page
    files = sorted((tmp_path / "_images" / "frames").iterdir())
    assert len(files) == 2  # the same frame, twice on the page or twice in a slider: one file
    datas = [json.loads(m) for m in re.findall(r"^  var data = (\{.*\});$", out, re.MULTILINE)]
    assert len(datas) == 2
    for data in datas:
        assert data["dir"] == "../_images/frames/"
        assert data["frames"][0] == data["frames"][2] != data["frames"][1]
        for name, frame in zip(data["frames"], ex.frames, strict=True):
            assert (tmp_path / "_images" / "frames" / f"{name}.png").read_bytes() == frame
    first = re.findall(r'<img class="attnlab-frame" src="([^"]+)"', out)
    assert first == [f"../_images/frames/{datas[0]['frames'][0]}.png"] * 2
    # Idempotent, and a page without scrubbers is left alone.
    assert ext.externalize_frames(out, page_dir, tmp_path) == out
    assert ext.externalize_frames("<p>no scrubber</p>", page_dir, tmp_path) == "<p>no scrubber</p>"
    assert base64.b64encode(ex.frames[1]).decode() in ex.to_html()  # the notebook keeps them


def test_font_preloads_and_the_fontawesome_script_are_dropped():
    ext = _book_extension()
    head = (
        '<link rel="stylesheet" href="a.css" />\n'
        '<link rel="preload" as="font" type="font/woff2" crossorigin '
        'href="../_static/vendor/fontawesome/6.5.2/webfonts/fa-solid-900.woff2" />\n'
        '  <script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
        '<link rel="preload" href="x.js" as="script" />\n'
        # pydata-sphinx-theme 0.15 (Python 3.10): the same script under another name
        '  <script src="../_static/vendor/fontawesome/6.5.2/js/all.min.js?digest=2"></script>\n'
        '<script src="../_static/scripts/bootstrap.js?digest=2"></script>\n'
    )
    assert ext.drop_fontawesome_script(head) == (
        '<link rel="stylesheet" href="a.css" />\n<link rel="preload" href="x.js" as="script" />\n'
        '<script src="../_static/scripts/bootstrap.js?digest=2"></script>\n'
    )
