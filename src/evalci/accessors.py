"""The ``.evalci`` accessor: stateless, every method one line forwarding to a function.

Validation lives in the functions (STYLE.md, 2): the accessor only stores
the object it was created on.
"""

from __future__ import annotations

import pandas as pd

from . import core


@pd.api.extensions.register_dataframe_accessor("evalci")
class EvalciDataFrameAccessor:
    """``df.evalci``: evalci's functions on a tidy DataFrame.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> r = df.evalci.cluster_ci("correct", cluster="input_id", by="system",
    ...                          n_resamples=1000, rng=0)
    >>> list(r.estimate.round(3))
    [0.573, 0.662]
    """

    def __init__(self, obj: pd.DataFrame):
        self._obj = obj

    def cluster_ci(self, value, cluster, **kwargs):
        """Cluster-bootstrap CI; see :func:`evalci.cluster_ci`."""
        return core.cluster_ci(self._obj, value, cluster, **kwargs)

    def bootstrap(self, value, cluster=None, **kwargs):
        """Bootstrap CI with any strategy; see :func:`evalci.bootstrap`."""
        return core.bootstrap(self._obj, value, cluster, **kwargs)
