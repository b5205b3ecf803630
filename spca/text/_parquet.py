"""Sharded Parquet corpora: the layout, a converter and a streaming reader.

Layout
------
A corpus is a Parquet *dataset*: one ``.parquet`` file, or a directory of
``*.parquet`` files (*shards*), each with the columns

``doc``    integer, 0-based document index;
``word``   integer, 0-based word index;
``count``  the value (a non-negative number; a zero is skipped).

One row per (document, word) pair.  **A document's rows must all be in one
shard** (shards hold disjoint ranges of documents): the per-document
normalisations need all the words of a document together, so the reader
checks it and refuses overlapping shards, naming both files.  Within a shard
the rows may be in any order (they are sorted by document, then word, while
read; a shard whose row groups are already ordered by document, as the
converter writes them, is streamed one row group at a time, otherwise it is
read whole).

:func:`write_parquet` (and the ``spca convert`` command) write, besides the
shards ``part-00000.parquet``, ... (documents sorted, row groups of at most
``chunk_size`` rows, about equal numbers of nonzeros per shard, cut only
between documents), a manifest ``_spca.json`` with ``n_docs``, ``n_words``,
``nnz`` and the list of shards with their document ranges and row counts,
and the same information per file as Parquet key-value metadata
(``spca.row_start``, ``spca.row_stop``, ``spca.n_docs``, ``spca.n_words``,
``spca.nnz``, ``spca.version``).  Foreign datasets without this metadata are
read too: the number of documents and words is then the largest index plus
one unless given (:func:`open_parquet`).

pyarrow is imported only when a Parquet dataset is read or written; it comes
with ``pip install "spca[dask]"`` (or ``"spca[parquet]"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._readers import _CACHE_META, _Source
from ._uci import DocumentChunk, _first_line, check_corpus_size

__all__ = ["PARQUET_MANIFEST", "is_parquet_dataset", "open_parquet"]

PARQUET_MANIFEST = "_spca.json"
_FORMAT = "spca-parquet"
_VERSION = 1
_COLUMNS = ("doc", "word", "count")
_COMPRESSIONS = ("zstd", "snappy", "gzip", "lz4", "none")
#: Largest count read: the sum of the squares of 1e12 of them stays finite.
_MAX_COUNT = 1e148


def _pyarrow() -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``, or an ImportError telling how to get them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            'Parquet corpora need pyarrow: pip install "spca[dask]" (or "spca[parquet]")'
        ) from exc
    return pa, pq


def is_parquet_dataset(path: str | os.PathLike) -> bool:
    """Whether ``path`` looks like a Parquet corpus (a ``.parquet`` file, or a
    directory with a manifest or ``*.parquet`` files and no cache marker)."""
    p = Path(path)
    if p.is_file():
        return p.suffix == ".parquet" or _has_parquet_magic(p)
    if p.is_dir():
        if (p / _CACHE_META).exists():
            return False
        return (p / PARQUET_MANIFEST).exists() or any(_shard_files(p))
    return False


def _has_parquet_magic(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError:
        return False


def _shard_files(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.glob("*.parquet")
        if p.is_file() and not p.name.startswith((".", "_"))
    )


# --------------------------------------------------------------------------
# pieces: picklable descriptions of a block of documents, read where they run
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _EmptyPiece:
    """Documents ``row_start <= d < row_stop`` with no record (a gap between shards)."""

    row_start: int
    row_stop: int
    label: str = "empty documents"

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        empty = np.empty(0, dtype=np.int64)
        yield DocumentChunk(self.row_start, self.row_stop, empty, empty, empty)


@dataclass(frozen=True)
class _ShardPiece:
    """One Parquet file holding documents ``row_start <= d < row_stop``.

    ``nnz`` is the number of rows the file must have (from the manifest or
    its footer), checked when it is read; ``n_words`` bounds the word
    indices.
    """

    path: str
    row_start: int
    row_stop: int
    n_words: int
    nnz: int | None = None
    #: Written by :func:`write_parquet` (listed in a manifest): row groups in
    #: document order, checked while streaming instead of from the footer's
    #: column statistics (reading those from some corrupt footers aborts the
    #: process inside pyarrow 26).
    ordered: bool = False

    @property
    def label(self) -> str:
        return self.path

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        return _iter_shard(self, int(chunk_size))


def _open_parquet_file(path: str) -> Any:
    _, pq = _pyarrow()
    if not os.path.exists(path):
        raise FileNotFoundError(f"missing shard: {path}")
    try:
        # pages written with a CRC (as write_parquet does) are verified when read
        return pq.ParquetFile(path, page_checksum_verification=True)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise ValueError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from exc


def _check_schema(pf: Any, path: str) -> None:
    pa, _ = _pyarrow()
    schema = pf.schema_arrow
    missing = [c for c in _COLUMNS if c not in schema.names]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {', '.join(missing)} (found: "
            f"{', '.join(schema.names) or 'none'}; need doc, word, count)"
        )
    for name in ("doc", "word"):
        if not pa.types.is_integer(schema.field(name).type):
            raise ValueError(
                f"{path}: column {name!r} must be integers, not {schema.field(name).type}"
            )
    ctype = schema.field("count").type
    if not (pa.types.is_integer(ctype) or pa.types.is_floating(ctype)):
        raise ValueError(f"{path}: column 'count' must be numeric, not {ctype}")


def _group_ranges(pf: Any, column: str = "doc") -> list[tuple[int, int]] | None:
    """Per non-empty row group ``(min, max)`` of ``column`` from the footer
    statistics, or None when a group has none."""
    md = pf.metadata
    col = pf.schema_arrow.get_field_index(column)
    ranges = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        if rg.num_rows == 0:
            continue
        st = rg.column(col).statistics
        if st is None or not st.has_min_max:
            return None
        ranges.append((int(st.min), int(st.max)))
    return ranges


def _read(path: str, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"missing shard: {path}") from exc
    except Exception as exc:
        why = _first_line(exc)
        raise ValueError(f"{path}: cannot read {what}, corrupt or truncated file ({why})") \
            from exc


def _arrays(table: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    def col(name: str) -> np.ndarray:
        return table.column(name).to_numpy()

    return col("doc"), col("word"), col("count")


def _sort_and_check(piece: _ShardPiece, doc: np.ndarray, word: np.ndarray,
                    count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check ranges and values, drop zeros, sort by (doc, word) if needed."""
    path = piece.path
    for name, values in (("doc", doc), ("word", word)):
        if not np.issubdtype(values.dtype, np.integer):  # pyarrow gives floats for nulls
            raise ValueError(f"{path}: column {name!r} has null values")
    if len(doc) == 0:
        return doc.astype(np.int64), word.astype(np.int64), count
    if not (np.issubdtype(count.dtype, np.integer) or np.issubdtype(count.dtype, np.floating)):
        raise ValueError(f"{path}: column 'count' has nulls or a non-numeric type")
    lo, hi = int(doc.min()), int(doc.max())
    if lo < piece.row_start or hi >= piece.row_stop:
        bad = lo if lo < piece.row_start else hi
        raise ValueError(
            f"{path}: doc {bad} outside the shard's documents "
            f"{piece.row_start}..{piece.row_stop - 1}"
        )
    wlo, whi = int(word.min()), int(word.max())
    if wlo < 0 or whi >= piece.n_words:
        raise ValueError(
            f"{path}: word {wlo if wlo < 0 else whi} out of range 0..{piece.n_words - 1}"
        )
    if np.issubdtype(count.dtype, np.floating) and not np.all(np.isfinite(count)):
        raise ValueError(f"{path}: counts must be finite")
    if count.min() < 0:
        raise ValueError(f"{path}: negative count {count.min()} (counts must be >= 0)")
    if count.max() > _MAX_COUNT:
        raise ValueError(f"{path}: count {count.max()} is too large (above {_MAX_COUNT:g}: "
                         "the statistics of its square would overflow float64)")
    doc = doc.astype(np.int64, copy=False)
    word = word.astype(np.int64, copy=False)
    keep = count != 0
    if not keep.all():
        doc, word, count = doc[keep], word[keep], count[keep]
    key = doc * piece.n_words + word
    step = np.diff(key)
    if np.any(step <= 0):
        order = np.argsort(key, kind="stable")
        doc, word, count, key = doc[order], word[order], count[order], key[order]
        step = np.diff(key)
        if np.any(step == 0):
            k = int(np.argmax(step == 0))
            raise ValueError(f"{path}: duplicate pair (doc {doc[k]}, word {word[k]})")
    return doc, word, count


