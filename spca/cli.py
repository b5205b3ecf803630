"""Command line: ``spca topics ...`` and ``spca convert ...`` (also ``python -m spca ...``)."""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["main"]

ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def _ordinal(i: int) -> str:
    return ORDINALS.get(i, f"{i}th")


def _version() -> str:
    from . import __version__

    return __version__


def _positive_int(text: str) -> int:
    """argparse type of a count: an integer >= 1 (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _tol(text: str) -> float:
    """argparse type of ``--tol``: a relative duality gap, as ``check_tol`` accepts."""
    from ._validation import check_tol

    try:
        return check_tol(float(text))
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    """argparse type of ``--time-limit``: seconds > 0, as ``check_time_limit`` accepts."""
    from ._limits import check_time_limit

    try:
        return check_time_limit(float(text))
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spca",
        description="Large-scale sparse PCA (DSPCA by block coordinate ascent).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser(
        "topics",
        help="top sparse components of a bag-of-words corpus, as word lists",
        description=(
            "Top sparse principal components of a UCI bag-of-words corpus "
            "(docword.*.txt[.gz] + vocab.*.txt), each a short list of words, "
            "printed like Table 1 of Zhang & El Ghaoui (2011). Only the word "
            "variances are computed over the whole corpus; the covariance is "
            "formed for the candidate words that can survive safe feature "
            "elimination."
        ),
    )
    t.add_argument("docword", nargs="?",
                   help="UCI docword file (.txt or .txt.gz), cache directory, or Parquet "
                        "dataset (a .parquet file or a directory of shards, see "
                        "`spca convert`)")
    t.add_argument("vocab", nargs="?",
                   help="UCI vocab file (one word per line; also for a Parquet dataset or "
                        "cache directory, which hold no words). Without it the words are "
                        "shown as w<index>, with a note on stderr")
    t.add_argument("--sample", choices=["nytimes", "reuters"],
                   help="use a corpus bundled with spca instead of files")
    t.add_argument("--components", type=_positive_int, default=5, metavar="N",
                   help="number of components (default: 5)")
    t.add_argument("--cardinality", type=_positive_int, default=5, metavar="K",
                   help="target number of words per component (default: 5)")
    t.add_argument("--deflation", choices=["removal", "schur", "projection"],
                   default="removal",
                   help="deflation between components (default: removal, disjoint lists)")
    t.add_argument("--no-refit", dest="refit", action="store_false",
                   help="rank the words by the solver's loadings instead of the loadings "
                        "of largest variance on each word list")
    t.add_argument("--transform", choices=["count", "binary", "log1p", "tfidf"],
                   default="count", help="values analysed (default: raw counts)")
    t.add_argument("--normalize", choices=["l1", "l2"], default=None,
                   help="per-document length normalisation (default: none)")
    t.add_argument("--candidates", type=_positive_int, default=1024, metavar="M",
                   help="initial number of candidate words (default: 1024; enlarged "
                        "automatically when needed)")
    t.add_argument("--max-candidates", type=_positive_int, default=4096, metavar="M",
                   help="most candidate words (default: 4096, a 128 MiB covariance); "
                        "when more words tie with the candidates, the word lists are the "
                        "best among M words, as the summary's note (or the message in "
                        "--format json) says")
    t.add_argument("--tol", type=_tol, default=1e-6,
                   help="relative duality gap of every solve (default: 1e-6)")
    t.add_argument("--time-limit", type=_seconds, default=None, metavar="SECONDS",
                   help="seconds for the whole run, counted from its start (reading the "
                        "corpus or --sample included; the start-up of Python and the "
                        "imports not) and planned to 80%% of them (the first "
                        "corpus pass is made however long it takes; if it uses up the "
                        "limit, the covariance of 2 k words per topic only): the topics and "
                        "certified bounds found by then are printed, and the summary says "
                        "the limit ended a search (default: none)")
    t.add_argument("--format", choices=["table", "markdown", "json", "csv"],
                   default="table",
                   help="output format (default: table); table and markdown print the word "
                        "lists on stdout and a summary (sizes, lam, explained variance, "
                        "gaps) on stderr")
    t.add_argument("--quiet", action="store_true",
                   help="no summary on stderr and no progress bars (these are shown only "
                        "on a terminal anyway)")
    where = t.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, metavar="N",
                       help="run the corpus passes on a local Dask cluster of N worker "
                            "processes (needs a Parquet dataset; pip install \"spca[dask]\")")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the corpus passes on the Dask cluster whose scheduler is at "
                            "ADDRESS (tcp://host:port); the workers must be able to read the "
                            "dataset at the same path")
    t.set_defaults(parser=t)
    c = sub.add_parser(
        "convert",
        help="convert a UCI docword file to sharded Parquet (for --workers/--scheduler)",
        description=(
            "Convert a UCI docword file (.txt or .txt.gz) to a Parquet dataset: a "
            "directory of shards part-00000.parquet, ... with columns doc, word, count "
            "(0-based) and a manifest _spca.json. The file is streamed in bounded memory; "
            "shards hold about equal numbers of nonzeros and never split a document. "
            "The dataset is built in a hidden directory .OUT_DIR.*.tmp beside OUT_DIR and "
            "renamed into place when complete; one left by a killed conversion is "
            "deleted by the next conversion to OUT_DIR. One conversion to OUT_DIR runs "
            "at a time: another one started meanwhile is refused (exit status 1); the "
            "lock is the file .OUT_DIR.lock beside OUT_DIR, deleted when done. "
            'Needs pyarrow (pip install "spca[dask]").'
        ),
    )
    c.add_argument("docword", help="UCI docword file (.txt or .txt.gz)")
    c.add_argument("out_dir", help="directory to create (must not exist, or be empty, and "
                                   "must not contain DOCWORD)")
    c.add_argument("--shards", type=_positive_int, default=1, metavar="N",
                   help="number of shards (default: 1)")
    c.add_argument("--compression", choices=["zstd", "snappy", "gzip", "lz4", "none"],
                   default="zstd", help="Parquet compression (default: zstd)")
    c.add_argument("--overwrite", action="store_true",
                   help="replace OUT_DIR if it holds a dataset written by spca convert and "
                        "nothing else (the new dataset is completed first; only the files "
                        "the old manifest names are deleted; if they cannot be, OUT_DIR is "
                        "left unchanged and the exit status is 1)")
    c.set_defaults(parser=c)
    return parser


def _table(res: Any, markdown: bool) -> str:
    topics = res.topics
    heads = [f"{_ordinal(i + 1)} PC ({len(t.words)} words)" for i, t in enumerate(topics)]
    depth = max((len(t.words) for t in topics), default=0)
    rows = [[t.words[r] if r < len(t.words) else "" for t in topics] for r in range(depth)]
    # the certificate of each component: its variance over the certified bound
    # on the best component with as many words
    ratios = [f"ratio {t.certified_ratio:.3f}" for t in topics]
    if markdown:
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("| " + " | ".join(f"*{r}*" for r in ratios) + " |")
    else:
        widths = [max([len(h), len(q)] + [len(r[i]) for r in rows])
                  for i, (h, q) in enumerate(zip(heads, ratios, strict=True))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [fmt.format(*heads), "  ".join("-" * w for w in widths)]
        lines += [fmt.format(*r).rstrip() for r in rows]
        lines += ["  ".join("-" * w for w in widths), fmt.format(*ratios).rstrip()]
    return "\n".join(lines) + "\n"


def _summary(res: Any) -> str:
    topics = res.topics
    lines = []
    lines.append(
        f"corpus: {res.n_docs} documents x {res.n_words} words; covariance formed "
        f"for {res.n_candidates} candidate words; {res.timings['total']:.2f} s"
    )
    for i, t in enumerate(topics):
        lines.append(
            f"{_ordinal(i + 1)} PC: lam={t.lam:.6g} reduced size={t.reduced_size} "
            f"explained variance={t.explained_variance:.6g} gap={t.gap:.1e} "
            f"certified ratio={t.certified_ratio:.4f}"
            + (f" ({t.note})" if t.note else "")
        )
    if res.message:
        lines.append(f"note: {res.message}")
    if getattr(res, "status", None):
        lines.append(f"status: {res.status} (the topics and bounds found so far)")
    return "\n".join(lines) + "\n"


def _csv(res: Any) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["component", "rank", "word", "loading", "lam", "reduced_size",
                "explained_variance", "gap", "variance_upper_bound", "certified_ratio"])
    for i, t in enumerate(res.topics):
        for r, (word, load) in enumerate(zip(t.words, t.loadings, strict=True)):
            w.writerow([i + 1, r + 1, word, f"{load:.10g}", f"{t.lam:.10g}",
                        t.reduced_size, f"{t.explained_variance:.10g}", f"{t.gap:.3e}",
                        f"{t.variance_upper_bound:.10g}", f"{t.certified_ratio:.6f}"])
    return buf.getvalue()


def _check_usage(args: argparse.Namespace) -> None:
    """Usage errors that argparse cannot see alone: exit 2 with the usage line."""
    if args.command != "topics":
        return
    sub = args.parser  # the subcommand's parser, for its usage line
    if args.sample and (args.docword or args.vocab):
        sub.error("give either --sample or docword/vocab files, not both")
    if not args.sample and not args.docword:
        sub.error("a docword file (or --sample) is required")
    if args.sample and (args.workers is not None or args.scheduler is not None):
        sub.error("--sample is an in-memory corpus; --workers and --scheduler need a "
                  "Parquet dataset (see `spca convert`) or a cache directory")
    if args.max_candidates < args.cardinality:
        sub.error(f"--max-candidates ({args.max_candidates}) must be >= --cardinality "
                  f"({args.cardinality})")


def _topics(args: argparse.Namespace) -> int:
    from ._limits import TimeLimit
    from .text import sparse_topics
    from .text._topics import _left

    # (--time-limit counts from here: reading the corpus or the sample and
    # the checks of the files too; sparse_topics gets what is left of the
    # same deadline)
    limit = TimeLimit.caller(args.time_limit)
    note = ""
    if args.sample:
        from . import datasets

        loader = {"nytimes": datasets.load_nytimes_sample,
                  "reuters": datasets.load_reuters_sample}[args.sample]
        source, vocab = loader(), None
    else:
        source, vocab = args.docword, args.vocab
        from .text import open_source, read_uci_vocabulary

        n_words = open_source(source).n_words  # what can be checked cheaply, before any pass
        if vocab is not None:
            read_uci_vocabulary(vocab, n_words)
        elif not args.quiet:
            note = (f"spca: note: {source} has no vocabulary: words are shown as w<index> "
                    f"(0-based); give the vocab file after it: spca topics {source} "
                    "VOCAB_FILE")
    progress = not args.quiet and sys.stderr.isatty()
    with _dask_client(args) as client:
        res = sparse_topics(
            source, vocab, n_components=args.components, cardinality=args.cardinality,
            deflation=args.deflation, refit=args.refit, transform=args.transform,
            normalize=args.normalize, n_candidates=args.candidates,
            max_candidates=args.max_candidates, tol=args.tol,
            progress=progress, client=client, time_limit=_left(limit),
        )
    if note:  # with the result it explains (not before an error)
        print(note, file=sys.stderr)
    if args.format == "json":
        out = json.dumps(res.as_dict(), indent=2) + "\n"
    elif args.format == "csv":
        out = _csv(res)
    else:
        out = _table(res, markdown=args.format == "markdown")
        if not args.quiet:  # on stderr: stdout holds the result alone
            sys.stderr.write(_summary(res))
    sys.stdout.write(out)
    return 0


@contextlib.contextmanager
def _dask_client(args: argparse.Namespace) -> Iterator[Any]:
    """A Dask client for ``--workers``/``--scheduler`` (closed on exit), else None."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    from .text import _dask
    from .text._source import open_source

    # Refuse a source the workers cannot read before starting any cluster
    # (--sample with them is a usage error, see _check_usage).
    _dask.source_pieces(open_source(args.docword), 1)
    from ._interrupt import workers_ignore_sigint

    with contextlib.ExitStack() as stack:
        try:
            if args.workers is not None:
                stack.enter_context(workers_ignore_sigint())
                client = stack.enter_context(_dask.local_cluster(args.workers))
            else:
                client = stack.enter_context(_dask.connect(args.scheduler))
            yield client
        # Interrupted (perhaps while the cluster starts): end here, without the
        # cluster's orderly close, whose threads and exit handlers printed
        # tracebacks after the one-line message.  The worker processes exit
        # by themselves when this process is gone (they watch it).
        except KeyboardInterrupt:
            _exit_now("spca: interrupted", 130)
        except _Terminated:
            _exit_now("spca: terminated", 143)


