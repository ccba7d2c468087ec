"""The publication's settings, one resource for the gate's checks and hf_dataset, so both read the same."""

import dagster as dg

from .assets import Publication

defs = dg.Definitions(resources={"publication": Publication()})
