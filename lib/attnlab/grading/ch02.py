"""Graders for chapter 2's exercises: tokens, embeddings, similarity, softmax, attention.

In the notebook's order: WordPiece ids of a word, the embedding lookup as one-hot times a
matrix, the dot product, cosine similarity (and a prediction), a stable softmax with
temperature (and a prediction), the measured spread of ``q · k``, weightless
self-attention (and a prediction).

Each grader compares the learner's function with the attnlab reference on seeded cases and
knows the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). The
notebook imports the ``check_*`` functions and ``summary`` (the chapter's score table).

Taught in: exercises/02_similarity.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.similarity import cosine_similarity, dot, softmax
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult, make_result, record
from .specs import Case, Mistake, Property
from .status import WRONG_VALUES

__all__ = [
    "GRADERS",
    "check_cosine_flip",
    "check_cosine_similarity",
    "check_dot",
    "check_embed",
    "check_equal_rows",
    "check_score_spread",
    "check_self_attention",
    "check_shifted_softmax",
    "check_softmax",
    "check_wordpiece",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 2's exercises, in the order of the notebook."""


def _rng() -> np.random.Generator:
    return np.random.default_rng(2)


# ------------------------------------------------------------------ 2.1 WordPiece ids

_UNK = "<unk>"
_PIECES = (
    _UNK, "walk", "play", "un", "happy", "token", "p", "w", "t", "c", "a", "##a", "##e",
    "##d", "##h", "##i", "##k", "##l", "##n", "##o", "##p", "##s", "##t", "##y", "##ing",
    "##ed", "##er", "##ful", "##ness", "##ize", "##izer", "##al", "##ly", "ing", "er", "s",
    "pla", "##ying",
)  # fmt: skip
_WORDPIECE_VOCAB = {piece: i for i, piece in enumerate(_PIECES)}
"""A small WordPiece vocabulary, piece -> id (id 0 is ``<unk>``)."""


_STATEMENT_VOCAB = {_UNK: 0, "walk": 1, "##ing": 2, "##s": 3, "w": 4, "##a": 5}
"""The statement's example vocabulary."""
_LONG_PIECES = (
    _UNK, "a", "##t", "##e", "##n", "##i", "##o", "##l", "##al", "attention", "##tion",
    "att", "atte", "atten", "attent", "attenti", "attentio",
)  # fmt: skip
_LONG_PIECE_VOCAB = {piece: i for i, piece in enumerate(_LONG_PIECES)}
"""A vocabulary with a piece of 9 letters, its shorter beginnings and its letters: a cut
whose pieces stop at any length from 3 to 8 gives other ids than the longest match."""


def _wordpiece_reference(word: str, vocab: dict[str, int]) -> list[int]:
    """Greedy longest match first, continuation pieces marked ``##``; ``[<unk>]`` if stuck."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(vocab[piece])
                start = end
                break
        else:
            return [vocab[_UNK]]
    return pieces


def _wordpiece_with(
    *,
    shortest: bool = False,
    mark: str = "rest",
    on_unknown: str = "word",
    whole_rest: bool = True,
    step_one: bool = False,
    step_marked: bool = False,
) -> Callable[[str, dict[str, int]], list[int]]:
    """A planted WordPiece: shortest match, other ``##`` marking, other unknown handling."""

    def wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
        pieces, start = [], 0
        while start < len(word):
            ends = range(start + 1, len(word) + 1) if shortest else range(len(word), start, -1)
            if not whole_rest:
                ends = range(len(word) - 1, start, -1)
            for end in ends:
                marked = {"rest": start > 0, "none": False, "all": True, "either": start > 0}
                marked["first_too"] = True
                piece = ("##" if marked[mark] else "") + word[start:end]
                if mark in ("either", "first_too") and piece not in vocab:
                    if (mark == "either" or start == 0) and word[start:end] in vocab:
                        piece = word[start:end]
                if piece in vocab:
                    pieces.append(vocab[piece])
                    if step_marked:  # moved on by the piece's length, its `##` counted
                        start += len(piece)
                    else:
                        start = start + 1 if step_one else end
                    break
            else:
                if on_unknown == "word":
                    return [vocab[_UNK]]
                if on_unknown == "zero":
                    return [0]
                if on_unknown == "empty":
                    return []
                if on_unknown == "keep":
                    return [*pieces, vocab[_UNK]]
                if on_unknown == "piece":
                    pieces.append(vocab[_UNK])
                start += 1  # "skip": drop the character
        return pieces

    return wordpiece


def _wordpiece_looking_up(
    find: Callable[[dict[str, int], int, str], int | None],
) -> Callable[[str, dict[str, int]], list[int]]:
    """A planted greedy WordPiece whose lookup is ``find(vocab, start, letters)``: the id of
    the candidate ``letters`` found at ``start``, or None."""

    def wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                found = find(vocab, start, word[start:end])
                if found is not None:
                    pieces.append(found)
                    start = end
                    break
            else:
                return [vocab[_UNK]]
        return pieces

    return wordpiece


_wordpiece_unmarked_vocab = _wordpiece_looking_up(
    lambda vocab, start, letters: {p.removeprefix("##"): i for p, i in vocab.items()}.get(letters)
)
"""Planted: the `##` marks stripped from the vocabulary, every piece matched bare."""

_wordpiece_truthy = _wordpiece_looking_up(
    lambda vocab, start, letters: vocab.get(letters if start == 0 else "##" + letters) or None
)
"""Planted: ``if vocab.get(piece):``, which skips a real piece whose id is 0."""


def _wordpiece_single_hash(word: str, vocab: dict[str, int]) -> list[int]:
    """Planted: the continuation mark written as a single "#".

    Written out, not built by :func:`_wordpiece_looking_up`: its mistake is told from "only
    the whole word looked up" (the same ids) by ``needs``, which reads the graded function's
    own source, so the ``"#"`` must stand in it."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "#" + word[start:end]
            if piece in vocab:
                pieces.append(vocab[piece])
                start = end
                break
        else:
            return [vocab[_UNK]]
    return pieces


def _wordpiece_from_the_right(word: str, vocab: dict[str, int]) -> list[int]:
    """Planted: the longest known piece taken from the end of the word, backwards."""
    pieces, end = [], len(word)
    while end > 0:
        for start in range(end):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.insert(0, vocab[piece])
                end = start
                break
        else:
            return [vocab[_UNK]]
    return pieces


def _wordpiece_dictionary_order(word: str, vocab: dict[str, int]) -> list[int]:
    """Planted: the first piece that fits, in the vocabulary's order, not the longest."""
    pieces, start = [], 0
    while start < len(word):
        for piece, i in vocab.items():
            bare = piece[2:] if piece.startswith("##") else piece
            fits = piece.startswith("##") == (start > 0) and piece != _UNK
            if fits and bare and word.startswith(bare, start):
                pieces.append(i)
                start += len(bare)
                break
        else:
            return [vocab[_UNK]]
    return pieces


def _as_ids(value: Any) -> Any:
    """A list or tuple of token ids as an int64 array; anything else unchanged."""
    if isinstance(value, (list, tuple)) and all(
        isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in value
    ):
        return np.array(value, dtype=np.int64).reshape(len(value))
    return value


def _wordpiece_cases() -> tuple[Case, ...]:
    words = {
        "a whole word": "walk",
        "a suffix": "walking",
        "two suffixes": "playfulness",
        "two ways to cut": "playing",
        "a longer piece wins": "tokenizer",
        "spelled out after a prefix": "unhappy",
        "an unknown letter": "quiz",
        "one letter": "a",
        "an unknown letter after a piece": "walkq",
    }
    # The same pieces in another order: `<unk>` is id 7, not 0, and every id differs.
    shuffled = {piece: (i + 7) % len(_PIECES) for i, piece in enumerate(_PIECES)}
    zero = _PIECES.index("##ing")
    at_zero = {piece: (i - zero) % len(_PIECES) for i, piece in enumerate(_PIECES)}
    return (
        *(
            Case(label, {"word": word, "vocab": dict(_WORDPIECE_VOCAB)})
            for label, word in words.items()
        ),
        Case("another vocabulary, <unk> = 7", {"word": "playz", "vocab": shuffled}),
        Case("another vocabulary, a suffix", {"word": "playing", "vocab": shuffled}),
        # A real piece at id 0 (`##ing`): a lookup tested by the truthiness of its id skips it.
        Case("another vocabulary, a piece with id 0", {"word": "walking", "vocab": at_zero}),
        # The vocabulary is case-sensitive: a capital letter is an unknown letter.
        Case("a capital letter", {"word": "Walk", "vocab": dict(_WORDPIECE_VOCAB)}),
        # The statement's example: a continuation right after a one-letter first piece.
        Case("the statement's vocabulary", {"word": "wa", "vocab": dict(_STATEMENT_VOCAB)}),
        # A piece longer than any of the other vocabularies' (9 letters).
        Case("a long piece", {"word": "attentional", "vocab": dict(_LONG_PIECE_VOCAB)}),
    )


