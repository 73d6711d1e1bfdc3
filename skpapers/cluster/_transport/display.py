# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plotting display of a fitted :class:`TransportClustering`: routes and co-cluster plan."""

import numbers

import numpy as np
from sklearn.decomposition import PCA
from sklearn.utils import check_array, check_random_state

from skpapers.cluster._transport.estimator import TransportClustering
from skpapers.utils._plotting import (
    axes_to_draw_on,
    check_display_estimator,
    check_matplotlib,
)

__all__ = ["TransportPlanDisplay", "cocluster_plan"]

_MAX_ANNOTATED = 12  # cells of the plan are annotated up to K = 12


def cocluster_plan(Q, R, g, labels, target_labels):
    """Compute the K x K plan between source and target co-clusters of a low-rank plan.

    Entry ``(k, l)`` is the mass that the plan ``P = Q diag(1/g) R^T`` sends
    from the sources labelled ``k`` to the targets labelled ``l``,
    ``sum_{i: labels_i = k} sum_{j: target_labels_j = l} P_ij``, computed as
    ``(E^T Q) diag(1/g) (R^T F)`` with ``E`` and ``F`` the one-hot encodings
    of the labels: O((n + m) K^2), the n x m plan is never formed.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_clusters)
        Source factor (``TransportClustering.Q_``).
    R : array-like of shape (n_targets, n_clusters)
        Target factor (``R_``).
    g : array-like of shape (n_clusters,)
        Co-cluster masses (``g_``).
    labels : array-like of shape (n_samples,)
        Source co-cluster labels in ``0 .. n_clusters - 1`` (``labels_``).
    target_labels : array-like of shape (n_targets,)
        Target co-cluster labels in ``0 .. n_clusters - 1`` (``target_labels_``).

    Returns
    -------
    plan : ndarray of shape (n_clusters, n_clusters)
        Mass from source co-cluster ``k`` (row) to target co-cluster ``l``
        (column). It sums to the total mass; row ``k`` sums to the mass of the
        sources labelled ``k`` and column ``l`` to that of the targets labelled ``l``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.cluster import cocluster_plan
    >>> Q = np.array([[0.5, 0.0], [0.25, 0.25]])
    >>> R = np.array([[0.5, 0.0], [0.25, 0.25]])
    >>> g = Q.sum(axis=0)
    >>> cocluster_plan(Q, R, g, [0, 1], [0, 1])  # one point per label: the dense plan
    array([[0.33333333, 0.16666667],
           [0.16666667, 0.33333333]])
    >>> (Q / g) @ R.T
    array([[0.33333333, 0.16666667],
           [0.16666667, 0.33333333]])
    >>> cocluster_plan(Q, R, g, [0, 0], [0, 1])  # both sources labelled 0
    array([[0.5, 0.5],
           [0. , 0. ]])
    """
    g = np.asarray(g, dtype=np.float64)
    one_hot = np.eye(g.shape[0])
    source = one_hot[np.asarray(labels)].T @ np.asarray(Q, dtype=np.float64)
    target = np.asarray(R, dtype=np.float64).T @ one_hot[np.asarray(target_labels)]
    return (source / g) @ target


