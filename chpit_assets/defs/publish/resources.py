"""The publication's settings, one resource for the gate's checks and hf_dataset, so both read the same."""

import dagster as dg

from chpit_assets.bench.items import ITEM_CAP
from chpit_assets.publish import CountBounds


class Publication(dg.ConfigurableResource):
    """Where and whether to publish, and the gate's count bounds (docs/publishing.md)."""

    repo_id: str = ""  # Hub dataset repo, e.g. "overthelex/ch-pit"; empty = local only
    token_env: str = "HF_TOKEN"  # the variable NAME holding the token, never the token
    hub_endpoint: str = ""  # empty = huggingface_hub's default (which honours HF_ENDPOINT)
    min_items: dict[str, int] = {"de": 1}  # absolute floor per language
    max_items: int = ITEM_CAP  # per language (B14)
    max_drop_share: float = 0.01  # a language may lose at most min(this share of the live
    max_drop_items: int = 25  # publication's items, this many); an act never all of them
    lock_wait_s: float = 600.0  # how long a second publisher waits for the first

    def bounds(self) -> CountBounds:
        return CountBounds(dict(self.min_items), self.max_items, self.max_drop_share, self.max_drop_items)


defs = dg.Definitions(resources={"publication": Publication()})
