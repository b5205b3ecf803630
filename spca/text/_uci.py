"""Streaming reader and writer of the UCI "Bag of Words" format.

A ``docword`` file (plain text or gzip) holds

.. code-block:: text

    D
    W
    NNZ
    docID wordID count      <- NNZ lines, 1-based ids, sorted by docID then wordID

and a ``vocab`` file holds W lines, line ``k`` being word ``k``.

The body is parsed a block of bytes at a time: a block is cut at its last
newline and handed whole to a compiled parser of well-formed records
(``parse_records`` in ``_cooccur.pyx``), or, when it holds anything else, to
numpy's C parser (:func:`numpy.loadtxt`), so there is no Python loop over
lines.  Decompression and file reading run in a
background thread (zlib and file reads release the GIL), overlapping with the
parsing.  Python-level line scanning only happens after a problem has been
detected, to name the offending line.
"""

from __future__ import annotations

import gzip
import io
import os
import queue
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._cooccur import parse_records
from ._corpus import Corpus

__all__ = [
    "DocumentChunk",
    "UCIFormatError",
    "UCIHeader",
    "iter_uci_docword",
    "load_uci_bow",
    "read_uci_header",
    "read_uci_vocabulary",
    "write_uci",
]

_INT32_MAX = int(np.iinfo(np.int32).max)
#: The number of documents or words of a corpus may exceed its number of
#: records (empty documents, unused words), but not by more than this factor
#: above ``_SIZE_FLOOR``: arrays of that length are allocated before any record
#: is read, so a corrupt or hostile header must not size them alone.
_SIZE_PER_RECORD = 64
_SIZE_FLOOR = 1 << 22
#: Shortest record line ("1 1 1\n") and the largest deflate expansion ratio.
_MIN_RECORD_BYTES = 6
_MAX_GZIP_RATIO = 1032


def check_corpus_size(what: str, value: int, nnz: int) -> str | None:
    """A problem with ``value`` documents or words for ``nnz`` records, or None."""
    limit = max(_SIZE_FLOOR, _SIZE_PER_RECORD * nnz)
    if value > limit:
        return (f"{what}={value} for only {nnz} records: more than {limit} (at most "
                f"{_SIZE_PER_RECORD} per record, or {_SIZE_FLOOR}) is refused, as arrays of "
                "that length would be allocated (corrupt header or index?)")
    return None
