"""Exact Bayesian intervals for small N (Bowyer, Aitchison & Ivanova 2025).

``interval`` (:func:`bayes_ci`: the hierarchical beta-binomial posterior),
``gap`` (:func:`bayes_compare`: the paired gap of two systems), ``args``
(the hyperprior :class:`BetaBinomialPrior` and argument checks) and
``grid`` (the deterministic quadrature over the hyperparameters).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.bayes.args import BetaBinomialPrior
from evalci.methods.bayes.gap import BayesComparison, bayes_compare
from evalci.methods.bayes.interval import BayesResult, bayes_ci, posterior

__all__ = [
    "BayesComparison",
    "BayesResult",
    "BetaBinomialPrior",
    "bayes_ci",
    "bayes_compare",
    "posterior",
]
