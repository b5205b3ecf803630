"""spca: large-scale sparse principal component analysis.

DSPCA (d'Aspremont et al. 2007) solved by the block coordinate ascent method
of Zhang & El Ghaoui (NIPS 2011), with safe feature elimination in front of it
and a certified duality gap on every answer.
"""

from ._bca import ConvergenceWarning, DSPCAResult, EmptyProblemWarning, dspca_bca
from ._first_order import dspca_first_order
from ._screening import safe_feature_elimination

__version__ = "0.1.0.dev0"

__all__ = [
    "ConvergenceWarning",
    "DSPCAResult",
    "EmptyProblemWarning",
    "__version__",
    "dspca_bca",
    "dspca_first_order",
    "safe_feature_elimination",
]
