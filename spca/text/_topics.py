"""From a corpus to its top sparse principal components, read as topics.

The pipeline is the paper's (Section 4), made exact:

1. pass 1, :func:`~spca.text.word_statistics`: the variance of every word;
2. the ``n_candidates`` words of largest variance are kept as candidates and
   pass 2, :func:`~spca.text.candidate_covariance`, forms their covariance only;
3. :func:`spca.sparse_components` finds the components (target cardinality,
   deflation) on that small matrix;
4. check: Theorem 1 eliminates every word with variance ``<= lam_t`` from the
   problem of component ``t``; if the largest variance left out of the
   candidates is ``<= min_t lam_t``, no left-out word could have entered any of
   the problems, and the components are those of the full-vocabulary
   covariance.  Otherwise the candidate set is enlarged to every word with
   variance above ``min_t lam_t`` (at least doubled, at most
   ``max_candidates``) and steps 2-4 repeat.

Deflation only lowers variances (Schur complement) or leaves the variances of
words outside a support unchanged (projection, removal), so the check on the
original variances is sufficient for every deflation method.

Each word list has exactly ``cardinality`` words (see
:func:`spca.dspca_cardinality`): the relaxation's, or one built from the
relaxation's neighbouring supports, improved by swaps among the candidate
words.  Its certified bound (``variance_upper_bound``) uses only the solves
at a ``lam`` above the largest variance left out of the candidates, where
Theorem 1 removes every left-out word, so it bounds the best list over the
whole vocabulary.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._bca import ConvergenceWarning
from .._limits import AIM, STATUS_TIME_LIMIT, TimeLimit, check_time_limit
from .._validation import MAX_SCALE, MIN_SCALE, check_int
from ._source import open_source
from ._stats import (
    Normalize,
    Transform,
    WordStatistics,
    _candidate_covariance,
    word_statistics,
)

__all__ = ["Topic", "Topics", "sparse_topics"]

# When the first corpus pass has used up the caller's time limit, the
# candidate covariance is formed for this many words per word of every
# component (the words of largest variance): the answers that need no search
# use no more (the NYT sample, 5 topics of 5 words: 78 ms for the default
# 1,024 candidates).
LATE_CANDIDATES = 2
# ... and so it is when the time left is less than this many times the time
# taken so far (the checks and the first pass): the covariance of the
# default 1,024 candidates takes about 13 times the first pass on the NYT
# sample (78 ms after 6 ms, one thread).
LATE_PASS = 15.0


@dataclass(frozen=True)
class Topic:
    """One sparse component of a corpus, as a ranked word list.

    Attributes
    ----------
    words : list of str
        The words of the support, by decreasing ``|loading|``.
    word_ids : ndarray of int
        Their column indices in the corpus (0-based).
    loadings : ndarray of float
        Their loadings, in the same order (unit norm over the support).
    lam : float
        The penalty of this component.
    reduced_size : int
        Number of words the solver worked on after Theorem 1 (out of the
        whole vocabulary).
    explained_variance : float
        ``x' Sigma x`` for the loadings ``x`` on the original (not deflated)
        covariance of the words.
    objective, upper_bound, gap : float
        The certified bounds of the component's DSPCA problem.
    converged : bool
        Whether the gap reached ``tol``.
    exact_cardinality : bool
        Whether the word list has the target number of words.
    note : str
        How the word list was obtained when the relaxation alone did not give
        the target number of words (from the cardinality search).
    variance_upper_bound : float
        Certified upper bound on the variance of any list of at most
        ``cardinality`` words (with ``refit=False``, at most as many words
        as this list has), on the covariance deflated by the earlier topics
        (for the whole vocabulary, not only the candidate words).
    certified_ratio : float
        ``deflated_variance / variance_upper_bound`` (at most 1).
    origin : str
        How the word list was obtained (:attr:`spca.CardinalityResult.origin`).
    deflated_variance : float
        ``x' Sigma_t x`` on the covariance deflated by the earlier topics,
        the one the bound refers to (``explained_variance`` for the first
        topic and with ``"removal"`` deflation).
    """

    words: list[str]
    word_ids: NDArray[np.intp]
    loadings: NDArray[np.float64]
    lam: float
    reduced_size: int
    explained_variance: float
    objective: float
    upper_bound: float
    gap: float
    converged: bool
    exact_cardinality: bool
    note: str = ""
    variance_upper_bound: float = float("nan")
    certified_ratio: float = float("nan")
    origin: str = ""
    deflated_variance: float = float("nan")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "words": list(self.words),
            "word_ids": [int(i) for i in self.word_ids],
            "loadings": [float(v) for v in self.loadings],
            "lam": float(self.lam),
            "reduced_size": int(self.reduced_size),
            "explained_variance": float(self.explained_variance),
            "objective": float(self.objective),
            "upper_bound": float(self.upper_bound),
            "gap": float(self.gap),
            "converged": bool(self.converged),
            "exact_cardinality": bool(self.exact_cardinality),
            "note": self.note,
            "variance_upper_bound": float(self.variance_upper_bound),
            "certified_ratio": float(self.certified_ratio),
            "origin": self.origin,
            "deflated_variance": float(self.deflated_variance),
        }


@dataclass(frozen=True)
class Topics:
    """The result of :func:`sparse_topics`.

    Attributes
    ----------
    topics : list of Topic
    n_docs, n_words : int
        Size of the corpus.
    n_candidates : int
        Number of words whose covariance was formed (after any enlargement).
    candidate_rounds : int
        Number of times pass 2 ran.
    stats : WordStatistics
        The per-word statistics of pass 1 (the variances of the paper's
        Figure 2).
    explained_variance_ratio : float
        Cumulative adjusted explained variance of the components over the
        total variance of the corpus (see :func:`spca.sparse_components`).
    timings : dict
        Seconds spent in ``pass1``, ``pass2``, ``solve`` and ``total``.
    message : str
        Any warning about the components (empty if none).
    status : str or None
        ``"time_limit"`` or ``"interrupted"`` if either ended a search (the
        topics are the best found so far), else ``None``.
    """

    topics: list[Topic]
    n_docs: int
    n_words: int
    n_candidates: int
    candidate_rounds: int
    stats: WordStatistics = field(repr=False)
    explained_variance_ratio: float
    timings: dict[str, float]
    message: str = ""
    status: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"components": [...], ...}``."""
        return {
            "components": [t.as_dict() for t in self.topics],
            "n_docs": self.n_docs,
            "n_words": self.n_words,
            "n_candidates": self.n_candidates,
            "candidate_rounds": self.candidate_rounds,
            "transform": self.stats.transform,
            "normalize": self.stats.normalize,
            "explained_variance_ratio": float(self.explained_variance_ratio),
            "timings": {k: float(v) for k, v in self.timings.items()},
            "message": self.message,
            "status": self.status,
        }


