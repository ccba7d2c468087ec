"""The runs' resources: the model endpoint behind `<slug>/<mode>` systems (the local SmolLM2 server unless
run config points elsewhere, `resources: {model: {config: {base_url: ..., ...}}}`) and the item
selection and resume settings (`resources: {runs: {config: {limit: 2, ...}}}`)."""

import dagster as dg

from .assets import ModelEndpoint, RunsConfig

defs = dg.Definitions(resources={"model": ModelEndpoint(), "runs": RunsConfig()})