def _exit_now(message: str, status: int) -> None:
    sys.stdout.flush()
    print(message, file=sys.stderr, flush=True)
    os._exit(status)


def _convert(args: argparse.Namespace) -> int:
    from .text import convert_uci_to_parquet, open_parquet

    t0 = time.perf_counter()
    try:
        out = convert_uci_to_parquet(args.docword, args.out_dir, shards=args.shards,
                                     compression=args.compression, overwrite=args.overwrite)
    except FileExistsError as exc:  # the library names its argument, the user typed a flag
        raise FileExistsError(str(exc).replace("overwrite=True", "--overwrite")) from None
    src = open_parquet(out)
    size = sum(Path(s.path).stat().st_size for s in src.shards)
    print(f"{out}: {len(src.shards)} shards, {src.n_docs} documents x {src.n_words} words, "
          f"{src.nnz} nonzeros, {size / 1e6:.1f} MB ({args.compression}) in "
          f"{time.perf_counter() - t0:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spca`` command; returns the exit status."""
    import signal

    # spca/__init__ ends the command quietly on Ctrl-C while importing; from
    # here on an interrupt is a KeyboardInterrupt, reported below.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # SIGTERM unwinds like Ctrl-C, so that a conversion removes its temporary
    # directory (SIGKILL cannot be caught: see `spca convert --help`)
    if hasattr(signal, "SIGTERM") and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    args = _parser().parse_args(argv)  # usage errors exit 2 here, with the usage line
    _check_usage(args)
    try:
        return _convert(args) if args.command == "convert" else _topics(args)
    except (ValueError, TypeError, OSError, EOFError, ImportError, MemoryError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"spca: error: {msg}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # pragma: no cover
        print("spca: interrupted", file=sys.stderr)
        return 130
    except _Terminated:
        print("spca: terminated", file=sys.stderr)
        return 143


class _Terminated(BaseException):
    """Raised by the SIGTERM handler of :func:`main`."""


def _terminate(signum: int, frame: Any) -> None:
    raise _Terminated
