"""Tests for attnlab.tasks.training: the loss, the schedule, the loop and exact-match evaluation."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.transformer import DecoderOnlyLM, EncoderDecoder
from attnlab.tasks.data import EOS_ID, PAD_ID, AdditionTask, DateTask, Task, batches, make_batch
from attnlab.tasks.training import (
    ADDER,
    exact_match,
    lr_at,
    sequence_loss,
    stored_adder,
    train,
    train_adder,
    write_stored_adder,
)


def _config(d_model: int, n_heads: int, d_ff: int, max_len: int) -> TransformerConfig:
    """One layer per stack, pre-LN, no dropout: the small models of these tests."""
    return TransformerConfig(d_model=d_model, n_heads=n_heads, d_ff=d_ff, max_len=max_len)


def _tiny_model(task: Task) -> EncoderDecoder:
    torch.manual_seed(0)
    return EncoderDecoder(task.vocab_size, task.vocab_size, _config(16, 2, 32, task.max_seq_len))


# sequence_loss and lr_at ----------------------------------------------------------------------


def test_sequence_loss_averages_over_real_tokens_only() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 5, dtype=torch.float64)
    targets = torch.tensor([[1, 2, PAD_ID], [3, PAD_ID, PAD_ID]])
    real = [(0, 0), (0, 1), (1, 0)]
    manual = -sum(F.log_softmax(logits[b, t], -1)[targets[b, t]] for b, t in real) / 3
    torch.testing.assert_close(sequence_loss(logits, targets, PAD_ID), manual, rtol=0, atol=1e-12)
    # Whatever the model says at padded positions does not matter.
    changed = logits.clone()
    changed[1, 1:] = 100.0
    torch.testing.assert_close(sequence_loss(changed, targets, PAD_ID), manual, rtol=0, atol=1e-12)
    everything = F.cross_entropy(logits.reshape(-1, 5), targets.reshape(-1))
    torch.testing.assert_close(sequence_loss(logits, targets, None), everything, rtol=0, atol=0)


@pytest.mark.parametrize("pad_id", [PAD_ID, 3])
def test_sequence_loss_rejects_targets_that_are_all_padding(pad_id: int) -> None:
    """Nothing to average over: the mean would be 0 / 0 = NaN."""
    logits, targets = torch.zeros(2, 3, 5), torch.full((2, 3), pad_id)
    with pytest.raises(ValueError, match=rf"every target is padding \(pad_id={pad_id}\)"):
        sequence_loss(logits, targets, pad_id)
    assert torch.isfinite(sequence_loss(logits, targets, None))


def test_sequence_loss_shape_error() -> None:
    with pytest.raises(ValueError, match=r"logits \(2, 3, 5\) and targets \(2, 4\)"):
        sequence_loss(torch.zeros(2, 3, 5), torch.zeros(2, 4, dtype=torch.long), PAD_ID)


def test_lr_schedule() -> None:
    kwargs = {"lr": 1.0, "steps": 111, "warmup": 10}
    assert [lr_at(s, **kwargs) for s in (0, 4, 9)] == pytest.approx([0.1, 0.5, 1.0])
    assert lr_at(10, **kwargs) == pytest.approx(1.0)
    assert lr_at(110, **kwargs) == pytest.approx(0.1)  # the last step
    assert lr_at(60, **kwargs) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))
    values = [lr_at(s, **kwargs) for s in range(10, 111)]
    assert all(a >= b for a, b in itertools.pairwise(values)), "cosine decay must not increase"
    assert lr_at(100, **kwargs, schedule="constant") == 1.0
    with pytest.raises(ValueError, match="schedule"):
        lr_at(0, **kwargs, schedule="step")
    # the cosine's end is a fraction of lr: 10% unless told otherwise
    assert lr_at(110, **kwargs, decay_to=0.01) == pytest.approx(0.01)
    assert lr_at(60, **kwargs, decay_to=0.0) == pytest.approx(0.5)
    assert lr_at(5, **kwargs, decay_to=0.0) == lr_at(5, **kwargs)  # the warm-up is the same
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"decay_to must be in \[0, 1\]"):
            lr_at(20, **kwargs, decay_to=bad)


# train ----------------------------------------------------------------------------------------


def test_train_fits_a_fixed_batch_and_returns_the_history(capsys) -> None:
    task = Task("copy", n_symbols=5, min_len=3, max_len=5)
    model = _tiny_model(task)
    batch = make_batch(task, 16, rng=0)
    model.eval()
    history = train(model, itertools.repeat(batch), steps=60, lr=3e-3, warmup=5, progress=False)
    assert not model.training, "train() must restore the model's mode"
    assert len(history) == 60 and all(math.isfinite(x) for x in history)
    assert history[-1] < 0.5 * history[0]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "", "progress=False must print nothing"


def test_train_progress_bar_writes_to_stderr(capsys) -> None:
    task = Task("copy", n_symbols=5, min_len=3, max_len=3)
    train(_tiny_model(task), batches(task, 4, rng=0), steps=3, progress=True)
    assert "3/3" in capsys.readouterr().err


def test_train_stops_when_asked() -> None:
    task = Task("copy", n_symbols=5, min_len=3, max_len=3)
    model = _tiny_model(task)
    calls = []

    def stop() -> bool:
        calls.append(model.training)
        return len(calls) == 2

    history = train(
        model, batches(task, 4, rng=0), steps=50, stop_when=stop, check_every=5, progress=False
    )
    assert len(history) == 10
    assert calls == [False, False], "stop_when must run with the model in eval mode"


def test_train_a_decoder_only_lm_on_pairs() -> None:
    torch.manual_seed(0)
    lm = DecoderOnlyLM(6, _config(16, 2, 32, 8))
    x = torch.tensor([[1, 2, 3, 4, 5, 1, 2]] * 4)
    history = train(lm, itertools.repeat((x[:, :-1], x[:, 1:])), steps=40, lr=1e-2, progress=False)
    assert history[-1] < 0.2 * history[0]


def test_train_argument_errors() -> None:
    task = Task("copy", min_len=3, max_len=3)
    model = _tiny_model(task)
    stream = batches(task, 2, rng=0)
    with pytest.raises(ValueError, match="steps"):
        train(model, stream, steps=0, progress=False)
    with pytest.raises(ValueError, match="lr"):
        train(model, stream, steps=1, lr=0.0, progress=False)
    with pytest.raises(ValueError, match="schedule"):
        train(model, stream, steps=1, schedule="step", progress=False)
    with pytest.raises(ValueError, match="decay_to"):
        train(model, stream, steps=1, decay_to=2.0, progress=False)
    with pytest.raises(ValueError, match="each batch must be"):
        train(model, iter([torch.zeros(2, 3, dtype=torch.long)]), steps=1, progress=False)


# exact_match ----------------------------------------------------------------------------------


class _Oracle(EncoderDecoder):
    """Predicts the reversed source exactly (optionally forgetting the EOS) by peeking at it."""

    def __init__(self, task: Task, *, forget_eos: bool = False) -> None:
        super().__init__(task.vocab_size, task.vocab_size, _config(8, 2, 8, task.max_seq_len))
        self.forget_eos = forget_eos

    def encode(self, src):
        self._src = src
        return super().encode(src)

    def decode(self, tgt_in, memory, src_mask):
        T = tgt_in.shape[1]
        answers = []
        for row in self._src.tolist():
            y = [t for t in row if t != PAD_ID][::-1]
            answers.append(y + [y[0] if self.forget_eos else EOS_ID] + [PAD_ID] * T)
        wanted = torch.tensor([a[:T] for a in answers])  # (B, T)
        return F.one_hot(wanted, self.tgt_vocab).double()  # (B, T, n_vocab)


def test_exact_match_of_an_oracle_and_of_a_near_miss() -> None:
    task = Task("reverse", min_len=2, max_len=7)
    assert exact_match(_Oracle(task), task, n=60, batch_size=25) == 1.0
    assert exact_match(_Oracle(task, forget_eos=True), task, n=60) == 0.0


def test_exact_match_is_a_fraction_and_repeatable() -> None:
    task = Task("reverse", min_len=3, max_len=4)
    model = _tiny_model(task)
    a = exact_match(model, task, n=40, rng=1)
    assert 0.0 <= a <= 1.0
    assert exact_match(model, task, n=40, rng=1) == a
    with pytest.raises(TypeError, match="pass an AdditionTask, got Task"):
        exact_match(DecoderOnlyLM(5, _config(8, 2, 8, 4)), task, n=4)
    with pytest.raises(TypeError, match="EncoderDecoder or a DecoderOnlyLM, got Linear"):
        exact_match(torch.nn.Linear(2, 2), task, n=4)
    with pytest.raises(ValueError, match="n must be"):
        exact_match(model, task, n=0)


class _AddingOracle(DecoderOnlyLM):
    """Reads the prompt and predicts the sum's digits exactly (optionally one digit off)."""

    def __init__(self, task: AdditionTask, *, off_by_one: bool = False) -> None:
        super().__init__(task.vocab_size, _config(8, 2, 8, task.max_seq_len))
        self.task, self.off_by_one = task, off_by_one

    def forward(self, tokens):
        task, n = self.task, self.task.n_digits
        out = torch.zeros(*tokens.shape, task.vocab_size)  # (B, T, n_vocab)
        for i, row in enumerate(tokens.tolist()):
            text = "".join(task.labels(row[: task.prompt_len]))
            a, b = int(text[:n]), int(text[n + 1 : 2 * n + 1])
            digits = f"{a + b + self.off_by_one:0{n + 1}d}"[-(n + 1) :]
            for k, ch in enumerate(digits):  # position prompt_len - 1 + k predicts digit k
                t = task.prompt_len - 1 + k
                if t < tokens.shape[1]:
                    out[i, t, task.token_id(ch)] = 1.0
        return out


