"""``python -m guti.engine``: run the reference UGI engine (see :mod:`guti.engine.ugi_main`)."""

import sys

from guti.engine.ugi_main import main

sys.exit(main(sys.argv[1:]))
