# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scale-free arithmetic: powers of two that bring data to unit size exactly."""

import numpy as np

__all__ = ["unit_exponent"]


def unit_exponent(*arrays, axis=None):
    """Exponent ``e`` with ``max |A| / 2**e`` in [0.5, 1) over all ``arrays``.

    Dividing by ``2**e`` (``np.ldexp(A, -e)``) is exact in floating point, so
    a computation run on the rescaled data and scaled back does not depend on
    the units of the data. ``axis`` gives one exponent per column (``axis=0``);
    the exponent of an all-zero array (or column) is 0. ``None`` entries of
    ``arrays`` are skipped.

    Examples
    --------
    >>> import numpy as np
    >>> unit_exponent(np.array([[3.0, -0.25]]))
    2
    >>> unit_exponent(np.array([[3.0, 0.0], [1.0, 0.0]]), axis=0)
    array([2, 0])
    """
    largest = np.max(
        [np.max(np.abs(A), axis=axis, initial=0.0) for A in arrays if A is not None], axis=0
    )
    exponent = np.frexp(largest)[1]
    return int(exponent) if np.ndim(exponent) == 0 else exponent.astype(np.intp)
