"""sparse_topics and the command line, on the bundled corpora and small files."""

import gzip
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import spca
from spca.cli import main
from spca.datasets import data_path, load_reuters_sample, make_synthetic_corpus
from spca.text import sparse_topics, word_statistics


def planted_corpus():
    syn = make_synthetic_corpus(3000, 400, n_topics=3, words_per_topic=4, random_state=0)
    return syn


def test_planted_topics_are_recovered():
    syn = planted_corpus()
    res = sparse_topics(syn.counts, n_components=3, cardinality=4, n_candidates=16)
    found = [set(t.word_ids.tolist()) for t in res.topics]
    planted = [set(np.asarray(t).tolist()) for t in syn.topics]
    for topic in planted:
        assert topic in found, (topic, found)
    for t in res.topics:
        assert t.exact_cardinality and t.converged and t.gap <= 1e-6
        assert np.linalg.norm(t.loadings) == pytest.approx(1.0)
        # ranked by |loading|
        assert np.all(np.diff(np.abs(t.loadings)) <= 1e-15)


def test_candidate_set_is_enlarged_until_exact():
    syn = planted_corpus()
    small = sparse_topics(syn.counts, n_components=2, cardinality=4, n_candidates=4)
    stats = word_statistics(syn.counts)
    var = np.sort(stats.variance)[::-1]
    lam_min = min(t.lam for t in small.topics)
    # no word left out of the candidates could survive elimination
    assert small.n_candidates == stats.n_words or var[small.n_candidates] <= lam_min
    # and the answer equals the one computed with every word as a candidate
    full = sparse_topics(syn.counts, n_components=2, cardinality=4, n_candidates=10_000)
    for a, b in zip(small.topics, full.topics, strict=True):
        assert a.words == b.words
        assert a.lam == pytest.approx(b.lam, rel=1e-9)
        assert a.reduced_size == b.reduced_size


def test_reuters_sample_topics():
    corpus = load_reuters_sample()
    res = sparse_topics(corpus, n_components=2, cardinality=3)
    assert len(res.topics) == 2
    for t in res.topics:
        assert all(isinstance(w, str) for w in t.words)
        # exactly 3 words, or the nearest cardinality with the reason
        assert t.exact_cardinality == (len(t.words) == 3)
        assert t.exact_cardinality or "k=3" in t.note
        assert t.reduced_size <= res.n_words
    # removal deflation: disjoint word lists
    assert not set(res.topics[0].words) & set(res.topics[1].words)
    d = res.as_dict()
    assert set(d["components"][0]) >= {"words", "loadings", "lam", "reduced_size",
                                       "explained_variance", "gap"}
    json.dumps(d)


def test_bad_arguments():
    X = sp.csr_array(np.eye(5))
    with pytest.raises(ValueError, match="cardinality must be <= the number of words"):
        sparse_topics(X, cardinality=6)
    with pytest.raises(ValueError, match="vocabulary has 2 words but the corpus has 5"):
        sparse_topics(X, ["a", "b"], cardinality=1)
    with pytest.raises(ValueError, match="n_components must be >= 1, got 0"):
        sparse_topics(X, n_components=0)


def write_uci(path, counts):
    counts = sp.coo_matrix(counts)
    order = np.lexsort((counts.col, counts.row))
    lines = [str(counts.shape[0]), str(counts.shape[1]), str(counts.nnz)]
    lines += [f"{r + 1} {c + 1} {int(v)}" for r, c, v in
              zip(counts.row[order], counts.col[order], counts.data[order], strict=True)]
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")