_FIELDS = ("docID", "wordID", "count")
#: Bytes of text per record assumed when turning a record count into a block size.
_BYTES_PER_RECORD = 12
DEFAULT_CHUNK_SIZE = 1 << 20


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (libraries' messages may have more)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class UCIFormatError(ValueError):
    """A UCI bag-of-words file is malformed.

    The message names the file and, when known, the (1-based) line number and
    the (1-based) record number (record ``k`` is the ``k``-th ``docID wordID
    count`` triple; it is on line ``k + 3`` when the file has no blank lines).

    Attributes
    ----------
    path : str
        The file.
    line : int or None
        1-based line number of the problem, if known.
    record : int or None
        1-based record number of the problem, if known.
    """

    def __init__(
        self, path: str | os.PathLike, message: str, *, line: int | None = None,
        record: int | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.record = record
        where = self.path
        if line is not None:
            where += f", line {line}"
        if record is not None:
            where += f" (record {record})"
        super().__init__(f"{where}: {message}")


class UCIHeader(NamedTuple):
    """The three header numbers of a UCI ``docword`` file."""

    n_docs: int
    n_words: int
    nnz: int


class DocumentChunk(NamedTuple):
    """A block of whole documents, as 0-based coordinate (triplet) arrays.

    Attributes
    ----------
    row_start, row_stop : int
        The chunk covers documents ``row_start <= d < row_stop``; documents
        of that range without a record are empty.  Successive chunks of one
        pass tile ``0 .. n_docs`` exactly, so every document belongs to one
        chunk, including empty documents.
    doc : ndarray of int
        0-based document index of each record, non-decreasing.
    word : ndarray of int
        0-based word index of each record (increasing within a document for
        UCI files).
    count : ndarray
        The value of each record (positive integer counts for UCI files).
    """

    row_start: int
    row_stop: int
    doc: NDArray[np.integer]
    word: NDArray[np.integer]
    count: NDArray


# --------------------------------------------------------------------------
# byte streams
# --------------------------------------------------------------------------


class _Stream:
    """Context manager giving ``read(n)`` on a (possibly gzip) file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._raw: io.BufferedIOBase | None = None
        self._fh: io.BufferedIOBase | None = None

    def __enter__(self) -> _Stream:
        self._raw = open(self.path, "rb")  # noqa: SIM115
        magic = self._raw.peek(2)[:2]
        self.is_gzip = magic == b"\x1f\x8b"
        self._fh = gzip.GzipFile(fileobj=self._raw, mode="rb") if self.is_gzip else self._raw
        return self

    def read(self, n: int) -> bytes:
        assert self._fh is not None
        return self._fh.read(n)

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None and self._fh is not self._raw:
            self._fh.close()
        if self._raw is not None:
            self._raw.close()


_STREAM_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def _prefetch(read: Callable[[int], bytes], nbytes: int, depth: int = 2,
              piece: int = 1 << 16) -> Iterator[bytes]:
    """Yield blocks of about ``nbytes`` bytes read ahead by a worker thread.

    Each block is assembled from ``read(piece)`` calls, so when ``read``
    fails (truncated or corrupt gzip) the data decoded before the failure,
    to within ``piece`` bytes, is still delivered before the exception is
    re-raised in the consumer.  Yields an empty ``bytes`` at end of file.
    """
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple) -> None:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def work() -> None:
        while not stop.is_set():
            parts: list[bytes] = []
            size = 0
            try:
                while size < nbytes:
                    data = read(min(piece, nbytes - size))
                    if not data:
                        break
                    parts.append(data)
                    size += len(data)
            except BaseException as exc:  # forwarded to the consumer
                if parts:
                    put((None, b"".join(parts)))
                put((exc, b""))
                return
            block = b"".join(parts) if len(parts) != 1 else parts[0]
            put((None, block))
            if not block:
                return

    worker = threading.Thread(target=work, name="spca-uci-reader", daemon=True)
    worker.start()
    try:
        while True:
            exc, data = q.get()
            if exc is not None:
                raise exc
            yield data
            if not data:
                return
    finally:
        stop.set()
        worker.join()


# --------------------------------------------------------------------------
# header and diagnostics
# --------------------------------------------------------------------------

_HEADER_NAMES = (
    "the number of documents D",
    "the number of words W",
    "the number of nonzeros NNZ",
)


def _parse_header_lines(path: Path, lines: list[bytes]) -> UCIHeader:
    values = []
    for i, name in enumerate(_HEADER_NAMES):
        if i >= len(lines):
            raise UCIFormatError(
                path, f"file ends in the header: expected {name} on line {i + 1}", line=i + 1
            )
        text = lines[i].strip()
        if not text.isdigit():
            shown = text.decode("ascii", "replace")[:60]
            raise UCIFormatError(
                path, f"expected {name} (a non-negative integer), got {shown!r}", line=i + 1
            )
        values.append(int(text))
    header = UCIHeader(*values)
    if header.n_docs == 0 or header.n_words == 0 or header.nnz == 0:
        raise UCIFormatError(
            path,
            f"empty corpus: header declares D={header.n_docs}, W={header.n_words}, "
            f"NNZ={header.nnz} (all three must be positive)",
            line=1,
        )
    if header.n_docs > _INT32_MAX or header.n_words > _INT32_MAX:
        raise UCIFormatError(path, "D and W must be below 2**31", line=1)
    for what, value, line in (("D", header.n_docs, 1), ("W", header.n_words, 2)):
        problem = check_corpus_size(what, value, header.nnz)
        if problem:
            raise UCIFormatError(path, problem, line=line)
    try:
        size = path.stat().st_size
    except OSError:
        size = None
    if size is not None:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        room = size * (_MAX_GZIP_RATIO if gz else 1) // _MIN_RECORD_BYTES
        if header.nnz > max(room, _SIZE_FLOOR):  # small ones: the reader finds the end
            raise UCIFormatError(
                path, f"header declares NNZ={header.nnz} records, but a file of {size} bytes"
                      f"{' (gzip)' if gz else ''} holds at most {room}", line=3)
    return header


def read_uci_header(docword: str | os.PathLike) -> UCIHeader:
    """Read the three header numbers ``D``, ``W``, ``NNZ`` of a ``docword`` file.

    Parameters
    ----------
    docword : str or path-like
        A UCI ``docword`` file, plain text or gzip-compressed (detected from
        the content, not the name).

    Returns
    -------
    header : UCIHeader
        Named tuple ``(n_docs, n_words, nnz)``.

    Raises
    ------
    UCIFormatError
        If the header is missing, not made of non-negative integers, or
        declares an empty corpus, or if the gzip stream is corrupt.
    """
    path = Path(docword)
    with _Stream(path) as stream:
        buf = b""
        try:
            while buf.count(b"\n") < 3:
                data = stream.read(4096)
                if not data:
                    break
                buf += data
        except _STREAM_ERRORS as exc:
            why = _first_line(exc)
            raise UCIFormatError(path, f"truncated or corrupt gzip data ({why})") from exc
    if not buf.strip():
        raise UCIFormatError(path, "file is empty: expected the header D, W, NNZ", line=1)
    return _parse_header_lines(path, buf.split(b"\n")[:3])


def _token_problem(token: str, name: str) -> str | None:
    if token.isascii() and token.isdigit():
        if int(token) > _INT32_MAX:
            return f"{name} {token} is too large (above 2**31 - 1)"
        return None
    body = token[1:] if token[:1] in "+-" else token
    if token.startswith("-") and body.isascii() and body.isdigit():
        return f"negative {name} {token}"
    try:
        float(token)
    except ValueError:
        return f"{name} {token!r} is not an integer"
    return f"non-integer {name} {token!r}"


def _diagnose(path: Path, block: bytes, first_line: int, first_record: int,
              fallback: str) -> UCIFormatError:
    """Find the first unparseable line of ``block`` (slow; error path only)."""
    record = first_record
    for offset, raw in enumerate(block.split(b"\n")):
        line = first_line + offset
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != 3:
            return UCIFormatError(
                path,
                f"expected 3 fields 'docID wordID count', found {len(fields)}: {text[:80]!r}",
                line=line, record=record,
            )
        for token, name in zip(fields, _FIELDS, strict=True):
            problem = _token_problem(token, name)
            if problem is not None:
                return UCIFormatError(path, problem, line=line, record=record)
        record += 1
    return UCIFormatError(path, f"cannot parse block: {fallback}", line=first_line)


def _line_of_record(block: bytes, first_line: int, k: int) -> int:
    """1-based line number of the ``k``-th (0-based) record of ``block``."""
    seen = 0
    for offset, raw in enumerate(block.split(b"\n")):
        if raw.strip():
            if seen == k:
                return first_line + offset
            seen += 1
    return first_line  # pragma: no cover - k is always within the block


# --------------------------------------------------------------------------
# the record stream
# --------------------------------------------------------------------------


class _RecordParser:
    """Validates consecutive parsed blocks of one file."""

    def __init__(self, path: Path, header: UCIHeader) -> None:
        self.path = path
        self.header = header
        self.n_records = 0
        self.last_key = -1  # (doc, word) key of the previous record
        self.stride = header.n_words + 1

    def parse(self, block: bytes, first_line: int) -> NDArray[np.int32]:
        path, header = self.path, self.header
        if not block or block.isspace():  # (block.strip() would copy it)
            return np.empty((0, 3), dtype=np.int32)
        # The compiled parser reads well-formed blocks (about 10 times faster
        # than loadtxt on the NYT sample); any other block goes to loadtxt,
        # whose error is diagnosed below.
        arr = np.empty((block.count(b"\n") + 1, 3), dtype=np.int32)
        n = parse_records(block, arr)
        if n >= 0:
            arr = arr[:n]
        else:
            try:
                arr = np.loadtxt(io.BytesIO(block), dtype=np.int32, comments=None, ndmin=2)
            except ValueError as exc:
                raise _diagnose(path, block, first_line, self.n_records + 1,
                                str(exc)) from None
        if arr.shape[1] != 3:
            raise _diagnose(path, block, first_line, self.n_records + 1,
                            f"{arr.shape[1]} columns")

        def fail(k: int, message: str) -> UCIFormatError:
            return UCIFormatError(
                path, message, line=_line_of_record(block, first_line, k),
                record=self.n_records + k + 1,
            )

        n = arr.shape[0]
        if self.n_records + n > header.nnz:
            k = header.nnz - self.n_records
            raise fail(k, f"more records than the header's NNZ={header.nnz}")
        doc, word, count = arr[:, 0], arr[:, 1], arr[:, 2]
        for values, name, hi in ((doc, "docID", header.n_docs), (word, "wordID", header.n_words)):
            bad = (values < 1) | (values > hi)
            if bad.any():
                k = int(np.argmax(bad))
                raise fail(k, f"{name} {values[k]} out of range 1..{hi} (header "
                              f"{'D' if name == 'docID' else 'W'}={hi})")
        bad = count < 1
        if bad.any():
            k = int(np.argmax(bad))
            what = "negative count" if count[k] < 0 else "zero count"
            raise fail(k, f"{what} {count[k]}: counts must be positive integers")
        key = doc.astype(np.int64) * self.stride + word
        step = np.diff(key, prepend=self.last_key)
        bad = step <= 0
        if bad.any():
            k = int(np.argmax(bad))
            prev_key = int(key[k - 1]) if k > 0 else self.last_key
            prev_doc, prev_word = divmod(prev_key, self.stride)
            if step[k] == 0:
                msg = f"duplicate pair (docID {doc[k]}, wordID {word[k]})"
            elif doc[k] < prev_doc:
                msg = (f"documents not sorted: docID {doc[k]} follows docID {prev_doc} "
                       "(records must be sorted by docID, then wordID)")
            else:
                msg = (f"words not sorted within document {doc[k]}: wordID {word[k]} "
                       f"follows wordID {prev_word}")
            raise fail(k, msg)
        self.last_key = int(key[-1])
        self.n_records += n
        return arr


def _iter_blocks(path: Path, block_bytes: int,
                 ) -> Iterator[tuple[UCIHeader, NDArray[np.int32] | None]]:
    """Yield ``(header, records)``; records is an ``(n, 3)`` int32 array (1-based).

    The first item carries ``records=None`` (the header alone).
    """
    block_bytes = max(int(block_bytes), 16)
    with _Stream(path) as stream:
        buf = b""
        line_no = 0  # lines fully consumed
        header: UCIHeader | None = None
        parser: _RecordParser | None = None
        reads = _prefetch(stream.read, block_bytes)
        try:
            for data in reads:
                eof = not data
                buf += data
                if header is None:
                    if buf.count(b"\n") < 3 and not eof:
                        continue
                    if not buf or buf.isspace():  # (buf.strip() would copy a block)
                        raise UCIFormatError(
                            path, "file is empty: expected the header D, W, NNZ", line=1
                        )
                    parts = buf.split(b"\n", 3)
                    header = _parse_header_lines(path, parts[:3])
                    buf = parts[3] if len(parts) == 4 else b""
                    line_no = 3
                    parser = _RecordParser(path, header)
                    yield header, None
                assert parser is not None
                if eof:
                    block, buf = buf, b""
                else:
                    cut = buf.rfind(b"\n")
                    if cut < 0:
                        continue
                    block, buf = buf[: cut + 1], buf[cut + 1:]
                if block:
                    arr = parser.parse(block, line_no + 1)
                    line_no += block.count(b"\n") + (not block.endswith(b"\n"))
                    if arr.shape[0]:
                        yield header, arr
        except _STREAM_ERRORS as exc:
            raise UCIFormatError(
                path,
                f"truncated or corrupt gzip data ({_first_line(exc)}) after line {line_no}",
                line=line_no + 1,
            ) from exc
        finally:
            reads.close()
    assert parser is not None and header is not None
    if parser.n_records < header.nnz:
        raise UCIFormatError(
            path,
            f"header declares NNZ={header.nnz} records but the file ends after "
            f"{parser.n_records} (truncated file?)",
            line=line_no + 1, record=parser.n_records + 1,
        )


def iter_uci_docword(
    docword: str | os.PathLike, chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Iterator[DocumentChunk]:
    """Stream a UCI ``docword`` file as chunks of whole documents.

    Parameters
    ----------
    docword : str or path-like
        A UCI ``docword`` file, plain or gzip-compressed (detected from its
        first bytes).  It is only read.
    chunk_size : int, default 2**20
        Approximate number of records per chunk; the file is read in blocks
        of about ``12 * chunk_size`` bytes.  A chunk always holds whole
        documents (the records of a document that straddles a block boundary
        are carried over to the next chunk), so a chunk may be larger than
        ``chunk_size`` when a document is.

    Yields
    ------
    chunk : DocumentChunk
        ``(row_start, row_stop, doc, word, count)`` with 0-based int32 ids
        and int32 counts.  The row ranges of the successive chunks tile
        ``0 .. D``; the last chunk may hold no records (trailing empty
        documents).

    Raises
    ------
    UCIFormatError
        For a malformed file, naming the file and the line (and record):
        empty file or corpus (``D``, ``W`` or ``NNZ`` zero), header that
        disagrees with the body (more or fewer records than ``NNZ``, ids
        above ``D`` or ``W``), ids that are zero, counts that are zero,
        negative or not integers, lines that do not hold three fields,
        records not sorted by ``(docID, wordID)`` or duplicate pairs, and
        truncated or corrupt gzip data.  Blank lines are allowed.  Errors
        found late in the file are raised after the earlier chunks have been
        yielded.

    Examples
    --------
    >>> from spca.datasets import load_nytimes_sample
    >>> path = load_nytimes_sample().docword_path
    >>> nnz = sum(len(c.doc) for c in iter_uci_docword(path))
    >>> nnz
    963063
    """
    path = Path(docword)
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    header: UCIHeader | None = None
    row_start = 0
    carry: list[NDArray[np.int32]] = []
    for hdr, arr in _iter_blocks(path, int(chunk_size) * _BYTES_PER_RECORD):
        if arr is None:
            header = hdr
            continue
        last_doc = arr[-1, 0]
        cut = int(np.searchsorted(arr[:, 0], last_doc, side="left"))
        if cut == 0:
            carry.append(arr)
            continue
        recs = np.concatenate([*carry, arr[:cut]]) if carry else arr[:cut]
        carry = [arr[cut:]]
        row_stop = int(recs[-1, 0])  # 1-based last doc == 0-based stop
        yield _make_chunk(row_start, row_stop, recs)
        row_start = row_stop
    assert header is not None
    recs = np.concatenate(carry) if carry else np.empty((0, 3), dtype=np.int32)
    if len(recs) or row_start < header.n_docs:
        yield _make_chunk(row_start, header.n_docs, recs)


def _make_chunk(row_start: int, row_stop: int, recs: NDArray[np.int32]) -> DocumentChunk:
    doc = recs[:, 0] - np.int32(1)
    word = recs[:, 1] - np.int32(1)
    count = np.ascontiguousarray(recs[:, 2])
    return DocumentChunk(row_start, row_stop, doc, word, count)


# --------------------------------------------------------------------------
# vocabulary and whole-file loading
# --------------------------------------------------------------------------


def read_uci_vocabulary(
    vocab: str | os.PathLike, n_words: int | None = None,
) -> NDArray[np.str_]:
    """Read a UCI ``vocab`` file: one word per line.

    Parameters
    ----------
    vocab : str or path-like
        The vocabulary file, UTF-8 text, plain or gzip-compressed.  A final
        newline is optional; ``\\r\\n`` line ends are accepted.
    n_words : int, optional
        The expected number of words (the ``W`` of the ``docword`` header).

    Returns
    -------
    words : ndarray of str of shape (n_words,)

    Raises
    ------
    UCIFormatError
        If the file has a number of lines different from ``n_words``, or an
        empty line (naming its line number), or is not valid UTF-8.
    """
    path = Path(vocab)
    with _Stream(path) as stream:
        try:
            data = stream.read(-1)
        except _STREAM_ERRORS as exc:
            why = _first_line(exc)
            raise UCIFormatError(path, f"truncated or corrupt gzip data ({why})") from exc
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is not part of the first word
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UCIFormatError(path, f"not valid UTF-8 ({exc.reason})", line=line) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    words = [w.rstrip("\r") for w in lines]
    if n_words is not None and len(words) != n_words:
        raise UCIFormatError(
            path, f"vocabulary has {len(words)} lines but the docword header declares "
                  f"W={n_words} words",
        )
    for i, w in enumerate(words):
        if not w.strip():
            raise UCIFormatError(path, "empty word", line=i + 1)
    return np.asarray(words, dtype=str)


def load_uci_bow(
    docword: str | os.PathLike,
    vocab: str | os.PathLike | None = None,
    *,
    dtype: np.dtype | type = np.float64,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    name: str | None = None,
) -> Corpus:
    """Load a UCI bag-of-words corpus into a sparse matrix.

    Parameters
    ----------
    docword : str or path-like
        The ``docword`` file (plain or gzip), see :func:`iter_uci_docword`.
    vocab : str or path-like, optional
        The matching ``vocab`` file; must have ``W`` lines.
    dtype : dtype, default float64
        dtype of the matrix values.
    chunk_size : int
        Records per parsing chunk (memory/speed trade-off only).
    name : str, optional
        Name of the corpus; defaults to the file name.

    Returns
    -------
    corpus : Corpus
        ``corpus.counts`` is a canonical ``scipy.sparse.csr_array`` of shape
        ``(D, W)`` (documents x words, 0-based), ``corpus.vocabulary`` the
        words (or None).

    Raises
    ------
    UCIFormatError
        For any malformed input, see :func:`iter_uci_docword` and
        :func:`read_uci_vocabulary`.
    """
    path = Path(docword)
    header = read_uci_header(path)
    vocabulary = None
    if vocab is not None:
        vocabulary = read_uci_vocabulary(vocab, header.n_words)
    idx_dtype = np.int32 if max(header.nnz, header.n_words) <= _INT32_MAX else np.int64
    indices = np.empty(header.nnz, dtype=idx_dtype)
    data = np.empty(header.nnz, dtype=dtype)
    row_counts = np.zeros(header.n_docs, dtype=np.int64)
    pos = 0
    for chunk in iter_uci_docword(path, chunk_size):
        n = len(chunk.doc)
        indices[pos:pos + n] = chunk.word
        data[pos:pos + n] = chunk.count
        row_counts[chunk.row_start:chunk.row_stop] = np.bincount(
            chunk.doc - chunk.row_start, minlength=chunk.row_stop - chunk.row_start
        )
        pos += n
    indptr = np.zeros(header.n_docs + 1, dtype=idx_dtype)
    np.cumsum(row_counts, out=indptr[1:])
    counts = sp.csr_array((data, indices, indptr), shape=(header.n_docs, header.n_words))
    counts.has_sorted_indices = True
    counts.has_canonical_format = True
    if name is None:
        name = path.name.removesuffix(".gz").removesuffix(".txt").removeprefix("docword.")
    return Corpus(counts=counts, vocabulary=vocabulary, name=name, docword_path=path,
                  vocab_path=None if vocab is None else Path(vocab))


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------


def _checked_counts(data: NDArray) -> NDArray[np.int64]:
    """The counts as int64, each a whole number in [0, 2**31 - 1] (what
    :func:`load_uci_bow` accepts); otherwise a ValueError naming the value.

    Compared in the counts' own dtype, before any cast: a cast of 2**63 + 5
    (uint64) or of 1e19 (float) to int64 wraps around silently.
    """
    if data.dtype == np.bool_:
        return data.astype(np.int64)
    if not (np.issubdtype(data.dtype, np.integer) or np.issubdtype(data.dtype, np.floating)):
        raise ValueError(f"counts must be integers, got dtype {data.dtype}")
    if np.issubdtype(data.dtype, np.floating):
        bad = ~np.isfinite(data)
        if bad.any():
            raise ValueError(f"counts must be finite, got {data[bad][0].item()!r}")
        bad = data != np.floor(data)
        if bad.any():
            raise ValueError(f"counts must be whole numbers, got {data[bad][0].item()!r}")
    bad = data < 0
    if bad.any():
        raise ValueError(f"counts must be non-negative, got {data[bad][0].item()!r}")
    bad = data > _INT32_MAX
    if bad.any():
        raise ValueError(
            f"count {data[bad][0].item()!r} is too large: load_uci_bow reads counts up to "
            f"2**31 - 1 = {_INT32_MAX}"
        )
    return data.astype(np.int64)


def _format_records(doc: NDArray, word: NDArray, count: NDArray) -> bytes:
    """Format ``doc word count\\n`` lines with vectorised digit extraction."""
    cols = []
    for values in (doc, word, count):
        v = values.astype(np.int64, copy=False)
        width = max(1, len(str(int(v.max())))) if len(v) else 1
        pow10 = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
        digits = (v[:, None] // pow10) % 10
        chars = (digits + 48).astype(np.uint8)
        # leading zeros become padding (0 bytes), except the units digit
        pad = v[:, None] < pow10
        pad[:, -1] = False
        chars[pad] = 0
        cols.append(chars)
    n = len(doc)
    sep = np.full((n, 1), 32, dtype=np.uint8)
    nl = np.full((n, 1), 10, dtype=np.uint8)
    lines = np.concatenate([cols[0], sep, cols[1], sep, cols[2], nl], axis=1)
    return lines[lines != 0].tobytes()


def _atomic_writer(path: Path, compresslevel: int):
    """Return (tmp_path, file object) writing text to a temporary file next to path."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    # mkstemp's mode is 0600; the file gets the mode open() would give it
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    raw = os.fdopen(fd, "wb")
    if path.name.endswith(".gz"):
        return Path(tmp), raw, gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0
        )
    return Path(tmp), raw, raw


def write_uci(
    path_docword: str | os.PathLike,
    path_vocab: str | os.PathLike | None,
    counts: ArrayLike | sp.sparray | sp.spmatrix,
    vocabulary: ArrayLike | None = None,
    *,
    compresslevel: int = 6,
    chunk_size: int = 1 << 20,
) -> None:
    """Write a corpus in the UCI bag-of-words format, atomically.

    Parameters
    ----------
    path_docword : str or path-like
        Output ``docword`` file; gzip-compressed if the name ends in ``.gz``.
    path_vocab : str or path-like or None
        Output ``vocab`` file (``W`` lines; gzip if the name ends in ``.gz``).
        Not written when None.
    counts : sparse matrix or array-like of shape (D, W)
        Non-negative integer counts (documents x words), at most
        ``2**31 - 1`` each (the largest count :func:`load_uci_bow` reads).
        Zeros are not written; integer-valued floats are accepted.
    vocabulary : sequence of str of length W, optional
        Required when ``path_vocab`` is given.  Words must be non-empty and
        contain no newline.
    compresslevel : int, default 6
        gzip level for ``.gz`` outputs.
    chunk_size : int
        Records formatted per step (memory/speed trade-off only).

    Raises
    ------
    ValueError
        If ``counts`` holds negative, non-integer, non-finite or too large
        (above ``2**31 - 1``) values, naming the first such value; if the
        corpus is empty, or if the vocabulary does not fit.

    Notes
    -----
    Each file is written to a temporary file in the destination directory,
    then moved into place with :func:`os.replace`, so readers never see a
    partial file.  Formatting is vectorised (no Python loop per line).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, tempfile, os
    >>> X = sp.csr_array(np.array([[1, 0, 2], [0, 0, 0], [0, 3, 0]]))
    >>> d = tempfile.mkdtemp()
    >>> write_uci(os.path.join(d, "docword.t.txt"), None, X)
    >>> print(open(os.path.join(d, "docword.t.txt")).read(), end="")
    3
    3
    3
    1 1 1
    1 3 2
    3 2 3
    """
    X = sp.csr_array(counts, copy=True)  # never modify the caller's arrays
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    D, W = X.shape
    data = _checked_counts(X.data)
    if D == 0 or W == 0 or X.nnz == 0:
        raise ValueError(f"refusing to write an empty corpus (D={D}, W={W}, NNZ={X.nnz})")
    words: list[str] | None = None
    if path_vocab is not None:
        if vocabulary is None:
            raise ValueError("vocabulary is required to write path_vocab")
        words = [str(w) for w in np.asarray(vocabulary).ravel()]
        if len(words) != W:
            raise ValueError(f"vocabulary has {len(words)} words, counts has W={W} columns")
        for w in words:
            if not w.strip() or "\n" in w or "\r" in w:
                raise ValueError(f"invalid word {w!r}: words must be non-empty single lines")

    targets: list[tuple[Path, Callable]] = []

    def write_docword(fh) -> None:
        fh.write(f"{D}\n{W}\n{X.nnz}\n".encode("ascii"))
        for start in range(0, X.nnz, chunk_size):
            stop = min(start + chunk_size, X.nnz)
            rows = np.searchsorted(X.indptr, np.arange(start, stop), side="right")
            fh.write(_format_records(rows, X.indices[start:stop] + 1, data[start:stop]))

    targets.append((Path(path_docword), write_docword))
    if words is not None:
        payload = ("\n".join(words) + "\n").encode("utf-8")
        targets.append((Path(path_vocab), lambda fh: fh.write(payload)))

    for path, fill in targets:
        tmp, raw, fh = _atomic_writer(path, compresslevel)
        try:
            with raw:
                fill(fh)
                if fh is not raw:
                    fh.close()
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
