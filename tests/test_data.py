"""Tests for attnlab.tasks.data: the toy tasks, their padding and their determinism."""

from __future__ import annotations

import datetime
import itertools

import numpy as np
import pytest
import torch

from attnlab.tasks.data import (
    BOS_ID,
    EOS_ID,
    FEMALE_NAMES,
    FILLERS,
    MALE_NAMES,
    N_SPECIAL,
    PAD_ID,
    PRONOUN_WORDS,
    SEP_ID,
    AdditionTask,
    Batch,
    DateTask,
    Task,
    batches,
    make_batch,
    pronoun_accuracy,
    pronoun_batch,
    pronoun_batches,
    token_labels,
)


def _rows(batch: Batch) -> list[tuple[list[int], list[int], list[int]]]:
    """Each example without its padding: (src, y from tgt_in, y from tgt_out)."""
    out = []
    for src, tgt_in, tgt_out in zip(*batch, strict=True):
        s = [t for t in src.tolist() if t != PAD_ID]
        ti = [t for t in tgt_in.tolist() if t != PAD_ID]
        to = [t for t in tgt_out.tolist() if t != PAD_ID]
        assert ti[0] == BOS_ID and to[-1] == EOS_ID
        out.append((s, ti[1:], to[:-1]))
    return out


def test_special_ids_are_distinct_and_below_the_symbols() -> None:
    assert sorted({PAD_ID, BOS_ID, EOS_ID, SEP_ID}) == list(range(N_SPECIAL))
    task = Task("copy", n_symbols=7)
    assert task.vocab_size == N_SPECIAL + 7


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_copy_and_reverse_targets(name: str) -> None:
    task = Task(name, n_symbols=10, min_len=3, max_len=9)
    batch = make_batch(task, 64, rng=0)
    assert all(t.dtype == torch.int64 for t in batch)
    for src, y_in, y_out in _rows(batch):
        assert 3 <= len(src) <= 9
        assert all(N_SPECIAL <= t < N_SPECIAL + 10 for t in src)
        expected = src if name == "copy" else src[::-1]
        assert y_in == expected and y_out == expected


def test_padding_layout() -> None:
    task = Task("reverse", min_len=2, max_len=8)
    src, tgt_in, tgt_out = make_batch(task, 50, rng=1)
    lengths = (src != PAD_ID).sum(1)
    assert src.shape[1] == int(lengths.max())
    assert tgt_in.shape == tgt_out.shape == (50, src.shape[1] + 1)
    for b in range(50):
        n = int(lengths[b])
        assert torch.all(src[b, n:] == PAD_ID) and torch.all(src[b, :n] != PAD_ID)
        assert tgt_in[b, 0] == BOS_ID and tgt_out[b, n] == EOS_ID
        assert torch.all(tgt_in[b, n + 1 :] == PAD_ID) and torch.all(tgt_out[b, n + 1 :] == PAD_ID)
        # Teacher forcing: the decoder reads y shifted right by one.
        torch.testing.assert_close(tgt_in[b, 1 : n + 1], tgt_out[b, :n], rtol=0, atol=0)
    assert len(set(lengths.tolist())) > 1, "variable lengths expected"


@pytest.mark.parametrize("n_pairs", [1, 3])
def test_recall_answers_the_value_of_the_queried_key(n_pairs: int) -> None:
    task = Task("recall", n_symbols=8, min_len=2 * n_pairs + 2, max_len=20, n_pairs=n_pairs)
    assert task.max_tgt_len == 1 and task.max_seq_len == 20
    for src, y_in, y_out in _rows(make_batch(task, 100, rng=2)):
        keys, values = src[0 : 2 * n_pairs : 2], src[1 : 2 * n_pairs : 2]
        assert len(set(keys)) == n_pairs, "keys must be distinct"
        assert src[-2] == SEP_ID and src[-1] in keys
        noise = src[2 * n_pairs : -2]
        assert not set(noise) & set(keys), "noise must not look like a key"
        assert y_in == y_out == [values[keys.index(src[-1])]]


