"""The k-sparse engine: branch and bound over supports, with a proof.

The package's second engine beside the DSPCA relaxation.  For a covariance
``Sigma`` and a number of features ``k`` it searches

.. code-block:: text

    psi_k = max  lambda_max(Sigma_SS)   over supports S with |S| = k

by best-bound-first branch and bound (each feature in, out or free), and stops
when the relative gap between the best support found and a certified upper
bound is at most the caller's ``optimality_gap``, or when the caller's
``time_limit`` expires.  Its parts:

* :mod:`._search`: the node queue, the stopping rule, the log;
* :mod:`._bounds`: node bounds, cheapest first: variances, Gershgorin,
  ``lambda_max``, the spectrum against sparsity (which tightens as features
  are forced in), the forced block coupled to the free ones, a row-norm
  dual bound (from the DSPCA multiplier) that tightens as features are
  forced in or out, its multiplier lowered at the root and, warm-started
  from the parent's, at the nodes (the node's own spectrum is dropped once
  the row-norm bound has shown itself lower); the node descents steer by
  Ritz estimates and prune only on a Cholesky certificate;
* :mod:`._descent_fast`: the compiled rows of the row-norm penalty;
* :mod:`._branching`: nodes and the choice of the feature to split on;
* :mod:`._starts`: the incumbent, greedy and truncated-power starts, swaps and
  the rounding of nodes.

Users reach it through ``dspca_cardinality(..., optimality_gap=...)``.
"""

from ._search import SearchResult, branch_and_bound

__all__ = ["SearchResult", "branch_and_bound"]
