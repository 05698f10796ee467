"""What a running query needs from its surroundings: storage, evaluation context, threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from storage import ScanStats, StorageEngine


@dataclass
class ExecEnv:
    engine: StorageEngine
    eval_ctx: object                 # executor.expressions.EvalContext
    pool: ThreadPoolExecutor
    scan_stats: ScanStats = field(default_factory=ScanStats)
    mem_limit: int = 0               # exec_mem_limit in bytes; 0 = unlimited
