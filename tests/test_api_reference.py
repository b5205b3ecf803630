"""Every public name of spca, spca.datasets and spca.text is in the API reference.

docs/api.rst is split into sections by its ``.. currentmodule::`` lines; a
name of ``module.__all__`` counts as documented when it is listed in an
``autosummary`` of that module's section or has a ``.. data::`` entry there,
or when it is the very same object as a name documented for another module (a
re-export such as ``spca.datasets.Corpus``, which is ``spca.text.Corpus``).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
MODULES = ("spca", "spca.datasets", "spca.text")
# documented in prose (docs/api.rst says where the version is)
NOT_LISTED = {("spca", "__version__")}


def documented_names(text: str) -> dict[str, set[str]]:
    """{module: names listed for it} from the text of api.rst."""
    names: dict[str, set[str]] = {}
    module = None
    in_autosummary = False
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
            names.setdefault(module, set())
            in_autosummary = False
            continue
        if line.startswith(".. autosummary::"):
            in_autosummary = True
            continue
        m = re.match(r"\.\. data:: (\w+)", line)
        if m and module:
            names[module].add(m.group(1))
            continue
        if in_autosummary:
            m = re.match(r"   (\w+)\s*$", line)
            if m and module:
                names[module].add(m.group(1))
            elif line and not line.startswith(" "):
                in_autosummary = False
    return names


def test_parser_reads_sections():
    text = (".. currentmodule:: a\n\n.. autosummary::\n   :toctree: x\n\n   f\n   G\n\n"
            "Words\n-----\n\n.. currentmodule:: b\n\n.. data:: C\n\n   About C.\n")
    assert documented_names(text) == {"a": {"f", "G"}, "b": {"C"}}


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_is_in_api_reference(module_name):
    module = importlib.import_module(module_name)
    documented = documented_names(API.read_text(encoding="utf-8"))
    objects = {id(getattr(importlib.import_module(m), n))
               for m, ns in documented.items() if m in MODULES for n in ns
               if hasattr(importlib.import_module(m), n)}
    missing = []
    for name in module.__all__:
        if (module_name, name) in NOT_LISTED or name in documented.get(module_name, set()):
            continue
        if name == "SparsePCA":  # lazily imported: needs scikit-learn
            pytest.importorskip("sklearn")
        if id(getattr(module, name)) in objects and not isinstance(getattr(module, name),
                                                                    (str, tuple)):
            continue
        missing.append(name)
    assert not missing, f"{module_name}.__all__ names missing from docs/api.rst: {missing}"


def test_api_reference_lists_only_existing_names():
    documented = documented_names(API.read_text(encoding="utf-8"))
    stale = [f"{m}.{n}" for m in MODULES for n in documented.get(m, set())
             if not hasattr(importlib.import_module(m), n)]
    assert not stale, f"docs/api.rst lists names that do not exist: {stale}"
