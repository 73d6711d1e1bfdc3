# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the skpapers documentation."""

import os

import skpapers

project = "skpapers"
author = "The skpapers developers"
copyright = "2026, The skpapers developers"
release = version = skpapers.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "**/sg_execution_times.rst", "extension_templates"]
html_theme = "pydata_sphinx_theme"
html_title = f"skpapers {version}"
autosummary_generate = True
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

OFFLINE = os.environ.get("SKPAPERS_DOCS_OFFLINE") == "1"
intersphinx_mapping = (
    {}
    if OFFLINE
    else {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }
)
if OFFLINE:
    # Inherited scikit-learn docstrings use :ref:/:term: targets of sklearn's docs.
    suppress_warnings = ["ref.ref", "ref.term", "ref.python"]

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "doc_module": ("skpapers",),
    "reference_url": {"skpapers": None},
    "backreferences_dir": "generated/backreferences",
    "abort_on_example_error": True,
    "within_subsection_order": "ExampleTitleSortKey",
    "download_all_examples": False,
    "show_memory": False,
}
