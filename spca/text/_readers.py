"""The corpus sources that need no optional dependency, and their common base.

:class:`_Source` is the interface every source implements (Parquet datasets
too, in :mod:`spca.text._parquet`); :func:`~spca.text.open_source`, in
:mod:`spca.text._source`, picks the source for an argument.  The sources here:

A *source* is any of

* a path to a UCI ``docword`` file (plain or gzip), streamed and parsed;
* a path to a binary cache directory made by :func:`cache_uci_bow`
  (memory-mapped, no parsing);
* a path to a Parquet dataset, one ``.parquet`` file or a directory of
  shards (see :mod:`spca.text._parquet`; needs pyarrow);
* a scipy.sparse matrix (documents x words) already in memory;
* a :class:`~spca.text.Corpus` (its ``counts`` are used).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._cooccur import document_ids
from ._memory import huge_empty
from ._uci import (
    DEFAULT_CHUNK_SIZE,
    DocumentChunk,
    UCIFormatError,
    _first_line,
    iter_uci_docword,
    read_uci_header,
)

__all__ = ["cache_uci_bow"]

_CACHE_VERSION = 1
_CACHE_META = "spca_cache.json"


class _Source:
    """Common interface: ``n_docs``, ``n_words``, ``nnz``, ``chunks(chunk_size)``."""

    n_docs: int
    n_words: int
    nnz: int
    label: str

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:  # pragma: no cover
        raise NotImplementedError


class _UCIFileSource(_Source):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = str(path)
        self.n_docs, self.n_words, self.nnz = read_uci_header(path)

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        return iter_uci_docword(self.path, chunk_size)


#: An in-memory matrix of at most this many records keeps its chunks (the
#: document index of every record, 8 bytes each) for the next pass over the
#: same source object when asked to (``keep_chunks``): the two passes of
#: :func:`spca.text.sparse_topics` (NYT sample, 963,063 records: 1.4-1.8 ms
#: of CPU per pass to make them).
_KEEP_RECORDS = 1 << 24


class _SparseSource(_Source):
    def __init__(self, matrix: Any, label: str = "sparse matrix", owner: Any = None) -> None:
        # (a csr_array as it is, in its own arrays: read only here)
        X = matrix if type(matrix) is sp.csr_array else sp.csr_array(matrix)
        if X.ndim != 2:
            raise ValueError(f"expected a 2-D sparse matrix, got shape {X.shape}")
        # (a Corpus whose counts a whole pass has checked before, the same
        # arrays: the checks below and in _chunks are not repeated)
        self._owner = owner
        checked = _CHECKED.get(owner) if owner is not None else None
        if checked is not None and not checked.same(matrix):
            checked = None
        self._checked = checked
        if checked is None:
            if not X.has_canonical_format:
                X = X.copy()  # never modify the caller's arrays
                X.sum_duplicates()
            if X.shape[0] == 0 or X.shape[1] == 0 or not X.data.any():
                raise ValueError(f"{label}: empty corpus (shape {X.shape}, no nonzero value)")
        self.X = X
        self.label = label
        self.n_docs, self.n_words = (int(s) for s in X.shape)
        self.nnz = int(X.nnz)
        # Whether a whole pass keeps its chunks for the next passes of this
        # source object (a caller's choice: a pass then holds memory in the
        # number of records, not of a chunk), if it has at most _KEEP_RECORDS
        # records; (chunk_size, the chunks) once kept.
        self.keep_chunks = False
        self._kept: tuple[int, list[DocumentChunk]] | None = None

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        kept = self._kept
        if kept is not None and kept[0] == chunk_size:
            yield from kept[1]
            return
        keep = self.keep_chunks and self.nnz <= _KEEP_RECORDS
        made = []
        zeros = False
        for chunk, dropped in self._chunks(chunk_size):
            zeros = zeros or dropped
            if keep:
                made.append(chunk)
            yield chunk
        if keep:
            self._kept = (chunk_size, made)
        owner = self._owner
        if owner is not None and self._checked is None:
            counts, X = owner.counts, self.X
            if (X.data is counts.data and X.indices is counts.indices
                    and X.indptr is counts.indptr):
                # (every record was checked, in the Corpus's own arrays:
                # remembered for them)
                self._checked = _CHECKED[owner] = _Checked(counts, zeros)

    def _chunks(self, chunk_size: int) -> Iterator[tuple[DocumentChunk, bool]]:
        X = self.X
        indptr = X.indptr
        checked = self._checked
        row = 0
        while row < self.n_docs:
            stop = int(np.searchsorted(indptr, indptr[row] + chunk_size, side="right")) - 1
            stop = min(max(stop, row + 1), self.n_docs)
            lo, hi = int(indptr[row]), int(indptr[stop])
            # (np.repeat(np.arange(row, stop), np.diff(indptr[row:stop + 1])),
            # into an array aligned for huge pages, see spca.text._memory)
            doc = huge_empty(hi - lo, np.int64)
            document_ids(indptr, row, stop, doc)
            word = X.indices[lo:hi]
            count = X.data[lo:hi]
            # (two reductions instead of three scans: a NaN propagates
            # through both, and non-negative values hold a zero iff their
            # minimum is zero)
            least = count.min() if count.size else 1
            if checked is None:
                most = count.max() if count.size else 1
                if not (np.isfinite(least) and np.isfinite(most)):
                    raise ValueError(f"{self.label}: values must be finite")
                if least < 0:
                    raise ValueError(f"{self.label}: values must be non-negative (word counts)")
            dropped = False
            if least == 0:
                keep = count != 0
                doc, word, count = doc[keep], word[keep], count[keep]
                dropped = True
            yield DocumentChunk(row, stop, doc, word, count), dropped
            row = stop


class _Checked:
    """The arrays of a Corpus's counts that a whole pass found canonical,
    finite and non-negative (``zeros``: with explicit zeros, which every
    pass still drops), so that the next sources of the same Corpus skip
    those checks (NYT sample: about 1 ms a call).  Held by identity: a
    Corpus whose ``counts`` arrays are replaced is checked again; values
    changed in place are not (the Corpus asks that its arrays not be
    modified in place)."""

    def __init__(self, X: Any, zeros: bool) -> None:
        self.X = weakref.ref(X)
        self.data = weakref.ref(X.data)
        self.indices = weakref.ref(X.indices)
        self.indptr = weakref.ref(X.indptr)
        self.shape = X.shape
        self.zeros = zeros

    def same(self, X: Any) -> bool:
        return (self.X() is X and self.data() is X.data and self.indices() is X.indices
                and self.indptr() is X.indptr and self.shape == X.shape)


#: Corpus -> _Checked, see _SparseSource (weak keys: nothing is added to the
#: caller's object, and a Corpus is forgotten with it)
_CHECKED: weakref.WeakKeyDictionary[Any, _Checked] = weakref.WeakKeyDictionary()


class _CacheSource(_Source):
    def __init__(self, directory: Path) -> None:
        meta_path = directory / _CACHE_META
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            why = _first_line(exc)
            raise ValueError(f"{directory}: not a readable spca cache ({why})") from exc
        if meta.get("version") != _CACHE_VERSION:
            raise ValueError(f"{directory}: unsupported cache version {meta.get('version')}")
        self.path = directory
        self.label = str(directory)
        self.meta = meta
        for key in ("n_docs", "n_words", "nnz"):
            value = meta.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{directory}: corrupt cache ({key} is {value!r}, not a "
                                 "non-negative integer)")
        self.n_docs, self.n_words, self.nnz = meta["n_docs"], meta["n_words"], meta["nnz"]
        self.doc = np.load(directory / "doc.npy", mmap_mode="r")
        self.word = np.load(directory / "word.npy", mmap_mode="r")
        self.count = np.load(directory / "count.npy", mmap_mode="r")
        if not (len(self.doc) == len(self.word) == len(self.count) == self.nnz):
            raise ValueError(f"{directory}: corrupt cache (array lengths differ from nnz)")

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        return _checked(self.label, self.n_words, _iter_records(
            self.doc, self.word, self.count, 0, self.nnz, 0, self.n_docs, chunk_size))

    def pieces(self, piece_nnz: int) -> list[_CachePiece]:
        """Blocks of whole documents of about ``piece_nnz`` records each, tiling
        ``0 .. n_docs``, that a process can read by itself (see ``_dask``)."""
        doc, nnz = self.doc, self.nnz
        n = max(1, -(-nnz // max(int(piece_nnz), 1)))
        cuts = [0]
        for k in range(1, n):
            t = round(nnz * k / n)
            cut = int(np.searchsorted(doc, doc[t], side="left"))
            if cut > cuts[-1]:
                cuts.append(cut)
        cuts.append(nnz)
        out = []
        for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            row_start = 0 if i == 0 else int(doc[lo])
            row_stop = self.n_docs if hi == nnz else int(doc[hi])
            out.append(_CachePiece(os.path.abspath(self.path), lo, hi, row_start, row_stop))
        return out


@dataclass(frozen=True)
class _CachePiece:
    """Records ``lo:hi`` (documents ``row_start .. row_stop - 1``) of a cache directory."""

    path: str
    lo: int
    hi: int
    row_start: int
    row_stop: int

    @property
    def label(self) -> str:
        return f"{self.path}[{self.lo}:{self.hi}]"

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        src = _CacheSource(Path(self.path))
        if src.nnz < self.hi:
            raise ValueError(f"{self.path}: cache has {src.nnz} records, expected >= {self.hi}")
        return _checked(self.path, src.n_words, _iter_records(
            src.doc, src.word, src.count, self.lo, self.hi, self.row_start, self.row_stop,
            chunk_size))


def _checked(label: str, n_words: int,
             chunks: Iterator[DocumentChunk]) -> Iterator[DocumentChunk]:
    """The chunks of a cache directory, each checked as a Parquet shard's are:
    sorted documents of the chunk's range, words in range, counts >= 0."""
    for c in chunks:
        if len(c.doc):
            if c.doc[0] < c.row_start or c.doc[-1] >= c.row_stop or np.any(np.diff(c.doc) < 0):
                raise ValueError(f"{label}: corrupt cache (document ids out of order or range)")
            wlo, whi = int(c.word.min()), int(c.word.max())
            if wlo < 0 or whi >= n_words:
                raise ValueError(f"{label}: corrupt cache (word {wlo if wlo < 0 else whi} "
                                 f"out of range 0..{n_words - 1})")
            if np.issubdtype(c.count.dtype, np.floating) and not np.all(np.isfinite(c.count)):
                raise ValueError(f"{label}: corrupt cache (counts must be finite)")
            if c.count.min() < 0:
                raise ValueError(f"{label}: corrupt cache (negative count {c.count.min()})")
        yield c


