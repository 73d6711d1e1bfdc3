# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Contaminated single-index model data (strong contamination attacks)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from skpapers.utils._links import resolve_link

_ATTACKS = ("labels", "hijack", "gradient", "leverage", "mimic", "random")


def _noise(noise, n, rng):
    if isinstance(noise, (tuple, list)):
        if len(noise) != 2:
            raise ValueError(f"noise as a pair must be (df, sigma); got {noise!r}.")
        df, sigma = float(noise[0]), float(noise[1])
        if not (df > 0 and sigma >= 0):
            raise ValueError(f"noise=(df, sigma) needs df > 0 and sigma >= 0; got {noise!r}.")
        t = rng.standard_t(df, size=n)
        return sigma * t * (np.sqrt((df - 2.0) / df) if df > 2 else 1.0)
    if not isinstance(noise, numbers.Real) or not noise >= 0:
        raise ValueError(f"noise must be a float >= 0 or a pair (df, sigma); got {noise!r}.")
    return float(noise) * rng.standard_normal(n)


def make_contaminated_sim(
    n_samples=1000,
    n_features=20,
    link="gelu",
    noise=0.5,
    contamination=0.1,
    attack="hijack",
    random_state=None,
):
    """Generate single-index model data with strongly contaminated rows.

    Clean rows: ``x ~ N(0, I)``, ``y = f(<coef, x>) + noise`` with ``coef``
    uniform on the unit sphere. Then ``round(contamination * n_samples)`` rows
    chosen at random are replaced by the attack (``u`` is one random unit vector
    orthogonal to ``coef``, ``g ~ N(0, I)``):

    - "labels": ``y = -3 f(<coef, x>) + 5``, x kept;
    - "hijack": ``x = a u + 0.3 g``, ``a ~ 3 N(0, 1)``, ``y = f(2 a)`` (fakes a
      signal along u for the spectral step);
    - "gradient": ``x = 3 xi u + coef + 0.1 g``, ``xi = +-1``,
      ``y = f(<coef, x>) - 3 xi`` (gradients at the truth point along u);
    - "leverage": ``x = 10 sqrt(d) v + g`` for one random unit v, ``y = 100``;
    - "mimic": ``y = f(<coef', x>) + noise`` with ``coef'`` at 60 degrees from
      ``coef`` (towards u), x kept;
    - "random": ``x ~ N(0, I)``, ``y ~ N(0, 10^2)`` independently;
    - None: no corruption.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=20
        Dimension (at least 2).
    link : str, callable or (callable, callable), default="gelu"
        The link, as for :class:`~skpapers.linear_model.RobustSingleIndexRegressor`.
    noise : float or (float, float), default=0.5
        Gaussian noise standard deviation sigma, or a pair ``(df, sigma)``:
        Student-t noise scaled to standard deviation sigma when df > 2
        (``sigma t_df sqrt((df - 2) / df)``), ``sigma t_df`` otherwise.
    contamination : float in [0, 0.5), default=0.1
        Fraction of corrupted rows.
    attack : {"labels", "hijack", "gradient", "leverage", "mimic", "random"} \
            or None, default="hijack"
        The corruption.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Covariates.
    y : ndarray of shape (n_samples,)
        Responses.
    coef : ndarray of shape (n_features,)
        The true unit-norm index coefficient.
    outlier_mask : ndarray of shape (n_samples,), dtype=bool
        The corrupted rows.

    See Also
    --------
    skpapers.linear_model.RobustSingleIndexRegressor : The estimator.

    Examples
    --------
    >>> from skpapers.datasets import make_contaminated_sim
    >>> X, y, coef, outliers = make_contaminated_sim(200, 5, random_state=0)
    >>> X.shape, int(outliers.sum())
    ((200, 5), 20)
    """
    if not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1; got {n_samples!r}.")
    if not isinstance(n_features, numbers.Integral) or n_features < 2:
        raise ValueError(f"n_features must be an integer >= 2; got {n_features!r}.")
    if not isinstance(contamination, numbers.Real) or not 0 <= contamination < 0.5:
        raise ValueError(f"contamination must be in [0, 0.5); got {contamination!r}.")
    if attack is not None and attack not in _ATTACKS:
        raise ValueError(f"attack must be one of {_ATTACKS} or None; got {attack!r}.")
    rng = check_random_state(random_state)
    f = resolve_link(link).f
    n, d = int(n_samples), int(n_features)
    X = rng.standard_normal((n, d))
    coef = rng.standard_normal(d)
    coef /= np.linalg.norm(coef)
    u = rng.standard_normal(d)
    u -= (u @ coef) * coef
    u /= np.linalg.norm(u)
    zeta = _noise(noise, n, rng)
    y = np.asarray(f(X @ coef), dtype=float) + zeta
    outlier_mask = np.zeros(n, dtype=bool)
    k = int(round(contamination * n)) if attack is not None else 0
    if k == 0:
        return X, y, coef, outlier_mask
    idx = rng.choice(n, size=k, replace=False)
    outlier_mask[idx] = True
    g = rng.standard_normal((k, d))
    if attack == "labels":
        y[idx] = -3.0 * f(X[idx] @ coef) + 5.0
    elif attack == "hijack":
        a = 3.0 * rng.standard_normal(k)
        X[idx] = a[:, None] * u + 0.3 * g
        y[idx] = f(2.0 * a)
    elif attack == "gradient":
        xi = rng.choice([-1.0, 1.0], size=k)
        X[idx] = 3.0 * xi[:, None] * u + coef + 0.1 * g
        y[idx] = f(X[idx] @ coef) - 3.0 * xi
    elif attack == "leverage":
        v = rng.standard_normal(d)
        v /= np.linalg.norm(v)
        X[idx] = 10.0 * np.sqrt(d) * v + g
        y[idx] = 100.0
    elif attack == "mimic":
        beta = np.cos(np.pi / 3) * coef + np.sin(np.pi / 3) * u
        y[idx] = f(X[idx] @ beta) + zeta[idx]
    else:  # "random"
        X[idx] = g
        y[idx] = 10.0 * rng.standard_normal(k)
    return X, y, coef, outlier_mask
