"""intro.md tells the truth about the course it introduces: every chapter, in order."""

from __future__ import annotations

import re

import nbformat
from _claims import ROOT, claim, quotes_are_in

PAGE = "intro.md"


@claim("Start with {doc}`chapters/01_why_attention`")
def test_the_intro_lists_every_chapter_and_starts_with_the_first():
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    section = text.split("## What you will learn")[1].split("\n## ")[0]
    listed = re.findall(r"^(\d+)\. \*\*(.+?)\*\*", section, flags=re.M)
    chapters = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert [int(n) for n, _ in listed] == list(range(1, len(chapters) + 1))
    for (n, name), path in zip(listed, chapters, strict=True):
        title = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
        assert title.startswith(f"# {n}. "), title
        assert name.lower().split(":")[0] in title.lower(), (name, title)
    first = chapters[0].relative_to(ROOT).with_suffix("")
    assert f"{{doc}}`{first}`" in section


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(PAGE, globals())