def test_exact_match_of_a_decoder_only_model_on_held_out_sums() -> None:
    test = AdditionTask(split="test")
    assert exact_match(_AddingOracle(test), test, batch_size=128) == 1.0
    assert exact_match(_AddingOracle(test, off_by_one=True), test) == 0.0
    assert exact_match(_AddingOracle(test), test, n=7) == 1.0  # the first 7 problems


def test_exact_match_of_a_date_oracle() -> None:
    """DateTask batches work with exact_match (an untrained model gets none right)."""
    task = DateTask(split="test")
    torch.manual_seed(0)
    model = EncoderDecoder(task.vocab_size, task.vocab_size, _config(16, 2, 32, task.max_seq_len))
    assert exact_match(model, task, n=50) == 0.0


def test_train_calls_back_before_and_after_every_step_in_eval_mode() -> None:
    task = Task("copy", n_symbols=5, min_len=3, max_len=3)
    model = _tiny_model(task).eval()
    seen = []

    def record(step: int) -> None:
        seen.append((step, model.training, torch.is_grad_enabled()))

    history = train(model, batches(task, 4, rng=0), steps=5, callback=record, progress=False)
    assert len(history) == 5
    assert seen == [(s, False, False) for s in range(6)]
    assert not model.training


# chapter 7's two models, trained as the chapter trains them ---------------------------------


