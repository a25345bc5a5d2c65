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
- ``corpus`` (the shipped Shakespeare text, a character vocabulary), ``modern`` (RMSNorm,
  GELU, SwiGLU) and ``decoding`` (top-k, top-p, beam search): chapter 9;
- ``viz`` and ``widgets`` (figures and sliders), ``grading`` (exercise checks),
  ``seed`` (reproducibility), ``timing`` (timings that hold on a busy machine).
"""

# data and train are used as modules: attnlab.data.Task, attnlab.train.train(...)
# corpus, decoding and modern (chapter 9) too: attnlab.decoding.top_p_probs(...)
from . import (
    corpus,
    data,
    decoding,
    heads,
    modern,
    recall,
    train,
    viz,
    widgets,
)
from .attention import (
    CrossAttention,
    OneLayerAttention,
    SelfAttention,
    scaled_dot_product_attention,
)
from .config import TransformerConfig
from .corpus import CharBPE, CharVocab, load_shakespeare, shakespeare_split
from .decoding import (
    beam_search,
    next_token_probs,
    repetition,
    sample_tokens,
    sequence_log_prob,
    temperature_probs,
    top_k_probs,
    top_p_probs,
)
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
from .modern import RMSNorm, SwiGLU, gelu
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
    "CharBPE",
    "CharVocab",
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
    "RMSNorm",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "Slider",
    "SwiGLU",
    "TransformerConfig",
    "VanillaRNN",
    "Vocab",
    "WordPieceTokenizer",
    "additive_scores",
    "apply_rope",
    "attention_cost",
    "beam_search",
    "causal_mask",
    "combine_masks",
    "corpus",
    "cosine_similarity",
    "data",
    "decoding",
    "dot",
    "embed",
    "explore",
    "from_additive_mask",
    "from_hf_attention_mask",
    "from_ignore_mask",
    "gelu",
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
    "load_shakespeare",
    "merge_heads",
    "mha_flops",
    "mha_parameter_count",
    "modern",
    "next_token_probs",
    "offset_matrix",
    "one_hot",
    "online_softmax",
    "padding_mask",
    "path_lengths",
    "permutation_gap",
    "recall",
    "repetition",
    "sample_tokens",
    "scaled_dot_product_attention",
    "scaled_scores",
    "scores",
    "seed_everything",
    "sequence_log_prob",
    "sequential_vs_parallel_time",
    "set_recurrent_radius",
    "shakespeare_split",
    "sinusoidal_encoding",
    "softmax",
    "spectral_radius",
    "split_heads",
    "temperature_probs",
    "tiled_attention",
    "to_additive_mask",
    "to_hf_attention_mask",
    "to_ignore_mask",
    "to_key_padding_mask",
    "top_k_probs",
    "top_p_probs",
    "toy_embeddings",
    "trace_shapes",
    "train",
    "train_bpe",
    "viz",
    "widgets",
    "word_tokenize",
]
