"""Nodes of the search and how one is split in two.

A node is a partition of the candidate features into forced in (``I``),
excluded and free (``F``).  Its two children force the chosen free feature in
and out.  The feature chosen is the free one of largest magnitude in the
leading eigenvector of the node's matrix ``Sigma_NN``, or, once the row-norm
bound of :mod:`~spca.cardinality._bounds` is evaluated at the node, of its
dual matrix ``Sigma_NN + U`` (whether or not that bound is the node's
lowest): the relaxation's direction, so the ``in`` child keeps the
relaxation's mass and the ``out`` child loses the most of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__: list[str] = []


@dataclass(order=True)
class Node:
    """One node of the search (ordered by ``key``: best bound first, then creation)."""

    key: tuple[float, int]
    inside: NDArray[np.intp] = field(compare=False)  # forced in, ascending
    free: NDArray[np.intp] = field(compare=False)  # free, ascending
    bound: float = field(compare=False)  # inherited from the parent (or its own)
    depth: int = field(compare=False, default=0)
    # the parent's row-norm multiplier (U, the pool positions of its rows),
    # lowered at the parent by :func:`~spca.cardinality._bounds.node_descent`
    # (None: the root's)
    mult: tuple[NDArray[np.float64], NDArray[np.intp]] | None = field(
        compare=False, default=None)

    @property
    def features(self) -> NDArray[np.intp]:
        """``N = I + F``, ascending."""
        return np.union1d(self.inside, self.free)


def choose_feature(node: Node, N: NDArray[np.intp], v: NDArray[np.float64]) -> int:
    """The free feature of largest ``|v_j|`` (``v`` is a vector over ``N``);
    ties go to the smaller index."""
    pos = np.searchsorted(N, node.free)
    mags = np.abs(v[pos])
    return int(node.free[int(np.argmax(mags))])


def children(node: Node, j: int) -> tuple[tuple[NDArray[np.intp], NDArray[np.intp]],
                                          tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """``((inside, free) of the child with j in, (inside, free) with j out)``."""
    free = node.free[node.free != j]
    return (np.sort(np.append(node.inside, j)), free), (node.inside, free)
