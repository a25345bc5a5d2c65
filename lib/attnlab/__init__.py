"""attnlab: attention and the transformer from first principles.

One tested implementation, imported by every chapter of the course. Pure functions accept
NumPy arrays or torch tensors and return the same kind; learnable layers are
``torch.nn.Module``s. Masks are boolean with ``True`` = may attend.
"""

from .attention import SelfAttention, scaled_dot_product_attention
from .masking import causal_mask, combine_masks, from_ignore_mask, padding_mask
from .seed import seed_everything
from .similarity import cosine_similarity, dot, scaled_scores, scores, softmax

__version__ = "0.1.0"

__all__ = [
    "SelfAttention",
    "causal_mask",
    "combine_masks",
    "cosine_similarity",
    "dot",
    "from_ignore_mask",
    "padding_mask",
    "scaled_dot_product_attention",
    "scaled_scores",
    "scores",
    "seed_everything",
    "softmax",
]
