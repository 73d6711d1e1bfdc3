# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Placeholder: replaced by the method's implementation."""



def make_fragmented_hypercube(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def make_moons_to_gaussians(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def make_sbm_cost(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def make_shifted_gaussians(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
