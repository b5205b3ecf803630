"""The ``benchmark-table`` directive: one section of a benchmarks JSON file as a table.

The file is written by ``asv_benchmarks/ratios.py --json`` (and holds, in the
same shape, the measurements carried over from earlier runs)::

    {"sections": {"<name>": {"commit": ..., "date": ..., "command": ...,
                             "machine": {...}, "columns": [...], "rows": [[...], ...]}}}

Usage in a page::

    .. benchmark-table:: cvxpy
       :file: _data/benchmarks.json

renders the rows as a table followed by the line saying where they come from
(commit, date, machine, command), read from the file, never typed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

DEFAULT_FILE = "_data/benchmarks.json"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _table(columns: list[str], rows: list[list]) -> nodes.table:
    table = nodes.table(classes=["benchmark-table"])
    group = nodes.tgroup(cols=len(columns))
    table += group
    for _ in columns:
        group += nodes.colspec(colwidth=1)

    def row_node(cells):
        row = nodes.row()
        for value in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=_cell(value))
            row += entry
        return row

    head = nodes.thead()
    head += row_node(columns)
    group += head
    body = nodes.tbody()
    for cells in rows:
        if len(cells) != len(columns):
            raise ValueError(f"a row has {len(cells)} cells for {len(columns)} columns: {cells}")
        body += row_node(cells)
    group += body
    return table


def _machine_text(machine) -> str:
    if not isinstance(machine, dict):
        return str(machine or "?")
    parts = [machine.get("cpu", ""),
             f"{machine['cores']} cores" if machine.get("cores") else "",
             machine.get("os", ""),
             f"Python {machine['python']}" if machine.get("python") else "",
             f"NumPy {machine['numpy']}" if machine.get("numpy") else "",
             machine.get("blas", ""),
             f"load average {machine['load_average']} at the start"
             if machine.get("load_average") is not None else ""]
    return ", ".join(p for p in parts if p)


def provenance(entry: dict) -> nodes.paragraph:
    """Where the rows of ``entry`` were measured: commit, date, machine, command."""
    para = nodes.paragraph(classes=["benchmark-provenance"])
    date = entry.get("date", "?")
    when = f"on {date}" if date[:1].isdigit() else f"({date})"
    para += nodes.emphasis(text=f"Measured at commit {entry.get('commit', '?')} {when}; "
                                f"machine: {_machine_text(entry.get('machine'))}; command: ")
    para += nodes.literal(text=entry.get("command", "?"))
    if entry.get("source"):
        para += nodes.emphasis(text=f". {entry['source']}")
    return para


class BenchmarkTable(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {"file": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        rel = self.options.get("file", DEFAULT_FILE)
        path = Path(self.env.srcdir) / rel
        self.env.note_dependency(str(path))
        name = self.arguments[0]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entry = data["sections"][name]
            table = _table(entry["columns"], entry["rows"])
        except (OSError, ValueError, KeyError) as exc:
            raise self.error(f"benchmark-table {name!r} from {rel}: {exc!r}") from exc
        return [table, provenance(entry)]


def setup(app):
    app.add_directive("benchmark-table", BenchmarkTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
