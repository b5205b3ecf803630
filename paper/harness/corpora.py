"""The corpus runs behind Figure 2 and Tables 1-2 (``spca.text.sparse_topics`` on the
bundled NYT sample, or the full UCI NYTimes / PubMed files), and the two artefacts
that are about the runs themselves: problem-size reduction and timing."""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from spca.datasets import fetch_uci_bag_of_words, load_nytimes_sample
from spca.text import sparse_topics

from .claims import PAPER_CORPORA, Claim, corpus_verdict, paper_corpus_of
from .common import ORDINALS, PAPER, write_csv


def prepare(args: argparse.Namespace, results: dict) -> None:
    """The corpora to run, before any timing: (key, label, source, vocabulary, table)
    in ``results["corpus_runs"]``; --fetch downloads here."""
    fetch = set(args.fetch or [])
    runs = []
    for key, name, table in (("nytimes", "NYTimes", 1), ("pubmed", "PubMed", 2)):
        given = getattr(args, key)
        if given is not None:
            source, vocabulary = given
        elif key in fetch:
            files = fetch_uci_bag_of_words(key)
            source, vocabulary = files.docword_path, files.vocab_path
        else:
            if key == "nytimes":  # the bundled sample stands in for the full corpus
                runs.append({"key": "nytsample", "label": "NYT sample (bundled, 8,447 articles)",
                             "source": load_nytimes_sample(), "vocabulary": None, "table": 1})
            continue
        runs.append({"key": key, "label": f"{name} (UCI, full)", "source": source,
                     "vocabulary": vocabulary, "table": table})
    results["corpus_runs"] = runs


