"""``python -m bench.cache``: the cache's command line (:mod:`bench.cache.admin`)."""

import sys

from bench.cache.admin import main

sys.exit(main())
