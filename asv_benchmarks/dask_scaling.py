"""Scaling of the corpus passes on Dask: 1 and 2 workers against the local path.

Writes (or reuses) a synthetic NYTimes-like corpus (102,660 words, 232
distinct words per document) of about ``--nnz`` nonzeros as a gzipped UCI
file with :func:`spca.datasets.write_synthetic_corpus`, converts it to
``--shards`` Parquet shards with ``spca convert``'s function, then times on
the same Parquet dataset

* the local single-process path (``backend="local"``);
* a ``LocalCluster`` of 1 and of 2 single-threaded worker processes
  (started before the clock, on 127.0.0.1),

for pass 1 (:func:`~spca.text.word_statistics`, every word) and pass 2
(:func:`~spca.text.candidate_covariance` of the ``--candidates`` words of
largest variance).  It also measures, each in a fresh process, the time and
peak resident memory of one shard's pass 1 and pass 2 (what one worker task
costs), and reports the bytes of the partial results that the tree reduction
moves between processes.

Usage::

    python asv_benchmarks/dask_scaling.py                 # 1e8 nonzeros (slow to write)
    python asv_benchmarks/dask_scaling.py --nnz 1e7       # a quick check

The corpus and its Parquet shards are kept in ``--workdir`` (default
``~/.cache/spca-dask-scaling``) and reused by later runs with the same size.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import resource
import sys
import time
from pathlib import Path

import numpy as np

N_WORDS = 102_660  # NYTimes
NNZ_PER_DOC = 232.0


def _peak_rss_mb() -> float:
    """Peak resident memory of this process (VmHWM), in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # pragma: no cover


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _one_shard(args: tuple) -> dict:
    """In a fresh process: time and peak RSS of one shard's pass 1 and pass 2."""
    path, n_words, words, chunk_size, which = args
    import pyarrow.parquet  # noqa: F401  (imported before the baseline is taken)

    from spca.text import open_parquet
    from spca.text._stats import pass1_partial, pass2_partial

    src = open_parquet(path)
    piece = src.shards[which]
    reset = _reset_peak()
    base = _peak_rss_mb()
    t0 = time.perf_counter()
    p1 = pass1_partial(piece.chunks(chunk_size), n_words, "count", None, None)
    t1 = time.perf_counter()
    peak1 = _peak_rss_mb()
    _reset_peak()
    p2 = pass2_partial(piece.chunks(chunk_size), np.asarray(words), n_words, "count", None,
                       None)
    t2 = time.perf_counter()
    return {"nnz": piece.nnz, "file_mb": os.path.getsize(piece.path) / 1e6,
            "pass1_s": t1 - t0, "pass2_s": t2 - t1, "base_rss_mb": base,
            "peak_rss_pass1_mb": peak1, "peak_rss_pass2_mb": _peak_rss_mb(),
            "peak_reset": reset,
            "pass1_partial_bytes": len(pickle.dumps(p1, protocol=5)),
            "pass2_partial_bytes": len(pickle.dumps(p2, protocol=5))}


def _warm() -> None:
    import pyarrow.parquet  # noqa: F401

    import spca.text._dask  # noqa: F401


def _outgoing(dask_worker) -> float:
    return float(getattr(dask_worker, "transfer_outgoing_bytes_total", float("nan")))


