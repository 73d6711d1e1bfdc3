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
    # MathJax shipped with this docs dependency and copied into _static: the
    # pages render math without any network access (no CDN).
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    # the user guides' figures are drawn by the plotting displays during the build
    "matplotlib.sphinxext.plot_directive",
]
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.dpi": 110, "font.size": 13}
mathjax_path = "mathjax/tex-chtml.js"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "sg_execution_times.rst",
    "**/sg_execution_times.rst",
    "extension_templates",
]

html_theme = "pydata_sphinx_theme"
html_title = f"skpapers {version}"
html_static_path = ["_static"]
html_css_files = ["skpapers.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 8,
    # Gallery pages: code needs the width more than an on-page table of contents.
    "secondary_sidebar_items": {
        "*": ["page-toc"],
        "user_guide/*": ["page-toc"],
        "benchmarks/*": ["page-toc"],
        "generated/*": ["page-toc"],
        "auto_examples/*": [],
        "auto_examples/*/*": [],
    },
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": [], "changes": []}

# API pages: one page per public object, all methods with their parameters
# (templates in _templates/autosummary), an "Examples using" mini-gallery.
autosummary_generate = True
toc_object_entries_show_parents = "hide"  # "fit()" in the page's TOC, not "Class.fit()"
autodoc_default_options = {}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

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
    # no execution-times page: it loads DataTables from a CDN
    "write_computation_times": False,
}


def _escape_sklearn_stars(app, what, name, obj, options, lines):
    """Escape ``*args``/``**kwargs`` in re-exported scikit-learn docstrings.

    :mod:`skpapers.utils` re-exports scikit-learn's validation helpers; their
    docstrings write ``*args`` as plain text, which reStructuredText reads as
    the start of an emphasis.
    """
    if not getattr(obj, "__module__", "").startswith("sklearn."):
        return
    for i, line in enumerate(lines):
        lines[i] = line.replace(" **kwargs", r" \*\*kwargs").replace(" *args", r" \*args")


def setup(app):
    app.connect("autodoc-process-docstring", _escape_sklearn_stars)
