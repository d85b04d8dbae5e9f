"""Front door for other tools' logs: one reader per framework, answer
extraction, the bundled example."""