def sparse_topics(
    source: Any,
    vocabulary: Any = None,
    *,
    n_components: int = 5,
    cardinality: int = 5,
    deflation: str = "removal",
    refit: bool = True,
    transform: Transform = "count",
    normalize: Normalize = None,
    n_candidates: int = 1024,
    max_candidates: int = 4096,
    tol: float = 1e-6,
    progress: bool = False,
    verbose: bool = False,
    backend: str = "local",
    client: Any = None,
    time_limit: float | None = None,
) -> Topics:
    """Top sparse principal components of a bag-of-words corpus.

    Each component solves the DSPCA relaxation

    .. code-block:: text

        max  Tr(Sigma_t Z) - lam_t * sum_ij |Z_ij|   over Z PSD, Tr Z = 1

    on the word covariance ``Sigma_t`` (deflated for ``t > 0``) at the
    ``lam_t`` that gives ``cardinality`` words, but forms the covariance of
    the candidate words only (see the module documentation for why this is
    exact).

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        A UCI ``docword`` file (``.txt`` or ``.txt.gz``), a cache directory of
        :func:`spca.text.cache_uci_bow`, a Parquet dataset (see
        :func:`spca.text.open_parquet`), a documents x words sparse matrix or a
        :class:`~spca.text.Corpus`.
    vocabulary : sequence of str or path-like, optional
        The words (or a UCI ``vocab`` file). Defaults to the corpus's own
        vocabulary, or ``"w<index>"``.
    n_components : int, default=5
        Number of components.
    cardinality : int, default=5
        Target number of words per component.
    deflation : {"removal", "schur", "projection"}, default="removal"
        How the covariance is deflated between components. ``"removal"`` drops
        the words already used (disjoint word lists, as in the paper's
        tables); see :func:`spca.sparse_components`.
    refit : bool, default=True
        Loadings of largest variance on each selected word list (the leading
        eigenvector of the covariance of those words); the words are ranked
        by them. ``False`` keeps the solver's loadings.
    transform : {"count", "binary", "log1p", "tfidf"}, default="count"
        Values analysed (raw counts are the paper's setting).
    normalize : {None, "l1", "l2"}, default=None
        Per-document length normalisation after the transform.
    n_candidates : int, default=1024
        Initial number of candidate words (largest variances).
    max_candidates : int, default=4096
        Most candidate words (the covariance formed is ``max_candidates**2``
        float64s, 128 MiB at the default).  When more words could enter a
        component (words of tied or nearly equal variances), the candidates
        are enlarged to ``max_candidates`` at most, or not at all when every
        component's ``certified_ratio`` is already ``>= 1 - tol``; the
        words kept among equal variances are those of lowest index.  The
        certified bounds hold for the whole vocabulary either way, and
        :attr:`Topics.message` says that the candidates were capped.
    tol : float, default=1e-6
        Relative duality gap of every solve.
    progress : bool, default=False
        Progress bars (tqdm) on the corpus passes.
    verbose : bool, default=False
        Print the progress of the searches.
    backend : {"local", "dask"}, default="local"
        Where the corpus passes run (the solver always runs here); see
        :func:`~spca.text.word_statistics`.  ``"dask"`` needs a Parquet
        dataset or a cache directory readable by the workers.
    client : dask.distributed.Client, optional
        The cluster for the passes; giving it implies ``backend="dask"``.
    time_limit : float, optional
        Seconds for the whole call, counted from its start and planned to 80%
        of them (see :func:`spca.dspca_cardinality`): the corpus passes
        use part of it (the first statistics pass is made however long it
        takes: no answer exists without it; if it passes the limit, or
        leaves less than 15 times the time it took, the candidate covariance is
        formed for the ``2 * cardinality * n_components`` words of largest
        variance only, on one OpenMP thread), the cardinality
        searches of all components get the rest (see
        :func:`spca.sparse_components`), and no larger candidate round is
        started once it has passed.  ``status`` is ``"time_limit"``
        when the limit ended a search or a larger round (or
        ``"interrupted"`` after Ctrl-C).

    Returns
    -------
    topics : Topics

    Raises
    ------
    ValueError
        For invalid arguments, a vocabulary whose length differs from the
        number of words, and the errors of the corpus readers.

    Examples
    --------
    >>> from spca.datasets import load_nytimes_sample
    >>> from spca.text import sparse_topics
    >>> res = sparse_topics(load_nytimes_sample(), n_components=1)
    >>> res.topics[0].words
    ['company', 'percent', 'market', 'business', 'price']
    """
    # the solver layer, imported lazily
    from .._bca import _blas_threads
    from .._deflation import sparse_components
    from .._variance import _MatrixCovariance

    n_components = check_int(n_components, "n_components")
    cardinality = check_int(cardinality, "cardinality")
    n_candidates = check_int(n_candidates, "n_candidates")
    max_candidates = check_int(max_candidates, "max_candidates")
    if max_candidates < cardinality:
        raise ValueError(
            f"max_candidates must be >= cardinality ({cardinality}), got {max_candidates}"
        )
    seconds = check_time_limit(time_limit)
    # (the limit counts from here: the corpus passes too)
    limit = TimeLimit.caller(seconds)
    t0 = time.perf_counter()
    # (one source for both passes: an in-memory matrix is checked and cut
    # into chunks once, see spca.text._readers._KEEP_RECORDS)
    src = source
    if backend == "local" and client is None:
        src = open_source(source)
        if hasattr(src, "keep_chunks"):
            src.keep_chunks = True
    stats = word_statistics(src, transform, normalize, progress=progress,
                            backend=backend, client=client)
    t1 = time.perf_counter()
    vocab = _vocabulary(source, vocabulary, stats.n_words)
    var = stats.variance
    _check_variance_scale(var)
    order = np.argsort(-var, kind="stable")
    positive = int(np.count_nonzero(var > 0))
    if cardinality > positive:
        raise ValueError(
            f"cardinality must be <= the number of words with positive variance "
            f"({positive}), got {cardinality}"
        )
    N = min(max(n_candidates, cardinality), positive, max_candidates)
    late = False
    # (the time of the checks and the first pass: a larger candidate round
    # is not started with less than LATE_PASS times it left, see below)
    spent = 0.0
    if limit.limited and limit.remaining() < LATE_PASS * (spent := limit.elapsed()):
        # (the first pass used up the limit, or most of it: the covariance
        # of only the words the answers without a search need,
        # LATE_CANDIDATES per word of every component; the bounds still
        # hold for the whole vocabulary)
        N = min(N, max(LATE_CANDIDATES * cardinality * n_components, cardinality))
        late = True
    status_cut: str | None = None
    t_pass2 = t_solve = 0.0
    rounds = 0
    capped = ""
    while True:
        rounds += 1
        words = np.sort(order[:N])
        ta = time.perf_counter()
        try:
            with _one_openmp_thread() if late else contextlib.nullcontext():
                C, rowmax = _candidate_covariance(src, words, transform, normalize,
                                                  stats=stats, progress=progress,
                                                  backend=backend, client=client)
        except MemoryError:
            raise MemoryError(
                f"out of memory forming the covariance of {N} candidate words (at least "
                f"{_gib(N)} GiB): lower max_candidates (--max-candidates on the command line)"
            ) from None
        tb = time.perf_counter()
        cov = _MatrixCovariance.formed(C, rowmax=rowmax)
        # (C is ours: a removal deflation zeroes the rows of the words used in
        # place and writes them back when the components are done, instead
        # of copying C, see spca._deflation._DeflatedCovariance)
        cov.owned = True
        # Every word left out of the candidates has variance at most this: the
        # certificate only uses the solves at lam >= it (where Theorem 1
        # eliminates those words, so the bound holds for the whole vocabulary).
        cov.outside_variance = float(var[order[N]]) if N < positive else 0.0
        # Warnings of a round that is followed by a larger one are dropped.
        # (one BLAS thread for all the searches at once, as each solve would
        # set it: the blocks are small, and the limit costs per call)
        with warnings.catch_warnings(record=True) as caught, _blas_threads(N):
            warnings.simplefilter("always")
            comps = sparse_components(cov, n_components,
                                      cardinality=cardinality,
                                      deflation=deflation, tol=tol, refit=refit,
                                      verbose=verbose,
                                      time_limit=_left(limit))
        tc = time.perf_counter()
        t_pass2 += tb - ta
        t_solve += tc - tb
        if N == positive:
            break
        left_out = float(var[order[N]])
        lam_min = min((c.lam for c in comps.components), default=0.0)
        short = len(comps.components) < n_components  # deflation ran out of candidates
        if left_out <= lam_min and not short:
            break
        if limit.expired() or (limit.limited and limit.remaining() < LATE_PASS * spent):
            # no time for a larger round (its pass is not cut short by the
            # limit: with less than LATE_PASS first passes left it would end
            # past it, e.g. a second round of 800 words on the NYT sample
            # after a late one, 66 ms at time_limit=0.05): this round's
            # topics stand (their certified ratios hold for the whole
            # vocabulary, see above)
            status_cut = STATUS_TIME_LIMIT
            warnings.warn(
                f"time_limit: no time left for a larger candidate round ({N} candidate "
                f"words, some left out have variance above lam={lam_min:.6g}): the "
                f"topics are the best among the candidates, their certified ratios hold "
                f"for the whole vocabulary", ConvergenceWarning, stacklevel=2)
            break
        # Some left-out word has variance above a penalty used (or the
        # candidates ran out): enlarge, up to max_candidates.
        need = int(np.count_nonzero(var > lam_min))
        grown = min(max(need, 2 * N), positive)
        if grown > max_candidates:
            certified = not short and all(
                c.certified_ratio >= 1.0 - tol for c in comps.components)
            if N == max_candidates or certified:
                capped = (
                    f"{need} words have variance above lam={lam_min:.6g} but the covariance "
                    f"was formed for {N} candidate words only (max_candidates="
                    f"{max_candidates}, {_gib(need)} GiB for all of them): the word lists "
                    "are the best found among the candidates; their certified ratios hold "
                    "for the whole vocabulary"
                )
                if not certified:
                    warnings.warn(capped, UserWarning, stacklevel=2)
                break
            grown = max_candidates
        N = grown
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    topics = []
    for comp in comps.components:
        idx = np.argsort(-np.abs(comp.loadings[comp.support]), kind="stable")
        sup = comp.support[idx]
        topics.append(Topic(
            words=[vocab[w] for w in words[sup]],
            word_ids=words[sup].astype(np.intp),
            loadings=comp.loadings[sup].copy(),
            lam=float(comp.lam),
            reduced_size=int(comp.result.reduced_size),
            explained_variance=float(comp.loadings @ cov.matvec(comp.loadings)),
            objective=float(comp.objective),
            upper_bound=float(comp.upper_bound),
            gap=float(comp.gap),
            converged=bool(comp.converged),
            exact_cardinality=comp.support.size == cardinality,
            note=("" if comp.search is None or comp.search.relaxation_exact
                  else comp.search.message),
            variance_upper_bound=float(comp.variance_upper_bound),
            certified_ratio=float(comp.certified_ratio),
            origin=comp.origin,
            deflated_variance=float(comp.variance),
        ))
    total_var = float(var.sum())
    cum = comps.explained.cumulative[-1] if len(comps.components) else 0.0
    t2 = time.perf_counter()
    return Topics(
        topics=topics,
        n_docs=stats.n_docs,
        n_words=stats.n_words,
        n_candidates=int(N),
        candidate_rounds=rounds,
        stats=stats,
        explained_variance_ratio=float(cum / total_var) if total_var > 0 else 0.0,
        timings={"pass1": t1 - t0, "pass2": t_pass2, "solve": t_solve, "total": t2 - t0},
        message="; ".join(m for m in (capped, comps.message) if m),
        status=comps.status or status_cut,
    )