def test_same_seed_same_batch_and_generators_are_consumed() -> None:
    task = Task("copy", min_len=4, max_len=12)
    a, b = make_batch(task, 8, rng=5), make_batch(task, 8, rng=5)
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    gen = np.random.default_rng(5)
    first, second = make_batch(task, 8, rng=gen), make_batch(task, 8, rng=gen)
    torch.testing.assert_close(first.src, a.src, rtol=0, atol=0)
    assert not torch.equal(first.src[:, :4], second.src[:, :4])


def test_batches_stream_is_reproducible_and_fresh() -> None:
    task = Task("reverse")
    run1 = [b.src for b in itertools.islice(batches(task, 4, rng=3), 3)]
    run2 = [b.src for b in itertools.islice(batches(task, 4, rng=3), 3)]
    for x, y in zip(run1, run2, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    assert not torch.equal(run1[0], run1[1])


def test_device_argument() -> None:
    batch = Task("copy").sample(2, rng=0, device=torch.device("cpu"))
    assert all(t.device.type == "cpu" for t in batch)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "sort"}, "unknown task"),
        ({"name": "copy", "min_len": 5, "max_len": 4}, "min_len=5"),
        ({"name": "copy", "n_symbols": 0}, "n_symbols"),
        ({"name": "recall", "min_len": 3, "max_len": 9}, "length >= 4"),
        ({"name": "recall", "n_symbols": 2, "n_pairs": 2, "min_len": 8}, "n_pairs < n_symbols"),
    ],
)
def test_task_rejects_impossible_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Task(**kwargs)


def test_make_batch_argument_errors() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        make_batch(Task("copy"), 0)
    with pytest.raises(TypeError, match="Task"):
        make_batch("copy", 2)
    with pytest.raises(TypeError, match="rng"):
        make_batch(Task("copy"), 2, rng=1.5)


def test_token_labels() -> None:
    ids = torch.tensor([PAD_ID, BOS_ID, EOS_ID, SEP_ID, N_SPECIAL, N_SPECIAL + 1, N_SPECIAL + 26])
    assert token_labels(ids) == ["<pad>", "<bos>", "<eos>", "?", "a", "b", "s26"]
    assert token_labels([N_SPECIAL + 2]) == ["c"]
    with pytest.raises(ValueError, match="negative"):
        token_labels([-1])


# DateTask and AdditionTask ---------------------------------------------------------------


@pytest.mark.parametrize("split", ["train", "test"])
def test_date_targets_are_the_iso_form_of_the_source(split: str) -> None:
    task = DateTask(split=split)
    src, tgt_in, tgt_out = task.sample(200, rng=3)
    assert src.shape[1] <= 8 and tgt_in.shape == tgt_out.shape == (200, 11)
    assert (tgt_in[:, 0] == BOS_ID).all() and (tgt_out[:, -1] == EOS_ID).all()
    assert torch.equal(tgt_in[:, 1:], tgt_out[:, :-1])
    layouts = set()
    for s, y in zip(src, tgt_out, strict=True):
        text = task.decode(s)
        for fmt in ("%B %d, %Y", "%d %B %Y"):
            try:
                date = datetime.datetime.strptime(text, fmt).date()
            except ValueError:
                continue
            layouts.add(fmt)
            break
        else:
            raise AssertionError(f"unreadable source {text!r}")
        assert task.decode(y) == date.isoformat()
        assert 1900 <= date.year <= 2099
        # one day in ten is held out: the test split draws only those, train never does
        assert (date.toordinal() % 10 == 0) == (split == "test"), text
    assert layouts == {"%B %d, %Y", "%d %B %Y"}