def _iter_records(doc: Any, word: Any, count: Any, lo: int, end: int, row: int,
                  row_stop: int, chunk_size: int) -> Iterator[DocumentChunk]:
    """Chunks of the sorted records ``lo:end`` covering documents ``row .. row_stop - 1``."""
    while lo < end:
        hi = min(lo + chunk_size, end)
        if hi < end:
            cut = int(np.searchsorted(doc[lo:hi + 1], doc[hi], side="left")) + lo
            if cut == lo:  # one document longer than chunk_size
                cut = int(np.searchsorted(doc[lo:end], doc[lo], side="right")) + lo
            hi = cut
        stop = int(doc[hi - 1]) + 1 if hi < end else row_stop
        yield DocumentChunk(row, stop, np.array(doc[lo:hi]), np.array(word[lo:hi]),
                            np.array(count[lo:hi]))
        lo, row = hi, stop
    if row < row_stop:
        empty = np.empty(0, dtype=np.int32)
        yield DocumentChunk(row, row_stop, empty, empty, empty)


def _shared_tmpdir(parent: Path, name: str) -> Path:
    """A new temporary directory ``parent/.name.*.tmp`` with the umask's mode.

    Not mkdtemp's 0700: the cache or dataset it becomes (by rename) is read
    by other users' processes too, e.g. Dask workers.
    """
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.", suffix=".tmp"))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp


