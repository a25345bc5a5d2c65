"""Training a character-level GPT on the shipped Shakespeare: recipes, the loop, a stored model.

A recipe (:class:`TextRecipe`) is every choice of a training run in one frozen object: the
model's sizes and blocks, the batch and context, the optimiser and its schedule, the seed's
role, an optional time budget. :func:`train_text_lm` runs one on the corpus's fixed split
and returns a :class:`TextRun`: the model, its train and validation loss curve, the final
validation loss on the whole held-out text, the training seconds, tokens per second and
where the time went (forward, backward, optimiser, batches).

Two recipes race on the same machine (``bench/bench_capstone.py``):

- :data:`NANOGPT_CPU`, nanoGPT's CPU recipe from its README (4 layers, 4 heads, 128 wide,
  context 64, batch 12, 2,000 iterations, learning rate 1e-3 with 100 warm-up steps and a
  cosine decay to 1e-4 over the 2,000, AdamW with betas (0.9, 0.99) and weight decay 0.1
  on the matrices, gradients clipped at norm 1, no dropout, no biases in the linear layers,
  GELU, LayerNorm, tied embedding and read-out), built from the course's own model.
- :data:`FAST_CPU`, the course's recipe, aimed at the same validation loss in at most a
  third of the time (its docstring: what changed, why, and how far it got).

The model the chapter samples from is trained longer (:data:`STORED_RECIPE`) and shipped
(:func:`stored_text_model` loads it; :func:`write_stored_text_model` trains and writes it
again). The ablations of modern blocks (:data:`ABLATIONS`) are measured by
``bench/bench_capstone.py --ablations``, which stores the numbers
(:func:`stored_ablations` reads them).

Losses are in nats per character. Validation losses are exact (:func:`validation_loss`,
every character of the held-out text predicted once from a window of up to
:data:`EVAL_CONTEXT` characters before it), so two runs are compared on the same number,
not on random batches.

Written for chapter 9 (a GPT on real text).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .._validate import check_int, check_real, positive_int, positive_number, probability
from ..measure import Stopwatch, check_clock
from ..mechanism.config import TransformerConfig
from ..mechanism.sampling import text_loss
from ..mechanism.transformer import DecoderOnlyLM
from ..seed import seed_everything
from .corpus import CharVocab, load_shakespeare, random_windows, shakespeare_split
from .loop import lr_at

__all__ = [
    "ABLATIONS",
    "ABLATION_RECIPE",
    "EVAL_CONTEXT",
    "FAST_CPU",
    "NANOGPT_CPU",
    "STORED_RECIPE",
    "TextRecipe",
    "TextRun",
    "shakespeare_ids",
    "stored_ablations",
    "stored_text_model",
    "text_model",
    "train_text_lm",
    "validation_loss",
    "write_stored_text_model",
]

EVAL_CONTEXT = 64
"""The context of every validation loss (the baseline's): the same number for every recipe."""
CURVE_CHARS = 16_384
"""Characters of each split scored at a curve point (the final loss reads the whole split)."""


@dataclass(frozen=True)
class TextRecipe:
    """Everything a text training run chooses, in one frozen object.

    Model (see :class:`~attnlab.mechanism.config.TransformerConfig`): ``n_layers``,
    ``n_heads``, ``d_model``, ``d_ff`` (default ``4 * d_model``, or SwiGLU's matched
    width), ``dropout``, ``bias``, ``norm``, ``activation``, ``ffn``, ``tie_weights``,
    ``fused_attention``, and ``positional`` (``"learned"``, GPT's, or ``"sinusoidal"``). Data: ``context`` (characters a model reads), ``batch_size``.
    Optimiser: AdamW (``weight_decay`` on the matrices only, as nanoGPT; 0 makes it Adam),
    ``betas``, peak ``lr`` after ``warmup`` linear steps, then ``schedule`` (``"cosine"``
    down to ``min_lr`` at the last step, or ``"constant"``), gradients clipped at norm
    ``grad_clip``. Run: ``steps``, or a time budget ``seconds`` (the schedule then
    follows the clock and the run stops when it is spent), ``eval_every`` steps between two
    curve points, ``compile`` (``torch.compile`` the model first; its compile time counts).

    Raises:
        ValueError: a size, rate or count out of range (the message names it).
    """

    name: str
    n_layers: int = 4
    n_heads: int = 4
    d_model: int = 128
    d_ff: int | None = None
    context: int = 64
    batch_size: int = 12
    steps: int = 2000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup: int = 100
    schedule: str = "cosine"
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.99)
    grad_clip: float = 1.0
    dropout: float = 0.0
    bias: bool = False
    norm: str = "layer"
    activation: str | None = "gelu"
    ffn: str = "mlp"
    tie_weights: bool = True
    fused_attention: bool = False
    positional: str = "learned"
    init: str = "course"
    compile: bool = False
    seconds: float | None = None
    eval_every: int = 250

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_heads", "d_model", "context", "batch_size", "steps"):
            positive_int(getattr(self, name), name)
        positive_int(self.eval_every, "eval_every")
        check_int(self.warmup, "warmup", low=0)
        positive_number(self.lr, "lr")
        check_real(self.min_lr, "min_lr", expected="in [0, lr]", ok=lambda v: 0 <= v <= self.lr)
        check_real(self.weight_decay, "weight_decay", expected=">= 0", ok=lambda v: v >= 0)
        for i, beta in enumerate(self.betas):
            check_real(beta, f"betas[{i}]", expected="in [0, 1)", ok=lambda b: 0 <= b < 1)
        positive_number(self.grad_clip, "grad_clip")
        probability(self.dropout, "dropout")
        if self.seconds is not None:
            positive_number(self.seconds, "seconds")
        lr_at(0, lr=self.lr, steps=self.steps, warmup=self.warmup, schedule=self.schedule)
        self.config(2)  # the model's options are checked by its config
        if self.init not in ("course", "gpt"):
            raise ValueError(f"init must be 'course' or 'gpt', got {self.init!r}")
        if self.positional not in ("learned", "sinusoidal"):
            raise ValueError(
                f"positional must be 'learned' or 'sinusoidal', got {self.positional!r}"
            )

    def config(self, vocab: int) -> TransformerConfig:
        """The model's :class:`~attnlab.mechanism.config.TransformerConfig` (``max_len`` is the
        larger of ``context`` and :data:`EVAL_CONTEXT`)."""
        del vocab  # the config does not hold the vocabulary; kept for one call shape
        return TransformerConfig(
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            d_ff=self.d_ff,
            max_len=max(self.context, EVAL_CONTEXT),
            dropout=self.dropout,
            bias=self.bias,
            norm=self.norm,
            activation=self.activation,
            ffn=self.ffn,
            tie_weights=self.tie_weights,
            fused_attention=self.fused_attention,
        )

    def lr_at(self, step: int) -> float:
        """The learning rate of step ``step`` (0-based): warm-up, then the schedule."""
        return lr_at(
            step,
            lr=self.lr,
            steps=self.steps,
            warmup=self.warmup,
            schedule=self.schedule,
            decay_to=self.min_lr / self.lr,
        )

    @property
    def tokens_per_step(self) -> int:
        """``batch_size * context``: characters predicted per optimisation step."""
        return self.batch_size * self.context


