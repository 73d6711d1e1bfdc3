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
* ``_polish_weighted``: the same with linear programs for any sizes and
  weights, plus Frank-Wolfe steps on the joint problem that move the
  co-cluster masses (``_flow_lp``).
"""

import warnings

import numpy as np
from scipy import sparse

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


def _harden(cost, labels, w, n_clusters, *, max_sweeps=100, progress=None):
    """Hard labels improved by batched Hartigan moves; returns ``(labels, n_sweeps)``.

    The objective is ``F = sum_k s_k / g_k`` with ``s_k = q_k^T C q_k`` and
    ``g_k`` the mass of cluster k (``q_k`` the masses ``w`` of its points).
    Every point gets the exact change of ``F`` for moving it to every other
    cluster; all improving moves are applied at once, and if ``F`` does not
    decrease, only the best half of them, and so on, until no move lowers
    ``F`` or ten sweeps lowered it by less than 1e-4 (relative). A factored cost
    ``(A, B)`` costs one (n, 2p) x (2p, K) product per sweep (with equal
    masses: float32 with float64 rescoring near a move, and only the columns
    of the clusters the last moves changed; otherwise float64 in row blocks
    of bounded memory; cluster sums updated from the movers).
    ``progress`` reports every sweep at ``verbose >= 2``.
    """
    if isinstance(cost, tuple):
        return _harden_factored(
            cost, labels, w, n_clusters, max_sweeps=max_sweeps, progress=progress
        )
    labels = np.asarray(labels).copy()
    n = labels.shape[0]
    rows = np.arange(n)
    K = n_clusters
    history = []
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
        _report(progress, sweep, F, labels, trial)
        history.append(F)
        if trial is None or _stalled(history):
            return (labels if trial is None else trial), sweep
        labels = trial
    return labels, max_sweeps


def _stalled(history, *, window=10, rtol=1e-4):
    """Whether ``F`` fell by less than ``rtol`` (relative) over the last ``window`` sweeps.

    Batched moves can keep moving a few points per sweep for a long time at a
    negligible gain (at n = m = 2e4, d = K = 50: 0.05 % over sweeps 11-100).
    """
    return len(history) > window and history[-window - 1] - history[-1] <= rtol * abs(
        history[-1]
    )


def _report(progress, sweep, F, labels, trial):
    """One line per hardening sweep at ``verbose >= 2`` (the last one always)."""
    if progress is not None:
        moved = 0 if trial is None else int(np.count_nonzero(trial != labels))
        progress.iteration(
            f"hardening sweep {sweep}: objective {F:.10g}, {moved} point(s) moved",
            force=trial is None,
        )


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


class _FactoredState:
    """Cluster sums ``Q^T A``, ``Q^T B``, masses ``g`` and ``s_k = q_k^T C q_k`` of a partition."""

    def __init__(self, A, B, w, labels, n_clusters, sums=None):
        self.A, self.B, self.w, self.labels, self.K = A, B, w, labels, n_clusters
        if sums is None:
            sums = (
                _cluster_sums(A, labels, w, n_clusters),
                _cluster_sums(B, labels, w, n_clusters),
                np.bincount(labels, weights=w, minlength=n_clusters),
            )
        self.MA, self.MB, self.g = sums
        self.s = np.einsum("kp,kp->k", self.MA, self.MB)
        self.f = np.divide(self.s, self.g, out=np.zeros_like(self.s), where=self.g > G_MIN)
        self.F = float(self.f.sum())

    def moved(self, labels):
        """Return the state of ``labels``, updated from the points whose label changed."""
        idx = np.flatnonzero(labels != self.labels)
        w, K = self.w[idx], self.K
        new, old = labels[idx], self.labels[idx]

        def change(M):
            return _cluster_sums(M, new, w, K) - _cluster_sums(M, old, w, K)

        sums = (
            self.MA + change(self.A[idx]),
            self.MB + change(self.B[idx]),
            self.g + np.bincount(new, w, K) - np.bincount(old, w, K),
        )
        return _FactoredState(self.A, self.B, self.w, labels, K, sums)

    def coefficients(self, w0):
        """Linear scores of single moves of a point of mass ``w0`` (equal masses).

        Row k of ``into`` holds ``[TA, TB, tc, t1]``: the change of ``F`` for adding
        point i to cluster k is ``A_i . TA + B_i . TB + c_i tc + t1``. Row k of
        ``out`` holds the same for the decrease of ``F`` when a point leaves k.
        """
        MA, MB, g, s, f = self.MA, self.MB, self.g, self.s, self.f
        r = w0 / (g + w0)
        into = np.column_stack([MB * r[:, None], MA * r[:, None], w0 * r, s * r / w0 - f])
        den = g - w0
        r = np.divide(w0, den, out=np.zeros_like(den), where=den > G_MIN)
        out = np.column_stack([MB * r[:, None], MA * r[:, None], -w0 * r, f - s * r / w0])
        return into, out


def _scores(A, B, c, coef, p):
    """Return ``A coef_A^T + B coef_B^T + c coef_c + coef_1`` (points x rows of ``coef``)."""
    E = A @ coef[:, :p].T
    E += B @ coef[:, p : 2 * p].T
    E += np.outer(c, coef[:, 2 * p])
    E += coef[:, 2 * p + 1]
    return E


def _own_scores(A, B, c, rows, p):
    """Score of every point with its own coefficient row (``rows[i]`` for point i)."""
    return (np.einsum("ij,ij->i", A, rows[:, :p]) + np.einsum("ij,ij->i", B, rows[:, p : 2 * p])
            + c * rows[:, 2 * p] + rows[:, 2 * p + 1])


class _UniformScorer:
    """Single moves of points of equal mass ``w0``, scored in float32 where that is safe.

    The change of ``F`` for moving point i into cluster k is affine in
    ``z_i = (A_i, B_i, c_i, 1)``, ``E_ik = z_i . into_k``, and so is the decrease
    for removing it from its cluster, ``own_i = z_i . out_{label_i}`` (rows of
    :meth:`_FactoredState.coefficients`). Both are computed in float32 as
    ``z_i . (row - mean)``, with ``mean`` the mean row of the first ``into``
    (it cancels in ``E - own``), and kept between sweeps: after a sweep only
    the columns of ``E`` of the clusters whose rows changed are recomputed
    (one (n, 2p + 2) x (2p + 2, changed) product; all columns in place once a
    fifth of them changed, as writing strided columns costs more than the
    product), and ``own`` for their points (for all points by row-block
    products once a fifth of them are concerned). The float32 value of
    ``E_ik - own_i`` errs by at most
    ``sum_j |z_ij| slack_j``, ``slack = (m + 3) u (max_k |into_k - mean| +
    max_k |out_k - mean|)`` (the classical bound for m-term dot products of
    rounded factors, u = 2**-24), so only the points whose best move might
    lower ``F`` within that bound are rescored in float64: the moves are
    exactly those of float64 scoring.
    """

    def __init__(self, state, c, z32, z_max):
        self.c, self.z32, self.z_max = c, z32, z_max
        self.p = state.A.shape[1]
        self.state = None
        self.update(state)

    def update(self, state):
        """Score the partition of ``state``, recomputing only what its moves changed."""
        into, out = state.coefficients(float(state.w[0]))
        first = self.state is None
        points_total = state.labels.shape[0]
        if first:
            self.mean = into.mean(axis=0)
            changed = np.arange(into.shape[0])
            points = np.arange(state.labels.shape[0])
        else:
            changed = np.flatnonzero(
                np.any(into != self.into, axis=1) | np.any(out != self.out, axis=1)
            )
            points = np.flatnonzero(
                np.isin(state.labels, changed) | (state.labels != self.state.labels)
            )
        self.state, self.into, self.out = state, into, out
        into, out = into - self.mean, out - self.mean
        self.into32, self.out32 = into.astype(np.float32), out.astype(np.float32)
        if first or 5 * changed.size > into.shape[0]:
            # writing strided columns costs about five times their product: past a
            # fifth of the columns, recomputing all of them in place is cheaper
            if first:
                self.E = np.empty((points_total, into.shape[0]), dtype=np.float32)
            np.matmul(self.z32, self.into32.T, out=self.E)
        elif changed.size:
            self.E[:, changed] = self.z32 @ self.into32[changed].T
        if first or 5 * points.size > points_total:
            self.own = self._own_all(state.labels)
        else:
            self.own[points] = np.einsum(
                "ij,ij->i", self.z32[points], self.out32[state.labels[points]]
            )
        m = into.shape[1]
        self.slack = (m + 3) * 2.0**-24 * 1.01 * (
            np.max(np.abs(into), axis=0) + np.max(np.abs(out), axis=0)
        )
        self.largest_bound = float(self.z_max @ self.slack)  # of every point's bound

    def _own_all(self, labels, *, block=1 << 16):
        """``z_i . out_{label_i}`` of every point, in float32 products by row blocks.

        One (block, 2p + 2) x (2p + 2, K) product per block, of which each row
        keeps its own label's entry: cheaper than gathering a row of ``out``
        for every point.
        """
        own = np.empty(labels.shape[0])
        for start in range(0, labels.shape[0], block):
            rows = slice(start, start + block)
            scores = self.z32[rows] @ self.out32.T
            own[rows] = scores[np.arange(scores.shape[0]), labels[rows]]
        return own

    def __call__(self, sl):
        """Best other cluster of the points ``sl`` (a slice) and the change of ``F``."""
        st, p, c = self.state, self.p, self.c
        labels = st.labels[sl]
        z32, E = self.z32[sl], self.E[sl]
        rows = np.arange(E.shape[0])
        kept = E[rows, labels]
        E[rows, labels] = np.inf
        best = np.argmin(E, axis=1)
        gain = E[rows, best] - self.own[sl]
        E[rows, labels] = kept
        # the points whose gain might be negative: first by the largest bound
        near = np.flatnonzero(gain < self.largest_bound)
        near = near[gain[near] < np.abs(z32[near]) @ self.slack.astype(np.float32)]
        gain[:] = np.inf
        if near.size:
            idx = sl.start + near
            lab = labels[near]
            A, B, ci = st.A[idx], st.B[idx], c[idx]
            E = _scores(A, B, ci, self.into, p)
            rows = np.arange(near.size)
            E[rows, lab] = np.inf
            b = np.argmin(E, axis=1)
            best[near] = b
            gain[near] = E[rows, b] - _own_scores(A, B, ci, self.out[lab], p)
        return best, gain


def _harden_factored(cost, labels, w, n_clusters, *, max_sweeps=100, block=1 << 15,
                     progress=None):
    """Hartigan sweeps on a factored cost (see :func:`_harden`).

    With equal masses the first sweep costs one float32 (n, 2p) x (2p, K)
    product, the next ones only the columns of the clusters that changed, plus
    float64 rescoring of the few points near a move (``_UniformScorer``);
    otherwise every sweep is a float64 product. Cluster sums are updated from
    the movers.
    """
    A, B = cost
    c = np.einsum("ij,ij->i", A, B)
    n = labels.shape[0]
    uniform = bool(np.all(w == w[0]))
    if uniform:  # rows z_i = (A_i, B_i, c_i, 1) in float32
        z32 = np.ones((n, 2 * A.shape[1] + 2), dtype=np.float32)
        z32[:, : A.shape[1]], z32[:, A.shape[1] : -2], z32[:, -2] = A, B, c
        z_max = np.max(np.abs(z32), axis=0).astype(np.float64)
    state = _FactoredState(A, B, w, np.asarray(labels).copy(), n_clusters)
    best = np.zeros(n, dtype=np.intp)
    gain = np.empty(n)
    scorer = _UniformScorer(state, c, z32, z_max) if uniform else None
    history = []
    for sweep in range(1, max_sweeps + 1):
        if uniform and scorer.state is not state:
            scorer.update(state)
        for start in range(0, n, block):
            sl = slice(start, min(start + block, n))
            if uniform:
                best[sl], gain[sl] = scorer(sl)
            else:
                uv = A[sl] @ state.MB.T + B[sl] @ state.MA.T
                best[sl], gain[sl] = _best_moves(
                    uv, state.labels[sl], w[sl], c[sl], state.s, state.g, state.f
                )

        def evaluate(trial, state=state):
            new = state.moved(trial)
            return new.F, new

        trial, new = _apply_moves(state.labels, best, gain, state.F, evaluate)
        _report(progress, sweep, state.F, state.labels, trial)
        history.append(state.F)
        if trial is None or _stalled(history):
            return (state.labels if trial is None else trial), sweep
        state = new
    return state.labels, max_sweeps


def _capacitated_assignment(D, counts):
    """Hard assignment of the rows of ``D`` (m x K) to clusters of sizes ``counts``.

    Exact: the transport problem between the m rows (mass 1 each) and the K
    clusters (mass ``counts``), solved by POT's network simplex on the m x K
    cost. Its margins are integers, so the optimal vertex it returns is a hard
    assignment. (Equivalent to a linear assignment between the rows and
    ``counts[k]`` slots per cluster, an m x m problem: 3.1 s against 0.03 s at
    m = 5000, K = 50.) Returns None if the simplex stopped at its iteration cap
    before reaching a hard plan with these sizes.
    """
    labels = np.argmax(_network_simplex(D, np.ones(D.shape[0]), counts.astype(np.float64)), axis=1)
    return labels if np.array_equal(np.bincount(labels, minlength=counts.size), counts) else None


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
            if new is None:
                continue
            lq, lr = (labels_q, new) if side == 2 else (new, labels_r)
            trial = lowrank_cost(cost, one_hot(lq), one_hot(lr), g)
            if trial < value:
                labels_q, labels_r, value = lq, lr, trial
                steps += 1
        if value >= start:
            break
    return labels_q, labels_r, steps


def _network_simplex(D, a, b):
    """Exact plan in ``Pi(a, b)`` minimising ``<D, plan>`` (POT's network simplex)."""
    import ot  # lazy, as in the registration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a cap hit leaves a feasible plan, kept only if cheaper
        P = ot.emd(a, b, np.ascontiguousarray(D), numItermax=max(100_000, 100 * sum(D.shape)))
    return _round_to_polytope(np.asarray(P, dtype=np.float64), a, b)


def _transport_lp(D, mass, g):
    """Exact plan in ``Pi(mass, g)`` (n x K) minimising ``<D, plan>``."""
    return _network_simplex(D, mass, g * (mass.sum() / g.sum()))


def _flow_lp(Dq, Dr, a, b):
    """Exact ``(Q, R)`` minimising ``<Dq, Q> + <Dr, R>`` on the low-rank plans.

    Constraints ``Q 1 = a``, ``R 1 = b``, ``Q^T 1 = R^T 1``: a min-cost flow
    from the sources through K hubs to the targets, in which the co-cluster
    masses ``g = Q^T 1`` are free. Solved as one transport problem: suppliers
    are the sources and the hubs' outlets, customers the hubs' inlets and the
    targets; every outlet holds the total mass, passed to its own inlet at no
    cost or on to the targets, so each hub sends on what it receives.
    """
    (n, K), m = Dq.shape, Dr.shape[0]
    b = b * (a.sum() / b.sum())
    forbidden = 4.0 * (np.abs(Dq).max() + np.abs(Dr).max()) + 1.0
    D = np.full((n + K, K + m), forbidden)
    D[:n, :K] = Dq
    D[n:, K:] = Dr.T
    D[n + np.arange(K), np.arange(K)] = 0.0
    total = np.full(K, a.sum())
    P = _network_simplex(D, np.concatenate([a, total]), np.concatenate([total, b]))
    Q, R = P[:n, :K], P[n:, K:].T
    Q = _round_to_polytope(Q, a, Q.sum(axis=0) * (a.sum() / Q.sum()))
    return Q, _round_to_polytope(R, b, Q.sum(axis=0))


def _polish_weighted(cost, Q, R, a, b, *, move_masses=True, max_iter=10):
    """Alternate exact transport updates of ``R`` and ``Q`` at fixed ``g``, then of all three.

    Given ``Q``, the best ``R`` is the transport plan between the target masses
    ``b`` and ``g`` with cost ``C^T Q / g`` (and symmetrically). The joint
    step is a Frank-Wolfe (conditional gradient) step with unit step on
    ``F(Q, R) = <C, Q diag(1/g) R^T>``, ``g = Q^T 1``: the flow LP of
    :func:`_flow_lp` on the gradient ``(C R / g - diag(Q^T C R) / g^2,
    C^T Q / g)`` moves the co-cluster masses too; it runs only with
    ``move_masses`` (its transport problem is dense, (n + K) x (m + K)). Each
    update is kept only if it lowers the cost. Returns ``(Q, R, g, n_steps)``.
    """
    g = np.maximum(Q.sum(axis=0), G_MIN)
    value = lowrank_cost(cost, Q, R, g)
    steps = 0

    def products(Q, R):
        if isinstance(cost, tuple):
            A, B = cost
            return A @ (B.T @ R), B @ (A.T @ Q)
        return cost @ R, cost.T @ Q

    for _ in range(max_iter):
        start = value
        for update in ("targets", "sources", "masses")[: 3 if move_masses else 2]:
            CR, CtQ = products(Q, R)
            if update == "masses":
                hub = np.einsum("ik,ik->k", Q, CR) / g**2
                Qn, Rn = _flow_lp(CR / g - hub, CtQ / g, a, b)
            elif update == "targets":
                Qn, Rn = Q, _transport_lp(CtQ / g, b, g)
            else:
                Qn, Rn = _transport_lp(CR / g, a, g), R
            gn = np.maximum(Qn.sum(axis=0), G_MIN)
            trial = lowrank_cost(cost, Qn, Rn, gn)
            if trial < value:
                Q, R, g, value = Qn, Rn, gn, trial
                steps += 1
        if value >= start:
            break
    return Q, R, g, steps
