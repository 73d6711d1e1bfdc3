# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tree operators of the fair hierarchical clustering papers, on a mutable tree.

[NeurIPS23] Knittel, Springer, Dickerson, Hajiaghayi, "Fair, Polylog-Approximate
Low-Cost Hierarchical Clustering" (SplitRoot, MakeFair: subtree deletion and
insertion, shallow folding). [ICML23] the same authors, "Generalized Reductions:
Making any Hierarchical Clustering Fair and Balanced with Low Cost"
(RebalanceTree, RefineRebalanceTree, level abstraction, FairHC).

Every operator is iterative (explicit stacks, parent-pointer walks); sizes and
per-group counts stay valid after each operation. Updates walk only the path
between the moved subtree and the node whose size does not change.
"""

import math

import numpy as np

from skpapers.utils._hierarchy import (
    HierarchyTree,
    fairness_threshold,
    group_counts,
    monotone_heights,
)

__all__ = [
    "WorkTree",
    "fair_hc",
    "make_fair",
    "rebalance_tree",
    "refine_rebalance_tree",
    "split_root",
]

_EMPTY = -1  # an empty SplitRoot slot (padding child of size 0)


class WorkTree:
    """Mutable hierarchy: child lists, parent pointers, sizes and group counts.

    Parameters
    ----------
    tree : HierarchyTree
        Initial hierarchy (typically the binary vanilla tree).
    groups : ndarray of shape (n_leaves,)
        Integer group code of every leaf, ``0 .. n_groups - 1``.
    n_groups : int
        Number of groups.
    rng : numpy.random.Generator or None
        Tie-breaking between equal keys; ``None`` breaks ties by node id.
    """

    def __init__(self, tree, groups, n_groups, rng=None):
        n_nodes = tree.n_nodes
        ptr = tree.children_ptr.tolist()
        kids = tree.children.tolist()
        self.ch = [kids[ptr[u] : ptr[u + 1]] for u in range(n_nodes)]
        self.par = tree.parent.tolist()
        self.sz = tree.size.tolist()
        self.n_leaves = tree.n_leaves
        self.root = tree.root
        self.cnt = np.empty((2 * n_nodes + 16, n_groups), dtype=np.int64)
        self.cnt[:n_nodes] = group_counts(tree, groups, n_groups)
        self.rng = rng
        self.split_stalled = 0  # SplitRoot calls that stopped: no move could help
        self.split_capped = 0  # SplitRoot calls that hit max_iter

    # -- primitives ---------------------------------------------------------
    def new_node(self, children):
        """Create a node with ``children``; return its id."""
        q = len(self.par)
        if q >= self.cnt.shape[0]:
            grown = np.empty((2 * self.cnt.shape[0], self.cnt.shape[1]), dtype=np.int64)
            grown[:q] = self.cnt[:q]
            self.cnt = grown
        self.par.append(-1)
        self.ch.append(list(children))
        self.sz.append(sum(self.sz[c] for c in children))
        self.cnt[q] = self.cnt[children].sum(axis=0)
        for c in children:
            self.par[c] = q
        return q

    def replace_child(self, p, old, new):
        """Put ``new`` in ``old``'s place among the children of ``p``."""
        kids = self.ch[p]
        kids[kids.index(old)] = new
        self.par[new] = p

    def _update_path(self, start, stop, sign, v):
        """Add ``sign * (size, counts)`` of ``v`` from ``start`` up to ``stop`` (excluded)."""
        path = []
        u = start
        d = sign * self.sz[v]
        while u != stop:
            self.sz[u] += d
            path.append(u)
            u = self.par[u]
        if path:
            self.cnt[path] += sign * self.cnt[v]

    def detach(self, v, stop):
        """Remove subtree ``v``; sizes change strictly below ``stop``; contract unary parents."""
        p = self.par[v]
        self.ch[p].remove(v)
        self.par[v] = -1
        self._update_path(p, stop, -1, v)
        if p != stop and len(self.ch[p]) == 1:
            (c,) = self.ch[p]
            self.replace_child(self.par[p], p, c)
            self.ch[p] = []
            self.par[p] = -2  # dead

    def insert_at(self, v, u, stop):
        """del_ins second half: a new node ``{u, v}`` takes ``u``'s place."""
        g = self.par[u]
        kids = self.ch[g]
        idx = kids.index(u)
        q = self.new_node([u, v])
        kids[idx] = q
        self.par[q] = g
        self._update_path(g, stop, +1, v)
        return q

    def fold(self, nodes):
        """Shallow fold: one node whose children are the union of the nodes' children."""
        return self.new_node(self._dissolve(nodes))

    def _dissolve(self, nodes):
        """Delete the internal ``nodes``; return their children, with the leaves kept."""
        kids = []
        for t in nodes:
            if self.ch[t]:
                kids.extend(self.ch[t])
                self.ch[t] = []
                self.par[t] = -2
            else:
                kids.append(t)
        return kids

    def dissolve_below(self, r, size):
        """Make ``r``'s children its largest descendants smaller than ``size``.

        The internal nodes of at least ``size`` samples below ``r`` are deleted,
        so that none of ``r``'s descendants reaches ``size``; the order of the
        children is kept.
        """
        out, stack = [], list(reversed(self.ch[r]))
        while stack:
            c = stack.pop()
            if self.sz[c] >= size and self.ch[c]:
                stack.extend(reversed(self._dissolve([c])))
            else:
                out.append(c)
        self.ch[r] = out
        for c in out:
            self.par[c] = r

    def level_abstract(self, r, levels):
        """Make the depth-``levels`` descendants of ``r`` (and shallower leaves) its children."""
        frontier = list(self.ch[r])
        for _ in range(levels - 1):
            frontier = self._dissolve(frontier)
        self.ch[r] = frontier
        for c in frontier:
            self.par[c] = r

    # -- keys ---------------------------------------------------------------
    def _order(self, nodes, key):
        """Return indices sorting ``nodes`` by ``key`` (ties by node id or at random)."""
        second = self.rng.random(len(nodes)) if self.rng is not None else np.asarray(nodes)
        return np.lexsort((second, key))

    def extreme_child(self, u, largest):
        """Largest (or smallest) child of ``u``, ties by node id."""
        kids = self.ch[u]
        sz = self.sz
        if largest:
            return max(kids, key=lambda c: (sz[c], -c))
        return min(kids, key=lambda c: (sz[c], c))

    # -- output -------------------------------------------------------------
    def to_hierarchy(self, height=None):
        """Compact into a :class:`HierarchyTree` (internal nodes renumbered in BFS order).

        ``height``: optional per-node heights indexed by this tree's node ids
        (a base tree's merge distances); they are made monotone.
        """
        n = self.n_leaves
        internal = []
        queue = [self.root]
        i = 0
        while i < len(queue):
            u = queue[i]
            i += 1
            if self.ch[u]:
                internal.append(u)
                queue.extend(self.ch[u])
        new_id = {u: n + j for j, u in enumerate(internal)}
        n_nodes = n + len(internal)
        parent = np.full(n_nodes, -1, dtype=np.intp)
        counts = np.zeros(n_nodes, dtype=np.intp)
        flat = []
        old = np.arange(n).tolist() + internal
        for u in internal:
            kids = [c if c < n else new_id[c] for c in self.ch[u]]
            if len(kids) < 2:
                raise RuntimeError("internal error: unary node left in the hierarchy")
            counts[new_id[u]] = len(kids)
            flat.extend(kids)
            parent[kids] = new_id[u]
        ptr = np.zeros(n_nodes + 1, dtype=np.intp)
        np.cumsum(counts, out=ptr[1:])
        # CSR needs children grouped by parent id order: internal ids are in BFS order
        tree = HierarchyTree(parent, ptr, np.asarray(flat, dtype=np.intp), self.cnt[old])
        if height is not None:
            tree.height = monotone_heights(tree, np.asarray(height, dtype=np.float64)[old])
        return tree


