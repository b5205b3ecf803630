"""The paper-reproduction script runs end to end in --quick mode and writes a sane report."""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "paper" / "reproduce.py"
QUICK_COMPONENTS = 2  # --quick default


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> Path:
    if not SCRIPT.is_file():
        pytest.skip(f"paper/reproduce.py not found at {SCRIPT} (tests run from an installed "
                    "copy, not the source tree)")
    out = tmp_path_factory.mktemp("paper_output")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--output", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return out


def test_help_documents_options():
    if not SCRIPT.is_file():
        pytest.skip(f"paper/reproduce.py not found at {SCRIPT}")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for option in ("--output", "--quick", "--seed", "--max-first-order-seconds", "--nytimes",
                   "--pubmed", "--fetch"):
        assert option in proc.stdout


def test_files_written(quick_run):
    for name in ("report.md", "results.json", "figure1_speed.csv", "figure1_gap_vs_time.csv",
                 "figure2_word_variances.csv", "components.csv", "timing.csv",
                 "table1_nytsample.csv"):
        assert (quick_run / name).is_file(), name


def test_report_sections(quick_run):
    text = (quick_run / "report.md").read_text()
    for heading in ("## Environment", "## Claims", "## Figure 1", "## Figure 2", "## Table 1",
                    "## Table 2", "## Problem-size reduction", "## Timing"):
        assert heading in text, heading
    assert "numpy" in text and "scipy" in text and "BLAS" in text and "--quick" in text
    assert "1st PC (" in text and "2nd PC (" in text
    assert "Skipped: PubMed was not given" in text
    # every claim row ends in a verdict
    claims = text.split("## Claims", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in claims.splitlines() if r.startswith("| ") and "verdict" not in r]
    assert len(rows) >= 6
    for r in rows:
        verdict = r.rstrip(" |").rsplit("|", 1)[1].strip()
        assert verdict.startswith(("agrees", "differs", "partly agrees", "not comparable",
                                   "not tested")), r
        # the bundled sample is not the paper's NYTimes corpus: no verdict on it
        if "(nytsample)" in r or "nytsample)" in r:
            assert verdict.startswith("not comparable: measured on NYT sample"), r
    assert sum("nytsample" in r for r in rows) >= 5
    # the environment names numpy's BLAS only, not every library threadpoolctl sees
    blas = next(line for line in text.splitlines() if line.startswith("- BLAS"))
    assert blas.count("openblas") + blas.count("mkl") + blas.count("blis") <= 1, blas
    assert "disabled" not in blas


def test_figure1_numbers(quick_run):
    rows = _rows(quick_run / "figure1_speed.csv")
    assert {r["family"] for r in rows} == {"gaussian", "spiked"}
    assert len(rows) >= 4
    for r in rows:
        assert r["bca_converged"] == "True"
        assert float(r["bca_gap"]) <= 1e-3
        assert 0 < float(r["bca_seconds"]) < 30
        assert int(r["reduced_size"]) <= int(r["n"])
        assert float(r["bca_objective"]) <= float(r["bca_upper_bound"]) * (1 + 1e-9)
        if r["fo_seconds"]:
            # the first-order method is capped at 2.5 s in --quick mode
            assert 0 < float(r["fo_seconds"]) < 10
            assert float(r["fo_gap"]) > 0
            assert (r["fo_capped"] == "True") == (r["fo_converged"] == "False")
    gap = _rows(quick_run / "figure1_gap_vs_time.csv")
    assert {r["method"] for r in gap} >= {"bca", "first-order"}
    for family in ("gaussian", "spiked"):
        bca = [r for r in gap if r["family"] == family and r["method"] == "bca"]
        best = [float(r["best_gap"]) for r in bca]
        # a trajectory: the starting bounds (sweep 0), then at least one sweep
        assert len(bca) >= 2 and bca[0]["step"] == "0" and best[0] > 1e-3
        assert best[-1] <= 1e-3
        assert all(b <= a + 1e-15 for a, b in zip(best, best[1:], strict=False))
        seconds = [float(r["seconds"]) for r in bca]
        assert all(b >= a for a, b in zip(seconds, seconds[1:], strict=False))


