# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plot of the distances behind the flags of :class:`~skpapers.decomposition.UnlabeledPCA`."""

import textwrap

import numpy as np
from sklearn.utils.validation import validate_data

from skpapers.decomposition._unlabeled_pca.estimator import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.solver import (
    _power_of_two_scale,
    distances,
    observed,
    unexplained_flags,
)
from skpapers.decomposition._unlabeled_pca.subspace import _least_squares
from skpapers.utils._plotting import axes_to_draw_on, check_display_estimator

__all__ = ["FlaggingDisplay"]


class FlaggingDisplay:
    """Distance of each sample to the subspace, the flagging threshold and the flags.

    Shows why :class:`~skpapers.decomposition.UnlabeledPCA` flagged (and
    restored) some samples as permuted: each sample's distance to the fitted
    subspace, the threshold, flagged and clean samples in two colours, and a
    ring around the samples that :meth:`~skpapers.decomposition.UnlabeledPCA.restore`
    changed. When flagging cannot work (the estimator's
    :class:`~skpapers.exceptions.FlaggingWarning`), the reason is printed below
    the axes.

    Create it with :meth:`from_estimator`; all parameters are stored as
    attributes.

    Parameters
    ----------
    distances : ndarray of shape (n_samples,)
        Sine of the angle between each sample and the subspace, in [0, 1].
    threshold : float
        Flagging threshold on the distances.
    flagged : ndarray of shape (n_samples,) of bool
        Samples flagged as permuted.
    restored : ndarray of shape (n_samples,) of bool, default=None
        Samples whose entries ``restore`` changed; None draws no rings.
    reason : str, default=None
        Why flagging could not work (the text of the
        :class:`~skpapers.exceptions.FlaggingWarning`), or None.
    estimator_name : str, default=None
        Name of the estimator, at the head of the title; None for no name.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The threshold line.
    text_ : matplotlib Annotation or None
        The reason below the axes; None without a reason.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    skpapers.decomposition.UnlabeledPCA : The estimator whose flags are shown.
    sklearn.metrics.PredictionErrorDisplay : The display style followed here.

    Examples
    --------
    >>> from skpapers.datasets import make_permuted_subspace
    >>> from skpapers.decomposition import UnlabeledPCA
    >>> from skpapers.decomposition import FlaggingDisplay
    >>> X, _, _, permuted = make_permuted_subspace(200, 20, 3, random_state=0)
    >>> upca = UnlabeledPCA(n_components=3).fit(X)
    >>> display = FlaggingDisplay.from_estimator(upca, X)
    >>> print(display.ax_.get_title())
    UnlabeledPCA
    173 of 200 flagged, 173 restored
    >>> display = FlaggingDisplay(
    ...     distances=upca.distances_, threshold=upca.threshold_, flagged=upca.permuted_mask_)
    >>> display.plot(sort=False)
    <...FlaggingDisplay object at ...>
    """

    def __init__(
        self, *, distances, threshold, flagged, restored=None, reason=None, estimator_name=None
    ):
        self.distances = distances
        self.threshold = threshold
        self.flagged = flagged
        self.restored = restored
        self.reason = reason
        self.estimator_name = estimator_name

    @classmethod
    def from_estimator(cls, estimator, X=None, *, ax=None, restore=True, **plot_kwargs):
        """Plot the distances and flags of the samples of a fitted UnlabeledPCA.

        Parameters
        ----------
        estimator : UnlabeledPCA
            Fitted estimator.
        X : array-like of shape (n_samples, n_features), default=None
            Samples to show; None shows the training samples (the fitted
            ``distances_`` and ``permuted_mask_``). New samples are flagged as
            ``restore`` flags them: by the fitted ``threshold_``, or by the
            leave-one-out rule among the samples of ``X`` when
            ``flagging_rule_`` is ``"unexplained"``.
        ax : matplotlib Axes, default=None
            Axes to draw on; None makes a new figure.
        restore : bool, default=True
            Call ``estimator.restore(X)`` and ring the samples whose observed
            entries it changed. Without ``X`` there is nothing to restore (the
            training samples are not stored): pass them as ``X`` to ring them.
        **plot_kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : FlaggingDisplay
            The display, drawn.
        """
        check_display_estimator(cls, estimator, UnlabeledPCA)
        restored = None
        if X is None:
            dist, flagged = estimator.distances_, estimator.permuted_mask_
        else:
            samples = validate_data(
                estimator, X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan",
                reset=False,
            )  # fmt: skip
            dist = _distances(estimator, samples)
            flagged = _flags(estimator, samples, dist)
            if restore:  # X as given: restore checks its feature names
                changed = np.asarray(estimator.restore(X)) != samples
                restored = np.any(changed & ~np.isnan(samples), axis=1)
        display = cls(
            distances=dist,
            threshold=estimator.threshold_,
            flagged=flagged,
            restored=restored,
            reason=estimator.flagging_warning_,
            estimator_name=type(estimator).__name__,
        )
        return display.plot(ax=ax, **plot_kwargs)

    def plot(self, ax=None, *, sort=True, scatter_kwargs=None, line_kwargs=None):
        """Plot the distances, the threshold and the flags.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None makes a new figure.
        sort : bool, default=True
            Put the samples in increasing order of distance; False keeps their
            order in ``X``.
        scatter_kwargs : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter` for flagged and clean
            samples (their colour and label excepted).
        line_kwargs : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.axhline` for the threshold.

        Returns
        -------
        display : FlaggingDisplay
            The display, with ``figure_``, ``ax_``, ``line_`` and ``text_``.
        """
        # a new figure leaves room for the reason below the axes
        size = (5.0, 4.0) if self.reason is None else (5.5, 6.0)
        figure, ax = axes_to_draw_on(ax, 1, type(self).__name__, panel_size=size)
        dist = np.asarray(self.distances, dtype=np.float64)
        flagged = np.asarray(self.flagged, dtype=bool)
        order = np.argsort(dist, kind="stable") if sort else np.arange(dist.size)
        x, dist, flagged = np.arange(dist.size), dist[order], flagged[order]

        scatter_kwargs = {"s": 12, "alpha": 0.8, "linewidths": 0, **(scatter_kwargs or {})}
        groups = ((~flagged, "tab:blue", "clean"), (flagged, "tab:red", "flagged"))
        for mask, colour, label in groups:
            ax.scatter(x[mask], dist[mask], **{**scatter_kwargs, "color": colour, "label": label})
        title = f"{flagged.sum()} of {dist.size} flagged"
        if self.restored is not None:
            restored = np.asarray(self.restored, dtype=bool)[order]
            ax.scatter(
                x[restored], dist[restored], s=5 * scatter_kwargs["s"], facecolors="none",
                edgecolors="0.2", linewidths=0.6, label="restored",
            )  # fmt: skip
            title += f", {restored.sum()} restored"
        line_kwargs = {"color": "black", "linestyle": "--", "linewidth": 1, **(line_kwargs or {})}
        # a threshold above 1 (no distance reaches it) is off the axes: its value is in the legend
        label = "threshold" if self.threshold <= 1 else f"threshold ({self.threshold:.3g}, above)"
        self.line_ = ax.axhline(self.threshold, **{**line_kwargs, "label": label})

        ax.set(
            xlabel="samples, sorted by distance" if sort else "samples",
            ylabel="distance to the subspace\n(sine of the angle)",
            ylim=(-0.02, 1.02),
        )
        legend = ax.legend(
            loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize="small",
            frameon=False, borderaxespad=0.2, handletextpad=0.3, columnspacing=1.2, markerscale=1.5,
        )  # fmt: skip
        # the title above the legend: its height in points, and 6 points for the title's
        # descenders and the legend's offset from the axes, as the title's padding
        pad = legend.get_window_extent().height * 72 / figure.dpi + 6
        # the estimator's name on a line of its own: one line overflows a panel 5 inches wide
        ax.set_title(f"{self.estimator_name}\n{title}" if self.estimator_name else title, pad=pad)
        self.text_ = None if self.reason is None else _caption(ax, self.reason)
        self.ax_, self.figure_ = ax, figure
        return self


