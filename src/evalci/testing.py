"""Release gates for your own tests: the public namespace ``evalci.testing``.

Each assertion raises ``AssertionError`` with the numbers that decided it, so
a failing CI job says why; the sequential forms stay valid however often you
look (page "Release gates", docs/release-gates.md).

Examples
--------
>>> import evalci
>>> from evalci import testing
>>> df = evalci.load_example()
>>> res = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)
>>> testing.assert_score_above(res, 0.5)
"""

from evalci.methods.testing import *  # noqa: F403 - the names of __all__
from evalci.methods.testing import __all__  # noqa: F401
