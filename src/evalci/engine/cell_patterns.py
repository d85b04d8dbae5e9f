"""A pass from the distinct inputs of a cell table and how many inputs share each.

When most inputs look alike (0/1 outcomes, small counts), the pattern kernel
resamples a handful of distinct per-input rows, and every other step of a
cluster pass reads only those rows and their multiplicities. So a cell table
(:mod:`evalci.engine.cells`) need not reach the engine whole:
:func:`block_signatures` summarises a table of whole inputs (every cell of an
input in it) into one representative input per distinct *signature* -- the
input's cells in every group: group, summed statistics, runs and stratum --
with the number of inputs it stands for; :func:`pass_of_signatures` builds,
from the representatives of every block, the pass that
:func:`evalci.engine.passes.pass_of_cube` builds from the cells of all
inputs, or None when that pass would not take the pattern kernel in every
unit with totals that are exact in any order (the caller then builds it from
all the cells).

What the pass holds then, and what it does not: the patterns, their
multiplicities, draw plans, strata and ``n_runs`` are those of the full
pass, so the replicates, estimates, jackknife per pattern and acceleration
are too, bit for bit (patterns are ordered canonically, never by input).
The units' inputs are the patterns' expanded by multiplicity (``T`` and each
pattern's ``inverse`` in that order, not by key), and the pass's cube holds the
representatives only (a unit's cluster codes are its patterns' first
representatives): a comparison, which reads the (N, G) jackknife by input,
must not use it (the Dask cells path feeds :func:`evalci.bootstrap` only).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from evalci.engine import passes, patterns
from evalci.engine.args import BootstrapArgs
from evalci.engine.cells import prepare_cells
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.keys import factorize
from evalci.engine.patterns_find import (
    Patterns,
    _counted_codes,
    _first_index,
    _row_codes,
)
from evalci.engine.table import CELL_RUNS

__all__ = ["INPUTS", "block_signatures", "pass_of_signatures"]

#: The column of a representative's cells: how many inputs it stands for.
INPUTS = "__evalci_inputs__"


def block_signatures(cells: pd.DataFrame | None, args: BootstrapArgs):
    """``(representatives, most runs, inputs)`` of a table of whole inputs.

    Parameters
    ----------
    cells : pandas.DataFrame or None
        Cells (cluster, group and strata keys, summed statistics
        ``__evalci_s*__`` and runs) holding every cell of each of its
        inputs; None when a statistic was not whole.
    args : evalci.engine.args.BootstrapArgs
        The pass's arguments (its cluster, ``by`` and strata columns).

    Returns
    -------
    tuple
        ``representatives``: the cells of one input per distinct signature
        (its cells in every group: group, statistics, runs, stratum), with
        :data:`INPUTS`, how many inputs share it; None when ``cells`` is
        None, when an input lies in two strata or twice in a group (the
        full path says what is wrong), or when the signatures are more than
        half the inputs (a summary would save little). ``most runs``: the
        largest runs of a cell (None when ``cells`` is None). ``inputs``:
        the number of inputs.
    """
    if cells is None:
        return None, None, 0
    if len(cells) == 0:
        return cells.assign(**{INPUTS: np.zeros(0, np.int64)}), 0.0, 0
    most = float(cells[CELL_RUNS].max())
    inputs, keys = factorize(cells, list(args.cluster), "cluster")
    n = len(keys)
    group, _, n_groups = group_codes_of(cells, args.by)
    names = [c for c in cells.columns if c.startswith("__evalci_s")] + [CELL_RUNS]
    columns = [cells[c].to_numpy() for c in names]
    if args.strata:
        strata = factorize(cells, list(args.strata), "strata")[0]
        if _row_codes([inputs, strata])[1] != n:  # an input in two strata
            return None, most, n
        columns.append(strata)
    content = _row_codes(columns)[0]
    slot = inputs * n_groups + group
    if np.bincount(slot, minlength=n * n_groups).max() > 1:  # (cells are unique)
        return None, most, n
    table = np.full(n * n_groups, -1, dtype=np.int64)
    table[slot] = content
    signature, n_signatures, counts = _counted_codes(list(table.reshape(n, n_groups).T))
    if 2 * n_signatures > n:
        return None, most, n
    chosen = np.zeros(n, dtype=bool)
    chosen[_first_index(signature, n_signatures)] = True
    rows = np.flatnonzero(chosen[inputs])
    weight = counts[signature[inputs[rows]]].astype(np.int64)
    return cells.iloc[rows].assign(**{INPUTS: weight}), most, n


def pass_of_signatures(cells: pd.DataFrame, args: BootstrapArgs, root):
    """The pass of the inputs that ``cells`` represent, or None.

    Parameters
    ----------
    cells : pandas.DataFrame
        Representatives of :func:`block_signatures` (of every block, each
        input in one block), with :data:`INPUTS`.
    args : evalci.engine.args.BootstrapArgs
        The pass's arguments (a Metric, ``strategy="cluster"``).
    root : numpy.random.SeedSequence
        The pass's root seed.

    Returns
    -------
    evalci.engine.passes.Pass or None
        What :func:`evalci.engine.passes.pass_of_cube` returns on the cells
        of every input (see the module's note on the inputs' order), checked
        and warned about as it does; None, before any check or warning, when
        a unit would take the index kernel, its totals would not be exact in
        any order, or the arguments are beyond this path (another strategy,
        blocks of inputs, a per-input hook, a forced kernel).
    """
    metric = args.metric
    if (
        passes._FORCE_PATH is not None
        or args.strategy != "cluster"
        or args.block_length
        or getattr(metric, "per_input", None) is not None
    ):
        return None
    weights = cells[INPUTS].to_numpy(dtype=np.int64)
    cells = cells.drop(columns=INPUTS)
    cube, _ = prepare_cells(cells, args)
    codes = factorize(cells, list(args.cluster), "cluster")[0]
    per_input = np.zeros(len(cube.cluster_keys), dtype=np.int64)
    per_input[codes] = weights
    runs = cells[CELL_RUNS].to_numpy(dtype=float) * weights
    group = group_codes_of(cells, args.by)[0]
    n_runs = np.bincount(group, weights=runs, minlength=cube.n_groups)
    weight = "run" if cube.input_weighted else args.weight
    units, plans = [], []
    for unit, groups, clusters in passes._units_of(cube, "cluster", weight, args):
        found, each = _weighted_patterns(unit, per_input[clusters])
        plan = patterns.draw_plan(found, "cluster")
        width = unit.T.shape[1] * unit.T.shape[2]
        n = found.n_inputs
        if not patterns.should_use_patterns(n, plan.n_draws, width):
            return None
        if not _exact_total(found.stats, n):
            return None
        full = replace(
            unit,
            T=np.repeat(found.stats, found.multiplicity, axis=0),
            strata_bounds=found.input_bounds,
        )
        # the representatives' codes, each pattern's first (nothing on this
        # path reads a unit's cluster codes: they index the cube)
        units.append((full, groups, clusters[_first_index(each, found.n_patterns)]))
        plans.append((found, plan))
    passes.check_units(units, cube, args)
    passes._check_memory(units, args)
    return passes.Pass(
        args, root, cube, n_runs.astype(np.int64), "cluster", units, plans
    )


def _weighted_patterns(unit, weights: np.ndarray):
    """``(patterns, each)``: the patterns of the representatives' ``unit.T``,
    each counted by the inputs its representatives stand for, the inputs
    expanded in pattern order (``inverse``); and each representative's
    pattern."""
    small = patterns.find_patterns(unit.T, unit.strata_bounds)
    mult = np.bincount(small.inverse, weights=weights, minlength=small.n_patterns)
    mult = mult.astype(np.int64)
    return Patterns(
        stats=small.stats,
        stratum=small.stratum,
        multiplicity=mult,
        inverse=np.repeat(np.arange(small.n_patterns, dtype=np.int64), mult),
        bounds=small.bounds,
    ), small.inverse


def _exact_total(stats: np.ndarray, n_inputs: int) -> bool:
    """Whether :func:`evalci.engine.passes._total` sums these patterns by
    multiplicity (whole, no negative zero, no sum reaching 2**53): then the
    total does not depend on the inputs' order."""
    big = float(np.abs(stats).max()) if stats.size else 0.0
    whole = np.array_equal(stats, np.trunc(stats)) and not np.signbit(stats).any()
    return big * n_inputs < 2.0**53 and whole