@pytest.mark.slow
def test_chapter_7_models_reach_99_percent_on_held_out_inputs() -> None:
    """The chapter's configurations, with a seed the chapter does not use, still reach 99%.

    The chapter's own run (seed 0) is checked by nbval; this guards against a recipe that
    works for one lucky seed only. Time is measured in bench/ (bench_transformer.py).
    """
    from attnlab.mechanism.config import TransformerConfig
    from attnlab.seed import seed_everything

    task = DateTask()
    seed_everything(1, threads=1)
    config = TransformerConfig(d_model=32, n_heads=4, n_layers=2, d_ff=64, max_len=task.max_seq_len)
    model = EncoderDecoder(task.vocab_size, task.vocab_size, config)
    train(model, batches(task, 32, rng=2), steps=250, lr=5e-3, warmup=25, progress=False)
    assert exact_match(model, DateTask(split="test"), n=1000) >= 0.99

    run = train_adder(1, eval_every=ADDER["steps"], progress=False)  # the adder, seed 1
    assert run.checked == [0, ADDER["steps"]]
    assert run.accuracy[-1] == exact_match(run.model, AdditionTask(split="test")) >= 0.99


# chapter 7's adder, stored with the package -------------------------------------------------


def test_the_stored_adder_is_the_recipe_trained_to_99_percent() -> None:
    before = torch.random.get_rng_state()
    run = stored_adder()
    assert torch.equal(torch.random.get_rng_state(), before)  # loading draws no random numbers
    assert not run.model.training
    assert sum(p.numel() for p in run.model.parameters()) == 39_952
    assert run.model.config.d_model == ADDER["d_model"] and run.model.config.d_ff == ADDER["d_ff"]
    assert len(run.losses) == ADDER["steps"] and all(math.isfinite(x) for x in run.losses)
    assert run.checked == list(range(0, ADDER["steps"] + 1, 25))
    assert len(run.seconds) == len(run.checked) and run.seconds == sorted(run.seconds)
    # the last grading is the model that was stored: greedy decoding gives the same score now
    assert run.accuracy[-1] == exact_match(run.model, AdditionTask(split="test")) >= 0.99
    assert run.accuracy[0] < 0.05 and sum(run.losses[-10:]) < sum(run.losses[:10]) / 20
    assert run.steps_to(0.99) is not None and run.steps_to(0.99) <= 0.8 * ADDER["steps"]


