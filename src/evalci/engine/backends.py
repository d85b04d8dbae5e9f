"""Where a pass's resampling runs: in this process or as Dask tasks.

The pass itself (:mod:`evalci.engine.passes`) knows no scheduler; each backend
takes a started :class:`~evalci.engine.passes.Pass` and returns its finished
:class:`~evalci.engine.passes.Replicates`. Streams are keyed by index, so every
backend gives the same numbers. This module sits above both, so the pass
never imports its Dask backend back.
"""

from __future__ import annotations

from evalci.engine import scaleout
from evalci.engine.args import BootstrapArgs
from evalci.engine.passes import Replicates, finish_pass, start_pass

#: ``backend=`` of every entry point -> the function that finishes a pass
BACKENDS = {"numpy": finish_pass, "dask": scaleout.finish}


def replicates(data, args: BootstrapArgs, root) -> Replicates:
    """Resample every draw unit of the validated table: the shared engine pass.

    With ``backend="dask"`` the resampling runs as Dask tasks
    (:func:`evalci.engine.scaleout.finish`); the numbers are the same.
    """
    return BACKENDS[args.backend](start_pass(data, args, root))
