"""Writing sharded Parquet corpora: :func:`write_parquet` and ``spca convert``.

The layout is described in :mod:`spca.text._parquet` (which reads it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
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
            write_page_checksum=True,  # a flipped bit in a data page is an error when read
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
        Directory to create.  It is built under a temporary name next to it,
        ``.<name>.<random>.tmp``, and renamed into place only when complete,
        so an interrupted conversion leaves nothing half-written.  A writer
        killed outright (SIGKILL) leaves its temporary directory (and its
        lock file ``.<name>.lock``) behind; the next conversion to the same
        ``out_dir`` on the same host deletes them.
        ``out_dir`` must not exist, or be empty, or (with ``overwrite=True``)
        hold a dataset written by this function and nothing else.  It must
        not contain ``source``.
    shards : int, default 1
        Number of shards.  Fewer are written when the corpus has too few
        documents (or documents too long) to fill them.
    compression : {"zstd", "snappy", "gzip", "lz4", "none"}, default "zstd"
        Parquet compression codec.
    chunk_size : int, default 2**20
        Records read at a time, and the largest row group; memory is
        ``O(chunk_size)``.
    overwrite : bool, default False
        Replace an existing dataset in ``out_dir``: the new dataset is
        completed beside it, the old one is moved aside, the new one renamed
        into place, and only then are the old files deleted (only those its
        manifest names).

    Returns
    -------
    out_dir : pathlib.Path
        The dataset directory, with ``part-00000.parquet``, ... and the
        manifest ``_spca.json``.

    Raises
    ------
    FileExistsError
        If ``out_dir`` exists and may not be replaced: not empty and
        ``overwrite`` is False, or it is not a dataset written by this
        function (no valid manifest), or it holds files its manifest does
        not name.
    ValueError
        For bad arguments, a malformed source, or an ``out_dir`` that
        contains ``source``.
    OSError
        If another process is writing ``out_dir`` (one writer at a time:
        each holds an ``fcntl`` lock on ``.<name>.lock`` beside it, deleted
        when it finishes), or if the old dataset's files cannot be deleted
        (then ``out_dir`` is left unchanged).
    ImportError
        If pyarrow is not installed.
    """
    _pyarrow()  # ImportError before anything else
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
    _refuse_output_holding_input(source, out)
    _replaceable(out, overwrite)  # refuse early, before creating anything
    out.parent.mkdir(parents=True, exist_ok=True)
    with _writer_lock(out):
        replaced = _replaceable(out, overwrite)
        _remove_stale_tmpdirs(out)
        _write(src, out, replaced, shards, compression, chunk_size)
    return out


def _write(src: Any, out: Path, replaced: list[str] | None, shards: int, compression: str,
           chunk_size: int) -> None:
    """The body of :func:`write_parquet`, run while holding the writer lock of ``out``."""
    pa, _ = _pyarrow()
    tmp = _shared_tmpdir(out.parent, out.name)
    (tmp / _WRITER).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    writer: _ShardWriter | None = None
    try:
        D, W = src.n_docs, src.n_words
        # cumulative record counts at which shards 1, 2, ... should start
        targets = [round(src.nnz * k / shards) for k in range(1, shards)]
        done = 0  # records written so far
        switch_next = False  # a shard boundary falls at the start of the next chunk
        delay = float(os.environ.get(_DELAY_ENV) or 0)
        for chunk in src.chunks(chunk_size):
            if delay:
                time.sleep(delay)
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
        (tmp / _WRITER).unlink()
        _swap_in(tmp, out, replaced)
    except BaseException:
        if writer is not None:
            writer.abort()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise


#: Test hook: seconds to sleep before writing each chunk.
_DELAY_ENV = "_SPCA_CONVERT_CHUNK_DELAY"

#: Marker file of a dataset being written: "<host> <pid>" of the writer
#: (removed just before the dataset is swapped in).
_WRITER = ".spca-writer"


def _refuse_output_holding_input(source: Any, out: Path) -> None:
    """Refuse an ``out`` that is, or contains, the input path (replacing it
    would delete the input)."""
    if not isinstance(source, str | os.PathLike):
        return
    src = Path(os.path.realpath(source))
    dst = Path(os.path.realpath(out))
    if src == dst or dst in src.parents:
        raise ValueError(
            f"the output directory {out} contains the input {source}: choose another "
            "output directory"
        )


