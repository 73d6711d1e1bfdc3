# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and exceptions raised by skpapers."""

__all__ = ["SensitiveFeaturesWarning", "SkpapersPluginWarning"]


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
