"""Derivations on top of the ledger, for authors: BPTT, Jacobians, attention gradients, clipping, moments, proofs.

Each module follows a part of the handouts:

* :mod:`.bptt` — backpropagation through time as the backward recursion and as
  the expanded sum of path products (Week 06, handout 004).
* :mod:`.jacobians` — J_t = diag(φ′(z_t)) W_h, their products, GRU and LSTM
  state Jacobians, activation slopes, spectral norms.
* :mod:`.attention_grads` — closed-form softmax, attention, LayerNorm, residual and
  cross-entropy gradients, and their proofs.
* :mod:`.clipping` — global-norm gradient clipping and a gradient step.
* :mod:`.moments` — expectations and variances of dot products (why √d_k).
* :mod:`.paths` — gradient paths through a scalar recurrence (Week 06, Figure 3).
* :mod:`.properties` — properties proved on a ledger: rows sum to one,
  permutation equivariance, causal independence.
* :mod:`.symbolic` — proofs by simplification, Jacobians by reverse mode.

Import what you need from here (``from symseq.derive import bptt, dot_product_variance``).
"""

from . import attention_grads, bptt, clipping, jacobians, moments, paths, properties, symbolic
from .moments import dot_product_variance, expectation, variance
from .symbolic import Proof, reverse_jacobian, vanishes

__all__ = [
    "attention_grads", "bptt", "clipping", "jacobians", "moments", "paths", "properties", "symbolic",
    "dot_product_variance", "expectation", "variance", "Proof", "reverse_jacobian", "vanishes",
]