def cache_uci_bow(
    docword: str | os.PathLike, cache_dir: str | os.PathLike,
    *, chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Path:
    """Parse a UCI ``docword`` file once into a binary, memory-mappable cache.

    The cache is a directory ``<cache_dir>/<file name>.spcacache`` holding
    ``doc.npy``, ``word.npy`` and ``count.npy`` (0-based int32 arrays of the
    records) and a JSON description.  It is reused while the source file's
    size and modification time are unchanged, and rebuilt otherwise.  The
    directory is built under a temporary name and renamed into place, so an
    interrupted build leaves no half-written cache.  The returned path is a
    valid ``source`` for :func:`word_statistics`, :func:`candidate_covariance`
    and :func:`iter_document_chunks`, and is read without parsing.

    Parameters
    ----------
    docword : str or path-like
        The UCI ``docword`` file (only read).
    cache_dir : str or path-like
        Directory to hold the cache (created if missing).
    chunk_size : int
        Records per parsing chunk while building.

    Returns
    -------
    path : pathlib.Path
        The cache directory.

    Raises
    ------
    UCIFormatError
        If the file is malformed (see :func:`iter_uci_docword`).
    """
    src = Path(docword)
    st = src.stat()
    root = Path(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{src.name}.spcacache"
    stamp = {"source": str(src.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    if (target / _CACHE_META).exists():
        try:
            meta = json.loads((target / _CACHE_META).read_text())
        except ValueError:
            meta = {}
        if meta.get("version") == _CACHE_VERSION and all(
            meta.get(k) == v for k, v in stamp.items()
        ):
            return target
    if target.exists():
        foreign = ["(a file, not a directory)"] if not target.is_dir() else sorted(
            p.name for p in target.iterdir()
            if p.name not in ("doc.npy", "word.npy", "count.npy", _CACHE_META))
        if foreign:
            raise FileExistsError(f"{target} exists and is not an spca cache ({foreign[0]!r}); "
                                  "refusing to replace it")
    header = read_uci_header(src)
    tmp = _shared_tmpdir(root, src.name)
    try:
        arrays = {
            name: np.lib.format.open_memmap(tmp / f"{name}.npy", mode="w+", dtype=np.int32,
                                            shape=(header.nnz,))
            for name in ("doc", "word", "count")
        }
        pos = 0
        for chunk in iter_uci_docword(src, chunk_size):
            n = len(chunk.doc)
            arrays["doc"][pos:pos + n] = chunk.doc
            arrays["word"][pos:pos + n] = chunk.word
            arrays["count"][pos:pos + n] = chunk.count
            pos += n
        if pos != header.nnz:  # pragma: no cover - the reader checks NNZ
            raise UCIFormatError(src, f"read {pos} records, header says {header.nnz}")
        for arr in arrays.values():
            arr.flush()
        del arrays
        meta = {"version": _CACHE_VERSION, "n_docs": header.n_docs,
                "n_words": header.n_words, "nnz": header.nnz, **stamp}
        (tmp / _CACHE_META).write_text(json.dumps(meta, indent=1))
        if target.exists():  # an out-of-date cache: only its own files are deleted
            for name in ("doc.npy", "word.npy", "count.npy", _CACHE_META):
                with contextlib.suppress(FileNotFoundError):
                    (target / name).unlink()
            target.rmdir()  # OSError if anything else is in it: not ours to delete
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target
