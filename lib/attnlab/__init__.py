"""attnlab: attention and the transformer from first principles.

One tested implementation, imported by every chapter of the course. Pure functions accept
NumPy arrays or torch tensors and return the same kind; learnable layers are
``torch.nn.Module``s. Masks are boolean with ``True`` = may attend.

Modules, in the order the course meets them:

- ``rnn`` and ``recall``: the recurrent baseline whose limits chapter 1 measures;
- ``tokenizer``, ``embeddings``, ``similarity``: chapter 2;
- ``attention``: chapters 2-3; ``multihead`` and ``heads``: chapter 4;
  ``positional``: chapter 5;
- ``masking``: chapter 6; ``transformer`` (its hyper-parameters in ``config``), ``data``
  and ``train``: chapter 7;
- ``scale`` (online softmax, tiled and grouped-query attention, the KV cache): chapter 8;
- ``viz`` and ``widgets`` (figures and sliders), ``grading`` (exercise checks),
  ``seed`` (reproducibility), ``timing`` (timings that hold on a busy machine).
"""

# data and train are used as modules: attnlab.data.Task, attnlab.train.train(...)
from . import data, heads, recall, train, viz, widgets
from .attention import (
    CrossAttention,
    OneLayerAttention,
    SelfAttention,
    scaled_dot_product_attention,
)
from .config import TransformerConfig
from .embeddings import EmbeddingTable, toy_embeddings
from .masking import (
    causal_mask,
    combine_masks,
    from_additive_mask,
    from_hf_attention_mask,
    from_ignore_mask,
    padding_mask,
    to_additive_mask,
    to_hf_attention_mask,
    to_ignore_mask,
    to_key_padding_mask,
)
from .multihead import (
    MultiHeadAttention,
    merge_heads,
    mha_flops,
    mha_parameter_count,
    split_heads,
    trace_shapes,
)
from .positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    index_encoding,
    offset_matrix,
    permutation_gap,
    sinusoidal_encoding,
)
from .rnn import (
    VanillaRNN,
    attention_cost,
    gradient_norm_vs_distance,
    input_jacobian_norms,
    path_lengths,
    sequential_vs_parallel_time,
    set_recurrent_radius,
    spectral_radius,
)
from .scale import (
    GroupedQueryAttention,
    KVCache,
    grouped_query_attention,
    kv_cache_bytes,
    online_softmax,
    tiled_attention,
)
from .seed import seed_everything
from .similarity import (
    additive_scores,
    cosine_similarity,
    dot,
    general_scores,
    scaled_scores,
    scores,
    softmax,
)
from .tokenizer import Vocab, WordPieceTokenizer, embed, one_hot, train_bpe, word_tokenize
from .transformer import (
    Decoder,
    DecoderBlock,
    DecoderOnlyLM,
    Encoder,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
    generate,
    generation_seconds,
    greedy_decode,
)
from .widgets import Explorer, Slider, explore

__version__ = "0.1.0"

__all__ = [
    "CrossAttention",
    "Decoder",
    "DecoderBlock",
    "DecoderOnlyLM",
    "EmbeddingTable",
    "Encoder",
    "EncoderBlock",
    "EncoderDecoder",
    "Explorer",
    "FeedForward",
    "GroupedQueryAttention",
    "KVCache",
    "LayerNorm",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "OneLayerAttention",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "Slider",
    "TransformerConfig",
    "VanillaRNN",
    "Vocab",
    "WordPieceTokenizer",
    "additive_scores",
    "apply_rope",
    "attention_cost",
    "causal_mask",
    "combine_masks",
    "cosine_similarity",
    "data",
    "dot",
    "embed",
    "explore",
    "from_additive_mask",
    "from_hf_attention_mask",
    "from_ignore_mask",
    "general_scores",
    "generate",
    "generation_seconds",
    "gradient_norm_vs_distance",
    "greedy_decode",
    "grouped_query_attention",
    "heads",
    "index_encoding",
    "input_jacobian_norms",
    "kv_cache_bytes",
    "merge_heads",
    "mha_flops",
    "mha_parameter_count",
    "offset_matrix",
    "one_hot",
    "online_softmax",
    "padding_mask",
    "path_lengths",
    "permutation_gap",
    "recall",
    "scaled_dot_product_attention",
    "scaled_scores",
    "scores",
    "seed_everything",
    "sequential_vs_parallel_time",
    "set_recurrent_radius",
    "sinusoidal_encoding",
    "softmax",
    "spectral_radius",
    "split_heads",
    "tiled_attention",
    "to_additive_mask",
    "to_hf_attention_mask",
    "to_ignore_mask",
    "to_key_padding_mask",
    "toy_embeddings",
    "trace_shapes",
    "train",
    "train_bpe",
    "viz",
    "widgets",
    "word_tokenize",
]