def _iter_shard(piece: _ShardPiece, chunk_size: int) -> Iterator[DocumentChunk]:
    """Chunks of whole documents of one shard, tiling ``row_start .. row_stop``."""
    path = piece.path
    pf = _open_parquet_file(path)
    _check_schema(pf, path)
    md = pf.metadata
    if piece.nnz is not None and md.num_rows != piece.nnz:
        raise ValueError(f"{path}: has {md.num_rows} rows, expected {piece.nnz}")
    ranges = None if piece.ordered else _group_ranges(pf)
    ordered = piece.ordered or ranges is not None and all(
        a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False)
    )
    columns = list(_COLUMNS)
    if ordered:
        tables: Any = (
            _read(path, f"row group {g}", pf.read_row_group, g, columns=columns)
            for g in range(md.num_row_groups)
        )
    else:  # rows in no known order: read the whole shard, sorted below
        tables = [_read(path, "the data", pf.read, columns=columns)]

    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    buffered = 0
    last_key = -1
    row = piece.row_start
    n_read = 0
    for table in tables:
        doc, word, count = _sort_and_check(piece, *_arrays(table))
        n_read += table.num_rows
        if len(doc) == 0:
            continue
        first = int(doc[0]) * piece.n_words + int(word[0])
        if first <= last_key:
            raise ValueError(
                f"{path}: row groups are not ordered by document although the "
                + ("manifest says" if piece.ordered else "footer statistics say")
                + " so (corrupt file?)"
            )
        last_key = int(doc[-1]) * piece.n_words + int(word[-1])
        parts.append((doc, word, count))
        buffered += len(doc)
        if buffered < chunk_size:
            continue
        doc, word, count = (np.concatenate(a) for a in zip(*parts, strict=True))
        # the last document may go on in the next row group: keep it
        limit = int(np.searchsorted(doc, doc[-1], side="left"))
        lo = 0
        while limit - lo >= chunk_size:
            cut = _cut(doc, lo, lo + chunk_size, limit)
            stop = int(doc[cut])
            yield DocumentChunk(row, stop, doc[lo:cut], word[lo:cut], count[lo:cut])
            lo, row = cut, stop
        parts = [(doc[lo:], word[lo:], count[lo:])]
        buffered = len(doc) - lo
    if n_read != md.num_rows:  # pragma: no cover - pyarrow reads every row
        raise ValueError(f"{path}: read {n_read} rows, footer says {md.num_rows}")
    if parts:
        doc, word, count = (np.concatenate(a) for a in zip(*parts, strict=True))
        lo = 0
        while len(doc) - lo > chunk_size:
            cut = _cut(doc, lo, lo + chunk_size, len(doc))
            if cut >= len(doc):
                break
            stop = int(doc[cut])
            yield DocumentChunk(row, stop, doc[lo:cut], word[lo:cut], count[lo:cut])
            lo, row = cut, stop
        yield DocumentChunk(row, piece.row_stop, doc[lo:], word[lo:], count[lo:])
    else:
        empty = np.empty(0, dtype=np.int64)
        yield DocumentChunk(row, piece.row_stop, empty, empty, empty)


