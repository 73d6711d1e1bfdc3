# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utilities shared by the skpapers estimators."""
