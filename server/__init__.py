"""server package.

Before anything imports pyarrow: Arrow's allocator (mimalloc) is told to return freed memory to
the system at once (`purge_delay` 0) and to commit arena memory only when used, so that the
process's resident set - what `mem_limit` is checked against (storage/process_memory.py) -
falls back after a large query or load instead of keeping its peak (measured: 2M rows loaded
left 125 MB more resident by default, 16 MB with these; a 2M x 2M join 250 MB, 140 MB).
A value set in the environment wins.
"""

import os

os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")
