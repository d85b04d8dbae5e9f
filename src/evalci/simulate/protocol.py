"""The model protocol, and what every model shares: argument checks and output.

Every model of :mod:`evalci.simulate` is a frozen dataclass with

* ``systems : tuple[str, ...]``;
* ``sample(n_inputs, n_runs, rng=None, *, as_dataarray=False)``: a tidy
  DataFrame (``input_id, run, system, correct`` [, ``pred, label``]) sorted
  by system, input, run; or the DataArray of ``correct`` over (input, run,
  system), laid out as ``df.evalci.to_xarray("correct")`` lays it out;
* ``truth(metric="accuracy") -> dict``: ``{system: value}``; ``"gap"`` gives
  ``{(a, b): value_b - value_a}`` for every pair of systems ``a`` before
  ``b`` in ``systems`` order.

:class:`Model` states the protocol; :class:`_Sampler` is the ``sample`` the
models share (argument checks, seeding, output), each model drawing its
arrays in ``_draw``. The checks of sizes, system names and rates and the
true-value lookup (:func:`_truth`) live here too.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from evalci._base.text import as_written

__all__ = ["Model"]


@runtime_checkable
class Model(Protocol):
    """What every model of this module provides (for :mod:`evalci.simulate.coverage`).

    ``systems`` names the systems; ``sample(n_inputs, n_runs, rng=None, *,
    as_dataarray=False)`` returns one simulated data set, a tidy DataFrame
    (``input_id`` 0..N-1, ``run`` 0..k-1, ``system``, ``correct`` [, ``pred``,
    ``label``], sorted by system, input, run) or the DataArray of ``correct``
    over (input, run, system) that ``df.evalci.to_xarray("correct")`` builds;
    ``truth(metric="accuracy")`` returns ``{system: value}``, and for
    ``"gap"`` ``{(a, b): value_b - value_a}`` for each pair of systems ``a``
    before ``b``.

    Examples
    --------
    >>> from evalci import simulate
    >>> isinstance(simulate.BetaBernoulli(0.7, 0.2), simulate.Model)
    True
    """

    systems: tuple

    def sample(self, n_inputs: int, n_runs: int, rng=None, *, as_dataarray=False):
        """One simulated data set."""

    def truth(self, metric: str = "accuracy") -> dict:
        """True value per system (or per pair, for "gap")."""


# ---------------------------------------------------------------- checks
def _positive_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {as_written(v)}.")
    return int(v)


def _system_names(n_systems, name: str = "n_systems") -> tuple[str, ...]:
    """``n_systems`` as a tuple of names: 1 -> ("A",), 2 -> ("A", "B"), names kept."""
    if isinstance(n_systems, (int, np.integer)) and not isinstance(n_systems, bool):
        n = _positive_int(name, n_systems)
        if n > 26:
            raise ValueError(f"`{name}` above 26 needs explicit system names.")
        return tuple(chr(ord("A") + s) for s in range(n))
    if isinstance(n_systems, str):
        n_systems = (n_systems,)
    try:
        names = tuple(str(s) for s in n_systems)
    except TypeError:
        raise ValueError(
            f"`{name}` must be a positive integer or a sequence of system names; "
            f"got {as_written(n_systems)}."
        ) from None
    if not names or len(set(names)) != len(names):
        raise ValueError(
            f"`{name}` must name distinct systems; got {as_written(n_systems)}."
        )
    return names


def _unit_open(name: str, v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(
            f"`{name}` must be a number in (0, 1); got {as_written(v)}."
        ) from None
    if not 0.0 < x < 1.0:
        raise ValueError(
            f"`{name}` must lie strictly between 0 and 1; got {as_written(v)}."
        )
    return x


# ---------------------------------------------------------------- output
def _tidy(systems, columns: dict) -> pd.DataFrame:
    """Tidy frame from (system, input, run) arrays, sorted system-major."""
    s, n, k = columns["correct"].shape
    out = {
        "input_id": np.tile(np.repeat(np.arange(n), k), s),
        "run": np.tile(np.arange(k), s * n),
        "system": np.repeat(np.array(systems, dtype=object), n * k),
    }
    for col, arr in columns.items():
        out[col] = np.asarray(arr).reshape(-1)
    return pd.DataFrame(out)


def _dataarray(systems, correct: np.ndarray):
    """The DataArray of ``correct`` (system, input, run) over (input, run, system).

    Laid out as ``df.evalci.to_xarray("correct")`` lays out the tidy frame of
    :func:`_tidy`: float values, inputs and runs numbered from 0, the systems
    sorted by name (as its sorted keys put them) with an object coordinate.
    """
    import xarray as xr

    s, n, k = correct.shape
    order = sorted(range(s), key=lambda i: systems[i])
    dense = np.moveaxis(np.asarray(correct), 0, -1)[:, :, order].astype(float)
    coords = {
        "input": np.arange(n, dtype=np.int64),
        "run": np.arange(k, dtype=np.int64),
        "system": np.array([systems[i] for i in order], dtype=object),
    }
    return xr.DataArray(
        dense, dims=("input", "run", "system"), coords=coords, name="correct"
    )


def _finish(systems, arrays: dict, as_dataarray: bool):
    """The tidy frame of ``arrays`` (system, input, run), or its DataArray."""
    if as_dataarray:
        return _dataarray(systems, arrays["correct"])
    return _tidy(systems, arrays)


class _Sampler:
    """``sample`` for the models: each draws its (system, input, run) arrays
    (``correct`` first [, ``pred``, ``label``]) in ``_draw(n, k, gen)``."""

    def sample(self, n_inputs, n_runs, rng=None, *, as_dataarray=False):
        """One simulated data set: tidy ``input_id, run, system, correct``.

        Models of labels add ``pred, label`` columns; rows are sorted by
        system, input, run (see :class:`Model`).

        Parameters
        ----------
        n_inputs, n_runs : int
            N inputs and k runs of each, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`); the same seed
            gives the same data set.
        as_dataarray : bool
            Return the DataArray of ``correct`` over (input, run, system)
            instead of the tidy table.

        Returns
        -------
        pandas.DataFrame or xarray.DataArray
        """
        n = _positive_int("n_inputs", n_inputs)
        k = _positive_int("n_runs", n_runs)
        gen = np.random.default_rng(rng)
        return _finish(self.systems, self._draw(n, k, gen), as_dataarray)


# ---------------------------------------------------------------- truth
def _truth(
    model, values: dict, metric: str, metrics: tuple[str, ...], gaps=None
) -> dict:
    """``values`` ({metric: {system: v}}) looked up, with "gap" from accuracy.

    ``gaps`` ({(a, b): v}), when given, is the exact "gap" instead.
    """
    if metric == "gap":
        if gaps is not None:
            return dict(gaps)
        acc = values["accuracy"]
        sy = model.systems
        if len(sy) < 2:
            raise ValueError(
                '`metric="gap"` needs a model with two or more systems; this one '
                f"has {sy}."
            )
        return {
            (a, b): float(acc[b] - acc[a])
            for i, a in enumerate(sy)
            for b in sy[i + 1 :]
        }
    if metric not in values:
        raise ValueError(
            f"`metric` must be one of {metrics + ('gap',)} for "
            f"{type(model).__name__}; got {as_written(metric)}."
        )
    return dict(values[metric])
