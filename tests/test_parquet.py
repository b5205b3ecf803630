"""Sharded Parquet corpora: converter, reader, and the same statistics as the UCI path."""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import assert_cov_equal, assert_stats_equal, counts_with_edge_cases, write_counts
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")  # in the test extra: skipped only if installed without it
pq = pytest.importorskip("pyarrow.parquet")

from spca.cli import main  # noqa: E402
from spca.datasets import data_path  # noqa: E402
from spca.text import (  # noqa: E402
    PARQUET_MANIFEST,
    TRANSFORMS,
    cache_uci_bow,
    candidate_covariance,
    convert_uci_to_parquet,
    iter_document_chunks,
    open_parquet,
    open_source,
    sparse_topics,
    word_statistics,
    write_parquet,
)

NORMALIZE = (None, "l1", "l2")


def chunks_to_matrix(source, chunk_size, shape):
    """Reassemble the streamed chunks, checking that they tile 0..n_docs."""
    rows, cols, vals = [], [], []
    row = 0
    for c in iter_document_chunks(source, chunk_size):
        assert c.row_start == row and c.row_stop > c.row_start
        if len(c.doc):
            assert c.doc.min() >= c.row_start and c.doc.max() < c.row_stop
            assert np.all(np.diff(c.doc) >= 0)
        rows.append(c.doc)
        cols.append(c.word)
        vals.append(c.count)
        row = c.row_stop
    assert row == shape[0]
    return sp.csr_array((np.concatenate(vals).astype(float),
                         (np.concatenate(rows), np.concatenate(cols))), shape=shape)


def shard_tables(directory):
    manifest = json.loads((directory / PARQUET_MANIFEST).read_text())
    return manifest, [pq.read_table(directory / s["file"]) for s in manifest["shards"]]


@pytest.fixture(scope="module")
def uci(tmp_path_factory):
    C = counts_with_edge_cases()
    path = tmp_path_factory.mktemp("uci") / "docword.edge.txt.gz"
    write_counts(path, C)
    return C, path


@pytest.mark.parametrize("shards", [1, 4])
def test_round_trip_gives_the_uci_statistics(uci, tmp_path, shards):
    C, path = uci
    out = convert_uci_to_parquet(path, tmp_path / "pq", shards=shards, chunk_size=37)
    src = open_parquet(out)
    assert (src.n_docs, src.n_words, src.nnz) == (*C.shape, np.count_nonzero(C))
    assert len(src.shards) == shards
    for chunk_size in (5, 64, 10_000):
        X = chunks_to_matrix(out, chunk_size, C.shape)
        np.testing.assert_array_equal(X.toarray(), C)
    words = np.array([7, 0, 12, 30, 4, 21])
    for transform, normalize in itertools.product(TRANSFORMS, NORMALIZE):
        msg = f"{transform} {normalize}"
        ref = word_statistics(path, transform, normalize)
        got = word_statistics(out, transform, normalize, chunk_size=16)
        assert_stats_equal(got, ref, msg)
        assert got.transform == transform and got.normalize == normalize
        assert_cov_equal(candidate_covariance(out, words, transform, normalize, chunk_size=9),
                         candidate_covariance(path, words, transform, normalize), msg)


def test_shards_keep_documents_together_with_balanced_nnz(tmp_path):
    docword = data_path("docword.nytsample.txt.gz")
    out = convert_uci_to_parquet(docword, tmp_path / "nyt", shards=6, chunk_size=50_000,
                                 compression="snappy")
    manifest, tables = shard_tables(out)
    assert manifest["n_docs"] == 8447 and manifest["nnz"] == 963063
    assert len(tables) == 6
    lengths = np.bincount(np.concatenate([t.column("doc").to_numpy() for t in tables]))
    seen: set[int] = set()
    row = 0
    for s, t in zip(manifest["shards"], tables, strict=True):
        docs = t.column("doc").to_numpy()
        assert set(np.unique(docs)).isdisjoint(seen)  # every document in one shard
        seen |= set(np.unique(docs))
        assert s["row_start"] == row and docs.min() >= row and docs.max() < s["row_stop"]
        row = s["row_stop"]
        meta = pq.read_metadata(out / s["file"]).metadata
        assert int(meta[b"spca.row_start"]) == s["row_start"]
        assert int(meta[b"spca.row_stop"]) == s["row_stop"]
        assert int(meta[b"spca.n_docs"]) == 8447 and int(meta[b"spca.nnz"]) == s["nnz"]
        assert t.num_rows == s["nnz"]
        assert abs(s["nnz"] - 963063 / 6) <= lengths.max()  # cut at the nearest boundary
        key = docs * 3012 + t.column("word").to_numpy()
        assert np.all(np.diff(key) > 0)  # sorted by document, then word
        assert pq.ParquetFile(out / s["file"]).metadata.row_group(0).num_rows <= 50_000
    assert row == 8447


@settings(max_examples=40)
@given(seed=st.integers(0, 10_000), shards=st.integers(1, 9),
       chunk_size=st.integers(1, 40), read_chunk=st.integers(1, 40))
