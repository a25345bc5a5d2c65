"""Chapter 7's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). The date model is trained here
as the chapter trains it (same seed, one thread, same batches, the same callback recording
the cross-attention). Its float32 training rounds differently on other processors, so the
chapter quotes its maps at the precision every machine draws ("more than 0.8", "about
half"), and these tests hold that level with a margin; run under ``tools/other_machine.py``
they must pass too. The adder is the stored model, the same bytes everywhere.
"""

from __future__ import annotations

import ast
import datetime
import re
import time

import numpy as np
import pytest
import torch
from _claims import claim, prose, quotes_are_in
from torch import nn

import attnlab as al
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.decoding import generate, greedy_decode
from attnlab.mechanism.transformer import (
    DecoderBlock,
    Encoder,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
)
from attnlab.tasks.data import AdditionTask, DateTask, batches
from attnlab.tasks.training import ADDER, exact_match, stored_adder, train, train_adder

CHAPTER = "chapters/07_transformer.ipynb"
SNAPSHOTS = (0, 40, 60, 80, 120, 250)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


# -- layer normalisation -----------------------------------------------------------------------


@claim(
    "After normalisation the token has mean 0 and standard deviation 1, so roughly half of its\n"
    "features are negative.",
)
def test_layer_norm_of_one_token():
    rng = al.seed_everything(0, threads=1)
    x = torch.tensor(rng.normal(3.0, 5.0, size=(1, 1, 64)), dtype=torch.float32)
    y = LayerNorm(64)(x)
    assert abs(y.mean().item()) < 1e-6 and abs(y.std(correction=0).item() - 1) < 1e-4
    assert 24 <= int((y < 0).sum()) <= 40 and (x < 0).sum() < 24


@claim(
    "while it trains, it normalises each feature over the batch, so the same sentence\ncomes out "
    "differently in different company. At inference it switches to averages stored\nduring "
    "training, the same for any batch, so it computes one thing in training and another\nin use:",
    "being per token, it is the same in training and inference, for any batch.",
)
def test_layer_norm_and_batch_norm():
    torch.manual_seed(0)
    batch = 3.0 * torch.randn(4, 6, 64) + 1.0
    ln, bn = LayerNorm(64), nn.BatchNorm1d(64)

    def batch_norm(x):
        return bn(x.transpose(1, 2)).transpose(1, 2)

    assert torch.allclose(ln(batch[:1]), ln(batch)[:1], atol=1e-5)
    assert bn.training and not torch.allclose(batch_norm(batch[:1]), batch_norm(batch)[:1])
    train_out = batch_norm(batch)[:1]
    bn.eval()
    assert torch.allclose(batch_norm(batch[:1]), batch_norm(batch)[:1], atol=1e-5)
    assert not torch.allclose(batch_norm(batch)[:1], train_out, atol=1e-2)  # another function
    ln.eval()
    assert torch.allclose(ln(batch), LayerNorm(64).train()(batch))


@claim(
    "$\\beta$ slides the whole histogram (the new mean is $\\beta$); $\\gamma$ stretches or\n"
    "squeezes it (the new standard deviation is $\\gamma$).",
)
def test_gamma_and_beta():
    x_hat = LayerNorm(64)(torch.randn(1, 1, 64)).detach().reshape(-1)
    for gamma in (0.5, 1.0, 2.0):
        for beta in (-2.0, 0.0, 2.0):
            out = gamma * x_hat + beta
            assert abs(out.mean().item() - beta) < 1e-5
            assert abs(out.std(correction=0).item() - gamma) < 1e-3


@claim(
    "applied to **each token separately and identically**: the same $W_1, W_2$ for every\nposition",
)
def test_the_ffn_is_position_wise():
    ffn = FeedForward(d_model=16, d_ff=64)
    seq = torch.randn(1, 5, 16)
    one_by_one = torch.cat([ffn(seq[:, t : t + 1]) for t in range(5)], dim=1)
    torch.testing.assert_close(ffn(seq), one_by_one, rtol=0, atol=1e-5)


