# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one module importing scikit-learn's private names.

Parameter validation (``Interval``, ``StrOptions``, ...), the ``fit`` decorator
``_fit_context``, ``_check_sample_weight`` and the test-id helper
``_get_check_estimator_ids`` are private in scikit-learn; every
skpapers module (and the plugin template) imports them from here, so that a
move in scikit-learn means editing this file only.
"""

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils.estimator_checks import _get_check_estimator_ids
from sklearn.utils.validation import _check_sample_weight


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval``, except that an integer interval refuses booleans.

    ``True`` is an ``Integral`` in Python, so ``Interval(Integral, 1, None)``
    of scikit-learn accepts ``n_init=True`` as 1; a boolean where a count
    belongs is a mistake, and is refused with the usual parameter error.
    """

    def is_satisfied_by(self, val):
        if self.type is Integral and isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "StrOptions",
    "_check_sample_weight",
    "_get_check_estimator_ids",
    "_fit_context",
    "validate_params",
]