@pytest.fixture
def files(tmp_path):
    syn = planted_corpus()
    docword = tmp_path / "docword.test.txt.gz"
    vocab = tmp_path / "vocab.test.txt"
    write_uci(docword, syn.counts)
    vocab.write_text("\n".join(f"word{i}" for i in range(syn.counts.shape[1])) + "\n")
    return docword, vocab, syn


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "csv"])
def test_cli_formats(files, fmt, capsys):
    docword, vocab, syn = files
    code = main(["topics", str(docword), str(vocab), "--components", "2",
                 "--cardinality", "4", "--format", fmt, "--candidates", "16"])
    assert code == 0
    out = capsys.readouterr()
    # no progress bars when stderr is not a terminal; the summary of table and
    # markdown goes to stderr, so that stdout holds the result alone
    if fmt in ("json", "csv"):
        assert out.err == ""
    else:
        assert out.err.startswith("corpus: ") and "1st PC: lam=" in out.err
        assert "corpus:" not in out.out and "lam=" not in out.out
    planted = {f"word{i}" for i in np.asarray(syn.topics[0])}
    if fmt == "json":
        data = json.loads(out.out)
        assert len(data["components"]) == 2
        assert any(set(c["words"]) == planted for c in data["components"])
        for c in data["components"]:
            assert c["explained_variance"] <= c["variance_upper_bound"] * (1 + 1e-9)
            assert c["certified_ratio"] == pytest.approx(
                c["explained_variance"] / c["variance_upper_bound"])
            assert c["origin"]
    elif fmt == "csv":
        rows = out.out.strip().splitlines()
        assert rows[0].startswith("component,rank,word,loading")
        assert rows[0].endswith(",variance_upper_bound,certified_ratio")
        assert len(rows) == 1 + 2 * 4
        ratio = float(rows[1].split(",")[-1])
        assert 0 < ratio <= 1 + 1e-9
    else:
        assert "1st PC (4 words)" in out.out and "2nd PC (4 words)" in out.out
        assert all(w in out.out for w in planted)
        assert out.err.count("certified ratio=") == 2
        # the last line of the table holds each component's certified ratio
        ratios = [float(x) for x in re.findall(r"ratio (\d\.\d+)", out.out.splitlines()[-1])]
        assert len(ratios) == 2 and all(0 < r <= 1 + 1e-9 for r in ratios)
        if fmt == "markdown":
            assert out.out.startswith("| 1st PC")