class TransportPlanDisplay:
    """Routes and K x K plan of a fitted :class:`~skpapers.cluster.TransportClustering`.

    Two panels: the sources (dots) and targets (crosses) in 2-D, coloured by
    co-cluster, with an arrow from every source co-cluster centre to its
    target centre, of width proportional to the co-cluster mass; and the plan
    between source and target co-clusters (:func:`cocluster_plan`) as a
    heatmap. Create it with :meth:`from_estimator`; all parameters are stored
    as attributes.

    Parameters
    ----------
    source_points : ndarray of shape (n_shown_sources, 2)
        Sources in the plane (possibly a subsample).
    target_points : ndarray of shape (n_shown_targets, 2)
        Targets in the plane (possibly a subsample).
    source_labels : ndarray of shape (n_shown_sources,)
        Co-cluster of every shown source.
    target_labels : ndarray of shape (n_shown_targets,)
        Co-cluster of every shown target.
    source_centers : ndarray of shape (n_clusters, 2)
        Source co-cluster centres in the plane.
    target_centers : ndarray of shape (n_clusters, 2)
        Target co-cluster centres in the plane.
    masses : ndarray of shape (n_clusters,)
        Co-cluster masses ``g``.
    plan : ndarray of shape (n_clusters, n_clusters)
        Mass from source co-cluster ``k`` to target co-cluster ``l``.
    axis_labels : tuple of str, default=("", "")
        Names of the two plane coordinates.
    estimator_name : str, default=None
        Name of the estimator, for the titles.

    Attributes
    ----------
    source_scatter_ : matplotlib PathCollection
        The shown sources.
    target_scatter_ : matplotlib PathCollection
        The shown targets.
    arrows_ : list of matplotlib FancyArrowPatch
        One arrow per co-cluster, from its source centre to its target centre.
    image_ : matplotlib AxesImage
        The heatmap of ``plan``.
    ax_ : ndarray of 2 matplotlib Axes
        The routes panel and the plan panel.
    figure_ : matplotlib Figure
        Figure holding the panels.

    See Also
    --------
    TransportPlanDisplay.from_estimator : Compute the display from a fitted estimator.
    cocluster_plan : The K x K plan between co-clusters.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from skpapers.cluster import TransportClustering
    >>> from skpapers.cluster import TransportPlanDisplay
    >>> from skpapers.datasets import make_shifted_gaussians
    >>> X, Y, _, _ = make_shifted_gaussians(200, n_clusters=4, random_state=0)
    >>> tc = TransportClustering(n_clusters=4, random_state=0).fit(X, X_target=Y)
    >>> display = TransportPlanDisplay.from_estimator(tc, X, Y)
    >>> display.plan.shape, round(float(display.plan.sum()), 6)
    ((4, 4), 1.0)
    >>> display.ax_.shape
    (2,)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        *,
        source_points,
        target_points,
        source_labels,
        target_labels,
        source_centers,
        target_centers,
        masses,
        plan,
        axis_labels=("", ""),
        estimator_name=None,
    ):
        self.source_points = source_points
        self.target_points = target_points
        self.source_labels = source_labels
        self.target_labels = target_labels
        self.source_centers = source_centers
        self.target_centers = target_centers
        self.masses = masses
        self.plan = plan
        self.axis_labels = axis_labels
        self.estimator_name = estimator_name

    def plot(
        self,
        ax=None,
        *,
        max_arrow_width=8.0,
        scatter_kwargs=None,
        arrow_kwargs=None,
        heatmap_kwargs=None,
    ):
        """Draw the routes panel and the plan panel.

        Parameters
        ----------
        ax : sequence of 2 matplotlib Axes, default=None
            Axes for the routes and the plan; None makes a new figure.
        max_arrow_width : float, default=8.0
            Line width, in points, of the arrow of the heaviest co-cluster;
            the others are proportional to their mass.
        scatter_kwargs : dict, default=None
            Keywords passed to both ``matplotlib.axes.Axes.scatter`` calls.
        arrow_kwargs : dict, default=None
            Keywords passed to every ``matplotlib.patches.FancyArrowPatch``.
        heatmap_kwargs : dict, default=None
            Keywords passed to ``matplotlib.axes.Axes.imshow`` for the plan.

        Returns
        -------
        display : TransportPlanDisplay
            The display, with ``figure_`` and ``ax_`` set.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        import matplotlib.patheffects as path_effects
        from matplotlib.patches import FancyArrowPatch
        from matplotlib.ticker import MaxNLocator

        figure, axes = axes_to_draw_on(ax, 2, type(self).__name__)
        routes, heatmap = axes
        n_clusters = len(self.masses)
        colors = _cluster_colors(n_clusters)
        prefix = "" if self.estimator_name is None else f"{self.estimator_name}: "

        scatter_kwargs = {"s": 12, "alpha": 0.6, "linewidths": 1.0, **(scatter_kwargs or {})}
        self.source_scatter_ = routes.scatter(
            *np.transpose(self.source_points), c=colors[self.source_labels], marker="o",
            **scatter_kwargs,
        )
        self.target_scatter_ = routes.scatter(
            *np.transpose(self.target_points), c=colors[self.target_labels], marker="x",
            **scatter_kwargs,
        )
        widths = max_arrow_width * np.asarray(self.masses) / np.max(self.masses)
        # the source centres, also visible when an arrow has no length (self-transport)
        routes.scatter(
            *np.transpose(self.source_centers), s=(widths + 2) ** 2, c=colors,
            edgecolors="black", zorder=4,
        )
        self.arrows_ = []
        for k in range(n_clusters):
            style = {
                "arrowstyle": "-|>",
                "mutation_scale": 8 + 1.5 * widths[k],
                "shrinkA": 0,
                "linewidth": widths[k],
                "color": colors[k],
                "path_effects": [
                    path_effects.withStroke(linewidth=widths[k] + 2, foreground="black")
                ],
                "zorder": 3,
                **(arrow_kwargs or {}),
            }
            arrow = FancyArrowPatch(self.source_centers[k], self.target_centers[k], **style)
            self.arrows_.append(routes.add_patch(arrow))
        routes.set_aspect("equal", adjustable="datalim")
        routes.set(
            xlabel=self.axis_labels[0],
            ylabel=self.axis_labels[1],
            title=f"{prefix}routes between co-clusters\n"
            "\u25cf sources   \u00d7 targets   arrow width \u221d mass",
        )

        heatmap_kwargs = {"cmap": "Greys", "vmin": 0.0, **(heatmap_kwargs or {})}
        self.image_ = heatmap.imshow(self.plan, **heatmap_kwargs)
        figure.colorbar(self.image_, ax=heatmap, label="mass")
        heatmap.xaxis.set_major_locator(MaxNLocator(integer=True))
        heatmap.yaxis.set_major_locator(MaxNLocator(integer=True))
        if n_clusters <= _MAX_ANNOTATED:
            heatmap.set_xticks(np.arange(n_clusters))
            heatmap.set_yticks(np.arange(n_clusters))
            for tick_labels in (heatmap.get_xticklabels(), heatmap.get_yticklabels()):
                for k, tick_label in enumerate(tick_labels):
                    tick_label.set_color(colors[k])
            # two significant digits for the largest entry, the same decimals for all
            largest = np.max(self.plan)
            decimals = max(0, 1 - int(np.floor(np.log10(largest)))) if largest > 0 else 0
            threshold = (self.image_.norm.vmin + self.image_.norm.vmax) / 2
            for (row, column), value in np.ndenumerate(self.plan):
                text = f"{value:.{decimals}f}"
                heatmap.text(
                    column, row, "0" if float(text) == 0 else text, ha="center",
                    va="center", fontsize=min(10.0, 80.0 / n_clusters),
                    color="white" if value > threshold else "black",
                )
        heatmap.set(
            xlabel="target co-cluster",
            ylabel="source co-cluster",
            title=f"{prefix}plan between co-clusters",
        )
        self.figure_, self.ax_ = figure, axes
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        X_target=None,
        *,
        ax=None,
        projection="pca",
        max_points=2000,
        random_state=0,
        **plot_kwargs,
    ):
        """Compute the routes and the co-cluster plan of a fitted estimator, and plot them.

        Parameters
        ----------
        estimator : TransportClustering
            Fitted estimator, with coordinates (not ``metric="precomputed"``).
        X : array-like of shape (n_samples, n_features)
            The sources it was fitted on.
        X_target : array-like of shape (n_targets, n_features), default=None
            The targets it was fitted on; None for self-transport (the targets are ``X``).
        ax : sequence of 2 matplotlib Axes, default=None
            Axes for the routes and the plan; None makes a new figure.
        projection : "pca" or fitted transformer, default="pca"
            How points with more than 2 features are put in the plane:
            ``"pca"`` fits a 2-component :class:`~sklearn.decomposition.PCA`
            on the sources and targets together (2-D data are shown as they
            are); a fitted transformer is applied to sources, targets and
            centres alike, and must return 2 columns.
        max_points : int or None, default=2000
            Largest number of points shown per side; a random subsample is
            drawn above it (None: all points). The plan and the centres
            always use every point.
        random_state : int, RandomState instance or None, default=0
            Seeds the subsample (and the randomized solver of PCA, on large data).
        **plot_kwargs : dict
            Keywords passed to :meth:`plot`.

        Returns
        -------
        display : TransportPlanDisplay
            The display, drawn.
        """
        check_display_estimator(
            cls, estimator, TransportClustering, ["Q_", "R_", "g_", "labels_", "target_labels_"]
        )
        if getattr(estimator, "cluster_centers_", None) is None:
            raise ValueError(
                f"{cls.__name__} draws sources and targets in the plane, which needs "
                "coordinates: it does not support an estimator fitted with "
                "metric='precomputed'. Use cocluster_plan(Q_, R_, g_, labels_, "
                "target_labels_) for the plan between co-clusters."
            )
        X = check_array(X, dtype=np.float64)
        Y = X if X_target is None else check_array(X_target, dtype=np.float64)
        centers = estimator.cluster_centers_
        for name, data, n_fitted in [
            ("X", X, estimator.Q_.shape[0]),
            ("X_target" if X_target is not None else "X (as targets)", Y, estimator.R_.shape[0]),
        ]:
            if data.shape != (n_fitted, centers.shape[1]):
                raise ValueError(
                    f"{name} has shape {data.shape}, but the estimator was fitted on "
                    f"{n_fitted} points with {centers.shape[1]} features: pass the data "
                    "it was fitted on (and X_target=None only for self-transport)."
                )

        to_plane, axis_labels = _plane(projection, X, Y, estimator, random_state)
        rng = check_random_state(random_state)
        shown = [_subsample(len(data), max_points, rng) for data in (X, Y)]
        display = cls(
            source_points=to_plane(X[shown[0]]),
            target_points=to_plane(Y[shown[1]]),
            source_labels=estimator.labels_[shown[0]],
            target_labels=estimator.target_labels_[shown[1]],
            source_centers=to_plane(centers),
            target_centers=to_plane(estimator.target_cluster_centers_),
            masses=estimator.g_,
            plan=cocluster_plan(
                estimator.Q_, estimator.R_, estimator.g_,
                estimator.labels_, estimator.target_labels_,
            ),
            axis_labels=axis_labels,
            estimator_name=type(estimator).__name__,
        )
        return display.plot(ax=ax, **plot_kwargs)