@claim(
    "At initialisation each block changes the stream by a fraction of its size: the stream\n"
    "carries the tokens through, and the blocks edit it.",
)
def test_the_residual_stream():
    for seed in range(3):
        torch.manual_seed(seed)
        stack = Encoder(TransformerConfig(d_model=64, n_heads=4, n_layers=6))
        h = torch.randn(1, 10, 64)
        with torch.no_grad():
            for block in stack.layers:
                new = block(h)
                assert 0.1 < ((new - h).norm() / h.norm()).item() < 0.5
                h = new


@claim(
    "- the input is never lost: a block that has nothing useful to add can output almost zero\n"
    "  and leave the stream as it is;",
    "The path from the output back to the input is short whatever the depth.",
    "Both hold as written for the **pre-LN** block this chapter builds, with the LayerNorm on\n"
    "the branch. In the paper's **post-LN** block, $x \\leftarrow \\mathrm{LN}(x + f(x))$ (both\n"
    "placements are compared below), every block re-normalises the stream: a block that adds\n"
    "nothing still changes it, and the gradient passes through one LayerNorm per block.",
    "keep a short gradient path through any depth (in the pre-LN placement).",
)
def test_the_residual_path_is_clean_only_in_pre_ln():
    torch.manual_seed(0)
    x = 3 * torch.randn(1, 5, 16, dtype=torch.float64) + 1  # a stream not yet normalised
    for norm_first in (True, False):
        cfg = TransformerConfig(d_model=16, n_heads=2, n_layers=6, norm_first=norm_first)
        stack = al.Encoder(cfg).double()
        blocks = nn.Sequential(*stack.layers)
        with torch.no_grad():  # every block adds nothing: all attention and FFN weights 0
            for block in stack.layers:
                for part in (block.self_attn, block.ffn):
                    for w in part.parameters():
                        w.zero_()
        jac = torch.autograd.functional.jacobian(lambda z, f=blocks: f(z)[0, 2], x)[:, 0, 2]
        eye = torch.eye(16, dtype=torch.float64)
        if norm_first:  # the stream is left as it is, and the gradient is the identity
            assert torch.equal(blocks(x), x) and torch.equal(jac, eye)
        else:  # re-normalised by every block: changed, and a gradient through 12 LayerNorms
            assert (blocks(x) - x).abs().max() > 1
            assert (jac - eye).abs().max() > 0.1


@claim(
    "Two thirds of a block's weights sit in the feed-forward network, not in attention. The\n"
    "count does not depend on the number of heads, nor on the length of the sentence.",
    "gives\nabout 63 million parameters, close to the 65 million the paper lists for its base "
    "model.",
    "A decoder block has one more attention layer and one more LayerNorm than an encoder\nblock:",
)
def test_parameter_counts():
    counts = []
    for heads in (1, 8, 16):
        cfg = TransformerConfig(d_model=512, n_heads=heads, d_ff=2048)
        block = EncoderBlock(cfg)
        counts.append(n_params(block))
        assert round(n_params(block.ffn) / n_params(block), 2) == 0.67
    assert len(set(counts)) == 1
    base = TransformerConfig(d_model=512, n_heads=8, d_ff=2048)
    enc, dec = n_params(EncoderBlock(base)), n_params(DecoderBlock(base))
    assert dec - enc == 4 * 512 * 512 + 4 * 512 + 2 * 512
    total = 6 * enc + 6 * dec + 37_000 * 512
    assert round(total / 1e6) == 63


