# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures shared by the UnlabeledPCA tests: record tables, faces, a fit that must not warn."""

import warnings

import pytest

from skpapers.datasets import (
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
    normalize_records,
)
from skpapers.exceptions import FlaggingWarning


@pytest.fixture
def records():
    """``(name, Z, rank, shuffled columns)`` of the record tables, attributes normalised.

    The breast-cancer rows ship with scikit-learn; the exam scores come from the
    data folder (``SKPAPERS_DATA``) and are left out when it does not hold them.
    """
    out = []
    for loader, r, columns in (
        (load_exam_scores, 3, list(range(7, 14))),
        (load_breast_cancer_benign, 4, list(range(1, 30, 2))),
    ):
        try:
            out.append((loader.__name__, normalize_records(loader())[0], r, columns))
        except FileNotFoundError:  # the exam scores are not shipped with the package
            continue
    assert out
    return out


@pytest.fixture
def fit_no_warning():
    """``fit(est, X)``: ``est.fit(X)``, a ``FlaggingWarning`` raised as an error."""

    def fit(est, X):
        with warnings.catch_warnings():
            warnings.simplefilter("error", FlaggingWarning)
            return est.fit(X)

    return fit


@pytest.fixture(scope="session")
def faces():
    """The Yale B faces (64 x 32256, read-only), or a skip when the file is absent."""
    try:
        images = load_yaleb_faces()
    except FileNotFoundError:
        pytest.skip("the Yale B faces file is not available (set SKPAPERS_DATA)")
    images.flags.writeable = False
    return images
