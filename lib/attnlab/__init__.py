"""attnlab: attention and the transformer from first principles.

One tested implementation, imported by every chapter of the course. Pure functions accept
NumPy arrays or torch tensors and return the same kind; learnable layers are
``torch.nn.Module``s. Masks are boolean with ``True`` = may attend.

Every public name is importable from here (``import attnlab as al``; ``al.softmax``). The
code lives in four layers, each importing only from the layers below it:

- ``mechanism/``: the equations. ``similarity``, ``attention`` (chapters 2-3),
  ``multihead`` (4), ``positional`` (5), ``masking`` (6), ``config`` and ``transformer``
  (7), ``decoding`` (7-8), ``kvcache`` and ``scale`` (8), ``interop`` (PyTorch's weights in, for comparisons),
  ``modern`` (RMSNorm, GELU, SwiGLU) and ``sampling`` (temperature, top-k, top-p, beam search) (9);
- ``tasks/``: the tasks and experiments the chapters run on the mechanism. ``rnn`` and
  ``recall`` (1), ``tokenizer`` and ``embeddings`` (2), ``heads`` (4), ``data`` and
  ``training`` (3, 6, 7), ``corpus`` (the shipped Shakespeare text, its vocabularies) and
  ``textlm`` (training a GPT on it: recipes, the stored model, the ablations) (9);
- ``drawing/``: ``viz`` (figures) and ``widgets`` (sliders);
- ``grading/``: the exercises' checks.

Below them all: ``_validate`` (every input check), ``measure`` (timings and peak memory
that hold on a busy machine), ``seed`` (reproducibility), ``course`` (what a chapter is)
and ``data_files`` (the few files the package ships).
"""

from .drawing import viz, widgets
from .drawing.widgets import Explorer, Slider, explore
from .mechanism.attention import (
    CrossAttention,
    OneLayerAttention,
    SelfAttention,
    scaled_dot_product_attention,
)
from .mechanism.config import TransformerConfig
from .mechanism.decoding import generate, generation_seconds, greedy_decode
from .mechanism.kvcache import KVCache, kv_cache_bytes
from .mechanism.masking import (
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
from .mechanism.modern import RMSNorm, SwiGLU, gelu
from .mechanism.multihead import (
    MultiHeadAttention,
    merge_heads,
    mha_flops,
    mha_parameter_count,
    split_heads,
    trace_shapes,
)
from .mechanism.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    index_encoding,
    offset_matrix,
    permutation_gap,
    sinusoidal_encoding,
)
from .mechanism.sampling import (
    beam_search,
    next_token_probs,
    repetition,
    sample_tokens,
    sequence_log_prob,
    temperature_probs,
    top_k_probs,
    top_p_probs,
)
from .mechanism.scale import (
    GroupedQueryAttention,
    grouped_query_attention,
    online_softmax,
    tiled_attention,
)
from .mechanism.similarity import (
    additive_scores,
    cosine_similarity,
    dot,
    general_scores,
    scaled_scores,
    scores,
    softmax,
)
from .mechanism.transformer import (
    Decoder,
    DecoderBlock,
    DecoderOnlyLM,
    Encoder,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
)
from .seed import seed_everything
from .tasks import corpus, data, heads, recall, textlm
from .tasks.corpus import CharBPE, CharVocab, load_shakespeare, shakespeare_split
from .tasks.embeddings import EmbeddingTable, embed, one_hot, toy_embeddings
from .tasks.rnn import (
    VanillaRNN,
    attention_cost,
    gradient_norm_vs_distance,
    input_jacobian_norms,
    path_lengths,
    sequential_vs_parallel_time,
    set_recurrent_radius,
    spectral_radius,
)
from .tasks.textlm import TextRecipe, stored_text_model, train_text_lm
from .tasks.tokenizer import Vocab, WordPieceTokenizer, train_bpe, word_tokenize
from .tasks.training import train

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
    "TextRecipe",
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
    "stored_text_model",
    "temperature_probs",
    "textlm",
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
    "train_text_lm",
    "viz",
    "widgets",
    "word_tokenize",
]
