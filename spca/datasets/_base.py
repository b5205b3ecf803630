"""Loaders of the small corpora bundled with spca (see ``data/README.md``)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..text._corpus import Corpus
from ..text._readers import _CHECKED, _Checked
from ..text._uci import load_uci_bow, read_uci_vocabulary

__all__ = ["Pitprops", "data_path", "load_nytimes_sample", "load_pitprops", "load_reuters_sample"]

_PACKAGE = "spca.datasets"
_BUNDLED = (
    "docword.nytsample.txt.gz",
    "vocab.nytsample.txt",
    "nytsample.npz",
    "docword.reuters.txt.gz",
    "vocab.reuters.txt",
    "titles.reuters.txt",
    "pitprops.txt",
    "LICENSE.MPL-2.0",
    "README.md",
)
_extract_dir: Path | None = None


def data_path(name: str) -> Path:
    """Filesystem path of a data file bundled with :mod:`spca.datasets`.

    Parameters
    ----------
    name : str
        File name inside ``spca/datasets/data`` (e.g. ``"vocab.nytsample.txt"``).

    Returns
    -------
    path : pathlib.Path
        A real file path (if the package is installed in a zip archive the
        file is extracted once to a temporary directory).

    Raises
    ------
    FileNotFoundError
        If there is no such bundled file.
    """
    if name not in _BUNDLED:
        raise FileNotFoundError(f"no bundled data file {name!r}; available: {_BUNDLED}")
    ref = resources.files(_PACKAGE).joinpath("data", name)
    if isinstance(ref, Path):
        return ref
    candidate = Path(str(ref))  # pragma: no cover - non-filesystem loaders below
    return candidate if candidate.is_file() else _extract(ref, name)


def _extract(ref, name: str) -> Path:  # pragma: no cover - zip installs only
    global _extract_dir
    if _extract_dir is None:
        _extract_dir = Path(tempfile.mkdtemp(prefix="spca-data-"))
    target = _extract_dir / name
    if not target.exists():
        with ref.open("rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def load_nytimes_sample() -> Corpus:
    """Load the bundled sample of New York Times articles.

    8,447 documents, 3,012 (lemmatised) words, 963,063 nonzeros; real data
    in the format of the UCI NYTimes corpus used in the paper, small enough
    for tests and examples.  Licence MPL-2.0, provenance in
    ``spca/datasets/data/README.md``.

    Returns
    -------
    corpus : Corpus
        ``counts`` is an ``(8447, 3012)`` float64 ``scipy.sparse.csr_array``
        of word counts, ``vocabulary`` the words, ``docword_path`` and
        ``vocab_path`` the bundled files (usable as streaming sources).

    Examples
    --------
    >>> corpus = load_nytimes_sample()
    >>> corpus.counts.shape, corpus.nnz
    ((8447, 3012), 963063)

    Notes
    -----
    The counts are read from ``nytsample.npz``, the same matrix in a
    compact binary form (word ids as ``uint16``, counts as ``uint8``; 4-9 ms
    against 119 ms for the parse of the UCI text, which ``spca topics
    --sample nytimes --time-limit`` counts); the tests check that it equals
    the UCI files bit for bit.  ``docword_path`` is the UCI file.
    """
    docword = data_path("docword.nytsample.txt.gz")
    vocab = data_path("vocab.nytsample.txt")
    with np.load(data_path("nytsample.npz")) as z:
        n_docs, n_words = (int(v) for v in z["shape"])
        indptr = z["indptr"].astype(np.int32)
        indices = z["indices"].astype(np.int32)
        small = z["counts"]
        data = small.astype(np.float64)
    counts = sp.csr_array((data, indices, indptr), shape=(n_docs, n_words))
    counts.has_sorted_indices = True
    counts.has_canonical_format = True
    corpus = Corpus(counts=counts, vocabulary=read_uci_vocabulary(vocab, n_words),
                    name="nytimes-sample", docword_path=docword, vocab_path=vocab)
    # (whole counts from uint8, canonical as written: the readers need not
    # check them again, see spca.text._readers._CHECKED)
    _CHECKED[corpus] = _Checked(counts, zeros=not small.all())
    return corpus


def _write_compact(corpus: Corpus, path: Path) -> None:
    """Write ``corpus.counts`` (canonical CSR, whole counts below 256, fewer
    than 65,536 words) as the compact ``.npz`` that
    :func:`load_nytimes_sample` reads, with the data's licence notice."""
    counts = corpus.counts
    data = counts.data.astype(np.uint8)
    indices = counts.indices.astype(np.uint16)
    if (not np.array_equal(data, counts.data) or not np.array_equal(indices, counts.indices)
            or not counts.has_canonical_format):
        raise ValueError("the compact form holds canonical counts in 0..255 of at most "
                         "65,536 words")
    np.savez(
        path, shape=np.array(counts.shape, dtype=np.int64),
        indptr=counts.indptr.astype(np.int32), indices=indices, counts=data,
        notice=np.array(_NOTICE))


