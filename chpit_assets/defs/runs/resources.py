"""The model endpoint behind `<slug>/<mode>` systems: the local SmolLM2 server unless run config points
elsewhere (`resources: {model: {config: {base_url: ..., ...}}}`)."""

import dagster as dg

from .assets import ModelEndpoint

defs = dg.Definitions(resources={"model": ModelEndpoint()})
