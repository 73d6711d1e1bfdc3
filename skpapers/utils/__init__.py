# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utilities for estimator authors.

scikit-learn's parameter-validation vocabulary and its ``fit`` decorator are
private names of scikit-learn; skpapers re-exports them here so that a plugin
depends on one stable import (see ``docs/extension_templates``).

- :class:`Interval`, :class:`StrOptions`, :class:`Options`, :class:`HasMethods`,
  :class:`Hidden`: constraint types for ``_parameter_constraints``.
- :func:`fit_context`: decorator of ``fit`` that validates the parameters
  (``prefer_skip_nested_validation=True`` for an estimator that takes no
  estimator as a parameter).
- :func:`validate_params`: the same validation for a public function.
- :func:`sample_rows`: rows drawn without replacement from an in-memory or
  Dask array (fit on a sample, assign at scale; see the scaling guide).
"""

from skpapers.utils._dask import sample_rows
from skpapers.utils._sklearn import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from skpapers.utils._sklearn import _fit_context as fit_context

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "StrOptions",
    "fit_context",
    "sample_rows",
    "validate_params",
]
