"""Claims held by tests: what the tests/test_claims_chNN.py files share.

Every quantitative sentence a chapter says about a figure or an output is recomputed from
the library (the notebooks only draw) and asserted by a test that quotes it with
:func:`claim`. :func:`quotes_are_in` makes the test that each quoted sentence is still in the
chapter, so that a sentence reworded without its test is noticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def claim(*sentences: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a test as the check of ``sentences``, quoted from the chapter's Markdown."""

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        test.claims = sentences  # type: ignore[attr-defined]
        return test

    return mark


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def prose(path: str) -> str:
    """The Markdown of a notebook (or the text of a page), whitespace squashed."""
    full = ROOT / path
    if full.suffix == ".md":
        return _squash(full.read_text(encoding="utf-8"))
    nb = nbformat.read(full, as_version=4)
    return _squash(" ".join(c.source for c in nb.cells if c.cell_type == "markdown"))


def quotes_are_in(path: str, namespace: dict[str, Any]) -> Callable[[], None]:
    """A test: every sentence quoted by a :func:`claim` in ``namespace`` is in ``path``."""

    def test_every_quoted_claim_is_in_the_chapter() -> None:
        text = prose(path)
        tests = [f for name, f in namespace.items() if name.startswith("test_")]
        quoted = [(f.__name__, s) for f in tests for s in getattr(f, "claims", ())]
        assert quoted, "no claim is quoted"
        missing = [f"{name}: {s!r}" for name, s in quoted if _squash(s) not in text]
        assert not missing, f"{path} no longer says (update the test with the prose):\n" + (
            "\n".join(missing)
        )

    return test_every_quoted_claim_is_in_the_chapter
