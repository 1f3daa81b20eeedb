"""`python -m oracle diff A B` / `python -m oracle html DIR`: the same as the `oracle` command."""

import sys

from oracle.cli import main

sys.exit(main())
