"""What every artefact of the harness shares: the paper's quoted numbers, the
target gap, ordinals, CSV and Markdown helpers, matplotlib set-up."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

TOL = 1e-3  # the certified relative gap both solvers of Figure 1 must reach

# ---------------------------------------------------------------------------
# The paper's own figures (Zhang & El Ghaoui 2011), quoted; nothing else is typed in.
# ---------------------------------------------------------------------------
PAPER = {
    "table1": [  # Table 1, NYTimes; the topic names are the paper's text
        ("business", ["million", "percent", "business", "company", "market", "companies"]),
        ("sports", ["point", "play", "team", "season", "game"]),
        ("U.S.", ["official", "government", "united_states", "u_s", "attack"]),
        ("politics", ["president", "campaign", "bush", "administration"]),
        ("education", ["school", "program", "children", "student"]),
    ],
    "table2": [  # Table 2, PubMed ("maligant" is the paper's spelling)
        ("1st", ["patient", "cell", "treatment", "protein", "disease"]),
        ("2nd", ["effect", "level", "activity", "concentration", "rat"]),
        ("3rd", ["human", "expression", "receptor", "binding"]),
        ("4th", ["tumor", "mice", "cancer", "maligant", "carcinoma"]),
        ("5th", ["year", "infection", "age", "children", "child"]),
    ],
    "table1_header_cardinalities": [6, 5, 5, 4, 4],
    "table2_header_cardinalities": [5, 5, 5, 4, 4],
    "nytimes_words": 102_660,
    "nytimes_docs": 300_000,
    "nytimes_reduced_max": 500,
    "pubmed_words": 141_043,
    "pubmed_docs": 8_200_000,
    "pubmed_reduced_max": 1_000,
    "reduction_factor": "150 to 200",
    "seconds_per_component": 20,
    "machine": "MacBook laptop, 2.4 GHz Intel Core 2 Duo, 2 GB memory",
    "sweeps_typical": 5,
}
PUBMED_NOTE = ("(As in the paper: its headers say 5, 5, 5, 4, 4 words, but its 3rd column "
               "lists 4 words and its 4th lists 5.)")
ORDINALS = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th"]


# ---------------------------------------------------------------------------
# CSV and Markdown
# ---------------------------------------------------------------------------
def write_csv(path: Path, rows: list[dict], fields: list[str]) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in fields})


def _csv_value(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    return "" if v is None else v


def fmt(x, spec: str = ".3g") -> str:
    """``format(x, spec)``, or ``-`` for a missing number."""
    return "-" if x is None else format(x, spec)


def md_words_table(comps: list[dict]) -> list[str]:
    """The paper's layout: one column per component, its words underneath."""
    if not comps:
        return ["(no components)"]
    head = [f"{ORDINALS[i]} PC ({c['cardinality']} words)" for i, c in enumerate(comps)]
    depth = max(c["cardinality"] for c in comps)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(comps)]
    for r in range(depth):
        cells = [f"`{c['words'][r]}`" if r < len(c["words"]) else "" for c in comps]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def paper_words_table(key: str) -> list[str]:
    """Table 1 (``key="table1"``) or Table 2 of the paper in :func:`md_words_table`'s layout."""
    comps = [{"cardinality": k, "words": words} for k, (_, words) in
             zip(PAPER[f"{key}_header_cardinalities"], PAPER[key], strict=True)]
    return md_words_table(comps)


def jsonable(obj):
    """``obj`` with numpy scalars, paths and non-finite floats made JSON-safe (the
    per-word ``variance`` arrays are left out: figure2_word_variances.csv has them)."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items() if k != "variance"}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, Path):
        return str(obj)
    return obj


# ---------------------------------------------------------------------------
# matplotlib
# ---------------------------------------------------------------------------
def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, or None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def legend_below(fig, axes, ncol: int = 2) -> None:
    """One legend for all panels, under them (a legend inside a panel can hide a
    curve's end), then the layout that leaves room for it."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=ncol, fontsize=8,
               frameon=False)
    rows = -(-len(seen) // ncol)
    fig.tight_layout(rect=(0, 0.045 * rows + 0.02, 1, 1))


def save_figure(fig, out: Path, name: str, plt, layout: bool = True) -> str:
    """Lay out (unless ``layout=False``: already laid out, labels placed), write as
    out/name (120 dpi) and close a figure; returns name."""
    if layout:
        fig.tight_layout()
    fig.savefig(out / name, dpi=120)
    plt.close(fig)
    return name