@claim(
    "Every decoder block cross-attends to the same memory, the encoder's output: the\noutput of "
    "its *last* block, which in a pre-LN model passes through one final LayerNorm\n(below) on its "
    "way out.",
)
def test_the_memory_is_the_final_norm_of_the_last_block():
    for norm_first in (True, False):
        torch.manual_seed(0)
        cfg = TransformerConfig(d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=10,
                                norm_first=norm_first)  # fmt: skip
        model = EncoderDecoder(12, 12, cfg).eval()
        src = torch.randint(3, 12, (2, 7))
        memory, _ = model.encode(src)
        stack = model.encoder
        assert (stack.norm is not None) == norm_first
        seen = {}

        def keep(block, _inputs, output, seen=seen):
            seen.setdefault(id(block), output)

        hooks = [b.register_forward_hook(keep) for b in stack.layers]
        model.encode(src)
        for h in hooks:
            h.remove()
        last = seen[id(stack.layers[-1])]
        expected = stack.norm(last) if norm_first else last
        torch.testing.assert_close(memory, expected)


# -- post-LN or pre-LN -------------------------------------------------------------------------


def ln_run(seed, norm_first, steps=30):
    task = DateTask()
    al.seed_everything(seed, threads=1)
    deep = TransformerConfig(d_model=32, n_heads=4, n_layers=4, d_ff=64,
                             max_len=task.max_seq_len, norm_first=norm_first)  # fmt: skip
    model = EncoderDecoder(task.vocab_size, task.vocab_size, deep)
    return train(model, batches(task, 16, rng=seed + 1), steps=steps, lr=2e-2, warmup=0,
                 schedule="constant", progress=False)  # fmt: skip


@pytest.fixture(scope="module")
def ln_runs():
    return {seed: (ln_run(seed, False), ln_run(seed, True)) for seed in range(5)}


@pytest.mark.slow
@claim(
    "Both start at the same loss and fall together for the first few steps. Then the\npost-LN "
    "loss stops falling: it stays near 2.3 until the end. The pre-LN loss is not smooth\neither: "
    "at step 8 it jumps, above the post-LN loss, but then it falls again, to 1.55 over\nthe last "
    "ten steps.",
    "we repeated\nit with the random seeds 0 to 4, each with its own initial weights and its own batches: "
    "over the\nlast ten of the 30 steps, pre-LN ended between 1.4 and 1.6 and post-LN between "
    "1.8 and\n2.4, lower with pre-LN in every run, by 0.4 or more.",
    "Without warm-up, at a learning rate of 0.02, the 4 + 4-layer model learned faster with\n  "
    "**pre-LN** blocks than with **post-LN** blocks, for each of five seeds",
    "The course's models use pre-LN, the placement that reached the lower loss here,",
)
def test_post_ln_and_pre_ln(ln_runs):
    post, pre = (np.array(c) for c in ln_runs[0])  # the figure's run
    assert abs(post[0] - pre[0]) < 1e-3
    assert all(abs(a - b) < 0.2 for a, b in zip(post[:4], pre[:4], strict=True))
    assert np.all(np.abs(post[9:] - 2.3) < 0.15)  # near 2.3 from step 10 on
    assert pre[7] > post[7] and pre[7] > pre[6] + 0.3  # the jump at step 8
    assert pre[-10:].mean() < pre[7] - 0.8 and round(pre[-10:].mean(), 2) == 1.55
    for post, pre in ln_runs.values():
        late_post, late_pre = np.mean(post[-10:]), np.mean(pre[-10:])
        # one decimal, as quoted: on another machine seed 3's post-LN run ends at 1.81
        assert 1.35 <= late_pre < 1.65 and 1.75 <= late_post < 2.45
        assert round(late_post - late_pre, 1) >= 0.4


@claim(
    "still warm up\n(25 steps for the date model below, 50 for the adder)",
)
def test_the_trained_models_warm_up():
    source = "\n".join(c for c in _code_cells())
    assert "warmup=25" in source and ADDER["warmup"] == 50


