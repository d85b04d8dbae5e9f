"""``python -m evalci``: the command line (see :mod:`evalci.reporting.cli`)."""

import sys

try:
    from evalci.reporting.cli import main
except KeyboardInterrupt:  # Ctrl-C while the libraries load: one line, as later
    print("evalci: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

if __name__ == "__main__":
    raise SystemExit(main())