WORDPIECE = GRADERS.add(
    Grader(
        name="wordpiece",
        signature="wordpiece(word, vocab) with vocab: piece -> id; returns the list of ids",
        reference=lambda word, vocab: _as_ids(_wordpiece_reference(word, vocab)),
        cases=_wordpiece_cases(),
        adapt=_as_ids,
        mistakes=(
            Mistake(
                "you took the shortest known piece at each step: WordPiece is greedy for the "
                "longest one, so that common pieces such as `##izer` win over single letters",
                _wordpiece_with(shortest=True),
            ),
            Mistake(
                "you looked the continuation pieces up without their `##` mark: inside a word "
                "a piece is stored as `##ing`, and the bare `ing` is the word-initial piece",
                _wordpiece_with(mark="none"),
            ),
            Mistake(
                "you marked the first piece with `##` too: only the pieces that continue a "
                "word carry the mark, the first one is stored bare (`walk`, not `##walk`)",
                _wordpiece_with(mark="all"),
            ),
            Mistake(
                "at the start of the word you looked up the `##` piece first (for the word 'a' "
                "that gives the id of `##a`, a continuation piece): the first piece of a word is "
                "looked up bare; the `##` form is only for the pieces inside a word",
                _wordpiece_with(mark="first_too"),
            ),
            Mistake(
                "you dropped the letter that no piece matches and went on: a word that cannot "
                "be cut completely becomes the single `<unk>` id",
                _wordpiece_with(on_unknown="skip"),
            ),
            Mistake(
                "you put `<unk>` for the unmatched letter only and kept the other pieces: "
                "WordPiece gives up on the whole word, which becomes one `<unk>` id",
                _wordpiece_with(on_unknown="piece"),
            ),
            Mistake(
                "you kept the pieces found before the unknown letter and added `<unk>`: a "
                "word that cannot be cut completely becomes the single `<unk>` id, and the "
                "pieces before it are dropped",
                _wordpiece_with(on_unknown="keep"),
            ),
            Mistake(
                "you returned id 0 for `<unk>`: ids belong to the vocabulary, and in this one "
                "`<unk>` has another id: look it up in vocab",
                _wordpiece_with(on_unknown="zero"),
            ),
            Mistake(
                "a word that cannot be cut gave no ids at all: it becomes one token, the id of "
                "`<unk>` from the vocabulary",
                _wordpiece_with(on_unknown="empty"),
            ),
            Mistake(
                "you accepted a bare piece (such as `happy`) in the middle of a word: after "
                "the first piece, only pieces marked `##` may continue a word",
                _wordpiece_with(mark="either"),
            ),
            Mistake(
                "inside the word you looked the bare piece up first (`happy`) and the `##` "
                "form only when the bare one was missing: after the first piece only the "
                "`##` form may match, so look up `##` + the letters whenever the position is "
                "not the start of the word, and never the bare letters there",
                _wordpiece_looking_up(
                    lambda vocab, start, letters: vocab.get(letters, vocab.get("##" + letters))
                ),
            ),
            Mistake(
                "you took the first piece that fits in dictionary order, not the longest one: "
                "try the candidates from the longest to the shortest",
                _wordpiece_dictionary_order,
            ),
            Mistake(
                "your candidate pieces never include the whole rest of the word: the longest "
                "candidate runs to the word's end (a word in the vocabulary is one piece)",
                _wordpiece_with(whole_rest=False),
            ),
            Mistake(
                "the continuation mark is two characters, `##`: your code puts a single `#` "
                "in front, so no continuation piece is ever found and every word that is not "
                "in the vocabulary whole becomes `<unk>`",
                _wordpiece_single_hash,
                needs=r"""(?<![#'"])['"]#['"]""",
            ),
            Mistake(
                "the piece that starts at position 1, right after a one-letter first piece, "
                "is looked up bare: every piece after the first position continues the word "
                "and carries the `##` mark (the statement's example cuts 'wa' into `w` and "
                "`##a`); check the test that decides whether a position is the start",
                _wordpiece_looking_up(
                    lambda vocab, start, letters: vocab.get(
                        letters if start <= 1 else "##" + letters
                    )
                ),
            ),
            *(
                Mistake(
                    f"you never try a piece longer than {cap} letters: rule 1 takes the longest "
                    "piece of the vocabulary, whatever its length (`attention` has 9 letters), "
                    "so the candidates start from the whole rest of the word",
                    _wordpiece_looking_up(
                        lambda vocab, start, letters, cap=cap: (
                            None
                            if len(letters) > cap
                            else vocab.get(letters if start == 0 else "##" + letters)
                        )
                    ),
                )
                for cap in range(3, 9)
            ),
            Mistake(
                "you only look the whole word up: when it is not in the vocabulary, cut it "
                "into pieces from the left, the longest known piece each time",
                lambda word, vocab: [vocab.get(word, vocab[_UNK])],
            ),
            Mistake(
                "a piece whose id is 0 was skipped: `if vocab.get(piece):` is false for id "
                "0, a real id; test whether the piece is in the vocabulary (`in`), not the "
                "truth of its id",
                _wordpiece_truthy,
            ),
            Mistake(
                "you changed the word's letters (lowercased it) before looking pieces up: the "
                "vocabulary is case-sensitive, and a letter it does not hold makes the word "
                "`<unk>`",
                lambda word, vocab: _wordpiece_reference(word.lower(), vocab),
            ),
            Mistake(
                "you stripped the `##` marks from the vocabulary and matched bare pieces "
                "anywhere: a word-initial piece and a continuation are different entries, so "
                "look the continuations up with their mark (`##` + the letters)",
                _wordpiece_unmarked_vocab,
            ),
            Mistake(
                "after taking a piece you moved on by one letter, not past the whole piece: "
                "the next piece starts where the one you took ends, so pieces never overlap",
                _wordpiece_with(step_one=True),
            ),
            Mistake(
                "after a `##` piece you skipped letters: you moved on by the length of the "
                "piece's string, and that length counts the two `#` of the mark, which are "
                "not letters of the word; move on by the letters the piece covers",
                _wordpiece_with(step_marked=True),
            ),
            Mistake(
                "you cut from the end of the word backwards: WordPiece starts at the left and "
                "takes the longest known piece from there",
                _wordpiece_from_the_right,
            ),
        ),
        error_hints=(
            (
                "KeyError",
                "a lookup vocab[piece] of a piece that is not in the vocabulary raised; "
                "pieces that are not there have to be tested first (`in`)",
            ),
        ),
        hint="cut a word of the cases by hand with the statement's three rules (the longest "
        "piece first, the `##` mark, the whole word unknown when stuck) and compare with "
        'your ids; the chapter\'s section "From text to tokens" cuts words this way',
        equivalent=(
            (
                "offset: range(len(word), start, -1) in for end in range(len(word), start, "
                "-1): -> range(len(word) + 1, start, -1)",
                "a slice past the end of the word stops at its end: the same candidate "
                "twice, tried before the shorter ones",
            ),
            (
                "offset: range(len(word), start, -1) in for end in range(len(word), start, "
                "-1): -> range(len(word), start - 1, -1)",
                "the extra candidate is the empty piece (or a bare `##`), which no "
                "vocabulary holds",
            ),
            (
                "input: word in for end in range(len(word), start, -1): -> vocab",
                "with more vocabulary entries than letters, the extra candidates are "
                "slices past the end of the word, the whole rest of it again",
            ),
        ),
    )
)


def check_wordpiece(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(word, vocab)``: the WordPiece ids of one word (greedy longest match first).

    ``vocab`` maps each piece (``"walk"``, ``"##ing"``, ``"<unk>"``) to its id; the answer is
    a list (or array) of ids, ``[vocab["<unk>"]]`` for a word that cannot be cut.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return WORDPIECE.check(fn)


# ------------------------------------------------------------------ 2.2 embedding lookup


def _embed_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case("five ids", {"ids": np.array([3, 0, 7, 3, 11]), "E": rng.standard_normal((12, 4))}),
        Case("one id", {"ids": np.array([2]), "E": rng.standard_normal((6, 5))}),
        Case(
            "a batch of 2 sentences",
            {"ids": np.array([[1, 4, 4], [0, 6, 2]]), "E": rng.standard_normal((7, 4))},
        ),
    )


def _one_hot(ids: np.ndarray, n: int) -> np.ndarray:
    return (ids[..., None] == np.arange(n)).astype(float)  # (...) -> (..., n)


def _one_hot_1d(ids: np.ndarray, E: np.ndarray) -> np.ndarray:
    one_hot = np.zeros((len(ids), E.shape[0]))
    one_hot[np.arange(len(ids)), ids] = 1.0  # fails for a (B, T) batch
    return one_hot @ E


def _small_ids_only(outputs: dict[str, np.ndarray], case: Case) -> str | None:
    """Rows right for the small ids and wrong for the large ones: a one-hot vector too short."""
    out, ids, E = outputs["output"], case.inputs["ids"], case.inputs["E"]
    if out.shape != ids.shape + E.shape[1:] or not np.all(np.isfinite(out)):
        return None
    right = np.all(np.isclose(out, E[ids], rtol=1e-6, atol=1e-8), axis=-1)  # one per token
    if right.all() or not right.any():
        return None
    wrong_ids, right_ids = np.unique(ids[~right]), np.unique(ids[right])
    if wrong_ids.min() <= right_ids.max():
        return None
    listed = ", ".join(str(int(i)) for i in wrong_ids)
    return (
        f"on case {case.describe()} your rows are right for the ids up to "
        f"{int(right_ids.max())} and wrong for the larger ids ({listed}), in a vocabulary of "
        f"{E.shape[0]} rows: the large ids find no entry of their own, as in one-hot "
        "vectors narrower than the vocabulary (one entry per token, or a size typed in); a "
        "one-hot vector has one entry per row of E, E.shape[0] of them"
    )


def _index_hint(message: str) -> str | None:
    """NumPy's "index 11 is out of bounds for axis 0 with size 4", read for this exercise."""
    found = re.search(r"out of bounds for axis (\d+) with size (\d+)", message)
    if found is None:
        return None
    if found[1] == "0":
        return (
            f"an id indexed an axis of size {found[2]}, smaller than the vocabulary: the ids "
            "number the rows of E (its first axis, one row per token), and E.T or a "
            "transposed table has the embedding size D there instead"
        )
    return (
        f"an id indexed axis {found[1]}, of size {found[2]}, smaller than the vocabulary: "
        "the ids number the rows of E (its first axis, one row per vocabulary entry). Ids "
        "put on another axis (E[:, ids] picks columns, one per embedding dimension) or "
        "into a one-hot vector of another size (one entry per token of the input, or per "
        "dimension) run out of room: a one-hot vector has one entry per row of E"
    )


