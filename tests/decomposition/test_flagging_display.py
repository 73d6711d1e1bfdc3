# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""FlaggingDisplay: what it draws for a fitted UnlabeledPCA, and the FlaggingWarning reason."""

import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import FlaggingDisplay, UnlabeledPCA
from skpapers.exceptions import FlaggingWarning

matplotlib.use("Agg")

FITTED = ("components_", "distances_", "threshold_", "permuted_mask_", "flagging_rule_")



@pytest.fixture(scope="module")
def paper():
    """The paper's synthetic data (sparse permutations) and a fitted estimator."""
    X, _, _, _ = make_permuted_subspace(200, 20, 3, random_state=0)
    X.flags.writeable = False
    return X, UnlabeledPCA(3).fit(X)


@pytest.fixture(scope="module")
def noise():
    """Isotropic Gaussian noise, far from any 3-dimensional subspace: flagging cannot work."""
    Z = np.random.default_rng(0).standard_normal((200, 20))
    Z.flags.writeable = False
    with pytest.warns(FlaggingWarning) as record:
        upca = UnlabeledPCA(3).fit(Z)
    return Z, upca, str(record[0].message)


def _points(ax, label):
    """Offsets of the scatter collection labelled ``label`` (None when absent)."""
    found = [c for c in ax.collections if c.get_label() == label]
    assert len(found) <= 1
    return found[0].get_offsets() if found else None


def test_points_colours_threshold_and_text(paper):
    X, upca = paper
    display = FlaggingDisplay.from_estimator(upca, X)
    ax = display.ax_
    clean, flagged = _points(ax, "clean"), _points(ax, "flagged")
    n_flagged = int(upca.permuted_mask_.sum())
    assert 0 < n_flagged < len(X)
    # every sample plotted once, the colours partition them as the estimator flagged
    assert len(clean) + len(flagged) == len(X)
    assert len(flagged) == n_flagged
    np.testing.assert_allclose(
        np.sort(flagged[:, 1]), np.sort(upca.distances_[upca.permuted_mask_])
    )
    np.testing.assert_allclose(np.sort(clean[:, 1]), np.sort(upca.distances_[~upca.permuted_mask_]))
    # sorted: x = 0..n-1 and the distance never decreases along x
    xy = np.concatenate([clean, flagged])
    xy = xy[np.argsort(xy[:, 0])]
    np.testing.assert_array_equal(xy[:, 0], np.arange(len(X)))
    assert np.all(np.diff(xy[:, 1]) >= 0)
    # the threshold line
    assert display.line_.get_label() == "threshold"
    np.testing.assert_array_equal(display.line_.get_ydata(), [upca.threshold_] * 2)
    assert display.line_.get_linestyle() == "--"
    # restored rings: the samples whose entries restore changed
    n_restored = int(np.any(upca.restore(X) != X, axis=1).sum())
    assert n_restored == n_flagged  # restore_samples="flagged"
    assert len(_points(ax, "restored")) == n_restored
    assert ax.get_xlabel() == "samples, sorted by distance"
    assert ax.get_ylabel() == "distance to the subspace\n(sine of the angle)"
    assert ax.get_title() == f"UnlabeledPCA\n{n_flagged} of 200 flagged, {n_restored} restored"
    assert ax.get_ylim()[0] <= 0 and ax.get_ylim()[1] >= 1
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "clean", "flagged", "restored", "threshold",
    }  # fmt: skip
    assert display.reason is None and display.text_ is None and not ax.texts
    assert display.figure_ is ax.figure
    # the legend sits between the axes and the title, covering neither
    display.figure_.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert ax.get_window_extent().y1 <= legend.y0
    assert legend.y1 <= ax.title.get_window_extent().y0
    assert ax.title.get_window_extent().y1 <= display.figure_.bbox.y1


def test_training_samples_without_X(paper):
    X, upca = paper
    display = FlaggingDisplay.from_estimator(upca)
    assert display.distances is upca.distances_ and display.flagged is upca.permuted_mask_
    assert display.restored is None and _points(display.ax_, "restored") is None
    assert display.ax_.get_title() == f"UnlabeledPCA\n{upca.permuted_mask_.sum()} of 200 flagged"
    # the same distances and flags computed from X
    given = FlaggingDisplay.from_estimator(upca, X, restore=False)
    np.testing.assert_allclose(given.distances, upca.distances_, rtol=1e-12)
    np.testing.assert_array_equal(given.flagged, upca.permuted_mask_)


def test_unsorted_keeps_the_order_of_the_samples(paper):
    _, upca = paper
    display = FlaggingDisplay.from_estimator(upca, sort=False)
    xy = np.concatenate([_points(display.ax_, "clean"), _points(display.ax_, "flagged")])
    xy = xy[np.argsort(xy[:, 0])]
    np.testing.assert_allclose(xy[:, 1], upca.distances_)
    np.testing.assert_array_equal(
        _points(display.ax_, "flagged")[:, 0], np.flatnonzero(upca.permuted_mask_)
    )
    assert display.ax_.get_xlabel() == "samples"


