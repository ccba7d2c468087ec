"""The runs' resources: the model endpoint behind `<slug>/<mode>` systems (the local SmolLM2 server unless
run config points elsewhere, `resources: {model: {config: {base_url: ..., ...}}}`) and the item
selection and resume settings (`resources: {runs: {config: {limit: 2, ...}}}`)."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import date
from typing import Any

import dagster as dg

from chpit_assets.runs.client import EndpointConfig
from chpit_assets.runs.stage import RunSettings


class ModelEndpoint(dg.ConfigurableResource):
    """The model behind `<slug>/<mode>` systems. Empty `base_url` = the local SmolLM2 server, started per run.

    For a hosted router: base_url, model (the pinned slug), api_key_env (the variable NAME, never the key),
    prices (USD per 1M tokens; a paid endpoint without them is refused, PROTOCOL §7), and confirm=True (or
    CHPIT_CONFIRM_SPEND=1 / CHPIT_CONFIRM=1) after reading the estimate (R3). A base URL carrying a
    credential (user info, a query key) is passed by the NAME of a variable holding it, `base_url_env`,
    so the run storage never holds the credential (issue 15 item 5)."""

    slug: str = "smollm2-135m"
    base_url: str = ""
    base_url_env: str = ""
    model: str = ""
    api_key_env: str = ""
    workers: int = 1  # measured: 2 local workers are slower than 1 on 2 cores (docs/perf/runs.md)
    confirm: bool = False
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None
    timeout_s: float = 300.0
    reasoning_effort: str = "minimal"  # PROTOCOL §4; empty = send no `reasoning`
    # R3's published settings; a small local model may ramble to the limit, so local runs often lower it.
    max_tokens: int = 8192
    retry_max_tokens: int = 16384
    # The model's training cutoff, ISO date (issue 25): recorded in every receipt for the report's
    # cutoff split; empty = unknown (no split).
    cutoff: str = ""

    def resolved_base_url(self) -> str:
        if self.base_url_env:
            url = os.environ.get(self.base_url_env, "").strip()
            if not url:
                raise dg.Failure(f"model endpoint: ${self.base_url_env} (base_url_env) is unset or empty")
            return url
        return self.base_url

    def checked_cutoff(self) -> str | None:
        if not self.cutoff:
            return None
        try:
            return date.fromisoformat(self.cutoff).isoformat()
        except ValueError:
            raise dg.Failure(f"model endpoint: cutoff {self.cutoff!r} is not an ISO date (YYYY-MM-DD)") from None

    def settings(self) -> dict:
        """The run report's settings (PROTOCOL §8)."""
        return {
            "reasoning_effort": self.reasoning_effort or None,
            "workers": self.workers,
            "temperature": 0.0,
            "max_tokens_ladder": [self.max_tokens, self.retry_max_tokens],
        }

    @contextmanager
    def endpoints(self, slug: str | None) -> Iterator[dict[str, EndpointConfig]]:
        """{slug: config} for a model system, {} for oracle/recite (which must not start a server)."""
        if slug is None or slug != self.slug:
            yield {}  # an unconfigured slug becomes build_system's UnknownSystemError
            return
        settings: dict[str, Any] = dict(
            api_key_env=self.api_key_env or None,
            timeout_s=self.timeout_s,
            max_tokens=self.max_tokens,
            retry_max_tokens=self.retry_max_tokens,
            reasoning_effort=self.reasoning_effort or None,
            price_input_per_mtok=self.price_input_per_mtok,
            price_output_per_mtok=self.price_output_per_mtok,
            cutoff=self.checked_cutoff(),
        )
        base_url = self.resolved_base_url()
        if base_url:
            yield {slug: EndpointConfig(base_url, self.model or slug, **settings)}
            return
        from chpit_assets.runs.local_model import LocalModelServer, server_version

        # One llama.cpp slot per worker, so parallel workers really run in parallel.
        with LocalModelServer(parallel=max(1, self.workers)) as server:
            # Issue 14 item 5: answers at temperature 0 depend on the weights, the server and the slots.
            described = {
                "weights_sha256": server.model_sha256,
                "server": server_version(),
                "parallel_slots": max(1, self.workers),
            }
            yield {
                slug: EndpointConfig(f"{server.base_url}/v1", self.model or server.model, server=described, **settings)
            }


class RunsConfig(dg.ConfigurableResource):
    """Which items a (system, lang) run asks and how it meets its earlier log: the `runs` resource, so
    one backfill's run config (`resources: {runs: {config: ...}}`) reaches every run that asks items."""

    retry_errors: bool = True  # PROTOCOL §7: items whose winning line is an error are asked again
    new_run: bool = False  # start over when the log was made with other settings (the old log is kept aside)
    sample_per_lang: int = 0  # PROTOCOL §6: N items per language (the published agentic rows: 100); 0 = all
    limit: int = 0  # the first N items (by id) of that, for a quick look; 0 = all
    today: str = ""  # ISO date the tools treat as today (recite, current); empty = the real date
    # Model systems only: ask every item this many times (issue 25); repeat 0 alone feeds the published files.
    repeats: int = 1
    items: str = ""  # release:REV / release-dir:PATH: a published release's core (chpit_assets/release); empty = ours

    def settings(self) -> RunSettings:
        """The domain's settings (chpit_assets/runs/stage.py); `items` is the release CLI's alone."""
        return RunSettings(**{f.name: getattr(self, f.name) for f in fields(RunSettings)})


defs = dg.Definitions(resources={"model": ModelEndpoint(), "runs": RunsConfig()})
