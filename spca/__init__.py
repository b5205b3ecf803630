"""spca: large-scale sparse principal component analysis.

DSPCA (d'Aspremont et al. 2007) solved by the block coordinate ascent method
of Zhang & El Ghaoui (NIPS 2011), with safe feature elimination in front of it
and a certified duality gap on every answer.
"""

from . import _interrupt

if _interrupt.is_the_command():  # one line, not a traceback, on Ctrl-C while importing
    _interrupt.install()

try:
    from . import _bca_fast  # noqa: F401 - the first compiled module: is spca built?
except ImportError as _exc:
    import os as _os

    _here = _os.path.dirname(_os.path.abspath(__file__))
    if _os.path.exists(_os.path.join(_here, "_bca_fast.pyx")):
        raise ImportError(
            f"spca is imported from its source tree ({_here}), where its compiled "
            "(Cython) modules are not built. To use an installed spca, run Python from "
            "another directory than the repository root; to work on the source, build it "
            "in place (pip install meson-python ninja Cython numpy scipy, then "
            "pip install --no-build-isolation -e .; see README.md, 'Development')."
        ) from _exc
    raise

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
