# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Link from an estimator's HTML diagram (the "?" icon) to its API page.

scikit-learn draws a "?" in the diagram of a fitted estimator and links it to
``_doc_link_template`` formatted with the estimator's public module and name.
The documentation's address is declared once, as ``Documentation`` in
``[project.urls]`` of ``pyproject.toml``; it is read from the installed
distribution's metadata (or, in a source tree that is not installed, from
``pyproject.toml`` itself). While none is declared (the documentation is not
published yet), the diagram shows no link.
"""

import functools
import importlib.metadata
import itertools
from pathlib import Path

__all__ = ["DocLinkMixin", "documentation_url"]

_API_PAGE = "generated/{estimator_module}.{estimator_name}.html"


def _url_from_metadata():
    try:
        urls = importlib.metadata.metadata("skpapers").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation":
            return url.strip()
    return None


def _url_from_pyproject():
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: no TOML reader in the standard library
        return None
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return None
    if project.get("name") != "skpapers":
        return None
    return project.get("urls", {}).get("Documentation")


@functools.cache
def documentation_url():
    """Address of the skpapers documentation, ending with ``/``; ``""`` if unknown.

    Returns
    -------
    url : str
        The ``Documentation`` entry of ``[project.urls]``.

    Examples
    --------
    >>> from skpapers.utils._repr import documentation_url
    >>> documentation_url() == "" or documentation_url().startswith("https://")
    True
    """
    url = _url_from_pyproject() or _url_from_metadata() or ""
    return url if not url or url.endswith("/") else url + "/"


class DocLinkMixin:
    """Point the "?" of the HTML diagram to the estimator's skpapers API page.

    Put it left of ``BaseEstimator``. The page is
    ``<documentation>/generated/<public module>.<class name>.html``, the public
    module being the class's module up to its first private part
    (``skpapers.decomposition`` for ``UnlabeledPCA``).
    """

    _doc_link_module = "skpapers"
    _doc_link_url_param_generator = None

    @property
    def _doc_link_template(self):
        url = documentation_url()
        default = url + _API_PAGE if url else ""
        return getattr(self, "__doc_link_template", default)

    @_doc_link_template.setter
    def _doc_link_template(self, value):
        setattr(self, "__doc_link_template", value)

    def _get_doc_link(self):
        """URL of the API page of this estimator; ``""`` outside skpapers."""
        module = self.__class__.__module__
        if module.split(".")[0] != self._doc_link_module or not self._doc_link_template:
            return ""
        if self._doc_link_url_param_generator is not None:
            return self._doc_link_template.format(**self._doc_link_url_param_generator())
        public = ".".join(itertools.takewhile(lambda p: not p.startswith("_"), module.split(".")))
        return self._doc_link_template.format(
            estimator_module=public, estimator_name=self.__class__.__name__
        )