def _code_cells():
    import nbformat
    from _claims import ROOT

    nb = nbformat.read(ROOT / CHAPTER, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


# -- the date model ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def date_model():
    """The chapter's date model, trained as the chapter trains it, with its snapshots."""
    task = DateTask()
    config = TransformerConfig(d_model=32, n_heads=4, n_layers=2, d_ff=64, max_len=task.max_seq_len)
    al.seed_everything(0, threads=1)
    model = EncoderDecoder(task.vocab_size, task.vocab_size, config)
    watched = task.batch([(1967, 8, 23, "mdy")])
    snapshots = {}

    def record(step):
        if step in SNAPSHOTS:
            model(watched.src, watched.tgt_in)
            snapshots[step] = [w[0] for w in model.attention_maps()["cross"]]

    losses = train(model, batches(task, 32, rng=1), steps=250, lr=5e-3, warmup=25,
                   callback=record, progress=False)  # fmt: skip
    model.eval()
    with torch.no_grad():
        model(watched.src, watched.tgt_in)
    maps = {k: [w[0].numpy() for w in v] for k, v in model.attention_maps().items()}
    return task, model, losses, watched, maps, snapshots


@claim(
    "Every input token is a month word, a digit or a comma; every output token a digit or a\n"
    "hyphen.",
    "a day below 10\nneeds a `0` that is not in the input.",
    'One date in ten is held out (`DateTask(split="test")`): the model is graded only on dates\n'
    "it never saw.",
    "The model: 2 encoder and 2 decoder blocks, $D = 32$, 4 heads, $d_{ff} = 64$, about 46,000\n"
    "parameters.",
)
def test_the_date_task(date_model):
    task, model, *_ = date_model
    sample = task.sample(200, rng=0)
    months = {"january", "february", "march", "april", "may", "june", "july", "august",
              "september", "october", "november", "december"}  # fmt: skip
    for s, y in zip(sample.src, sample.tgt_out, strict=True):
        assert set(task.labels(s)) - {"<pad>"} <= months | set("0123456789,")
        assert set(task.labels(y)) - {"<pad>", "<eos>"} <= set("0123456789-")
    for split, held in (("train", False), ("test", True)):
        dates = DateTask(split=split).sample(500, rng=1).tgt_out
        for y in dates:
            iso = "".join(t for t in task.labels(y) if t not in ("<pad>", "<eos>"))
            assert (datetime.date.fromisoformat(iso).toordinal() % 10 == 0) == held
    assert round(n_params(model), -3) == 46_000


@claim(
    "the loss falls from about 3.4, a little above a blind guess among 28 tokens\n"
    "($\\ln 28 \\approx 3.3$), to below 0.01 in 250 steps.",
)
def test_the_date_loss(date_model):
    task, _, losses, *_ = date_model
    assert task.vocab_size == 28 and round(float(np.log(28)), 1) == 3.3
    assert round(losses[0], 1) == 3.4 and losses[0] > np.log(28)
    assert np.mean(losses[-10:]) < 0.01


@claim(
    "the model one machine trains\ngets 999 of the 1000 dates right where another's gets all 1000.",
)
def test_the_date_score(date_model):
    _, model, *_ = date_model
    assert exact_match(model, DateTask(split="test"), n=1000) >= 0.999


@claim(
    "The model has 2 layers × 4 heads of each of its three attention layers: 24 maps for one\n"
    "input.",
)
def test_the_date_model_has_24_maps(date_model):
    *_, maps, _ = date_model
    assert set(maps) == {"encoder_self", "decoder_self", "cross"}
    shapes = [m.shape[0] for kind in maps.values() for m in kind]  # heads per layer
    assert len(shapes) == 6 and sum(shapes) == 24


def rows_of(task, tokens):
    return task.labels(tokens)


@claim(
    "To\nwrite the month `0 8` and the hyphen after it, the head looks almost only at `august`\n"
    "(more than 0.8 of its weight each time): the month's digits have no other source. To\nwrite "
    "the year it reads the year, digit by digit: the `1` at the `1` of `1967` (nearly\nall its "
    "weight), then `9`, `6` and `7` each most at its own digit (about half of the\nweight, or "
    "more); the day's `2` looks at the `2` of `23` (nearly all).",
    "a head can find a digit one position off, or spread its weight (the day's\n`3` here).",
)
def test_the_cross_attention_map(date_model):
    task, _, _, watched, maps, _ = date_model
    src = task.labels(watched.src[0])  # august 2 3 , 1 9 6 7
    out = task.labels(watched.tgt_out[0])  # 1 9 6 7 - 0 8 - 2 3 <eos>
    w = maps["cross"][1][3]  # layer 2, head 4: (T, S)
    assert src == ["august", "2", "3", ",", "1", "9", "6", "7"]
    for row in (5, 6, 7):  # 0, 8 and the second hyphen
        assert w[row, 0] > 0.8 + 0.03
    assert w[0, 4] > 0.95  # the 1
    for row, col in ((1, 5), (2, 6), (3, 7)):  # 9, 6, 7 at their own digits
        assert w[row].argmax() == col and w[row, col] > 0.45
    assert out[8] == "2" and w[8, 1] > 0.9
    assert out[9] == "3" and w[9].max() < 0.4


@claim(
    "every map is a lower triangle, the causal mask at\nwork; in layer 1, head 4 the month's "
    "digits look back at the first hyphen more than at\nany other token (most of the weight for "
    "the `0`, about half for the `8`)",
)
def test_the_decoder_self_map(date_model):
    task, _, _, watched, maps, _ = date_model
    read = task.labels(watched.tgt_in[0])  # <bos> 1 9 6 7 - 0 8 - 2 3
    for layer in maps["decoder_self"]:
        for head in layer:
            assert np.all(np.triu(head, 1) == 0)
    w = maps["decoder_self"][0][3]
    assert read[5] == "-" and read[6] == "0" and read[7] == "8"
    assert w[6].argmax() == 5 and w[6, 5] > 0.75
    assert w[7].argmax() == 5 and 0.4 < w[7, 5] < 0.7


@claim(
    "The **encoder self** maps are more diffuse: the encoder blends each input token with its\n"
    "context before the decoder reads it.",
)
def test_the_encoder_maps_are_diffuse(date_model):
    *_, maps, _ = date_model
    peak = {k: np.mean([w.max(-1).mean() for layer in maps[k] for w in layer]) for k in maps}
    assert peak["encoder_self"] < peak["cross"] - 0.1


@claim(
    "At step 0 every weight is near 1/8 (eight input tokens, no preference). At step 40 the\n"
    "first preferences show, not all of them right (the year's `1` looks at the `2` of the\nday). "
    "Between steps 60 and 120 the structure appears: the month's digits find `august`,\nthe year's "
    "digits find the year, and by step 120 the map is close to the final one at\nstep 250. The "
    "loss curve above falls steeply over the\nsame steps",
)
def test_the_alignment_emerging(date_model):
    _, _, losses, _, _, snapshots = date_model
    mean = {step: snapshots[step][1].mean(0).numpy() for step in SNAPSHOTS}  # layer 2
    assert np.abs(mean[0] - 1 / 8).max() < 0.1
    assert mean[40][0].argmax() == 1  # the year's 1 at the 2 of the day
    for step in (120, 250):
        assert (mean[step][[5, 6, 7]].argmax(-1) == 0).all()  # the month at august
        assert (mean[step][0:4].argmax(-1) >= 4).all()  # the year at the year
    assert not (mean[60][[5, 6, 7]].argmax(-1) == 0).all()  # not yet at step 60
    assert np.abs(mean[120] - mean[250]).max() < 0.3
    assert np.abs(mean[60] - mean[250]).max() > 0.5
    assert losses[59] > 5 * losses[119]


@claim(
    "At step 1 the decoder has read only `<bos>` and writes `2`, looking mostly at the first\n"
    "`2` of `2021` (more than half of its weight). The month's `0` and `3` both look at `march`\n"
    "(more than half, then nearly all of it): the word is the only source of the month number.\n"
    "The `0` before `5` is different: its weights are spread over several tokens, none with\nhalf "
    "of them,",
    "Greedy decoding needed 11 passes through the decoder for 11 tokens;",
)
def test_greedy_decoding(date_model):
    task, model, *_ = date_model
    query = task.batch([(2021, 3, 5, "dmy")])
    with torch.no_grad():
        out = greedy_decode(model, query.src, bos_id=al.data.BOS_ID, eos_id=al.data.EOS_ID,
                            max_len=11)  # fmt: skip
        decoded_in = torch.cat([query.tgt_in[:, :1], out[:, :-1]], dim=1)
        model(query.src, decoded_in)
    cross = model.attention_maps()["cross"][-1][0].mean(0).numpy()  # (T, S), mean over heads
    src, written = task.labels(query.src[0]), task.labels(out[0])
    assert src == ["5", "march", "2", "0", "2", "1"] and len(written) == 11
    assert "".join(written[:10]) == "2021-03-05"
    assert written[0] == "2" and cross[0].argmax() == 2 and cross[0, 2] > 0.5
    assert cross[5].argmax() == 1 and cross[5, 1] > 0.5  # the month's 0
    assert cross[6, 1] > 0.9  # the 3
    assert written[8] == "0" and cross[8].max() < 0.45 and (cross[8] > 0.1).sum() >= 3


# -- the adder ----------------------------------------------------------------------------------


@claim(
    "The model: 2 decoder blocks, $D = 48$,\n4 heads, $d_{ff} = 96$, learned positions, about "
    "40,000 parameters. Its training is the\nsame `train` call as the date model's, for 800 steps "
    "of 128 problems, with one change to\nthe schedule: the learning rate decays to 1% of its peak "
    "at the end (`decay_to=0.01`)",
)
def test_the_adder_listing_is_the_stored_recipe():
    listing = re.search(r"```python\n(.*?)```", prose_cell("al.seed_everything(0, threads=1)"),
                        re.S).group(1)  # fmt: skip
    calls = {}

    def fake_train(model, stream, **kwargs):
        calls.update(kwargs, model=model, batch=next(iter(stream))[0].shape[0])

    names = {"al": al, "TransformerConfig": TransformerConfig, "batches": batches,
             "add": AdditionTask(), "train": fake_train}  # fmt: skip
    tree = ast.parse(listing)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assigned = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets}
    assert used - assigned <= set(names) | {"config", "lm", "stream"}
    exec(compile(tree, "listing", "exec"), names)
    assert {k: calls[k] for k in ("steps", "lr", "warmup", "decay_to")} == {
        k: ADDER[k] for k in ("steps", "lr", "warmup", "decay_to")
    }
    assert calls["batch"] == ADDER["batch_size"] == 128
    stored = stored_adder().model
    assert n_params(calls["model"]) == n_params(stored) and round(n_params(stored), -4) == 40_000
    assert isinstance(calls["model"].positional, al.LearnedPositionalEmbedding)
    assert isinstance(stored.positional, al.LearnedPositionalEmbedding)


