"""``python -m evalci``: the command line (see :mod:`evalci.cli`)."""

from evalci.reporting.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
