"""Tables 1 and 2: the words of the top sparse components of NYTimes and PubMed."""

from __future__ import annotations

import argparse
from pathlib import Path

from .claims import Claim, corpus_verdict, paper_corpus_of
from .common import (
    ORDINALS,
    PAPER,
    PUBMED_NOTE,
    md_words_table,
    paper_words_table,
    write_csv,
)


def _fold(word: str) -> str:
    """Crude plural folding, to compare with the lemmatised sample."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def topic_overlap(comps: list[dict], paper: list[tuple[str, list[str]]]) -> list[dict]:
    """Per component: words shared with the paper's components (exact and plural-folded)."""
    rows = []
    for comp in comps:
        ours = comp["words"]
        best = None
        for j, (name, words) in enumerate(paper):
            exact = [w for w in ours if w in words]
            folded_paper = {_fold(w) for w in words}
            folded = [w for w in ours if w not in exact and _fold(w) in folded_paper]
            score = (len(exact) + len(folded), len(exact), j == comp["component"] - 1)
            if best is None or score > best[0]:
                best = (score, j, name, exact, folded)
        (_, _, _), j, name, exact, folded = best
        rows.append({"component": comp["component"], "paper_component": j + 1,
                     "paper_topic": name, "exact": exact, "folded": folded,
                     "n_shared": len(exact) + len(folded)})
    return rows


def write(results: dict, args: argparse.Namespace, out: Path) -> list[str]:
    files = []
    for c in results["corpora"]:
        rows = [{"component": comp["component"], "rank": r + 1, "word": w, "loading": x}
                for comp in c["components"]
                for r, (w, x) in enumerate(zip(comp["words"], comp["loadings"], strict=True))]
        if rows:
            name = f"table{c['table']}_{c['key']}.csv"
            write_csv(out / name, rows, ["component", "rank", "word", "loading"])
            files.append(name)
    return files


def cardinality_claim(c: dict, target: int) -> Claim:
    cards = [comp["cardinality"] for comp in c["components"]]
    paper_cards = PAPER[f"table{c['table']}_header_cardinalities"]
    verdict = ("agrees" if all(abs(k - target) <= 1 for k in cards) else
               "differs, because some component is more than one word off the target")
    return Claim(f"Cardinality reached is close to the target ({c['key']})",
                 f"*paper*: {', '.join(map(str, paper_cards))} words",
                 ", ".join(map(str, cards)) + f" words (target {target})",
                 corpus_verdict(c, paper_corpus_of(c), verdict))


def topics_claim(c: dict) -> Claim:
    comps = c["components"]
    key = "table1" if c["table"] == 1 else "table2"
    ov = topic_overlap(comps, PAPER[key])
    matched = [o for o in ov if o["n_shared"] >= 2]
    same_rank = [o for o in matched if o["paper_component"] == o["component"]]
    desc = "; ".join(
        f"{ORDINALS[o['component'] - 1]}: {', '.join(comps[o['component'] - 1]['words'])}"
        + (f" ~ paper {ORDINALS[o['paper_component'] - 1]} ({o['paper_topic']}), shared "
           f"{', '.join(o['exact'] + o['folded'])}" if o["n_shared"] else " ~ no paper topic")
        for o in ov)
    n = len(ov)
    if len(matched) == n and len(same_rank) == n:
        verdict = "agrees"
    else:
        verdict = (f"{'partly agrees' if matched else 'differs'}: {len(matched)} of {n} "
                   f"components share >= 2 words with a paper component ({len(same_rank)} at "
                   "the same rank)")
    topic_names = ", ".join(name for name, _ in PAPER[key][:n])
    return Claim(f"Components read as topics ({c['key']})",
                 f"*paper*: {topic_names}" if c["table"] == 1 else "*paper*: Table 2 words",
                 desc, corpus_verdict(c, paper_corpus_of(c), verdict))


def claims(results: dict, args: argparse.Namespace) -> list[Claim]:
    out = []
    for c in results["corpora"]:
        if c["components"]:
            out += [cardinality_claim(c, args.cardinality), topics_claim(c)]
    if not any(c["table"] == 2 for c in results["corpora"]):
        out.append(Claim("Table 2: PubMed topics", "*paper*: Table 2 below",
                         "skipped (PubMed not given)", "not tested"))
    return out


def section(results: dict, args: argparse.Namespace) -> list[str]:
    corpora = results["corpora"]
    L = []
    add = L.append
    for c in corpora:
        key = "table1" if c["table"] == 1 else "table2"
        add(f"## Table {c['table']}: top sparse components, {c['label']}")
        add("")
        add(f"*paper* (Table {c['table']}, "
            f"{'NYTimes' if c['table'] == 1 else 'PubMed'}, full corpus):")
        add("")
        L += paper_words_table(key)
        add("")
        if key == "table2":
            add(PUBMED_NOTE)
            add("")
        add(f"This run ({c['label']}: {c['n_docs']:,} documents, {c['n_words']:,} words, "
            f"target cardinality {args.cardinality}, deflation by removal of the words used):")
        add("")
        L += md_words_table(c["components"])
        add("")
        add("| PC | cardinality reached | exactly the target | lam | certified gap | "
            "explained variance | shares with the paper's PC (exact / plural-folded) |")
        add("|---|---|---|---|---|---|---|")
        overlap = topic_overlap(c["components"], PAPER[key])
        for comp, ov in zip(c["components"], overlap, strict=True):
            share = (f"{ORDINALS[ov['paper_component'] - 1]} ({ov['paper_topic']}): "
                     f"{', '.join(ov['exact']) or '-'} / {', '.join(ov['folded']) or '-'}"
                     if ov["n_shared"] else "none")
            add(f"| {ORDINALS[comp['component'] - 1]} | {comp['cardinality']} | "
                f"{'yes' if comp['exact_cardinality'] else 'no'} | {comp['lam']:.4g} | "
                f"{comp['gap']:.1e} | {comp['explained_variance']:.4g} | {share} |")
        add("")
        if c["warnings"] or c["message"]:
            add("Warnings of this corpus run: " + "; ".join([*c["warnings"], c["message"]]))
            add("")
    if not any(c["table"] == 2 for c in corpora):
        add("## Table 2: PubMed")
        add("")
        add("Skipped: PubMed was not given. To run it (8.2 million abstracts, a 7.8 GB file "
            "uncompressed; streaming it takes long):")
        add("")
        add("    python paper/reproduce.py --pubmed docword.pubmed.txt.gz vocab.pubmed.txt")
        add("    python paper/reproduce.py --fetch pubmed   # downloads from UCI first")
        add("")
        add("*paper* (Table 2, PubMed):")
        add("")
        L += paper_words_table("table2")
        add("")
        add(PUBMED_NOTE)
        add("")
    return L
