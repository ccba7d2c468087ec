"""A published CH-PiT release (issue 24): pull it from the Hub, validate it, run systems on its core
with the published contexts, and report beside the published rows.

Public API: `pull` (pull.py), `validate_release` (validate.py), `open_release` and `release_home`
(layout.py), `ReleaseError`; `run.run_release` and `report.write_release_report` are imported from
their modules (they load the runner and the scorer's report, which a pull does not need).
Command line: cli.py; the Dagster asset: chpit_assets/defs/release/assets.py.
"""

from .errors import ReleaseError
from .layout import Release, open_release, release_home
from .pull import pull
from .validate import validate_release

__all__ = ["Release", "ReleaseError", "open_release", "pull", "release_home", "validate_release"]