NANOGPT_CPU = TextRecipe(name="nanoGPT CPU recipe")
"""nanoGPT's README CPU run, rebuilt with the course's model (the defaults of :class:`TextRecipe`).

The differences that remain: the course's model scales the token embedding by √D and
initialises as chapter 7 does (nanoGPT: N(0, 0.02)), its LayerNorms keep their shift β and
its read-out its bias (nanoGPT's ``bias=False`` drops those too: 1,216 numbers), and the
warm-up and cosine follow :func:`~attnlab.tasks.loop.lr_at` (the same shape, one step
apart). nanoGPT estimates its loss on 20 random batches; here it is the exact loss on the
whole validation text.
"""

FAST_CPU = dataclasses.replace(
    NANOGPT_CPU,
    name="course recipe",
    n_layers=2,
    positional="sinusoidal",
    tie_weights=False,
    fused_attention=True,
    steps=1200,
    lr=4e-3,
    min_lr=4e-4,
    warmup=30,
    weight_decay=0.0,
    betas=(0.9, 0.95),
    eval_every=50,
)
"""The course's faster recipe: half the depth, a higher learning rate, positions read at once.

The same width, heads, context and batches as :data:`NANOGPT_CPU`; what changed, and why.
Short runs, each trained for the same 50 processor seconds on one thread (seed 0, the loss
on the first 16,384 validation characters, the schedule following the clock; a shared
2-core machine at load 10-20, so the milliseconds per step are inflated alike):

======================================================  =====  ===========  ========
run (50 processor seconds each)                         steps  ms per step  val loss
======================================================  =====  ===========  ========
4 layers, lr 4e-3, betas (0.9, 0.99), weight decay 0.1    577         86.7     1.975
3 layers, lr 6e-3, betas (0.9, 0.95), no weight decay     760         65.8     1.905
... with GPT's init (N(0, 0.02²), residual layers less)   677         74.0     2.107
... with a 256-wide feed-forward and lr 8e-3              804         62.2     1.943
... with lr 1e-2 and no gradient clipping                 631         79.3     2.202
**2 layers**, lr 6e-3, betas (0.9, 0.95), no decay        980         51.1     1.823
======================================================  =====  ===========  ========

- **Fewer layers.** In a minute of one core a model reads about half a million characters:
  too few for four layers to pay for themselves. Each layer costs about 21 ms a step; two
  layers take about 40% fewer seconds per step than four and learn nearly as much per step
  this early, so in the same seconds they get further (1.823 against 1.905 for three).
- **A higher learning rate, Adam's β₂ = 0.95, no weight decay**: 4e-3 after 30 warm-up
  steps, decayed to a tenth over the 1,200 steps. 1e-2 without clipping was unstable (2.202).
  The 50-second runs above favoured 6e-3; over the full 1,200 steps, on the whole
  validation text, 4e-3 ends lower (the table below).
- **Sinusoidal positions, untied read-out.** A fresh model's token vectors (std 1 after
  the √D scaling) drown learned positions that start at std 0.02: attention has no way to
  find "the previous character" until the positions grow, and the loss sits near 2.4 (what
  single characters and pairs give) for hundreds of steps. Sinusoidal positions have unit
  amplitude from step 0: after 200 steps of 16 windows the validation loss was 2.24
  instead of 2.39.
- **The course's init** stays: GPT-2's N(0, 0.02²) (``init="gpt"``) learned slower here
  (2.107 against 1.905): with LayerNorm in front of every block, PyTorch's default scale
  (std ≈ 0.05 at 128 wide) moves the residual stream sooner.
- **Fused attention** (``F.scaled_dot_product_attention``): about 6% less time per step.
- Larger batches barely help on a CPU: a character costs about the same time at 12, 32 or
  64 windows a step, and at a fixed number of characters fewer, larger steps learned less.
  ``torch.compile`` was left out: its compile time counts against a run this short. No
  reduced precision: every number is float32.

Changes tried on the full 1,200 steps, one at a time from lr 6e-3 (one thread, processor
seconds, the whole validation text; the baseline's losses, seeds 0/1/2: 1.850/1.867/1.856;
a run's seconds grow with the machine's load, the loss does not: it is the same on every
run of one machine):

==========================================  ====  ======  ========  ==========
change (1,200 steps)                        seed  cpu s   val loss  load
==========================================  ====  ======  ========  ==========
none (lr 6e-3, min_lr 6e-4; its race)          0    55.5     1.863  4.5-14
none (lr 6e-3, min_lr 6e-4; its race)          2    43.1     1.860  4.5-14
min_lr 6e-5                                    0    45.9     1.862  1.1-3.1
min_lr 6e-5                                    2    47.1     1.861  1.1-3.0
lr 8e-3, min_lr 8e-4                           0    48.8     1.887  2.4-3.9
gradients clipped at 0.5                       0    49.8     1.862  3.3-4.0
lr 5e-3, min_lr 5e-4                           0    50.0     1.847  3.3-4.0
lr 5e-3, min_lr 5e-4                           2    58.7     1.846  2.8-4.7
**lr 4e-3, min_lr 4e-4**                       0    59.9     1.841  2.8-4.7
**lr 4e-3, min_lr 4e-4**                       1    60.1     1.843  4.9-7.2
**lr 4e-3, min_lr 4e-4**                       2    60.3     1.850  4.8-7.2
==========================================  ====  ======  ========  ==========

A lower final rate or tighter clipping changed nothing; a higher peak rate hurt; a lower
one helped on every seed measured, 4e-3 most (at or below the baseline on seeds 0-2 by
0.009, 0.024 and 0.006). ``torch.compile`` (measured on the stored model's batch of 24,
load 3.5): 37.3 processor seconds to compile (the compiler's own processes counted), then
65.0 ms a step against 75.3: it would pay for itself after about 3,700 steps, past every
run here. PyTorch's fused AdamW on the CPU: 37.0 and 50.4 ms a step against 41.5 and 44.7
(two pairs at load 5), no clear gain, left out.

The race (``bench/bench_capstone.py --seeds 3 --clock cpu --threads 1 --jobs 2``: one
thread each, processor seconds, two runs at a time, the machine at load 5.1-10.2 on 2
cores; the whole validation text):

====  ======================  ======================  ===========
seed  baseline: s, val loss   this recipe: s, loss    time / base
====  ======================  ======================  ===========
   0  174.9, 1.850            50.2, 1.841 (-0.009)           0.29
   1  178.2, 1.867            51.5, 1.843 (-0.024)           0.29
   2  186.3, 1.856            55.2, 1.850 (-0.006)           0.30
====  ======================  ======================  ===========

At or below the baseline's loss in under a third of its time on every seed (0.287, 0.289
and 0.296 of it): the goal is met. The same run's curves reach the baseline's last curve
point (the first 16,384 validation characters) after 48.0, 42.1 and 48.4 s. The losses are
those of the runs in the table above (the same on every run of one machine); the seconds
grow with the load, the ratio of a pair much less. The race of the recipe before (lr 6e-3,
load 4.5-14): 178.2/174.8/144.2 s and 1.850/1.867/1.856 for the baseline, 55.5/48.0/43.1 s
and 1.863/1.866/1.860 for the course (ratios 0.31/0.27/0.30, the loss met on seed 1 only).
"""

