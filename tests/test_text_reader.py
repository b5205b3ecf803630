"""Tests of the UCI bag-of-words reader/writer in spca.text."""

from __future__ import annotations

import gzip
import os
import re
import stat

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spca.text import (
    UCIFormatError,
    cache_uci_bow,
    iter_document_chunks,
    iter_uci_docword,
    load_uci_bow,
    read_uci_header,
    read_uci_vocabulary,
    word_statistics,
    write_uci,
)

# A small corpus: 6 documents (docs 1, 4 and 6 empty), 5 words (word 5 absent).
TRIPLES = [(2, 1, 3), (2, 3, 1), (2, 4, 7), (3, 2, 1), (5, 1, 1), (5, 2, 2), (5, 3, 12)]
D, W = 6, 5


def uci_text(triples=TRIPLES, d=D, w=W, nnz=None, *, extra_lines=()) -> str:
    nnz = len(triples) if nnz is None else nnz
    body = [f"{a} {b} {c}" for a, b, c in triples] + list(extra_lines)
    return "\n".join([str(d), str(w), str(nnz), *body]) + "\n"


def write_file(path, text: str | bytes, *, gz: bool | None = None):
    data = text.encode() if isinstance(text, str) else text
    if gz is None:
        gz = str(path).endswith(".gz")
    if gz:
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP)  # readers must never write
    return path


def expected_matrix(triples=TRIPLES, d=D, w=W) -> np.ndarray:
    X = np.zeros((d, w))
    for a, b, c in triples:
        X[a - 1, b - 1] = c
    return X


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_load_matches_dense(tmp_path, suffix):
    path = write_file(tmp_path / f"docword.small{suffix}", uci_text())
    vocab = write_file(tmp_path / "vocab.small.txt", "a\nb\nc\nd\ne\n")
    before = path.read_bytes()
    corpus = load_uci_bow(path, vocab)
    assert isinstance(corpus.counts, sp.csr_array)
    assert corpus.counts.shape == (D, W)
    assert corpus.counts.dtype == np.float64
    np.testing.assert_array_equal(corpus.counts.toarray(), expected_matrix())
    assert corpus.vocabulary.tolist() == ["a", "b", "c", "d", "e"]
    assert corpus.nnz == len(TRIPLES)
    assert corpus.counts.has_canonical_format
    assert path.read_bytes() == before
    assert read_uci_header(path) == (D, W, len(TRIPLES))


def test_gzip_detected_from_content_not_name(tmp_path):
    path = write_file(tmp_path / "docword.txt", uci_text(), gz=True)
    np.testing.assert_array_equal(load_uci_bow(path).counts.toarray(), expected_matrix())


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 1000])
def test_chunks_tile_documents(tmp_path, chunk_size):
    path = write_file(tmp_path / "docword.small.txt", uci_text())
    chunks = list(iter_uci_docword(path, chunk_size))
    # row ranges tile 0..D and every record lies in its chunk's range
    assert chunks[0].row_start == 0 and chunks[-1].row_stop == D
    for a, b in zip(chunks[:-1], chunks[1:], strict=True):
        assert a.row_stop == b.row_start
    records = []
    for c in chunks:
        assert np.all((c.doc >= c.row_start) & (c.doc < c.row_stop))
        records += list(zip(c.doc + 1, c.word + 1, c.count, strict=True))
    assert [tuple(map(int, r)) for r in records] == TRIPLES
    # whole documents: no document is split between chunks
    docs = [set(c.doc.tolist()) for c in chunks]
    for i in range(len(docs)):
        for j in range(i + 1, len(docs)):
            assert not docs[i] & docs[j]


def test_blank_lines_crlf_and_missing_final_newline(tmp_path):
    text = uci_text().replace("\n", "\r\n").replace("3 2 1\r\n", "3 2 1\r\n\r\n  \r\n")
    path = write_file(tmp_path / "docword.crlf.txt", text.rstrip("\r\n"))
    np.testing.assert_array_equal(load_uci_bow(path).counts.toarray(), expected_matrix())


