# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""verbose=1: the first line comes before any long stage, the last after the final one."""

import logging

import pytest

from skpapers.datasets import make_contaminated_sim, make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.linear_model import RobustSingleIndexRegressor


def _lines(caplog, name):
    return [r.getMessage() for r in caplog.records if r.name == name]


def test_unlabeled_pca_says_it_started_before_stage_one(caplog):
    X, _, _, _ = make_permuted_subspace(200, 20, 2, shuffled_ratio=0.2, random_state=6)
    with caplog.at_level(logging.INFO, logger="skpapers"):
        UnlabeledPCA(2, verbose=1).fit(X)
    lines = _lines(caplog, "skpapers.unlabeled_pca")
    assert lines[0].startswith("fit started: 200 samples x 20 features, rank 2, Stage I 'dpcp'")
    assert lines[1].startswith("Stage I (dpcp)")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_robust_sim_reports_the_descent_and_the_refit_at_verbose_one(caplog):
    X, y, _, _ = make_contaminated_sim(2000, 20, "gelu", 0.3, 0.05, "labels", random_state=0)
    with caplog.at_level(logging.INFO, logger="skpapers"):
        RobustSingleIndexRegressor(verbose=1, max_iter=5, random_state=0).fit(X, y)
    lines = _lines(caplog, "skpapers.single_index")
    assert any(line.startswith("robust gradient descent: 5 iteration(s)") for line in lines)
    assert lines[-1].startswith("residual refit: ")  # the last stage is reported too
    assert not any("iteration 1:" in line for line in lines)  # per-iteration lines need 2
