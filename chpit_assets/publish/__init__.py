"""Publishing CH-PiT (issue 6, points 4 and 5): the CRITICAL gate, parquet shards and the dataset
card in `data/publish/` (R5), an atomic swap of that folder, and the optional Hub upload.

Plain Python over plain data; the Dagster layer is `chpit_assets.defs.publish`. See
docs/publishing.md.
"""

from .candidate import Candidate, load_candidate
from .errors import GateFailed, PublishError, UploadError
from .gate import CRITICAL_CHECKS, CountBounds, GateReport, evaluate_gate
from .hub import HubTarget, hub_target
from .oracle import OracleCheck, content_hash, oracle_check
from .publication import Published, publish

__all__ = [
    "CRITICAL_CHECKS",
    "Candidate",
    "CountBounds",
    "GateFailed",
    "GateReport",
    "HubTarget",
    "OracleCheck",
    "Published",
    "PublishError",
    "UploadError",
    "content_hash",
    "evaluate_gate",
    "hub_target",
    "load_candidate",
    "oracle_check",
    "publish",
]
