"""Front door for people: seed 002's report, plots and the command line."""
