"""The corpus passes on a real dask.distributed cluster (local processes on 127.0.0.1)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest
from _corpora import assert_cov_equal, assert_stats_equal, counts_with_edge_cases, write_counts

distributed = pytest.importorskip("distributed")  # in the test extra
pytest.importorskip("pyarrow")
import cloudpickle  # noqa: E402  (a dependency of distributed)

# The helpers below run on the workers and the scheduler (client.run), which
# cannot import this test module: send them by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

from spca.cli import main  # noqa: E402
from spca.datasets import data_path, make_synthetic_corpus  # noqa: E402
from spca.text import (  # noqa: E402
    TRANSFORMS,
    cache_uci_bow,
    candidate_covariance,
    convert_uci_to_parquet,
    open_parquet,
    sparse_topics,
    word_statistics,
    write_parquet,
)
from spca.text._dask import _DELAY_ENV  # noqa: E402
from spca.text._stats import (  # noqa: E402
    combine_pass1,
    empty_pass1,
    pass1_partial,
)


def test_dask_backend_without_a_client_says_how_to_start_one(tmp_path):
    # the module's client is not the default one (set_as_default=False), so
    # this holds in any test order
    with pytest.raises(ValueError, match="No clients found"):
        distributed.default_client()
    out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "r")
    with pytest.raises(ValueError, match=r"needs a running dask\.distributed Client.*Client\("):
        word_statistics(out, backend="dask")
    with pytest.raises(ValueError, match="backend must be one of"):
        word_statistics(out, backend="spark")


@pytest.fixture(scope="module")
def client():
    # dashboard_address=None would still bind the scheduler's HTTP server to port 8787
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("samples")
    out = {}
    for name, shards in (("nytsample", 5), ("reuters", 3)):
        docword = data_path(f"docword.{name}.txt.gz")
        out[name] = (docword, convert_uci_to_parquet(docword, root / name, shards=shards,
                                                     chunk_size=40_000))
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    corpus = make_synthetic_corpus(4000, 600, nnz_per_doc=25, random_state=5)
    path = write_parquet(corpus, tmp_path_factory.mktemp("syn") / "pq", shards=24,
                         chunk_size=5_000)
    return corpus, path


def test_samples_equal_local(client, samples):
    for name, (docword, pq_dir) in samples.items():
        for transform, normalize in (("count", None), ("tfidf", "l2"), ("log1p", "l1"),
                                     ("binary", None)):
            msg = f"{name} {transform} {normalize}"
            ref = word_statistics(docword, transform, normalize)
            got = word_statistics(pq_dir, transform, normalize, client=client,
                                  chunk_size=30_000)
            assert_stats_equal(got, ref, msg)
            words = np.argsort(-ref.variance, kind="stable")[:40]
            assert_cov_equal(
                candidate_covariance(pq_dir, words, transform, normalize, stats=got,
                                     client=client),
                candidate_covariance(docword, words, transform, normalize), msg)


def test_synthetic_every_transform_equals_local(client, synthetic):
    corpus, path = synthetic
    words = np.arange(0, 600, 7)
    for transform, normalize in itertools.product(TRANSFORMS, (None, "l1", "l2")):
        msg = f"{transform} {normalize}"
        ref = word_statistics(corpus, transform, normalize)
        got = word_statistics(path, transform, normalize, backend="dask", client=client,
                              chunk_size=700)
        assert_stats_equal(got, ref, msg)
        if normalize != "l1":
            assert_cov_equal(candidate_covariance(path, words, transform, normalize,
                                                  client=client),
                             candidate_covariance(corpus, words, transform, normalize), msg)


def test_default_client_and_cache_directories(client, tmp_path):
    C = counts_with_edge_cases(seed=9, d=300, w=40)
    docword = tmp_path / "docword.edge.txt"
    write_counts(docword, C)
    cache = cache_uci_bow(docword, tmp_path / "cache")
    ref = word_statistics(docword, "log1p", "l2")
    with client.as_current():  # backend="dask" finds the current client
        got = word_statistics(cache, "log1p", "l2", backend="dask", chunk_size=40)
    assert_stats_equal(got, ref)
    # a cache is cut into pieces of whole documents, tiling all the documents
    from spca.text._source import _CacheSource

    pieces = _CacheSource(cache).pieces(150)
    assert len(pieces) > 3 and pieces[0].row_start == 0 and pieces[-1].row_stop == 300
    assert all(a.row_stop == b.row_start for a, b in itertools.pairwise(pieces))
    words = [7, 0, 39, 12]
    assert_cov_equal(candidate_covariance(cache, words, "count", "l1", client=client,
                                          chunk_size=40),
                     candidate_covariance(docword, words, "count", "l1"))


def test_sparse_topics_same_words(client, samples):
    docword, pq_dir = samples["nytsample"]
    vocab = data_path("vocab.nytsample.txt")
    ref = sparse_topics(docword, vocab, n_components=3)
    got = sparse_topics(pq_dir, vocab, n_components=3, client=client)
    assert [t.words for t in got.topics] == [t.words for t in ref.topics]
    for a, b in zip(got.topics, ref.topics, strict=True):
        np.testing.assert_allclose(a.loadings, b.loadings, rtol=1e-8, atol=1e-10)
    assert got.n_candidates == ref.n_candidates


def test_tree_of_partials_is_grouping_independent(synthetic):
    corpus, path = synthetic
    src = open_parquet(path)
    W = src.n_words
    parts = [pass1_partial(p.chunks(500), W, "count", None, None) for p in src.pieces()]
    parts.insert(3, empty_pass1(0, W))
    flat = combine_pass1(*parts)
    tree = combine_pass1(*[combine_pass1(*parts[i:i + 3]) for i in range(0, len(parts), 3)])
    assert flat.n_docs == tree.n_docs == 4000 and flat.nnz == tree.nnz == corpus.counts.nnz
    np.testing.assert_array_equal(flat.document_frequency, tree.document_frequency)
    np.testing.assert_allclose(flat.mean, tree.mean, rtol=1e-13)
    np.testing.assert_allclose(flat.m2, tree.m2, rtol=1e-12)
    before = parts[0].mean.copy()
    combine_pass1(*parts)
    np.testing.assert_array_equal(parts[0].mean, before)  # inputs untouched


def test_worker_errors_name_the_file(client, tmp_path):
    out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "r", shards=3)
    src = open_parquet(out)  # reads the manifest only: the files are opened on the workers
    part = out / "part-00001.parquet"
    data = part.read_bytes()
    part.write_bytes(data[:100])
    with pytest.raises(ValueError, match=r"part-00001\.parquet: not a readable Parquet file"):
        word_statistics(src, client=client)
    part.unlink()
    with pytest.raises(FileNotFoundError, match=r"missing shard: .*part-00001\.parquet"):
        candidate_covariance(src, [0, 1], client=client)
    with pytest.raises(ValueError, match=r"backend=\"dask\" reads a Parquet dataset"):
        word_statistics(data_path("docword.reuters.txt.gz"), client=client)


def _set_env(key, value):
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


def _interrupted_tasks(dask_scheduler):
    """Tasks taken back from a worker that left while it was processing them."""
    return sorted({
        str(entry[0]).split("-")[0] for entry in dask_scheduler.transition_log
        if entry[1] == "processing" and "worker" in str(entry[4])
    })


def test_killed_worker_gives_the_same_answer(client, synthetic):
    corpus, path = synthetic
    ref = word_statistics(path, "tfidf", "l2")
    client.wait_for_workers(2)
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    client.run(_set_env, _DELAY_ENV, "0.25")  # 24 shards: about 3 s per pass on 2 workers
    killed = {}

    def kill():
        time.sleep(1.0)
        killed["at"] = time.perf_counter()
        os.kill(victim, signal.SIGKILL)

    killer = threading.Thread(target=kill)
    try:
        killer.start()
        # tfidf + l2 is two passes (document frequencies first), both through the cluster
        got = word_statistics(path, "tfidf", "l2", client=client, chunk_size=700)
        done = time.perf_counter()
    finally:
        killer.join()
        client.run(_set_env, _DELAY_ENV, None)
    assert killed["at"] < done  # the worker died while the job ran ...
    assert "_piece_pass1" in client.run_on_scheduler(_interrupted_tasks)  # ... in a task
    assert_stats_equal(got, ref)
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it
    assert victim not in client.run(os.getpid).values()


def test_cli_topics_on_a_local_cluster(client, tmp_path, capsys):
    C = counts_with_edge_cases(seed=2, d=200, w=30)
    docword = tmp_path / "docword.small.txt.gz"
    write_counts(docword, C)
    out = tmp_path / "pq"
    assert main(["convert", str(docword), str(out), "--shards", "2"]) == 0
    capsys.readouterr()
    args = ["--components", "2", "--cardinality", "3", "--format", "json"]
    assert main(["topics", str(out), *args, "--workers", "1"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert main(["topics", str(docword), *args]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert [c["words"] for c in got["components"]] == [c["words"] for c in ref["components"]]
    assert got["n_docs"] == 200 and got["n_candidates"] == ref["n_candidates"]
    # --scheduler connects to a running cluster (the module's)
    assert main(["topics", str(out), *args, "--scheduler", client.scheduler.address]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [c["words"] for c in again["components"]] == [c["words"] for c in ref["components"]]
    # a UCI text file cannot be read by the workers: a one-line error
    assert main(["topics", str(docword), *args, "--workers", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spca: error: backend=\"dask\" reads a Parquet dataset")


def test_dask_pass2_is_accurate_on_large_nearly_constant_counts(client, tmp_path):
    # the shifted recomputation of the cancelling words runs on the cluster too
    import scipy.sparse as sp

    rng = np.random.default_rng(7)
    D = 120
    C = np.column_stack([1e8 + rng.integers(0, 5, D), 2e9 + rng.integers(0, 5, D),
                         rng.integers(0, 2, D) * rng.integers(1, 4, D)])
    out = write_parquet(sp.csr_array(C), tmp_path / "big", shards=3)
    ref = np.cov(C.astype(np.int64).T - C.astype(np.int64).min(axis=0)[:, None], bias=True)
    local = candidate_covariance(out, [0, 1, 2])
    remote = candidate_covariance(out, [0, 1, 2], client=client)
    sd = np.sqrt(np.diag(ref))
    for cov in (local, remote):
        assert np.all(np.abs(cov - ref) <= 1e-8 * np.outer(sd, sd))


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")
@pytest.mark.parametrize("launcher", ["python -m spca", "spca"])
@pytest.mark.parametrize("delay", [0.5, 1.5, 3.0, 5.0])
def test_ctrl_c_while_workers_start_is_one_line(tmp_path, delay, launcher):
    # issue 28, defect 11: distributed's tracebacks (workers hit while
    # importing, the cluster's exit handlers) followed "spca: interrupted".
    # Ctrl-C at a terminal signals the whole process group: so does this.
    # The console script too: its workers' fork server imports it, and
    # printed the line once per worker.
    import subprocess
    from pathlib import Path

    if launcher == "spca":
        script = Path(sys.executable).with_name("spca")
        if not script.exists():
            pytest.skip("no spca console script beside the interpreter")
        command = [str(script)]
    else:
        command = [sys.executable, "-m", "spca"]
    out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "rq")
    proc = subprocess.Popen([*command, "topics", str(out), "--workers", "2", "--quiet"],
                            cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    # Finished before the signal (or had printed its topics, the last thing it
    # does, and the signal came while the interpreter exited: then it dies by
    # SIGINT with nothing on stderr, measured at 2.8 s of a 2.9 s run):
    # nothing to check.
    if proc.returncode == 0 or (out and not err and proc.returncode == -signal.SIGINT):
        pytest.skip(f"the command had printed its topics within {delay} s")
    assert (proc.returncode, err) == (130, "spca: interrupted\n")
    deadline = time.monotonic() + 30  # and no worker process is left behind
    while True:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "worker processes outlived the command"
        time.sleep(0.1)
