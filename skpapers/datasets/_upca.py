# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Placeholder: replaced by the method's implementation."""



def make_permuted_subspace(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
