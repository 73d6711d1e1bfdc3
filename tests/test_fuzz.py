# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bad-input fuzz: every public estimator, metric, data generator and the CLI.

Each case must end in a finite result or a ValueError/TypeError with a message:
never another exception, a NaN or infinite result, a modified input, or a hang
(see :mod:`skpapers.testing.fuzz`). 300 cases per estimator, 150 per other area.
"""

import pytest

from skpapers.testing.fuzz import AREAS, run_fuzz

CASES = {
    "UnlabeledPCA": 300,
    "FairHierarchicalClustering": 300,
    "TransportClustering": 300,
    "RobustSingleIndexRegressor": 300,
    "metrics": 150,
    "datasets": 150,
    "cli": 60,
}


@pytest.mark.parametrize("area", list(AREAS))
def test_bad_input_gives_a_clean_error_or_a_finite_result(area):
    counts = run_fuzz(area, CASES[area], seed=1, strict=True)
    assert sum(counts.values()) >= CASES[area] // 2, counts
    assert set(counts) <= {"ok", "clean error"}, counts.examples