def test_cli_quiet_prints_the_table_alone(files, capsys):
    docword, vocab, _ = files
    assert main(["topics", str(docword), str(vocab), "--components", "1",
                 "--cardinality", "4", "--candidates", "16", "--quiet"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out.startswith("1st PC (4 words)")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["topics", "/nonexistent/docword.txt"], "nonexistent"),
        (["topics", "--sample", "reuters", "--cardinality", "5000", "--max-candidates", "5000"],
         "cardinality must be <= the number of words with positive variance"),
    ],
)
def test_cli_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("spca: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        # issue 29: these exited 1 without the usage line
        (["topics"], "spca topics: error: a docword file (or --sample) is required"),
        (["topics", "--sample", "reuters", "--cardinality", "0"],
         "spca topics: error: argument --cardinality: must be >= 1, got 0"),
        (["topics", "--sample", "reuters", "--components", "-1"], "--components: must be >= 1"),
        (["topics", "--sample", "reuters", "--candidates", "0"], "--candidates: must be >= 1"),
        (["topics", "--sample", "reuters", "--tol", "0"], "--tol: tol must be > 0, got 0.0"),
        (["topics", "--sample", "reuters", "--tol", "1e-20"], "--tol: tol must be >= 1e-12"),
        (["topics", "--sample", "reuters", "x.txt"], "either --sample or docword/vocab"),
        (["topics", "--sample", "reuters", "--max-candidates", "4"],
         "--max-candidates (4) must be >= --cardinality (5)"),
        (["topics", "--sample", "reuters", "--workers", "0"], "--workers: must be >= 1"),
        (["convert", "a.txt", "out", "--shards", "0"], "spca convert: error: argument --shards"),
        # and argparse's own, as before
        (["topics", "--sample", "reuters", "--cardinality", "x"],
         "--cardinality: expected a positive integer, got 'x'"),
        (["topics", "--format", "xml"], "argument --format: invalid choice"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_usage_errors_exit_2_with_the_usage_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: spca") and message in err, err
    assert "Traceback" not in err


def test_cli_says_when_there_is_no_vocabulary(tmp_path, capsys):
    # issue 29: a converted dataset printed w0, w1, ... without a word of why
    from spca.text import convert_uci_to_parquet

    out = convert_uci_to_parquet(data_path("docword.reuters.txt.gz"), tmp_path / "rq")
    args = ["--components", "1", "--cardinality", "3", "--format", "csv"]
    assert main(["topics", str(out), *args]) == 0
    got = capsys.readouterr()
    assert got.err.count("\n") == 1 and got.err.startswith(
        f"spca: note: {out} has no vocabulary: words are shown as w<index>")
    assert f"spca topics {out} VOCAB_FILE" in got.err
    assert re.search(r"^1,1,w\d+,", got.out, re.M)  # the placeholder names
    # with the vocabulary: real words and no note
    vocab = data_path("vocab.reuters.txt")
    assert main(["topics", str(out), str(vocab), *args]) == 0
    named = capsys.readouterr()
    assert named.err == "" and not re.search(r",w\d+,", named.out)
    assert "1,1,pope," in named.out
    assert main(["topics", str(out), *args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_cli_bad_vocabulary(files, tmp_path, capsys):
    docword, _, _ = files
    bad = tmp_path / "vocab.bad.txt"
    bad.write_text("a\nb\n")
    assert main(["topics", str(docword), str(bad)]) == 1
    assert "spca: error:" in capsys.readouterr().err


def test_python_dash_m_runs_the_same_command(tmp_path):
    # run from an empty directory, so that `-m` finds the installed package and
    # not a source tree in the working directory
    out = subprocess.run(
        [sys.executable, "-m", "spca", "topics", "--sample", "reuters", "--components", "1",
         "--cardinality", "3", "--format", "json"],
        capture_output=True, text=True, check=True, timeout=300, cwd=tmp_path,
    )
    data = json.loads(out.stdout)
    assert len(data["components"][0]["words"]) == 3
    assert spca.__version__


def test_cli_on_the_bundled_nyt_sample(capsys):
    assert main(["topics", "--sample", "nytimes", "--components", "2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_docs"] == 8447 and data["n_words"] == 3012
    first, second = data["components"]
    assert len(first["words"]) == len(second["words"]) == 5
    # the business and sports components of the paper's Table 1
    assert {"company", "market", "business", "percent"} <= set(first["words"])
    assert {"game", "team", "season", "play"} <= set(second["words"])
    assert first["reduced_size"] < 3012 and first["gap"] <= 1e-6


def test_cli_no_refit_keeps_the_solver_loadings(files, capsys):
    # the same word lists; the loadings are the solver's (not the leading
    # eigenvector of each list's covariance)
    docword, vocab, _ = files
    args = ["topics", str(docword), str(vocab), "--components", "2", "--cardinality", "4",
            "--format", "json", "--candidates", "16"]
    assert main(args) == 0
    fit = json.loads(capsys.readouterr().out)
    assert main(args + ["--no-refit"]) == 0
    raw = json.loads(capsys.readouterr().out)
    for a, b in zip(fit["components"], raw["components"], strict=True):
        assert set(a["words"]) == set(b["words"])
        assert a["explained_variance"] >= b["explained_variance"] * (1 - 1e-12)
    assert any(a["loadings"] != b["loadings"]
               for a, b in zip(fit["components"], raw["components"], strict=True))


@pytest.mark.parametrize("argv, message, status", [
    (["topics", "--sample", "reuters", "--workers", "2"], "in-memory corpus", 2),
    (["topics", str(data_path("docword.reuters.txt.gz")), "--workers", "2"],
     "reads a Parquet dataset", 1),
])
def test_cli_dask_refuses_unreadable_sources_before_starting_a_cluster(argv, message, status,
                                                                       capsys, monkeypatch):
    from spca.text import _dask

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(_dask, "local_cluster", no_cluster)
    if status == 2:  # a usage error
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
    else:
        assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("usage: spca" if status == 2 else "spca: error:") and message in err


def _tied_corpus(n_words: int) -> sp.csr_array:
    # 2 documents, every word once in the first: all variances tie (issue 28, defect 6)
    return sp.csr_array(np.vstack([np.ones(n_words), np.zeros(n_words)]))


def test_tied_variances_keep_the_candidates_bounded():
    # was: enlarged to all 30,000 words, a 6.7 GiB covariance
    res = sparse_topics(_tied_corpus(30_000), n_components=2, cardinality=5,
                        n_candidates=64)
    assert res.n_candidates == 64 and res.candidate_rounds == 1
    assert "30000 words have variance above" in res.message
    assert "max_candidates=4096" in res.message
    for t in res.topics:
        # every 5-word list has variance 5 * 0.25: optimal over the whole vocabulary
        assert len(t.words) == 5
        assert t.explained_variance == pytest.approx(1.25, rel=1e-9)
        assert t.certified_ratio == pytest.approx(1.0, abs=1e-9)
    # ties broken deterministically
    again = sparse_topics(_tied_corpus(30_000), n_components=2, cardinality=5,
                          n_candidates=64)
    assert [t.words for t in again.topics] == [t.words for t in res.topics]


def test_enlargement_stops_at_max_candidates_with_a_warning():
    syn = planted_corpus()
    stats = word_statistics(syn.counts)
    free = sparse_topics(syn.counts, n_components=2, cardinality=4, n_candidates=4)
    assert free.n_candidates > 10  # enlarged past 10 when not capped
    with pytest.warns(UserWarning, match="formed for 10 candidate words only"):
        capped = sparse_topics(syn.counts, n_components=2, cardinality=4, n_candidates=4,
                               max_candidates=10)
    assert capped.n_candidates == 10 < stats.n_words
    assert "max_candidates=10" in capped.message
    # the bounds still hold for the whole vocabulary: at least the full run's variances
    for c, f in zip(capped.topics, free.topics, strict=True):
        assert c.variance_upper_bound >= f.explained_variance * (1 - 1e-9)
    with pytest.raises(ValueError, match="max_candidates must be >= cardinality"):
        sparse_topics(syn.counts, cardinality=4, max_candidates=3)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS: Linux only")
def test_cli_on_tied_variances_under_a_memory_cap(tmp_path):
    from spca.text import write_uci

    path = tmp_path / "docword.tie.txt"
    write_uci(path, None, _tied_corpus(30_000))
    assert path.stat().st_size < 300_000  # the 289 KB input
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30));"
            "from spca.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "topics", str(path), "--components",
                           "1", "--candidates", "64"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert "note: 30000 words have variance above" in proc.stderr
    assert "ratio 1.000" in proc.stdout
    # candidates the cap cannot hold: one line that says how much memory they need
    proc = subprocess.run([sys.executable, "-c", code, "topics", str(path), "--components",
                           "1", "--candidates", "20000", "--max-candidates", "20000"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        "spca: error: out of memory forming the covariance of 20000 candidate words (at "
        "least 3 GiB): lower max_candidates (--max-candidates on the command line)\n")


# -- the speed work of issue 27 (text part): each change keeps or improves the answers --


def _nyt_candidates(n=1024):
    """The operator sparse_topics forms on the NYT sample: the covariance of the
    n words of largest variance, with the largest variance left out."""
    from spca._variance import _MatrixCovariance
    from spca.datasets import load_nytimes_sample
    from spca.text import candidate_covariance

    nyt = load_nytimes_sample()
    stats = word_statistics(nyt)
    order = np.argsort(-stats.variance, kind="stable")
    words = np.sort(order[:n])
    C = candidate_covariance(nyt, words, stats=stats)

    def operator():
        cov = _MatrixCovariance.formed(C.copy())
        cov.outside_variance = float(stats.variance[order[n]])
        return cov

    return operator


def test_inherited_probe_starts_keep_the_words_and_never_raise_a_bound(monkeypatch):
    # The certificate probes of a removal deflation start from the earlier
    # components' solves (see _Solver.inherited).  Against the cold probes:
    # the same words, every bound as low or lower (up to rounding), and the
    # later components' probes do start from an inherited solve.
    from spca import _path
    from spca._deflation import sparse_components

    operator = _nyt_candidates()
    used = []
    original = _path._Solver._warm_start

    def spy(self, lam, W, G, inherited=False):
        X0, diag = original(self, lam, W, G, inherited)
        if inherited and self.inherited:
            used.append(not isinstance(X0, spca.DSPCAResult))
        return X0, diag

    monkeypatch.setattr(_path._Solver, "_warm_start", spy)
    warm = sparse_components(operator(), 5, cardinality=5, deflation="removal")
    assert used and all(used)  # (never an inherited result: its dual belongs elsewhere)
    monkeypatch.setattr(_path._Solver, "_warm_start",
                        lambda self, lam, W, G, inherited=False: original(self, lam, W, G))
    cold = sparse_components(operator(), 5, cardinality=5, deflation="removal")
    for a, b in zip(warm.components, cold.components, strict=True):
        assert a.support.tolist() == b.support.tolist()
        assert a.variance == pytest.approx(b.variance, rel=1e-12)
        assert a.variance_upper_bound <= b.variance_upper_bound * (1 + 1e-12)


def test_inherited_solves_only_for_the_removal_deflation():
    from spca import _path

    seen = []
    original = _path._search

    def spy(*args, **kwargs):
        seen.append(len(kwargs["solver"].inherited))
        return original(*args, **kwargs)

    rng = np.random.default_rng(0)
    F = rng.standard_normal((200, 30))
    F[:, :4] += 2 * rng.standard_normal((200, 1))
    S = F.T @ F / 200
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("spca._deflation._search", spy)
        spca.sparse_components(S, 3, cardinality=3, deflation="schur")
        assert seen == [0, 0, 0]
        seen.clear()
        spca.sparse_components(S, 3, cardinality=3, deflation="removal")
        assert seen[0] == 0 and seen[1] > 0 and seen[2] > 0


def test_nested_blas_limits_set_one_thread_once_and_restore():
    from threadpoolctl import threadpool_info

    from spca import _bca

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    with _bca._blas_threads(10):
        assert set(blas_threads()) <= {1}
        with _bca._blas_threads(10):
            assert set(blas_threads()) <= {1}
            assert _bca._blas_depth == 2
        assert set(blas_threads()) <= {1}
    assert _bca._blas_depth == 0
    assert blas_threads() == before


@pytest.mark.parametrize("m", [1, 2, 7, 120])
@pytest.mark.parametrize("lam", [0.0, 0.25, 0.5, 3.0])
def test_soft_threshold_is_the_sign_formula(m, lam):
    # (the dual columns of every solve's start, see spca._bca._start)
    from spca._bca import _soft_threshold

    rng = np.random.default_rng(m)
    A = np.round(rng.standard_normal((m, m)) * 4) / 8  # entries equal to +-lam too
    S = np.asfortranarray(A + A.T)
    ref = np.sign(S) * np.maximum(np.abs(S) - lam, 0.0)
    np.fill_diagonal(ref, np.diag(S) - lam)
    before = S.copy()
    M = _soft_threshold(S, lam)
    assert np.array_equal(M, ref) and M.flags.c_contiguous
    assert np.array_equal(S, before)


@pytest.mark.parametrize("m, c, n", [(5, 5, 7), (9, 4, 6), (1, 1, 1), (30, 12, 40), (8, 0, 3)])
def test_warm_start_expansion_is_the_ix_assignment(m, c, n):
    # (the warm start of a solve over new features, see _Solver._warm_start)
    from spca._path import _expand

    rng = np.random.default_rng(m + c)
    X = rng.standard_normal((n, n))
    i_prev = np.sort(rng.choice(n, c, replace=False))
    i_new = np.sort(rng.choice(m, c, replace=False))
    ref = np.zeros((m, m))
    ref[np.ix_(i_new, i_new)] = X[np.ix_(i_prev, i_prev)]
    before = X.copy()
    out = _expand(X, i_prev, i_new, m)
    assert out.shape == (m, m) and out.flags.c_contiguous
    assert np.array_equal(out, ref) and np.array_equal(X, before)


def test_a_warm_start_leaves_the_earlier_result_unchanged():
    # (a result keeps its solve's own dual columns, not a copy: the next
    # solve started from it must copy them before updating)
    rng = np.random.default_rng(3)
    F = rng.standard_normal((100, 25))
    F[:, :5] += rng.standard_normal((100, 1))
    S = F.T @ F / 100
    first = spca.dspca_bca(S, 0.05)
    assert first._dual_columns is not None  # (one block: the solve's own columns)
    M, X, Z = first._dual_columns.copy(), first.X.copy(), first.Z.copy()
    second = spca.dspca_bca(S, 0.05, X0=first)
    third = spca.dspca_bca(S, 0.04, X0=first)
    assert second.upper_bound >= second.objective and third.upper_bound >= third.objective
    assert np.array_equal(first._dual_columns, M)
    assert np.array_equal(first.X, X) and np.array_equal(first.Z, Z)


# -- the searches' fixed costs (issue 27's text item) ------------------------------


def _random_covariance(seed, n=40, rank=6):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((3 * n, rank)) @ rng.standard_normal((rank, n))
    F += 0.3 * rng.standard_normal((3 * n, n))
    return F.T @ F / (3 * n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_removal_in_place_gives_the_copy_answers_and_restores_the_base(seed):
    # An owned base (the candidate covariance of sparse_topics) is zeroed in
    # place by the removals and written back: the same components and bounds
    # as with a copy, and the array bit for bit as it was.
    from spca._variance import _MatrixCovariance

    S = _random_covariance(seed)
    copy_cov = _MatrixCovariance.formed(S.copy())
    owned = S.copy()
    cov = _MatrixCovariance.formed(owned)
    cov.owned = True
    a = spca.sparse_components(copy_cov, 4, cardinality=3, deflation="removal")
    b = spca.sparse_components(cov, 4, cardinality=3, deflation="removal")
    assert np.array_equal(owned, S)
    for ca, cb in zip(a.components, b.components, strict=True):
        assert np.array_equal(ca.support, cb.support)
        assert np.array_equal(ca.loadings, cb.loadings)
        assert ca.variance_upper_bound == cb.variance_upper_bound
    assert np.array_equal(a.explained.variance, b.explained.variance)


def test_removal_in_place_restores_overlapping_rows_in_order():
    # Rows removed later hold zeros at the columns removed before: the
    # restore goes latest first, so every entry gets its original value.
    from spca._deflation import _DeflatedCovariance
    from spca._variance import _MatrixCovariance

    S = _random_covariance(5, n=12)
    owned = S.copy()
    cov = _MatrixCovariance.formed(owned)
    cov.owned = True
    work = _DeflatedCovariance(cov)
    for support in ([0, 3], [5, 1, 7], [11]):
        x = np.zeros(12)
        x[support] = 1.0 / np.sqrt(len(support))
        work.deflate(x, "removal")
        removed = ~work.active
        assert not owned[removed].any() and not owned[:, removed].any()
        # the operator is the masked base either way
        B = work.block(np.arange(12))
        kept = np.flatnonzero(work.active)
        assert np.array_equal(B[np.ix_(kept, kept)], S[np.ix_(kept, kept)])
    work.restore()
    assert np.array_equal(owned, S)
    assert work.dense_view() is owned and not work.inactive_rows_zero


def test_caller_matrix_is_not_zeroed_by_removal():
    # Without owned (any caller's matrix) the removal works on a copy.
    S = _random_covariance(3)
    before = S.copy()
    spca.sparse_components(S, 3, cardinality=3, deflation="removal")
    assert np.array_equal(S, before)


@pytest.mark.parametrize("seed", range(6))
def test_best_cluster_row_is_the_row_of_largest_score(seed):
    # The scan in bound order stops early but picks the row that scoring all
    # of them picks (the first on ties: duplicated rows make ties).
    from spca._path import _best_cluster_row

    rng = np.random.default_rng(seed)
    m, k = 30, int(rng.integers(2, 7))
    B = _random_covariance(seed, n=m)
    if seed % 2:
        B[[4, 9]] = B[[9, 9]]  # (a duplicated row and column: equal scores)
        B[:, [4, 9]] = B[:, [9, 9]]
    d = np.diag(B).copy()
    rowmax = np.abs(B - np.diag(d)).max(axis=1)
    bound = d + (k - 1) * rowmax
    top = np.argsort(-bound, kind="stable")[:20]
    A = np.abs(B[top])
    A[np.arange(top.size), top] = 0.0
    rows = d[top] + np.partition(A, m - k + 1, axis=1)[:, m - k + 1:].sum(axis=1)
    expected = top[np.argsort(-rows, kind="stable")[:1]]
    assert np.array_equal(_best_cluster_row(B, d, bound, top, k), expected)


def test_vocabulary_kinds_name_the_same_words():
    syn = planted_corpus()
    vocab = [f"word{i}" for i in range(syn.counts.shape[1])]
    kinds = [vocab, tuple(vocab), np.array(vocab), iter(vocab)]
    lists = [[t.words for t in sparse_topics(syn.counts, v, n_components=2, cardinality=4,
                                             n_candidates=16).topics] for v in kinds]
    assert all(words == lists[0] for words in lists)
    assert all(w.startswith("word") for words in lists[0] for w in words)
    plain = sparse_topics(syn.counts, n_components=2, cardinality=4, n_candidates=16)
    assert [[w.replace("w", "word", 1) for w in t.words] for t in plain.topics] == lists[0]
    with pytest.raises(ValueError, match="vocabulary has 3 words but the corpus has 400"):
        sparse_topics(syn.counts, iter(vocab[:3]), n_components=1, cardinality=4)

