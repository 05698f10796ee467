"""`python -m server serve ...` is the same as `minidoris serve ...`."""

import sys

from server.main import main

sys.exit(main())
