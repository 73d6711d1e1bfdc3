# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""A robust regression score: R^2 on the best-fitted rows (trimmed R^2)."""

import numbers

import numpy as np
from sklearn.metrics import make_scorer
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


trimmed_r2_scorer = make_scorer(trimmed_r2_score)
trimmed_r2_scorer.__doc__ = """Scorer of :func:`trimmed_r2_score` (trim 0.1), for ``scoring=``.

Pass the object, ``cross_val_score(est, X, y, scoring=trimmed_r2_scorer)``;
``make_scorer(trimmed_r2_score, trim=0.2)`` gives another trimmed fraction.
"""