STORED_RECIPE = TextRecipe(
    name="stored model",
    n_layers=2,
    n_heads=4,
    d_model=128,
    context=64,
    batch_size=24,
    steps=3000,
    lr=5e-3,
    min_lr=5e-4,
    warmup=50,
    weight_decay=0.0,
    betas=(0.9, 0.95),
    bias=False,
    tie_weights=False,
    fused_attention=True,
    positional="sinusoidal",
    eval_every=60,
)
"""The recipe of the model the chapter loads (:func:`stored_text_model`), written out in full.

:data:`FAST_CPU`'s model with twice the windows a step (24), a higher rate (5e-3 decayed to
5e-4) and 3,000 steps: 4.6 million characters, about 4.7 passes over the training text.
Its final validation loss 1.649 on the whole validation text (1.596 on the curve's first 16,384
characters), against the baseline's 1.850 (seed 0): 0.201 below it. Its time, measured
directly: this recipe run again on seed 0, one thread, the machine otherwise quiet (load
0.6-1.0), trained in 171.9 processor seconds (57.3 ms a step) to the same 1.6486: under 3
minutes. The run that wrote it measured 204.2 s (68 ms a step): the machine was shared by
about eight programs on 2 cores (load 6-8), and then even one thread's processor time grows
(the cores' caches and memory are shared).

Every run toward it (seed 0, one thread, processor seconds, whole validation text; the
loss is the same on every run of one machine, the seconds grow with its load):

========================================================  =====  ======  ========  =======
run                                                       steps  cpu s   val loss  load
========================================================  =====  ======  ========  =======
batch 24, lr 6e-3                                          1700   138.0     1.719  5-10
batch 24, lr 6e-3 (the model stored before)                2100   147.4     1.697  5-10
3 layers, batch 24, lr 6e-3                                1200   144.6     1.736  5-10
batch 24, lr 4e-3                                          2400   176.6     1.672  9.0-3.0
160 wide, batch 24, lr 4e-3                                1600   139.3     1.696  3.4-2.7
batch 48, lr 4e-3 (150 steps: 108 ms a step against 50)     150    16.2     2.241  0.4
batch 24, lr 4e-3                                          3400   181.6     1.634  2.1
batch 24, lr 4e-3, min_lr 0                                3400   181.3     1.639  2.1
batch 24, lr 4e-3 (stored before this one)                 3300   183.0     1.646  1-2
batch 24, lr 4e-3                                          3150   185.5     1.645  4.1
batch 24, lr 4.5e-3                                        3150   182.7     1.641  4.1
batch 24, lr 4.5e-3                                        3000   205.5     1.652  6-8
**batch 24, lr 5e-3** (this recipe)                        3000   204.2     1.649  6-8
the same recipe, run again to time it                      3000   171.9     1.649  0.6-1.0
========================================================  =====  ======  ========  =======

A larger batch costs as much per character on this CPU (48 windows: 108 ms a step, 24: 50
ms, both on the machine alone), and a final rate of 0 ended higher than a tenth of the
peak. ``torch.compile`` does not pay within 3 minutes (:data:`FAST_CPU`: 37 s to compile,
13% less time a step after). More steps is what lowered the loss, and a higher rate let fewer
steps do it: 3,000 at 5e-3 end 0.201 below the baseline, 3,000 at 4.5e-3 0.198."""

