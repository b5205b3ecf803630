"""Readers on hostile input: one-line errors, no allocation sized by a header
or an index alone, and a fuzz test of corruptions of a small valid corpus."""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from spca.text import (
    UCIFormatError,
    load_uci_bow,
    open_parquet,
    read_uci_vocabulary,
    word_statistics,
    write_uci,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def small_counts(seed: int = 0, D: int = 30, W: int = 12) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    C = sp.random(D, W, density=0.3, random_state=rng, data_rvs=lambda n: rng.integers(1, 5, n))
    return sp.csr_array(C)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spca", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("spca: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr


def test_huge_count_in_parquet_names_the_file(tmp_path):
    t = pa.table({"doc": [0, 1, 2, 3], "word": [0, 1, 1, 0], "count": [1.0, 1e300, 2.0, 3.0]})
    pq.write_table(t, tmp_path / "big.parquet")
    with pytest.raises(ValueError, match=r"big\.parquet: count 1e\+300 is too large"):
        word_statistics(tmp_path / "big.parquet")
    proc = run_cli("topics", str(tmp_path / "big.parquet"), cwd=tmp_path)
    assert_one_line_error(proc, "big.parquet", "too large")


def test_overflowing_statistics_of_a_matrix_are_an_error():
    X = sp.csr_array(np.array([[1e200, 1.0], [0.0, 2.0], [3e200, 0.0]]))
    with pytest.raises(ValueError, match=r"word\(s\) 0 are too large"):
        word_statistics(X)


def test_uint64_doc_beyond_int64_is_one_line(tmp_path):
    t = pa.table({"doc": pa.array([0, 1, 2**63 + 5], pa.uint64()),
                  "word": pa.array([0, 1, 1], pa.int64()), "count": [1, 2, 3]})
    path = tmp_path / "u64.parquet"
    pq.write_table(t, path)
    with pytest.raises(ValueError, match=r"u64\.parquet: n_docs=9223372036854775814"):
        open_parquet(path)
    assert_one_line_error(run_cli("topics", str(path), cwd=tmp_path), "u64.parquet", "n_docs=")


def test_parquet_word_index_of_2e9_without_metadata_is_refused(tmp_path):
    t = pa.table({"doc": [0, 1, 2], "word": [0, 5, 2_000_000_000], "count": [1, 2, 3]})
    pq.write_table(t, tmp_path / "w.parquet")
    with pytest.raises(ValueError, match=r"w\.parquet: n_words=2000000001 for only 3 records"):
        open_parquet(tmp_path / "w.parquet")


def test_uci_header_with_2e9_words_is_refused_before_any_allocation(tmp_path):
    C = small_counts()
    good = tmp_path / "docword.ok.txt"
    write_uci(good, None, C)
    lines = good.read_text().split("\n")
    lines[1] = "2000000000"
    bad = tmp_path / "docword.bad.txt"
    bad.write_text("\n".join(lines))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(f"w{i}" for i in range(12)) + "\n")
    with pytest.raises(UCIFormatError, match="W=2000000000 for only"):
        load_uci_bow(bad)
    assert_one_line_error(run_cli("topics", str(bad), str(vocab), cwd=tmp_path), "W=2000000000")
    # W = 1e8 within the size bound's reach of a larger NNZ: the vocabulary's
    # length is checked first
    lines[1], lines[2] = "100000000", str(C.nnz)
    bad.write_text("\n".join(lines))
    proc = run_cli("topics", str(bad), str(vocab), cwd=tmp_path)
    assert proc.returncode == 1 and "spca: error:" in proc.stderr


def test_uci_nnz_beyond_the_file_size_is_refused(tmp_path):
    C = small_counts()
    path = tmp_path / "docword.t.txt"
    write_uci(path, None, C)
    lines = path.read_text().split("\n")
    lines[2] = str(10**12)
    lines[0] = lines[1] = str(10**8)  # within 64 x NNZ
    path.write_text("\n".join(lines))
    with pytest.raises(UCIFormatError, match="NNZ=1000000000000 records, but a file of"):
        load_uci_bow(path)
    gz = tmp_path / "docword.t.txt.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(UCIFormatError, match=r"\(gzip\) holds at most"):
        load_uci_bow(gz)


def test_vocabulary_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes("\ufeffalpha\nbeta\n".encode())
    assert read_uci_vocabulary(path, 2).tolist() == ["alpha", "beta"]


# --------------------------------------------------------------------------
# fuzzing: random corruptions of a small valid corpus
# --------------------------------------------------------------------------