def test_the_stored_adder_scores_the_same_on_every_machine() -> None:
    """The chapter prints the stored model's score and samples: they must not hang on rounding.

    Another CPU (other SIMD kernels, another thread count or BLAS) computes the same logits
    with other rounding errors: up to 3e-5 here between AVX-512, AVX2 and the plain kernels,
    logits reaching 25. Every greedy choice on the held-out sums wins by more than 0.01, a
    margin no such error can close, so the score is the same on every machine.
    """
    run, test = stored_adder(), AdditionTask(split="test")
    seqs = test.encode(test.problems())  # (500, 9)
    with torch.no_grad():
        # teacher-forced logits of the 3 answer digits: greedy decoding's, where it is right
        logits = run.model(seqs[:, :-1])[:, test.prompt_len - 1 :]  # (500, 3, n_vocab)
    top2 = logits.topk(2, dim=-1).values  # (500, 3, 2)
    right = (logits.argmax(-1) == seqs[:, test.prompt_len :]).all(dim=1)  # (500,)
    assert right.double().mean().item() == run.accuracy[-1]
    margin = top2[..., 0] - top2[..., 1]  # (500, 3)
    assert margin[right].min() > 0.01, f"a greedy choice wins by only {margin[right].min():.2e}"


def test_a_stored_adder_of_another_recipe_is_refused(tmp_path) -> None:
    from attnlab.data_files import __file__ as data_init

    saved = torch.load(Path(data_init).with_name("adder.pt"), map_location="cpu", weights_only=True)
    saved["recipe"] = {**saved["recipe"], "steps": 400}
    torch.save(saved, tmp_path / "old.pt")
    with pytest.raises(ValueError, match=r"steps.: 400.*write_stored_adder\(\)"):
        stored_adder(tmp_path / "old.pt")


def test_train_adder_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="eval_every"):
        train_adder(eval_every=0)
    with pytest.raises(ValueError, match="threads"):
        train_adder(threads=0)


# Retraining gives the stored adder's outcome, not its every bit. The training is seeded and
# single-threaded, so one machine repeats it exactly; but another CPU's SIMD kernels, BLAS or
# torch round differently, and the difference grows over the steps (the losses differ by 1e-6
# after a few dozen steps, by more than 0.01 from step 70-100 on), so that from then on the run
# is another sample of the recipe, as another seed would be. What is stable is what the recipe
# promises:
# - the start: the first loss (initial weights, first batch) agrees to 1e-3;
# - the step at which 99% is first reached (graded every 25 steps) lies within
#   ADDER_STEP_MARGIN of the stored one (625): seed 0 reached it at steps 550-625 with
#   AVX-512, AVX2 and plain kernels, MKL limited to AVX2, one and two threads; seeds 0-9
#   between steps 350 and 625;
# - the final score is at least 99% (every one of those runs ended at 100%).
# A training that is broken fails: with the learning rate ten times too small, or three
# times too large, the retrained adder ends at 10% or 14% and never reaches 99%.
ADDER_STEP_MARGIN = 200


def _assert_adder_outcome(fresh, stored) -> None:
    assert fresh.checked == stored.checked
    assert fresh.losses[0] == pytest.approx(stored.losses[0], rel=1e-3), "another start"
    reached, stored_reached = fresh.steps_to(0.99), stored.steps_to(0.99)
    assert reached is not None, f"never reached 99%: {fresh.accuracy[-1]:.1%} at the end"
    assert abs(reached - stored_reached) <= ADDER_STEP_MARGIN, (
        f"99% after {reached} steps, the stored adder after {stored_reached} "
        f"(± {ADDER_STEP_MARGIN})"
    )
    assert fresh.accuracy[-1] >= 0.99, f"final exact match {fresh.accuracy[-1]:.1%}"


@pytest.mark.slow
def test_the_stored_adder_is_what_train_adder_trains(tmp_path) -> None:
    written = write_stored_adder(tmp_path / "adder.pt")  # trains seed 0 on one thread
    _assert_adder_outcome(written, stored_adder())
    again = stored_adder(tmp_path / "adder.pt")  # the file round-trips
    assert again.losses == written.losses and again.accuracy == written.accuracy
    assert again.seconds == written.seconds
    mine, theirs = again.model.state_dict(), written.model.state_dict()
    assert list(mine) == list(theirs)
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