def prose_cell(marker):
    import nbformat
    from _claims import ROOT

    nb = nbformat.read(ROOT / CHAPTER, as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "markdown" and marker in c.source)


@pytest.fixture(scope="module")
def adder():
    return stored_adder()


@claim(
    "The loss falls in two stages: quickly to about 1\nin the first 150 steps, where it stalls, "
    "then, from step 200 on, steeply: to about 0.1 at\nstep 400 and below 0.01 at the end. Exact "
    "match stays below 20% for the first 200 steps,\nalthough by then the loss has fallen by two "
    "thirds: a sum counts only when all three of\nits digits are right. Then it climbs, to 68% at "
    "step 300 and 92% at step 500, first\nreaches 99% at step 625, wavers between 98% and 99.8% "
    "while the learning rate is still\ncoming down, and ends at 100%.",
)
def test_the_adder_curves(adder):
    losses, acc = np.array(adder.losses), dict(zip(adder.checked, adder.accuracy, strict=True))
    assert len(losses) == 800
    assert 0.8 < losses[140:150].mean() < 1.2 and losses[190:200].mean() > 0.8
    assert 0.07 < losses[395:405].mean() < 0.15 and losses[-10:].max() < 0.01
    assert max(a for s, a in acc.items() if s <= 200) < 0.20
    assert round(1 - losses[190:200].mean() / losses[0], 1) == 0.7  # two thirds
    assert round(acc[300], 2) == 0.68 and round(acc[500], 2) == 0.92
    first_99 = min(s for s, a in acc.items() if a >= 0.99)
    assert first_99 == 625
    later = [a for s, a in acc.items() if 625 <= s < 800]
    assert min(later) >= 0.98 and max(later) <= 0.998 and acc[800] == 1.0