def test_tables_and_reduction(quick_run):
    comps = _rows(quick_run / "components.csv")
    assert len(comps) == QUICK_COMPONENTS
    for c in comps:
        assert c["corpus"] == "nytsample"
        assert 1 <= int(c["cardinality"]) <= 10
        assert int(c["n_words"]) == 3012
        assert 0 < int(c["reduced_size"]) < int(c["n_words"])
        assert float(c["gap"]) <= 1e-3
        assert float(c["lam"]) > 0
    words = _rows(quick_run / "table1_nytsample.csv")
    assert {int(r["component"]) for r in words} == set(range(1, QUICK_COMPONENTS + 1))
    # removal deflation: the components use disjoint words
    assert len({r["word"] for r in words}) == len(words)
    var = [float(r["variance"]) for r in _rows(quick_run / "figure2_word_variances.csv")]
    assert len(var) == 3012
    assert all(a >= b for a, b in zip(var, var[1:], strict=False))
    timing = _rows(quick_run / "timing.csv")
    assert len(timing) == 1 and float(timing[0]["solve_per_component"]) > 0


def test_cardinality_path(quick_run):
    rows = _rows(quick_run / "cardinality_path.csv")
    pit = [r for r in rows if r["data"] == "pitprops"]
    nyt = [r for r in rows if r["data"] == "NYT sample"]
    assert [int(r["k"]) for r in pit] == list(range(1, 14))
    assert [int(r["k"]) for r in nyt] == list(range(1, 9))
    for r in pit + nyt:
        assert len(r["support"].split()) == int(r["k"])  # exactly k nonzeros
        assert float(r["variance"]) <= float(r["upper_bound"]) * (1 + 1e-9)
        assert 0 < float(r["certified_ratio"]) <= 1 + 1e-9
    for r in pit:  # the brute-force optimum is reached, and bounds it from below
        assert abs(float(r["variance"]) - float(r["exact_optimum"])) <= 1e-4
        assert float(r["exact_optimum"]) <= float(r["upper_bound"]) * (1 + 1e-9)
    # the PNG is written exactly when matplotlib (an optional extra) is there
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        has_matplotlib = False
    else:
        has_matplotlib = True
    assert (quick_run / "cardinality_path.png").is_file() == has_matplotlib


# ---------------------------------------------------------------------------
# The claims code, fed by hand: like is compared with like
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def harness():
    """The harness package next to reproduce.py (paper/ is not installed)."""
    if not SCRIPT.is_file():
        pytest.skip(f"paper/ not found at {SCRIPT.parent}")
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import harness.claims
        import harness.corpora
        import harness.figure2
        import harness.tables

        yield harness
    finally:
        sys.path.remove(str(SCRIPT.parent))


def _corpus(key: str, n_docs: int, n_words: int, *, per_component: float,
            reduced: int) -> dict:
    """A corpus run as corpora.run_corpus returns it, with the numbers given."""
    words = [["company", "percent", "market", "business", "sell"],
             ["play", "game", "team", "season", "player"]]
    rng = np.random.default_rng(0)
    return {
        "key": key, "label": f"{key} corpus", "table": 1, "n_docs": n_docs,
        "n_words": n_words,
        "variance": np.sort(rng.pareto(1.0, n_words))[::-1],
        "components": [{"component": i + 1, "words": w, "cardinality": len(w),
                        "reduced_size": reduced, "lam": 0.1} for i, w in enumerate(words)],
        "timings": {"pass1": 1.0, "pass2": 2.0, "solve": 2 * per_component,
                    "solve_per_component": per_component},
    }


def _claims(harness, c: dict) -> dict[str, str]:
    """Claim name (without the corpus) -> verdict, for every claim about corpus ``c``."""
    args = argparse.Namespace(cardinality=5)
    results = {"corpora": [c]}
    rows = [*harness.figure2.claims(results, args), *harness.tables.claims(results, args),
            *harness.corpora.claims(results, args)]
    return {r.claim.rsplit(" (", 1)[0]: r.verdict for r in rows if c["key"] in r.claim}


def test_claims_on_another_corpus_are_not_comparable(harness):
    # the bundled sample's sizes: a 0.01 s component is not "about 20 s" evidence
    sample = _claims(harness, _corpus("nytsample", 8_447, 3_012, per_component=0.011,
                                      reduced=380))
    assert len(sample) == 5
    for claim, verdict in sample.items():
        assert verdict.startswith("not comparable: measured on nytsample corpus with 8,447 "
                                  "documents and 3,012 words, the paper on NYTimes with "
                                  "300,000 documents"), (claim, verdict)
    # a file given as NYTimes that is not the full corpus is not the paper's data either
    subset = _claims(harness, _corpus("nytimes", 30_000, 102_660, per_component=1.0,
                                      reduced=400))
    assert all(v.startswith("not comparable") for v in subset.values()), subset


