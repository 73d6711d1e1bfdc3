# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""A minimal third-party skpapers plugin: one small transformer."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["MeanCenterer"]


class MeanCenterer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Subtract the (optionally trimmed) per-feature mean.

    Parameters
    ----------
    trim : float, default=0.0
        Fraction of the smallest and of the largest values of each feature
        ignored by the mean, in [0, 0.5).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The per-feature (trimmed) mean subtracted by ``transform``.
    n_features_in_ : int
        Number of features seen during ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers_dummy_plugin import MeanCenterer
    >>> MeanCenterer().fit_transform(np.array([[1.0], [3.0]]))
    array([[-1.],
           [ 1.]])
    """

    def __init__(self, trim=0.0):
        self.trim = trim

    def fit(self, X, y=None):
        """Compute the per-feature mean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : MeanCenterer
            Fitted transformer.
        """
        if not 0 <= self.trim < 0.5:
            raise ValueError(f"trim must be in [0, 0.5), got {self.trim!r}.")
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        cut = int(self.trim * X.shape[0])
        ordered = np.sort(X, axis=0)
        self.mean_ = ordered[cut : X.shape[0] - cut].mean(axis=0)
        return self

    def transform(self, X):
        """Subtract the fitted mean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to centre.

        Returns
        -------
        X_centred : ndarray of shape (n_samples, n_features)
            Centred data.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return X - self.mean_.astype(X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @classmethod
    def get_test_params(cls):
        """Parameter sets for the skpapers plugin contract test."""
        return [{}, {"trim": 0.1}]
