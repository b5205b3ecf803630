"""asv benchmarks of spca (run from asv_benchmarks/: ``asv run``).

Importing any benchmark module imports this package first, and with it
``common``, which limits BLAS and OpenMP to one thread for every benchmark.
"""

from . import common  # noqa: F401
