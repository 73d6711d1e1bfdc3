# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sections of ``python -m skpapers demo``, one module per built-in method.

Each module defines ``TITLE``, ``PROBLEM`` (one sentence: what the method is
for), ``CODE`` (the few lines of public API that do the work; the demo runs
exactly these lines) and ``run()``, which prepares the data, executes ``CODE``
and returns a :class:`Report`. Every section runs in seconds on generated data
(no files, no network) and uses only the public API.
"""

import textwrap
import warnings
from dataclasses import dataclass, field

SECTIONS = ("upca", "fair_hierarchical", "transport_clustering", "robust_sim")


@dataclass
class Report:
    """What one demo section tells the user.

    Attributes
    ----------
    data : str
        The data the method was given.
    did : str
        What the method did with it.
    results : list of str
        Headline results, each next to the naive alternative.
    plot : callable or None
        ``plot(fig)`` draws the section's figure on a matplotlib figure.
    warnings : list of str
        Warnings raised by the section's ``CODE`` (not by the comparisons).
    """

    data: str
    did: str
    results: list = field(default_factory=list)
    plot: object = None
    warnings: list = field(default_factory=list)


def execute(code, namespace=None):
    """Run a section's ``CODE``; return the names it defined and its warnings.

    The warnings are recorded (every occurrence, as text) so that the demo can
    show them next to the code that raised them.
    """
    namespace = {} if namespace is None else dict(namespace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(textwrap.dedent(code), "<demo>", "exec"), namespace)  # noqa: S102
    raised = []
    for warning in caught:
        text = f"{warning.category.__name__}: {warning.message}"
        if text not in raised:
            raised.append(text)
    return namespace, raised