def test_any_sharding_streams_the_same_matrix(tmp_path_factory, seed, shards, chunk_size,
                                              read_chunk):
    rng = np.random.default_rng(seed)
    d, w = int(rng.integers(1, 30)), int(rng.integers(1, 12))
    C = rng.poisson(0.6, size=(d, w)) * (rng.random((d, w)) < rng.random())
    if not C.any():
        C[rng.integers(d), rng.integers(w)] = 1
    out = write_parquet(sp.csr_array(C), tmp_path_factory.mktemp("h") / "pq", shards=shards,
                        chunk_size=chunk_size)
    src = open_parquet(out)
    assert 1 <= len(src.shards) <= shards
    assert sum(s.nnz for s in src.shards) == np.count_nonzero(C)
    np.testing.assert_array_equal(chunks_to_matrix(out, read_chunk, C.shape).toarray(), C)
    # a document's words stay in one shard
    for a, b in itertools.combinations(src.shards, 2):
        assert a.row_stop <= b.row_start or b.row_stop <= a.row_start


def test_foreign_parquet_without_metadata(tmp_path):
    C = counts_with_edge_cases(seed=3, d=60, w=17)
    r, c = np.nonzero(C)
    v = C[r, c].astype(np.float64)
    rng = np.random.default_rng(1)
    # two files; rows shuffled inside each; a zero count; an extra column; int64 words;
    # several row groups whose documents interleave; a gap of documents between files
    first, second = r < 20, r >= 30
    C2 = C.copy()
    C2[20:30] = 0
    for name, mask in (("b.parquet", first), ("a.parquet", second)):
        idx = rng.permutation(np.flatnonzero(mask))
        t = pa.table({"doc": pa.array(r[idx], pa.int64()), "word": pa.array(c[idx], pa.int64()),
                      "count": pa.array(v[idx]), "extra": pa.array(np.ones(len(idx)))})
        t = pa.concat_tables([t, pa.table({"doc": pa.array([int(r[idx][0])], pa.int64()),
                                           "word": pa.array([16], pa.int64()),
                                           "count": pa.array([0.0]),
                                           "extra": pa.array([1.0])})])
        pq.write_table(t, tmp_path / name, row_group_size=7)
    (tmp_path / "_ignored.parquet").write_bytes(b"not read")
    src = open_parquet(tmp_path, n_docs=C.shape[0], n_words=C.shape[1])
    assert [Path(s.path).name for s in src.shards] == ["b.parquet", "a.parquet"]
    X = chunks_to_matrix(src, 11, C.shape).toarray()
    np.testing.assert_array_equal(X, C2)
    for transform, normalize in (("count", None), ("tfidf", "l2"), ("log1p", "l1")):
        assert_stats_equal(word_statistics(src, transform, normalize),
                           word_statistics(sp.csr_array(C2), transform, normalize))
    # without n_docs/n_words: largest index + 1 (trailing empty documents are not known)
    inferred = open_parquet(tmp_path)
    assert inferred.n_docs == int(r[second].max()) + 1 and inferred.n_words == 17
    with pytest.raises(ValueError, match="n_docs=10 given, but indices go up to"):
        open_parquet(tmp_path, n_docs=10)
    # one file
    single = open_parquet(tmp_path / "a.parquet", n_docs=C.shape[0])
    assert os.path.isabs(single.shards[0].path)  # readable from another working directory
    assert single.shards[0].row_start == int(r[second].min())
    assert single.pieces()[0].row_stop == single.shards[0].row_start  # leading gap: empty


def test_overlapping_shards_are_refused(tmp_path):
    for name, docs in (("one.parquet", [0, 1, 5]), ("two.parquet", [5, 6, 7])):
        pq.write_table(pa.table({"doc": docs, "word": [0, 1, 2], "count": [1, 1, 1]}),
                       tmp_path / name)
    with pytest.raises(ValueError, match=r"one\.parquet.*two\.parquet.*overlap"):
        open_parquet(tmp_path)
    with pytest.raises(ValueError, match="overlap"):
        word_statistics(tmp_path)
    # the same through a manifest whose ranges overlap
    out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "r", shards=3)
    m = json.loads((out / PARQUET_MANIFEST).read_text())
    m["shards"][1]["row_start"] -= 1
    (out / PARQUET_MANIFEST).write_text(json.dumps(m))
    with pytest.raises(ValueError, match=r"part-00000\.parquet.*part-00001\.parquet.*overlap"):
        open_parquet(out)


@pytest.fixture
def reuters_pq(tmp_path):
    return convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "r", shards=3)