ABLATION_RECIPE = dataclasses.replace(
    FAST_CPU,
    name="ablation recipe",
    seconds=15.0,
    steps=1000,
    warmup=30,
    eval_every=100,
)
"""The recipe each ablation changes one thing of: :data:`FAST_CPU` (lr 4e-3 decayed to
4e-4) on a budget of 15 training seconds.

Five seeds each (0-4), so that a change is read against the recipe's own run on the same
seed (the batches in the same order; the same first weights only for changes that add or
drop no weight matrix): the chapter reports each change's
per-seed differences, and the spread of the recipe's own runs says what chance alone does.

Equal training time, as the chapter compares blocks: every ablation trains until the same
budget of seconds is spent (the bench passes ``clock="cpu"`` and one thread: processor
seconds, which another program on the machine does not count), its schedule following the
clock (``steps`` only sets the warm-up's share and is never reached). A block that costs more
per step pays for it in steps: the bench records the steps each run took and its
milliseconds per step beside its loss."""

ABLATIONS: dict[str, dict[str, Any]] = {
    "course recipe": {},
    "ReLU for GELU": {"activation": "relu"},
    "RMSNorm for LayerNorm": {"norm": "rms"},
    "SwiGLU for the MLP": {"ffn": "swiglu", "activation": None},
    "tied read-out": {"tie_weights": True},
    "AdamW, weight decay 0.1": {"weight_decay": 0.1},
    "dropout 0.1": {"dropout": 0.1},
}
"""Each ablation: what it changes in :data:`ABLATION_RECIPE` (``dataclasses.replace`` arguments)."""