@pytest.mark.slow
@claim("Those 800 steps take about 15 seconds on one CPU core.")
def test_the_adder_trains_in_about_15_seconds():
    start = time.process_time()  # processor time: what a busy machine's other work leaves out
    train_adder(eval_every=ADDER["steps"], progress=False)  # graded twice only
    assert 10 < time.process_time() - start < 22


@claim(
    "The model never saw these 500 problems during training, and it gets every one of them\nright",
    "`99+99`, which carries out of\nboth columns, comes out right too.",
    "ours, 450 to 625 steps of 128.",
)
def test_the_adder_generalises(adder):
    held_out = AdditionTask(split="test")
    held = {tuple(p) for p in held_out.problems().tolist()}
    assert len(held) == 500
    assert not held & {tuple(p) for p in AdditionTask().problems().tolist()}
    assert exact_match(adder.model, held_out) == 1.0
    add = AdditionTask()
    prompts = add.encode([(99, 99)])[:, : add.prompt_len]
    assert add.decode(generate(adder.model, prompts, max_new_tokens=3)[0]) == "99+99=198"
    first_99 = min(s for s, a in zip(adder.checked, adder.accuracy, strict=True) if a >= 0.99)
    assert 450 <= first_99 <= 625


@pytest.mark.slow
@claim(
    "With 800 steps and the decay to 1%, every seed we tried (0 to 4, each\non one and on two "
    "threads) reached 99% by step 625 and ended at 100%.",
)
def test_the_recipe_over_five_seeds():
    # seed 0 is the stored model (test_the_adder_curves); one thread here, the chapter's and
    # the stored model's (bench/bench_transformer.py runs both thread counts)
    for seed in range(1, 5):
        run = train_adder(seed, threads=1, eval_every=25, progress=False)
        first_99 = min(s for s, a in zip(run.checked, run.accuracy, strict=True) if a >= 0.99)
        assert first_99 <= 625, f"seed {seed}: 99% first at step {first_99}"
        assert run.accuracy[-1] == 1.0, f"seed {seed} ended at {run.accuracy[-1]:.1%}"