def _check_variance_scale(var: NDArray) -> None:
    """Refuse word variances the solver cannot handle in double precision,
    saying what to do with the corpus (the caller has no Sigma or lam to
    rescale: they are formed here)."""
    top = float(var.max()) if var.size else 0.0
    if top > MAX_SCALE:
        raise ValueError(
            f"the largest word variance, {top:.3g}, is above {MAX_SCALE:g} (too large for "
            "the solver in double precision): divide the counts by a constant, or analyse "
            "log(1 + count) or binary values (transform='log1p' or 'binary'; --transform "
            "on the command line)"
        )
    if 0.0 < top < MIN_SCALE:
        raise ValueError(
            f"the largest word variance, {top:.3g}, is below {MIN_SCALE:g} (too small for "
            "the solver in double precision): multiply the counts by a constant"
        )


def _gib(n_words: int) -> str:
    """Size of an ``n_words`` x ``n_words`` float64 matrix in GiB, for messages."""
    return f"{8 * n_words**2 / 2**30:.2g}"


_openmp: Any = None


def _one_openmp_thread() -> Any:
    """Context holding the pass-2 kernel (spca.text._cooccur) to one OpenMP
    thread: a late round's few candidate words (50 on the NYT sample) are
    not worth a second thread, which spins at each parallel region's end
    when the machine is busy (CPU 9.9 -> 3.4 ms, wall 24 -> 7.4 ms at load
    4 on 2 cores; the controller is made once, after the kernel's OpenMP
    runtime is loaded, and shared with the solver's BLAS limit when that
    one sees the OpenMP runtime too, see spca._bca._threadpool_controller:
    a second controller cost 0.85 ms of CPU in a new process, where the
    command runs)."""
    global _openmp
    if _openmp is None:
        from .._bca import _threadpool_controller

        _openmp = _threadpool_controller("openmp")
    return _openmp.limit(limits=1, user_api="openmp")


