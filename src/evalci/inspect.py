"""evalci inside an Inspect AI run: the early-stopping manager
:class:`SequentialStopping` and the metric :func:`evalci_interval` (home:
:mod:`evalci.io.inspect_hooks`). Importing it does not import ``inspect_ai``;
using the metric, or running the manager in a task, needs it.
"""

from evalci.io.inspect_hooks import *  # noqa: F403
from evalci.io.inspect_hooks import __all__  # noqa: F401