@claim(
    "At $\\tau = 0.5$ the sampled sums are as good as greedy ones",
    "At $\\tau = 1$, its\nown probabilities, about one sum in a hundred goes wrong",
    "At $\\tau = 2$ one sum in nine is wrong, and at\n$\\tau = 4$, with the distribution flattened "
    "towards uniform, more than half.",
)
def test_sampling_temperatures(adder):
    add, held_out = AdditionTask(), AdditionTask(split="test")
    held = held_out.encode(held_out.problems())
    gen = torch.Generator().manual_seed(0)
    right = {}
    for tau in (0.5, 1.0, 2.0, 4.0):
        sampled = generate(adder.model, held[:, : add.prompt_len], max_new_tokens=3,
                           temperature=tau, generator=gen)  # fmt: skip
        ok = (sampled[:, add.prompt_len :] == held[:, add.prompt_len :]).all(dim=1)
        right[tau] = ok.float().mean().item()
    assert round(right[0.5], 2) == 1.0
    assert round(1 - right[1.0], 2) == 0.01
    assert round(1 / (1 - right[2.0])) == 9
    assert 1 - right[4.0] > 0.5


@claim(
    "The mean is 5 and the variance $(9 + 1 + 1 + 9)/4 = 5$, so the output is\n$[-3, -1, 1, 3]/"
    "\\sqrt{5} \\approx [-1.34, -0.45, 0.45, 1.34]$.",
)
def test_answer_1():
    out = LayerNorm(4, eps=1e-12)(torch.tensor([[2.0, 4.0, 6.0, 8.0]]))
    assert [round(float(x), 2) for x in out[0]] == [-1.34, -0.45, 0.45, 1.34]


