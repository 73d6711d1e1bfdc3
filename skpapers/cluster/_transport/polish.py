# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Finishing stages of transport clustering: hardening and polishing.

* ``_harden``: from a (soft) assignment of the clustered side, hard labels
  improved by batched single-point moves (Hartigan's rule) on the registered
  cost until no move lowers the generalized K-means objective. The plan stays
  the registration's transfer of a row-stochastic assignment, so it stays
  exactly feasible.
* ``_polish``: block-coordinate descent on the low-rank OT problem with the
  co-cluster masses fixed (n = m, uniform masses, hard co-clusters): given
  ``Q``, the best ``R`` is a capacitated assignment of the targets to the
  co-clusters with cost ``C^T Q / g`` (and symmetrically for ``Q``), solved
  exactly, so the plan stays exactly feasible and its cost never increases.
  It frees every co-cluster from the registration (a source and its
  registered image no longer have to share a co-cluster).
"""

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment, linprog

from skpapers.cluster._transport.cost import G_MIN
from skpapers.cluster._transport.registration import _round_to_polytope
from skpapers.utils._lowrank import lowrank_cost


def _products(cost, Q):
    """``U = C Q``, ``V = C^T Q`` and ``diag(C)`` for a dense or factored square cost."""
    if isinstance(cost, tuple):
        A, B = cost
        return A @ (B.T @ Q), B @ (A.T @ Q), np.einsum("ij,ij->i", A, B)
    return cost @ Q, cost.T @ Q, np.diag(cost).copy()


def _objective(s, g):
    return float(np.sum(np.divide(s, g, out=np.zeros_like(s), where=g > G_MIN)))


def _harden(cost, labels, w, n_clusters, *, max_sweeps=100):
    """Hard labels improved by batched Hartigan moves; returns ``(labels, n_sweeps)``.

    The objective is ``F = sum_k s_k / g_k`` with ``s_k = q_k^T C q_k`` and
    ``g_k`` the mass of cluster k (``q_k`` the masses ``w`` of its points).
    Every point gets the exact change of ``F`` for moving it to every other
    cluster; all improving moves are applied at once, and if ``F`` does not
    decrease, only the best half of them, and so on. A factored cost
    ``(A, B)`` costs one (n, 2p) x (2p, K) product per sweep (cluster sums by
    sparse one-hot products, moves scored in row blocks of bounded memory).
    """
    if isinstance(cost, tuple):
        return _harden_factored(cost, labels, w, n_clusters, max_sweeps=max_sweeps)
    labels = np.asarray(labels).copy()
    n = labels.shape[0]
    rows = np.arange(n)
    K = n_clusters
    for sweep in range(1, max_sweeps + 1):
        Q = np.zeros((n, K))
        Q[rows, labels] = w
        U, V, c = _products(cost, Q)
        g = Q.sum(axis=0)
        s = np.einsum("ik,ik->k", Q, U)
        f = np.divide(s, g, out=np.zeros_like(s), where=g > G_MIN)
        F = float(f.sum())
        best, gain = _best_moves(U + V, labels, w, c, s, g, f)

        def evaluate(trial):
            Qt = np.zeros((n, K))
            Qt[rows, trial] = w
            return _objective(np.einsum("ik,ik->k", Qt, cost @ Qt), Qt.sum(axis=0)), None

        trial, _ = _apply_moves(labels, best, gain, F, evaluate)
        if trial is None:
            return labels, sweep
        labels = trial
    return labels, max_sweeps


def _apply_moves(labels, best, gain, F, evaluate):
    """Apply the improving moves, best first, halving them until ``F`` decreases.

    ``evaluate(trial)`` returns ``(F_trial, state)``; the result is
    ``(trial, state)``, or ``(None, None)`` when no move lowers ``F``.
    """
    movers = np.flatnonzero(gain < -1e-12 * max(abs(F), 1e-300))
    movers = movers[np.argsort(gain[movers])]
    while movers.size:
        trial = labels.copy()
        trial[movers] = best[movers]
        objective, state = evaluate(trial)
        if objective < F:
            return trial, state
        movers = movers[: movers.size // 2]
    return None, None


def _best_moves(uv, labels, w, c, s, g, f):
    """Best target cluster of every point and the exact change of ``F`` it brings.

    ``uv = (C + C^T) Q`` restricted to the points, ``c = diag(C)`` for them.
    """
    rows = np.arange(labels.shape[0])
    k = labels
    # remove every point from its cluster
    s_out = s[k] - w * uv[rows, k] + w**2 * c
    g_out = g[k] - w
    f_out = np.divide(s_out, g_out, out=np.zeros_like(s_out), where=g_out > G_MIN)
    gain_out = f_out - f[k]
    # add it to every cluster
    delta = uv * w[:, None]
    delta += s[None, :] + (w**2 * c)[:, None]
    delta /= np.maximum(g[None, :] + w[:, None], G_MIN)
    delta -= f[None, :]
    delta += gain_out[:, None]
    delta[rows, k] = 0.0
    best = np.argmin(delta, axis=1)
    return best, delta[rows, best]


def _cluster_sums(M, labels, w, n_clusters):
    """``Q^T M`` for the one-hot assignment ``Q[i, labels[i]] = w[i]`` in O(n p)."""
    n = labels.shape[0]
    H = sparse.csr_matrix((w, (labels, np.arange(n))), shape=(n_clusters, n))
    return np.asarray(H @ M)


def _harden_factored(cost, labels, w, n_clusters, *, max_sweeps=100, block=1 << 15):
    A, B = cost
    c = np.einsum("ij,ij->i", A, B)
    labels = np.asarray(labels).copy()
    n = labels.shape[0]
    K = n_clusters
    uniform = bool(np.all(w == w[0]))

    def state(lab):
        MA, MB = _cluster_sums(A, lab, w, K), _cluster_sums(B, lab, w, K)
        g = np.bincount(lab, weights=w, minlength=K)
        return MA, MB, g, np.einsum("kp,kp->k", MA, MB)

    MA, MB, g, s = state(labels)
    for sweep in range(1, max_sweeps + 1):
        f = np.divide(s, g, out=np.zeros_like(s), where=g > G_MIN)
        F = float(f.sum())
        best = np.empty(n, dtype=np.intp)
        gain = np.empty(n)
        if uniform:
            # equal masses w0: the change of F for a move into cluster k is affine in
            # the row (A_i, B_i, c_i), so one product per block scores every move
            w0 = float(w[0])
            den = g + w0
            TA, TB = MB.T * (w0 / den), MA.T * (w0 / den)
            tc, t1 = w0**2 / den, s / den - f
        for start in range(0, n, block):
            sl = slice(start, min(start + block, n))
            if not uniform:
                uv = A[sl] @ MB.T + B[sl] @ MA.T
                best[sl], gain[sl] = _best_moves(uv, labels[sl], w[sl], c[sl], s, g, f)
                continue
            lab, rows = labels[sl], np.arange(sl.stop - sl.start)
            own = np.einsum("ij,ij->i", A[sl], MB[lab]) + np.einsum("ij,ij->i", B[sl], MA[lab])
            s_out = s[lab] - w0 * own + w0**2 * c[sl]
            g_out = g[lab] - w0
            f_out = np.divide(s_out, g_out, out=np.zeros_like(s_out), where=g_out > G_MIN)
            E = A[sl] @ TA
            E += B[sl] @ TB
            E += np.outer(c[sl], tc)
            E += t1
            E[rows, lab] = np.inf
            b = np.argmin(E, axis=1)
            best[sl] = b
            gain[sl] = E[rows, b] + (f_out - f[lab])
        def evaluate(trial):
            new = state(trial)
            return _objective(new[3], new[2]), new

        trial, new = _apply_moves(labels, best, gain, F, evaluate)
        if trial is None:
            return labels, sweep
        labels = trial
        MA, MB, g, s = new
    return labels, max_sweeps


def _capacitated_assignment(D, counts):
    """Hard assignment of the rows of ``D`` (m x K) to clusters of sizes ``counts``.

    Exact: a linear assignment between the rows and ``sum(counts) = m`` slots,
    ``counts[k]`` of them for cluster k (an m x m problem).
    """
    slots = np.repeat(np.arange(D.shape[1]), counts)
    rows, cols = linear_sum_assignment(D[:, slots])
    labels = np.empty(D.shape[0], dtype=np.intp)
    labels[rows] = slots[cols]
    return labels


def _polish(cost, labels_q, labels_r, n_clusters, *, max_iter=3):
    """Alternate exact capacitated reassignments of targets and sources.

    For n = m points of uniform mass and hard co-clusters with as many sources
    as targets each: given the sources' partition, the cheapest targets'
    partition with the same sizes is a capacitated assignment with cost
    ``C^T Q / g`` (and symmetrically), solved exactly. The cost never
    increases and the plan stays exactly feasible. ``cost`` is the (n, n)
    cost, dense or a factor pair ``(A, B)``. Returns ``(labels_q, labels_r,
    n_steps)``.
    """
    n = labels_q.shape[0]
    K = n_clusters
    counts = np.bincount(labels_q, minlength=K)
    rows = np.arange(n)

    def one_hot(labels):
        H = np.zeros((n, K))
        H[rows, labels] = 1.0 / n
        return H

    g = np.maximum(counts / n, G_MIN)
    value = lowrank_cost(cost, one_hot(labels_q), one_hot(labels_r), g)
    steps = 0
    for _ in range(max_iter):
        start = value
        for side in (2, 1):
            Q, R = one_hot(labels_q), one_hot(labels_r)
            if isinstance(cost, tuple):
                A, B = cost
                D = B @ (A.T @ Q) if side == 2 else A @ (B.T @ R)
            else:
                D = cost.T @ Q if side == 2 else cost @ R
            new = _capacitated_assignment(D / g, counts)
            lq, lr = (labels_q, new) if side == 2 else (new, labels_r)
            trial = lowrank_cost(cost, one_hot(lq), one_hot(lr), g)
            if trial < value:
                labels_q, labels_r, value = lq, lr, trial
                steps += 1
        if value >= start:
            break
    return labels_q, labels_r, steps


def _transport_lp(D, mass, g):
    """Exact plan in ``Pi(mass, g)`` (n x K) minimising ``<D, plan>`` (HiGHS)."""
    n, K = D.shape
    rows = sparse.kron(sparse.eye(n), np.ones((1, K)))
    cols = sparse.kron(np.ones((1, n)), sparse.eye(K))
    res = linprog(D.ravel(), A_eq=sparse.vstack([rows, cols]).tocsr(),
                  b_eq=np.concatenate([mass, g * (mass.sum() / g.sum())]), bounds=(0, None),
                  method="highs")
    if res.status != 0:  # pragma: no cover - a transport LP is always feasible
        return None
    return _round_to_polytope(res.x.reshape(n, K), mass, g * (mass.sum() / g.sum()))


def _polish_weighted(cost, Q, R, a, b, *, max_iter=3):
    """Alternate exact LP updates of ``R`` and ``Q`` at fixed ``g`` (any sizes, weights).

    Given ``Q``, the best ``R`` is the transport plan between the target masses
    ``b`` and ``g`` with cost ``C^T Q / g`` (and symmetrically); each update is
    kept only if it lowers the cost. Returns ``(Q, R, g, n_steps)``.
    """
    g = np.maximum(Q.sum(axis=0), G_MIN)
    value = lowrank_cost(cost, Q, R, g)
    steps = 0
    for _ in range(max_iter):
        start = value
        for side in (2, 1):
            if isinstance(cost, tuple):
                A, B = cost
                D = B @ (A.T @ Q) if side == 2 else A @ (B.T @ R)
            else:
                D = cost.T @ Q if side == 2 else cost @ R
            new = _transport_lp(D / g, b if side == 2 else a, g)
            if new is None:
                continue
            Qn, Rn = (Q, new) if side == 2 else (new, R)
            trial = lowrank_cost(cost, Qn, Rn, g)
            if trial < value:
                Q, R, value = Qn, Rn, trial
                steps += 1
        if value >= start:
            break
    return Q, R, g, steps