def _cut(doc: np.ndarray, lo: int, target: int, limit: int) -> int:
    """A document boundary in ``(lo, limit]`` near ``target`` (sorted ``doc``)."""
    if target >= limit:
        return limit
    cut = int(np.searchsorted(doc[lo:limit], doc[target], side="left")) + lo
    if cut == lo:  # one document longer than the chunk
        cut = int(np.searchsorted(doc[lo:limit], doc[lo], side="right")) + lo
    return cut


# --------------------------------------------------------------------------
# the source
# --------------------------------------------------------------------------


class _ParquetSource(_Source):
    """A Parquet dataset (see the module documentation), streamed shard by shard."""

    def __init__(self, path: Path, shards: list[_ShardPiece], n_docs: int, n_words: int,
                 nnz: int, manifest: dict | None) -> None:
        self.path = path
        self.label = str(path)
        self.shards = shards
        self.n_docs, self.n_words, self.nnz = n_docs, n_words, nnz
        self.manifest = manifest

    def pieces(self) -> list[_ShardPiece | _EmptyPiece]:
        """The shards in document order, with the gaps between them as empty pieces."""
        out: list[_ShardPiece | _EmptyPiece] = []
        row = 0
        for s in self.shards:
            if s.row_start > row:
                out.append(_EmptyPiece(row, s.row_start))
            out.append(s)
            row = s.row_stop
        if row < self.n_docs:
            out.append(_EmptyPiece(row, self.n_docs))
        return out

    def chunks(self, chunk_size: int) -> Iterator[DocumentChunk]:
        for piece in self.pieces():
            yield from piece.chunks(chunk_size)