def test_date_sources_have_no_leading_zero_and_one_format_can_be_chosen() -> None:
    task = DateTask(formats=("dmy",))
    assert task.source_tokens(2021, 3, 5, "mdy") == ["march", "5", ",", "2", "0", "2", "1"]
    assert task.source_tokens(2021, 3, 5, "dmy") == ["5", "march", "2", "0", "2", "1"]
    assert task.target_tokens(2021, 3, 5) == list("2021-03-05")
    src, _, _ = task.sample(50, rng=0)
    firsts = task.labels(src[:, 0])
    assert all(t.isdigit() and t != "0" for t in firsts), "dmy starts with the day"


def test_date_encode_decode_and_labels() -> None:
    task = DateTask()
    ids = task.encode("March 5, 2021")
    assert ids.shape == (1, 7)
    assert task.decode(ids[0]) == "march 5, 2021"
    assert task.decode(task.encode("17 november 1999")[0]) == "17 november 1999"
    assert task.labels([PAD_ID, BOS_ID, EOS_ID]) == ["<pad>", "<bos>", "<eos>"]
    assert task.vocab_size == 4 + 10 + 2 + 12 and task.max_seq_len == 11
    with pytest.raises(ValueError, match="'marhc' is not a token"):
        task.encode("marhc 5, 2021")
    with pytest.raises(ValueError, match=r"valid ids are 0\.\.27"):
        task.labels([28])


def test_date_batch_of_chosen_dates() -> None:
    task = DateTask()
    src, tgt_in, tgt_out = task.batch([(2021, 3, 5, "dmy"), (1999, 11, 17, "mdy")])
    assert task.decode(src[0]) == "5 march 2021" and task.decode(src[1]) == "november 17, 1999"
    assert src.shape == (2, 8) and (src[0, 6:] == PAD_ID).all(), "padded to the longer source"
    assert task.decode(tgt_out[1]) == "1999-11-17" and task.labels(tgt_in[0])[0] == "<bos>"
    with pytest.raises(ValueError, match="day is out of range"):
        task.batch([(2021, 2, 30, "mdy")])
    with pytest.raises(ValueError, match="fmt"):
        task.batch([(2021, 2, 3, "ymd")])
    with pytest.raises(ValueError, match="empty"):
        task.batch([])


def test_date_same_seed_same_batch() -> None:
    a, b = DateTask().sample(8, rng=5), DateTask().sample(8, rng=5)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    stream = batches(DateTask(), 4, rng=0)
    assert not torch.equal(next(stream).tgt_out, next(stream).tgt_out)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"formats": ("ymd",)}, "formats"),
        ({"formats": ()}, "formats"),
        ({"min_year": 999}, "four-digit"),
        ({"min_year": 2000, "max_year": 1999}, "after"),
        ({"split": "valid"}, "split"),
    ],
)
def test_date_task_rejects_bad_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        DateTask(**kwargs)


@pytest.mark.parametrize("n_digits", [1, 2, 3])
def test_addition_sequences_and_targets(n_digits: int) -> None:
    task = AdditionTask(n_digits=n_digits)
    inputs, targets = task.sample(64, rng=0)
    L = 3 * n_digits + 3
    assert task.seq_len == L and task.prompt_len == 2 * n_digits + 2
    assert inputs.shape == targets.shape == (64, L - 1)
    P = task.prompt_len
    assert (targets[:, : P - 1] == PAD_ID).all(), "the prompt is not graded"
    assert torch.equal(
        targets[:, P - 1 :], torch.cat([inputs[:, P:], targets[:, -1:]], 1)[:, -L + P :]
    )
    for x, y in zip(inputs, targets, strict=True):
        text = task.decode(torch.cat([x, y[-1:]]))
        a, rest = text.split("+")
        b, c = rest.split("=")
        assert len(a) == len(b) == n_digits and len(c) == n_digits + 1
        assert int(a) + int(b) == int(c)


