# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The "?" of an estimator's HTML diagram links to its API page."""

import re
from pathlib import Path

import pytest
import tomllib
from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpapers import registry
from skpapers.utils._repr import DocLinkMixin, documentation_url

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
BUILTINS = ("upca", "fair_hierarchical", "transport_clustering", "robust_sim")


def _declared():
    return tomllib.loads(PYPROJECT.read_text())["project"].get("urls", {}).get("Documentation")


def test_documentation_url_is_the_one_declared_in_pyproject():
    declared = _declared()
    if declared is None:  # not published yet: no link to a place that does not exist
        assert documentation_url() == ""
    else:
        assert documentation_url().rstrip("/") == declared.rstrip("/")
        assert declared.startswith("https://")


@pytest.mark.parametrize("name", BUILTINS)
def test_html_repr_links_to_the_public_api_page_or_nowhere(name):
    cls = registry.get(name)
    required = {"upca": {"n_components": 2}, "transport_clustering": {"n_clusters": 2}}
    html = make_pipeline(StandardScaler(), cls(**required.get(name, {})))._repr_html_()
    links = set(re.findall(r'href="([^"#]+)', html))
    public_module = cls.__module__.split("._")[0]
    assert "_" not in public_module.split(".")[-1][:1]  # no private module in the URL
    if _declared() is None:
        assert not any("skpapers" in link for link in links), links
    else:
        assert f"{documentation_url()}generated/{public_module}.{cls.__name__}.html" in links


def test_a_declared_url_turns_the_link_on(monkeypatch):
    from skpapers.utils import _repr

    monkeypatch.setattr(_repr, "documentation_url", lambda: "https://example.org/docs/")
    est = registry.create("upca", n_components=2)
    page = "https://example.org/docs/generated/skpapers.decomposition.UnlabeledPCA.html"
    assert est._get_doc_link() == page


def test_other_packages_get_no_skpapers_link():
    class Foreign(DocLinkMixin, BaseEstimator):
        pass

    Foreign.__module__ = "my_plugin.estimators"
    assert Foreign()._get_doc_link() == ""
    est = Foreign()
    est._doc_link_module = "my_plugin"
    est._doc_link_template = "https://example.org/{estimator_module}/{estimator_name}"
    assert est._get_doc_link() == "https://example.org/my_plugin.estimators/Foreign"
