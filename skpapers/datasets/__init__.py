# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Data set loaders (real files read from a path) and synthetic generators."""

from skpapers.datasets._fair import stratified_subsample
from skpapers.datasets._loaders import (
    load_adult,
    load_bank,
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
)
from skpapers.datasets._sim import make_contaminated_sim
from skpapers.datasets._transport import (
    make_fragmented_hypercube,
    make_moons_to_gaussians,
    make_sbm_cost,
    make_shifted_gaussians,
)
from skpapers.datasets._upca import make_permuted_subspace, normalize_records, permute_records

__all__ = [
    "load_adult",
    "load_bank",
    "load_breast_cancer_benign",
    "load_exam_scores",
    "load_yaleb_faces",
    "make_contaminated_sim",
    "make_fragmented_hypercube",
    "make_moons_to_gaussians",
    "make_permuted_subspace",
    "make_sbm_cost",
    "make_shifted_gaussians",
    "normalize_records",
    "permute_records",
    "stratified_subsample",
]