def _left(limit: TimeLimit) -> float | None:
    """Seconds left of ``limit`` for the next round (``None``: no limit; a
    passed limit leaves the answers that need no solve), as a caller's
    ``time_limit``: sparse_components plans to AIM of it, so that is taken
    out here (its deadline is this call's, not AIM of the time left)."""
    if not limit.limited:
        return None
    return max(limit.remaining(), 1e-9) / AIM


def _vocabulary(source: Any, vocabulary: Any, n_words: int) -> _Words:
    """The word list: given, from a vocab file, from the Corpus, or w<index>."""
    from ._uci import read_uci_vocabulary

    if vocabulary is None:
        vocabulary = getattr(source, "vocabulary", None)
    if vocabulary is None:
        return _Words(None, n_words)
    if isinstance(vocabulary, str | bytes) or hasattr(vocabulary, "__fspath__"):
        vocabulary = read_uci_vocabulary(vocabulary, n_words=n_words)
    if not isinstance(vocabulary, np.ndarray | list | tuple):
        vocabulary = list(vocabulary)  # (any other iterable: read once)
    if len(vocabulary) != n_words:
        raise ValueError(
            f"the vocabulary has {len(vocabulary)} words but the corpus has {n_words}"
        )
    return _Words(vocabulary, n_words)


class _Words:
    """The word of a column index as ``str``, converted when asked for (the
    topics name a few dozen of the corpus's words: converting all 3,012 of
    the NYT sample took 0.8 ms); ``"w<index>"`` without a vocabulary."""

    def __init__(self, vocabulary: Any, n_words: int) -> None:
        self.vocabulary = vocabulary
        self.n_words = n_words

    def __len__(self) -> int:
        return self.n_words

    def __getitem__(self, i: Any) -> str:
        if self.vocabulary is None:
            return f"w{int(i)}"
        return str(self.vocabulary[int(i)])