def split_root(t, r, h, eps, max_iter):
    """SplitRoot [NeurIPS23]: give ``r`` h children of size in [(1/h - eps)m, (1/h + eps)m].

    Moves subtrees from the largest child into the smallest (subtree deletion and
    insertion) until every child is inside the window, no move can help, or
    ``max_iter`` moves were made. Returns True when the window was reached.
    """
    m = t.sz[r]
    kids = t.ch[r]
    while len(kids) > h:  # more children than slots: pair the two smallest
        order = t._order(kids, [t.sz[c] for c in kids])
        a, b = kids[order[0]], kids[order[1]]
        kids.remove(a)
        kids.remove(b)
        q = t.new_node([a, b])
        kids.append(q)
        t.par[q] = r
    kids.extend([_EMPTY] * (h - len(kids)))
    lo, hi, mean = (1 / h - eps) * m, (1 / h + eps) * m, m / h
    sz = t.sz
    converged = False
    for _ in range(max_iter):
        sizes = [sz[s] if s != _EMPTY else 0 for s in kids]
        order = t._order(kids, sizes)
        imin, imax = order[0], order[-1]
        smin, smax = sizes[imin], sizes[imax]
        if smin >= lo and smax <= hi:
            converged = True
            break
        target = min(mean - smin, smax - mean)
        v = kids[imax]
        while t.ch[v] and sz[v] > target:
            v = t.extreme_child(v, largest=True)
        if smin + sz[v] >= smax:  # the move cannot shrink the size range
            break
        u = kids[imin]
        if u != _EMPTY:
            while t.ch[u] and sz[t.extreme_child(u, largest=True)] >= sz[v]:
                u = t.extreme_child(u, largest=False)
        if t.par[v] == r:
            kids[imax] = _EMPTY
            t.par[v] = -1
        else:
            t.detach(v, stop=r)
        if u == _EMPTY:
            kids[imin] = v
            t.par[v] = r
        else:
            t.insert_at(v, u, stop=r)
    else:
        sizes = [sz[s] if s != _EMPTY else 0 for s in kids]
        converged = min(sizes) >= lo and max(sizes) <= hi
        t.split_capped += not converged
    t.ch[r] = [s for s in kids if s != _EMPTY]
    t.split_stalled += not converged
    return converged