def test_draws_on_the_given_axes(paper):
    _, upca = paper
    figure, (left, right) = plt.subplots(1, 2)
    display = FlaggingDisplay.from_estimator(upca, ax=right)
    assert display.ax_ is right and display.figure_ is figure
    assert len(right.collections) == 2 and not left.collections
    assert len(figure.axes) == 2


@pytest.mark.parametrize("bad", ["axes", lambda: plt.subplots(1, 2)[1]])
def test_bad_ax(paper, bad):
    _, upca = paper
    ax = bad() if callable(bad) else bad
    with pytest.raises(ValueError, match="draws 1 panel.*one matplotlib Axes"):
        FlaggingDisplay.from_estimator(upca, ax=ax)


def test_reason_of_the_flagging_warning_on_the_axes(noise):
    Z, upca, message = noise
    display = FlaggingDisplay.from_estimator(upca, Z)
    assert display.reason == message
    # the whole message, wrapped, on the axes
    assert display.text_ in display.ax_.texts
    assert display.text_.get_text().split() == message.split()
    assert "\n" in display.text_.get_text()
    # the threshold is above every distance here: the legend gives its value
    assert upca.threshold_ > 1
    assert display.line_.get_label() == f"threshold ({upca.threshold_:.3g}, above)"
    assert display.ax_.get_title() == "UnlabeledPCA\n0 of 200 flagged, 0 restored"
    display.figure_.canvas.draw()  # the text fits the figure
    figure_box = display.figure_.bbox
    text_box = display.text_.get_window_extent()
    assert figure_box.y0 <= text_box.y0 and text_box.x0 >= figure_box.x0
    assert text_box.x1 <= figure_box.x1
    assert text_box.y1 < display.ax_.xaxis.label.get_window_extent().y0  # below the x label


@pytest.mark.parametrize(
    "data, params",
    [
        ("noise_10", {}),
        ("noise_20", {"restore_samples": "all"}),
        ("rank_6", {}),
        ("paper", {}),
        ("few_samples", {}),
    ],
)
def test_reason_exactly_when_fit_warns(data, params):
    rng = np.random.default_rng(1)
    X = {
        "noise_10": lambda: rng.standard_normal((300, 10)),
        "noise_20": lambda: rng.standard_normal((200, 20)),
        "rank_6": lambda: make_permuted_subspace(
            300, 60, 6, outlier_ratio=0.1, shuffled_ratio=0.3, random_state=301
        )[0],
        "paper": lambda: make_permuted_subspace(200, 20, 3, random_state=1)[0],
        "few_samples": lambda: make_permuted_subspace(40, 60, 3, outlier_ratio=0.3, random_state=1)[
            0
        ],
    }[data]()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        upca = UnlabeledPCA(3, **params).fit(X)
    messages = [str(w.message) for w in caught if issubclass(w.category, FlaggingWarning)]
    display = FlaggingDisplay.from_estimator(upca, restore=False)
    assert [display.reason] == (messages or [None])


def test_nothing_passed_is_modified(paper):
    X, upca = paper
    X = X.copy()
    X_before = X.copy()
    fitted = {name: np.copy(getattr(upca, name)) for name in FITTED}
    params = upca.get_params()
    display = FlaggingDisplay.from_estimator(upca, X)
    np.testing.assert_array_equal(X, X_before)
    for name, value in fitted.items():
        np.testing.assert_array_equal(getattr(upca, name), value)
    assert upca.get_params() == params
    # plot leaves the display's inputs as they were
    distances, flagged, restored = (
        np.copy(a) for a in (display.distances, display.flagged, display.restored)
    )
    scatter_kwargs, line_kwargs = {"s": 5}, {"color": "green"}
    display.plot(sort=True, scatter_kwargs=scatter_kwargs, line_kwargs=line_kwargs)
    np.testing.assert_array_equal(display.distances, distances)
    np.testing.assert_array_equal(display.flagged, flagged)
    np.testing.assert_array_equal(display.restored, restored)
    assert scatter_kwargs == {"s": 5} and line_kwargs == {"color": "green"}
    assert display.line_.get_color() == "green"


def test_needs_a_fitted_unlabeled_pca(paper):
    X, _ = paper
    with pytest.raises(NotFittedError):
        FlaggingDisplay.from_estimator(UnlabeledPCA(3), X)
    with pytest.raises(TypeError, match="FlaggingDisplay shows a fitted UnlabeledPCA; got PCA"):
        FlaggingDisplay.from_estimator(PCA(3).fit(X), X)
