"""The floor every layer stands on: argument checks, warnings, type names,
progress lines. Nothing here imports the rest of evalci."""