def _caption(ax, text):
    """Write ``text`` below the x label of ``ax``, wrapped to the width of the axes."""
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size="small").get_size_in_points()
    width = ax.get_position().width * ax.figure.get_figwidth() * 72  # points
    wrapped = textwrap.fill(text, width=max(20, int(width / (0.55 * size))))
    return ax.annotate(
        wrapped, xy=(0.5, 0), xycoords=ax.xaxis.label, xytext=(0, -6),
        textcoords="offset points", ha="center", va="top", multialignment="left", fontsize=size,
        bbox={"boxstyle": "round,pad=0.4", "facecolor": "#fff4e0", "edgecolor": "tab:orange"},
    )  # fmt: skip


def _distances(estimator, X):
    """Sine of the angle between each sample of ``X`` and the subspace, as ``fit`` computes it."""
    U = estimator._basis().T.astype(np.float64)  # the affine subspace's span (fit_mean)
    Y, M = observed(X / _power_of_two_scale(X), U.shape[1])
    return distances(Y, M, _least_squares(U, Y, M), U)


def _flags(estimator, X, dist):
    """Return the samples of ``X`` that ``restore`` flags, given their distances ``dist``."""
    if estimator.flagging_rule_ == "none":
        return np.zeros(dist.shape[0], dtype=bool)
    if estimator.flagging_rule_ == "unexplained":
        flags = unexplained_flags(
            X, estimator._basis().shape[0], stage1=estimator.stage1, p=estimator.p,
            max_iter=estimator.max_iter, tol=estimator.tol,
        )  # fmt: skip
        if flags is not None:
            return flags
    return dist > estimator.threshold_