def test_addition_split_is_fixed_disjoint_and_complete() -> None:
    train_pairs = AdditionTask().problems()
    test_pairs = AdditionTask(split="test").problems()
    assert test_pairs.shape == (500, 2) and train_pairs.shape == (9500, 2)
    both = {tuple(p) for p in train_pairs.tolist()} | {tuple(p) for p in test_pairs.tolist()}
    assert len(both) == 10_000
    np.testing.assert_array_equal(test_pairs, AdditionTask(split="test").problems())
    assert AdditionTask(n_digits=1, split="test").problems().shape == (20, 2)  # 20% of 100
    drawn = AdditionTask().sample(2000, rng=0)[0]
    test_set = {tuple(r) for r in AdditionTask(split="test").encode(test_pairs)[:, :-1].tolist()}
    assert not any(tuple(r) in test_set for r in drawn.tolist()), "training saw a test sum"


def test_addition_encode_and_errors() -> None:
    task = AdditionTask()
    assert task.decode(task.encode([(12, 34)])[0]) == "12+34=046"
    assert task.decode(task.encode([(99, 99)])[0]) == "99+99=198"
    with pytest.raises(ValueError, match=r"operands must be in 0\.\.99"):
        task.encode([(100, 1)])
    with pytest.raises(ValueError, match="n_digits"):
        AdditionTask(n_digits=0)
    with pytest.raises(ValueError, match="split"):
        AdditionTask(split="dev")


# --- pronouns -----------------------------------------------------------------------------


def test_pronoun_batch_sentences_and_answers() -> None:
    ids, targets = pronoun_batch(300, rng=0)
    assert ids.shape == targets.shape == (300, 6) and ids.dtype == torch.int64
    firsts = set()
    for row, answer in zip(ids.tolist(), targets.tolist(), strict=True):
        words = [PRONOUN_WORDS[i] for i in row]
        assert len(set(words)) == 6, words
        males = [w for w in words if w in MALE_NAMES]
        females = [w for w in words if w in FEMALE_NAMES]
        assert len(males) == len(females) == 1 and {"he", "she"} <= set(words)
        assert sum(w in FILLERS for w in words) == 2
        for word, target in zip(words, answer, strict=True):
            expected = {"he": males[0], "she": females[0]}.get(word, word)
            assert PRONOUN_WORDS[target] == expected
        firsts.add(words[0])
    assert {"he", "she"} <= firsts, "the order is shuffled: a pronoun sometimes comes first"


def test_pronoun_answers_depend_on_the_sentence_not_on_the_pronoun() -> None:
    """No fixed map from a word to its answer exists: 'he' must read the context."""
    ids, targets = pronoun_batch(200, rng=1)
    answers_of_he = set(targets[ids == PRONOUN_WORDS.index("he")].tolist())
    assert len(answers_of_he) == len(MALE_NAMES)


def test_pronoun_batches_are_deterministic_and_fresh() -> None:
    a, _ = pronoun_batch(5, rng=3)
    b, _ = pronoun_batch(5, rng=3)
    assert torch.equal(a, b)
    stream = pronoun_batches(4, rng=0)
    first, second = next(stream), next(stream)
    assert first[0].shape == (4, 6) and not torch.equal(first[0], second[0])


def test_pronoun_batch_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        pronoun_batch(0)


def test_pronoun_accuracy_counts_pronouns_only() -> None:
    ids, targets = pronoun_batch(50, rng=5)
    perfect = torch.nn.functional.one_hot(targets, len(PRONOUN_WORDS)).double()  # (B, T, n_vocab)
    assert pronoun_accuracy(perfect, ids, targets) == 1.0
    itself = torch.nn.functional.one_hot(ids, len(PRONOUN_WORDS)).double()  # names itself
    assert pronoun_accuracy(itself, ids, targets) == 0.0  # right on every other word
    with pytest.raises(ValueError, match="logits must be"):
        pronoun_accuracy(perfect[0], ids, targets)
    with pytest.raises(ValueError, match="no pronoun"):
        filler = torch.full((1, 6), PRONOUN_WORDS.index("dog"))
        pronoun_accuracy(itself[:1], filler, filler)