# Each reader runs with the process's address space capped (soft
# RLIMIT_AS, restored after the call) at what it uses now plus _HEADROOM, so
# that an allocation sized by a corrupt header fails with MemoryError (a test
# failure) instead of taking the machine.  A corpus this small needs a few MB.
_HEADROOM = 768 << 20


@contextlib.contextmanager
def _address_space_cap():
    try:
        import resource

        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):  # not Linux: no cap
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = used + _HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _read_capped(kind: str, path: Path) -> str:
    """``"OK ..."`` with a summary of what was read, or ``"ERROR ..."`` with the
    one-line message; anything else (a traceback, MemoryError) fails."""
    try:
        with _address_space_cap():
            if kind == "uci":
                c = load_uci_bow(path)
                out = (c.counts.shape, int(c.counts.nnz), float(c.counts.sum()))
            else:
                s = word_statistics(path)
                assert np.all(np.isfinite(s.variance)) and np.all(s.variance >= 0)
                out = (s.n_docs, s.n_words, s.nnz)
    except MemoryError:
        pytest.fail(f"unbounded allocation reading a corrupt {kind} file")
    except (ValueError, OSError, EOFError) as exc:
        msg = str(exc)
        assert msg and "\n" not in msg.strip(), repr(msg)
        return f"ERROR {type(exc).__name__} {msg}"
    return f"OK {out}"


def _corrupt(data: bytes, ops: list[tuple[str, int, int]]) -> bytes:
    buf = bytearray(data)
    for op, a, b in ops:
        if not buf:
            break
        i = a % len(buf)
        if op == "truncate":
            del buf[i:]
        elif op == "flip":
            buf[i] ^= 1 << (b % 8)
        elif op == "byte":
            buf[i] = b % 256
        elif op == "digits":  # a huge number in the middle of the text
            buf[i:i] = str(10 ** (b % 25) + b).encode()
        elif op == "delete":
            del buf[i:i + 1 + b % 8]
    return bytes(buf)


def _header_edit(text: bytes, field: int, value: int) -> bytes:
    lines = text.split(b"\n")
    lines[field] = str(value).encode()
    return b"\n".join(lines)


# --------------------------------------------------------------------------
# "never a wrong matrix": a corrupted UCI file that a plain reading of the
# format accepts must be read as exactly that matrix (or refused); one that
# it refuses must be refused
# --------------------------------------------------------------------------