def _one_hot_product_hint(message: str, line: str = "") -> str | None:
    """@ or np.dot of a one-hot matrix with E, whose sizes do not meet."""
    found = re.search(r"size (\d+) is different from (\d+)", message)
    picked = re.search(r"(@|dot\(|matmul\()[^@]*?\b(E\s*\[[^\]]*\])", line)
    if found is not None and picked is not None:
        # the right operand is rows picked out of E, whose sizes are not E's
        rows, entries, operand = found[1], found[2], picked[2]
        return (
            f"the product met {entries} entries of the left operand with {rows} rows of "
            f"`{operand}`, not of E: `{operand}` holds rows already picked out of E, and its "
            "sizes follow the ids, not the vocabulary. The one-hot vectors are what picks "
            "the rows: they multiply the whole table E, so each needs one entry per row of "
            "E, E.shape[0] of them"
        )
    # Every case's vocabulary is larger than D: fewer rows than the left operand's entries
    # is E transposed (D rows), which the generated mistakes name; more is a short one-hot.
    if found is not None and int(found[1]) > int(found[2]):
        rows, entries = found[1], found[2]
        return (
            f"the product met {entries} entries of the left operand with the {rows} rows of "
            f"E: a one-hot vector has one entry per row of E ({rows} here), and the one-hot "
            "matrix goes on the left with the tokens first, (tokens, n_vocab) @ (n_vocab, "
            f"D). {entries} entries there is a one-hot transposed (tokens last) or sized by "
            "a number typed in instead of the size of E"
        )
    found = re.search(r"shapes \(([\d,]+)\) and \(([\d,]+)\) not aligned", message)
    if found is not None and found[2].count(",") >= 2:
        return (
            f"np.dot met ({found[1]}) and ({found[2]}): .T reverses every axis of an array "
            "with more than two (a (B, T, n_vocab) one-hot becomes (n_vocab, T, B)), and "
            "np.dot pairs the last axis of the left operand with the second-to-last of the "
            "right one; keep the one-hot as it is, on the left of E"
        )
    return None


def _new_axis_hint(message: str) -> str | None:
    """NumPy's "shapes (2,1,3) (7,)": a batch of ids given its new axis in the middle."""
    found = re.search(r"shapes \((\d+),1,(\d+)\) \((\d+),\)", message)
    if found is None:
        return None
    return (
        f"ids[:, None] puts the new axis second: for a batch of ids ({found[1]}, {found[2]}) "
        f"that gives ({found[1]}, 1, {found[2]}), whose last axis (the tokens) meets the "
        f"{found[3]} vocabulary indices; the new axis must come last, after every axis of "
        "ids (an index that adds it at the end whatever the number of axes), so that each "
        "id is compared with the whole range"
    )


EMBED = GRADERS.add(
    Grader(
        name="embed",
        signature="embed(ids, E) with ids: (...) integers, E: (n_vocab, D) -> (..., D)",
        reference=lambda ids, E: E[ids],
        cases=_embed_cases(),
        mistakes=(
            Mistake(
                "you returned the one-hot vectors themselves (one entry per vocabulary row): "
                "the embedding is what they pick out of E",
                lambda ids, E: _one_hot(ids, E.shape[0]),
            ),
            Mistake(
                "you read the row before each id (ids counted from 1): ids count from 0, "
                "so id i is row i of E",
                lambda ids, E: E[ids - 1],
            ),
            Mistake(
                "you added up the rows of all tokens (one vector for the whole input): each "
                "token keeps its own row, so the result has one row per id",
                lambda ids, E: E[ids].sum(axis=-2),
            ),
            Mistake(
                "your one-hot vectors have one entry per token (np.eye(len(ids))): each needs "
                "one entry per vocabulary row, E.shape[0] of them",
                lambda ids, E: np.eye(len(ids))[ids] @ E,
            ),
            *(
                Mistake(
                    f"your one-hot vectors have {what}: each needs one entry per "
                    "vocabulary row, E.shape[0] of them; an id at or past your width gets an "
                    "all-zero one-hot vector, which is why some of your rows are 0",
                    lambda ids, E, width=width: _one_hot(ids, width(ids, E)) @ E[: width(ids, E)],
                )
                for what, width in (
                    ("one entry per token (ids.size)", lambda ids, E: ids.size),
                    ("one entry per token (len(ids))", lambda ids, E: len(ids)),
                    (
                        "E.shape[1] entries, the embedding size D, not the vocabulary size",
                        lambda ids, E: E.shape[1],
                    ),
                )
            ),
            Mistake(
                "your one-hot vectors have max(ids) + 1 entries, sized by the ids that happen "
                "to occur: each needs one entry per vocabulary row, E.shape[0] of them",
                lambda ids, E: np.eye(ids.max() + 1)[ids] @ E,
            ),
            Mistake(
                "your one-hot vectors have their 1 one place off (ids counted from 1, a "
                "comparison with np.arange(1, ...)): id i must light entry i, counting from 0, "
                "so that id 0 picks row 0",
                lambda ids, E: np.where((ids == 0)[..., None], 0.0, E[ids - 1]),
            ),
            Mistake(
                "(E.T @ one_hot.T).T works for 1-D ids only: on a batch, `.T` reverses all "
                "three axes; put the one-hot on the left, one_hot @ E, which keeps the leading "
                "axes",
                lambda ids, E: (E.T @ _one_hot(ids, E.shape[0]).T).T,
            ),
            Mistake(
                "your one-hot is built for 1-D ids only: ids can be a batch (B, T) too; build "
                "the one-hot vectors for ids of any shape (broadcasting works on the last axis)",
                _one_hot_1d,
            ),
            Mistake(
                "the one-hot goes on the left of E (one_hot @ E: one row per id), not E.T on "
                "the left of its transpose",
                lambda ids, E: E.T @ _one_hot(ids, E.shape[0]).T,
            ),
            Mistake(
                "you picked rows of E.T (E.T[ids], or one-hot vectors of D entries times "
                "E.T): the ids number the rows of E, one per vocabulary entry, so a one-hot "
                "vector has n_vocab entries and multiplies E itself",
                lambda ids, E: np.eye(E.shape[1])[ids] @ E.T,
            ),
            Mistake(
                "you flattened the batch: the result keeps the shape of `ids`, with an axis "
                "of size D added at the end",
                lambda ids, E: E[ids].reshape(-1, E.shape[-1]),
            ),
        ),
        properties=(Property(_small_ids_only),),
        error_hints=(
            ("out of bounds for axis", _index_hint),
            ("could not be broadcast together", _new_axis_hint),
            ("mismatch in its core dimension", _one_hot_product_hint),
            ("not aligned", _one_hot_product_hint),
            (
                "arrays used as indices must be of integer",
                "a float array was used as an index: the arguments come in the order "
                "embed(ids, E), so the float table E cannot be the one that indexes",
            ),
        ),
        hint="write the one-hot vector of one id by hand (how many entries? where is the "
        "1?) and multiply it by a small E on paper; the chapter's section \"From tokens to "
        'vectors: embedding lookup" does this product',
        equivalent=(
            ("size: E.shape[0] in n_vocab = E.shape[0] -> E.shape[-2]", "E has two axes: -2 is 0"),
            (
                "input: E in one_hot = (ids[..., None] == np.arange(n_vocab)).astype(E.d… -> ids",
                "one-hot vectors of integers times a float E give the same floats",
            ),
        ),
    )
)