def test_missing_and_corrupt_shards_are_named(reuters_pq, tmp_path):
    part1 = reuters_pq / "part-00001.parquet"
    data = part1.read_bytes()
    part1.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(ValueError, match=r"part-00001\.parquet: not a readable Parquet"):
        word_statistics(reuters_pq)
    part1.write_bytes(b"PAR1" + b"\0" * 100)  # garbage
    with pytest.raises(ValueError, match=r"part-00001\.parquet"):
        word_statistics(reuters_pq)
    part1.unlink()
    with pytest.raises(FileNotFoundError, match=r"missing shard: .*part-00001\.parquet"):
        open_source(reuters_pq)
    # a stray file next to a manifest
    part1.write_bytes(data)
    (reuters_pq / "part-00009.parquet").write_bytes(data)
    with pytest.raises(ValueError, match=r"part-00009\.parquet: not listed in the manifest"):
        open_parquet(reuters_pq)


def test_bad_rows_are_named(reuters_pq, tmp_path):
    part = reuters_pq / "part-00002.parquet"
    good = pq.read_table(part)
    meta = pq.read_metadata(part).metadata

    def rewrite(table):
        pq.write_table(table.replace_schema_metadata(meta), part)

    cases = [
        (good.drop_columns(["count"]), r"part-00002\.parquet: missing column\(s\) count"),
        (good.set_column(2, "count", pa.array(-good.column("count").to_numpy())),
         r"part-00002\.parquet: negative count"),
        (good.set_column(0, "doc", pa.array(good.column("doc").to_numpy() - 200)),
         r"part-00002\.parquet: doc \d+ outside the shard's documents"),
        (good.set_column(1, "word", pa.array(good.column("word").to_numpy() + 4000)),
         r"part-00002\.parquet: word \d+ out of range 0\.\.4257"),
        (good.set_column(0, "doc", pa.array([None, *good.column("doc").to_numpy()[1:]],
                                             pa.int64())),
         r"part-00002\.parquet: column 'doc' has null values"),
        (pa.concat_tables([good, good.slice(0, 1)]),
         r"part-00002\.parquet: has 19990 rows, expected 19989"),
        (good.set_column(2, "count", pa.array(good.column("count").to_numpy().astype(str))),
         r"part-00002\.parquet: column 'count' must be numeric"),
    ]
    for table, pattern in cases:
        rewrite(table)
        with pytest.raises(ValueError, match=pattern):
            word_statistics(reuters_pq)
    # duplicates in a foreign file
    dup = tmp_path / "dup.parquet"
    pq.write_table(pa.table({"doc": [0, 0, 1], "word": [3, 3, 1], "count": [1, 2, 1]}), dup)
    with pytest.raises(ValueError, match=r"dup\.parquet: duplicate pair \(doc 0, word 3\)"):
        word_statistics(dup)
    with pytest.raises(ValueError, match=r"not\.parquet: not a readable Parquet file"):
        (tmp_path / "not.parquet").write_text("doc,word,count\n")
        open_parquet(tmp_path / "not.parquet")


def test_open_source_tells_caches_from_parquet(tmp_path, reuters_pq):
    from spca.text._parquet import _ParquetSource
    from spca.text._source import _CacheSource

    cache = cache_uci_bow(data_path("docword.reuters.txt.gz"), tmp_path / "c")
    assert isinstance(open_source(cache), _CacheSource)
    assert isinstance(open_source(reuters_pq), _ParquetSource)
    assert isinstance(open_source(reuters_pq / "part-00000.parquet"), _ParquetSource)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="neither an spca cache"):
        open_source(tmp_path / "empty")
    assert_stats_equal(word_statistics(reuters_pq), word_statistics(cache))


def test_writer_refuses_to_clobber(tmp_path, reuters_pq):
    docword = data_path("docword.reuters.txt.gz")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        convert_uci_to_parquet(docword, tmp_path / "busy")
    with pytest.raises(FileExistsError):  # overwrite only replaces an spca dataset
        convert_uci_to_parquet(docword, tmp_path / "busy", overwrite=True)
    assert (tmp_path / "busy" / "keep.txt").exists()
    with pytest.raises(FileExistsError):
        convert_uci_to_parquet(docword, reuters_pq, shards=2)
    convert_uci_to_parquet(docword, reuters_pq, shards=2, overwrite=True)
    assert len(open_parquet(reuters_pq).shards) == 2
    with pytest.raises(ValueError, match="shards must be positive"):
        convert_uci_to_parquet(docword, tmp_path / "x", shards=0)
    assert not (tmp_path / "x").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftovers


def test_clear_import_error_without_pyarrow(monkeypatch, reuters_pq):
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r'pip install "spca\[dask\]"'):
        word_statistics(reuters_pq)


def test_cli_convert_then_topics(tmp_path, capsys):
    docword = data_path("docword.nytsample.txt.gz")
    vocab = data_path("vocab.nytsample.txt")
    out = tmp_path / "nyt"
    assert main(["convert", str(docword), str(out), "--shards", "3",
                 "--compression", "snappy"]) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert "3 shards, 8447 documents x 3012 words, 963063 nonzeros" in line
    args = ["--components", "2", "--format", "json"]
    assert main(["topics", str(out), str(vocab), *args]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = sparse_topics(docword, vocab, n_components=2)
    assert [c["words"] for c in got["components"]] == [t.words for t in ref.topics]
    assert main(["convert", str(docword), str(out)]) == 1
    assert "spca: error:" in capsys.readouterr().err
