"""Statistical methods built on the engine: paired comparisons, closed-form
intervals, planning and power, variance components, leaderboards, judges and
release gates. None of them knows that Dask exists."""