@claim(
    "The differences are below $10^{-12}$, the size of float64 rounding: the same function,\n"
    "written twice.",
)
def test_the_blocks_equal_pytorchs():
    from dataclasses import replace

    from attnlab.mechanism.interop import copy_torch_weights

    torch.manual_seed(0)
    small = TransformerConfig(d_model=16, n_heads=4, d_ff=32)
    f64 = {"dropout": 0.0, "batch_first": True, "dtype": torch.float64}
    src = torch.randn(2, 7, 16, dtype=torch.float64)
    tgt = torch.randn(2, 5, 16, dtype=torch.float64)
    causal = al.causal_mask(5, like=tgt)
    for norm_first in (False, True):
        cfg = replace(small, norm_first=norm_first)
        theirs = nn.TransformerEncoderLayer(16, 4, 32, norm_first=norm_first, **f64)
        ours = copy_torch_weights(EncoderBlock(cfg).double(), theirs)
        assert (ours(src) - theirs(src)).abs().max().item() < 1e-12
        theirs = nn.TransformerDecoderLayer(16, 4, 32, norm_first=norm_first, **f64)
        ours = copy_torch_weights(DecoderBlock(cfg).double(), theirs)
        mine, ref = ours(tgt, src, causal), theirs(tgt, src, tgt_mask=~causal)
        assert (mine - ref).abs().max().item() < 1e-12


@claim(
    "Only the feed-forward network's: $W_1$ and $W_2$ double, $b_1$ doubles, $b_2$ stays.",
    "Attention ($4D^2 + 4D$) and LayerNorm ($2D$ each) do not depend on $d_{ff}$.",
)
def test_answer_2():
    def counts(d_ff):
        block = EncoderBlock(TransformerConfig(d_model=16, n_heads=4, d_ff=d_ff))
        return {name: p.numel() for name, p in block.named_parameters()}

    one, two = counts(32), counts(64)
    changed = {name for name in one if one[name] != two[name]}
    ffn = {name for name in one if name.startswith("ffn.")}
    assert len(changed) == 3 and changed <= ffn  # W_1, b_1, W_2
    assert all(two[n] == 2 * one[n] for n in changed)
    assert [one[n] for n in ffn - changed] == [16]  # b_2 stays
    attention = sum(v for n, v in one.items() if "attn" in n or "attention" in n)
    assert attention == 4 * 16 * 16 + 4 * 16


@claim(
    "$11 \\times 7$: one row per query, and the queries are the decoder's output tokens.\n"
    "Each row is a softmax over the 7 input tokens, so rows sum to 1.",
)
def test_answer_3():
    torch.manual_seed(0)
    cfg = TransformerConfig(d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=12)
    model = EncoderDecoder(12, 12, cfg).eval()
    with torch.no_grad():
        model(torch.randint(3, 12, (1, 7)), torch.randint(3, 12, (1, 11)))
    cross = model.attention_maps()["cross"][0][0, 0]  # one head: (T, S)
    assert tuple(cross.shape) == (11, 7)
    torch.testing.assert_close(cross.sum(-1), torch.ones(11))


def test_the_prose_helper_reads_the_chapter():
    assert "Post-LN or pre-LN?" in prose(CHAPTER)


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
