# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bad-input fuzz: every public estimator, metric, data generator and the CLI.

Each case must end in a finite result or a ValueError/TypeError with a message:
never another exception, a NaN or infinite result, a modified input, or a hang
(see :mod:`skpapers.testing.fuzz`). 300 cases per estimator, 150 per other area,
on seed 1; ``.ci/run`` adds a fresh random seed on every run. Every seed that
ever found a problem is replayed here on the area where it did, and the problem
it found has a direct test of its own below.
"""

import numpy as np
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

# (area, seed, cases): what each seed found, fixed since
FOUND = [
    # refined_restoration_error overflowed to inf for X_true near 1e300
    ("metrics", 20261204, 300),
    # a non-contiguous X took another summation order than its rescaled copy: the
    # tie between duplicated samples broke the other way (labels_ differed)
    ("TransportClustering", 20261204, 300),
    # distance_scale_ was NaN with a precomputed similarity
    ("FairHierarchicalClustering", 2012229964, 300),
    # stratified_subsample returned the user's NaN row as drawn: the fuzz now checks
    # what the function computes (the draw), not the rows it passes through
    ("datasets", 662524921, 300),
]


def _assert_clean(area, cases, seed):
    counts = run_fuzz(area, cases, seed=seed, strict=True)
    assert sum(counts.values()) >= cases // 2, counts
    assert set(counts) <= {"ok", "clean error"}, counts.examples


@pytest.mark.parametrize("area", list(AREAS))
def test_bad_input_gives_a_clean_error_or_a_finite_result(area):
    _assert_clean(area, CASES[area], seed=1)


@pytest.mark.parametrize(("area", "seed", "cases"), FOUND)
def test_seeds_that_once_found_a_problem(area, seed, cases):
    _assert_clean(area, cases, seed)


def test_a_failing_case_is_reported_with_its_draws_and_the_seed_replays():
    from skpapers.testing.fuzz import main

    calls = []

    def area(data):
        from hypothesis import strategies as st

        value = data.draw(st.integers(0, 3), label="value")
        calls.append(value)
        return (lambda: float("nan") if value == 3 else 1.0), ()

    AREAS["_probe"] = area
    try:
        counts = run_fuzz("_probe", 40, seed=5)
        first = list(calls)
        calls.clear()
        assert run_fuzz("_probe", 40, seed=5) == counts and calls == first
        assert "[case: value=3]" in counts.examples["silent"]
        with pytest.raises(SystemExit):
            main(["--area", "nosuch"])
    finally:
        del AREAS["_probe"]


def test_fuzz_command_draws_a_fresh_seed_and_prints_it(capsys):
    from skpapers.testing.fuzz import main

    assert main(["--area", "cli", "--cases", "5"]) == 0
    first = capsys.readouterr().out
    main(["--area", "cli", "--cases", "5"])
    second = capsys.readouterr().out
    assert first.startswith("fuzz seed ") and "--seed " in first.splitlines()[0]
    assert first.split()[2] != second.split()[2]
    assert main(["--area", "cli", "--cases", "5", "--seed", "7"]) == 0
    assert capsys.readouterr().out.startswith("fuzz seed 7 ")


def test_refined_restoration_error_does_not_depend_on_the_units():
    from skpapers.metrics import refined_restoration_error

    rng = np.random.default_rng(3)
    X_true, X_restored = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    reference = refined_restoration_error(X_true, X_restored, 2)
    for c in (1e-300, 1e-150, 1e150, 1e200, 1e300):
        assert refined_restoration_error(c * X_true, X_restored, 2) == pytest.approx(reference)
        assert refined_restoration_error(X_true, c * X_restored, 2) == pytest.approx(reference)
    # unit-norm clean samples: the papers' definition (refined samples of unit norm)
    X_true /= np.linalg.norm(X_true, axis=1, keepdims=True)
    _, _, Vt = np.linalg.svd(X_restored, full_matrices=False)
    refined = X_restored @ Vt[:2].T @ Vt[:2]
    refined /= np.linalg.norm(refined, axis=1, keepdims=True)
    papers = np.linalg.norm(refined - X_true) / np.linalg.norm(X_true)
    assert refined_restoration_error(X_true, X_restored, 2) == pytest.approx(papers, rel=1e-12)


def test_transport_labels_do_not_depend_on_the_memory_layout_of_x():
    from skpapers.cluster import TransportClustering

    X = np.repeat(np.random.default_rng(629).normal(size=(1, 3)), 8, axis=0)  # all tied
    w = np.random.default_rng(8).uniform(0.5, 2.0, size=8)
    strided = lambda A: np.repeat(A, 2, axis=1)[:, ::2]  # noqa: E731
    labels = []
    for c in (1.0, 2.0**-300, 2.0**60):
        for layout in (np.ascontiguousarray, np.asfortranarray, strided):
            fit = TransportClustering(2, max_iter=20, random_state=0)
            labels.append(fit.fit(layout(c * X), sample_weight=w).labels_)
    for other in labels[1:]:
        np.testing.assert_array_equal(other, labels[0])


@pytest.mark.parametrize("c", [1e-300, 1e150, 1e200, 1e300])
def test_upca_score_does_not_depend_on_the_units(c):
    from skpapers.decomposition import UnlabeledPCA

    X = np.random.default_rng(0).normal(size=(40, 6))
    reference = UnlabeledPCA(2, random_state=0).fit(X)
    est = UnlabeledPCA(2, random_state=0).fit(c * X)
    assert est.score(c * X) == pytest.approx(reference.score(X), rel=1e-6)


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean", "cityblock"])
def test_transport_transform_is_finite_or_a_clear_error_and_predict_always_works(metric):
    from skpapers.cluster import TransportClustering

    X = np.random.default_rng(0).normal(size=(40, 6))
    edge = X.copy()
    edge[0, 0] = np.finfo(np.float64).max
    for fit_on, new in [(X * 1e150, X * 1e200), (edge, edge)]:
        est = TransportClustering(3, metric=metric, random_state=0).fit(fit_on)
        labels = est.predict(new)
        assert labels.shape == (40,) and set(labels) <= {0, 1, 2}
        try:
            D = est.transform(new)
        except ValueError as error:
            assert metric == "sqeuclidean" and "beyond the float64 range" in str(error)
        else:
            assert np.all(np.isfinite(D))
            np.testing.assert_array_equal(np.argmin(D, axis=1), labels)
    small = TransportClustering(3, metric=metric, random_state=0).fit(X)
    big = TransportClustering(3, metric=metric, random_state=0).fit(X * 2.0**300)
    np.testing.assert_array_equal(big.predict(X * 2.0**300), small.predict(X))
