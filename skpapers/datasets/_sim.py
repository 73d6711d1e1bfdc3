# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Contaminated single-index model data (strong contamination attacks)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from skpapers.utils._links import resolve_link
from skpapers.utils._memory import GENERATED_MAX_ENTRIES, check_generated_size

_ATTACKS = (
    "labels", "hijack", "gradient", "leverage", "mimic", "random",
    "saturate", "cluster", "spread_hijack", "subclip", "second_index",
    "point_mass", "mixed",
)


def _noise(noise, n, rng):
    if isinstance(noise, (tuple, list)):
        if len(noise) != 2:
            raise ValueError(f"noise as a pair must be (df, sigma); got {noise!r}.")
        df, sigma = float(noise[0]), float(noise[1])
        if not (0 < df < np.inf and 0 <= sigma < np.inf):
            raise ValueError(
                f"noise=(df, sigma) needs a finite df > 0 and a finite sigma >= 0; "
                f"got {noise!r}."
            )
        t = rng.standard_t(df, size=n)
        return sigma * t * (np.sqrt((df - 2.0) / df) if df > 2 else 1.0)
    if not isinstance(noise, numbers.Real) or not 0 <= noise < np.inf:
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
    *,
    condition_number=1.0,
    max_dense_entries=GENERATED_MAX_ENTRIES,
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
    - "saturate": ``x = g + 2.5 u`` (rows pushed along u), ``y`` = the 99th
      percentile of the clean responses (a saturated reading);
    - "cluster": every corrupted row is the same point ``x = 2.5 u``,
      ``y = f(2.5)`` (a tight cluster of identical rows that a tilted fit
      explains);
    - "spread_hijack": ``x = a u + g``, ``a ~ 3 N(0, 1)``, ``y = f(2 a)`` (the
      hijack without squeezing the rows onto a line: their norms look normal);
    - "subclip": x kept, ``y = f(<coef, x>) + delta sign(<u, x>)`` with
      ``delta`` = 1.2 MAD of the clean noise (every residual stays below a
      Huber clip, and the shifts pull the fit towards u);
    - "second_index": x kept, ``y = f(1.5 <u, x>) + noise`` (a second
      single-index model planted in the corrupted rows);
    - "point_mass": x kept except ``<u, x> = 1.5`` on every corrupted row (a
      point mass of the projection on u, inside the bulk), ``y = f(<coef, x>)
      + delta`` with ``delta`` as in "subclip" (residuals under a Huber clip,
      all of one sign: the rows pull the fit towards u);
    - "mixed": a third of the corrupted rows ``x = g + a u``, ``a ~ 1.5 N(0,
      1)``, ``y = f(<coef + 0.7 u, x>) + noise``; a third the same along a
      second unit ``u2`` orthogonal to ``coef`` and ``u``; the rest keep x and
      have their label flipped, ``y = -f(<coef, x>) + noise`` (two mild spreads
      with tilted responses, plus label flips);
    - None: no corruption.

    With ``condition_number > 1`` the rows are ``x = Sigma^(1/2) z`` for ``z``
    drawn as above, ``Sigma`` with eigenvalues log-spaced from 1 down to
    ``1 / condition_number`` in a random basis, ``u`` is the weakest eigenvector
    of ``Sigma`` made orthogonal to the index direction, and ``coef`` is
    ``Sigma^(-1/2)`` times a unit vector (so that ``<coef, x>`` is standard
    normal on clean rows): every attack is then placed in whitened coordinates,
    along the direction where an error in ``coef`` is largest.

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
    attack : {"labels", "hijack", "gradient", "leverage", "mimic", "random", \
            "saturate", "cluster", "spread_hijack", "subclip", "second_index", \
            "point_mass", "mixed"} or None, default="hijack"
        The corruption.
    random_state : int, RandomState instance or None, default=None
        Seed.
    condition_number : float >= 1, default=1.0
        Condition number of the covariance of the clean covariates (1: X is
        standard Gaussian).
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        1.4 times its largest array. ``None``: no limit.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Covariates.
    y : ndarray of shape (n_samples,)
        Responses.
    coef : ndarray of shape (n_features,)
        The true index coefficient (unit norm when ``condition_number=1``).
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
    if (not isinstance(condition_number, numbers.Real)
            or not 1.0 <= condition_number < np.inf):
        raise ValueError(
            f"condition_number must be a finite float >= 1; got {condition_number!r}."
        )
    check_generated_size([(n_samples, n_features), (n_features, n_features)], max_dense_entries)
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
    root = inv_root = None
    if condition_number != 1.0:
        basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
        scales = np.logspace(0.0, -0.5 * np.log10(condition_number), d)  # sqrt eigenvalues
        root = (basis * scales) @ basis.T
        inv_root = (basis / scales) @ basis.T
        u = basis[:, -1] - (basis[:, -1] @ coef) * coef
        u /= np.linalg.norm(u)
    y = np.asarray(f(X @ coef), dtype=float) + zeta
    outlier_mask = np.zeros(n, dtype=bool)
    k = int(round(contamination * n)) if attack is not None else 0
    if k > 0:
        idx = rng.choice(n, size=k, replace=False)
        outlier_mask[idx] = True
        _corrupt(X, y, idx, attack, f, coef, u, zeta, rng)
    if root is not None:
        X = X @ root
        coef = inv_root @ coef
    return X, y, coef, outlier_mask


def _corrupt(X, y, idx, attack, f, coef, u, zeta, rng):
    """Replace the rows ``idx`` of (X, y) in place by the attack."""
    k, d = idx.shape[0], X.shape[1]
    clean = np.ones(X.shape[0], dtype=bool)
    clean[idx] = False
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
    elif attack == "random":
        X[idx] = g
        y[idx] = 10.0 * rng.standard_normal(k)
    elif attack == "saturate":
        top = np.quantile(y[clean], 0.99) if clean.any() else np.max(y)
        X[idx] = g + 2.5 * u
        y[idx] = top
    elif attack == "cluster":
        X[idx] = 2.5 * u
        y[idx] = f(np.full(k, 2.5))
    elif attack == "spread_hijack":
        a = 3.0 * rng.standard_normal(k)
        X[idx] = a[:, None] * u + g
        y[idx] = f(2.0 * a)
    elif attack in ("subclip", "point_mass"):
        noise = zeta[clean] if clean.any() else zeta
        delta = 1.2 * 1.4826 * np.median(np.abs(noise - np.median(noise)))
        if attack == "point_mass":
            X[idx] += (1.5 - X[idx] @ u)[:, None] * u
            y[idx] = f(X[idx] @ coef) + delta
        else:
            y[idx] = f(X[idx] @ coef) + delta * np.sign(X[idx] @ u)
    elif attack == "mixed":
        u2 = rng.standard_normal(X.shape[1])
        u2 -= (u2 @ coef) * coef + (u2 @ u) * u
        u2 /= np.linalg.norm(u2)
        thirds = np.array_split(idx, 3)
        for part, v in zip(thirds[:2], (u, u2), strict=True):
            a = 1.5 * rng.standard_normal(part.shape[0])
            X[part] = g[: part.shape[0]] + a[:, None] * v
            y[part] = f(X[part] @ (coef + 0.7 * v)) + zeta[part]
        y[thirds[2]] = -f(X[thirds[2]] @ coef) + zeta[thirds[2]]
    else:  # "second_index"
        y[idx] = f(1.5 * (X[idx] @ u)) + zeta[idx]
