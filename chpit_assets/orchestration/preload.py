"""What the run launcher's fork server computes once before it forks any run (orchestration/forkserver.py).

A run worker loads its job from the code location: `chpit_assets.definitions` is imported already
in the fork, but the repository and its jobs were still made afresh in every run (31 ms a run,
measured in forks of a loaded process; 13-17 ms once the parent has made them; issue 27.2). Made
here, every fork inherits them: Dagster caches the repository on the `Definitions` object that the
worker's code pointer names. Resolving them reads no environment (chpit_assets.definitions)."""

from chpit_assets.definitions import defs

REPOSITORY = defs.get_repository_def()
JOBS = REPOSITORY.get_all_jobs()
