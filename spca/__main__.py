"""``python -m spca`` runs the command line (see :mod:`spca.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
