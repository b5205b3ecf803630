"""Corpora for sparse PCA: bundled samples, UCI downloads and a synthetic generator.

* :func:`load_nytimes_sample`, :func:`load_reuters_sample` -- small real
  corpora shipped with the package (MPL-2.0, see ``data/README.md``).
* :func:`load_pitprops` -- Jeffers' 13-variable pitprops correlation matrix,
  the classic sparse PCA benchmark.
* :func:`fetch_uci_bag_of_words` -- download and cache the UCI "Bag of
  Words" corpora (NYTimes and PubMed are the paper's); nothing is downloaded
  unless it is called.
* :func:`make_gaussian_covariance`, :func:`make_spiked_covariance` -- the
  covariance families of the paper's speed comparison;
  :func:`make_correlation_few_samples` -- correlation matrices of
  low-rank-plus-noise data with few samples (the benchmarks' hard family).
* :func:`make_synthetic_corpus` -- Zipf corpora with planted topics at the
  paper's scale; :func:`write_uci` writes any count matrix in the UCI format.
"""

from ..text._corpus import Corpus
from ..text._uci import write_uci
from ._base import Pitprops, data_path, load_nytimes_sample, load_pitprops, load_reuters_sample
from ._covariance import (
    make_correlation_few_samples,
    make_gaussian_covariance,
    make_spiked_covariance,
)
from ._fetch import (
    UCI_BAG_OF_WORDS,
    UCIBagOfWordsFiles,
    fetch_uci_bag_of_words,
    get_data_home,
)
from ._synthetic import SyntheticCorpus, make_synthetic_corpus, write_synthetic_corpus

__all__ = [
    "UCI_BAG_OF_WORDS",
    "Corpus",
    "Pitprops",
    "SyntheticCorpus",
    "UCIBagOfWordsFiles",
    "data_path",
    "fetch_uci_bag_of_words",
    "get_data_home",
    "load_nytimes_sample",
    "load_pitprops",
    "load_reuters_sample",
    "make_correlation_few_samples",
    "make_gaussian_covariance",
    "make_spiked_covariance",
    "make_synthetic_corpus",
    "write_synthetic_corpus",
    "write_uci",
]
