"""Variance components: how much of a score's variance is data noise, how
much run noise.

``components`` (:func:`icc`: one-way random-effects ANOVA from 0/1 rows or
counts, per group and for a paired difference: sigma2_B, sigma2_W, rho).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.variance.components import icc

__all__ = ["icc"]
