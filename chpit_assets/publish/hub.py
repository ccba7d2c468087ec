"""Uploading the published folder to a Hugging Face dataset repository, only when asked.

Asked means both a repo id and a token are configured; anything else is a local publication and
`hub_target` says why, so the asset can report it instead of silently not uploading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chpit_assets.faults import kill_point

from .errors import UploadError


@dataclass(frozen=True)
class HubTarget:
    repo_id: str
    token: str
    endpoint: str | None = None  # None: huggingface_hub's default (honours HF_ENDPOINT)


def hub_target(
    repo_id: str, token: str | None, token_env: str, endpoint: str | None = None
) -> tuple[HubTarget | None, str | None]:
    """(target, None) when an upload is configured, else (None, why the publication stays local)."""
    missing = [what for what, value in (("repo_id", repo_id), (f"${token_env}", token)) if not value]
    if missing or token is None:
        return None, f"local only: {' and '.join(missing)} not set"
    return HubTarget(repo_id, token, endpoint or None), None


def upload(folder: Path, target: HubTarget, commit_message: str) -> str:
    """Create the dataset repo if needed and commit the folder to it; returns the commit URL."""
    from huggingface_hub import HfApi  # imported on use: every run process imports this module, few upload

    api = HfApi(endpoint=target.endpoint, token=target.token)
    try:
        api.create_repo(target.repo_id, repo_type="dataset", exist_ok=True)
        kill_point("publish.upload")
        info = api.upload_folder(
            folder_path=folder, repo_id=target.repo_id, repo_type="dataset", commit_message=commit_message
        )
    except Exception as exc:  # huggingface_hub raises HTTP, OS and value errors alike; keep the cause
        raise UploadError(f"upload of {folder} to dataset {target.repo_id} failed: {exc}") from exc
    return info.commit_url
