"""Planning an evaluation: N vs k, widths against k, sample size and power.

``plans`` (:func:`plan`, :func:`plan_from_data`, :class:`Plan`),
``designs`` (the table of designs a plan weighs), ``widths`` (seed 000's
width formulas), ``width_grid`` (:func:`width_table`) with
``observed_widths`` (widths measured by subsampling runs),
``power_analysis`` (:func:`sample_size`, :func:`minimum_detectable_effect`,
:func:`power` and their ``*_from_data`` forms) with ``power_design``,
``power_solver``, ``mcnemar_power`` and ``power_pilot``.

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``; the
families ``variance`` (:func:`icc`), ``analytic`` (McNemar's test) and
``facets`` (:func:`plan_from_data` with ``facets=``: the D-study).
"""

from evalci.methods.planning.plans import Plan, plan, plan_from_data
from evalci.methods.planning.power_analysis import (
    mde_from_data,
    minimum_detectable_effect,
    power,
    sample_size,
    sample_size_from_data,
)
from evalci.methods.planning.width_grid import width_table
from evalci.methods.planning.widths import predict_width, width_factor

__all__ = [
    "Plan",
    "mde_from_data",
    "minimum_detectable_effect",
    "plan",
    "plan_from_data",
    "power",
    "predict_width",
    "sample_size",
    "sample_size_from_data",
    "width_factor",
    "width_table",
]
