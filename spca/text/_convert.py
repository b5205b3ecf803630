"""Writing sharded Parquet corpora: :func:`write_parquet` and ``spca convert``.

The layout is described in :mod:`spca.text._parquet` (which reads it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ._parquet import _COMPRESSIONS, _FORMAT, _VERSION, PARQUET_MANIFEST, _pyarrow
from ._readers import _shared_tmpdir
from ._source import open_source
from ._uci import DEFAULT_CHUNK_SIZE

__all__ = ["convert_uci_to_parquet", "write_parquet"]


# --------------------------------------------------------------------------
# the writer
# --------------------------------------------------------------------------


class _ShardWriter:
    """Writes consecutive shards ``part-NNNNN.parquet`` into a directory."""

    def __init__(self, directory: Path, n_docs: int, n_words: int, count_type: Any,
                 compression: str, row_group_size: int) -> None:
        self.pa, self.pq = _pyarrow()
        pa = self.pa
        self.directory = directory
        self.n_docs, self.n_words = n_docs, n_words
        self.schema = pa.schema([("doc", pa.int64()), ("word", pa.int32()),
                                 ("count", count_type)])
        self.compression = compression
        self.row_group_size = row_group_size
        self.shards: list[dict[str, Any]] = []
        self.writer: Any = None
        self.row_start = 0
        self.nnz = 0

    def open(self, row_start: int) -> None:
        name = f"part-{len(self.shards):05d}.parquet"
        self.row_start, self.nnz = row_start, 0
        self.name = name
        self.writer = self.pq.ParquetWriter(
            self.directory / name, self.schema, compression=self.compression,
            sorting_columns=[self.pq.SortingColumn(0), self.pq.SortingColumn(1)],
        )

    def write(self, doc: np.ndarray, word: np.ndarray, count: np.ndarray) -> None:
        if len(doc) == 0:
            return
        pa = self.pa
        table = pa.Table.from_arrays(
            [pa.array(doc.astype(np.int64, copy=False)),
             pa.array(word.astype(np.int32, copy=False)),
             pa.array(count).cast(self.schema.field("count").type)],
            schema=self.schema,
        )
        self.writer.write_table(table, row_group_size=self.row_group_size)
        self.nnz += len(doc)

    def close(self, row_stop: int) -> None:
        self.writer.add_key_value_metadata({
            "spca.version": str(_VERSION), "spca.row_start": str(self.row_start),
            "spca.row_stop": str(row_stop), "spca.n_docs": str(self.n_docs),
            "spca.n_words": str(self.n_words), "spca.nnz": str(self.nnz),
        })
        self.writer.close()
        self.writer = None
        self.shards.append({"file": self.name, "row_start": self.row_start,
                            "row_stop": row_stop, "nnz": self.nnz})

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def write_parquet(
    source: Any, out_dir: str | os.PathLike, *, shards: int = 1,
    compression: str = "zstd", chunk_size: int = DEFAULT_CHUNK_SIZE,
    overwrite: bool = False,
) -> Path:
    """Write a corpus as a sharded Parquet dataset, streaming, in bounded memory.

    Shards are cut only between documents (a document's words stay in one
    shard), near ``k * nnz / shards`` records for about equal numbers of
    nonzeros per shard; documents are sorted, and within a document words
    keep the source's order (sorted for UCI files).

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        Any source of :func:`~spca.text.iter_document_chunks` (a UCI
        ``docword`` file, a cache directory, a matrix, another Parquet
        dataset...).  Never modified.
    out_dir : str or path-like
        Directory to create.  It is built under a temporary name next to it
        and renamed into place, so an interrupted conversion leaves nothing
        half-written.  It must not exist, or be empty, or (with
        ``overwrite=True``) be a dataset written by this function.
    shards : int, default 1
        Number of shards.  Fewer are written when the corpus has too few
        documents (or documents too long) to fill them.
    compression : {"zstd", "snappy", "gzip", "lz4", "none"}, default "zstd"
        Parquet compression codec.
    chunk_size : int, default 2**20
        Records read at a time, and the largest row group; memory is
        ``O(chunk_size)``.
    overwrite : bool, default False
        Replace an existing dataset in ``out_dir``.

    Returns
    -------
    out_dir : pathlib.Path
        The dataset directory, with ``part-00000.parquet``, ... and the
        manifest ``_spca.json``.

    Raises
    ------
    FileExistsError
        If ``out_dir`` exists and may not be replaced.
    ValueError
        For bad arguments or a malformed source.
    ImportError
        If pyarrow is not installed.
    """
    pa, _ = _pyarrow()
    shards = int(shards)
    if shards < 1:
        raise ValueError(f"shards must be positive, got {shards}")
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    if compression not in _COMPRESSIONS:
        raise ValueError(f"compression must be one of {_COMPRESSIONS}, got {compression!r}")
    src = open_source(source)
    out = Path(out_dir)
    if out.exists():
        if not out.is_dir():
            raise FileExistsError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (overwrite and (out / PARQUET_MANIFEST).exists()):
            raise FileExistsError(
                f"{out} exists and is not empty"
                + ("" if overwrite else " (overwrite=True replaces an spca Parquet dataset)")
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _shared_tmpdir(out.parent, out.name)
    writer: _ShardWriter | None = None
    try:
        D, W = src.n_docs, src.n_words
        # cumulative record counts at which shards 1, 2, ... should start
        targets = [round(src.nnz * k / shards) for k in range(1, shards)]
        done = 0  # records written so far
        switch_next = False  # a shard boundary falls at the start of the next chunk
        for chunk in src.chunks(chunk_size):
            doc, word, count = chunk.doc, chunk.word, chunk.count
            n = len(doc)
            if n == 0:
                continue
            if writer is None:
                dtype = np.asarray(count).dtype
                ctype = (pa.float64() if np.issubdtype(dtype, np.floating)
                         else pa.int64() if dtype.itemsize > 4 else pa.int32())
                writer = _ShardWriter(tmp, D, W, ctype, compression, chunk_size)
                writer.open(0)
            elif switch_next and writer.nnz > 0:
                writer.close(int(doc[0]))
                writer.open(int(doc[0]))
            switch_next = False
            base = done
            lo = 0
            while lo < n:
                cut = n
                from_target = False
                while targets and targets[0] < base + n:
                    t = targets.pop(0) - base
                    if t < lo:  # passed already (a long document spans several targets)
                        continue
                    # the document boundary nearest to the target, never an empty shard
                    first = int(np.searchsorted(doc, doc[t], side="left"))
                    last = int(np.searchsorted(doc, doc[t], side="right"))
                    cut = first if t - first <= last - t else last
                    if cut <= lo:
                        cut = lo if writer.nnz > 0 else last
                    from_target = True
                    break
                writer.write(doc[lo:cut], word[lo:cut], count[lo:cut])
                done += cut - lo
                if cut < n:
                    if writer.nnz > 0:
                        writer.close(int(doc[cut]))
                        writer.open(int(doc[cut]))
                elif from_target:
                    switch_next = True
                lo = cut
        if writer is None:
            raise ValueError(f"{src.label}: empty corpus")
        writer.close(D)
        nnz = sum(s["nnz"] for s in writer.shards)
        manifest = {
            "format": _FORMAT, "version": _VERSION, "n_docs": D, "n_words": W, "nnz": nnz,
            "source": src.label, "compression": compression,
            "columns": {"doc": "int64", "word": "int32",
                        "count": str(writer.schema.field("count").type)},
            "shards": writer.shards,
        }
        (tmp / PARQUET_MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        if writer is not None:
            writer.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def convert_uci_to_parquet(
    docword: str | os.PathLike, out_dir: str | os.PathLike, *, shards: int = 1,
    compression: str = "zstd", chunk_size: int = DEFAULT_CHUNK_SIZE,
    overwrite: bool = False,
) -> Path:
    """Convert a UCI ``docword`` file (plain or gzip) to a sharded Parquet dataset.

    The file is streamed (memory ``O(chunk_size)``); see :func:`write_parquet`
    for the layout and the parameters.  This is the ``spca convert`` command.

    Parameters
    ----------
    docword : str or path-like
        The UCI ``docword`` file.
    out_dir, shards, compression, chunk_size, overwrite :
        As for :func:`write_parquet`.

    Returns
    -------
    out_dir : pathlib.Path

    Raises
    ------
    UCIFormatError
        If the file is malformed.

    Examples
    --------
    >>> import tempfile, os
    >>> from spca.datasets import data_path
    >>> out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"),
    ...                              os.path.join(tempfile.mkdtemp(), "reuters"), shards=3)
    >>> open_parquet(out).nnz
    60114
    """
    path = Path(docword)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return write_parquet(path, out_dir, shards=shards, compression=compression,
                         chunk_size=chunk_size, overwrite=overwrite)
