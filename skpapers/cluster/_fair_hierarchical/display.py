# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dendrogram of a fair hierarchy at real merge heights, coloured by group shares."""

import numbers

import numpy as np
from sklearn.utils.validation import validate_data

from skpapers.cluster._fair_hierarchical.estimator import FairHierarchicalClustering
from skpapers.cluster._fair_hierarchical.similarity import (
    average_linkage_cost,
    base_linkage,
    condensed_distance,
)
from skpapers.metrics import cluster_fairness
from skpapers.utils._hierarchy import encode_groups
from skpapers.utils._memory import check_dense_budget
from skpapers.utils._plotting import (
    axes_to_draw_on,
    check_display_estimator,
)

__all__ = ["FairDendrogramDisplay"]

GREY = "#b0b0b0"


def _deviations(tree, codes, threshold, global_shares):
    """Largest ``|share - global share|`` of every node, NaN below the threshold."""
    fairness = cluster_fairness(tree, codes, min_size=threshold)
    deviation = np.abs(fairness["proportions"] - global_shares).max(axis=1)
    return np.where(fairness["evaluated"], deviation, np.nan)


def _by_size(linkage, heights):
    """Linkage with the given heights, rows sorted by cluster size, then height.

    Truncation (``lastp``) keeps the last rows: in this order, the largest
    clusters, the ones whose fairness is evaluated. A parent is larger than its
    children, so children stay first.
    """
    n = linkage.shape[0] + 1
    perm = np.lexsort((heights, linkage[:, 3]))
    rank = np.empty_like(perm)
    rank[perm] = np.arange(n - 1)
    ids = linkage[perm, :2].astype(np.intp)
    ids = np.where(ids >= n, n + rank[np.maximum(ids - n, 0)], ids)
    return np.column_stack([ids, heights[perm], linkage[perm, 3]]), perm


