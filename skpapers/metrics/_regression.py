# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""A robust regression score: R^2 on the best-fitted rows (trimmed R^2)."""

import numbers

import numpy as np
from sklearn.utils import check_array, check_consistent_length

__all__ = ["trimmed_r2_score", "trimmed_r2_scorer"]


def _smallest_squares_mean(r, k):
    sq = np.square(r)
    return float(np.mean(np.partition(sq, k - 1)[:k])) if k < sq.size else float(sq.mean())


def trimmed_r2_score(y_true, y_pred, *, trim=0.1):
    """Trimmed coefficient of determination (greater is better, at most 1).

    ``1 - T(y_true - y_pred) / T(y_true - median(y_true))`` where ``T(r)`` is
    the mean of the ``ceil((1 - trim) n)`` smallest squared entries of ``r``:
    R^2 with the largest residuals of the model and of the constant (median)
    predictor left out. A fraction ``trim`` of arbitrary rows (outliers in a
    validation fold) then cannot dominate the score, as they dominate R^2.
    1 for a perfect fit on the kept rows, 0 for the median of ``y_true``,
    negative for worse; when ``y_true`` is constant on the kept rows, 1 if
    the residuals are 0 there and 0 otherwise (like R^2 with
    ``force_finite=True``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True responses.
    y_pred : array-like of shape (n_samples,)
        Predicted responses.
    trim : float in [0, 0.5), default=0.1
        Fraction of the largest squared residuals left out, separately for the
        model and for the median predictor; 0 gives R^2 around the median.

    Returns
    -------
    score : float

    See Also
    --------
    trimmed_r2_scorer : This score as a scorer for cross-validation.
    sklearn.metrics.r2_score : The untrimmed score.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import trimmed_r2_score
    >>> y = np.arange(10.0)
    >>> pred = y.copy()
    >>> pred[0] = 100.0  # one wild prediction
    >>> round(trimmed_r2_score(y, pred, trim=0.1), 3)
    1.0
    """
    if not isinstance(trim, numbers.Real) or not 0 <= trim < 0.5:
        raise ValueError(f"trim must be a float in [0, 0.5); got {trim!r}.")
    y_true = check_array(y_true, ensure_2d=False, dtype=np.float64, input_name="y_true")
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred")
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be 1-D; got shapes {y_true.shape} and {y_pred.shape}."
        )
    check_consistent_length(y_true, y_pred)
    n = y_true.shape[0]
    k = min(max(int(np.ceil((1.0 - trim) * n)), 1), n)
    error = _smallest_squares_mean(y_true - y_pred, k)
    spread = _smallest_squares_mean(y_true - np.median(y_true), k)
    if not spread > 0:
        return 1.0 if error == 0 else 0.0
    return 1.0 - error / spread


def trimmed_r2_scorer(estimator, X, y, *, trim=0.1):
    """Score a fitted regressor by :func:`trimmed_r2_score` on ``(X, y)``.

    A scorer for ``scoring=`` in ``cross_val_score`` or ``GridSearchCV`` (pass
    the function itself: scikit-learn has no public way to register a scorer
    name). ``functools.partial(trimmed_r2_scorer, trim=0.2)`` gives another
    trimmed fraction.

    Parameters
    ----------
    estimator : object
        A fitted regressor with ``predict``.
    X : array-like of shape (n_samples, n_features)
        Covariates.
    y : array-like of shape (n_samples,)
        True responses.
    trim : float in [0, 0.5), default=0.1
        Fraction of the largest squared residuals left out.

    Returns
    -------
    score : float
        ``trimmed_r2_score(y, estimator.predict(X), trim=trim)``.

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from skpapers.datasets import make_contaminated_sim
    >>> from skpapers.linear_model import RobustSingleIndexRegressor
    >>> from skpapers.metrics import trimmed_r2_scorer
    >>> X, y, _, _ = make_contaminated_sim(600, 5, attack="labels", random_state=0)
    >>> scores = cross_val_score(RobustSingleIndexRegressor(random_state=0), X, y,
    ...                          cv=3, scoring=trimmed_r2_scorer)
    >>> bool(scores.min() > 0.3)
    True
    """
    return trimmed_r2_score(y, estimator.predict(X), trim=trim)
