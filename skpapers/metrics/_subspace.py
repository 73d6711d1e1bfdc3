# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Placeholder: replaced by the method's implementation."""



def principal_angle(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def relative_restoration_error(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