def run_corpus(run: dict, args: argparse.Namespace) -> dict:
    full = run["key"] != "nytsample"
    print(f"[corpus] {run['label']}: {args.components} components of {args.cardinality} "
          "words ...", flush=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = sparse_topics(run["source"], run["vocabulary"], n_components=args.components,
                            cardinality=args.cardinality, progress=full)
    wall = time.perf_counter() - t0
    var = np.asarray(res.stats.variance, dtype=float)
    k = max(len(res.topics), 1)
    comps = []
    for i, t in enumerate(res.topics):
        comps.append({
            "component": i + 1, "words": list(t.words),
            "loadings": [float(v) for v in t.loadings], "cardinality": len(t.words),
            "lam": float(t.lam), "reduced_size": int(t.reduced_size),
            "words_above_lam": int(np.count_nonzero(var > t.lam)),
            "gap": float(t.gap), "converged": bool(t.converged),
            "exact_cardinality": bool(t.exact_cardinality),
            "explained_variance": float(t.explained_variance),
            "note": str(getattr(t, "note", "") or ""),
        })
        print(f"[corpus]   {ORDINALS[i]} PC: {', '.join(t.words)}  (lam {t.lam:.4g}, solver "
              f"saw {t.reduced_size} of {res.n_words} words, gap {t.gap:.1e})", flush=True)
    timings = {key: float(v) for key, v in res.timings.items()}
    timings["wall"] = wall
    timings["solve_per_component"] = timings["solve"] / k
    timings["total_per_component"] = timings["total"] / k
    return {
        "key": run["key"], "label": run["label"], "table": run["table"],
        "n_docs": int(res.n_docs), "n_words": int(res.n_words),
        "n_candidates": int(res.n_candidates), "candidate_rounds": int(res.candidate_rounds),
        "components": comps, "timings": timings, "variance": var,
        "explained_variance_ratio": float(res.explained_variance_ratio),
        "message": res.message, "warnings": sorted({str(w.message) for w in caught}),
    }


def measure(args: argparse.Namespace, results: dict) -> None:
    results["corpora"] = [run_corpus(run, args) for run in results["corpus_runs"]]


def write(results: dict, args: argparse.Namespace, out: Path) -> list[str]:
    comp_rows, time_rows = [], []
    for c in results["corpora"]:
        for comp in c["components"]:
            comp_rows.append({"corpus": c["key"], "n_words": c["n_words"],
                              "seconds_per_component_avg": c["timings"]["solve_per_component"],
                              "reduction_factor": c["n_words"] / max(comp["reduced_size"], 1),
                              **comp})
        time_rows.append({"corpus": c["key"], "n_docs": c["n_docs"], "n_words": c["n_words"],
                          "n_components": len(c["components"]), **c["timings"]})
    write_csv(out / "components.csv", comp_rows,
              ["corpus", "component", "cardinality", "words", "lam", "n_words", "reduced_size",
               "reduction_factor", "words_above_lam", "gap", "converged", "exact_cardinality",
               "explained_variance", "seconds_per_component_avg"])
    write_csv(out / "timing.csv", time_rows,
              ["corpus", "n_docs", "n_words", "n_components", "pass1", "pass2", "solve",
               "total", "wall", "solve_per_component", "total_per_component"])
    return ["components.csv", "timing.csv"]


# ---------------------------------------------------------------------------
# Claims
# ---------------------------------------------------------------------------
def reduction_claim(c: dict) -> Claim | None:
    """Safe elimination leaves at most 500 of NYTimes' (1,000 of PubMed's) words."""
    comps = c["components"]
    if not comps:
        return None
    paper = paper_corpus_of(c)
    paper_max = PAPER["nytimes_reduced_max"] if c["table"] == 1 else PAPER["pubmed_reduced_max"]
    red = max(comp["reduced_size"] for comp in comps)
    factor = c["n_words"] / red
    verdict = ("agrees" if factor >= 150 else
               f"differs, because the largest reduced size was {red:,} (a factor {factor:.3g})")
    return Claim(f"Safe elimination shrinks the problem {PAPER['reduction_factor']}x "
                 f"({c['key']})",
                 f"*paper*: at most {paper_max:,} of {paper.words:,} words",
                 f"at most {red:,} of {c['n_words']:,} words ({factor:.3g}x smaller)",
                 corpus_verdict(c, paper, verdict))


def timing_claim(c: dict) -> Claim | None:
    """About 20 s per component, lambda search included; the paper says it of NYTimes."""
    comps = c["components"]
    if not comps:
        return None
    paper = PAPER_CORPORA["nytimes"]
    t = c["timings"]
    per = t["solve_per_component"]
    verdict = (f"agrees (on a different machine: {PAPER['machine']} there)"
               if per <= 2 * PAPER["seconds_per_component"] else
               "differs, because it is more than twice the paper's time")
    return Claim(f"About {PAPER['seconds_per_component']} s per component incl. the lambda "
                 f"search ({c['key']})",
                 f"*paper*: ~{PAPER['seconds_per_component']} s per component on NYTimes, "
                 f"on a {PAPER['machine']}",
                 f"{per:.3g} s per component (mean over {len(comps)}) on {c['n_docs']:,} "
                 f"documents and {c['n_words']:,} words, after {t['pass1'] + t['pass2']:.3g} s "
                 "of pre-processing",
                 corpus_verdict(c, paper, verdict))


def claims(results: dict, args: argparse.Namespace) -> list[Claim]:
    out = []
    for c in results["corpora"]:
        out += [claim for claim in (reduction_claim(c), timing_claim(c)) if claim is not None]
    return out


# ---------------------------------------------------------------------------
# Report sections
# ---------------------------------------------------------------------------
def section(results: dict, args: argparse.Namespace) -> list[str]:
    corpora = results["corpora"]
    L = []
    add = L.append
    add("## Problem-size reduction by safe feature elimination")
    add("")
    add(f"*paper*: the solver worked on at most {PAPER['nytimes_reduced_max']} of "
        f"{PAPER['nytimes_words']:,} words for NYTimes and {PAPER['pubmed_reduced_max']:,} of "
        f"{PAPER['pubmed_words']:,} for PubMed, \"about {PAPER['reduction_factor']} times "
        "smaller\".")
    add("")
    add("| corpus | PC | lam | words in corpus | words with variance > lam | size the solver saw "
        "| reduction factor |")
    add("|---|---|---|---|---|---|---|")
    for c in corpora:
        for comp in c["components"]:
            add(f"| {c['key']} | {ORDINALS[comp['component'] - 1]} | {comp['lam']:.4g} | "
                f"{c['n_words']:,} | {comp['words_above_lam']:,} | {comp['reduced_size']:,} | "
                f"{c['n_words'] / max(comp['reduced_size'], 1):.3g}x |")
    add("")
    add("`size the solver saw`: features of the (deflated) covariance the solver kept after "
        "the elimination test; with removal deflation the words of earlier components are "
        "no longer candidates, so it can be smaller than `words with variance > lam` (the test "
        "on the full corpus). The reduction factor depends on the vocabulary: on a corpus "
        "other than the paper's it is not comparable with the paper's.")
    add("")
    add("## Timing")
    add("")
    add(f"*paper*: \"around {PAPER['seconds_per_component']} seconds to search for a range of "
        "lambda and find one sparse principal component\" after pre-processing, NYTimes, on a "
        f"{PAPER['machine']}.")
    add("")
    add("| corpus | documents | words | components | pass 1 (variances) s | "
        "pass 2 (candidate covariance) s | solve s (all lambda searches) | "
        "solve s per component (mean) | total s |")
    add("|---|---|---|---|---|---|---|---|---|")
    for c in corpora:
        t = c["timings"]
        add(f"| {c['key']} | {c['n_docs']:,} | {c['n_words']:,} | {len(c['components'])} | "
            f"{t['pass1']:.3g} | {t['pass2']:.3g} | {t['solve']:.3g} | "
            f"{t['solve_per_component']:.3g} | {t['total']:.3g} |")
    add("")
    add("Per-component seconds are the mean over the components (solve time / number of "
        "components): `sparse_topics` reports the solve time of all components together. "
        "They are compared with the paper's only on the full NYTimes corpus: the solve time "
        "depends on how many words survive elimination and on the lambda search, not on the "
        "number of documents, so no scaling from a smaller corpus would be honest.")
    add("")
    return L
