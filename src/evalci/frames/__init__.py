"""Front doors for data frames: the pandas, xarray and Dask ``.evalci``
accessors, and the one way in for Dask DataFrames (an exact reduction on the
workers to a small pandas table)."""
