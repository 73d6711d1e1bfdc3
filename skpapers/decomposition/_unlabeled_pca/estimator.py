# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Unlabeled principal component analysis (Yao, Peng & Tsakiris, NeurIPS 2021)."""

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, validate_data

from skpapers.decomposition._unlabeled_pca.distributed import distributed_unlabeled_pca
from skpapers.decomposition._unlabeled_pca.solver import (
    PARAMETER_CONSTRAINTS,
    coefficients,
    loo_settings,
    restored,
    stage2_basis,
    unexplained_flags,
    unlabeled_pca,
)
from skpapers.utils._dask import DaskRowsMixin, is_dask_collection, map_rows, wants_pandas
from skpapers.utils._repr import DocLinkMixin
from skpapers.utils._sklearn import _fit_context

__all__ = ["UnlabeledPCA"]


class UnlabeledPCA(
    DaskRowsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, DocLinkMixin, BaseEstimator
):
    """Unlabeled PCA: a subspace from samples whose entries may be permuted.

    Each sample ``x_j`` (a row of ``X``) is a noisy copy of a point of an unknown
    ``n_components``-dimensional linear subspace whose entries may have been
    shuffled by a sample-specific, unknown permutation. Stage I estimates the
    subspace robustly, treating permuted samples as outliers (dual principal
    component pursuit by default); Stage II undoes the permutations by
    unlabeled sensing: it finds coefficients ``c_j`` such that ``c_j @
    components_`` matches ``x_j`` up to an unknown permutation of its entries.
    NaN entries are treated as missing (unlabeled matrix completion).

    Read more in the :doc:`User Guide </user_guide/upca>`.

    Parameters
    ----------
    n_components : int
        Dimension ``r`` of the subspace, ``1 <= n_components < n_features``.
        The paper has no automatic choice (see the user guide).
    stage1 : {"dpcp", "cop", "pca"}, default="dpcp"
        Stage-I subspace estimator: ``"dpcp"`` is DPCP-IRLS (projected onto the
        row span when ``n_features > n_samples``), ``"cop"`` coherence pursuit,
        ``"pca"`` the top singular vectors of the unit-normalised samples.
    stage2 : {"auto", "lsrf", "l1", "pl", "hard_em"}, default="auto"
        Stage-II unlabeled-sensing solver: ``"auto"`` LSRF, and, on data close
        to rank ``n_components`` (:attr:`clean_distance_` at most 0.1), hard EM
        for the samples about as far from the subspace as a random direction
        (at least 0.9 times its floor) whose LSRF restoration does not match
        their sorted values to 3 times :attr:`clean_distance_` (densely
        permuted samples);
        hard EM's restoration replaces LSRF's where it does (Notes);
        ``"lsrf"`` least squares with
        recursive filtration (the paper's), ``"l1"`` least absolute deviations,
        ``"pl"`` pseudo-likelihood, ``"hard_em"`` sort-and-match hard EM started
        from the coefficients that match the first two power sums of the sample
        (for densely permuted samples, every entry shuffled).
    p : float in (0, 2], default=0.5
        Exponent of the DPCP objective ``sum_j dist(x_j, S)**p`` (IRLS weights
        ``dist**(p - 2)``). 0.5 is the authors' code, 1 the textbook DPCP, 2 is
        PCA. Used by ``stage1="dpcp"`` only.
    restore_samples : {"checked", "flagged", "all"}, default="checked"
        Which samples go through Stage II and are replaced by their
        restoration: ``"checked"`` the flagged samples (:attr:`permuted_mask_`)
        whose restoration clearly lowers their error (it moves them farther
        than its own estimated error; Notes), and none when too few samples
        look clean for the subspace to tell permuted entries from clean ones
        (:attr:`flagging_rule_` ``"none"``, with a
        :class:`~skpapers.exceptions.FlaggingWarning`); on data not close to
        rank ``n_components`` (:attr:`clean_distance_` above 0.05) only the
        entries a kept restoration finds moved are replaced, by the sample's
        own values on them put in the restoration's order, the others are
        returned as given, and a sample with missing entries is restored only
        when its restoration fits a sparse or a dense permutation of its
        observed entries; with at most 100 complete samples (the leave-one-out
        rule) a restoration must also be kept on the subspace fitted without
        its sample (Notes); ``"flagged"`` every
        flagged sample; ``"all"`` every sample (the authors' code path). The
        samples left out are returned unchanged.
    fit_mean : bool, default=False
        Fit an affine subspace ``mean_ + span(components_)`` instead of a
        linear one (not in the paper). A permutation acts on a sample's raw
        entries, so the data are not centred: the fit is the
        ``(n_components + 1)``-dimensional linear span of the affine subspace,
        which :attr:`mean_` (the mean of the unflagged samples' projections)
        and :attr:`components_` (their top ``n_components`` principal axes
        about it) then describe; Stage II restores samples as points of that
        span. Off by default: on the paper's linear data the extra dimension
        absorbs part of the permuted samples and the error rises up to 26 times;
        on data with an offset the linear model restores nothing (Notes).
    outlier_threshold : float, default=3.0
        ``k`` of the flagging rule: a sample is flagged when its distance
        exceeds ``k`` times the typical distance of the clean samples, or ``k``
        robust standard deviations above it on a log scale when those distances
        spread widely (Notes).
    lsrf_tol : float, "auto" or None, default="auto"
        Early stop of ``"lsrf"``: a sample stops deleting entries once its largest
        absolute residual is at most ``lsrf_tol`` (units of ``X``). ``"auto"``
        uses 3 x 1.4826 x the lower quartile of the median absolute deviations
        of the residuals of the unflagged training samples (the noise level of
        the cleanest samples; at most 2**17 entries, from a fixed random subset
        of those samples). ``None`` deletes entries down to ``n_components +
        1`` (no early stop), one per step as the paper's algorithm while at most
        ``n_components + 200`` entries of a sample remain, and about 1% per
        step before that (Notes): the paper's algorithm exactly for samples of
        at most ``n_components + 200`` observed entries, its batched variant
        for longer ones. Its least-squares fits are downdated as entries are
        deleted and keep the full fit's ridge (1e-12 of the mean eigenvalue of
        ``A.T @ A``), which moves nearly singular last fits: against the
        authors' code on real tables, the same to 4e-7 in error with at most
        212 entries per sample, up to 0.94 apart with 303-1000 (see the
        benchmarks). It is slower and less accurate on noisy data. The
        tolerance also picks the flagged samples that join the refit of the
        subspace (Notes), whatever ``stage2``; with ``None`` there is no refit
        and :attr:`components_` is the Stage-I subspace.
    max_iter : int, default=1000
        Maximum number of DPCP-IRLS iterations (also of the masked ``"pca"``
        iterations and of the noise-floor refinement when ``X`` has missing
        entries, and of the rounds of the subspace refit, which :attr:`n_iter_`
        does not count).
    tol : float, default=1e-9
        DPCP-IRLS stops when the relative decrease of its objective is at most
        ``tol`` (without missing entries; with them, when the subspace settles,
        see Notes).
    n_jobs : int, default=None
        Number of joblib workers for Stage II, which runs on chunks of samples
        independently. ``None`` means 1 unless in a
        :obj:`joblib.parallel_config` context; ``-1`` uses all processors; 0 is refused.
    random_state : int, RandomState instance or None, default=None
        Seeds the search points of hard EM (``stage2="hard_em"``, and
        ``"auto"`` on densely permuted samples; for ``n_components`` other than
        3 and after the first round); every other option is deterministic.
    verbose : int, default=0
        0 silent; 1 one line per stage (Stage I, flagging, Stage II) with the
        elapsed seconds on the ``skpapers.unlabeled_pca`` logger; 2 also the
        Stage-I iterations (objective, why it stopped) and Stage-II chunks.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal basis (rows) of the estimated subspace.
    distances_ : ndarray of shape (n_samples,)
        Sine of the angle between each training sample and the subspace
        (observed entries only when there are missing entries; 0 for a zero
        sample).
    threshold_ : float
        Flagging threshold on the distances (with ``restore_samples="checked"``
        at least the largest leave-one-out distance of the unflagged samples,
        where that check runs: Notes).
    permuted_mask_ : ndarray of shape (n_samples,) of bool
        Training samples flagged as permuted: ``distances_ > threshold_``, or
        ``unexplained_ > sqrt(1/2)`` when :attr:`flagging_rule_` is
        ``"unexplained"``.
    flagging_rule_ : {"distance", "unexplained", "none"}
        The rule behind :attr:`permuted_mask_`. ``"none"``: nothing is flagged
        (:attr:`threshold_` is not applied, in training or in new samples) because, with
        ``restore_samples="checked"``, fewer than ``n_components + 2`` samples
        were left unflagged. ``"unexplained"`` where the
        distance threshold reached the distance of a random direction (the
        distance cannot flag) or most samples' residuals are largely explained
        by other samples (data only approximately of rank ``n_components``),
        with ``restore_samples`` other than ``"all"`` and samples that allow the
        leave-one-out rule: complete, ``n_components + 2 <= n_samples <= 100``
        and ``n_samples < n_features`` (Notes).
    unexplained_ : ndarray of shape (n_samples,) or None
        Statistic of the ``"unexplained"`` rule (None with ``"distance"``): a
        sample's distance to the span of the other samples over its distance to
        the subspace fitted without it, relative to that ratio for pure noise.
    flagging_warning_ : str or None
        The message of the :class:`~skpapers.exceptions.FlaggingWarning` that
        ``fit`` emitted when no flagging rule can tell partly permuted samples
        apart on the data (None otherwise): what
        :class:`~skpapers.decomposition.FlaggingDisplay` shows.
    mean_ : ndarray of shape (n_features,)
        Point of the affine subspace with ``fit_mean=True``; zeros otherwise.
    clean_distance_ : float or None
        Root mean square distance of the unflagged training samples to the
        subspace (samples it passes through left out; 0 when every unflagged
        sample lies on it, None when every sample is flagged): the noise level
        of the data. At most 0.1 (data close to rank ``n_components``),
        ``stage2="auto"`` tries hard EM on densely permuted samples and keeps
        a dense restoration whose sorted values fit within 3 times it.
    n_iter_ : int
        Number of Stage-I iterations (1 for ``"cop"`` and for ``"pca"`` without
        missing entries; on a subsample and then on all samples when there are
        many samples; with missing entries, those of the masked DPCP plus those
        of its noise-floor refinement and of the coherent restarts, see Notes).
    lsrf_tol_ : float or None
        The LSRF tolerance in use (``lsrf_tol`` resolved when it is ``"auto"``).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`, defined only when `X` has
        feature names that are all strings.

    See Also
    --------
    sklearn.decomposition.PCA : Principal component analysis, not robust to
        permuted samples.
    skpapers.datasets.make_permuted_subspace : The paper's corruption model.
    skpapers.metrics.principal_angle : Largest principal angle between subspaces.

    Notes
    -----
    Orientation: rows of ``X`` are the paper's columns (``n_features`` = paper
    ``m``, ``n_samples`` = paper ``n``); the subspace lives in feature space as in
    :class:`~sklearn.decomposition.PCA`. There is no centring (the model is a
    linear subspace). Stage I runs on unit-normalised copies of the samples;
    Stage II on the raw samples.

    Deviations from the paper and the authors' code:

    - ``restore_samples="checked"`` (the default) restores only flagged samples,
      and of them only those whose restoration clearly helps (next item);
      the paper's code restores every sample (``"all"``). The parameter is named
      ``restore_samples`` rather than ``restore`` because :meth:`restore` is the
      main method. Flagging is not in the paper. The ``n_components`` smallest
      distances are left out (when ``n_samples >= 3 n_components + 1``): an
      ``l_p`` fit with ``p < 1`` passes exactly through up to ``n_components``
      samples, whose distance (~1e-9) says nothing about the noise. On the rest,
      floored at 1e-12, the location ``s`` and spread ``t`` of ``log d`` are the
      median and 1.4826 x the median absolute deviation weighted by ``1 / d``
      (dominated by the samples near the subspace even when 90% are permuted);
      ``threshold_ = s * max(k, exp(k t))`` with ``k = outlier_threshold``. A
      sample as far from the subspace as a random direction (``d**2`` 3 standard
      deviations below the mean of ``Beta((m - r) / 2, r / 2)``) is always
      flagged, unless the typical clean sample is that far. The threshold is
      never below the ``(n_components + 1)``-th smallest distance. When the
      rule reaches the distance of a random direction (the clean samples are
      far from the subspace: data far from rank ``n_components``, or a failed
      Stage I), only samples that far can be flagged and partly permuted
      samples are left unchanged.
    - Second flagging rule (``flagging_rule_ = "unexplained"``; not in the
      paper): when the distance threshold reaches the distance of a random
      direction, or when most samples' residuals are largely explained by the
      other samples (the median of the statistic below, computed with the
      distances to the subspace fitted on all samples, is at most
      ``sqrt(1/2)``: a screen without the leave-one-out fits), and the samples
      are complete, fewer than the features and at
      most 100 (at least ``n_components + 2``), a sample is flagged when more
      than half of its squared distance to the subspace is unexplained by the
      other samples: ``unexplained_ > sqrt(1/2)``, where ``unexplained_`` is
      the sample's distance to the span of the other samples over its distance
      to the Stage-I subspace fitted without it (one Stage-I fit per sample, on
      ``n_samples x n_samples`` coordinates of the samples' span), divided by
      that ratio for pure noise, ``sqrt(1 - (n - 1 - r) / (m - r))``. Clean
      samples of data only approximately of rank ``n_components`` lie far from
      the subspace but close to the span of the other samples; a partly
      shuffled sample carries a component no other sample shares. On records
      with a fraction of the records shuffled in half of the attributes
      (breast cancer) or in the second exam (exam scores), 30% shuffled, it
      flags every shuffled attribute and 0-2 of the 15 clean breast-cancer
      attributes (none of the exam scores); with 10% shuffled, 67-73% of the
      shuffled breast-cancer attributes. Those it leaves are mostly attributes
      the shuffle moved less than their own distance to the subspace (up to
      0.94 when clean), where a restoration, a point of the subspace, would be
      worse than leaving them; of the others it flags about 97%. The clean
      attributes it flags are explained mostly by shuffled ones (concavity, next
      to the shuffled compactness and concave points). On the 64 Yale B faces (rank 4, 16
      images with 40% of their pixels shuffled) the screen selects it: it
      flags every shuffled image and 2-6 of the 48 clean ones, where the
      distance flagged 0-75% of the shuffled images; with the paper's patch
      shuffle (34 of 84 patches), 69-88% of them and 1-3 clean images (the
      distance: 12-69% and 1-13). Exactly low-rank data keep the distance
      rule (their clean residuals are pure noise, which the other samples do not
      explain: the fallback would flag every sample). The rule compares a
      sample with the others, so :meth:`restore` and :meth:`transform` apply
      it to the samples they are given (the distance rule when it does not
      apply to them, e.g. a single sample). With ``restore_samples="all"`` the
      rule is not run (``flagging_rule_ = "distance"``): the flags then only
      choose the samples that join the subspace refit below, so
      :attr:`components_` can differ from the default's. Where neither rule can flag,
      ``fit`` emits a :class:`~skpapers.exceptions.FlaggingWarning` (with
      ``restore_samples`` other than ``"all"``).
    - ``restore_samples="checked"`` (not in the paper): the default never
      silently makes data worse than leaving them. On tables only roughly of
      rank ``n_components`` (real tables outside the papers) the flags can
      select clean samples that the subspace explains poorly, and replacing
      them by a point of the subspace multiplies their error. Checks:
      (1) at the fit, when fewer than ``n_components + 2`` samples are left
      unflagged, the subspace does not explain a clean part of the data well
      enough to tell permuted entries from clean ones: nothing is flagged
      (:attr:`flagging_rule_` ``"none"``; :attr:`threshold_` keeps the Stage-I
      threshold, which then flags nothing, in training or in new samples) and a
      :class:`~skpapers.exceptions.FlaggingWarning` gives the measured
      distances. (1b) At the fit, with at most 100 unflagged samples
      (complete, distance rule): a flagged sample is held out of the fit it
      is measured against, an unflagged one is not, so the unflagged samples'
      distances understate how far a clean sample can lie (on small tables by
      far: the 3-dimensional fit through the 5 clean attributes of
      statsmodels' copper passes through 2 of them, which lie at 0.65 and 0.96
      from the subspace of the others). A sample stays flagged only when it is
      farther than every unflagged sample is from the top principal subspace
      of the other unflagged samples (leave-one-out; :attr:`threshold_` is
      raised to that distance), with a
      :class:`~skpapers.exceptions.FlaggingWarning` naming the samples this
      unflags. On copper, longley and modechoice (statsmodels; seeds 300-303)
      the worst instances went from 10-87 times worse than doing nothing to
      1.0; on the paper's settings it changes nothing but the sparse setting
      at rank 10 with half the entries shuffled (0.3705 to 0.3717, seeds
      0-2). It costs one eigendecomposition of a ``min(n_clean,
      n_features)``-square matrix per unflagged sample.
      (2) At restoration, a flagged sample ``y = x + delta`` (true
      values ``x``, moved by ``delta``) restored to ``x + eps`` has
      ``|y - restoration|**2 = |delta|**2 + |eps|**2`` when the errors are
      unrelated, and the restoration is kept only when the residual exceeds
      1.5 times ``|eps|`` estimated from the entries it fits (the lower
      quartile of the absolute residuals, robust to half of the entries
      moved): ``|delta| > 1.1 |eps|``. On complete samples the entries
      beyond 3 times that scale must also look like misplaced values: sorted,
      within half of their unsorted distance to the restored ones (a skewed
      attribute's extreme records, which the subspace cannot reach, fail it).
      And the entries it fits (within 3 times that scale) must hold at least
      0.55 times the sample's standard deviation: a permutation leaves a
      random subset of the values in place, while on a zero-inflated or
      heavily skewed clean attribute Stage II fits the mass of near-equal
      values and takes the tail for moved entries (statsmodels' star98 at
      rank 3: clean attributes at 0.43-0.50 were restored, up to 5.4 times
      worse than doing nothing; restorations that helped: 0.53 and more).
      A dense restoration of ``stage2="auto"`` (hard EM, for samples at least
      0.9 times as far from the subspace as a random direction, on data with
      :attr:`clean_distance_` at most 0.1) is kept when its sorted values fit
      within 3 times :attr:`clean_distance_`.
      (3) On data not close to rank ``n_components`` (:attr:`clean_distance_`
      above 0.05, or None), a held-out check of every other restoration:
      Stage II runs again on each half of the sample's entries (a fixed random
      split of the features), and the two restorations must differ by at most
      half the distance the restoration moves the sample. A partly permuted
      sample whose true values the subspace explains keeps a majority of
      unmoved entries in each half; a clean sample the subspace explains
      poorly does not, and each half fits other entries. On statsmodels'
      star98 (ranks 3 and 7, seeds 100-103) the instances more than 10% worse
      than doing nothing went from 17% to 4%, on elnino (rank 3) from 10% to
      none; the paper's records are unchanged (seeds 0-3). Close to rank
      ``n_components`` (the paper's synthetic settings, noise 0.01) the other
      checks suffice, and a half of 25 entries with 30% of them moved can
      break LSRF down. The two restorations also give a held-out size test:
      each entry predicted by the restoration of the other half, the move
      must exceed 1.5 times the error estimated from those predictions (as
      in (2)). Stage II chooses the entries it fits, which understates its
      error on a sample the subspace explains poorly: on statsmodels' elnino
      at rank 3 (seed 604) the restoration of the shuffled YEAR, a trend
      0.92 from the subspace of the months, passed (2) at 1.64 and fails
      this at 1.16, and made the table 1.31 times worse than doing nothing.
      It costs two more Stage-II runs on the kept samples.
      (4) Entries, not samples, on data not close to rank ``n_components``
      (:attr:`clean_distance_` above 0.05, as in (3)): a kept restoration
      replaces only the entries it finds moved, those beyond 3 times the
      sample's noise scale (the ones the misplaced-values test of (2) reads);
      the other entries are returned as given. The replaced entries take the
      sample's own values on them, reassigned in the order of the restoration
      (the ``k``-th smallest given value goes to the entry where the
      restoration is ``k``-th smallest): when they hold every moved entry,
      their true values are a permutation of the given ones, and the
      restoration only has to order them, where a restoration off by the
      subspace's misfit on an extreme record would put a value there that the
      sample never had (statsmodels' star98 at rank 3, seed 1913 of the
      real-table benchmark: 0.41 on a clean entry of 0.18, the table 1.12 times
      worse than doing nothing; 0.76 reordered). A sample restored this way
      is returned as a permutation of itself. On the 29 real tables of the
      benchmark, fresh seeds 1920-1927 (1738 instances), the instances more
      than 2% worse than doing nothing went from 1 (the malignant rows at rank
      5, 1.17) to none, the mean ratio from 0.968 to 0.965; 62 instances
      gained more than 0.01, 13 lost more than 0.01 (at most 0.06). A
      restoration is a point of the
      subspace, which explains even a clean sample only to about the distance
      of the clean samples: on an entry the permutation left in place the
      given value is exact and the restoration's is off by the subspace's
      misfit. When the true values lie farther from the subspace than the
      permutation moved them, replacing the whole sample is worse than
      leaving it whatever the restoration, and no estimate from the sample's
      own entries showed it (the checks above assume Gaussian residuals, and
      those of real tables are heavy-tailed): statsmodels' star98 at rank 3
      (seed 1104), a shuffled attribute 0.29 from the subspace, moved 0.20 by
      the shuffle, restored whole to 0.29 from its true values, the table
      1.15 times worse than doing nothing; its 14 entries found moved held 8
      of the 13 shuffled ones, and replacing only them leaves the table 1.02
      times worse. Over the 26 real tables of the benchmark, on fresh seeds
      1400-1407 (2126 instances), the instances more than 2% worse than doing
      nothing went from 7 to 1 and those more than 10% worse from 2 to 1
      (star98 at rank 3: 1.17 to 1.00); the mean ratio fell from 0.966 to
      0.959 (macrodata 0.53 to 0.45, the malignant breast-cancer rows at rank
      3 0.79 to 0.77), 24 instances lost part of their gain (up to 0.48 to
      0.59) and 160 gained. It does not help a clean sample that is flagged
      and restored: there the replaced entries are a clean tail (see (5)).
      Since at least a
      quarter of a sample's observed entries lie at or below the lower
      quartile of its residuals, at least that share is returned as given. A
      sample about as far from the subspace as a random direction (0.9 times
      its floor, the test that sends samples to hard EM) is densely permuted,
      where most moved entries stay within 3 noise scales, and is replaced
      whole: on the paper's breast-cancer records with 70% of the records of
      an attribute shuffled, replacing entries only was 0.157 against 0.067
      (seeds 0-2). It costs part of the gain with half of the records
      shuffled (0.070 against 0.060; exam scores 0.093 against 0.079) and
      gains with fewer (breast cancer, 10%: 0.030 against 0.050). Close to
      rank ``n_components`` (the paper's synthetic settings) the restoration
      also removes the noise of the entries left in place, and the whole
      sample is replaced. :meth:`transform` returns the Stage-II coefficients
      of a restored sample either way.
      (5) Under the leave-one-out rule (:attr:`flagging_rule_`
      ``"unexplained"``), each kept restoration's sample is measured again by
      that rule, as given, against the other samples as restored, and is
      returned as given when they explain it (statistic at most
      ``sqrt(1/2)``). A clean sample whose residual it shares with samples
      that were shuffled is explained by no other sample beside them, and by
      their restorations: on the malignant breast-cancer rows at rank 5 (seed
      1400, 9 of 30 attributes shuffled in 30% of the records) worst area,
      clean and of the largest raw scale, was flagged at 0.83 because worst
      radius and worst perimeter were shuffled, and its restoration passed
      (2)-(4) and replaced 8 of its 212 entries, 6.4 times worse than doing
      nothing; beside the restorations of the two it is at 0.57 and the
      table is 0.37 times the error of doing nothing. A shuffled sample keeps
      a component that no restoration of another sample shares (groups of
      three attributes sharing a residual, two of a group shuffled: the
      clean third at 0.02-0.05 beside the restored two, the shuffled ones
      unchanged at 0.75-1.03). On the 29 real tables of the benchmark, fresh
      seeds 1900-1907 (1761 instances), it changes four instances: two lose
      part of their gain (the malignant rows with 9 attributes shuffled in
      10% of the records, seed 1904: 0.64 to 0.94 at rank 3, 0.69 to 0.94 at
      rank 5), two change by under 1e-5; the worst instance stays statsmodels'
      elnino at rank 3 (seed 1900, 1.14 times worse than doing nothing). It
      costs one leave-one-out Stage-I fit per kept restoration;
      :attr:`permuted_mask_` still shows the sample.
      (6) Under the same rule, before (5), a held-out check of each kept
      restoration: Stage I runs again without the sample, and Stage II with
      checks (2)-(4) on that subspace must keep a restoration of it too;
      otherwise the sample is returned as given. With so few samples a clean
      sample that the subspace explains poorly pulls the fit towards itself,
      and on a subspace that half-fits it the tail of its residual passes for
      a few moved entries: on scikit-learn's digits at rank 21 (the 61
      non-constant pixels as samples, one pixel shuffled in 5-30% of the
      records) a clean zero-inflated pixel was restored in 126-168 records,
      2.2-55 times worse than doing nothing (seeds 1801-1803 and 1807; the
      shuffled pixel is nearly constant), and on statsmodels' elnino at rank
      3 (seed 1900) a clean month, 1.14 times worse; on the subspace fitted
      without them their restorations fail the checks (the move 1.02-1.14
      times its own error, kept from 1.5, on seeds 1801, 1803 and 1900), and
      the tables are returned as given. On the 29 real
      tables of the benchmark, fresh seeds 1910-1917 (1755 instances), it
      fixed two of the three instances more than 2% worse than doing nothing
      (digits at rank 21, seed 1913, six pixels shuffled in 5% of the
      records, 1.26 to 1.00; the malignant breast-cancer rows at rank 5, seed
      1914, 1.03 to 1.00; the third, star98 at rank 3, seed 1913, 1.12, is a
      shuffled attribute restored farther from its true values than the
      shuffle moved it, see (4)), and it costs gains where a shuffled
      sample's restoration fails a check on the subspace fitted without it
      (on tables this small that subspace is less accurate, and the entries a
      restoration finds moved, or how they sort, change with it): 26
      instances lost part or all of their gain (15 on the malignant rows, 7
      on elnino; the largest, macrodata at rank 3 with one attribute shuffled
      in 30% of the records, 0.09 to 1.0), and the mean ratio went from 0.954
      to 0.960. Testing only the size again keeps most of those gains but
      restores the clean pixels again (digits, seeds 1802 and 1913). It costs
      one more Stage-I fit (in the ``n``-dimensional span of the samples) and
      one run of Stage II with its checks per kept restoration.
      When every flagged sample fails, :meth:`restore` warns
      (:class:`~skpapers.exceptions.FlaggingWarning`). ``"flagged"`` restores
      every flagged sample (the previous default). See the user guide for the
      real tables and the paper's records.
    - Subspace refit from restored samples with missing entries (not in the
      paper): Stage I leaves every flagged sample out, and with missing
      entries the unflagged samples alone can leave the subspace a few
      degrees off. On data close to rank ``n_components``
      (:attr:`clean_distance_` at most 0.1) ``fit`` restores the flagged
      samples (Stage II as :meth:`restore`, without its checks), puts each
      sample's observed values in the order of its restoration (the
      permutation it implies), and the samples whose values so ordered match
      the restoration within 3 times :attr:`clean_distance_` join the
      unflagged samples in a PCA with missing entries; the samples that did
      not join are restored again on the refitted subspace, for at most 10
      rounds, until none joins or the subspace moves by at most 1e-6. On 300
      samples of a 5-dimensional subspace of ``R^50`` with half of the
      entries missing and the observed entries of 270 samples shuffled
      (seeds 1720-1727, not used to design it), 95.2% of the shuffled samples
      were restored on average, worst seed 62.6% with Stage I 3.2 degrees
      off; with the refit 99.95%, worst seed 99.6% (0.15-0.54 degrees off),
      at 1.3-1.8 times the CPU time of ``fit_restore``. With 10 clean samples
      (``n_components`` 3, 30% missing) the same samples are restored and the
      subspace is 0.12-0.20 instead of 0.53-0.85 degrees off. It does not
      rescue a Stage I far off: at ``m = 200`` (seed 1854, 8.6 degrees off)
      53% are restored instead of 47%, and its 10 rounds cost about 140 s of
      CPU. Complete data are unchanged.
    - Subspace refit from partly shuffled samples (not in the paper; with an
      LSRF tolerance and complete samples): Stage I treats every flagged
      sample as an outlier, which discards the samples with only a few entries
      shuffled. LSRF fits each flagged sample; those with at most 20% of their
      entries beyond the LSRF tolerance join the unflagged
      samples, with those entries missing, in a PCA (``stage1="pca"``; EM for
      PCA with missing entries: they start at their LSRF fit and are refilled
      with their projection until the subspace moves by at most 1e-6), and
      :attr:`components_` is the refitted subspace; :attr:`distances_` and,
      under the distance rule, :attr:`permuted_mask_` follow it
      (:attr:`threshold_` stays the one set on the Stage-I distances: set anew
      on the refitted ones it can reach the distance of a random direction and
      unflag shuffled samples, as on the Yale B faces). With
      ``lsrf_tol=None`` (the paper's algorithm) or missing entries,
      :attr:`components_` is the Stage-I subspace. In the paper's
      synthetic setting (500 samples, 50 features, 90% of them with 10% of
      their entries shuffled, noise 0.01) the refit cuts the error of the
      restored samples by about 30% (``n_components`` 3 and 10: the subspace
      is 3 times closer to the truth, and the error within 8% of restoring on
      the true subspace); with 30% shuffled fewer samples join and the gain
      is 6% or less; at 1e5 samples the subspace is 7 times closer to the
      truth, the error almost unchanged, and ``fit`` takes about 1 s instead
      of 0.2 s (see the benchmarks). On the exam scores (the
      second exam shuffled, rank 3) Stage I fits the first exam, from which
      the second is far; with 10% of the records shuffled, restoring from the
      Stage-I subspace was worse than doing nothing (0.065 against 0.061), and
      from the refitted one it is better (0.047). Densely shuffled samples
      usually stay out; where the tolerance is wide against the spread of a
      sample's values (the exam scores), or where shuffled entries keep
      similar values (patches of a face image's background), some of them
      join with the entries that fit: on the Yale B faces 2-3 of the 16
      patch-shuffled images join, and the error on all 64 images rises by
      about 1% on seed 0 (0.181 to 0.184).
    - ``fit_mean`` (not in the paper, whose model is a linear subspace) and
      centring. Centring each feature over the samples (scikit-learn's
      :class:`~sklearn.decomposition.PCA`, a
      :class:`~sklearn.preprocessing.StandardScaler` in front) subtracts from
      each entry a mean computed over values that the permutations moved
      between features: a permuted sample of the centred data is not a
      permutation of the centred clean sample. The model ``x = mu + U c``
      with the permutation acting on ``x`` is fitted instead through its
      linear span: ``fit_mean=True`` runs the whole fit (Stage I, flagging,
      refit) with ``n_components + 1`` and splits the span into
      :attr:`mean_` and :attr:`components_`; :meth:`transform` returns the
      coordinates of the restored samples about :attr:`mean_` and
      :meth:`inverse_transform` adds it back. On samples ``mu + c U`` (200
      x 30, rank 3, half of them with 10% of their entries shuffled) it
      restores to 0.005-0.006 where the linear model does nothing (0.25-0.30);
      on the paper's synthetic setting (linear data, 90% of the samples
      permuted) it is worse, 0.09-0.10 against 0.004 with 10% of the entries
      shuffled (the extra dimension absorbs part of the permuted samples);
      on the exam and breast-cancer records it is between 0.56 and 1.27 times
      the linear fit's error (seeds 0-1) (see the user guide). ``fit``
      refuses X whose every feature has mean 0 to rounding (a centring
      scaler in front: exact zero means come only from centring after the
      shuffle, which no fit can undo) and warns
      (:class:`~skpapers.exceptions.FlaggingWarning`) when every feature has
      variance 1.
    - ``lsrf_tol="auto"`` (the default; early stop of LSRF at the noise level)
      is a project extension; ``lsrf_tol=None`` is the paper's algorithm, whose
      last fit uses ``n_components + 1`` entries. On the paper's synthetic
      setting (``n_features = 50``, ``n_components = 5``, 10% of the entries
      shuffled, noise 0.01) the default halves the error of the restored
      samples and restores 4-5 times faster; on the Yale B faces it lowers the
      error too (see the benchmarks). On data that is only approximately low
      rank with most of a sample's entries shuffled, the paper's rule can be
      slightly more accurate (exam scores with 70% of the values of an
      attribute shuffled, all attributes restored: 0.083 against 0.089).
      LSRF uses downdated normal equations, batched over chunks of samples
      (of at most 1e5 entries). At each step every running sample of a chunk
      deletes the ``q`` entries with the largest absolute residuals, ``q =
      max(1, floor(k / 100))`` with ``k`` the smallest number, over the
      chunk's running samples, of remaining entries minus ``n_components +
      1``; the paper deletes one per step. So ``q = 1`` (the paper's
      algorithm, whatever ``lsrf_tol``) once every running sample has at most
      ``n_components + 200`` entries left, in particular for samples of at
      most ``n_components + 200`` observed entries from the start; longer
      samples first drop about 1% of their remaining entries per step (images
      of tens of thousands of entries need a few hundred steps instead of one
      per entry), and with missing entries ``q`` depends on the other samples
      of the chunk. With ``lsrf_tol=None`` this batched variant differs from
      the authors' ``LSR.m`` on longer samples (an independent re-measurement
      found differences up to 0.146 on the 357 breast-cancer records).
    - Stage I with many more samples than features (at least four times
      ``max(2000, 100 n_features)`` complete samples, ``max_iter >= 3``):
      DPCP-IRLS first runs to convergence (at most ``max_iter - 1``
      iterations) on a fixed random subsample of ``max(2000, 100
      n_features)`` samples (seed 0, so the result is deterministic), then
      iterates on all samples from that basis until the subspace moves by less
      than 1e-6 (sine of the largest principal angle) or the objective
      converges; :attr:`n_iter_` counts the iterations of both phases. On 1e5
      samples of 50 features the subspace agrees with the full-data iterations
      to 4e-6 degrees, at a third of the cost.
    - ``"l1"`` solves least absolute deviations by IRLS, not by the authors'
      proximal subgradient method (same minimiser).
    - ``"hard_em"`` replaces the authors' algebraic initialisation (AIEM,
      which solves the polynomial system of the first ``r`` power sums
      ``sum_t (a_t . c)^k = sum_t y_t^k``) by a search: the first two power sums
      put ``c`` on an ``(r - 2)``-sphere (a circle for ``r = 3``); a round scores
      points of it by ``|sort(y) - sort(A c)|`` (360 angles for ``r = 3``,
      ``500 * 4**(r - 3)`` random points up to 20000 otherwise) and runs hard EM
      (sort and match, least squares; stop below 1e-4 relative improvement)
      from the 10 best local minima (20 best points for ``r > 3``). A sample
      stops once its error is at most ``clean_distance_ * |y|`` (it fits as
      well as a typical clean sample), or at most ``threshold_ * |y|`` and not
      lowered by one more round with fresh points (by more than hard EM's
      tolerance); the others get up to 8 rounds. A wrong basin can match the
      sorted values nearly as well as the true one: 1.9-2.8 times
      :attr:`clean_distance_`, where the true coefficients reached at most
      1.66 times it (one round on the dense setting, m = 50 and 200, r = 3-5,
      seeds 900-903), and stopping at the first solution under ``threshold_``
      (about 3 times :attr:`clean_distance_`) left such samples wrong. Rounds
      after the first also take the noise into the power sums: the first
      power sum of a noisy sample is off by the sum of its noise, about
      ``N(0, (clean_distance_ * |y|)**2)``, which moves the small sphere of an
      ill-conditioned sample far from its true coefficients (m = 200, r = 4:
      radius 0.21 against 0.35); each point of a later round draws its first
      power sum from that distribution. On the dense setting (seeds 800-807,
      10-25 inliers, m = 50 and 200, r = 3-5) this took the worst cell from
      98.8% to 100% restored, at 1.4-2.3 times the CPU time of ``fit_restore``.
      Memory is bounded by blocks of at most 2e6 entries.
    - ``"cop"`` keeps exactly ``n_components`` samples, as the authors' code.
    - Missing entries (NaN): Stage I is a masked DPCP-IRLS (or masked PCA) that
      refills each sample's missing entries from its least-squares fit on the
      observed rows at every iteration. Two project changes to the masked
      DPCP: with missing entries a sample constrains the subspace by fewer
      equations, so a subspace can pass exactly through about ``k = ceil(r (m
      - r) / (q - r))`` samples (``q`` observed entries per sample; ``k = r``
      for complete ones), and the weights of such fits decided the subspace
      (2-20 degrees off, or a wrong basin, on the paper's dense setting with
      30-50% of the entries missing, n = 300, 90% of the samples shuffled).
      (1) The IRLS weights are floored at the distance of the ``k + 1``-th
      closest sample, ``1 / max(d, d_(k+1))**(2 - p)``, and the iterations stop
      when the subspace moves by at most 1e-6 times that distance (the floored
      objective changes with its floor, so ``tol`` is not used there). (2) For
      ``p < 2`` a noise-floor refinement follows: the same iterations with the
      weights ``1 / max(d, s)**(2 - p)``, ``s`` the typical distance of the
      clean samples (recomputed each iteration), so that the clean samples
      weigh alike, as in a PCA of them. On that setting the subspace ends
      0.3-0.8 degrees off where the floored DPCP reaches the right basin,
      which it does not always do at m = 50, r = 4-5 with 50% missing: there
      the refilled missing entries let the shuffled samples fit a wrong
      subspace as closely as the clean ones fit the true one, and the DPCP
      objective cannot tell them apart. (3) So when the first fit does not
      pass near ``2k`` samples (its ``2k``-th distance above a tenth of the
      median one), Stage I restarts from the samples most coherent with each
      other (coherence pursuit, rescored six times against its own top set;
      start sets of ``2k``, ``5k / 2`` and ``3k`` samples), fits them by the
      masked DPCP, concentrates on the ``2k`` closest samples (least-trimmed-
      squares steps) and refines as in (2). A restart replaces the first fit
      only if its ``2k``-th distance is below half of the first fit's; of
      those that do, the one with the most samples within twice the best
      ``2k``-th distance is kept. The ``FlaggingWarning`` reports samples far
      from the subspace where every start fails.
      Stage II uses the observed entries only
      and fills the missing ones from the subspace. Its models are a sparse
      permutation and a dense one among the observed entries. The checks that
      tell moved entries from clean ones (misplaced values, spread) need
      complete samples, so with ``restore_samples="checked"`` (not in the
      paper) a restoration of an incomplete sample is kept only when it fits
      one of the two models: at least 20% of the observed entries beyond the
      ``n_components`` any restoration passes through within
      :attr:`lsrf_tol_`, or the sorted observed values within 3 times
      :attr:`clean_distance_` (as any correct restoration of a permutation of
      the observed entries does). The others are dropped: the sample is
      returned as given, its missing entries filled from the subspace, and a
      ``FlaggingWarning`` counts them when they are more than 10% of the
      restorations of incomplete samples. On fully shuffled samples with
      missing entries (``benchmarks/upca_missing.py``, seeds 1720-1727) the
      shuffled samples a restoration moved farther from their true values
      went from 29 (m = 50, r = 5, half the entries missing, one seed with
      the subspace 3.2 degrees off, not warned) and 1 (r = 3) to none in any
      cell, with the same samples restored; the restorations dropped also
      include wrong ones that land closer than the shuffled sample, so on
      that seed the shuffled samples' root-mean-square error (observed
      entries, relative) is 0.86 instead of 0.80 (1.40 as given), with the
      warning.
      Entries that go missing after a dense permutation (as
      ``make_permuted_subspace`` with ``missing_ratio > 0`` draws them) leave
      a subset of the sample's values at unrelated positions, which neither
      model describes: those restorations are all dropped, with the warning.
      ``"cop"`` needs complete samples (its coherence scores use inner
      products of full samples) and
      raises on NaN. The projected DPCP is only used without missing entries.
      Each sample needs at least ``n_components + 1`` observed entries.

    References
    ----------
    .. [1] Y. Yao, L. Peng and M. C. Tsakiris, "Unlabeled Principal Component
       Analysis", NeurIPS 2021.
    .. [2] Y. Yao, L. Peng and M. C. Tsakiris, "Unlabeled Principal Component
       Analysis and Matrix Completion", JMLR 25, 2024.
    .. [3] M. C. Tsakiris and R. Vidal, "Dual Principal Component Pursuit",
       JMLR 19, 2018.

    Examples
    --------
    >>> from skpapers.datasets import make_permuted_subspace
    >>> from skpapers.decomposition import UnlabeledPCA
    >>> from skpapers.metrics import principal_angle, relative_restoration_error
    >>> X, X_true, components, permuted = make_permuted_subspace(
    ...     n_samples=200, n_features=30, n_components=2, outlier_ratio=0.5,
    ...     shuffled_ratio=0.1, noise=0.0, random_state=0)
    >>> upca = UnlabeledPCA(n_components=2)
    >>> X_restored = upca.fit_restore(X)
    >>> bool(principal_angle(upca.components_, components) < 1e-3)
    True
    >>> bool(relative_restoration_error(X_true, X_restored) < 1e-8)
    True
    """

    _parameter_constraints: dict = dict(PARAMETER_CONSTRAINTS)

    def __init__(
        self,
        n_components,
        *,
        stage1="dpcp",
        stage2="auto",
        p=0.5,
        restore_samples="checked",
        fit_mean=False,
        outlier_threshold=3.0,
        lsrf_tol="auto",
        max_iter=1000,
        tol=1e-9,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.stage1 = stage1
        self.stage2 = stage2
        self.p = p
        self.restore_samples = restore_samples
        self.fit_mean = fit_mean
        self.outlier_threshold = outlier_threshold
        self.lsrf_tol = lsrf_tol
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Estimate the subspace from all samples and flag the permuted ones.

        On a Dask array the fit is distributed: every round of Stage I, the
        flagging statistics and the subspace refit are one pass of per-block
        statistics and a tree reduction; :attr:`distances_` and
        :attr:`permuted_mask_` are then Dask arrays kept on the workers. It
        gives the in-memory fit to rounding and refuses what it does not
        implement (missing entries, ``stage1="cop"``, more features than
        samples; see the scaling guide).

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Samples whose entries may be permuted; NaN marks a missing entry.
        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted estimator.

        Raises
        ------
        ValueError
            When every feature of X has mean 0 to rounding: a centring scaler
            in front, which cannot be undone (Notes).

        Warns
        -----
        FlaggingWarning
            With ``restore_samples`` other than ``"all"``, when the samples are
            so far from the fitted subspace that the flagging threshold reaches
            the distance of a random direction and the fallback rule does not
            apply (partly permuted samples are then not flagged; see Notes);
            with ``"checked"``, when fewer than ``n_components + 2`` samples are
            left unflagged (nothing is flagged) or when flagged samples are no
            farther than the unflagged ones' leave-one-out distances (they are
            unflagged, Notes); when every feature
            has variance 1 to rounding (a scaler in front, Notes); with missing
            entries, when a feature is observed in fewer than ``n_components``
            of the unflagged samples (the subspace is not determined along it).
        """
        if is_dask_collection(X):  # one pass over the blocks per round (distributed.py)
            self.components_, result = distributed_unlabeled_pca(X, self.get_params())
            self.n_features_in_ = X.shape[1]
        else:
            X = validate_data(
                self, X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan"
            )
            self.components_, _, result = unlabeled_pca(X, restore=False, **self.get_params())
        self.distances_ = result.distances
        self.threshold_ = result.threshold
        self.permuted_mask_ = result.permuted_mask
        self.n_iter_ = result.n_iter
        self.lsrf_tol_ = result.lsrf_tol
        self.flagging_rule_ = result.flagging_rule
        self.unexplained_ = result.unexplained
        self.flagging_warning_ = result.flagging_warning
        self.clean_distance_ = result.clean_distance
        self.mean_ = np.zeros(self.n_features_in_) if result.mean is None else result.mean
        self._n_features_out = self.n_components
        return self

    def _coefficients(self, X, flags=None):
        """Coefficients of every sample, the samples sent to Stage II, the mask.

        ``flags``: the samples to restore when they are known (the training
        samples in :meth:`fit_restore`); otherwise the fitted rule decides.
        """
        if flags is None and self.flagging_rule_ == "none":
            flags = np.zeros(X.shape[0], dtype=bool)
        elif flags is None and self.flagging_rule_ == "unexplained":
            flags = unexplained_flags(
                X, self._basis().shape[0], stage1=self.stage1, p=self.p, max_iter=self.max_iter,
                tol=self.tol,
            )  # fmt: skip
        return coefficients(
            X,
            self._basis(),
            self.threshold_,
            stage2=self.stage2,
            restore_samples=self.restore_samples,
            lsrf_tol=self.lsrf_tol_,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
            verbose=self.verbose,
            flags=flags,
            clean_distance=self.clean_distance_,
            loo=loo_settings(self.stage1, self.p, self.max_iter, self.tol)
            if self.flagging_rule_ == "unexplained"
            else None,
        )

    def _basis(self):
        """Rows spanning the subspace Stage II fits: the affine subspace's span."""
        return stage2_basis(self.components_, self.mean_)

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(
            self, X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan", reset=False
        )

    def transform(self, X):
        """Coefficients of the samples after undoing their permutations.

        Samples flagged with :attr:`threshold_` (all of them with
        ``restore_samples="all"``) go through Stage II; the others are
        projected (least squares on their observed entries).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples; NaN marks a missing entry.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Coefficients ``c_j`` in the basis :attr:`components_` (with
            ``fit_mean=True``, of the restored samples minus :attr:`mean_`).
        """
        X = self._check_X(X)
        C, _, _ = self._coefficients(X)
        if self.mean_.any():  # coordinates of the restored samples about mean_
            C = (C @ self._basis() - self.mean_) @ self.components_.T
        return C.astype(X.dtype, copy=False)

    def _dask_dtype(self, X):
        self._check_blockwise()
        dtype = getattr(X, "dtype", None)  # a Dask DataFrame has dtypes
        return dtype if dtype in (np.float32, np.float64) else np.float64

    def _check_blockwise(self):
        check_is_fitted(self)
        if self.flagging_rule_ == "unexplained":
            raise ValueError(
                "UnlabeledPCA fitted with flagging_rule_='unexplained' compares each sample "
                "with the other samples it is given, which a Dask array's blocks cannot "
                "do; restore such data in memory."
            )

    def inverse_transform(self, X):
        """Map coefficients back to feature space, in the true feature order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Coefficients, e.g. from :meth:`transform`.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_ + mean_``.
        """
        if is_dask_collection(X):
            return map_rows(self.inverse_transform, X, dtype=self._dask_dtype(X),
                            width=self.n_features_in_, n_features=self.n_components)  # fmt: skip
        check_is_fitted(self)
        X = check_array(X, dtype=[np.float64, np.float32])
        if X.shape[1] != self.components_.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} columns but {type(self).__name__} has "
                f"n_components = {self.components_.shape[0]}."
            )
        out = X @ self.components_.astype(X.dtype, copy=False)
        return out + self.mean_.astype(X.dtype) if self.mean_.any() else out

    def restore(self, X):
        """Undo the permutations of the flagged samples and fill missing entries.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples; NaN marks a missing entry.

        Returns
        -------
        X_restored : ndarray or DataFrame of shape (n_samples, n_features)
            Flagged samples (all, with ``restore_samples="all"``) replaced by
            their Stage-II reconstruction ``c_j @ components_`` (with
            ``restore_samples="checked"`` on data not close to rank
            ``n_components``, only the entries it finds moved; Notes); the other
            samples unchanged, except that their missing entries are filled by
            projection.
            A DataFrame with the input's columns and index under
            ``set_output(transform="pandas")``.
        """
        if is_dask_collection(X):
            dtype, m, columns = self._dask_dtype(X), self.n_features_in_, self._restored_columns()
            return map_rows(self.restore, X, dtype=dtype, width=m, columns=columns, n_features=m)
        return self._restore(X)

    def _restored_columns(self):
        """Column names of :meth:`restore` on a Dask array under pandas output, else None."""
        if not wants_pandas(self):
            return None
        return getattr(self, "feature_names_in_", list(range(self.n_features_in_)))

    def _restore(self, X, flags=None):
        X_in = X
        X = self._check_X(X)
        C, replaced, M = self._coefficients(X, flags)
        out = restored(X, C, replaced, M, self._basis()).astype(X.dtype, copy=False)
        return self._wrap_restored(out, X_in)

    def _wrap_restored(self, out, X_in):
        """Return a DataFrame like the input under ``set_output(transform="pandas")``."""
        config = getattr(self, "_sklearn_output_config", {}).get("transform", "default")
        if config != "pandas":
            return out
        import pandas as pd

        columns = getattr(X_in, "columns", None)
        if columns is None and hasattr(self, "feature_names_in_"):
            columns = self.feature_names_in_
        return pd.DataFrame(out, columns=columns, index=getattr(X_in, "index", None))

    def fit_restore(self, X, y=None):
        """Fit the subspace on ``X`` and restore ``X``.

        Stage I (and the leave-one-out flagging rule) runs once; equivalent to
        ``fit(X).restore(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples; NaN marks a missing entry.
        y : None
            Ignored.

        Returns
        -------
        X_restored : ndarray of shape (n_samples, n_features)
            See :meth:`restore`.
        """
        self.fit(X)
        # the training flags: the leave-one-out rule is not run a second time
        flags = self.permuted_mask_ if self.flagging_rule_ == "unexplained" else None
        return self._restore(X, flags)

    def score(self, X, y=None):
        """Permutation-invariant goodness of fit (higher is better, 0 is perfect).

        ``-mean_j |sort(x_j) - sort(x_hat_j)|**2 / |x_j|**2`` with ``x_hat``
        the Stage-II fit of each sample (``inverse_transform(transform(X))``
        with ``fit_mean=False``), over the observed entries. No labels
        are needed: a permuted sample is compared through its sorted values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples; NaN marks a missing entry.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Minus the mean relative squared error between sorted entries.
        """
        if is_dask_collection(X):  # a mean over blocks: nothing gathered
            self._check_blockwise()
            errors = map_rows(self._relative_errors, X, n_features=self.n_features_in_)
            return float(-errors.mean().compute())
        return float(-np.mean(self._relative_errors(X)))

    def _relative_errors(self, X):
        """Each sample's relative squared error between sorted entries (:meth:`score`)."""
        X = self._check_X(X)
        C, _, M = self._coefficients(X)
        X = np.asarray(X, dtype=np.float64)
        X_hat = C @ self._basis().astype(np.float64)
        observed = np.ones(X.shape, dtype=bool) if M is None else M
        a = np.sort(np.where(observed, X, np.inf), axis=1)
        b = np.sort(np.where(observed, X_hat, np.inf), axis=1)
        valid = np.arange(X.shape[1])[None, :] < observed.sum(axis=1)[:, None]
        # each sample in units of its largest entry: squares do not overflow
        unit = np.max(np.abs(np.where(observed, X, 0.0)), axis=1, keepdims=True)
        unit[~(unit > 0)] = 1.0
        err = np.sum(np.where(valid, a / unit - b / unit, 0.0) ** 2, axis=1)
        norms = np.sum(np.where(observed, X / unit, 0.0) ** 2, axis=1)
        return err / np.maximum(norms, np.finfo(np.float64).tiny)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
