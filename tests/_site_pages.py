"""The built website's pages, for the browser tests that run once per page."""

from __future__ import annotations

from pathlib import Path

import pytest

NOT_READ = {"genindex.html", "index.html"}  # the index; index.html only redirects


def reader_pages(site: Path, *, search: bool) -> list[Path]:
    """Every page a reader can reach (the toc's pages, notation and references), and the
    search page too when ``search``."""
    skip = NOT_READ if search else NOT_READ | {"search.html"}
    return sorted(
        p
        for p in site.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts and p.name not in skip
    )


def parametrize_pages(metafunc: pytest.Metafunc, name: str, site: Path, pages: list[Path]):
    """One test per page, named by its path; one that fails when no site is built."""
    metafunc.parametrize(
        name,
        pages or [None],
        ids=[str(p.relative_to(site)) for p in pages] or ["no-built-site"],
    )