def _replaceable(out: Path, overwrite: bool) -> list[str] | None:
    """Check that ``out`` may be (re)written; return the names of the files of
    the dataset it holds (to be replaced), or None when it is missing or empty.

    Only a directory holding a valid manifest and nothing but the files that
    manifest names may be replaced: anything else in it is not ours.
    """
    if not out.exists():
        return None
    if not out.is_dir():
        raise FileExistsError(f"{out} exists and is not a directory")
    present = sorted(p.name for p in out.iterdir())
    if not present:
        return None
    if not overwrite:
        raise FileExistsError(
            f"{out} exists and is not empty (overwrite=True replaces a dataset written by "
            "spca convert)"
        )
    manifest = out / PARQUET_MANIFEST
    try:
        m = json.loads(manifest.read_text())
        if m.get("format") != _FORMAT:
            raise ValueError(f"format {m.get('format')!r}")
        named = {PARQUET_MANIFEST} | {str(s["file"]) for s in m["shards"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FileExistsError(
            f"{out} is not a dataset written by spca convert (no valid {PARQUET_MANIFEST}: "
            f"{exc}); refusing to replace it"
        ) from None
    foreign = [name for name in present if name not in named]
    if foreign:
        raise FileExistsError(
            f"{out} holds {foreign[0]!r}, which its manifest does not name (not written by "
            "spca convert); refusing to replace it"
        )
    if not os.access(out, os.W_OK | os.X_OK):  # before converting anything
        raise PermissionError(
            f"cannot replace the dataset in {out}: the directory is not writable, so its "
            f"files cannot be deleted; {out} was left unchanged"
        )
    return present


#: How the old dataset's files are deleted (a test hook: tests running as
#: root, to whom a read-only directory is writable, make it fail).
_unlink = os.unlink


def _swap_in(tmp: Path, out: Path, replaced: list[str] | None) -> None:
    """Move the complete dataset ``tmp`` to ``out``; the old dataset in ``out``
    (the files ``replaced``) is moved aside first, then deleted file by file.

    If the first of the old files cannot be deleted, everything is put back
    as it was (the old dataset in ``out``, the new one discarded by the
    caller) and the error is raised: the outcome is then a failure with
    nothing changed, never a replaced dataset with an error status.
    """
    if replaced is None:
        if out.exists():  # an empty directory
            try:
                out.rmdir()
            except OSError as exc:
                raise OSError(
                    f"{out} is no longer empty (something else wrote to it during the "
                    f"conversion: {exc.strerror}); the new dataset was not put in place"
                ) from None
        os.replace(tmp, out)
        return
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old.tmp"))
    os.rmdir(old)
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    deleted = 0
    for name in replaced:
        try:
            _unlink(old / name)
            deleted += 1
        except FileNotFoundError:
            continue
        except OSError as exc:
            if deleted == 0:  # nothing deleted yet: undo the swap
                os.replace(out, tmp)
                os.replace(old, out)
                raise OSError(
                    f"cannot replace the dataset in {out}: its file {name} cannot be "
                    f"deleted ({exc.strerror}); {out} was left unchanged"
                ) from None
            raise OSError(
                f"the new dataset is in {out}, but files of the old one could not be "
                f"deleted ({exc.strerror}): they are in {old}"
            ) from None
    with contextlib.suppress(OSError):  # not empty: something else appeared, keep it
        old.rmdir()


@contextlib.contextmanager
def _writer_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock of ``out`` for one writer (``fcntl.flock`` on
    ``.OUT.lock`` beside it); a second writer is refused at once.

    The lock file is deleted on release.  A writer that locked a file that
    was deleted meanwhile (by the holder releasing it) tries again, so two
    writers never hold locks on two different files of the same name.  No
    lock where ``fcntl`` does not exist (Windows).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = out.parent / f".{out.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OSError(
                f"another conversion is writing {out} (it holds the lock {path}); try "
                "again when it has finished"
            ) from None
        try:
            locked = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            locked = False
        if locked:
            break
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def _remove_stale_tmpdirs(out: Path) -> None:
    """Delete the temporary directories ``.OUT.*.tmp`` that an earlier writer
    of ``out`` on this host left behind when it was killed (its process is
    gone).  Only the files a writer makes are deleted."""
    host = socket.gethostname()
    for d in out.parent.glob(f".{out.name}.*.tmp"):
        marker = d / _WRITER
        try:
            who, pid = marker.read_text().split()
        except (OSError, ValueError):
            continue
        if who != host or _alive(int(pid)):
            continue
        for f in d.iterdir():
            if f.name in (_WRITER, PARQUET_MANIFEST) or (
                    f.name.startswith("part-") and f.suffix == ".parquet"):
                with contextlib.suppress(OSError):
                    f.unlink()
        with contextlib.suppress(OSError):
            d.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


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
    >>> from spca.text import convert_uci_to_parquet, open_parquet
    >>> out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"),
    ...                              os.path.join(tempfile.mkdtemp(), "reuters"), shards=3)
    >>> open_parquet(out).nnz
    60114
    """
    path = Path(docword)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a UCI docword file")
    return write_parquet(path, out_dir, shards=shards, compression=compression,
                         chunk_size=chunk_size, overwrite=overwrite)
