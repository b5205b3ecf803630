"""Sphinx configuration of the spca documentation.

Build (from the repository root, after ``pip install ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The package is imported from the installed build, never from the source tree
(the compiled kernels exist only in the installed package).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import spca

# the project's own Sphinx extensions (not the package): docs/_ext/
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "spca"
author = "the spca developers"
copyright = "the spca developers"  # noqa: A001 - Sphinx's name
release = spca.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "benchmark_tables",  # docs/_ext: tables of docs/_data/benchmarks.json
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "examples/README.rst"]
default_role = "autolink"

# -- API reference ---------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # the numpydoc sections document the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# CI builds without network: intersphinx inventories are fetched only when
# SPCA_DOCS_INTERSPHINX=1 (otherwise the cross-links to other projects are
# plain text).
if os.environ.get("SPCA_DOCS_INTERSPHINX", "0") in ("", "0"):
    intersphinx_mapping = {}

# -- Gallery ---------------------------------------------------------------
# Examples whose API is not on main yet: listed here, they are neither run nor
# shown. Remove a name to enable its example.
PENDING_EXAMPLES: list[str] = []

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": "(" + "|".join([r"__init__\.py", *PENDING_EXAMPLES]) + ")",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "min_reported_time": 1,
}

# Agg backend, no display, and no stray warnings from matplotlib's font cache.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

# -- HTML ------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"spca {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []
