# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Memory budget checked before a dense array is allocated, one convention for all.

Every estimator or function that may form a dense n x n or n x m array takes a
``max_dense_entries`` parameter (an int: the largest number of entries of one
such array) and calls :func:`check_dense_budget` before allocating, so a fit
that would not fit in memory fails at once with the size needed and the ways
out, instead of a raw ``MemoryError`` or the machine swapping.
"""

import numbers

__all__ = [
    "DEFAULT_MAX_DENSE_ENTRIES",
    "GENERATED_MAX_ENTRIES",
    "check_dense_budget",
    "check_generated_size",
]

DEFAULT_MAX_DENSE_ENTRIES = 25_000_000  # 200 MB in float64
# Data generators return what was asked for; the budget only stops a typo such
# as n_samples=10**9 before it allocates (2 GB of float64 per array).
GENERATED_MAX_ENTRIES = 250_000_000


def check_dense_budget(n_entries, max_dense_entries, what, ways_out="", itemsize=8):
    """Raise a ValueError if an array of ``n_entries`` exceeds the budget.

    Parameters
    ----------
    n_entries : int
        Entries of the array about to be allocated.
    max_dense_entries : int or None
        The budget; None means no limit.
    what : str
        What the array is, e.g. ``"the 2000 x 2000 cost matrix"``.
    ways_out : str, default=""
        What the user can do instead (a sentence), appended to the message.
    itemsize : int, default=8
        Bytes per entry, for the size in the message.

    Examples
    --------
    >>> check_dense_budget(100, 1_000, "a small matrix")
    >>> check_dense_budget(10**10, 10**6, "the 1e5 x 1e5 plan", "Use the factors.")
    Traceback (most recent call last):
    ...
    ValueError: the 1e5 x 1e5 plan needs 10000000000 entries (80.0 GB), above max_dense_entries=1000000. Use the factors.
    """  # noqa: E501
    if max_dense_entries is None:
        return
    if not isinstance(max_dense_entries, numbers.Integral) or max_dense_entries < 1:
        raise ValueError(f"max_dense_entries must be a positive int; got {max_dense_entries!r}.")
    if n_entries > max_dense_entries:
        size = n_entries * itemsize / 1e9
        message = (
            f"{what} needs {n_entries} entries ({size:.1f} GB), above "
            f"max_dense_entries={max_dense_entries}."
        )
        raise ValueError(f"{message} {ways_out}".strip())


def check_generated_size(shapes, max_dense_entries):
    """Refuse a data generator's request whose largest array exceeds the budget.

    Parameters
    ----------
    shapes : tuple of int or list of tuple of int
        Shape of every array the generator allocates (the largest counts).
    max_dense_entries : int or None
        The generator's budget; None means no limit.

    Examples
    --------
    >>> check_generated_size([(1000, 20), (20, 20)], 10**6)
    >>> check_generated_size((10**9, 20), 250_000_000)
    Traceback (most recent call last):
    ...
    ValueError: a 1000000000 x 20 array needs 20000000000 entries (160.0 GB), above max_dense_entries=250000000. Generate fewer samples or features, or raise max_dense_entries (None: no limit).
    """  # noqa: E501
    if shapes and isinstance(shapes[0], numbers.Integral):
        shapes = [shapes]
    rows, cols = max(shapes, key=lambda shape: int(shape[0]) * int(shape[1]))
    check_dense_budget(
        int(rows) * int(cols),
        max_dense_entries,
        f"a {int(rows)} x {int(cols)} array",
        "Generate fewer samples or features, or raise max_dense_entries (None: no limit).",
    )
