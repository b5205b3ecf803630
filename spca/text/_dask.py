"""The two corpus passes on a ``dask.distributed`` cluster.

Each *piece* of the corpus (a Parquet shard, a gap of empty documents
between shards, or a block of whole documents of a cache directory) becomes
one task that opens its file on the worker -- no corpus data travels from
the client -- and returns a small partial result
(:class:`~spca.text._partials.Pass1Partial`: ``4 * n_words`` numbers;
:class:`~spca.text._partials.Pass2Partial`: ``k * (k + 1)`` numbers).  The
partials are merged by a tree of combine tasks (fan-in ``_FAN_IN``), so only
the final result reaches the client.  The tasks are pure functions of their
arguments: when a worker dies, the scheduler reruns its tasks elsewhere and
the answer is unchanged.

The workers need ``spca`` installed and the dataset at the same path (a
shared or replicated file system).  Needs ``pip install "spca[dask]"``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._partials import (
    CentredPartial,
    Pass1Partial,
    Pass2Partial,
    centred_partial,
    combine_centred,
    combine_pass1,
    combine_pass2,
    pass1_partial,
    pass2_partial,
)
from ._readers import _CacheSource, _Source

__all__ = ["dask_pass1", "dask_pass2", "get_client", "local_cluster"]

_FAN_IN = 4
#: Records per task when a cache directory (one big file) is split into pieces,
#: in units of ``chunk_size``.
_CACHE_PIECE_CHUNKS = 8
#: Test hook: seconds every per-piece task sleeps before working (read on the worker).
_DELAY_ENV = "_SPCA_DASK_TASK_DELAY"

_INSTALL = 'pip install "spca[dask]"'


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(f'backend="dask" needs dask.distributed: {_INSTALL}') from exc
    return distributed


def get_client(client: Any = None) -> Any:
    """The ``dask.distributed`` client to use: ``client``, or the default one.

    Parameters
    ----------
    client : dask.distributed.Client, optional
        Returned as is when given.

    Returns
    -------
    client : dask.distributed.Client

    Raises
    ------
    ValueError
        If no client is given and none is running in this process.
    ImportError
        If dask.distributed is not installed.
    """
    distributed = _distributed()
    if client is not None:
        if not hasattr(client, "submit"):
            raise TypeError(
                f"client must be a dask.distributed.Client, not {type(client).__name__}"
            )
        return client
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError(
            'backend="dask" needs a running dask.distributed Client: create one first, '
            "e.g. `from dask.distributed import Client; client = Client()` (a local "
            "cluster) or `Client('tcp://scheduler:8786')`, or pass client=..."
        ) from None


@contextlib.contextmanager
def local_cluster(n_workers: int, **kwargs: Any) -> Iterator[Any]:
    """A ``LocalCluster`` of ``n_workers`` single-threaded processes on 127.0.0.1,
    and a client connected to it, closed on exit.

    Parameters
    ----------
    n_workers : int
        Worker processes.
    **kwargs
        Passed to ``distributed.LocalCluster`` (overriding the defaults
        ``threads_per_worker=1``, ``processes=True``, ``host="127.0.0.1"``,
        ``dashboard_address="127.0.0.1:0"``: every server, the scheduler's
        HTTP server included, on the loopback interface and a free port).

    Yields
    ------
    client : dask.distributed.Client
    """
    import logging

    distributed = _distributed()
    n_workers = int(n_workers)
    if n_workers < 1:
        raise ValueError(f"the number of workers must be positive, got {n_workers}")
    options = {"threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
               "dashboard_address": "127.0.0.1:0", "silence_logs": logging.ERROR}
    options.update(kwargs)
    with distributed.LocalCluster(n_workers=n_workers, **options) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def connect(address: str) -> Any:
    """A client connected to the scheduler at ``address`` (``tcp://host:port``)."""
    distributed = _distributed()
    return distributed.Client(address)


def source_pieces(src: _Source, chunk_size: int) -> list[Any]:
    """The picklable pieces of ``src`` that workers read themselves, in document order.

    Raises
    ------
    ValueError
        For a source the workers cannot open by themselves (a UCI text
        file, an in-memory matrix).
    """
    from ._parquet import _ParquetSource  # lazily: pyarrow-free processes skip it

    if isinstance(src, _ParquetSource):
        return src.pieces()
    if isinstance(src, _CacheSource):
        return src.pieces(_CACHE_PIECE_CHUNKS * int(chunk_size))
    raise ValueError(
        f'backend="dask" reads a Parquet dataset (made by `spca convert` or '
        f"spca.text.convert_uci_to_parquet) or a cache directory (cache_uci_bow) at a path "
        f"the workers can read, not {src.label!r}; convert it first, or use "
        "backend='local'"
    )


def _delay() -> None:
    seconds = os.environ.get(_DELAY_ENV)
    if seconds:
        time.sleep(float(seconds))


def _piece_pass1(piece: Any, n_words: int, transform: str, normalize: str | None,
                 idf: NDArray[np.float64] | None, chunk_size: int) -> Pass1Partial:
    _delay()
    return pass1_partial(piece.chunks(chunk_size), n_words, transform, normalize, idf)


def _piece_pass2(piece: Any, words: NDArray[np.int64], n_words: int, transform: str,
                 normalize: str | None, idf: NDArray[np.float64] | None,
                 chunk_size: int) -> Pass2Partial:
    _delay()
    return pass2_partial(piece.chunks(chunk_size), words, n_words, transform, normalize, idf)


def _identity(x: Any) -> Any:
    return x


def _tree_reduce(client: Any, futures: Sequence[Any], combine: Callable[..., Any],
                 fan_in: int) -> Any:
    """Combine futures level by level, ``fan_in`` at a time, on the workers."""
    level = list(futures)
    while len(level) > 1:
        level = [client.submit(combine, *level[i:i + fan_in], pure=False)
                 for i in range(0, len(level), fan_in)]
    return level[0].result()


def _shared(client: Any, value: Any) -> Any:
    """``value`` as a task result, so that tasks need not carry it; a task (not
    scattered data), so it is recomputed if the worker holding it dies."""
    if value is None:
        return None
    return client.submit(_identity, value, pure=False)


def dask_pass1(src: _Source, transform: str, normalize: str | None,
               idf: NDArray[np.float64] | None, *, chunk_size: int, client: Any = None,
               fan_in: int = _FAN_IN) -> Pass1Partial:
    """Pass 1 of :func:`~spca.text.word_statistics` on a cluster: the merged partial."""
    client = get_client(client)
    pieces = source_pieces(src, chunk_size)
    idf_f = _shared(client, idf)
    futures = [client.submit(_piece_pass1, p, src.n_words, transform, normalize, idf_f,
                             int(chunk_size), pure=False) for p in pieces]
    return _tree_reduce(client, futures, combine_pass1, fan_in)


def dask_pass2(src: _Source, words: NDArray[np.int64], transform: str,
               normalize: str | None, idf: NDArray[np.float64] | None, *, chunk_size: int,
               client: Any = None, fan_in: int = _FAN_IN) -> Pass2Partial:
    """Pass 2 of :func:`~spca.text.candidate_covariance` on a cluster: the summed partial."""
    client = get_client(client)
    pieces = source_pieces(src, chunk_size)
    idf_f = _shared(client, idf)
    futures = [client.submit(_piece_pass2, p, words, src.n_words, transform, normalize,
                             idf_f, int(chunk_size), pure=False) for p in pieces]
    return _tree_reduce(client, futures, combine_pass2, fan_in)


def _piece_centred(piece: Any, words: NDArray[np.int64], accurate: NDArray[np.intp],
                   shift: NDArray[np.float64], n_words: int, transform: str,
                   normalize: str | None, idf: NDArray[np.float64] | None, *,
                   chunk_size: int) -> CentredPartial:
    _delay()
    return centred_partial(piece.chunks(chunk_size), words, accurate, shift, n_words,
                           transform, normalize, idf)


def dask_centred(src: _Source, words: NDArray[np.int64], accurate: NDArray[np.intp],
                 shift: NDArray[np.float64], transform: str, normalize: str | None,
                 idf: NDArray[np.float64] | None, *, chunk_size: int, client: Any = None,
                 fan_in: int = _FAN_IN) -> CentredPartial:
    """The accurate rows of pass 2 (:func:`~spca.text._partials.centred_partial`)
    on a cluster: the summed partial."""
    client = get_client(client)
    pieces = source_pieces(src, chunk_size)
    idf_f = _shared(client, idf)
    futures = [client.submit(_piece_centred, p, words, accurate, shift, src.n_words,
                             transform, normalize, idf_f, chunk_size=int(chunk_size),
                             pure=False)
               for p in pieces]
    return _tree_reduce(client, futures, combine_centred, fan_in)