#: stored in the compact sample: the licence of the data it holds
_NOTICE = ("The New York Times sample of spca (docword.nytsample.txt.gz) in a compact "
           "form. Distributed under the Mozilla Public License 2.0 (LICENSE.MPL-2.0 in "
           "this directory); provenance in README.md in this directory.")


def load_reuters_sample() -> Corpus:
    """Load the bundled sample of 395 Reuters news stories (1996).

    395 documents, 4,258 words, 60,114 nonzeros, with titles.  Licence
    MPL-2.0, provenance in ``spca/datasets/data/README.md``.

    Returns
    -------
    corpus : Corpus
        ``counts`` is a ``(395, 4258)`` float64 ``scipy.sparse.csr_array``,
        ``vocabulary`` the words and ``titles`` the 395 story titles.

    Raises
    ------
    ValueError
        If the bundled titles file is inconsistent (damaged installation).

    Examples
    --------
    >>> corpus = load_reuters_sample()
    >>> corpus.counts.shape, len(corpus.titles)
    ((395, 4258), 395)
    """
    corpus = load_uci_bow(data_path("docword.reuters.txt.gz"),
                          data_path("vocab.reuters.txt"), name="reuters-sample")
    path = data_path("titles.reuters.txt")
    titles = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        index, _, title = line.partition(" ")
        if index != str(i):
            raise ValueError(f"{path}, line {i + 1}: expected title number {i}, got {index!r}")
        titles.append(title)
    if len(titles) != corpus.n_docs:
        raise ValueError(f"{path}: {len(titles)} titles for {corpus.n_docs} documents")
    return Corpus(counts=corpus.counts, vocabulary=corpus.vocabulary, name=corpus.name,
                  titles=np.asarray(titles, dtype=str), docword_path=corpus.docword_path,
                  vocab_path=corpus.vocab_path)


@dataclass(frozen=True)
class Pitprops:
    """Jeffers' pitprops correlation matrix (see :func:`load_pitprops`).

    Attributes
    ----------
    correlation : ndarray of shape (13, 13)
        The correlation matrix, symmetric with unit diagonal (3 decimals).
    feature_names : tuple of str
        The 13 physical properties, in the matrix's order.
    n_samples : int
        The number of pitprops measured (180).
    """

    correlation: np.ndarray
    feature_names: tuple[str, ...]
    n_samples: int = 180


def load_pitprops() -> Pitprops:
    """Load Jeffers' (1967) pitprops correlation matrix.

    13 physical properties of 180 pitprops, the classic benchmark of sparse
    PCA (Zou, Hastie & Tibshirani 2006; d'Aspremont et al. 2007).  The values
    are those of the ``pitprops`` data set of R's elasticnet package
    (provenance in ``spca/datasets/data/README.md``).

    Returns
    -------
    data : Pitprops
        ``correlation`` (a fresh ``(13, 13)`` float64 array on each call),
        ``feature_names`` and ``n_samples``.

    Raises
    ------
    ValueError
        If the bundled file is damaged (not a symmetric 13 x 13 matrix with
        unit diagonal).

    Examples
    --------
    >>> data = load_pitprops()
    >>> data.correlation.shape, data.feature_names[:3]
    ((13, 13), ('topdiam', 'length', 'moist'))
    """
    path = data_path("pitprops.txt")
    lines = path.read_text(encoding="utf-8").split("\n")
    names = tuple(lines[0].split())
    rows = [line.split() for line in lines[1:] if line.strip()]
    try:
        R = np.array(rows, dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: not a numeric matrix ({exc})") from None
    p = len(names)
    if R.shape != (p, p) or not np.array_equal(R, R.T) or not np.all(np.diag(R) == 1.0):
        raise ValueError(f"{path}: expected a symmetric {p} x {p} matrix with unit diagonal, "
                         f"got shape {R.shape}")
    return Pitprops(correlation=R, feature_names=names)