def _footer_info(path: Path) -> dict[str, Any]:
    """Rows, doc/word ranges and spca metadata of one file, from its footer."""
    name = str(path)
    pf = _open_parquet_file(name)
    _check_schema(pf, name)
    md = pf.metadata
    meta = {k.decode(): v.decode() for k, v in (md.metadata or {}).items()
            if k.startswith(b"spca.")}
    info: dict[str, Any] = {"path": name, "nnz": md.num_rows, "meta": meta}
    if md.num_rows == 0:
        info["doc"] = info["word"] = None
        return info
    for column in ("doc", "word"):
        ranges = _group_ranges(pf, column)
        if ranges:
            lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        else:  # no statistics: read the column
            values = _read(name, f"column {column!r}", pf.read, columns=[column])
            arr = values.column(column).to_numpy()
            lo, hi = int(arr.min()), int(arr.max())
        if lo < 0:
            raise ValueError(f"{name}: negative {column} index {lo} (indices are 0-based)")
        info[column] = (lo, hi)
    return info


def _int_meta(meta: dict[str, str], key: str, path: str) -> int | None:
    if key not in meta:
        return None
    try:
        return int(meta[key])
    except ValueError:
        raise ValueError(f"{path}: bad metadata {key}={meta[key]!r}") from None


def _check_disjoint(shards: list[_ShardPiece]) -> None:
    for a, b in zip(shards, shards[1:], strict=False):
        if b.row_start < a.row_stop:
            raise ValueError(
                f"shards {a.path} (documents {a.row_start}..{a.row_stop - 1}) and {b.path} "
                f"(documents {b.row_start}..{b.row_stop - 1}) overlap: all the words of a "
                "document must be in one shard"
            )


def _check_sizes(D: int, W: int, nnz: int, infos: list[dict[str, Any]]) -> None:
    """Refuse document or word counts far above what the records can need,
    naming the file whose index or metadata implies them."""
    for what, value, column, key in (("n_docs", D, "doc", "spca.n_docs"),
                                     ("n_words", W, "word", "spca.n_words")):
        problem = check_corpus_size(what, value, nnz)
        if problem:
            culprit = next((i["path"] for i in infos if i[column] and i[column][1] + 1 == value
                            or i["meta"].get(key) == str(value)), infos[0]["path"])
            raise ValueError(f"{culprit}: {problem}")


def _resolve(given: int | None, found: int | None, needed: int, what: str,
             where: str) -> int:
    """The number of documents/words: given, else from metadata, else inferred."""
    if given is not None:
        given = int(given)
        if found is not None and given != found:
            raise ValueError(f"{where}: {what}={given} given, but the dataset says {found}")
        if given < needed:
            raise ValueError(f"{where}: {what}={given} given, but indices go up to {needed - 1}")
        return given
    if found is not None:
        if found < needed:
            raise ValueError(f"{where}: {what}={found} in the metadata, but indices go up to "
                             f"{needed - 1}")
        return found
    return needed