def test_claims_on_the_papers_corpus_get_a_verdict(harness):
    fast = _claims(harness, _corpus("nytimes", 300_000, 102_660, per_component=15.0,
                                    reduced=400))
    assert len(fast) == 5
    assert not any(v.startswith("not comparable") for v in fast.values()), fast
    timing = "About 20 s per component incl. the lambda search"
    reduction = "Safe elimination shrinks the problem 150 to 200x"
    assert fast[timing].startswith("agrees")
    assert fast[reduction].startswith("agrees")  # 102,660 / 400 = 257x
    assert fast["Components read as topics"].startswith("agrees")
    slow = _claims(harness, _corpus("nytimes", 300_000, 102_660, per_component=100.0,
                                    reduced=5_000))
    assert slow[timing].startswith("differs")
    assert slow[reduction].startswith("differs")  # 21x


def test_figure2_says_which_words_it_leaves_out(harness, tmp_path):
    pytest.importorskip("matplotlib")
    from harness.common import pyplot

    plt = pyplot()
    captured = []
    close = plt.close
    c = _corpus("nytsample", 100, 50, per_component=0.01, reduced=10)
    c["variance"] = np.concatenate([c["variance"][:47], np.zeros(3)])
    results = {"corpora": [c]}
    try:
        plt.close = lambda fig: captured.append(fig)  # keep the figure to inspect it
        names = harness.figure2.plot(results, argparse.Namespace(), tmp_path, plt)
    finally:
        plt.close = close
    assert names == ["figure2_word_variances.png"]
    assert (tmp_path / names[0]).is_file()
    ax = captured[0].axes[0]
    assert ax.get_yscale() == "log"
    assert ax.lines[0].get_ydata().size == 47
    notes = [t.get_text() for t in ax.texts]
    assert any(t.startswith("3 words of variance 0") and "not shown" in t for t in notes), notes
    close(captured[0])
    # no zero variance, no note
    c["variance"] = c["variance"][:47]
    try:
        plt.close = lambda fig: captured.append(fig)
        harness.figure2.plot(results, argparse.Namespace(), tmp_path, plt)
    finally:
        plt.close = close
    assert len(captured[1].axes[0].texts) == 0
    close(captured[1])


def test_point_labels_avoid_markers(harness):
    pytest.importorskip("matplotlib")
    import harness.figure1 as figure1
    from harness.common import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    # a labelled point with other markers right below, beside and above it
    ax.loglog([10, 20, 40], [1.0, 1.0, 1.0], "s-", ms=9)
    ax.loglog([18, 20, 22], [0.85, 0.8, 0.85], "^", ms=8)
    ax.loglog([20], [1.2], "o")
    ax.set_xlim(5, 80)
    ax.set_ylim(0.1, 10)
    fig.tight_layout()
    texts = figure1.place_labels(ax, [("gap 1.5e-03", (20, 1.0)), ("gap 2.0e-02", (40, 1.0))])
    renderer = fig.canvas.get_renderer()
    markers, _ = figure1._obstacles(ax, renderer)
    boxes = [t.get_window_extent(renderer) for t in texts]
    assert [t.get_text() for t in texts] == ["gap 1.5e-03", "gap 2.0e-02"]
    for box in boxes:
        assert not any(box.overlaps(m) for m in markers)
    assert not boxes[0].overlaps(boxes[1])
    plt.close(fig)


def test_environment_names_numpys_blas(harness):
    import harness.environment as environment

    libraries = [
        {"user_api": "openmp", "internal_api": "openmp", "filepath": "/x/libgomp.so"},
        {"user_api": "blas", "internal_api": "openblas", "version": "0.3.30",
         "filepath": "/venv/site-packages/scipy.libs/libscipy_openblas.so"},
        {"user_api": "blas", "internal_api": "openblas", "version": "0.3.31",
         "filepath": "/venv/site-packages/numpy.libs/libscipy_openblas64_.so",
         "threading_layer": "pthreads", "architecture": "SkylakeX"},
        {"user_api": "blas", "internal_api": "openblas", "version": "0.3.15",
         "filepath": "/venv/site-packages/scs.libs/libopenblas.so",
         "threading_layer": "disabled"},
    ]
    chosen = environment.blas_in_use(libraries)
    assert chosen is libraries[2]
    assert environment.describe_blas(chosen) == "openblas 0.3.31 (pthreads, SkylakeX)"
    # this process: numpy's own BLAS, whichever it is
    env = environment.environment(["reproduce.py"])
    assert env["blas"] is None or env["blas"]["filepath"] in {
        t["filepath"] for t in env["threadpools"]}
