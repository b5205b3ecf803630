"""Claims and their verdicts: like is compared with like.

A verdict ("agrees", "partly agrees", "differs, because ...") is computed only
when this run measured the claim on the data the paper measured it on: the
paper's two covariance families for Figure 1 (a ratio of two solvers timed on
the same machine), the full UCI corpus for a corpus claim.  A claim measured on
other data, e.g. the bundled 8,447-article NYT sample for a claim about the
300,000-article NYTimes corpus, gets "not comparable" and says what was
measured instead: nothing about the paper's corpus is inferred from it.
"""

from __future__ import annotations

from typing import NamedTuple

from .common import PAPER

# Every verdict starts with one of these.
VERDICTS = ("agrees", "partly agrees", "differs", "not comparable", "not tested")


class Claim(NamedTuple):
    """One row of report.md's claims table."""

    claim: str
    paper: str
    ours: str
    verdict: str


class PaperCorpus(NamedTuple):
    """A corpus the paper measured on, with the sizes it states."""

    name: str
    docs: int
    words: int


PAPER_CORPORA = {
    "nytimes": PaperCorpus("NYTimes", PAPER["nytimes_docs"], PAPER["nytimes_words"]),
    "pubmed": PaperCorpus("PubMed", PAPER["pubmed_docs"], PAPER["pubmed_words"]),
}


def paper_corpus_of(c: dict) -> PaperCorpus:
    """The paper's corpus a corpus run stands for: NYTimes for Table 1, PubMed for 2."""
    return PAPER_CORPORA["nytimes" if c["table"] == 1 else "pubmed"]


def same_data(c: dict, paper: PaperCorpus) -> bool:
    """Whether corpus run ``c`` is the paper's corpus: the same numbers of documents and
    words as the paper states (the UCI files of NYTimes and PubMed have exactly those)."""
    return c["n_docs"] == paper.docs and c["n_words"] == paper.words


def not_comparable(c: dict, paper: PaperCorpus) -> str:
    """The verdict of a claim about ``paper`` measured on another corpus ``c``."""
    return (f"not comparable: measured on {c['label']} with {c['n_docs']:,} documents and "
            f"{c['n_words']:,} words, the paper on {paper.name} with {paper.docs:,} documents "
            f"and {paper.words:,} words")


def corpus_verdict(c: dict, paper: PaperCorpus, verdict: str) -> str:
    """``verdict`` when ``c`` is the paper's corpus, else "not comparable"."""
    return verdict if same_data(c, paper) else not_comparable(c, paper)


def markdown_table(claims: list[Claim]) -> list[str]:
    lines = ["| claim | paper | this run | verdict |", "|---|---|---|---|"]
    lines += [f"| {c.claim} | {c.paper} | {c.ours} | {c.verdict} |" for c in claims]
    return lines
