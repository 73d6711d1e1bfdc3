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


def test_documentation_url_is_the_one_declared_in_pyproject():
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["urls"]["Documentation"]
    assert documentation_url().rstrip("/") == declared.rstrip("/")
    assert declared.startswith("https://")


@pytest.mark.parametrize("name", BUILTINS)
def test_html_repr_links_to_the_public_api_page(name):
    cls = registry.get(name)
    required = {"upca": {"n_components": 2}, "transport_clustering": {"n_clusters": 2}}
    html = make_pipeline(StandardScaler(), cls(**required.get(name, {})))._repr_html_()
    links = set(re.findall(r'href="([^"#]+)', html))
    public_module = cls.__module__.split("._")[0]
    page = f"{documentation_url()}generated/{public_module}.{cls.__name__}.html"
    assert page in links
    assert "_" not in public_module.split(".")[-1][:1]  # no private module in the URL


def test_other_packages_get_no_skpapers_link():
    class Foreign(DocLinkMixin, BaseEstimator):
        pass

    Foreign.__module__ = "my_plugin.estimators"
    assert Foreign()._get_doc_link() == ""
    est = Foreign()
    est._doc_link_module = "my_plugin"
    est._doc_link_template = "https://example.org/{estimator_module}/{estimator_name}"
    assert est._get_doc_link() == "https://example.org/my_plugin.estimators/Foreign"