def _score(group_counts, group_sizes, target):
    """(max deviation, size-weighted squared deviation) of fold groups' shares."""
    dev = group_counts / group_sizes[..., None] - target
    top = np.max(np.abs(dev), axis=(-2, -1))
    return top, np.sum(group_sizes[..., None] * dev**2, axis=(-2, -1))


def _improve(counts, assign, k, target, size_window=None, max_steps=None):
    """Best-improvement local search on ``assign`` (in place); returns its score.

    Steps: swap two items of different fold groups or, when ``size_window``
    (lo, hi) is given, also move one item, keeping every fold group's size in
    the window. A step is taken only if it strictly lowers (max deviation,
    weighted squared deviation).

    Items with the same count vector are interchangeable: swapping or moving
    any of them changes the fold groups' counts in the same way. Each step
    therefore tries one representative per (fold group, count vector), the
    lowest-indexed item, which takes the same step as trying every item (ties
    go to the lowest indices in both cases) at a cost that depends on the
    number of distinct compositions, not on the number of items.
    """
    m, n_groups = counts.shape
    gc = np.zeros((k, n_groups))
    np.add.at(gc, assign, counts)
    score = _score(gc, gc.sum(axis=1), target)
    _, comp = np.unique(counts, axis=0, return_inverse=True)
    comp = comp.reshape(-1)
    n_comp = int(comp.max()) + 1
    sizes = counts.sum(axis=1)
    steps = m * m if max_steps is None else max_steps
    for _ in range(steps):
        _, first = np.unique(assign * n_comp + comp, return_index=True)
        reps = np.sort(first)  # lowest-indexed item of every (fold group, composition)
        ii, jj = np.triu_indices(reps.shape[0], 1)
        ii, jj = reps[ii], reps[jj]
        a, b = assign[ii], assign[jj]
        ok = a != b
        src, dst, item, delta = [], [], [], []
        if np.any(ok):  # swaps: i leaves a for b, j leaves b for a
            src.append(a[ok])
            dst.append(b[ok])
            item.append(np.stack([ii[ok], jj[ok]], axis=1))
            delta.append(counts[ii[ok]] - counts[jj[ok]])
        if size_window is not None:  # moves of one item to another group
            lo, hi = size_window
            it = np.repeat(reps, k)
            to = np.tile(np.arange(k), reps.shape[0])
            keep = to != assign[it]
            it, to = it[keep], to[keep]
            gs = gc.sum(axis=1)
            fine = (gs[assign[it]] - sizes[it] >= lo) & (gs[to] + sizes[it] <= hi)
            it, to = it[fine], to[fine]
            src.append(assign[it])
            dst.append(to)
            item.append(np.stack([it, np.full_like(it, -1)], axis=1))
            delta.append(counts[it])
        if not src:
            break
        src, dst = np.concatenate(src), np.concatenate(dst)
        item, delta = np.concatenate(item), np.concatenate(delta)
        if src.shape[0] == 0:
            break
        trial = np.repeat(gc[None], src.shape[0], axis=0)
        rows = np.arange(src.shape[0])
        trial[rows, src] -= delta
        trial[rows, dst] += delta
        tsizes = trial.sum(axis=2)
        if size_window is not None:
            valid = np.all((tsizes >= size_window[0]) & (tsizes <= size_window[1]), axis=1)
        else:
            valid = np.ones(rows.shape[0], dtype=bool)
        valid &= np.all(tsizes > 0, axis=1)
        if not np.any(valid):
            break
        top, sq = _score(trial[valid], tsizes[valid], target)
        pick = np.lexsort((sq, top))[0]
        if (top[pick], sq[pick]) >= (score[0], score[1] - 1e-12 * abs(score[1])):
            break
        sel = np.flatnonzero(valid)[pick]
        i, j = item[sel]
        assign[i] = dst[sel]
        if j >= 0:
            assign[j] = src[sel]
        gc = trial[sel]
        score = (top[pick], sq[pick])
    return score


