"""Statistical methods built on the engine, one subpackage a family.

================  ==============================================================
``compare``       paired gaps from shared draws, seed 002's decision rule,
                  p-values and Holm, the fewest inputs that flip a decision
``analytic``      closed-form intervals (CLT, Wilson, Clopper-Pearson, kappa),
                  McNemar's test, run-level intervals
``bayes``         Bayesian intervals for small N and their paired gap
``variance``      variance components and the intraclass correlation
``planning``      N-vs-k plans, widths against k, sample size, power, MDE
``ranks``         leaderboards: rank intervals, tie groups, max-t, step-down
``preference``    pairwise preferences: Bradley-Terry and Davidson leaderboards
``judge``         judge scores corrected by gold labels (PPI++, Rogan-Gladen)
``suites``        suite scores over tasks (micro/macro, fixed or sampled tasks)
``testing``       release gates and sequential tests for users' own tests
================  ==============================================================

A family may import ``evalci._base``, ``evalci.metrics`` and
``evalci.engine``, its own modules, and another family only through the
names that family's ``__init__`` lists in ``__all__``. The families form no
circle (``tests/house/test_layers.py`` checks both). None of them knows that Dask
exists: Dask DataFrames enter through :mod:`evalci.frames`.
"""
