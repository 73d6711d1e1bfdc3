# Authors: <you>
# SPDX-License-Identifier: BSD-3-Clause
"""Copy-me template of a skpapers plugin estimator.

Put this module in your package (here ``my_plugin/_estimator.py``), declare it in
your ``pyproject.toml``::

    [project.entry-points."skpapers.estimators"]
    my_shrinker = "my_plugin:MyShrinker"

and add the contract test to your suite::

    from skpapers.testing import parametrize_with_plugin_checks

    @parametrize_with_plugin_checks(dist="my-plugin")
    def test_plugin_contract(estimator, check):
        check(estimator)
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skpapers.utils import Interval, fit_context


class MyShrinker(RegressorMixin, BaseEstimator):  # mixins go LEFT of BaseEstimator
    """Ridge regression solved by the normal equations (a template).

    Parameters
    ----------
    alpha : float, default=1.0
        L2 penalty, non-negative.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Fitted coefficients.
    intercept_ : float
        Fitted intercept.
    n_features_in_ : int
        Number of features seen during ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> MyShrinker(alpha=0.0).fit(X, 2 * X.ravel()).coef_.round(6)
    array([2.])
    """

    _parameter_constraints: dict = {"alpha": [Interval(numbers.Real, 0, None, closed="left")]}

    def __init__(self, alpha=1.0):
        self.alpha = alpha  # store verbatim: no validation, no copies

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : MyShrinker
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2)
        mean_x, mean_y = X.mean(axis=0), y.mean()
        Xc = X - mean_x
        gram = Xc.T @ Xc + self.alpha * np.eye(X.shape[1])
        self.coef_ = np.linalg.lstsq(gram, Xc.T @ (y - mean_y), rcond=None)[0]
        self.intercept_ = float(mean_y - mean_x @ self.coef_)
        return self

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_ + self.intercept_

    @classmethod
    def get_test_params(cls):
        """Fast parameter sets for the skpapers contract test."""
        return [{}, {"alpha": 0.0}]