def test_long_document_larger_than_chunks(tmp_path):
    rng = np.random.default_rng(0)
    w = 400
    triples = [(1, 3, 2)] + [(2, j, int(rng.integers(1, 99))) for j in range(1, w + 1)]
    triples += [(3, 5, 1)]
    path = write_file(tmp_path / "docword.long.txt.gz", uci_text(triples, 4, w))
    chunks = list(iter_uci_docword(path, chunk_size=4))
    long = [c for c in chunks if 1 in c.doc.tolist()]
    assert len(long) == 1 and np.count_nonzero(long[0].doc == 1) == w
    np.testing.assert_array_equal(load_uci_bow(path, chunk_size=4).counts.toarray(),
                                  expected_matrix(triples, 4, w))


def error_for(tmp_path, text, name="docword.bad.txt", **kw):
    path = write_file(tmp_path / name, text, **kw)
    with pytest.raises(UCIFormatError) as info:
        load_uci_bow(path, chunk_size=2)
    return str(info.value), info.value


def line_of(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    assert match, message
    return int(match.group(1))


BAD_BODIES = [
    # (description, replaced line 7 = record 4 "3 2 1", expected message part)
    ("doc above D", "7 2 1", "docID 7 out of range"),
    ("doc zero", "0 2 1", "docID 0 out of range"),
    ("word above W", "3 6 1", "wordID 6 out of range"),
    ("word zero", "3 0 1", "wordID 0 out of range"),
    ("negative count", "3 2 -4", "negative count"),
    ("zero count", "3 2 0", "zero count"),
    ("non-integer count", "3 2 1.5", "non-integer count"),
    ("letters", "3 x 1", "not an integer"),
    ("two fields", "3 2", "expected 3 fields"),
    ("four fields", "3 2 1 1", "expected 3 fields"),
    ("duplicate pair", "2 4 1", "duplicate pair (docID 2, wordID 4)"),
    ("unsorted docs", "1 2 1", "documents not sorted"),
    ("unsorted words", "2 2 1", "words not sorted"),
    ("overflow", "3 2 99999999999", "too large"),
]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(("what", "line", "needle"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_record_names_file_and_line(tmp_path, what, line, needle, gz):
    lines = uci_text().splitlines()
    assert lines[6] == "3 2 1"
    lines[6] = line
    name = "docword.bad.txt" + (".gz" if gz else "")
    message, err = error_for(tmp_path, "\n".join(lines) + "\n", name=name)
    assert name in message
    assert needle in message
    assert line_of(message) == 7 and err.line == 7
    assert "record 4" in message


def test_line_number_counts_blank_lines(tmp_path):
    lines = uci_text().splitlines()
    lines[6] = "3 2 -1"
    lines.insert(5, "")
    message, _ = error_for(tmp_path, "\n".join(lines) + "\n")
    assert line_of(message) == 8 and "record 4" in message


def test_error_late_in_a_large_file_has_exact_line(tmp_path):
    triples = [(d, w, 1) for d in range(1, 401) for w in (1, 5, 9)]
    lines = uci_text(triples, 400, 9).splitlines()
    lines[3 + 1000] = lines[3 + 1000] + ".5"
    message, _ = error_for(tmp_path, "\n".join(lines) + "\n")
    assert line_of(message) == 1004 and "record 1001" in message and "non-integer" in message


@pytest.mark.parametrize(
    ("text", "needle", "line"),
    [
        (uci_text(nnz=len(TRIPLES) + 2), "file ends after 7", 11),
        (uci_text(nnz=len(TRIPLES) - 2), "more records than the header's NNZ=5", 9),
        ("", "file is empty", 1),
        ("6\n5\n", "expected the number of nonzeros NNZ", 3),
        ("6\nfive\n7\n", "expected the number of words W", 2),
        (uci_text(d=0), "empty corpus", 1),
        ("6\n5\n0\n", "empty corpus", 1),
    ],
    ids=["fewer-than-nnz", "more-than-nnz", "empty-file", "short-header", "bad-header",
         "zero-docs", "zero-nnz"],
)
def test_header_disagreeing_with_body(tmp_path, text, needle, line):
    message, err = error_for(tmp_path, text)
    assert "docword.bad.txt" in message
    assert needle in message
    assert err.line == line and f"line {line}" in message


def test_header_d_w_smaller_than_ids(tmp_path):
    message, _ = error_for(tmp_path, uci_text(d=4))
    assert "docID 5 out of range 1..4 (header D=4)" in message and line_of(message) == 8
    message, _ = error_for(tmp_path, uci_text(w=3))
    assert "wordID 4 out of range 1..3 (header W=3)" in message and line_of(message) == 6


def test_truncated_gzip(tmp_path):
    triples = [(d, w, d % 7 + 1) for d in range(1, 3001) for w in (2, 3, 8)]
    full = gzip.compress(uci_text(triples, 3000, 9).encode(), mtime=0)
    path = write_file(tmp_path / "docword.trunc.txt.gz", full[: len(full) * 2 // 3], gz=False)
    with pytest.raises(UCIFormatError) as info:
        load_uci_bow(path, chunk_size=50)
    message = str(info.value)
    assert "docword.trunc.txt.gz" in message and "truncated or corrupt gzip" in message
    assert line_of(message) > 3
    # the streaming statistics see the same error
    with pytest.raises(UCIFormatError, match="docword.trunc.txt.gz"):
        word_statistics(path, chunk_size=50)


def test_corrupt_gzip(tmp_path):
    triples = [(d, w, 1) for d in range(1, 2001) for w in (2, 3, 8)]
    full = bytearray(gzip.compress(uci_text(triples, 2000, 9).encode(), mtime=0))
    full[len(full) // 2: len(full) // 2 + 40] = bytes(40)
    path = write_file(tmp_path / "docword.corrupt.txt.gz", bytes(full), gz=False)
    with pytest.raises(UCIFormatError) as info:
        load_uci_bow(path)
    assert "docword.corrupt.txt.gz" in str(info.value)
    assert "gzip" in str(info.value) or "line" in str(info.value)


def test_vocabulary_errors(tmp_path):
    short = write_file(tmp_path / "vocab.short.txt", "a\nb\nc\n")
    with pytest.raises(UCIFormatError, match=r"vocab\.short\.txt.*3 lines.*W=5"):
        read_uci_vocabulary(short, 5)
    docword = write_file(tmp_path / "docword.v.txt", uci_text())
    with pytest.raises(UCIFormatError, match=r"vocab\.short\.txt"):
        load_uci_bow(docword, short)
    empty_word = write_file(tmp_path / "vocab.hole.txt", "a\nb\n\nd\ne\n")
    with pytest.raises(UCIFormatError, match=r"vocab\.hole\.txt, line 3: empty word"):
        read_uci_vocabulary(empty_word, 5)
    ok = write_file(tmp_path / "vocab.ok.txt.gz", "a\r\nb\r\nc\r\nd\r\ne")
    assert read_uci_vocabulary(ok, 5).tolist() == list("abcde")


def test_write_uci_roundtrip_and_atomic(tmp_path):
    rng = np.random.default_rng(1)
    dense = rng.poisson(0.4, size=(50, 30)) * rng.integers(1, 1000, size=(50, 30))
    dense[7] = 0  # an empty document
    dense[-1] = 0  # trailing empty document
    X = sp.csr_array(dense.astype(np.float64))
    data_before = X.data.copy()
    vocab = [f"word{i}" for i in range(30)]
    for name in ("docword.rt.txt", "docword.rt.txt.gz"):
        write_uci(tmp_path / name, tmp_path / "vocab.rt.txt", X, vocab, chunk_size=17)
        corpus = load_uci_bow(tmp_path / name, tmp_path / "vocab.rt.txt")
        np.testing.assert_array_equal(corpus.counts.toarray(), dense)
        assert corpus.vocabulary.tolist() == vocab
    np.testing.assert_array_equal(X.data, data_before)
    text = (tmp_path / "docword.rt.txt").read_text().splitlines()
    assert text[:3] == ["50", "30", str(np.count_nonzero(dense))]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    with pytest.raises(ValueError, match="whole numbers, got 1.5"):
        write_uci(tmp_path / "docword.neg.txt", None, sp.csr_array(np.array([[1.5, 0.0]])))
    assert not (tmp_path / "docword.neg.txt").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("counts, needle", [
    # issue 28, defect 1: these were written as "1 2 7" and "1 2 2"
    (np.array([[1, 2**63 + 5]], dtype=np.uint64), "count 9223372036854775813 is too large"),
    (np.array([[1.0, 1e19]]), "count 1e[+]19 is too large"),
    # what load_uci_bow refuses is not written either
    (np.array([[1, 2**31]], dtype=np.int64), "count 2147483648 is too large"),
    (np.array([[1.0, 2.0**31]]), "count 2147483648.0 is too large"),
    (np.array([[1, -3]], dtype=np.int8), "non-negative, got -3"),
    (np.array([[1.0, np.inf]]), "finite, got inf"),
    (np.array([[1.0, np.nan]]), "finite, got nan"),
])
def test_write_uci_refuses_counts_it_cannot_write_exactly(tmp_path, counts, needle):
    before = counts.copy()
    with pytest.raises(ValueError, match=needle):
        write_uci(tmp_path / "docword.big.txt", None, counts)
    np.testing.assert_array_equal(counts, before)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint32, np.int32, np.float64,
                                   np.float32, np.uint8])
def test_write_uci_writes_the_largest_counts_exactly(tmp_path, dtype):
    top = min(2**31 - 1, int(np.iinfo(dtype).max) if np.issubdtype(dtype, np.integer)
              else 2**24 if dtype == np.float32 else 2**31 - 1)
    counts = np.array([[1, top], [top - 1, 0]], dtype=dtype)
    path = tmp_path / "docword.top.txt"
    write_uci(path, None, counts)
    assert path.read_text().splitlines()[3:] == ["1 1 1", f"1 2 {top}", f"2 1 {top - 1}"]
    np.testing.assert_array_equal(load_uci_bow(path).counts.toarray(),
                                  counts.astype(np.int64))


def test_write_uci_files_get_the_umask_mode(tmp_path):
    # issue 28, defect 11: mkstemp's 0600 was kept
    old = os.umask(0o022)
    try:
        write_uci(tmp_path / "docword.m.txt", tmp_path / "vocab.m.txt", np.array([[1, 2]]),
                  ["a", "b"])
        write_uci(tmp_path / "docword.m.txt.gz", None, np.array([[1, 2]]))
        os.umask(0o027)
        write_uci(tmp_path / "docword.n.txt", None, np.array([[1, 2]]))
    finally:
        os.umask(old)
    for name in ("docword.m.txt", "vocab.m.txt", "docword.m.txt.gz"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((tmp_path / "docword.n.txt").stat().st_mode) == 0o640


def test_binary_cache(tmp_path):
    path = write_file(tmp_path / "docword.small.txt.gz", uci_text())
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    cache = cache_uci_bow(path, tmp_path / "cache")
    assert (cache / "doc.npy").exists()
    umask = os.umask(0)
    os.umask(umask)
    assert (cache.stat().st_mode & 0o777) == 0o777 & ~umask  # readable by other users' workers
    mtime = (cache / "doc.npy").stat().st_mtime_ns
    assert cache_uci_bow(path, tmp_path / "cache") == cache  # reused, not rebuilt
    assert (cache / "doc.npy").stat().st_mtime_ns == mtime
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    for chunk_size in (1, 2, 5, 100):
        rows = []
        for c in iter_document_chunks(cache, chunk_size):
            assert np.all((c.doc >= c.row_start) & (c.doc < c.row_stop))
            rows.append((c.row_start, c.row_stop))
        assert rows[0][0] == 0 and rows[-1][1] == D
        assert all(a[1] == b[0] for a, b in zip(rows[:-1], rows[1:], strict=True))
    a = word_statistics(cache, chunk_size=2)
    b = word_statistics(path)
    np.testing.assert_allclose(a.variance, b.variance, rtol=1e-14)
    # a bad file leaves no cache behind
    bad = write_file(tmp_path / "docword.bad.txt", uci_text(nnz=99))
    with pytest.raises(UCIFormatError):
        cache_uci_bow(bad, tmp_path / "cache")
    assert sorted(os.listdir(tmp_path / "cache")) == ["docword.small.txt.gz.spcacache"]


def test_sparse_source_not_modified():
    coo = sp.coo_array((np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 2]), np.array([1, 1, 0]))),
                       shape=(3, 2))
    X = coo.tocsr(copy=True)
    X.has_canonical_format = False  # pretend non-canonical: duplicates would be summed
    data = X.data.copy()
    s = word_statistics(sp.csr_matrix(np.array([[0.0, 3.0], [0.0, 0.0], [3.0, 0.0]])))
    list(iter_document_chunks(X, 1))
    np.testing.assert_array_equal(X.data, data)
    np.testing.assert_allclose(s.mean, [1.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        word_statistics(sp.csr_array(np.array([[-1.0, 1.0]])))
    with pytest.raises(ValueError, match="empty corpus"):
        word_statistics(sp.csr_array((4, 3)))
    with pytest.raises(TypeError, match="source must be"):
        word_statistics(np.ones((3, 3)))


# -- the compiled fast path of the record parser ------------------------------------


def _fast_parse(block: bytes):
    from spca.text._cooccur import parse_records

    out = np.empty((block.count(b"\n") + 1, 3), dtype=np.int32)
    n = parse_records(block, out)
    return None if n < 0 else out[:n]


def _loadtxt(block: bytes):
    import io

    try:
        return np.loadtxt(io.BytesIO(block), dtype=np.int32, comments=None, ndmin=2)
    except ValueError:
        return None


_TOKENS = ["0", "7", "12", "0042", "2147483647", "2147483648", "99999999999", "-3", "+4",
           "1.5", "x", ""]


@settings(max_examples=300)
@given(lines=st.lists(st.lists(st.sampled_from(_TOKENS), min_size=0, max_size=5),
                      min_size=1, max_size=6),
       seps=st.lists(st.sampled_from([" ", "  ", "\t", " \t "]), min_size=1, max_size=3),
       ends=st.sampled_from(["\n", "\r\n"]), last=st.booleans(), lead=st.booleans())
def test_fast_parser_agrees_with_loadtxt(lines, seps, ends, last, lead):
    # Whatever the block, the compiled parser either declines it (-1: the
    # reader then uses loadtxt, which names any problem) or returns exactly
    # loadtxt's array.
    text = ends.join((" " if lead else "") + seps[i % len(seps)].join(line)
                     for i, line in enumerate(lines))
    block = (text + (ends if last else "")).encode()
    fast = _fast_parse(block)
    if fast is not None:
        ref = _loadtxt(block)
        assert ref is not None
        np.testing.assert_array_equal(fast, ref.reshape(-1, 3))


@settings(max_examples=100)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200), last=st.booleans())
def test_fast_parser_reads_well_formed_records(seed, n, last):
    # Well-formed records (what a docword file holds) take the fast path.
    rng = np.random.default_rng(seed)
    recs = rng.integers(0, 2**31 - 1, size=(n, 3), endpoint=True).astype(np.int32)
    text = "\n".join(" ".join(str(v) for v in row) for row in recs) + ("\n" if last else "")
    np.testing.assert_array_equal(_fast_parse(text.encode()), recs)


def test_fast_parser_declines_what_it_cannot_read():
    for block in (b"1 2 3\n\n4 5 6\n", b"1 2\n", b"1 2 3 4\n", b"1 -2 3\n", b"1 2 3\r\n",
                  b"1 2 2147483648\n", b"1 2 3\n4 5\n", b"1 2 x\n"):
        assert _fast_parse(block) is None, block
    np.testing.assert_array_equal(_fast_parse(b"  1\t2  3  \n  "), [[1, 2, 3]])


def test_nyt_sample_reads_as_with_loadtxt(monkeypatch):
    # The bundled sample through the fast path equals the same file parsed by
    # loadtxt alone (the parser declining every block).
    from spca.datasets import load_nytimes_sample
    from spca.text import _uci

    fast = load_nytimes_sample().counts
    monkeypatch.setattr(_uci, "parse_records", lambda block, out: -1)
    slow = load_nytimes_sample().counts
    assert fast.nnz == slow.nnz == 963_063
    for a in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(fast, a), getattr(slow, a))


def test_an_in_memory_source_asked_to_keeps_its_chunks_for_the_next_pass(monkeypatch):
    from spca.text import _readers
    from spca.text._source import open_source

    X = sp.random(50, 20, density=0.3, format="csr", random_state=0) * 10
    src = open_source(X)
    assert not any(a is b for a, b in zip(src.chunks(16), src.chunks(16), strict=True))
    src.keep_chunks = True  # (a caller's choice: sparse_topics makes it)
    first = list(src.chunks(16))
    again = list(src.chunks(16))
    assert len(first) > 1 and all(a is b for a, b in zip(first, again, strict=True))
    # another chunk size: made again, the same records
    other = list(src.chunks(1000))
    assert len(other) == 1
    assert np.array_equal(np.concatenate([c.word for c in first]), other[0].word)
    # a pass cut short keeps nothing; a large source keeps nothing
    src = open_source(X)
    src.keep_chunks = True
    next(iter(src.chunks(16)))
    assert src._kept is None
    monkeypatch.setattr(_readers, "_KEEP_RECORDS", X.nnz - 1)
    src = open_source(X)
    src.keep_chunks = True
    first = list(src.chunks(16))
    assert not any(a is b for a, b in zip(first, src.chunks(16), strict=True))


# --- a Corpus's checks are remembered for its arrays (issue 27, time limits) ---


def _tiny_corpus(data=(1.0, 2.0, 3.0, 1.0, 4.0)):
    from spca.text import Corpus

    X = sp.csr_array((np.array(data), np.array([0, 2, 1, 2, 3]), np.array([0, 2, 3, 5])),
                     shape=(3, 4))
    return Corpus(counts=X, name="tiny")


def _chunks_of(src) -> list[tuple[int, int, list, list, list]]:
    return [(c.row_start, c.row_stop, c.doc.tolist(), c.word.tolist(), c.count.tolist())
            for c in src.chunks(2)]


def test_corpus_checks_are_remembered_for_its_arrays_and_give_the_same_chunks():
    from spca.text._readers import _CHECKED
    from spca.text._source import open_source

    corpus = _tiny_corpus()
    before = dict(vars(corpus))
    first = open_source(corpus)
    assert first._checked is None
    chunks = _chunks_of(first)
    assert corpus in _CHECKED
    second = open_source(corpus)
    assert second._checked is not None
    assert _chunks_of(second) == chunks
    # nothing was added to the caller's object
    assert vars(corpus) == before
    # a matrix (not a Corpus) is checked on every call
    assert open_source(corpus.counts)._checked is None


def test_corpus_with_explicit_zeros_still_drops_them_once_remembered():
    from spca.text._source import open_source

    corpus = _tiny_corpus((1.0, 0.0, 3.0, 1.0, 4.0))
    chunks = _chunks_of(open_source(corpus))
    assert 2 not in [w for c in chunks[:1] for w in c[3]]
    again = open_source(corpus)
    assert again._checked is not None and again._checked.zeros
    assert _chunks_of(again) == chunks


@pytest.mark.parametrize("bad, message", [(-1.0, "non-negative"), (np.nan, "finite")])
def test_corpus_whose_arrays_are_replaced_is_checked_again(bad, message):
    from spca.text import word_statistics

    corpus = _tiny_corpus()
    word_statistics(corpus)  # checked and remembered
    data = corpus.counts.data.copy()
    data[1] = bad
    corpus.counts.data = data  # new arrays: not the ones checked
    with pytest.raises(ValueError, match=message):
        word_statistics(corpus)


def test_corpus_that_fails_a_check_is_not_remembered():
    from spca.text import word_statistics
    from spca.text._readers import _CHECKED

    corpus = _tiny_corpus((1.0, -2.0, 3.0, 1.0, 4.0))
    for _ in range(2):
        with pytest.raises(ValueError, match="non-negative"):
            word_statistics(corpus)
    assert corpus not in _CHECKED


def test_non_canonical_corpus_is_checked_on_every_call():
    from spca.text import word_statistics
    from spca.text._readers import _CHECKED
    from spca.text._source import open_source

    X = sp.csr_array((np.array([1.0, 1.0, 2.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                     shape=(2, 2))
    X.has_canonical_format = False
    from spca.text import Corpus

    corpus = Corpus(counts=X)
    stats = word_statistics(corpus)
    assert corpus not in _CHECKED  # (the pass read a canonical copy, not its arrays)
    assert open_source(corpus)._checked is None
    np.testing.assert_array_equal(stats.mean, [1.0, 1.0])
    np.testing.assert_array_equal(X.data, [1.0, 1.0, 2.0])  # the caller's arrays as given


def test_topics_of_a_remembered_corpus_equal_those_of_its_matrix():
    from spca.text import sparse_topics

    rng = np.random.default_rng(3)
    X = sp.random(60, 30, density=0.3, random_state=rng, format="csr") * 5
    X = sp.csr_array(np.round(X.toarray()))
    from spca.text import Corpus

    corpus = Corpus(counts=X)
    expect = sparse_topics(X, n_components=2, cardinality=3)
    for _ in range(2):  # the second call skips the checks
        got = sparse_topics(corpus, n_components=2, cardinality=3)
        assert [t.as_dict() for t in got.topics] == [t.as_dict() for t in expect.topics]


def test_bundled_sample_is_remembered_as_checked_and_equals_a_checked_copy():
    from spca.datasets import load_nytimes_sample
    from spca.text import Corpus, word_statistics
    from spca.text._source import open_source

    corpus = load_nytimes_sample()
    assert open_source(corpus)._checked is not None
    fresh = Corpus(counts=corpus.counts.copy())
    assert open_source(fresh)._checked is None
    a, b = word_statistics(corpus), word_statistics(fresh)
    np.testing.assert_array_equal(a.variance, b.variance)
    np.testing.assert_array_equal(a.document_frequency, b.document_frequency)


@pytest.mark.parametrize("bad, message", [
    (-1.0, "non-negative"), (np.nan, "finite"), (np.inf, "finite"), (-np.inf, "finite")])
def test_matrix_bad_values_give_the_same_errors(bad, message):
    from spca.text import word_statistics

    X = _tiny_corpus().counts.copy()
    X.data[3] = bad
    with pytest.raises(ValueError, match=f"sparse matrix: values must be {message}"):
        word_statistics(X)


def test_zeros_made_in_place_in_a_remembered_corpus_are_still_dropped():
    from spca.text import word_statistics
    from spca.text._source import open_source

    corpus = _tiny_corpus()
    before = word_statistics(corpus, "binary")
    np.testing.assert_array_equal(before.document_frequency, [1, 1, 2, 1])
    corpus.counts.data[1] = 0.0  # (in place: the checks are not repeated)
    assert open_source(corpus)._checked is not None
    stats = word_statistics(corpus, "binary")
    np.testing.assert_array_equal(stats.document_frequency, [1, 1, 1, 1])
