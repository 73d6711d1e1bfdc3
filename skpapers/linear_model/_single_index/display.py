# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plot a fitted robust single-index model: the link over the index, and the residuals."""

from numbers import Integral

import numpy as np
from sklearn.utils import check_consistent_length, check_random_state, column_or_1d

from skpapers.linear_model._single_index.estimator import RobustSingleIndexRegressor
from skpapers.linear_model._single_index.robust_statistics import _MAD_TO_SD
from skpapers.linear_model._single_index.solver import _rows_explained
from skpapers.utils._plotting import axes_to_draw_on, check_display_estimator

__all__ = ["SingleIndexDisplay"]

_CUT = 3.0  # robust sd: the residual rule of the final fit (``contamination_``)
_N_CURVE = 200  # points of the fitted link's curve


class SingleIndexDisplay:
    """The fitted link over the index, and the residuals, of a single-index fit.

    Two panels: ``y`` against the index ``x . coef_ + intercept_`` with the
    fitted link ``f`` drawn over it, then the residuals ``y - f(index)``
    against the index with a band at +-3 robust standard deviations. Rows
    removed by the filters are red crosses, rows outside the band
    (which the fit does not explain) orange circles, the others small grey dots.

    Create it with :meth:`from_estimator`; all parameters are stored as
    attributes.

    Parameters
    ----------
    index : ndarray of shape (n_shown,)
        Index ``x . coef_ + intercept_`` of the rows shown.
    y_true : ndarray of shape (n_shown,)
        Responses of the rows shown.
    y_pred : ndarray of shape (n_shown,)
        Predictions ``f(index)``.
    link : callable
        The fitted link f, vectorised.
    removed : ndarray of shape (n_shown,), dtype=bool
        Rows removed by the covariate filter or as lying on a point mass of
        the residuals.
    unexplained : ndarray of shape (n_shown,), dtype=bool
        Rows kept by the filter whose residual lies beyond 3 robust standard
        deviations.
    residual_scale : float
        The robust standard deviation ``1.4826 * median(|residual|)``.
    n_samples, n_removed, n_unexplained : int
        Counts over all rows (not only those shown), for the title.

    Attributes
    ----------
    curve_ : matplotlib Line2D
        The fitted link over the range of the index shown.
    band_ : tuple of two matplotlib Line2D
        The residual band at -3 and +3 robust standard deviations.
    scatter_ : dict of str to tuple of two matplotlib PathCollection
        The "explained", "unexplained" and "removed" rows, in each panel.
    ax_ : ndarray of 2 matplotlib Axes
        The link and the residual panels.
    figure_ : matplotlib Figure
        The figure of the panels.

    See Also
    --------
    sklearn.metrics.PredictionErrorDisplay : The residuals of any regressor.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skpapers.datasets import make_contaminated_sim
    >>> from skpapers.linear_model import RobustSingleIndexRegressor
    >>> from skpapers.linear_model import SingleIndexDisplay
    >>> X, y, coef, outliers = make_contaminated_sim(2000, 10, link="tanh", random_state=0)
    >>> est = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y)
    >>> display = SingleIndexDisplay.from_estimator(est, X, y)
    >>> display.ax_[0].get_title()
    '173 of 2000 rows removed by the filter, 9 not explained'
    """

    def __init__(
        self, *, index, y_true, y_pred, link, removed, unexplained, residual_scale,
        n_samples, n_removed, n_unexplained,
    ):
        self.index = index
        self.y_true = y_true
        self.y_pred = y_pred
        self.link = link
        self.removed = removed
        self.unexplained = unexplained
        self.residual_scale = residual_scale
        self.n_samples = n_samples
        self.n_removed = n_removed
        self.n_unexplained = n_unexplained

    @classmethod
    def from_estimator(
        cls, estimator, X, y, *, training=True, ax=None, max_points=5000, random_state=0,
        **plot_kwargs,
    ):
        """Plot a fitted :class:`RobustSingleIndexRegressor` on data.

        On the training data (``training=True``) the rows removed by the
        filters are those outside ``estimator.covariate_mask_`` or
        ``estimator.residual_mask_`` (rows on point masses of the residuals),
        and the residual rule runs, as in the fit, on the other rows: a row is not explained when
        its residual exceeds 3 robust standard deviations (``1.4826`` times the
        median absolute residual of the kept rows). The counts in the title then
        add up to ``contamination_ * n_samples`` (when the fit ran its residual
        refit: ``contamination > 0`` and ``max_iter > 0``). On new data
        (``training=False``) the filter's mask does not exist: no row is marked
        as removed, and the residual rule runs on all rows with their own robust
        standard deviation.

        Parameters
        ----------
        estimator : RobustSingleIndexRegressor
            The fitted estimator.
        X : array-like of shape (n_samples, n_features)
            Covariates: the training data, or new data with ``training=False``.
        y : array-like of shape (n_samples,)
            Responses.
        training : bool, default=True
            Whether ``X`` and ``y`` are the data ``estimator`` was fitted on, in
            the same row order.
        ax : sequence of 2 matplotlib Axes, default=None
            Where to draw the link and the residual panels; None makes a new
            figure.
        max_points : int or None, default=5000
            At most this many rows, drawn uniformly at random, are shown
            (counts in the title are over all rows); None shows all rows.
        random_state : int, RandomState instance or None, default=0
            Seeds the choice of the rows shown.
        **plot_kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : SingleIndexDisplay
            The display, drawn.
        """
        check_display_estimator(cls, estimator, RobustSingleIndexRegressor)
        if max_points is not None and not (isinstance(max_points, Integral) and max_points > 0):
            raise ValueError(f"max_points must be a positive int or None; got {max_points!r}.")
        index = estimator._decision(X)
        y = column_or_1d(y, dtype=np.float64)
        check_consistent_length(index, y)
        n = y.shape[0]
        if training and n != estimator.covariate_mask_.shape[0]:
            raise ValueError(
                f"X has {n} rows but the estimator was fitted on "
                f"{estimator.covariate_mask_.shape[0]}: pass training=False for new data."
            )
        kept = (estimator.covariate_mask_ & estimator.residual_mask_ if training
                else np.ones(n, dtype=bool))
        y_pred = estimator.predict(X)
        abs_residual = np.abs(y - y_pred)[kept]
        # The solver's rule gives a count: the rows it explains are the n_explained
        # kept rows of smallest |residual| (rows tied with the last one are within the cut).
        n_explained = _rows_explained(
            index[kept, None], y[kept], np.ones(1), 0.0, estimator.link_, cut=_CUT
        )
        unexplained = np.zeros(n, dtype=bool)
        unexplained[kept] = abs_residual > np.sort(abs_residual)[n_explained - 1]
        shown = slice(None)
        if max_points is not None and n > max_points:
            rng = check_random_state(random_state)
            shown = np.sort(rng.choice(n, size=max_points, replace=False))
        display = cls(
            index=index[shown], y_true=y[shown], y_pred=y_pred[shown], link=estimator.link_.f,
            removed=~kept[shown], unexplained=unexplained[shown],
            residual_scale=float(_MAD_TO_SD * np.median(abs_residual)),
            n_samples=n, n_removed=int(n - kept.sum()), n_unexplained=int(unexplained.sum()),
        )
        return display.plot(ax=ax, **plot_kwargs)

    def plot(self, ax=None, *, scatter_kwargs=None, line_kwargs=None):
        """Draw the link and the residual panels.

        Parameters
        ----------
        ax : sequence of 2 matplotlib Axes, default=None
            Where to draw; None makes a new figure of two panels.
        scatter_kwargs : dict, default=None
            Style of the grey dots of the kept, explained rows (passed to
            ``Axes.scatter``).
        line_kwargs : dict, default=None
            Style of the fitted link's curve (passed to ``Axes.plot``).

        Returns
        -------
        self : SingleIndexDisplay
            With ``figure_``, ``ax_`` and the artists set.
        """
        figure, axes = axes_to_draw_on(ax, 2, type(self).__name__)
        explained = ~(self.removed | self.unexplained)
        styles = {
            "explained": (explained, {
                "s": 4, "color": "0.6", "linewidths": 0, "label": "explained",
                **(scatter_kwargs or {})}),
            "unexplained": (self.unexplained, {
                "s": 16, "facecolors": "none", "edgecolors": "tab:orange",
                "label": f"not explained (beyond $\\pm${_CUT:g} robust sd)"}),
            "removed": (self.removed, {
                "s": 16, "marker": "x", "color": "tab:red", "linewidths": 1,
                "label": "removed by the filter"}),
        }
        panels = (self.y_true, self.y_true - self.y_pred)
        self.scatter_ = {}
        for zorder, (name, (rows, style)) in enumerate(styles.items(), start=1):
            self.scatter_[name] = tuple(
                a.scatter(self.index[rows], values[rows], zorder=zorder, **style)
                for a, values in zip(axes, panels, strict=True)
            )
        grid = np.linspace(self.index.min(), self.index.max(), _N_CURVE)
        (self.curve_,) = axes[0].plot(
            grid, self.link(grid), **{"color": "black", "linewidth": 1.5, "label": "fitted f",
                                      "zorder": 4, **(line_kwargs or {})}
        )
        band = _CUT * self.residual_scale
        self.band_ = tuple(
            axes[1].axhline(sign * band, color="black", linestyle="--", linewidth=1, zorder=4,
                            label=f"$\\pm${_CUT:g} robust sd" if sign > 0 else None)
            for sign in (-1, 1)
        )
        axes[0].set(xlabel="index x . w + b", ylabel="y")
        axes[1].set(xlabel="index x . w + b", ylabel="residual y - f(x . w + b)")
        axes[0].set_title(
            f"{self.n_removed} of {self.n_samples} rows removed by the filter, "
            f"{self.n_unexplained} not explained"
            + (f" ({self.index.shape[0]} shown)" if self.index.shape[0] < self.n_samples else ""),
            fontsize="medium",
        )
        # below the panels, off the data: the markers under the first, the band under the second
        axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncols=2,
                       fontsize="small", frameon=False)
        axes[1].legend(handles=[self.band_[1]], loc="upper center", bbox_to_anchor=(0.5, -0.15),
                       fontsize="small", frameon=False)
        self.figure_, self.ax_ = figure, axes
        return self
