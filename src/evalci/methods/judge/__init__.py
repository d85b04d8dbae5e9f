"""Scores from an LLM judge corrected by gold labels on a subset of inputs.

An LLM judge scores every row (input x run); humans label the rows of a
random subset of inputs. The judge alone is biased by its errors; the gold
labels alone are few. Two estimators combine them, each with an interval over
**inputs** (clusters), k runs per input allowed:

* :func:`ppi_mean` -- prediction-powered inference for a mean, with the
  power-tuned weight of PPI++ (Angelopoulos, Duchi & Zrnic 2023). Any judge
  score (0/1, a grade, a probability); no model of the judge's errors.
* :func:`ppi_compare` -- PPI++ for the gap between two systems judged on
  the same inputs with shared gold labels (one weight tuned for the gap).
* :func:`ppi_preference` -- prediction-powered Bradley-Terry ratings and
  rank sets (Chatzi et al. 2024): a judge's verdicts on every battle
  corrected by human verdicts on a subset, PPI++ for the M-estimator,
  clustered by prompt, with simultaneous rank sets.
* :func:`rogan_gladen` -- the Rogan & Gladen (1978) correction of a 0/1
  judge's positive rate by its sensitivity and specificity, known or
  estimated on the gold subset. Assumes the judge's error rates are the same
  on every input (non-differential misclassification).

How rows become inputs (both estimators). Rows sharing the ``cluster`` key
(within a ``by`` group) are one input. An input is *labeled* if any of its
rows has ``gold``; the others are *unlabeled*. Gold is paired with the judge
row by row: a labeled input contributes ``Y_i``, the mean of its gold
values, and ``f_i``, the judge's mean over **the same rows**; an unlabeled
input contributes the judge's mean over all its rows. So gold per run goes
on the rows of the runs that were graded, and gold per input (one human
label for the input, several judge runs) goes on every row of the input
(``df.merge(labels, on="input_id")``), so that all its judge runs pair with
it. The labeled inputs must be a random sample of the inputs (missing
completely at random); the estimands are input-weighted means (each input
counts equally, as ``weight="input"`` in :func:`evalci.analytic_ci`).

Variances are the plug-in (``ddof=0``) ones of the reference implementation
``ppi_py`` and of Greenland (1988), computed from per-input means (or
per-input sums for the ratios), so they are cluster-robust; at k=1 they are
those published formulas exactly. The bootstrap resamples labeled and
unlabeled inputs independently (a stratified cluster bootstrap), with
count weights, and recomputes the whole estimator (PPI++'s weight too).

Both PPI functions take ``strata=`` (stratified PPI, combined by known
population shares) and ``label_prob=`` (inverse-probability weighting for
non-uniform or active labelling), and report an ``effective_n``.

Modules: ``ppi`` (:func:`ppi_mean`), ``ppi_gap`` (:func:`ppi_compare`), ``ppi_rank``
(:func:`ppi_preference`), ``rank_sets`` (its result and rank sets),
``design`` (strata, inclusion probabilities), ``misclassification``
(:func:`rogan_gladen`), ``inputs`` (rows to inputs) and ``intervals``
(result base, bootstrap). The public home is :mod:`evalci.judge`.

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``; the
family ``preference``.
"""

from evalci.methods.judge.misclassification import (
    RG_METHODS,
    RoganGladenResult,
    rogan_gladen,
)
from evalci.methods.judge.ppi import (
    PPI_METHODS,
    PPIResult,
    ppi_mean,
)
from evalci.methods.judge.ppi_gap import (
    PPICompareResult,
    ppi_compare,
)
from evalci.methods.judge.ppi_rank import (
    RANK_METHODS,
    PPIRankResult,
    ppi_preference,
)

__all__ = [
    "PPI_METHODS",
    "RG_METHODS",
    "PPICompareResult",
    "PPIRankResult",
    "PPIResult",
    "RANK_METHODS",
    "RoganGladenResult",
    "ppi_compare",
    "ppi_mean",
    "ppi_preference",
    "rogan_gladen",
]
