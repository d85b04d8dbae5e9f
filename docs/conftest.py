# Sphinx configuration is not a test module.
collect_ignore = ["conf.py", "_build", "generated"]
