"""``python -m registry.cli``: the ``dnb`` command."""

import sys

from registry.cli import main

sys.exit(main())
