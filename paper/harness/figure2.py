"""Figure 2: the sorted word variances of every corpus run."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .claims import Claim, corpus_verdict, paper_corpus_of
from .common import PAPER, save_figure, write_csv


def write(results: dict, args: argparse.Namespace, out: Path) -> list[str]:
    rows = []
    for c in results["corpora"]:
        v = np.sort(c["variance"])[::-1]
        rows += [{"corpus": c["key"], "rank": i + 1, "variance": float(x)}
                 for i, x in enumerate(v)]
    write_csv(out / "figure2_word_variances.csv", rows, ["corpus", "rank", "variance"])
    return ["figure2_word_variances.csv"]


def plot(results: dict, args: argparse.Namespace, out: Path, plt) -> list[str]:
    corpora = results["corpora"]
    fig, axes = plt.subplots(1, len(corpora), figsize=(5.5 * len(corpora), 4.2), squeeze=False)
    for ax, c in zip(axes[0], corpora, strict=True):
        v = np.sort(c["variance"])[::-1]
        n_zero = int(np.count_nonzero(v <= 0))
        v = v[v > 0]
        ax.semilogy(np.arange(1, v.size + 1), v, lw=1.2)
        if n_zero:
            # a log axis cannot show them: say so on the figure
            ax.text(0.98, 0.02, f"{n_zero:,} word{'s' if n_zero > 1 else ''} of variance 0 "
                    "(in no document) not shown: log axis", transform=ax.transAxes,
                    ha="right", va="bottom", fontsize=7, color="0.3")
        lams = [comp["lam"] for comp in c["components"]]
        if lams:
            ax.axhline(min(lams), ls="--", color="C3", lw=0.8,
                       label=f"smallest lam used ({min(lams):.3g})")
            ax.axhline(max(lams), ls=":", color="C3", lw=0.8,
                       label=f"largest lam used ({max(lams):.3g})")
            ax.legend(fontsize=7)
        ax.set_xlabel("word rank")
        ax.set_ylabel("variance")
        ax.set_title(f"Sorted variances of {c['n_words']:,} words, {c['label']}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    return [save_figure(fig, out, "figure2_word_variances.png", plt)]


def variance_claim(c: dict) -> Claim:
    """Word variances fall off steeply with rank: the largest over the variance at the
    rank of 10% of the words is at least 10."""
    v = np.sort(c["variance"])[::-1]
    i10 = max(int(0.1 * v.size), 1)
    drop = v[0] / v[i10 - 1] if v[i10 - 1] > 0 else np.inf
    verdict = "agrees" if drop >= 10 else "differs, because the drop is under 10x"
    return Claim(f"Word variances decrease drastically with rank (Fig. 2, {c['key']})",
                 "*paper*: \"variances of words decrease drastically when we rank them\"",
                 f"largest / variance at rank {i10:,} (10% of the words) = {drop:.3g}",
                 corpus_verdict(c, paper_corpus_of(c), verdict))


def claims(results: dict, args: argparse.Namespace) -> list[Claim]:
    return [variance_claim(c) for c in results["corpora"]]


def section(results: dict, args: argparse.Namespace) -> list[str]:
    L = ["## Figure 2: sorted word variances", "",
         "*paper*: \"variances of words decrease drastically when we rank them\" (Fig. 2: "
         f"{PAPER['nytimes_words']:,} words in NYTimes, {PAPER['pubmed_words']:,} in PubMed).",
         "",
         "| corpus | words | docs | largest variance | 10th | 100th | 1000th | median | "
         "words with variance > smallest lam used |",
         "|---|---|---|---|---|---|---|---|---|"]
    for c in results["corpora"]:
        v = np.sort(c["variance"])[::-1]
        at = [f"{v[i - 1]:.3g}" if v.size >= i else "-" for i in (1, 10, 100, 1000)]
        lam_min = min((comp["lam"] for comp in c["components"]), default=np.nan)
        above = int(np.count_nonzero(v > lam_min))
        L.append(f"| {c['label']} | {c['n_words']:,} | {c['n_docs']:,} | " + " | ".join(at) +
                 f" | {np.median(v):.3g} | {above:,} ({100 * above / v.size:.1f}%) |")
    L.append("")
    return L
