"""``python -m engine``: run the reference UGI engine (see :mod:`engine.ugi_main`)."""

import sys

from engine.ugi_main import main

sys.exit(main(sys.argv[1:]))
