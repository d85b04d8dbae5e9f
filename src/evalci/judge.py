"""Judge scores corrected by gold labels: the public namespace ``evalci.judge``.

An LLM judge scores every row; humans label the rows of a random subset of
inputs. :func:`ppi_mean` (prediction-powered inference, PPI++),
:func:`ppi_compare` (the gap between two systems) and :func:`rogan_gladen`
(the judge's positive rate corrected by its sensitivity and specificity)
combine them, each with an interval over inputs. The methods, and how rows
become inputs, are documented in :mod:`evalci.methods.judge` (page
"Judges", docs/judges.md).
"""

from evalci.methods.judge import *  # noqa: F403 - the names of __all__
from evalci.methods.judge import __all__  # noqa: F401
