"""Process-wide settings, set with :func:`set_options` (as ``xarray.set_options``).

Only settings that change *where the work is cut* live here, never a
statistical choice: those are arguments of the call. A setting is read once,
when a call's arguments are checked in the caller's process, and travels with
the call from there (to Dask tasks too), so workers never need it set.
"""

from __future__ import annotations

import operator

__all__ = ["OPTIONS", "get_option", "set_options"]

#: The current settings; ``None`` means the built-in default.
OPTIONS: dict[str, int | None] = {"tile_size": None}

#: The smallest ``tile_size``: below it a graph holds more tasks than inputs
#: are worth cutting for.
MIN_TILE_SIZE = 1024


def _check_tile_size(value) -> int | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TypeError(
            "`tile_size` must be an integer number of inputs, or None for the "
            f"default; got {type(value).__name__}."
        ) from None
    if value < MIN_TILE_SIZE:
        raise ValueError(
            f"`tile_size` must be at least {MIN_TILE_SIZE:,} inputs; got {value:,}. "
            "Fewer inputs per tile cut a unit into more tasks than they save "
            "memory; give the workers more memory instead."
        )
    return int(value)


_CHECKS = {"tile_size": _check_tile_size}


def get_option(name: str):
    """The current value of setting ``name`` (``None``: the default)."""
    return OPTIONS[name]


class set_options:  # noqa: N801 - a function to its callers, as in xarray
    """Set evalci's process-wide settings, for good or inside a ``with`` block.

    Parameters
    ----------
    tile_size : int or None
        Inputs per tile of the cluster bootstrap's two-stage draws
        (``docs/scaling.md``, Tiles): a draw unit of more inputs than this is
        resampled tile by tile, so that one Dask task holds one tile's
        statistics (``8 x tile_size x systems x statistics`` bytes) and about
        ``64 x tile_size`` bytes of draws. ``None`` (the default) is
        ``evalci.engine.resampling.TILE_SIZE`` = 2**20. Another tile size
        draws other numbers from the same seed (the same law: an exact
        multinomial), the same on numpy and on every Dask scheduler. At least
        1,024. Lower it when workers have little memory; the memory check of a
        ``distributed`` client names the size that fits.

    Examples
    --------
    >>> import evalci
    >>> with evalci.set_options(tile_size=2**16):
    ...     evalci.get_option("tile_size")
    65536
    >>> evalci.get_option("tile_size") is None
    True
    """

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown evalci option(s) {unknown}; the options are "
                f"{sorted(OPTIONS)}."
            )
        checked = {k: _CHECKS[k](v) for k, v in kwargs.items()}
        self._old = {k: OPTIONS[k] for k in checked}
        OPTIONS.update(checked)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        OPTIONS.update(self._old)
