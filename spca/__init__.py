"""spca: large-scale sparse principal component analysis.

DSPCA (d'Aspremont et al. 2007) solved by the block coordinate ascent method
of Zhang & El Ghaoui (NIPS 2011), with safe feature elimination in front of it
and a certified duality gap on every answer.
"""

from ._bca import ConvergenceWarning, DSPCAResult, EmptyProblemWarning, dspca_bca
from ._deflation import (
    DeflationWarning,
    SparseComponent,
    SparseComponents,
    deflate,
    sparse_components,
)
from ._first_order import dspca_first_order
from ._path import (
    CardinalityPath,
    CardinalityResult,
    LamTrial,
    cardinality_path,
    dspca_cardinality,
)
from ._screening import safe_feature_elimination
from ._variance import ExplainedVariance, explained_variance

__version__ = "0.1.0.dev0"

__all__ = [
    "CardinalityPath",
    "CardinalityResult",
    "ConvergenceWarning",
    "DSPCAResult",
    "DeflationWarning",
    "EmptyProblemWarning",
    "ExplainedVariance",
    "LamTrial",
    "SparseComponent",
    "SparseComponents",
    "SparsePCA",  # noqa: F822 - defined lazily by __getattr__ (needs scikit-learn)
    "__version__",
    "cardinality_path",
    "deflate",
    "dspca_bca",
    "dspca_cardinality",
    "dspca_first_order",
    "explained_variance",
    "safe_feature_elimination",
    "sparse_components",
]


def __getattr__(name: str):
    # SparsePCA needs scikit-learn (an optional dependency): imported on first use.
    if name == "SparsePCA":
        from ._estimator import SparsePCA

        return SparsePCA
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
