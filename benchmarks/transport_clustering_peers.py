# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Methods and the one scoring function shared by the transport clustering benchmarks.

A method maps ``(X, Y, K, seed, s)`` to ``(Q, R, g, labels_x, labels_y, info)``;
the plan is always ``Q diag(1/g) R^T`` so that :func:`score` serves every
method: the primal cost ``<C, P>`` (``skpapers.metrics.lowrank_ot_cost`` on
the same C) next to the l1 marginal error ``||P 1 - a||_1 + ||P^T 1 - b||_1``
read off the factors. ``s = max C``; POT sees ``C / s``.

Peers: POT ``ot.lowrank_sinkhorn`` (inits "random" and "kmeans"), the
KMeans+LC baseline (scikit-learn KMeans on each side joined by an exact K x K
OT between the cluster masses), POT ``ot.factored_optimal_transport`` and,
when JAX and ott-jax are installed, ott-jax ``LRSinkhorn``.
"""

import importlib.util
import time
import warnings

import numpy as np
import ot
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

from skpapers.cluster import TransportClustering
from skpapers.metrics import class_transfer_accuracy, lowrank_ot_cost

HAS_OTT = importlib.util.find_spec("ott") is not None


def tc(**params):
    """Our estimator with ``params``; extra info: registration cost, iterations."""

    def fit(X, Y, K, seed, s, a=None, b=None):
        target = None if params.get("metric") == "precomputed" else Y
        est = TransportClustering(K, random_state=seed, **params).fit(
            X, X_target=target, sample_weight=a, target_weight=b
        )
        info = {"registration_cost": est.registration_cost_, "n_iter": est.n_iter_}
        return est.Q_, est.R_, est.g_, est.labels_, est.target_labels_, info

    return fit


def pot(init, reg=0.0):
    """POT low-rank Sinkhorn on ``C / s`` (Dykstra warnings counted)."""

    def fit(X, Y, K, seed, s, a=None, b=None):
        root = np.sqrt(s)
        a = np.full(len(X), 1 / len(X)) if a is None else a / a.sum()
        b = np.full(len(Y), 1 / len(Y)) if b is None else b / b.sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            Q, R, g = ot.lowrank_sinkhorn(
                X / root, Y / root, a=a, b=b, reg=reg, rank=K, rescale_cost=False, init=init,
                seed_init=seed,
            )
        info = {"dykstra_warnings": sum("Dykstra" in str(w.message) for w in caught)}
        return Q, R, g, Q.argmax(1), R.argmax(1), info

    return fit


def ott_lr(epsilon=0.0):
    """ott-jax ``LRSinkhorn`` on ``C / s`` (the paper's LOT setting), if installed."""

    def fit(X, Y, K, seed, s, a=None, b=None):
        import jax.numpy as jnp
        from ott.geometry import pointcloud
        from ott.problems.linear import linear_problem
        from ott.solvers.linear import sinkhorn_lr

        root = np.sqrt(s)
        geom = pointcloud.PointCloud(jnp.asarray(X / root), jnp.asarray(Y / root))
        a = None if a is None else jnp.asarray(a / a.sum())
        b = None if b is None else jnp.asarray(b / b.sum())
        out = sinkhorn_lr.LRSinkhorn(rank=K, epsilon=epsilon)(
            linear_problem.LinearProblem(geom, a=a, b=b), rng=__import__("jax").random.key(seed)
        )
        Q, R, g = (np.asarray(v, dtype=np.float64) for v in (out.q, out.r, out.g))
        return Q, R, g, Q.argmax(1), R.argmax(1), {}

    return fit


def hard(labels, K, w=None):
    """Factor of a hard partition (rows carry the weights ``w``) and its column masses."""
    w = np.full(labels.shape[0], 1.0 / labels.shape[0]) if w is None else w / w.sum()
    H = np.zeros((labels.shape[0], K))
    H[np.arange(labels.shape[0]), labels] = w
    return H, H.sum(0)


def kmeans_lc(X, Y, K, seed, s, a=None, b=None):
    """KMeans on each side, joined by exact OT between the cluster masses.

    The latent-coupling plan ``Qh diag(1/gQ) T diag(1/gR) Rh^T`` is rewritten as
    ``Q diag(1/t) R^T`` over the nonzero entries t = T[k, l] (at most 2K - 1).
    """
    n_init = min(K, 10)
    km_x = KMeans(K, n_init=n_init, random_state=seed).fit(X, sample_weight=a)
    km_y = KMeans(K, n_init=n_init, random_state=seed).fit(Y, sample_weight=b)
    Qh, gQ = hard(km_x.labels_, K, a)
    Rh, gR = hard(km_y.labels_, K, b)
    keep_x, keep_y = gQ > 0, gR > 0
    M = ot.dist(km_x.cluster_centers_[keep_x], km_y.cluster_centers_[keep_y])
    T = np.zeros((K, K))
    T[np.ix_(keep_x, keep_y)] = ot.emd(gQ[keep_x], gR[keep_y], M)
    kx, ky = np.nonzero(T > 1e-14)
    t = T[kx, ky]
    Q, R = Qh[:, kx] * (t / gQ[kx]), Rh[:, ky] * (t / gR[ky])
    return Q, R, t, km_x.labels_, km_y.labels_, {"plan_rank": int(t.shape[0])}


def factored(X, Y, K, seed, s, a=None, b=None):
    """POT's factored coupling (Forrow et al.): P = Ga diag(1/h) Gb."""
    X0 = np.random.RandomState(seed).standard_normal((K, X.shape[1]))
    Ga, Gb, _ = ot.factored_optimal_transport(X, Y, r=K, X0=X0)
    g = Ga.sum(0)
    keep = g > 0
    return Ga[:, keep], Gb.T[:, keep], g[keep], Ga.argmax(1), Gb.argmax(0), {}


def peers(lot=True):
    """The default peers: POT (both inits), ott-jax when installed, KMeans+LC."""
    out = {"POT kmeans": pot("kmeans"), "POT random": pot("random")}
    if lot and HAS_OTT:
        out["ott-jax LRSinkhorn"] = ott_lr()
    out["KMeans+LC"] = kmeans_lc
    return out


def score(C, Q, R, g, a, b, labels=None, pred=None, ot_cost=np.nan):
    """Cost, ratio to full-rank OT, l1 marginal error and AMI/ARI of one plan."""
    cost = lowrank_ot_cost(C, Q, R, g)
    row_err = np.abs(Q @ (R.sum(0) / g) - a).sum()
    col_err = np.abs(R @ (Q.sum(0) / g) - b).sum()
    out = {"cost": cost, "cost/OT": cost / ot_cost if ot_cost > 0 else np.nan,
           "marg_err": row_err + col_err}
    if labels is not None:
        for side, true, hat in zip("AB", labels, pred, strict=True):
            out[f"AMI {side}"] = adjusted_mutual_info_score(true, hat)
            out[f"ARI {side}"] = adjusted_rand_score(true, hat)
    return out


def run_instance(X, Y, K, seed, methods, *, C=None, a=None, b=None, labels=None,
                 ot_cost=None, cta=False, centroids=False, **keys):
    """Fit every method on one instance (same data, back to back); one row per method."""
    if C is None:
        C = ot.dist(X, Y)
    wa = np.full(C.shape[0], 1 / C.shape[0]) if a is None else a / a.sum()
    wb = np.full(C.shape[1], 1 / C.shape[1]) if b is None else b / b.sum()
    if ot_cost is None:
        ot_cost = ot.emd2(wa, wb, C, numItermax=10**8)
    s = float(C.max())
    rows = []
    for name, fit in methods.items():
        t0 = time.perf_counter()
        Q, R, g, lx, ly, info = fit(X, Y, K, seed, s, a=a, b=b)
        seconds = time.perf_counter() - t0
        row = {**keys, "K": K, "seed": seed, "method": name, "seconds": seconds}
        row.update(score(C, Q, R, g, wa, wb, labels, (lx, ly), ot_cost))
        if cta:
            row["CTA"] = class_transfer_accuracy(Q, R, g, labels[0], labels[1])
        if centroids:  # Forrow et al.'s estimate: transport of the co-cluster means
            diff = (Q.T @ X - R.T @ Y) / g[:, None]
            row["centroid W2^2"] = float(g @ np.einsum("kd,kd->k", diff, diff))
        rows.append({**row, **info})
    return rows


def add_ratio_to_best(df, keys, ours="TC"):
    """``cost/best peer``: our cost over the cheapest other method on the same instance."""
    inst = [*keys, "K", "seed"]
    peer = df[df.method != ours].groupby(inst)["cost"].min().rename("best_peer")
    df = df.join(peer, on=inst)
    df["cost/best peer"] = df["cost"] / df["best_peer"]
    return df.drop(columns="best_peer")
