"""``python -m horismos`` and the ``horismos`` console script: the same program."""

from __future__ import annotations

import sys

from ._quiet_start import INTERRUPTED

try:  # the command line's own modules: a Ctrl-C meanwhile is one line, as in the package's
    from ._cli import main
except KeyboardInterrupt:
    print(INTERRUPTED, file=sys.stderr)
    sys.exit(130)

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
