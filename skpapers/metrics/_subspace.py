# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Metrics of subspace estimation and sample restoration (unlabeled PCA)."""

import numbers

import numpy as np
from scipy.linalg import subspace_angles
from sklearn.utils import check_array, check_consistent_length

from skpapers.utils._numerics import unit_exponent

__all__ = ["principal_angle", "refined_restoration_error", "relative_restoration_error"]


def _check_finite(X, name, what="values"):
    """``X`` as a float array; a ValueError naming ``name`` on NaN or infinite entries."""
    X = check_array(X, dtype=np.float64, ensure_all_finite=False)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite {what}; pass finite arrays.")
    return X


def principal_angle(A, B):
    """Largest principal angle, in degrees, between the row spaces of ``A`` and ``B``.

    Rows span the subspaces, as in ``components_`` of scikit-learn's
    decompositions (pass ``U.T`` for a basis held in columns). The rows need not
    be orthonormal. With subspaces of different dimensions, the angle is that of
    the smaller one to the larger one. Computed from sines (scipy's
    :func:`~scipy.linalg.subspace_angles`), so tiny angles are accurate.

    Parameters
    ----------
    A : array-like of shape (r_a, n_features)
        Rows spanning the first subspace.
    B : array-like of shape (r_b, n_features)
        Rows spanning the second subspace.

    Returns
    -------
    angle : float
        Largest principal angle in degrees, in [0, 90].

    See Also
    --------
    skpapers.decomposition.UnlabeledPCA : Estimates ``components_`` robustly.

    Notes
    -----
    The authors' ``SubspaceAffinity.m`` computes ``acosd`` of the smallest
    singular value of ``U_1.T @ U_2``: the same angle, less accurate below about
    1e-6 degrees.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import principal_angle
    >>> principal_angle(np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 1.0, 0.0]]))
    45.0...
    """
    A = _check_finite(A, "A")
    B = _check_finite(B, "B")
    for name, M in (("A", A), ("B", B)):
        if not np.any(M):
            raise ValueError(f"{name} is zero: its rows span no subspace.")
    if A.shape[1] != B.shape[1]:
        raise ValueError(
            f"A and B must have the same number of columns (features); got {A.shape[1]} "
            f"and {B.shape[1]}."
        )
    return float(np.degrees(subspace_angles(A.T, B.T)[0]))


def relative_restoration_error(X_true, X_restored):
    """Relative Frobenius error ``|X_restored - X_true|_F / |X_true|_F``.

    Parameters
    ----------
    X_true : array-like of shape (n_samples, n_features)
        Clean samples, in the true feature order.
    X_restored : array-like of shape (n_samples, n_features)
        Restored samples.

    Returns
    -------
    error : float
        Relative error; 0 is perfect restoration.

    See Also
    --------
    skpapers.decomposition.UnlabeledPCA.restore : Produces ``X_restored``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import relative_restoration_error
    >>> relative_restoration_error(np.array([[3.0, 4.0]]), np.array([[3.0, 3.0]]))
    0.2
    """
    X_true = _check_finite(X_true, "X_true")
    X_restored = _check_finite(X_restored, "X_restored")
    check_consistent_length(X_true, X_restored)
    if X_true.shape != X_restored.shape:
        raise ValueError(
            f"X_true and X_restored must have the same shape; got {X_true.shape} and "
            f"{X_restored.shape}."
        )
    with np.errstate(over="ignore"):
        diff = X_restored - X_true
    if not np.all(np.isfinite(diff)):
        diff = np.ldexp(X_restored, -1) - np.ldexp(X_true, -1)  # halves: no overflow
        return _norm_ratio(diff, X_true, shift=1)
    return _norm_ratio(diff, X_true)


def _norm_ratio(A, B, shift=0):
    """``2**shift |A|_F / |B|_F`` computed without overflow or underflow."""
    ea, eb = unit_exponent(A), unit_exponent(B)
    norm_b = np.linalg.norm(np.ldexp(B, -eb))
    if norm_b == 0:
        raise ValueError("X_true is zero: the relative error is undefined.")
    with np.errstate(over="ignore"):
        ratio = float(np.ldexp(np.linalg.norm(np.ldexp(A, -ea)) / norm_b, ea - eb + shift))
    if not np.isfinite(ratio):
        raise ValueError("the relative error exceeds the float64 range.")
    return ratio


def refined_restoration_error(X_true, X_restored, n_components):
    """Relative error of the restored samples after projection on their own top subspace.

    The top ``n_components`` right singular vectors of ``X_restored`` (samples
    as rows) span a subspace; every restored sample is projected on it and
    rescaled to the norm of its clean sample, then
    ``|X_ref - X_true|_F / |X_true|_F``. This is the "refined" error of the
    unlabeled PCA papers, which rescale to unit norm because their clean samples
    have unit norm (the two agree there); rescaling to the clean norm makes the
    error independent of the units. It scores the subspace the restored data
    imply, not every sample alone.

    Parameters
    ----------
    X_true : array-like of shape (n_samples, n_features)
        Clean samples (unit norm in the papers' experiments).
    X_restored : array-like of shape (n_samples, n_features)
        Restored samples.
    n_components : int
        Dimension of the subspace.

    Returns
    -------
    error : float
        Relative error; 0 is perfect.

    See Also
    --------
    relative_restoration_error : Error of every sample as restored.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import refined_restoration_error
    >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]])
    >>> round(refined_restoration_error(X, 2 * X, n_components=2), 12)
    0.0
    """
    X_true = _check_finite(X_true, "X_true")
    X_restored = _check_finite(X_restored, "X_restored")
    if X_true.shape != X_restored.shape:
        raise ValueError(
            f"X_true and X_restored must have the same shape; got {X_true.shape} and "
            f"{X_restored.shape}."
        )
    if not (isinstance(n_components, numbers.Integral) and 1 <= n_components <= min(X_true.shape)):
        raise ValueError(
            f"n_components must be an integer in [1, {min(X_true.shape)}]; got {n_components!r}."
        )
    if not np.any(X_true):
        raise ValueError("X_true is zero: the relative error is undefined.")
    if not np.any(X_restored):
        raise ValueError("X_restored is zero: it spans no subspace to refine on.")
    # both in units of their largest entry: the error does not depend on the units
    X_true = X_true / np.max(np.abs(X_true))
    X_restored = X_restored / np.max(np.abs(X_restored))
    _, _, Vt = np.linalg.svd(X_restored, full_matrices=False)
    V = Vt[:n_components]
    X_ref = (X_restored @ V.T) @ V
    norms = np.linalg.norm(X_ref, axis=1, keepdims=True)
    X_ref *= np.linalg.norm(X_true, axis=1, keepdims=True) / np.where(norms > 0, norms, 1.0)
    return float(np.linalg.norm(X_ref - X_true) / np.linalg.norm(X_true))