def _reference_uci(data: bytes) -> tuple[str, np.ndarray | None]:
    """Read ``data`` by the format's definition, in pure Python: ``("valid",
    dense)``, ``("invalid", None)``, or ``("ambiguous", None)`` for what the
    format leaves open (unsorted or repeated records, zero counts, signs,
    leading zeros, non-ASCII bytes)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError):
            return "invalid", None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "ambiguous", None
    lines = [line.strip() for line in text.replace("\r", "").split("\n")]
    lines = [line for line in lines if line]
    tokens = [line.split() for line in lines]
    if any(t.startswith(("+", "0")) and t != "0" for row in tokens for t in row):
        return "ambiguous", None
    if len(lines) < 3 or any(len(row) != 1 or not row[0].isdigit() for row in tokens[:3]):
        return "invalid", None
    D, W, nnz = (int(row[0]) for row in tokens[:3])
    body = tokens[3:]
    if len(body) != nnz or nnz == 0 or D == 0 or W == 0:
        return "invalid", None
    if D > 10**6 or W > 10**6:  # the sizes a reader may refuse before reading
        return "ambiguous", None
    dense = np.zeros((D, W), dtype=np.int64)
    last = (0, 0)
    for row in body:
        if len(row) != 3 or not all(t.isdigit() for t in row):
            return "invalid", None
        d, w, c = (int(t) for t in row)
        if not (1 <= d <= D and 1 <= w <= W) or c > 2**31 - 1:
            return "invalid", None
        if (d, w) <= last or c == 0:
            return "ambiguous", None
        last = (d, w)
        dense[d - 1, w - 1] = c
    return "valid", dense


try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    st = None

if st is not None:
    _OPS = st.lists(st.tuples(st.sampled_from(["truncate", "flip", "byte", "digits",
                                               "delete"]),
                              st.integers(0, 10**6), st.integers(0, 10**6)),
                    min_size=0, max_size=3)
    _EDITS = st.one_of(st.none(), st.tuples(st.integers(0, 2),
                                            st.sampled_from([0, 1, 2**31 - 1, 2**31, 10**8,
                                                             2 * 10**9, 10**12, 10**19])))
    # CI: a fixed, derandomised budget; SPCA_FUZZ_EXAMPLES=100000 for a long run
    _BUDGET = int(os.environ.get("SPCA_FUZZ_EXAMPLES", "40"))
    _FUZZ = settings(max_examples=_BUDGET, deadline=None, derandomize=_BUDGET <= 40,
                     suppress_health_check=list(HealthCheck))

    @_FUZZ
    @given(ops=_OPS, edit=_EDITS, gz=st.booleans())
    def test_fuzz_uci_reader(tmp_path_factory, ops, edit, gz):
        tmp = tmp_path_factory.mktemp("fuzz")
        path = tmp / "docword.f.txt"
        write_uci(path, None, small_counts(1))
        data = path.read_bytes()
        if edit is not None:
            data = _header_edit(data, *edit)
        data = _corrupt(data, ops)
        if gz:
            data = gzip.compress(data)
        path.write_bytes(data)
        out = _read_capped("uci", path)
        assert out.startswith(("OK", "ERROR")), out
        verdict, dense = _reference_uci(data)
        if verdict == "invalid":
            assert out.startswith("ERROR"), out
        elif verdict == "valid" and out.startswith("OK"):
            got = load_uci_bow(path).counts.toarray()
            np.testing.assert_array_equal(got, dense)

    @_FUZZ
    @given(ops=_OPS, huge=st.sampled_from([None, 2**31 - 1, 2**40, 2**62, 1e300]),
           column=st.sampled_from(["doc", "word", "count"]))
    def test_fuzz_parquet_reader(tmp_path_factory, ops, huge, column):
        tmp = tmp_path_factory.mktemp("fuzzpq")
        C = small_counts(2).tocoo()
        cols = {"doc": C.row.astype(np.int64), "word": C.col.astype(np.int64),
                "count": C.data.astype(np.float64)}
        if huge is not None:
            if column == "count":
                cols[column][len(C.data) // 2] = float(huge)
            else:
                cols[column] = cols[column].astype(np.uint64)
                cols[column][len(C.data) // 2] = min(int(huge), 2**64 - 1)
        path = tmp / "f.parquet"
        pq.write_table(pa.table(cols), path)
        original = path.read_bytes()
        path.write_bytes(_corrupt(original, ops))
        out = _read_capped("parquet", path)
        assert out.startswith(("OK", "ERROR")), out
        if path.read_bytes() == original and (huge is None or column == "count"):
            # intact: exactly what was written (a document or word id of 2**40
            # may be refused, or read as a corpus of that size)
            if huge is not None and huge > 1e148:
                assert out.startswith("ERROR"), out  # its square overflows
            else:
                assert out.startswith("OK"), out
                n_docs = int(cols["doc"].max()) + 1
                n_words = int(cols["word"].max()) + 1
                ref = word_statistics(sp.csr_array(
                    (cols["count"], (cols["doc"], cols["word"])), shape=(n_docs, n_words)))
                got = word_statistics(path)
                assert (got.n_docs, got.n_words, got.nnz) == (n_docs, n_words, ref.nnz)
                np.testing.assert_allclose(got.variance, ref.variance, rtol=1e-12)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS cap: Linux only")
def test_the_fuzz_cap_stops_a_huge_allocation():
    with pytest.raises(MemoryError), _address_space_cap():
        np.ones(2 * 10**9)  # 16 GB
    np.ones(10**7)  # and the cap is lifted afterwards


if st is not None:

    @_FUZZ
    @given(field=st.sampled_from(["n_docs", "n_words", "nnz", "row_start", "row_stop",
                                  "shard_nnz"]),
           value=st.sampled_from([-1, 0, 1, 7, 2**31, 2**40, 2**63 + 5, 10**30, "x", None]))
    def test_fuzz_parquet_manifest(tmp_path_factory, field, value):
        import json

        from spca.text import write_parquet

        out = write_parquet(small_counts(3), tmp_path_factory.mktemp("man") / "pq", shards=2)
        m = json.loads((out / "_spca.json").read_text())
        if field in ("n_docs", "n_words", "nnz"):
            m[field] = value
        else:
            m["shards"][1][field.removeprefix("shard_")] = value
        (out / "_spca.json").write_text(json.dumps(m))
        result = _read_capped("parquet", out)
        assert result.startswith(("OK", "ERROR")), result


def test_a_flipped_bit_in_a_converted_shard_is_never_read_silently(tmp_path):
    # write_parquet writes page checksums, verified when read: without them a
    # bit flipped in a data page changed the statistics silently (43 of 300
    # random flips, measured)
    from spca.text import write_parquet

    C = small_counts(2)
    ref = word_statistics(C)
    out = write_parquet(C, tmp_path / "ds", compression="none")
    shard = out / "part-00000.parquet"
    orig = shard.read_bytes()
    col = pq.ParquetFile(shard).metadata.row_group(0).column(2)
    end = col.data_page_offset + col.total_compressed_size
    silent = []
    for pos in range(4, end, max(1, (end - 4) // 60)):
        for bit in (0, 5):
            buf = bytearray(orig)
            buf[pos] ^= 1 << bit
            shard.write_bytes(bytes(buf))
            try:
                s = word_statistics(out)
            except ValueError as exc:
                assert "part-00000.parquet" in str(exc) and "\n" not in str(exc)
                continue
            if not (np.array_equal(s.variance, ref.variance) and np.array_equal(s.mean, ref.mean)):
                silent.append((pos, bit))
    assert silent == []


@pytest.mark.xfail(reason="pyarrow (26.0) aborts the process (uncaught C++ ParquetException, "
                          "SIGABRT) when the column-chunk metadata of some corrupt footers is "
                          "accessed; found by the long fuzz run, not worked around in spca",
                   strict=False)
def test_known_pyarrow_abort_on_a_corrupt_footer(tmp_path):
    rng = np.random.default_rng(2)
    C = sp.random(30, 12, density=0.3, random_state=rng, data_rvs=lambda n: rng.integers(1, 5, n))
    C = C.tocoo()
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"doc": C.row.astype(np.int64), "word": C.col.astype(np.int64),
                             "count": C.data.astype(np.float64)}), path)
    buf = bytearray(path.read_bytes())
    buf[902] ^= 1 << 5  # a bit of the footer (byte 902 of 1417 with pyarrow 26)
    path.write_bytes(bytes(buf))
    proc = subprocess.run([sys.executable, "-c",
                           f"from spca.text import open_parquet\nopen_parquet({str(path)!r})"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr[-500:]


_FLIP_FOOTERS = r"""
import json, os, sys
from pathlib import Path
import numpy as np, scipy.sparse as sp
import pyarrow.parquet as pq
from spca.text import word_statistics, write_parquet