def fold_assignment(counts, k, tiebreak=None):
    """Assign parts to ``k`` fold groups so that every group's share is balanced.

    Each fold group gets ``floor(m / k)`` or ``ceil(m / k)`` of the ``m`` parts
    (the stride pattern's numbers, so fold groups keep near-equal sizes). For
    every group ``l`` the stride assignment of the parts sorted by their share
    of ``l`` is a candidate: part ``i`` of the sorted list goes to fold group
    ``i mod k``. Each candidate is improved by swapping parts between fold
    groups while the largest deviation of a fold group's share from the
    parent's share (ties: the size-weighted sum of squared deviations) strictly
    decreases; the best result is returned. Shares are count / size, so parts
    of unequal size weigh by their size.

    Parameters
    ----------
    counts : ndarray of shape (m, n_groups)
        Group counts of the parts (every part non-empty).
    k : int
        Number of fold groups, ``k < m``.
    tiebreak : ndarray of shape (m,), default=None
        Secondary sort key between parts of equal share (default: position).

    Returns
    -------
    assign : ndarray of shape (m,)
        Fold group ``0 .. k - 1`` of every part.
    """
    counts = np.asarray(counts, dtype=np.float64)
    m, n_groups = counts.shape
    sizes = counts.sum(axis=1)
    target = counts.sum(axis=0) / sizes.sum()
    prop = counts / sizes[:, None]
    second = np.arange(m) if tiebreak is None else tiebreak
    keys = range(1) if n_groups <= 2 else range(n_groups)  # two groups: one order suffices
    best, best_score = None, None
    for ell in keys:
        order = np.lexsort((second, -prop[:, ell]))
        assign = np.empty(m, dtype=np.intp)
        assign[order] = np.arange(m) % k
        score = _improve(counts, assign, k, target)
        if best is None or (score[0], score[1]) < (best_score[0], best_score[1]):
            best, best_score = assign.copy(), score
    return best


