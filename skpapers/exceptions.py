# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and exceptions raised by skpapers."""

__all__ = ["FlaggingWarning", "SensitiveFeaturesWarning", "SkpapersPluginWarning"]


class SkpapersPluginWarning(UserWarning):
    """A plugin estimator could not be loaded, or two plugins declare the same name.

    The registry emits one warning per broken entry or clash and keeps every
    other estimator available.
    """


class SensitiveFeaturesWarning(UserWarning):
    """A fairness-aware estimator was fitted without protected group labels.

    Raised by :class:`~skpapers.cluster.FairHierarchicalClustering` when
    ``sensitive_features`` is None or holds a single value; the estimator
    then fits the vanilla (unconstrained) model.
    """


class FlaggingWarning(UserWarning):
    """Permuted samples cannot be told apart or restored, and are left unchanged.

    Raised by :class:`~skpapers.decomposition.UnlabeledPCA` (and
    :func:`~skpapers.decomposition.unlabeled_pca`) with ``restore_samples``
    other than ``"all"``:

    - when the clean samples are themselves so far from the fitted subspace
      that the flagging threshold reaches the distance of a random direction
      and the leave-one-out rule (``flagging_rule_ = "unexplained"``) does not
      apply (more samples than features or than 100, or missing entries): only
      samples that far are flagged, and samples with part of their entries
      permuted are left unchanged;
    - with ``restore_samples="checked"``, when fewer than ``n_components + 2``
      samples are left unflagged (nothing is flagged: the data are returned
      as given), or when no flagged sample's restoration clearly lowers its
      error (they are returned unchanged).
    - when every feature of the training data has mean 0 or variance 1 to
      rounding: the data look centred or scaled per feature (a
      ``StandardScaler`` in front), which does not commute with permuting a
      sample's entries, so flags and restorations can be far off.
    """
