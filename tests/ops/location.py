"""chpit's code location with the chpit executor, as the Celery test's launcher and workers load it.

`Definitions.merge` accepts the same executor object twice, so this is exactly
`chpit_assets.definitions.defs` once that names `executor=chpit_executor`; until then it adds it.
"""

import dagster as dg

import chpit_assets.definitions
from chpit_assets.executors import chpit_executor

defs = dg.Definitions.merge(chpit_assets.definitions.defs, dg.Definitions(executor=chpit_executor))