class FairDendrogramDisplay:
    """Dendrogram of a fair hierarchy, coloured by how far clusters are from fair.

    Use :meth:`from_estimator` to create one. Links are drawn at the merge
    heights of ``linkage_matrix_`` (the mean distance between the clusters a
    node joins, made monotone; average linkage's own merge distances for the
    plain tree). A link is coloured by the cluster it forms: its largest
    deviation ``max_l |p_l(C) - c_l|`` from the global group shares on a
    sequential colormap shared by all panels, grey when the cluster has fewer
    than ``fairness_threshold`` samples (not evaluated, as in the estimator).
    The panels share their height and colour scales.

    The colour is the magnitude, not a signed share or a stacked bar per
    cluster: it is the quantity the fairness constraint bounds (the colour
    furthest along the colorbar in a panel is the maximum deviation in its
    title), it reads the same for any number of groups, and it stays legible
    with dozens of links, where per-cluster bars would not.

    Parameters
    ----------
    linkages : list of ndarray of shape (n_samples - 1, 4)
        One scipy linkage matrix per panel, heights = merge distances, rows
        ordered by cluster size (truncation keeps the largest clusters).
    deviations : list of ndarray of shape (n_samples - 1,)
        Per panel, the largest deviation of the cluster formed by every row of
        its linkage (a merge inside a k-ary node: the node's cluster); NaN for
        clusters below ``fairness_threshold``.
    fairness_threshold : int
        Smallest cluster size whose shares are evaluated.
    cost_ratios : list of float
        Per panel, the Dasgupta cost of the tree over that of the average-linkage tree.
    names : list of str
        Per panel, the name of the tree.

    Attributes
    ----------
    dendrograms_ : list of dict
        What :func:`scipy.cluster.hierarchy.dendrogram` returned for every panel.
    colorbar_ : matplotlib Colorbar
        The colorbar of the deviations.
    ax_ : matplotlib Axes or ndarray of matplotlib Axes
        One Axes, or an array of one Axes per panel.
    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    skpapers.cluster.FairHierarchicalClustering : The estimator displayed.
    skpapers.metrics.cluster_fairness : Group shares of every cluster.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skpapers.cluster import FairHierarchicalClustering
    >>> from skpapers.cluster import FairDendrogramDisplay
    >>> X, blob = make_blobs([120, 40], random_state=0)
    >>> flip = np.random.default_rng(0).random(160) < 0.2
    >>> group = np.where(flip, 1 - blob, blob)  # mostly the blob: unfair data
    >>> est = FairHierarchicalClustering().fit(X, sensitive_features=group)
    >>> display = FairDendrogramDisplay.from_estimator(est, X, group)
    >>> display.ax_.shape
    (2,)
    >>> bool(np.nanmax(display.deviations[0]) < np.nanmax(display.deviations[1]))
    True
    >>> plt.close(display.figure_)
    """

    def __init__(self, *, linkages, deviations, fairness_threshold, cost_ratios, names):
        self.linkages = linkages
        self.deviations = deviations
        self.fairness_threshold = fairness_threshold
        self.cost_ratios = cost_ratios
        self.names = names

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        sensitive_features,
        *,
        ax=None,
        compare=True,
        max_leaves=60,
        cmap="plasma",
    ):
        """Plot the fair tree of a fitted estimator, and the average-linkage tree.

        Parameters
        ----------
        estimator : FairHierarchicalClustering
            Fitted estimator.
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or \
                (n_samples, n_samples)
            The samples the estimator was fitted on (its similarity matrix if
            ``similarity="precomputed"``).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
            The groups the estimator was fitted with.
        ax : matplotlib Axes or sequence of Axes, default=None
            One Axes, or two if ``compare``; None makes a new figure.
        compare : bool, default=True
            Also draw the plain average-linkage tree of the same distances.
        max_leaves : int or None, default=60
            Leaves drawn per dendrogram: above it, only the ``max_leaves - 1``
            largest merges are drawn (scipy's ``truncate_mode="lastp"``) and a
            leaf labelled ``(m)`` stands for m samples. None: every sample.
        cmap : str or matplotlib Colormap, default="plasma"
            Sequential colormap of the deviations.

        Returns
        -------
        display : FairDendrogramDisplay
            Object that stores the computed values.
        """
        check_display_estimator(cls, estimator, FairHierarchicalClustering, "tree_")
        precomputed = estimator.similarity == "precomputed"
        X = validate_data(
            estimator,
            X,
            reset=False,
            accept_sparse=("csr", "csc") if precomputed else False,
            dtype=np.float64,
        )
        n = estimator.n_leaves_
        if X.shape[0] != n:
            raise ValueError(
                f"X has {X.shape[0]} samples but the estimator was fitted on {n}: "
                "pass the training samples."
            )
        codes, groups = encode_groups(sensitive_features, n_samples=n)
        leaf_counts = estimator.tree_.group_counts[np.arange(n), codes]
        if not (np.array_equal(groups, estimator.groups_) and np.all(leaf_counts == 1)):
            raise ValueError("sensitive_features differ from those the estimator was fitted on.")
        if not precomputed:
            X = X / estimator.distance_scale_  # the estimator's distance units
        threshold = estimator.fairness_threshold_
        shares = estimator.group_proportions_
        Z_fair, nodes = estimator.tree_.to_linkage(heights="distance", return_nodes=True)
        fair, perm = _by_size(Z_fair, Z_fair[:, 2])
        deviation = _deviations(estimator.tree_, codes, threshold, shares)[nodes]
        check_dense_budget(
            n * (n - 1) // 2,
            estimator.max_dense_entries,
            f"The condensed distance matrix of the average-linkage tree (n_samples = {n})",
            "Plot a subsample (skpapers.datasets.stratified_subsample) or raise the "
            "estimator's max_dense_entries if the memory is there.",
        )
        d, smax = condensed_distance(X, estimator.similarity, return_max=True)
        Z = base_linkage(d, "average")  # consumes d
        average_cost = average_linkage_cost(Z, smax)
        cost_ratio = estimator.cost_ / average_cost if average_cost > 0 else 1.0
        linkages, deviations = [fair], [deviation[perm]]
        cost_ratios, names = [cost_ratio], ["Fair tree"]
        if compare:
            average, perm = _by_size(Z, Z[:, 2])
            linkages.append(average)
            deviations.append(_deviations(Z, codes, threshold, shares)[n:][perm])
            cost_ratios.append(1.0)
            names.append("Average linkage")
        display = cls(
            linkages=linkages,
            deviations=deviations,
            fairness_threshold=threshold,
            cost_ratios=cost_ratios,
            names=names,
        )
        return display.plot(ax=ax, max_leaves=max_leaves, cmap=cmap)

    def plot(self, ax=None, *, max_leaves=60, cmap="plasma"):
        """Draw the dendrograms.

        Parameters
        ----------
        ax : matplotlib Axes or sequence of Axes, default=None
            One Axes per panel; None makes a new figure.
        max_leaves : int or None, default=60
            Leaves drawn per dendrogram: above it, only the ``max_leaves - 1``
            largest merges are drawn (scipy's ``truncate_mode="lastp"``) and a
            leaf labelled ``(m)`` stands for m samples. None: every sample.
        cmap : str or matplotlib Colormap, default="plasma"
            Sequential colormap of the deviations.

        Returns
        -------
        display : FairDendrogramDisplay
            Object that stores the computed values.
        """
        if max_leaves is not None and (
            not isinstance(max_leaves, numbers.Integral) or max_leaves < 2
        ):
            raise ValueError(f"max_leaves must be an int >= 2 or None; got {max_leaves!r}.")
        n_panels = len(self.linkages)
        figure, axes = axes_to_draw_on(
            ax, n_panels, f"{type(self).__name__}.plot", panel_size=(6.0, 4.5)
        )
        import matplotlib as mpl
        from scipy.cluster.hierarchy import dendrogram

        n = self.linkages[0].shape[0] + 1
        leaves = n if max_leaves is None else min(max_leaves, n)
        cmap = mpl.colormaps[cmap] if isinstance(cmap, str) else cmap
        worst = max(np.nanmax(dev) for dev in self.deviations)
        norm = mpl.colors.Normalize(0.0, worst if worst > 0 else 1.0)  # 0 to 1 if all fair
        top = 1.05 * max(Z[:, 2].max() for Z in self.linkages)  # one scale for all panels
        self.dendrograms_ = []
        panels = [axes] if n_panels == 1 else axes
        for panel, Z, dev, ratio, name in zip(
            panels, self.linkages, self.deviations, self.cost_ratios, self.names, strict=True
        ):
            colours = [GREY if np.isnan(v) else mpl.colors.to_hex(cmap(norm(v))) for v in dev]
            tree = dendrogram(
                Z,
                truncate_mode="lastp",
                p=leaves,
                link_color_func=lambda k, colours=colours: colours[k - n],
                leaf_rotation=90.0,
                leaf_font_size=min(9.0, 420.0 / leaves),
                ax=panel,
            )
            self.dendrograms_.append(tree)
            panel.set_ylim(0.0, top)
            panel.set_title(f"{name}\nmax deviation {np.nanmax(dev):.3f}, cost ratio {ratio:.2f}")
            panel.set_ylabel("merge height (mean distance)")
            panel.set_xlabel("samples" if leaves == n else f"{leaves} clusters; (m): m samples")
        self.colorbar_ = figure.colorbar(
            mpl.cm.ScalarMappable(norm=norm, cmap=cmap),
            ax=panels,
            label="largest deviation from the global share\n"
            f"(grey: clusters of < {self.fairness_threshold} samples, not evaluated)",
        )
        self.figure_, self.ax_ = figure, axes
        return self
