"""What the package's own plot says on its axes (needs matplotlib)."""

from __future__ import annotations

import numpy as np
import pytest

import spca
from spca.datasets import load_pitprops


def test_cardinality_path_plot_labels():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = spca.cardinality_path(load_pitprops().correlation, [1, 3, 5])
    ax = path.plot()
    try:
        # the curve is x' Sigma x of the k-sparse component, not a share of variance
        assert ax.get_ylabel() == "variance x' Sigma x of the k-sparse component"
        assert "explained variance" not in ax.get_ylabel()
        assert ax.get_title()
        assert ax.get_xlabel() == "number of nonzero loadings k"
        np.testing.assert_allclose(ax.lines[0].get_ydata(), path.variances)
    finally:
        plt.close(ax.figure)