def _plane(projection, X, Y, estimator, random_state):
    """Return the map of points to the plane and the names of its two coordinates."""
    if isinstance(projection, str) and projection == "pca":
        if X.shape[1] == 2:
            names = getattr(estimator, "feature_names_in_", ["feature 0", "feature 1"])
            return (lambda Z: np.array(Z)), tuple(str(name) for name in names)
        if X.shape[1] < 2:
            raise ValueError(
                f"The data have {X.shape[1]} feature(s): the routes panel needs at least 2."
            )
        pca = PCA(n_components=2, random_state=random_state).fit(np.vstack([X, Y]))
        ratios = 100 * pca.explained_variance_ratio_
        names = tuple(f"PC {i + 1} ({r:.0f} % of variance)" for i, r in enumerate(ratios))
        return pca.transform, names
    if not hasattr(projection, "transform"):
        raise ValueError(
            f"projection must be 'pca' or a fitted transformer with a transform method; "
            f"got {projection!r:.80}."
        )
    n_columns = np.shape(projection.transform(X[:1]))[1]
    if n_columns != 2:
        raise ValueError(f"projection must map points to 2 columns; it returns {n_columns}.")
    return (lambda Z: np.asarray(projection.transform(Z))), ("component 1", "component 2")


def _subsample(n, max_points, rng):
    """Return sorted indices of at most ``max_points`` of ``n`` points, drawn with ``rng``."""
    if max_points is not None and (
        not isinstance(max_points, numbers.Integral) or max_points < 1
    ):
        raise ValueError(f"max_points must be a positive integer or None; got {max_points!r}.")
    if max_points is None or n <= max_points:
        return np.arange(n)
    return np.sort(rng.choice(n, size=max_points, replace=False))


def _cluster_colors(n_clusters):
    """Return one RGB colour per co-cluster: tab20 (dark ones first), else spaced on turbo."""
    import matplotlib as mpl

    if n_clusters <= 20:
        colors = np.asarray(mpl.colormaps["tab20"].colors)
        return np.concatenate([colors[::2], colors[1::2]])[:n_clusters]
    return mpl.colormaps["turbo"](np.linspace(0, 1, n_clusters))[:, :3]