def open_parquet(
    path: str | os.PathLike, *, n_docs: int | None = None, n_words: int | None = None,
) -> _ParquetSource:
    """Open a Parquet corpus (one file or a directory of shards) for streaming.

    Parameters
    ----------
    path : str or path-like
        A ``.parquet`` file or a directory of ``*.parquet`` shards (files
        whose name starts with ``.`` or ``_`` are ignored), with columns
        ``doc``, ``word``, ``count`` (see the module documentation).  With
        a manifest ``_spca.json`` (written by :func:`write_parquet`) the
        shard list, document ranges and sizes come from it and the files
        are only read when streamed; otherwise each file's footer is read.
    n_docs, n_words : int, optional
        Corpus size, for datasets without spca metadata (default: largest
        index + 1, so trailing empty documents or unused words need them).
        Must agree with the metadata when there is some.

    Returns
    -------
    source : object
        A source for :func:`~spca.text.word_statistics`,
        :func:`~spca.text.candidate_covariance`,
        :func:`~spca.text.sparse_topics` and
        :func:`~spca.text.iter_document_chunks`.

    Raises
    ------
    FileNotFoundError
        If ``path`` or a shard listed in the manifest is missing.
    ValueError
        Naming the file: not Parquet, corrupt, missing columns, negative
        indices, shards whose documents overlap, sizes that contradict the
        data, or files in the directory that the manifest does not list.
    ImportError
        If pyarrow is not installed.
    """
    _pyarrow()
    root = Path(os.path.abspath(path))  # absolute: the shards may be read by other processes
    if not root.exists():
        raise FileNotFoundError(f"no such file or directory: {root}")
    manifest_path = root / PARQUET_MANIFEST
    if root.is_dir() and manifest_path.exists():
        return _open_with_manifest(root, manifest_path, n_docs, n_words)
    if root.is_dir():
        files = _shard_files(root)
        if not files:
            raise ValueError(f"{root}: no *.parquet file in the directory")
    else:
        files = [root]
    infos = [_footer_info(f) for f in files]
    meta_docs = {_int_meta(i["meta"], "spca.n_docs", i["path"]) for i in infos} - {None}
    meta_words = {_int_meta(i["meta"], "spca.n_words", i["path"]) for i in infos} - {None}
    if len(meta_docs) > 1 or len(meta_words) > 1:
        raise ValueError(f"{root}: shards disagree on spca.n_docs/spca.n_words "
                         f"({sorted(meta_docs)}, {sorted(meta_words)})")
    max_doc = max((i["doc"][1] for i in infos if i["doc"]), default=-1)
    max_word = max((i["word"][1] for i in infos if i["word"]), default=-1)
    ranges = []
    for i in infos:
        start = _int_meta(i["meta"], "spca.row_start", i["path"])
        stop = _int_meta(i["meta"], "spca.row_stop", i["path"])
        if start is None or stop is None:
            if i["doc"] is None:
                continue  # an empty foreign file contributes nothing
            start, stop = i["doc"][0], i["doc"][1] + 1
        elif i["doc"] is not None and (i["doc"][0] < start or i["doc"][1] >= stop):
            raise ValueError(f"{i['path']}: documents {i['doc'][0]}..{i['doc'][1]} outside "
                             f"its metadata range {start}..{stop - 1}")
        ranges.append((start, stop, i))
    D = _resolve(n_docs, meta_docs.pop() if meta_docs else None,
                 max(max_doc + 1, max((r[1] for r in ranges), default=0)), "n_docs", str(root))
    W = _resolve(n_words, meta_words.pop() if meta_words else None, max_word + 1, "n_words",
                 str(root))
    if D == 0 or W == 0:
        raise ValueError(f"{root}: empty corpus (no rows)")
    _check_sizes(D, W, sum(i["nnz"] for i in infos), infos)
    ranges.sort(key=lambda r: (r[0], r[1]))
    shards = [_ShardPiece(i["path"], start, stop, W, i["nnz"]) for start, stop, i in ranges]
    _check_disjoint(shards)
    nnz = sum(s.nnz or 0 for s in shards)
    return _ParquetSource(root, shards, D, W, nnz, None)


def _open_with_manifest(root: Path, manifest_path: Path, n_docs: int | None,
                        n_words: int | None) -> _ParquetSource:
    try:
        m = json.loads(manifest_path.read_text())
        if m.get("format") != _FORMAT:
            raise ValueError(f"format is {m.get('format')!r}, not {_FORMAT!r}")
        if m.get("version") != _VERSION:
            raise ValueError(f"unsupported version {m.get('version')!r}")
        D, W, nnz = int(m["n_docs"]), int(m["n_words"]), int(m["nnz"])
        listed = [(str(s["file"]), int(s["row_start"]), int(s["row_stop"]), int(s["nnz"]))
                  for s in m["shards"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        why = _first_line(exc)
        raise ValueError(f"{manifest_path}: not a valid spca manifest ({why})") from exc
    for given, found, what in ((n_docs, D, "n_docs"), (n_words, W, "n_words")):
        if given is not None and int(given) != found:
            raise ValueError(f"{root}: {what}={given} given, but the manifest says {found}")
    names = {f for f, *_ in listed}
    for f in names:
        if not (root / f).is_file():
            raise FileNotFoundError(f"missing shard: {root / f} (listed in {manifest_path})")
    extra = [p.name for p in _shard_files(root) if p.name not in names]
    if extra:
        raise ValueError(f"{root / extra[0]}: not listed in the manifest {manifest_path} "
                         "(remove it, or the manifest to read the files without it)")
    if sum(s[3] for s in listed) != nnz:
        raise ValueError(f"{manifest_path}: the shards' nnz do not add up to nnz={nnz}")
    for what, value in (("n_docs", D), ("n_words", W)):
        problem = check_corpus_size(what, value, nnz)
        if problem:
            raise ValueError(f"{manifest_path}: {problem}")
    shards = sorted((_ShardPiece(str(root / f), a, b, W, n, ordered=True)
                     for f, a, b, n in listed),
                    key=lambda s: (s.row_start, s.row_stop))
    for s in shards:
        if not 0 <= s.row_start < s.row_stop <= D:
            raise ValueError(f"{manifest_path}: bad document range {s.row_start}..{s.row_stop}"
                             f" of {s.path} (n_docs={D})")
    _check_disjoint(shards)
    return _ParquetSource(root, shards, D, W, nnz, m)