def fold_balanced(
    t, r, k, refine=True, slack=0.0, tol=None, max_rounds=None, goal=None, max_pieces=None
):
    """Fold the children of ``r`` into ``k`` fold groups of balanced group shares.

    The parts are assigned by :func:`fold_assignment`; each fold group becomes
    one node whose children are the union of its parts' children (a shallow
    fold; a leaf part stays a child). With ``refine``, those children (the
    pieces) may then change fold group, one swap or move at a time, while every
    fold group's size stays within the range the part assignment gave and the
    largest deviation of a share strictly decreases. With ``tol``, while the
    largest deviation stays above ``tol`` the largest internal piece is
    replaced by its children (one level finer) and the search resumes, at most
    ``max_rounds`` times and while there are fewer than ``max_pieces`` pieces
    (the swap search costs O(pieces^2) per step).
    """
    kids = t.ch[r]
    if len(kids) <= k:
        return
    idx = np.asarray(kids)
    tiebreak = t.rng.random(len(kids)) if t.rng is not None else idx
    assign = fold_assignment(t.cnt[idx], k, tiebreak)
    groups = [[kids[i] for i in np.flatnonzero(assign == g)] for g in range(k)]
    if refine:
        pieces, owner = [], []
        for g, group in enumerate(groups):
            for piece in t._dissolve(group):
                pieces.append(piece)
                owner.append(g)
        owner = np.asarray(owner, dtype=np.intp)
        counts = t.cnt[np.asarray(pieces)].astype(np.float64)
        gs = np.bincount(owner, weights=counts.sum(axis=1), minlength=k)
        target = counts.sum(axis=0) / counts.sum() if goal is None else goal
        m = gs.sum()
        lo, hi = min(gs.min(), (1 - slack) * m / k), max(gs.max(), (1 + slack) * m / k)
        score = _improve(counts, owner, k, target, size_window=(lo, hi))
        rounds = 0
        while tol is not None and score[0] > tol and (max_rounds is None or rounds < max_rounds):
            if max_pieces is not None and len(pieces) >= max_pieces:
                break
            sizes = counts.sum(axis=1)
            internal = [i for i, q in enumerate(pieces) if t.ch[q]]
            if not internal:
                break
            i = max(internal, key=lambda j: (sizes[j], -pieces[j]))
            sub = t._dissolve([pieces[i]])
            pieces = pieces[:i] + pieces[i + 1 :] + sub
            owner = np.r_[np.delete(owner, i), np.full(len(sub), owner[i])]
            counts = t.cnt[np.asarray(pieces)].astype(np.float64)
            score = _improve(counts, owner, k, target, size_window=(lo, hi))
            rounds += 1
        groups = [[pieces[i] for i in np.flatnonzero(owner == g)] for g in range(k)]
        new = [t.new_node(group) if len(group) > 1 else group[0] for group in groups]
    else:
        new = [t.fold(group) if len(group) > 1 else group[0] for group in groups]
    t.ch[r] = new
    for c in new:
        t.par[c] = r


# cap of the deeper refinement: the swap search is O(pieces^2) per step. 160 gives the
# same deviations as 320 at n = 2048-4096 (Adult race, Bank education; 1.29x against
# 1.31x the reduction at worst) at half the time on all of Adult race.
MAX_PIECES = 160
FOLD_FLOOR = 2


