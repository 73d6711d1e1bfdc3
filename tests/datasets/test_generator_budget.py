# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every data generator refuses an oversized request before allocating."""

import pytest

from skpapers import datasets

# (generator, arguments whose largest array has `entries` entries)
CASES = [
    (datasets.make_contaminated_sim, (10**9, 20), 2 * 10**10),
    (datasets.make_permuted_subspace, (10**9, 50), 5 * 10**10),
    (datasets.make_shifted_gaussians, (10**6, 10**4), 10**10),
    (datasets.make_moons_to_gaussians, (10**9,), 2 * 10**9),
    (datasets.make_sbm_cost, (1000, 100), 10**10),
    (datasets.make_fragmented_hypercube, (10**8, 30), 3 * 10**9),
]


@pytest.mark.parametrize("make, args, entries", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_oversized_requests_are_refused_with_the_size(make, args, entries):
    # numpy would raise MemoryError (or the machine swap) at these sizes: a
    # ValueError means the request was refused before anything was allocated
    message = rf"needs {entries} entries .* max_dense_entries=250000000"
    with pytest.raises(ValueError, match=message):
        make(*args, random_state=0)


@pytest.mark.parametrize("make, args, entries", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_the_budget_is_a_parameter(make, args, entries):
    small = {
        datasets.make_contaminated_sim: (50, 4),
        datasets.make_permuted_subspace: (50, 20),
        datasets.make_shifted_gaussians: (50, 5),
        datasets.make_moons_to_gaussians: (50,),
        datasets.make_sbm_cost: (5, 10),
        datasets.make_fragmented_hypercube: (50, 4),
    }[make]
    make(*small, random_state=0, max_dense_entries=None)  # no limit
    with pytest.raises(ValueError, match="max_dense_entries=10"):
        make(*small, random_state=0, max_dense_entries=10)
