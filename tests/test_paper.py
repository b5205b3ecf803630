"""The paper-reproduction script runs end to end in --quick mode and writes a sane report."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

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
        assert verdict.startswith(("agrees", "differs", "partly agrees", "not tested")), r


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
        bca = [float(r["best_gap"]) for r in gap
               if r["family"] == family and r["method"] == "bca"]
        assert bca and bca[-1] <= 1e-3
        assert all(b <= a + 1e-15 for a, b in zip(bca, bca[1:], strict=False))


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