rng = np.random.default_rng(2)
C = sp.csr_array(sp.random(30, 12, density=0.3, random_state=rng,
                           data_rvs=lambda n: rng.integers(1, 5, n)))
out = write_parquet(C, Path(sys.argv[1]) / "ds")
shard = out / "part-00000.parquet"
orig = shard.read_bytes()
col = pq.ParquetFile(shard).metadata.row_group(0).column(2)
start = col.data_page_offset + col.total_compressed_size
positions = sorted(set(range(start, len(orig) - 8, 11)) | set(range(676, 686)))
aborted = []
for pos in positions:
    for bit in (0, 3, 6):
        buf = bytearray(orig)
        buf[pos] ^= 1 << bit
        shard.write_bytes(bytes(buf))
        pid = os.fork()
        if pid == 0:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            try:
                word_statistics(out)
            except ValueError as exc:
                os._exit(0 if "\\n" not in str(exc) else 2)
            except BaseException:
                os._exit(3)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status:
            aborted.append((pos, bit, status))
print(json.dumps(aborted))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_footer_bit_flips_of_a_converted_shard_never_abort(tmp_path):
    # Shards listed in a manifest are streamed without their footer's column
    # statistics, whose reading aborted the process inside pyarrow for 10 of
    # the 6,528 single-bit flips of this shard's footer (byte 680 with
    # pyarrow 26).  Each read runs in a forked child of a fresh process.
    import json

    proc = subprocess.run([sys.executable, "-c", _FLIP_FOOTERS, str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == []


@pytest.mark.parametrize("edit, needle", [
    # issue 28, defect 11: a negative count in a cache directory was accepted
    ("count", "negative count -7"),
    ("word", "word 99 out of range"),
    ("doc", "document ids out of order or range"),
    ("meta", "n_words is -3, not a non-negative integer"),
])
def test_corrupt_cache_directory_is_refused(tmp_path, edit, needle):
    import json

    from spca.text import cache_uci_bow

    path = tmp_path / "docword.c.txt"
    write_uci(path, None, small_counts(4))
    cache = cache_uci_bow(path, tmp_path / "cache")
    if edit == "meta":
        meta = json.loads((cache / "spca_cache.json").read_text())
        meta["n_words"] = -3
        (cache / "spca_cache.json").write_text(json.dumps(meta))
    else:
        arr = np.load(cache / f"{edit}.npy")
        arr[len(arr) // 2] = {"count": -7, "word": 99, "doc": 0}[edit]
        np.save(cache / f"{edit}.npy", arr)
    with pytest.raises(ValueError, match=needle):
        word_statistics(cache)
