"""The Benchmarks page's data, ratios.py's JSON output, and README's commands in CI.

docs/benchmarks.rst renders docs/_data/benchmarks.json (written by
``asv_benchmarks/ratios.py --json``): every table it names must exist, every
section must say where it comes from, and ``.ci/run`` must run README's test
command verbatim.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "_data" / "benchmarks.json"
PAGE = ROOT / "docs" / "benchmarks.rst"
RATIOS = ROOT / "asv_benchmarks" / "ratios.py"

pytestmark = pytest.mark.skipif(not DATA.is_file(), reason="not run from a source checkout")


def test_every_table_of_the_page_is_in_the_data_and_back():
    sections = json.loads(DATA.read_text(encoding="utf-8"))["sections"]
    shown = re.findall(r"^\.\. benchmark-table:: (\S+)", PAGE.read_text(encoding="utf-8"), re.M)
    assert shown and len(shown) == len(set(shown)), shown
    assert set(shown) == set(sections), (set(shown) ^ set(sections))


def test_every_section_says_where_it_comes_from():
    sections = json.loads(DATA.read_text(encoding="utf-8"))["sections"]
    for name, entry in sections.items():
        for key in ("commit", "date", "command", "machine", "columns", "rows"):
            assert entry.get(key), (name, key)
        assert re.match(r"[0-9a-f]{7}", entry["commit"]), (name, entry["commit"])
        assert "dirty" not in entry["commit"], (name, entry["commit"])
        assert entry["rows"], name
        for row in entry["rows"]:
            assert len(row) == len(entry["columns"]), (name, row)
        if isinstance(entry["machine"], dict):  # written by ratios.py
            assert entry["command"].startswith("python asv_benchmarks/ratios.py"), name
            assert entry["machine"]["cores"] >= 1


@pytest.fixture(scope="module")
def ratios():
    spec = importlib.util.spec_from_file_location("spca_ratios_script", RATIOS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratios_json_keeps_the_sections_not_run(ratios, tmp_path):
    path = tmp_path / "sub" / "bench.json"
    prov = {"commit": "abc1234", "date": "2026-01-01 00:00 UTC", "command": "python x",
            "machine": {"cores": 2}}
    ratios.write_json(path, {"eigh": [("eigh / BCA", 500, 0.0234567, 0.1, "0.234", "n")]},
                      prov)
    ratios.write_json(path, {"cvxpy": [("cvxpy", 40, math.nan, 0.001, "-", "skipped")]},
                      {**prov, "commit": "def5678"})
    data = json.loads(path.read_text(encoding="utf-8"))["sections"]
    assert set(data) == {"eigh", "cvxpy"}
    assert data["eigh"]["commit"] == "abc1234" and data["cvxpy"]["commit"] == "def5678"
    assert data["eigh"]["rows"] == [["eigh / BCA", 500, 0.02346, 0.1, "0.234", "n"]]
    assert data["cvxpy"]["rows"][0][2] is None  # NaN is not valid JSON: null
    assert data["eigh"]["columns"] == ratios.COLUMNS
    # re-running a section replaces it
    ratios.write_json(path, {"eigh": [("eigh / BCA", 1000, 0.1, 0.2, "0.5", "")]}, prov)
    data = json.loads(path.read_text(encoding="utf-8"))["sections"]
    assert data["eigh"]["rows"] == [["eigh / BCA", 1000, 0.1, 0.2, "0.5", ""]]
    assert "cvxpy" in data


def test_ratios_provenance(ratios):
    prov = ratios.provenance(["--sections", "eigh"])
    assert prov["command"] == "python asv_benchmarks/ratios.py --sections eigh"
    assert prov["commit"]
    assert prov["machine"]["cores"] >= 1 and prov["machine"]["numpy"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", prov["date"])


def test_ci_runs_readmes_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", setup, re.S)
    assert commands == ['pip install ".[paper]" && python paper/reproduce.py',
                        'pip install ".[test]" && pytest'], commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci
    # each extra in a venv of its own, the benchmarks with [bench] only
    assert 'pip install ".[bench]"' in ci and 'pip install ".[docs]"' in ci
    assert "asv run --python=same --quick" in ci and "asv check --python=same" in ci