def _corpus(workdir: Path, nnz: float, shards: int) -> tuple[Path, float]:
    from spca.datasets import write_synthetic_corpus
    from spca.text import PARQUET_MANIFEST, convert_uci_to_parquet

    n_docs = max(1, int(round(nnz / NNZ_PER_DOC)))
    tag = f"syn{n_docs}x{N_WORDS}"
    docword = workdir / f"docword.{tag}.txt.gz"
    if not docword.exists():
        t = time.perf_counter()
        print(f"writing {docword} ({n_docs} documents) ...", flush=True)
        write_synthetic_corpus(docword, workdir / f"vocab.{tag}.txt", n_docs, N_WORDS,
                               nnz_per_doc=NNZ_PER_DOC, random_state=0)
        print(f"  {time.perf_counter() - t:.1f} s", flush=True)
    out = workdir / f"{tag}.{shards}shards.parquet"
    convert_s = float("nan")
    if not (out / PARQUET_MANIFEST).exists():
        print(f"converting to {shards} Parquet shards in {out} ...", flush=True)
        t = time.perf_counter()
        convert_uci_to_parquet(docword, out, shards=shards)
        convert_s = time.perf_counter() - t
        print(f"  {convert_s:.1f} s", flush=True)
    return out, convert_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nnz", type=float, default=1e8, help="about this many nonzeros")
    parser.add_argument("--shards", type=int, default=32, help="Parquet shards (default 32)")
    parser.add_argument("--candidates", type=int, default=1024, help="pass-2 words")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="cluster sizes to time (default: 1 2)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--chunk-size", type=int, default=1 << 20)
    parser.add_argument("--per-shard", type=int, default=2,
                        help="shards measured alone in a fresh process (default 2)")
    parser.add_argument("--workdir", type=Path,
                        default=Path.home() / ".cache" / "spca-dask-scaling")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)

    from spca.text import candidate_covariance, open_parquet, word_statistics
    from spca.text._dask import local_cluster

    args.workdir.mkdir(parents=True, exist_ok=True)
    path, convert_s = _corpus(args.workdir, args.nnz, args.shards)
    src = open_parquet(path)
    size_mb = sum(os.path.getsize(s.path) for s in src.shards) / 1e6
    print(f"corpus: {src.n_docs} documents x {src.n_words} words, {src.nnz} nonzeros, "
          f"{len(src.shards)} shards, {size_mb:.0f} MB of Parquet", flush=True)
    cs = args.chunk_size

    def best(fn):
        times, out = [], None
        for _ in range(args.repeat):
            t = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t)
        return min(times), out

    rows = []
    t1, ref = best(lambda: word_statistics(src, chunk_size=cs))
    words = np.sort(np.argsort(-ref.variance, kind="stable")[:args.candidates])
    t2, cov_ref = best(lambda: candidate_covariance(src, words, stats=ref, chunk_size=cs))
    rows.append(("local, 1 process", t1, t2, float("nan")))
    print(f"  local: pass 1 {t1:.2f} s, pass 2 {t2:.2f} s", flush=True)
    for n in args.workers:
        with local_cluster(n) as client:
            client.run(_warm)
            before = sum(client.run(_outgoing).values())
            t1, got = best(lambda c=client: word_statistics(src, client=c, chunk_size=cs))
            t2, cov = best(lambda c=client, g=got: candidate_covariance(src, words, stats=g,
                                                                 client=c, chunk_size=cs))
            moved = sum(client.run(_outgoing).values()) - before
        if not (np.array_equal(got.document_frequency, ref.document_frequency)
                and np.allclose(got.variance, ref.variance, rtol=1e-12, atol=0)
                and np.allclose(cov, cov_ref, rtol=1e-12, atol=1e-12 * np.abs(cov_ref).max())):
            print("ERROR: the dask results differ from the local ones", file=sys.stderr)
            return 1
        rows.append((f"dask, {n} worker{'s' if n > 1 else ''}", t1, t2,
                     moved / args.repeat))
        print(f"  {n} worker(s): pass 1 {t1:.2f} s, pass 2 {t2:.2f} s", flush=True)

    per_shard = []
    ctx = multiprocessing.get_context("spawn")
    step = max(1, len(src.shards) // max(1, args.per_shard))
    for which in list(range(0, len(src.shards), step))[:args.per_shard]:
        with ctx.Pool(1, maxtasksperchild=1) as pool:
            per_shard.append(pool.apply(_one_shard, ((str(path), src.n_words, words, cs,
                                                      which),)))

    base1 = next((r for r in rows if r[0].startswith("dask, 1 ")), rows[0])
    print()
    print(f"{'':<18} {'pass 1 (s)':>10} {'x vs 1 w':>9} {'pass 2 (s)':>10} "
          f"{'x vs 1 w':>9} {'sent (MB)':>10}")
    for name, a, b, moved in rows:
        print(f"{name:<18} {a:>10.2f} {base1[1] / a:>9.2f} {b:>10.2f} {base1[2] / b:>9.2f} "
              f"{moved / 1e6:>10.1f}")
    print()
    n_pieces = len(src.pieces())
    n_tasks = n_pieces
    level = n_pieces
    while level > 1:
        level = -(-level // 4)
        n_tasks += level
    print("x vs 1 w: speed-up over one dask worker; sent: bytes the workers sent (to each "
          "other and the client), both passes")
    for s in per_shard:
        print(f"one shard ({s['nnz']} nonzeros, {s['file_mb']:.1f} MB): pass 1 "
              f"{s['pass1_s']:.2f} s, pass 2 {s['pass2_s']:.2f} s; peak RSS pass 1 "
              f"{s['peak_rss_pass1_mb']:.0f} MB, pass 2 {s['peak_rss_pass2_mb']:.0f} MB "
              f"({s['base_rss_mb']:.0f} MB after imports"
              f"{'' if s['peak_reset'] else '; peaks since process start'})")
    s = per_shard[0] if per_shard else None
    if s:
        print(f"partial results: pass 1 {s['pass1_partial_bytes'] / 1e6:.2f} MB, pass 2 "
              f"{s['pass2_partial_bytes'] / 1e6:.2f} MB each; {n_tasks} tasks per pass "
              f"({n_pieces} shard tasks + combines, fan-in 4): at most "
              f"{(n_tasks - 1) * s['pass1_partial_bytes'] / 1e6:.0f} MB (pass 1) and "
              f"{(n_tasks - 1) * s['pass2_partial_bytes'] / 1e6:.0f} MB (pass 2) moved")
    if args.json:
        args.json.write_text(json.dumps({
            "n_docs": src.n_docs, "n_words": src.n_words, "nnz": src.nnz,
            "shards": len(src.shards), "parquet_mb": size_mb, "convert_s": convert_s,
            "rows": [{"name": r[0], "pass1_s": r[1], "pass2_s": r[2], "moved_bytes": r[3]}
                     for r in rows],
            "per_shard": per_shard, "tasks_per_pass": n_tasks,
            "cpu_count": os.cpu_count(),
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
