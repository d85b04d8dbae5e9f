"""Seed 000's published coverage tables, and the comparison with them as text.

:data:`PAPER` holds every cell of the paper's accuracy and kappa tables,
:data:`PAPER_NOISE` the cells docs/paper-notes.md finds the paper itself off by
Monte-Carlo noise; :func:`format_paper` prints the comparison that
:func:`evalci.simulate.coverage.reproduce_paper` builds.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["PAPER", "PAPER_NOISE", "format_paper"]

#: Seed 000's tables: (metric, strategy, method, N, k) -> (coverage %, width).
#: "normal" rows of the kappa tables are the Fleiss-Cohen-Everitt interval
#: (``method="clt"`` with k = 1); "Cluster BCa" is ``method="bca"``.
PAPER = {}


def _paper_rows(metric, n, k, rows):
    for (strategy, method), cov, width in rows:
        PAPER[(metric, strategy, method, n, k)] = (cov, width)


_IID, _CLU = ("iid", "percentile"), ("cluster", "percentile")
_BCA, _FCE = ("cluster", "bca"), ("iid", "clt")
_SD, _HI, _MO = (
    ("single_draw", "percentile"),
    ("hierarchical", "percentile"),
    ("mode_aggregate", "percentile"),
)
for _n, _iid, _s5, _c5, _h5, _m5 in (
    (100, (95.2, 0.1776), (100.0, 0.1788), (94.8, 0.0835), (99.0, 0.1096), (0.4, 0.1255)),
    (200, (96.0, 0.1266), (100.0, 0.1267), (95.2, 0.0592), (98.9, 0.0776), (0.0, 0.0893)),
    (400, (95.2, 0.0895), (100.0, 0.0897), (95.8, 0.0420), (99.3, 0.0550), (0.0, 0.0637)),
):  # fmt: skip
    _paper_rows("accuracy", _n, 1, [(_IID, *_iid)])
    _paper_rows(
        "accuracy", _n, 5, [(_SD, *_s5), (_CLU, *_c5), (_HI, *_h5), (_MO, *_m5)]
    )
for _k, _rows in (
    (2, [(_SD, 99.6, 0.1267), (_CLU, 95.0, 0.0904), (_HI, 98.7, 0.1101), (_MO, 95.3, 0.1264)]),
    (3, [(_SD, 100.0, 0.1267), (_CLU, 94.8, 0.0749), (_HI, 98.7, 0.0954), (_MO, 6.7, 0.1085)]),
):  # fmt: skip
    _paper_rows("accuracy", 200, _k, _rows)
for _n, _iid, _fce, _s5, _c5, _b5, _h5, _m5 in (
    (100, (94.9, 0.2400), (94.6, 0.2396), (100.0, 0.2421), (93.9, 0.1133), (94.2, 0.1130), (98.8, 0.1484), (0.5, 0.1715)),
    (200, (94.9, 0.1702), (95.0, 0.1702), (100.0, 0.1707), (94.3, 0.0799), (94.8, 0.0797), (98.7, 0.1045), (0.0, 0.1211)),
    (400, (94.5, 0.1203), (94.4, 0.1204), (100.0, 0.1206), (95.4, 0.0565), (95.6, 0.0565), (99.1, 0.0739), (0.0, 0.0860)),
):  # fmt: skip
    _paper_rows("kappa", _n, 1, [(_IID, *_iid), (_FCE, *_fce)])
    _paper_rows("kappa", _n, 5, [(_SD, *_s5), (_CLU, *_c5), (_BCA, *_b5), (_HI, *_h5), (_MO, *_m5)])  # fmt: skip
for _k, _rows in (
    (2, [(_SD, 99.5, 0.1706), (_CLU, 94.5, 0.1218), (_BCA, 94.7, 0.1217), (_HI, 98.5, 0.1482), (_MO, 94.3, 0.1701)]),
    (3, [(_SD, 100.0, 0.1707), (_CLU, 94.1, 0.1008), (_BCA, 94.4, 0.1007), (_HI, 98.5, 0.1285), (_MO, 6.6, 0.1465)]),
):  # fmt: skip
    _paper_rows("kappa", 200, _k, _rows)

#: Cells docs/paper-notes.md finds the paper itself off by Monte-Carlo noise.
PAPER_NOISE = {
    ("accuracy", "mode_aggregate", "percentile", 200, 3): "exact 5.25%",
    ("kappa", "mode_aggregate", "percentile", 200, 3): "about 5.6%",
    ("accuracy", "cluster", "percentile", 400, 5): "95.0% at 20,000 trials",
    ("accuracy", "iid", "percentile", 200, 1): "95.3% at 20,000 trials",
}

_LABELS = {
    ("iid", "percentile"): "IID bootstrap",
    ("iid", "clt"): "Normal approx (FCE)",
    ("single_draw", "percentile"): "Single-draw cluster",
    ("cluster", "percentile"): "Cluster",
    ("cluster", "bca"): "Cluster BCa",
    ("hierarchical", "percentile"): "Hierarchical",
    ("mode_aggregate", "percentile"): "Mode-aggregate",
}


def format_paper(df: pd.DataFrame) -> str:
    """The comparison of :func:`evalci.simulate.coverage.reproduce_paper` as a plain-text table."""
    lines = []
    for metric, part in df.groupby("metric", sort=False):
        lines.append(f"\n{metric}  (coverage %, width; diff in Monte-Carlo SEs)")
        lines.append(
            f"{'':22s}{'N':>5s}{'k':>3s}  {'ours':>6s} {'paper':>6s} {'diff':>6s}"
            f"  {'width':>7s} {'paper':>7s}"
        )
        for r in part.itertuples():
            lines.append(
                f"{r.row:22s}{r.n_inputs:5d}{r.n_runs:3d}  {100 * r.coverage:6.1f} "
                f"{100 * r.paper_coverage:6.1f} {r.diff_se:+6.1f}  {r.mean_width:7.4f} "
                f"{r.paper_width:7.4f}  {r.note}"
            )
    return "\n".join(lines).lstrip("\n")