def make_fair(t, h, k, eps, max_iter, progress=None, max_rounds=None):
    """MakeFair [NeurIPS23]: SplitRoot then folding, top-down on a work stack.

    Nodes smaller than ``max(h, ceil(1 / (2 eps)))`` (the threshold) are left
    unchanged. Two choices beyond the paper's schedule, for several groups:

    * the fold of a node of ``m`` samples balances every fold group's shares
      against the global shares, refining one level deeper (the largest piece
      replaced by its children) while a share is more than
      ``max(k / (2 m), eps / 4)`` away from its global share (half a sample of
      an average fold group, or a quarter of the balance slack), at most
      ``max_rounds`` times (``None``: until no piece can be split) and up to
      ``MAX_PIECES`` pieces;
    * a node is folded when its fold groups hold at least twice the threshold
      (``m >= 2 k threshold``); a smaller node is not folded, and its
      descendants of at least the threshold are dissolved into it (its
      children become its largest descendants below the threshold), so no
      cluster that fairness is measured on is left as the vanilla tree made
      it. (Its SplitRoot children alone can reach the threshold when
      ``h = 2k``: on scikit-learn's breast cancer data such clusters stayed
      single-group. Folding them instead, with fold groups from one threshold
      up, gave coarser shares: 0.024 against 0.014 on all of Adult by sex.)
    """
    threshold = fairness_threshold(h, eps)
    goal = t.cnt[t.root] / t.sz[t.root]
    stack = [t.root]
    done = 0
    while stack:
        r = stack.pop()
        if t.sz[r] < threshold or not t.ch[r]:
            continue
        split_root(t, r, h, eps, max_iter)
        if t.sz[r] >= FOLD_FLOOR * k * threshold:
            tol = max(k / (2 * t.sz[r]), eps / 4)
            fold_balanced(t, r, k, tol=tol, max_rounds=max_rounds, goal=goal, max_pieces=MAX_PIECES)
        else:  # too small to fold: no cluster below it may reach the threshold unfolded
            t.dissolve_below(r, threshold)
        stack.extend(t.ch[r])
        done += 1
        if progress is not None:
            progress.iteration(f"MakeFair: {done} clusters made fair, {len(stack)} to visit")
    if progress is not None:
        progress.iteration(f"MakeFair: {done} clusters made fair (done)", force=True)


def rebalance_tree(t):
    """RebalanceTree [ICML23]: every split of the binary tree into [1/3, 2/3]."""
    stack = [t.root]
    sz = t.sz
    while stack:
        r = stack.pop()
        if not t.ch[r]:
            continue
        m = sz[r]
        v = r
        c = t.extreme_child(v, largest=True)
        while sz[c] >= 2 * m / 3:
            v = c
            c = t.extreme_child(v, largest=True)
        v = c
        if t.par[v] != r:  # tree_rebalance(v, r): r's children become {v, rest}
            t.detach(v, stop=r)
            rest = t.new_node(t.ch[r])
            t.ch[r] = [v, rest]
            t.par[v] = r
            t.par[rest] = r
        stack.extend(t.ch[r])


def refine_rebalance_tree(t, eps):
    """RefineRebalanceTree [ICML23]: every node of size > 1/(2 eps) split within 1/2 +- eps."""
    stack = [t.root]
    sz = t.sz
    while stack:
        r = stack.pop()
        m = sz[r]
        if not t.ch[r] or eps <= 1 / (2 * m):
            continue
        for _ in range(m):  # each move shrinks the big side by at least one leaf
            big = t.extreme_child(r, largest=True)
            small = t.extreme_child(r, largest=False)
            if sz[big] < (0.5 + eps) * m:
                break
            s = sz[big] - m / 2  # SubtreeSearch(r, s)
            x = big
            while t.ch[x] and sz[t.extreme_child(x, largest=False)] > s:
                x = t.extreme_child(x, largest=True)
            v = t.extreme_child(x, largest=False) if t.ch[x] else x
            if v == big or sz[v] >= sz[big] - sz[small]:
                break
            u = small
            while t.ch[u] and sz[t.extreme_child(u, largest=True)] >= sz[v]:
                u = t.extreme_child(u, largest=False)
            t.detach(v, stop=r)
            t.insert_at(v, u, stop=r)
        stack.extend(t.ch[r])


def fair_hc(t, h, k, progress=None):
    """FairHC [ICML23]: level abstraction to depth log2(h), stride folding, top-down."""
    levels = int(round(math.log2(h)))
    stack = [t.root]
    while stack:
        r = stack.pop()
        if not t.ch[r] or all(not t.ch[c] for c in t.ch[r]):
            continue
        t.level_abstract(r, levels)
        fold_balanced(t, r, k)
        stack.extend(t.ch[r])
        if progress is not None:
            progress.iteration(f"FairHC: {len(stack)} clusters to visit")
    if progress is not None:
        progress.iteration("FairHC: done", force=True)