# -- data ----------------------------------------------------------------------------------------


def shakespeare_ids() -> tuple[CharVocab, torch.Tensor, torch.Tensor]:
    """The corpus's character vocabulary and its two splits as id streams ``(N,)`` (int64)."""
    vocab = CharVocab.from_text(load_shakespeare())
    train, val = shakespeare_split()
    return vocab, _ids(vocab, train), _ids(vocab, val)


def _ids(vocab: CharVocab, text: str) -> torch.Tensor:
    return torch.tensor(vocab.encode(text), dtype=torch.long)


def validation_loss(model: nn.Module, ids: torch.Tensor, context: int = EVAL_CONTEXT) -> float:
    """The exact mean loss (nats per character) of ``model`` on the stream ``ids``.

    Every character but the first is predicted once, from up to ``context`` characters
    before it (:func:`~attnlab.mechanism.sampling.text_loss`): no random batches, so the
    same weights always give the same number.
    """
    return text_loss(model, ids, context=context, batch_size=128)


# -- the run -------------------------------------------------------------------------------------


@dataclass
class TextRun:
    """What one training run measured.

    Attributes:
        recipe: the :class:`TextRecipe`.
        seed: the seed of the weights (the batches use ``seed + 1``).
        threads: torch's intra-op threads during the run.
        clock: ``"wall"`` (elapsed seconds) or ``"cpu"`` (this process's processor
            seconds, every thread's: on a busy machine, with one thread, about what the
            run takes on an idle one), the clock of ``seconds`` and ``split``.
        steps: optimisation steps at each curve point (0 first, the last step last).
        seconds: training seconds (evaluations left out) at each curve point.
        train_loss, val_loss: the exact loss on :data:`CURVE_CHARS` characters of each
            split (the first of the validation text, the last of the training text) at
            each curve point.
        final_val_loss: the exact loss on the whole validation text after the last step.
        split: training seconds spent in ``"forward"`` (model and loss), ``"backward"``,
            ``"optimizer"`` (clipping and the AdamW step) and ``"batches"``.
        model: the trained model, in eval mode (``None`` once stored as text).
    """

    recipe: TextRecipe
    seed: int
    threads: int
    clock: str
    steps: list[int]
    seconds: list[float]
    train_loss: list[float]
    val_loss: list[float]
    final_val_loss: float
    split: dict[str, float]
    model: DecoderOnlyLM | None = None

    @property
    def train_seconds(self) -> float:
        """The whole run's training seconds."""
        return self.seconds[-1]

    @property
    def tokens_per_second(self) -> float:
        """Characters trained on per training second."""
        return self.steps[-1] * self.recipe.tokens_per_step / max(self.train_seconds, 1e-9)

    def seconds_to(self, loss: float) -> float | None:
        """Training seconds at the first curve point whose validation loss is ``<= loss``."""
        return next((s for s, v in zip(self.seconds, self.val_loss) if v <= loss), None)  # noqa: B905

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready numbers (everything but the model)."""
        record = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        record["recipe"] = dataclasses.asdict(self.recipe)
        del record["model"]
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> TextRun:
        """The record :meth:`to_json` wrote (its model ``None``)."""
        recipe = dict(record["recipe"])
        recipe["betas"] = tuple(recipe["betas"])
        return cls(**{**record, "recipe": TextRecipe(**recipe)})


def text_model(recipe: TextRecipe, vocab: int) -> DecoderOnlyLM:
    """A fresh :class:`~attnlab.mechanism.transformer.DecoderOnlyLM` built as ``recipe`` says.

    ``recipe.init == "gpt"`` re-draws the linear layers as GPT-2 and nanoGPT do: every weight
    N(0, 0.02²), the two that write into the residual stream (attention's ``W_o`` and the
    feed-forward's last layer) N(0, (0.02/√(2L))²), biases 0; the embedding keeps the
    course's N(0, 1/D) (unit entries after the √D scaling).
    """
    model = DecoderOnlyLM(
        positive_int(vocab, "vocab"), recipe.config(vocab), positional=recipe.positional
    )
    if recipe.init == "gpt":
        residual = 0.02 / math.sqrt(2 * recipe.n_layers)
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear) and module.weight is not model.embed.weight:
                last = name.endswith(("W_o", "linear2", "W_down"))
                nn.init.normal_(module.weight, std=residual if last else 0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
    return model


def _optimizer(model: nn.Module, recipe: TextRecipe) -> torch.optim.AdamW:
    """AdamW; weight decay on the matrices (embeddings included), none on biases and norms."""
    params = [p for p in model.parameters() if p.requires_grad]  # a tied matrix: once
    groups = [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": recipe.weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=recipe.lr, betas=recipe.betas)


def train_text_lm(
    recipe: TextRecipe,
    seed: int = 0,
    *,
    threads: int | None = None,
    clock: str = "wall",
    final: bool = True,
) -> TextRun:
    """Train a character-level model on the Shakespeare corpus as ``recipe`` says.

    ``seed_everything(seed, threads=threads)``, a fresh model, then ``recipe.steps`` steps
    (or ``recipe.seconds`` of training) of AdamW on random windows of the training text
    (:func:`~attnlab.tasks.corpus.random_windows`, a generator seeded ``seed + 1``). Every
    ``recipe.eval_every`` steps, and after the last, the loss on a fixed stretch of each
    split is recorded; that time is left out of the training seconds.

    Args:
        recipe: a :class:`TextRecipe`.
        seed: the seed of the weights (the batches use ``seed + 1``).
        threads: torch's intra-op threads (``None``: leave the setting as it is).
        clock: ``"wall"`` or ``"cpu"``: what ``seconds``, ``split`` and a time budget count
            (see :class:`TextRun`).
        final: compute ``final_val_loss`` on the whole validation text (a few seconds);
            ``False`` records the last curve point's instead.

    Returns:
        A :class:`TextRun`, its model in eval mode.

    Written for chapter 9 (a GPT on real text).
    """
    if not isinstance(recipe, TextRecipe):
        raise TypeError(f"recipe must be a TextRecipe, got {type(recipe).__name__}")
    check_clock(clock)
    seed_everything(seed, threads=threads)
    threads = torch.get_num_threads()
    vocab, train_ids, val_ids = shakespeare_ids()
    curve_train, curve_val = train_ids[-CURVE_CHARS - 1 :], val_ids[: CURVE_CHARS + 1]
    model = text_model(recipe, len(vocab))
    optimizer = _optimizer(model, recipe)
    step_fn = torch.compile(model) if recipe.compile else model
    generator = torch.Generator().manual_seed(seed + 1)
    run = TextRun(
        recipe, seed, threads, clock, [], [], [], [], math.nan, dict.fromkeys(_PARTS, 0.0)
    )
    watch, now = Stopwatch(clock), time.process_time if clock == "cpu" else time.perf_counter

    def record(step: int) -> None:
        run.seconds.append(watch.seconds)
        with watch.paused():
            run.steps.append(step)
            run.train_loss.append(validation_loss(model, curve_train))
            run.val_loss.append(validation_loss(model, curve_val))
            model.train()

    model.train()
    record(0)
    step, budget = 0, recipe.seconds
    while step < recipe.steps and (budget is None or watch.seconds < budget):
        # With a time budget the schedule follows the clock: step s of `steps` at s/steps of it.
        at = (
            step
            if budget is None
            else min(recipe.steps - 1, int(recipe.steps * watch.seconds / budget))
        )
        for group in optimizer.param_groups:
            group["lr"] = recipe.lr_at(at)
        _train_step(step_fn, optimizer, recipe, train_ids, generator, run.split, now)
        step += 1
        if step % recipe.eval_every == 0 and step < recipe.steps:
            record(step)
    record(step)
    model.eval()
    run.final_val_loss = validation_loss(model, val_ids) if final else run.val_loss[-1]
    run.model = model
    return run


_PARTS = ("batches", "forward", "backward", "optimizer")


def _train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    recipe: TextRecipe,
    ids: torch.Tensor,
    generator: torch.Generator,
    split: dict[str, float],
    now: Any,
) -> None:
    """One AdamW step on a fresh batch, each part's seconds (by ``now()``) added to ``split``."""
    t0 = now()
    x, y = random_windows(ids, recipe.batch_size, recipe.context, generator=generator)  # (B, T)
    t1 = now()
    logits = model(x)  # (B, T) -> (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # (B*T, V), (B*T,) -> ()
    t2 = now()
    loss.backward()
    t3 = now()
    nn.utils.clip_grad_norm_(model.parameters(), recipe.grad_clip)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    t4 = now()
    for part, seconds in zip(_PARTS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
        split[part] += seconds


# -- the stored model and ablations --------------------------------------------------------------

_MODEL_FILE, _RECORD_FILE, _ABLATIONS_FILE = "text_model.pt", "text_model.json", "ablations.json"


def _data_file(name: str, directory: str | Path | None = None) -> Any:
    if directory is None:
        return resources.files("attnlab.data_files") / name
    return Path(directory) / name


def write_stored_text_model(directory: str | Path | None = None, *, threads: int = 1) -> TextRun:
    """Train :data:`STORED_RECIPE` (seed 0) and write what :func:`stored_text_model` loads.

    Two files: ``text_model.pt``, ``torch.save`` of the weights stored in float16 (half
    the bytes; loaded back as float32) with the vocabulary, and ``text_model.json``, the
    :class:`TextRun` record (recipe, curves, final validation loss, seconds).

    Args:
        directory: where to write (default: ``attnlab/data_files``).
        threads: torch's threads for the run (1: the same numbers on every run of a machine).
            Its seconds are processor seconds (``clock="cpu"``): with one thread, about
            the time on an idle machine, however busy this one is.

    Returns:
        The :class:`TextRun`.
    """
    run = train_text_lm(STORED_RECIPE, 0, threads=threads, clock="cpu")
    where = (
        Path(str(resources.files("attnlab.data_files"))) if directory is None else Path(directory)
    )
    _save(run, where)
    return run


def _save(run: TextRun, where: Path) -> None:
    """Write ``run``'s model (float16) and record as :func:`stored_text_model` reads them."""
    assert run.model is not None
    state = run.model.state_dict()
    half: dict[int, torch.Tensor] = {}  # tied weights stay one tensor in the file
    stored = {k: half.setdefault(id(v), v.detach().half()) for k, v in state.items()}
    vocab = CharVocab.from_text(load_shakespeare())
    torch.save({"state_dict": stored, "chars": "".join(vocab.chars)}, where / _MODEL_FILE)
    record = run.to_json()
    record["torch"] = str(torch.__version__)
    (where / _RECORD_FILE).write_text(json.dumps(record, indent=1) + "\n")


def stored_text_model(
    directory: str | Path | None = None,
) -> tuple[DecoderOnlyLM, CharVocab, TextRun]:
    """The shipped model: ``(model, vocab, record)``, the model on the CPU in eval mode.

    The record is the :class:`TextRun` of its training (:data:`STORED_RECIPE`, seed 0):
    its curves, final validation loss and seconds. Loading draws no random numbers from
    the caller's generators.

    Args:
        directory: where :func:`write_stored_text_model` wrote the files (default: the
            ones shipped with the package).

    Raises:
        ValueError: the files were written for another recipe than :data:`STORED_RECIPE`.
    """
    record = json.loads(_data_file(_RECORD_FILE, directory).read_text())
    record.pop("torch", None)
    run = TextRun.from_json(record)
    if run.recipe != STORED_RECIPE:
        raise ValueError(
            "the stored text model was trained with another recipe than "
            "attnlab.tasks.textlm.STORED_RECIPE: run write_stored_text_model() again"
        )
    with _data_file(_MODEL_FILE, directory).open("rb") as f:
        saved = torch.load(f, map_location="cpu", weights_only=True)
    vocab = CharVocab(list(saved["chars"]))
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: not the caller's
        model = text_model(STORED_RECIPE, len(vocab))
    model.load_state_dict({k: v.float() for k, v in saved["state_dict"].items()})
    run.model = model.eval()
    return run.model, vocab, run


def stored_ablations() -> dict[str, Any]:
    """The ablation table ``bench/bench_capstone.py --ablations --write`` stored.

    Returns:
        ``{"budget": ..., "seeds": [...], "rows": [{"name", "changes", "parameters",
        "val_loss" (per seed), "seconds" (per seed), "tokens_per_second" (per seed)}, ...]}``.
    """
    return json.loads(_data_file(_ABLATIONS_FILE).read_text())