def check_embed(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(ids, E)``: embeddings as one-hot vectors times ``E``, ``(...) -> (..., D)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return EMBED.check(fn)


# ------------------------------------------------------------------ 2.3 dot product

_KEPT_AXIS = (
    "you kept the summed axis (keepdims=True): the result should have shape (...), one "
    "number per pair, without a trailing axis of size 1"
)

_MATRIX_PRODUCT = (
    "you used a matrix product (@, np.dot or np.matmul): it combines every row of `a` with "
    "every column of `b`, so on a batch of vector pairs the sizes don't line up; the "
    "exercise wants one number per pair of vectors"
)

_BATCHED_VECTOR_HINTS = (
    ("mismatch in its core dimension", _MATRIX_PRODUCT),
    ("not aligned", _MATRIX_PRODUCT),
    (
        "shape-mismatch for sum",
        "np.tensordot(a, b, axes=1) is a matrix product: it pairs the last axis of `a` with "
        "the first axis of `b` (every row of `a` against every column of `b`), not row i of "
        "`a` with row i of `b`; the exercise wants one number per pair of vectors",
    ),
    (
        "diag requires an array of at least two dimensions",
        "the diagonal of a matrix product needs a matrix, but a single pair of vectors gives "
        "one number (and a product of all rows against all rows computes n^2 numbers to keep "
        "n); the exercise wants one number per pair of vectors, for any number of leading "
        "axes",
    ),
    (
        "Input must be 1- or 2-d",
        "np.diag of a matrix product needs a matrix, but a single pair of vectors gives "
        "one number and a batch with more axes gives no matrix at all; the exercise wants "
        "one number per pair of vectors, for any number of leading axes",
    ),
    *(
        (
            text,
            "float(...) (or .item()) turns one number into a Python float, but the function "
            "must work on batches: a batch of pairs gives an array, one number per pair, and "
            "float() of an array with more than one number fails; return the array as it is",
        )
        for text in (
            "only 0-dimensional arrays can be converted",
            "only length-1 arrays can be converted",
            "can only convert an array of size 1",
        )
    ),
)


def _vector_pair_cases(rng: np.random.Generator) -> list[Case]:
    """Pairs of random vectors along the last axis: one pair, rows of a matrix, a batch."""
    shapes = {"two vectors": (5,), "rows of a matrix": (3, 5), "a batch": (2, 3, 4)}
    return [
        Case(label, {"a": rng.standard_normal(s), "b": rng.standard_normal(s)})
        for label, s in shapes.items()
    ]


def _dot_cases() -> tuple[Case, ...]:
    rng = _rng()
    cases = _vector_pair_cases(rng)
    cases.append(Case("size-1 vectors", {"a": rng.standard_normal((4, 1)), "b": np.ones((4, 1))}))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * rng.standard_normal((4, 6)), "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    return tuple(cases)


def _per_first_axis(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Planted: a loop over the first axis, summing everything inside."""
    return np.array([np.sum(x * y) for x, y in zip(a, b, strict=True)])


DOT = GRADERS.add(
    Grader(
        name="dot",
        signature="dot(a, b) with a, b: (..., d) -> (...)",
        reference=dot,
        cases=_dot_cases(),
        mistakes=(
            Mistake(
                "you multiplied elementwise but did not sum: a * b still has the vector axis, "
                "one product per entry, where the dot product adds them up",
                lambda a, b: a * b,
            ),
            Mistake(
                "you summed over the first axis: the entries of each vector are on the last "
                "axis, and the first one runs over the pairs (or, for one pair, over entries)",
                lambda a, b: np.sum(a * b, axis=0),
            ),
            Mistake(
                "you summed over every axis: one number for the whole batch, where each pair "
                "of vectors needs its own",
                lambda a, b: np.sum(a * b),
            ),
            Mistake(
                "you summed a + b; the dot product sums the products a_i b_i",
                lambda a, b: np.sum(a + b, axis=-1),
            ),
            Mistake(_KEPT_AXIS, lambda a, b: np.sum(a * b, axis=-1, keepdims=True)),
            Mistake(
                "you computed every pair's dot product (np.inner or a @ b.T): that is a "
                "table of all rows of `a` against all rows of `b`, where the exercise pairs "
                "row i of `a` with row i of `b` only",
                lambda a, b: np.inner(a, b),
            ),
            Mistake(
                "you took the absolute value of each product, so negative products no longer "
                "cancel positive ones: a dot product can be negative (opposite directions)",
                lambda a, b: np.abs(a * b).sum(axis=-1),
            ),
            Mistake(
                "you squared each product a_i·b_i before summing them, so your result is never "
                "negative: a dot product sums the products as they are, and it is negative for "
                "vectors that point apart",
                lambda a, b: ((a * b) ** 2).sum(axis=-1),
            ),
            Mistake(
                "you looped over the first axis and summed everything inside each item: right "
                "for a matrix of row vectors, but a single pair (d,) or a batch with more "
                "axes needs the sum over the last axis only",
                _per_first_axis,
            ),
        ),
        hint="the dot product multiplies matching entries and sums them, one number per "
        "pair of vectors: check your result's shape on a batch (n, d); the chapter's section "
        '"How alike are two vectors?" computes it',
        error_hints=_BATCHED_VECTOR_HINTS,
    )
)


def check_dot(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: the dot product along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return DOT.check(fn)


# ------------------------------------------------------------------ 2.4 cosine similarity


def _norm(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=-1, keepdims=keepdims))


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1) / (_norm(a) * _norm(b))


def _cosine_cases() -> tuple[Case, ...]:
    rng = _rng()
    cases = _vector_pair_cases(rng)
    a = rng.standard_normal((4, 6))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * a, "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    b = np.concatenate([3.0 * a[:2], -0.5 * a[2:]])  # rows 0, 1 parallel; rows 2, 3 opposite
    cases.append(Case("parallel and opposite vectors", {"a": a, "b": b}))
    return tuple(cases)


def _in_range(outputs: dict[str, np.ndarray], case: Case) -> str | None:
    """A cosine lies in [-1, 1], whatever the lengths of the vectors."""
    out = outputs["output"]
    if out.dtype.kind == "f" and np.any(np.abs(out) > 1 + 1e-9):
        return (
            f"your result reaches {float(np.max(np.abs(out))):.3g} on case "
            f"{case.describe()}, but a cosine lies between -1 and 1: the division does not "
            "remove both vectors' lengths"
        )
    return None


COSINE = GRADERS.add(
    Grader(
        name="cosine_similarity",
        signature="cosine_similarity(a, b) with a, b: (..., d) -> (...)",
        reference=cosine_similarity,
        cases=_cosine_cases(),
        mistakes=(
            Mistake(
                "operator precedence: `x / y * z` is `(x / y) * z`, so the length of `b` "
                "multiplies the result instead of dividing it; the whole denominator, the "
                "product of the two lengths, needs its own parentheses",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a) * _norm(b),
                needs=r"/[^/\n]*\*",
            ),
            Mistake(
                "you divided by the length of the elementwise product a * b: the denominator "
                "is the product of the two vectors' lengths, one length per vector",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a * b),
            ),
            Mistake(
                "you divided by the length of `a` only, so the result still grows with the "
                "length of `b`",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a),
            ),
            Mistake(
                "you divided by the length of `b` only, so the result still grows with the "
                "length of `a`",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(b),
            ),
            Mistake(
                "you returned the dot product: it still depends on both lengths, which the "
                "cosine removes",
                lambda a, b: np.sum(a * b, axis=-1),
            ),
            Mistake(
                "you divided by the squared lengths: a length is the square root of the sum "
                "of squares, |a| = sqrt(Σ a_i²)",
                lambda a, b: np.sum(a * b, axis=-1) / (np.sum(a * a, -1) * np.sum(b * b, -1)),
            ),
            Mistake(
                "you took the norm of the whole array: one length for the whole batch, where "
                "each vector needs its own",
                lambda a, b: np.sum(a * b, axis=-1) / (np.linalg.norm(a) * np.linalg.norm(b)),
            ),
            *(
                Mistake(
                    f"for `{name}` you divided by {name}·{name}, its squared length: a length "
                    f"is the square root of that sum of squares, |{name}| = "
                    f"sqrt({name}·{name}), as you have it for `{other}`",
                    lambda a, b, squared=squared: np.sum(a * b, axis=-1) / squared(a, b),
                )
                for name, other, squared in (
                    ("a", "b", lambda a, b: np.sum(a * a, -1) * _norm(b)),
                    ("b", "a", lambda a, b: _norm(a) * np.sum(b * b, -1)),
                )
            ),
            Mistake(
                "you normalised along the first axis (axis=0): on a batch (n, d) that gives "
                "each column, one feature across the batch, length 1, not each vector; a "
                "vector's length is taken over its own d entries, the last axis",
                lambda a, b: np.sum(
                    (a / np.linalg.norm(a, axis=0)) * (b / np.linalg.norm(b, axis=0)), axis=-1
                ),
            ),
            Mistake(
                "you divided by |a| twice; the denominator is |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a) ** 2,
            ),
            Mistake(
                "you added the lengths; the denominator is their product, |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1) / (_norm(a) + _norm(b)),
            ),
            Mistake(
                _KEPT_AXIS,
                lambda a, b: (
                    np.sum(a * b, axis=-1, keepdims=True) / (_norm(a, True) * _norm(b, True))
                ),
            ),
            Mistake(
                "you returned the cosine distance, 1 - cos θ (as in scipy's `cosine`): the "
                "exercise asks for the similarity itself",
                lambda a, b: 1.0 - _cos(a, b),
            ),
            Mistake(
                "you measured the lengths with ord=1 (the sum of absolute values): a vector's "
                "length is the square root of the sum of squares",
                lambda a, b: (
                    np.sum(a * b, axis=-1)
                    / (np.linalg.norm(a, ord=1, axis=-1) * np.linalg.norm(b, ord=1, axis=-1))
                ),
            ),
            Mistake(
                "your lengths keep their axis (keepdims) but the dot product drops it: "
                "(n,) divided by (n, 1) broadcasts to an (n, n) table, or fails on a batch; "
                "reduce both the same way (keepdims everywhere, or nowhere)",
                lambda a, b: (
                    np.sum(a * b, axis=-1)
                    / (
                        np.linalg.norm(a, axis=-1, keepdims=True)
                        * np.linalg.norm(b, axis=-1, keepdims=True)
                    )
                ),
            ),
            Mistake(
                "you returned the angle θ (arccos): the exercise asks for its cosine, which "
                "is 1 for parallel vectors",
                lambda a, b: np.arccos(np.clip(_cos(a, b), -1.0, 1.0)),
            ),
        ),
        properties=(Property(_in_range),),
        error_hints=_BATCHED_VECTOR_HINTS,
        hint="compute the three pieces separately (the dot product and each vector's "
        "length, one number per vector) and check their shapes; a cosine lies in [-1, 1]. "
        'The chapter\'s section "How alike are two vectors?" computes it',
    )
)


def check_cosine_similarity(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: cosine similarity along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return COSINE.check(fn)


def _cosine_flip_reason(value: float) -> str | None:
    """What a cosine no listed answer explains says about the reasoning."""
    if not -1 <= value <= 1:
        return (
            f"a cosine is between -1 and 1, and {value:.4g} is not: it divides the dot product "
            "by both lengths, so it measures only the angle; is that number an angle, a length "
            "or a dot product rather than a cosine?"
        )
    return None


COSINE_FLIP = GRADERS.add(
    Question(
        name="cosine_flip",
        answer=-1.0,
        atol=1e-6,
        explanation="-3a points exactly the opposite way from a: the angle is 180° and "
        "cos 180° = -1. The factor 3 changes the length, which the cosine divides out",
        wrong=(
            (-3.0, "the factor 3 only stretches the vector; the cosine divides out lengths"),
            (3.0, "a cosine never leaves [-1, 1]; and -3a points away from a"),
            (1.0, "a and -3a lie on one line, but do they point the same way?"),
            (0.0, "0 is the cosine of perpendicular vectors; -3a lies on the same line as a"),
            (
                -1 / 3,
                "the cosine divides by both lengths, |a| and |-3a| = 3|a|: the factor 3 cancels",
            ),
            (180.0, "180° is the angle between a and -3a; the question asks for its cosine"),
            (
                -0.5,
                "-0.5 is the cosine of a 120° angle: a and -3a lie on one line, so the angle "
                "between them is 0° or 180°; which one, when the factor is negative?",
            ),
            (
                math.pi,
                "π is the angle between a and -3a in radians (180°): the question asks for the "
                "cosine of that angle",
            ),
            (
                -math.pi,
                "-π is an angle in radians (-180°), the angle between a and -3a: the question "
                "asks for the cosine of that angle, a number between -1 and 1",
            ),
            (
                -9.0,
                "-9 = 3 × -3: a factor of 3 counted twice instead of cancelling; the cosine "
                "divides by both lengths, |a| and 3|a|, so every factor of 3 cancels",
            ),
            (
                -0.9,
                "opposite vectors have a cosine of exactly -1, not about -1: the lengths cancel "
                "exactly, nothing here is approximate",
            ),
            (
                -0.99,
                "opposite vectors have a cosine of exactly -1, not about -1: the lengths cancel "
                "exactly, nothing here is approximate",
            ),
            (
                1 / 3,
                "a cosine does not depend on the lengths, and its sign says whether the "
                "vectors point the same way: does -3a point the same way as a?",
            ),
            (9.0, "a cosine never leaves [-1, 1]: the lengths |a| and 3|a| are divided out"),
            (
                -1 / 9,
                "that divides by the squares of the lengths: the cosine divides by the lengths "
                "themselves, |a| and 3|a|, so the factor 3 cancels",
            ),
        ),
        hint="draw a and -3a: what is the angle between them, and does a length change a cosine?",
        reason=_cosine_flip_reason,
    )
)


def check_cosine_flip(answer: Any) -> CheckResult:
    """Check a prediction: ``cosine_similarity(a, -3 * a)`` for a nonzero ``a``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return COSINE_FLIP.check(answer)


# ------------------------------------------------------------------ 2.5 softmax


def _softmax_reference(x: Any, axis: int = -1, temperature: float = 1.0) -> Any:
    return softmax(x, axis, temperature=temperature)


def _nan_to_num_softmax(x: np.ndarray, axis: int, temperature: float) -> np.ndarray:
    """Planted: the unshifted softmax with its NaN (from inf / inf) replaced by 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x / temperature)
        return np.nan_to_num(e / e.sum(axis=axis, keepdims=True))


def _exp_over(z: np.ndarray, axis: int) -> np.ndarray:
    """``exp(z - max)`` along ``axis``: the stable numerator, shared by planted mistakes."""
    return np.exp(z - np.max(z, axis=axis, keepdims=True))


def _normalise(e: np.ndarray, axis: int) -> np.ndarray:
    return e / np.sum(e, axis=axis, keepdims=True)


def _softmax_cases() -> tuple[Case, ...]:
    rng = _rng()

    def logits(*shape: int) -> np.ndarray:
        return 2.0 * rng.standard_normal(shape)

    return (
        Case("a vector", {"x": logits(5)}),
        Case("rows of a matrix", {"x": logits(3, 6)}),
        Case("a square matrix", {"x": logits(4, 4)}),
        Case("a batch", {"x": logits(2, 3, 4)}),
        Case("columns", {"x": logits(4, 3)}, {"axis": 0}),
        Case("the middle axis of a batch", {"x": logits(2, 3, 4)}, {"axis": 1}),
        Case("a low temperature", {"x": logits(3, 5)}, {"temperature": 0.5}),
        Case("a high temperature", {"x": logits(2, 6)}, {"temperature": 10.0}),
        Case("a very low temperature", {"x": logits(3, 4)}, {"axis": 0, "temperature": 0.1}),
        Case("logits of 1000", {"x": 1000.0 + logits(2, 4)}),
        Case("logits of -1000", {"x": -1000.0 + logits(2, 4)}),
        Case("rows of 1000 and -1000", {"x": np.array([[1000.0], [-1000.0]]) + logits(2, 4)}),
        # Subtracting any constant per slice is exact on paper; only the max keeps every
        # exponent <= 0 in floating point, whatever the spread and the temperature.
        Case("a wide spread", {"x": np.array([[0.0, 800.0, -800.0], [3.0, -1.0, 2.0]])}),
        Case(
            "logits of 1000 at a low temperature",
            {"x": 1000.0 + logits(2, 4)},
            {"temperature": 0.5},
        ),
        Case(
            "logits of -1000 at a very low temperature",
            {"x": -1000.0 + logits(4, 2)},
            {"axis": 0, "temperature": 0.1},
        ),
    )


def _clipped_softmax(bound: float) -> Callable[..., np.ndarray]:
    def softmax(x: np.ndarray, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
        return _normalise(np.exp(np.clip(x / temperature, -bound, bound)), axis)

    return softmax


def _sums_to_one(outputs: dict[str, np.ndarray], case: Case) -> str | None:
    """Softmax weights sum to 1 along ``axis``: say along which axis they do instead."""
    out = outputs["output"]
    axis = case.options.get("axis", -1)
    if out.dtype.kind != "f" or out.ndim == 0 or not np.all(np.isfinite(out)):
        return None
    if np.allclose(out.sum(axis=axis), 1.0, atol=1e-6):
        return None
    others = [
        k for k in range(out.ndim) if k != axis % out.ndim and np.allclose(out.sum(axis=k), 1.0)
    ]
    if others:
        return (
            f"on case {case.describe()} your weights sum to 1 along axis {others[0]}, not "
            f"along axis={axis}: each slice along `axis` is one set of weights to normalise"
        )
    if np.isclose(out.sum(), 1.0):
        return (
            f"on case {case.describe()} your weights sum to 1 over the whole array: each "
            "slice along `axis` is one set of weights and sums to 1 by itself"
        )
    return None


SOFTMAX = GRADERS.add(
    Grader(
        name="softmax",
        signature="softmax(x, axis=-1, temperature=1.0) -> weights, the shape of x",
        reference=_softmax_reference,
        cases=_softmax_cases(),
        mistakes=(
            Mistake(
                "np.nan_to_num hides the overflow instead of avoiding it: e^1000 is inf, inf / "
                "inf is NaN, and a NaN turned into 0 leaves a row that no longer sums to 1. "
                "Make the exponentials finite before they are taken (the hints under the "
                "exercise say what leaves the result unchanged)",
                lambda x, axis=-1, temperature=1.0: _nan_to_num_softmax(x, axis, temperature),
            ),
            Mistake(
                "you shifted by the largest absolute value, not the largest value: for logits "
                "of -1000 that subtracts 1000 more, every exponential underflows to 0 and 0/0 "
                "is NaN; the shift that keeps the largest exponential at e^0 = 1 uses the "
                "values themselves",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.abs(x / temperature).max(axis, keepdims=True)),
                    axis,
                ),
            ),
            Mistake(
                "you divided by the temperature twice (once before the shift and once after "
                "it), which divides the logits by T²: divide them once",
                lambda x, axis=-1, temperature=1.0: softmax(x / temperature**2, axis),
            ),
            Mistake(
                "overflowed at logits of 1000: e^1000 = inf and inf/inf = NaN (at -1000, every "
                "exponential is 0 and 0/0 = NaN); subtracting the same number from a slice "
                "leaves softmax unchanged, and the right number keeps every exponent ≤ 0",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature)
                    / np.sum(np.exp(x / temperature), axis=axis, keepdims=True)
                ),
            ),
            *(
                Mistake(
                    "you clipped the logits to keep exp finite: clipping changes the "
                    "differences between them, and so the weights; subtracting the right "
                    "number from each slice keeps every exponent ≤ 0 without changing them",
                    _clipped_softmax(bound),
                )
                for bound in (50.0, 100.0, 500.0, 700.0)
            ),
            Mistake(
                "you subtracted one max for the whole array, so slices far below it underflow "
                "to 0/0: each slice along `axis` needs its own maximum",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature - np.max(x / temperature))
                    / np.sum(np.exp(x / temperature - np.max(x / temperature)), axis, keepdims=True)
                ),
            ),
            Mistake(
                "you subtracted the min instead of the max: with values from -800 to 800, "
                "x - min reaches 1600 and e^1600 = inf; only the max keeps every exponent ≤ 0",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.min(x / temperature, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you subtracted the mean instead of the max: a value 800 above the mean "
                "gives e^800 = inf; only the max keeps every exponent ≤ 0",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.mean(x / temperature, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you subtracted the max of x, but exponentiated x/τ: at τ = 0.5, logits of "
                "1000 give e^(2000 - 1000) = inf; the max must be that of the values you "
                "exponentiate",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.max(x, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you ignored the `axis` argument (always the last axis): on the cases with "
                "axis=0 or axis=1 the wrong slices sum to 1",
                lambda x, axis=-1, temperature=1.0: softmax(x, -1, temperature=temperature),
            ),
            Mistake(
                "softmax over the wrong axis: you normalised along axis 0; the slices that sum "
                "to 1 run along `axis` (by default the last one, -1)",
                lambda x, axis=-1, temperature=1.0: softmax(x, 0, temperature=temperature),
            ),
            Mistake(
                "you divided by the sum over the whole array: the whole array sums to 1, "
                "where each slice along `axis` should",
                lambda x, axis=-1, temperature=1.0: (
                    _exp_over(x / temperature, axis) / np.sum(_exp_over(x / temperature, axis))
                ),
            ),
            Mistake(
                "you multiplied the logits by the temperature: a high temperature then "
                "sharpens the weights, where dividing by it flattens them",
                lambda x, axis=-1, temperature=1.0: softmax(x * temperature, axis),
            ),
            Mistake(
                "the temperature had no effect: the weights at τ = 0.5 and τ = 10 are those "
                "of τ = 1. Either τ never reached the computation, or it divided something "
                "the normalisation cancels (the exponentials, or their sum: a common factor "
                "of numerator and denominator); τ divides the logits, before the exponential",
                lambda x, axis=-1, temperature=1.0: softmax(x, axis),
            ),
            Mistake(
                "you forgot to normalise: exp(...) alone is positive but does not sum to 1 "
                "along `axis`",
                lambda x, axis=-1, temperature=1.0: _exp_over(x / temperature, axis),
            ),
            Mistake(
                "you divided the weights by the temperature after the softmax: τ belongs "
                "inside, on the logits, so the result still sums to 1",
                lambda x, axis=-1, temperature=1.0: softmax(x, axis) / temperature,
            ),
            Mistake(
                "you subtracted the max along the last axis but normalised along `axis`: the "
                "number subtracted must be the same within each slice that is normalised, "
                "or it no longer cancels",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.max(x / temperature, -1, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you returned the log of the weights (log-softmax, x - log Σ e^x): the "
                "exercise asks for the weights, positive and summing to 1",
                lambda x, axis=-1, temperature=1.0: np.log(
                    softmax(x, axis, temperature=temperature)
                ),
            ),
        ),
        properties=(Property(_sums_to_one),),
        hint="the output has the shape of x and sums to 1 along `axis`; check that first on "
        "a small case by hand, then on logits of 1000 (the hints under the exercise show why "
        "it overflows and what leaves the result unchanged). The chapter's section "
        '"Softmax: from scores to weights" computes it',
    )
)


def check_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, axis=-1, temperature=1.0)``: a numerically stable softmax with temperature.

    The output has the shape of ``x``, is non-negative and sums to 1 along ``axis``; logits
    of ±1000 (also at low temperatures) and slices spread from -800 to 800 must not
    overflow. Cases use the defaults, ``axis=0``/``axis=1`` and temperatures from 0.1 to 10
    (always given as keywords).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SOFTMAX.check(fn)


def _shifted_softmax_reason(value: float) -> str | None:
    """What a weight no listed answer explains says about the reasoning."""
    if not 0 <= value <= 1:
        return (
            f"{value:.4g} is not a weight: a softmax weight is a share of its row, between 0 "
            "and 1, its exponential divided by the sum of the row's exponentials; is that "
            "number a score or an exponential rather than a share?"
        )
    return None


SHIFTED_SOFTMAX = GRADERS.add(
    Question(
        name="shifted_softmax",
        answer=0.6652,
        atol=0.005,
        explanation="adding 100 to every score multiplies every e^x by the same e^100, which "
        "cancels in the ratio: the weights are those of [1, 2, 3], and the largest is "
        "e^3 / (e + e^2 + e^3) ≈ 0.665. The same fact lets softmax subtract the max",
        wrong=(
            (
                1.0,
                "the scores are all large, but only their differences matter: 103 is just "
                "1 above 102",
            ),
            (0.3333, "equal weights would need equal scores; the differences of 1 remain"),
            (
                103 / 306,
                "that weight is proportional to the scores (103 / 306): softmax compares "
                "e^score, not the scores themselves",
            ),
            (
                math.e / (math.e + math.e**2 + math.e**3),
                "that is the smallest of the three weights; the question asks for the largest",
            ),
            (
                math.e**2 / (math.e + math.e**2 + math.e**3),
                "that is the middle one of the three weights; the question asks for the largest",
            ),
            (
                0.5,
                "equal halves would need two equal top scores: the shift moves every score "
                "by the same 100, so it leaves their differences as they were, and a softmax "
                "weight depends on nothing else (write e^(100 + x) as e^100 · e^x)",
            ),
            (
                0.0,
                "e^103 is huge, but so is the denominator: e^101 + e^102 + e^103 grows by the "
                "same factor e^100, which cancels, so no weight vanishes",
            ),
            (
                0.9,
                "too sharp: large scores do not make softmax peakier, only larger differences "
                "do, and the differences here are those of [1, 2, 3]",
            ),
            (
                math.e**3 / (math.e + math.e**2),
                "that is more than 1, which no softmax weight can be: the denominator adds "
                "all three exponentials, the numerator's own term included",
            ),
            (
                103.0,
                "103 is the largest score; the question asks for its softmax weight, the share "
                "of 1 that the softmax gives it, a number between 0 and 1",
            ),
            (
                math.e**3,
                "e^3 is the numerator of the largest weight alone: a weight divides it by the "
                "sum of the three exponentials of its row, so it is a share between 0 and 1",
            ),
        ),
        hint="write e^(100 + x_i) as e^100 · e^x_i: what happens to e^100 between the numerator and "
        "the denominator? (Give two significant digits.)",
        not_finite_hint="you expected e^103 to overflow, but a float64 exponential "
        "overflows only past e^709, and the common factor e^100 cancels between the numerator "
        "and the denominator anyway: every weight is a finite number, the same as for "
        "unshifted scores",
        near=0.15,
        near_hint="close, but not it: the common factor e^100 cancels between numerator and "
        "denominator, so the shift changes no weight and only the differences of the scores "
        "count; work the largest weight out from them to two significant digits",
        reason=_shifted_softmax_reason,
    )
)


def check_shifted_softmax(answer: Any) -> CheckResult:
    """Check a prediction: the largest weight of ``softmax([101, 102, 103])``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SHIFTED_SOFTMAX.check(answer)


# ------------------------------------------------------------------ 2.6 the spread of q · k


def _spread_reference(d: int, n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = np.sum(q * k, axis=-1)  # one score per pair: (n, d), (n, d) -> (n,)
    return float(np.std(s)), float(np.std(s / math.sqrt(d)))


def _spread_with(
    score: Callable[[np.ndarray, np.ndarray], np.ndarray],
    stat: Callable[[np.ndarray], float] = np.std,
    scale: Callable[[int], float] = math.sqrt,
    draw: str = "normal",
    entry_std: Callable[[int], float] = lambda d: 1.0,
) -> Callable[[int, int, int], tuple[float, float]]:
    """A planted ``score_spread``: another score, statistic, scale or distribution (or
    entries of another spread, ``entry_std(d)``)."""

    def score_spread(d: int, n: int, seed: int) -> tuple[float, float]:
        rng = np.random.default_rng(seed)
        sample = rng.standard_normal if draw == "normal" else rng.random
        q, k = entry_std(d) * sample((n, d)), entry_std(d) * sample((n, d))
        s = score(q, k)
        return float(stat(s)), float(stat(s / scale(d)))

    return score_spread


def _spread_same_draws(d: int, n: int, seed: int) -> tuple[float, float]:
    q = np.random.default_rng(seed).standard_normal((n, d))
    s = np.sum(q * q, axis=-1)  # k drawn from a second generator with the same seed: k == q
    return float(np.std(s)), float(np.std(s / math.sqrt(d)))


def _spread_transposed_draws(d: int, n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((d, n)), rng.standard_normal((d, n))
    s = np.sum(q * k, axis=-1)  # d sums of n products
    return float(np.std(s)), float(np.std(s / math.sqrt(d)))


def _spread_two_generators(d: int, n: int, seed: int) -> tuple[float, float]:
    q = np.random.default_rng(seed).standard_normal((n, d))
    k = np.random.default_rng(seed + 1).standard_normal((n, d))  # a second generator
    s = np.sum(q * k, axis=-1)
    return float(np.std(s)), float(np.std(s / math.sqrt(d)))


def _spreads_fit(outputs: Any, case: Case) -> str | None:
    """The two spreads of the same scores: dividing scores by sqrt(d) divides their std by it."""
    for key, which in (("raw", "first"), ("scaled", "second")):
        value = np.asarray(outputs[key])
        if value.size != 1:  # an array where one number is due: the scores, not their spread
            scores = "the scaled scores" if key == "scaled" else "the raw scores"
            what = (
                f", one number per pair (q, k): {scores} themselves"
                if case.inputs["n"] in value.shape
                else ""
            )
            return (
                f"your {which} value `{key}` is an array of shape {value.shape}{what}, not "
                "their spread: the exercise asks for one number, the standard deviation of "
                "those scores, as a float"
            )
    raw, scaled = (float(np.asarray(outputs[k]).reshape(-1)[0]) for k in ("raw", "scaled"))
    d = case.inputs["d"]
    if math.isclose(scaled, raw / math.sqrt(d), rel_tol=1e-6):
        return None
    if math.isclose(scaled, raw**2 / d, rel_tol=1e-6) or math.isclose(
        scaled, (raw / math.sqrt(d)) ** 2, rel_tol=1e-6
    ):
        return (
            "your second number is a variance (the square of a spread): near 1 a variance "
            "and a standard deviation look alike, but the exercise asks for the spread "
            "(std) of the scaled scores"
        )
    n = case.inputs["n"]
    if scaled and math.isclose(scaled, raw / math.sqrt(n), rel_tol=1e-6):
        return (
            f"your second number is the first divided by sqrt({n}), the case's n, not by "
            f"sqrt(d) = sqrt({d}): are your parameters in the stub's order, "
            "score_spread(d, n, seed) (it is called with d first), and does the scale read d?"
        )
    ratio = raw / scaled if scaled else 0.0
    square = round(ratio**2)
    if square > 1 and math.isclose(ratio**2, square, rel_tol=1e-6):
        return (
            f"your second number is the first divided by {ratio:g} = sqrt({square}), on a case "
            f"with d = {d}: the scale is sqrt(d) of each case; is a number typed in where "
            "your code should read d?"
        )
    return (
        "your two numbers are not the spreads of the same scores: dividing every score by "
        "sqrt(d) divides their standard deviation by exactly sqrt(d), so measure both on "
        "one set of scores"
    )


def _pairs(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.sum(q * k, axis=-1)


SCORE_SPREAD = GRADERS.add(
    Grader(
        name="score_spread",
        signature="score_spread(d, n, seed) -> (raw, scaled): std of q·k and of q·k/sqrt(d)",
        reference=_spread_reference,
        cases=tuple(
            Case(f"d = {d}", {"d": d, "n": 3000, "seed": seed})
            for d, seed in ((4, 0), (16, 1), (100, 2))
        ),
        outputs=("raw", "scaled"),
        properties=(Property(_spreads_fit),),
        mistakes=(
            Mistake(
                "you measured the variance, not the standard deviation: the raw scores' "
                "variance is d, their spread (std) is sqrt(d)",
                _spread_with(_pairs, stat=np.var),
            ),
            Mistake(
                "you divided the scores by d: their spread is sqrt(d), so dividing by d "
                "leaves 1/sqrt(d), not 1",
                _spread_with(_pairs, scale=float),
            ),
            Mistake(
                "you measured the mean of the scores: it is about 0, since q·k is as often "
                "negative as positive; the spread is their standard deviation",
                _spread_with(_pairs, stat=np.mean),
            ),
            Mistake(
                "you measured the mean absolute score, mean |s|, not the standard deviation: "
                "for bell-shaped scores mean |s| is only about 0.8 σ (sqrt(2/π) σ), which is "
                "why your spreads are about a fifth too small; the spread is np.std of the "
                "scores",
                _spread_with(_pairs, stat=lambda s: np.mean(np.abs(s))),
            ),
            Mistake(
                "you drew uniform numbers in [0, 1) (rng.random): the entries should have "
                "mean 0 and variance 1, like rng.standard_normal's",
                _spread_with(_pairs, draw="uniform"),
            ),
            Mistake(
                "you summed over the pairs (the first axis) instead of over the d entries of "
                "each pair: each score is the sum of d products",
                _spread_with(lambda q, k: np.sum(q * k, axis=0)),
            ),
            Mistake(
                "your q and k are identical, so each score is q·q = |q|², never negative: "
                "whether you used one array twice or drew both from generators made from the "
                "same seed (they draw the same numbers), draw the keys separately, after the "
                "queries, from the one generator",
                _spread_same_draws,
            ),
            Mistake(
                "you drew q and k with shape (d, n): each score is then summed over the pairs "
                "(n products) instead of over the d entries of one pair; the shapes are (n, d)",
                _spread_transposed_draws,
            ),
            Mistake(
                "you scored every query against every key (q @ k.T, n² scores): score each "
                "query against its own key, one score per pair",
                _spread_with(lambda q, k: q @ k.T),
            ),
            Mistake(
                "your scores are d times too small (exactly the right ones divided by d): "
                "either you averaged the d products (`.mean(-1)`) where a score is their sum, "
                "a dot product, or you divided q and k by sqrt(d) before scoring; only the "
                "scores get divided by sqrt(d), for the second number",
                _spread_with(_pairs, entry_std=lambda d: 1 / math.sqrt(d)),
            ),
            *(
                Mistake(
                    "your q and k entries do not have standard deviation 1: rng.normal(loc, "
                    "scale) takes the standard deviation as its second argument, so "
                    "rng.normal(0, d) draws a spread of d; the exercise wants mean 0, "
                    "variance 1 (rng.standard_normal, or rng.normal(0, 1))",
                    _spread_with(_pairs, entry_std=std),
                )
                for std in (float, math.sqrt)
            ),
            Mistake(
                "you measured the spread of the products q_i k_i, not of their sums: one "
                "product has std 1 whatever d is; a score adds d of them",
                _spread_with(lambda q, k: q * k),
            ),
            Mistake(
                "you drew the keys from a second generator (seeded seed + 1): the statement "
                "asks for one generator made from the seed, the queries first, then the keys "
                "from the same one",
                _spread_two_generators,
            ),
            Mistake(
                "your first number is already the spread of the scaled scores (about 1): you "
                "divided the scores by sqrt(d) before measuring `raw`, then divided again for "
                "the second number; measure the raw scores first",
                _spread_with(lambda q, k: _pairs(q, k) / math.sqrt(q.shape[-1])),
            ),
        ),
        hint="check the pieces one at a time: the shapes of q and k, one score per pair "
        "(n scores, not n²), then the statistic (a spread, not a variance); the chapter's "
        'section "Why divide by √d?" makes the same measurement',
        rtol=0.1,  # a sample std from n = 3000 scores is within a few % of the truth
        atol=0.0,
        statistical=True,
        equivalent=(
            (
                "axis: np.sum(q * k, axis=-1) in s = np.sum(q * k, axis=-1) -> np.sum(q * k, "
                "axis=1)",
                "q * k has two axes: 1 is -1",
            ),
            (
                "drop: float(s.std()) in return float(s.std()), float((s / np.sqrt(d)).std()) "
                "-> s.std()",
                "a NumPy float is a float: the check accepts either",
            ),
            (
                "drop: float((s / np.sqrt(d)).std()) in return float(s.std()), float((s / "
                "np.sqrt(d)).std()) -> (s / np.sqrt(d)).std()",
                "a NumPy float is a float: the check accepts either",
            ),
        ),
    )
)


def check_score_spread(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(d, n, seed)``: the measured std of ``q·k`` and of ``q·k / sqrt(d)``.

    Any correct sampling passes (the comparison allows 10 %: a measured spread varies from
    draw to draw); numbers that are exactly those of a planted mistake's draws (keys from a
    second generator seeded ``seed + 1``) are refused.

    A sampling that passes but draws from NumPy's legacy global generator
    (``np.random.seed``, ``np.random.randn``) instead of the ``default_rng(seed)`` the
    statement asks for is refused: the global generator's state changes during the call,
    which a ``default_rng`` answer never does.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    # The legacy generator is read (and put back as it was) only to see whether the answer
    # used it.
    before = np.random.get_state()  # noqa: NPY002
    try:
        result = SCORE_SPREAD.check(fn)
        if not result.passed or not callable(fn):
            return result
        np.random.set_state(before)  # noqa: NPY002
        try:
            fn(4, 50, 0)
        except Exception:
            return result
        after = np.random.get_state()  # noqa: NPY002
    finally:
        np.random.set_state(before)  # noqa: NPY002
    if before[1].tobytes() == after[1].tobytes() and before[2:] == after[2:]:
        return result
    return record(
        make_result(
            SCORE_SPREAD.name,
            WRONG_VALUES,
            "your spreads are right, but they were drawn from NumPy's global generator",
            "`np.random.seed`, `np.random.randn` and the other `np.random.*` functions use "
            "one generator shared by the whole program (seeding it changes every later "
            "random draw elsewhere): the statement asks for your own generator, "
            "`rng = np.random.default_rng(seed)`, and draws from it (`rng.standard_normal`)",
            diagnosed=True,
        )
    )


# ------------------------------------------------------------------ 2.7 self-attention


def _self_attention_reference(x: Any) -> tuple[Any, Any]:
    return scaled_dot_product_attention(x, x, x)


def _scaled_scores(x: np.ndarray, divide_by: float | None = None) -> np.ndarray:
    """``x xᵀ / sqrt(D)`` (or divided by a planted wrong scale)."""
    scale = math.sqrt(x.shape[-1]) if divide_by is None else divide_by
    return x @ x.T / scale  # (T, D) @ (D, T) -> (T, T)


def _attend(
    x: np.ndarray, divide_by: float | None = None, axis: int = -1
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, weights)`` of weightless self-attention, with a planted scale or axis."""
    weights = softmax(_scaled_scores(x, divide_by), axis)  # (T, T)
    return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)


def _attend_centred(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: the mean token subtracted before the scores (the values stay x)."""
    weights = softmax(_scaled_scores(x - x.mean(axis=0)), -1)  # (T, T)
    return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)


def _attend_cosine(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: cosine scores (the rows normalised first), mixing the rows of x."""
    weights = softmax(_scaled_scores(x / np.linalg.norm(x, axis=-1, keepdims=True)), -1)
    return weights @ x, weights


def _attend_dimensions(x: np.ndarray, mix_right: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Planted: scores x.T @ x, (D, D), then the same mixing (fails unless T = D), or the
    mixing that fits them, x @ weights: (T, D) @ (D, D)."""
    weights = softmax(x.T @ x / math.sqrt(x.shape[-1]), -1)  # (D, D)
    return (x @ weights if mix_right else weights @ x), weights


def _attend_elementwise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: scores x * x, entry by entry: (T, D) weights mixing entry by entry."""
    weights = softmax(x * x / math.sqrt(x.shape[-1]), -1)  # (T, D)
    return weights * x, weights


def _attend_unstable(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: a softmax without the max subtraction (overflows on large entries)."""
    e = np.exp(_scaled_scores(x))  # (T, T)
    weights = e / np.sum(e, axis=-1, keepdims=True)
    return weights @ x, weights


def _attend_global_max(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: one max for the whole (T, T) matrix (rows far below it underflow)."""
    s = _scaled_scores(x)
    e = np.exp(s - np.max(s))  # (T, T)
    weights = e / np.sum(e, axis=-1, keepdims=True)
    return weights @ x, weights


def _attend_whole(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: the weights normalised over the whole (T, T) matrix, not per row."""
    e = _exp_over(_scaled_scores(x), -1)  # (T, T)
    weights = e / np.sum(e)
    return weights @ x, weights


def _self_attention_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case("4 tokens of size 3", {"x": rng.standard_normal((4, 3))}),
        Case("6 tokens of size 8", {"x": rng.standard_normal((6, 8))}),
        Case("5 tokens of size 5", {"x": rng.standard_normal((5, 5))}),
        Case("one token", {"x": rng.standard_normal((1, 4))}),
        Case("large entries", {"x": 30.0 * rng.standard_normal((3, 4))}),
    )


def _rows_sum_to_one(outputs: dict[str, np.ndarray], case: Case) -> str | None:
    """Each row of the weights is one query's distribution over the keys."""
    w = outputs["weights"]
    if w.ndim != 2 or w.shape[0] != w.shape[1] or not np.all(np.isfinite(w)):
        return None
    if np.allclose(w.sum(axis=-1), 1.0, atol=1e-6):
        return None
    if np.allclose(w.sum(axis=0), 1.0, atol=1e-6):
        return (
            f"on case {case.describe()} the columns of your weights sum to 1, not the rows: "
            "the softmax normalised each key's column, where row i (query i) is the "
            "distribution that mixes the tokens for token i"
        )
    if np.isclose(w.sum(), 1.0):
        return (
            f"on case {case.describe()} your weights sum to 1 over the whole (T, T) matrix: "
            "each row (one query) is a distribution of its own and sums to 1"
        )
    sums = w.sum(axis=-1)
    if np.allclose(sums, sums[0], rtol=1e-6) and sums[0] > 0:  # one factor on every row
        D = np.asarray(case.inputs["x"]).shape[-1]
        for factor, name in ((1 / math.sqrt(D), "1/sqrt(D)"), (1 / D, "1/D")):
            if math.isclose(sums[0], factor, rel_tol=1e-6):
                return (
                    f"on case {case.describe()} every row of your weights sums to {name} = "
                    f"{sums[0]:.4g}, not 1: you divided the weights after the softmax; the "
                    "scale belongs to the scores, before they go through the softmax, which "
                    "then makes each row sum to 1"
                )
        return (
            f"on case {case.describe()} every row of your weights sums to {sums[0]:.4g}, not "
            "1: the weights were multiplied by a constant after the softmax; a scale belongs "
            "to the scores, before the softmax, which then makes each row sum to 1"
        )
    return (
        f"on case {case.describe()} the rows of your weights do not sum to 1 (row 0 sums to "
        f"{float(w[0].sum()):.4g}): `weights` should be the softmax of the scores, row by row"
    )


def _attention_error_hint(message: str) -> str | None:
    """Shapes in a broadcasting or matrix-product error, read for self-attention."""
    shapes = re.findall(r"\((\d+),(\d+)\)", message)
    if "could not be broadcast" in message and len(shapes) == 2:
        (a0, a1), (b0, b1) = shapes
        if a0 == a1 == b0 and b1 != a1:  # (T, T) * (T, D)
            return (
                f"`*` multiplies entry by entry, so the weights ({a0}, {a1}) and x ({b0}, "
                f"{b1}) must have the same shape; but each output row is a weighted sum of "
                "all the rows of x, a matrix product"
            )
    if "not aligned" in message or "mismatch in its core dimension" in message:
        return (
            "the sizes of a matrix product don't line up: x is (T, D), the scores pair every "
            "token with every token, (T, D) with (D, T) -> (T, T), and the output mixes the "
            "rows of x, (T, T) with (T, D) -> (T, D); one operand is not oriented that way"
        )
    return None


SELF_ATTENTION = GRADERS.add(
    Grader(
        name="self_attention",
        signature="self_attention(x) with x: (T, D) -> (out (T, D), weights (T, T))",
        reference=_self_attention_reference,
        cases=_self_attention_cases(),
        outputs=("out", "weights"),
        mistakes=(
            Mistake(
                "your softmax divides by a sum taken without `keepdims=True`: a sum along "
                "axis 1 of the (T, T) exponentials has shape (T,), which broadcasts as a row, "
                "so column j is divided by row j's sum instead of every row by its own (the "
                "weights are square, so no shape error warned you); keep the summed axis",
                lambda x: (lambda e: (e / e.sum(-1) @ x, e / e.sum(-1)))(
                    np.exp(_scaled_scores(x) - _scaled_scores(x).max(-1, keepdims=True))
                ),
            ),
            Mistake(
                "your weights are the scores divided by their row's sum, with no exponential: "
                "softmax takes e to the power of each score first, so that every weight is "
                "positive and larger scores win more than proportionally",
                lambda x: (
                    lambda s: (s / s.sum(-1, keepdims=True) @ x, s / s.sum(-1, keepdims=True))
                )(_scaled_scores(x)),
            ),
            Mistake(
                "you hid each token from itself (the diagonal set to -inf): a token attends to "
                "every token, itself included, so its own score stays in its row",
                lambda x: (lambda w: (w @ x, w))(
                    softmax(np.where(np.eye(len(x), dtype=bool), -np.inf, _scaled_scores(x)), -1)
                ),
            ),
            Mistake(
                "your scores are cosines (each vector divided by its length first): "
                "self-attention scores are plain dot products of the rows, scaled by sqrt(D)",
                _attend_cosine,
            ),
            Mistake(
                "your scores are xᵀ x, (D, D): that compares the D dimensions with each "
                "other, not the tokens; a score pairs two tokens, one operand is not "
                "oriented that way",
                _attend_dimensions,
            ),
            Mistake(
                "your scores are xᵀ x, (D, D): that compares the D dimensions with each "
                "other, not the tokens; a score pairs two tokens, so the weights are (T, T), "
                "one row per token",
                lambda x: _attend_dimensions(x, mix_right=True),
            ),
            Mistake(
                "your scores multiply x by x entry by entry (x * x), one number per entry: "
                "a score compares two whole tokens, every token with every token, (T, T)",
                _attend_elementwise,
            ),
            Mistake(
                "you forgot to scale: the scores x xᵀ are not divided by sqrt(D), so their "
                "spread grows with D and the softmax is too sharp",
                lambda x: _attend(x, divide_by=1.0),
            ),
            Mistake(
                "you divided the scores by D; the scale is sqrt(D), the square root of the "
                "vector size",
                lambda x: _attend(x, divide_by=x.shape[-1]),
            ),
            Mistake(
                "you multiplied the scores by sqrt(D) instead of dividing",
                lambda x: _attend(x, divide_by=1.0 / math.sqrt(x.shape[-1])),
            ),
            Mistake(
                "you divided by sqrt(T), the number of tokens (len(x) or x.shape[0]); the "
                "scale is sqrt(D), the size of each vector",
                lambda x: _attend(x, divide_by=math.sqrt(x.shape[0])),
            ),
            Mistake(
                "you divided by sqrt(T·D), the square root of the number of entries "
                "(x.size); the scale is sqrt(D), the size of each vector",
                lambda x: _attend(x, divide_by=math.sqrt(x.size)),
            ),
            Mistake(
                "softmax over the wrong axis: the columns of your weights sum to 1, where "
                "each ROW (one query) must",
                lambda x: _attend(x, axis=0),
            ),
            Mistake(
                "overflowed on large entries: without subtracting each row's max before exp, "
                "e^(large score) is inf and inf/inf is NaN",
                _attend_unstable,
            ),
            Mistake(
                "you subtracted one max for the whole (T, T) matrix: rows whose scores lie "
                "far below it underflow to 0/0 on large entries; each row needs its own max",
                _attend_global_max,
            ),
            Mistake(
                "you normalised over the whole matrix: the (T, T) weights sum to 1 in all, "
                "where each row should",
                _attend_whole,
            ),
            Mistake(
                "you returned the scores (before the softmax) as `weights`",
                lambda x: (_attend(x)[0], _scaled_scores(x)),
            ),
            Mistake(
                "you averaged with the scores: `out` mixes the rows of x with the raw scores "
                "instead of the softmax weights",
                lambda x: (_scaled_scores(x) @ x, _attend(x)[1]),
            ),
            Mistake(
                "you used the transposed weights: row i of `out` should mix the rows of x "
                "with the weights of query i (row i of the weights, not column i)",
                lambda x: (_attend(x)[1].T @ x, _attend(x)[1]),
            ),
            Mistake(
                "you applied the weights twice (weights @ weights @ x): each output row is "
                "one weighted average of the rows of x, one product with the weights",
                lambda x: (_attend(x)[1] @ _attend(x)[1] @ x, _attend(x)[1]),
            ),
            Mistake(
                "your output sums over the queries (axis 0 of the weights), not over the "
                "keys: output row i mixes the rows of x with row i of the weights, so the sum "
                "runs over the second axis of the weights",
                lambda x: ((_attend(x)[1][:, :, None] * x[None]).sum(0), _attend(x)[1]),
            ),
            Mistake(
                "you changed x before scoring it (subtracted the mean token): the scores are "
                "the dot products of the rows of x as they are given, scaled",
                _attend_centred,
            ),
            Mistake(
                "you computed x.T @ weights: that mixes with the columns of the weights and "
                "gives a (D, T) result, the transpose of what each token needs",
                lambda x: (x.T @ _attend(x)[1], _attend(x)[1]),
            ),
            Mistake(
                "you averaged the scores, not the vectors: `out` mixes the rows of x",
                lambda x: (_attend(x)[1] @ _scaled_scores(x), _attend(x)[1]),
            ),
            Mistake(
                "you returned x unchanged as `out`; `out` is a weighted average of the rows of x",
                lambda x: (x, _attend(x)[1]),
            ),
            Mistake(
                "you returned (weights, out); the order is (out, weights)",
                lambda x: _attend(x)[::-1],
            ),
        ),
        properties=(Property(_rows_sum_to_one),),
        error_hints=(
            ("could not be broadcast", _attention_error_hint),
            ("not aligned", _attention_error_hint),
            ("mismatch in its core dimension", _attention_error_hint),
        ),
        hint="check each step's shape: the scores compare every token with every token, "
        "(T, T); each row of the weights sums to 1; each output row mixes the rows of x, "
        "(T, D). The chapter's section \"Self-attention with no weights: contextual "
        'embeddings" computes each step',
        equivalent=(
            ("size: x.shape[-1] in D = x.shape[-1] -> x.shape[1]", "x has two axes: 1 is -1"),
            (
                "axis: softmax(scores, axis=-1) in weights = softmax(scores, axis=-1) -> "
                "softmax(scores, axis=1)",
                "the scores have two axes: 1 is -1",
            ),
        ),
    )
)


def check_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x)``: weightless self-attention, ``x: (T, D) -> (out (T, D), weights (T, T))``.

    ``weights = softmax(x xᵀ / sqrt(D))`` row by row and ``out = weights @ x``: every token
    becomes a weighted average of all tokens (the queries, keys and values are x itself).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SELF_ATTENTION.check(fn)


def _equal_rows_reason(value: float) -> str | None:
    """What a weight no listed answer explains says about row 0's four scores."""
    if not 0 <= value <= 1:
        return (
            "a softmax weight is a share of its row, between 0 and 1: the scores go through "
            "the softmax before they weigh anything"
        )
    if abs(value - 1 / 3) < 0.05:
        return (
            "that looks like 1/3 rounded, a share among three: a token attends to itself "
            "too, so row 0 has four keys"
        )
    more = "more" if value > 1 / 4 else "less"
    return (
        f"a weight of {value:g} gives token 0 {more} than the other tokens of its row, which "
        "needs its score against itself to differ from its scores against them; but the "
        "four vectors are the same, so all four scores of row 0 are equal, and a softmax "
        "gives equal scores equal weights"
    )


EQUAL_ROWS = GRADERS.add(
    Question(
        name="equal_rows",
        answer=0.25,
        atol=0.001,
        explanation="the four rows are the same vector, so every score in a row is the same "
        "number and the softmax spreads the weight evenly: 1/4 each. A token prefers itself "
        "only when it matches itself better than it matches the others",
        wrong=(
            (
                1.0,
                "a token keeps the most weight for itself only when its own score is the "
                "largest; here all four scores of a row are equal",
            ),
            (0.0, "the weights of a row sum to 1, and here no key scores lower than another"),
            (0.5, "the scores of row 0 do not split into two groups: count how many are equal"),
            (
                1 / 3,
                "a token attends to itself too: its row has four keys, not the three others",
            ),
            (
                0.2,
                "that is 1/5: count the keys of row 0 again, four tokens (the token itself "
                "among them), four equal scores",
            ),
            (
                5.25 / math.sqrt(3),
                "that is the score of row 0 against any key (x · x / sqrt(3)), not a weight: "
                "the weights come out of the softmax, between 0 and 1",
            ),
            (
                5.25,
                "that is the raw score x · x, not a weight: the weights come out of the "
                "softmax, between 0 and 1",
            ),
            (3.0, "3 is the number of other tokens; the question asks for a weight, a share of 1"),
            (
                1 / 16,
                "1/16 is one entry's share of the whole 4 × 4 matrix: the softmax normalises "
                "each row on its own, over the four keys of that row",
            ),
        ),
        hint="compute the four scores of row 0: are any of them different from the others?",
        reason=_equal_rows_reason,
    )
)


def check_equal_rows(answer: Any) -> CheckResult:
    """Check a prediction: ``weights[0, 0]`` of weightless self-attention on 4 equal rows.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return EQUAL_ROWS.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 2 exercise, checked or not."""
