"""pytest at the repository root: the scripts that rebuild the test data
(``tests/data/make_*.py``) are not collected: they read sources outside the
repository and, for arena-rank's recording, need packages the project does
not install (jax)."""

from pathlib import Path

collect_ignore = [str(p) for p in (Path(__file__).parent / "tests" / "data").glob("*.py")]
