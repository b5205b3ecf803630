"""Reproduce the experiments of Zhang & El Ghaoui, NIPS 2011, with ``spca``.

Writes into ``--output`` (default ``paper/output`` next to this script):

* ``figure1_speed.csv`` / ``.png`` -- seconds for block coordinate ascent
  (``spca.dspca_bca``) and the first-order method of d'Aspremont et al. 2007
  (``spca.dspca_first_order``) to reach the same certified relative duality
  gap, against n, on the paper's two covariance families; cvxpy + SCS as a
  third curve when cvxpy is installed (``figure1_cvxpy_scs.csv``).
* ``figure1_gap_vs_time.csv`` / ``.png`` -- certified gap against seconds at
  one n.
* ``figure2_word_variances.csv`` / ``.png`` -- sorted word variances of every
  corpus run.
* ``table1_<corpus>.csv``, ``table2_pubmed.csv`` -- the words of the top
  sparse components; ``components.csv`` -- per component the cardinality,
  penalty, problem-size reduction, certified gap and time; ``timing.csv``.
* ``results.json`` -- every number above; ``report.md`` -- each of the
  paper's claims beside this run's numbers, with a verdict computed from them.

The work is done by one module per artefact in ``paper/harness/``
(``figure1``, ``figure2``, ``tables``, ``corpora``; ``claims`` computes the
verdicts, ``report`` writes report.md, ``environment`` and ``common`` are
shared); this script parses the command line and runs them in the order of
``ARTEFACTS``.

Every number written is measured by this run; the only numbers typed in are
the paper's own, quoted as such (``PAPER`` below).  Seeds are fixed
(``--seed``).  BLAS, and the OpenMP threads of the text pipeline's pass 2,
are limited to ``--blas-threads`` threads (default 1) for all timings.  The
PNGs need matplotlib (``pip install .[paper]``); without it only the CSVs
are written and the report says so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script: sys.path[0] is HERE already
    sys.path.insert(0, str(HERE))

from harness import cardinality, corpora, figure1, figure2, tables  # noqa: E402
from harness.common import PAPER, jsonable, pyplot  # noqa: E402
from harness.environment import describe_blas, environment  # noqa: E402
from harness.report import write_report  # noqa: E402

# The artefacts, in the order of report.md (see harness/__init__.py for what a
# module may define); the corpus runs are measured after Figure 1.
ARTEFACTS = (figure1, figure2, tables, corpora, cardinality)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="reproduce.py",
        description=(
            "Reproduce Figures 1-2 and Tables 1-2 of Zhang & El Ghaoui, 'Large-Scale Sparse "
            "PCA with Application to Text Data' (NIPS 2011), and write report.md comparing "
            "each claim with this run's numbers. Default run: 5 to 8 minutes on 2 cores; "
            "--quick: well under a minute."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "outputs (in --output): report.md, results.json, figure1_speed.{csv,png},\n"
            "  figure1_gap_vs_time.{csv,png}, figure1_cvxpy_scs.csv (with cvxpy+SCS),\n"
            "  figure2_word_variances.{csv,png}, table1_<corpus>.csv, table2_pubmed.csv,\n"
            "  components.csv, timing.csv; PNGs only when matplotlib is installed.\n\n"
            "examples:\n"
            "  python paper/reproduce.py                  # bundled NYT sample, 5-8 min\n"
            "  python paper/reproduce.py --quick          # < 1 min\n"
            "  python paper/reproduce.py --nytimes docword.nytimes.txt.gz vocab.nytimes.txt\n"
            "  python paper/reproduce.py --pubmed docword.pubmed.txt.gz vocab.pubmed.txt\n"
            "  python paper/reproduce.py --fetch nytimes pubmed   # download from UCI first"
        ),
    )
    p.add_argument("--output", type=Path, default=HERE / "output",
                   help="directory for CSVs, PNGs, results.json and report.md "
                        "(default: paper/output next to this script)")
    p.add_argument("--quick", action="store_true",
                   help="small run for tests: n in 20..60, first-order capped at 2.5 s, "
                        "2 components on the bundled NYT sample")
    p.add_argument("--seed", type=int, default=0,
                   help="random_state of the synthetic covariance matrices (default 0)")
    p.add_argument("--max-first-order-seconds", type=float, default=None,
                   help="wall-clock cap of each first-order run (default 60, --quick 2.5)")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="n for Figure 1 (default 20 40 80 160 320 500, --quick 20 40 60)")
    p.add_argument("--first-order-max-n", type=int, default=None,
                   help="largest n the first-order method is run at (default 320, --quick 60)")
    p.add_argument("--gap-n", type=int, default=None,
                   help="n of the gap-vs-time panel, one of --sizes (default 80, --quick 60)")
    p.add_argument("--cvxpy-max-n", type=int, default=None,
                   help="largest n solved with cvxpy+SCS (default 160, --quick 40; 0 = never)")
    p.add_argument("--components", type=int, default=None,
                   help="sparse components per corpus (default 5, --quick 2)")
    p.add_argument("--cardinality", type=int, default=5,
                   help="target words per component (default 5)")
    p.add_argument("--nytimes", nargs=2, metavar=("DOCWORD", "VOCAB"), type=Path,
                   help="full UCI NYTimes files (docword.nytimes.txt[.gz], vocab.nytimes.txt) "
                        "for Table 1 instead of the bundled 8,447-article sample")
    p.add_argument("--pubmed", nargs=2, metavar=("DOCWORD", "VOCAB"), type=Path,
                   help="full UCI PubMed files for Table 2 (7.8 GB uncompressed: long)")
    p.add_argument("--fetch", nargs="*", choices=["nytimes", "pubmed"], default=None,
                   help="download (once, into $SPCA_DATA or ~/spca_data) the named UCI "
                        "corpora and use them; bare --fetch means nytimes")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS (and pass-2 OpenMP) threads during the run, set with "
                        "threadpoolctl (default 1)")
    args = p.parse_args(argv)
    q = args.quick
    if args.max_first_order_seconds is None:
        args.max_first_order_seconds = 2.5 if q else 60.0
    if args.sizes is None:
        args.sizes = [20, 40, 60] if q else [20, 40, 80, 160, 320, 500]
    args.sizes = sorted(set(args.sizes))
    if args.first_order_max_n is None:
        args.first_order_max_n = 60 if q else 320
    if args.gap_n is None:
        args.gap_n = 60 if q else 80
    if args.gap_n not in args.sizes:
        p.error(f"--gap-n {args.gap_n} must be one of --sizes {args.sizes}")
    if args.cvxpy_max_n is None:
        args.cvxpy_max_n = 40 if q else 160
    if args.components is None:
        args.components = 2 if q else 5
    if args.fetch is not None and not args.fetch:
        args.fetch = ["nytimes"]
    return args


def _each(hook: str):
    """The artefacts' functions named ``hook``, in order."""
    return [getattr(m, hook) for m in ARTEFACTS if hasattr(m, hook)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    t_start = time.perf_counter()
    out = args.output.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = environment([str(Path(__file__)), *argv])
    print(f"spca {env['versions']['spca']}, numpy {env['versions']['numpy']}, scipy "
          f"{env['versions']['scipy']}; CPU {env['cpu']}, {env['cores']} cores")
    print(f"BLAS (numpy's): {describe_blas(env['blas'])}")
    print(f"command: {env['command']}")
    print(f"output: {out}", flush=True)

    results: dict = {}
    for prepare in _each("prepare"):
        prepare(args, results)
    with threadpool_limits(limits=args.blas_threads):
        for measure in _each("measure"):
            measure(args, results)

    plt = pyplot()
    png_files = []
    if plt is None:
        plot_note = ("matplotlib is not installed: CSVs only, no PNGs "
                     "(`pip install matplotlib` or `pip install .[paper]`)")
    else:
        for plot in _each("plot"):
            png_files += plot(results, args, out, plt)
        plot_note = f"matplotlib {env['versions']['matplotlib']}: " + ", ".join(png_files)
    print(f"plots: {plot_note}")
    csv_files = [name for write in _each("write") for name in write(results, args, out)]
    claims = [claim for claims_of in _each("claims") for claim in claims_of(results, args)]
    sections = [line for section in _each("section") for line in section(results, args)]
    runtime = time.perf_counter() - t_start
    results.pop("corpus_runs", None)  # sources and paths: the arguments say which
    record = {"environment": env, "arguments": dict(vars(args)), "paper": PAPER,
              **results, "claims": [c._asdict() for c in claims], "runtime_seconds": runtime}
    (out / "results.json").write_text(json.dumps(jsonable(record), indent=1, default=str))
    write_report(args, env, claims, sections, [*csv_files, *png_files], plot_note, runtime,
                 out)
    print(f"wrote {out / 'report.md'} ({runtime:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
