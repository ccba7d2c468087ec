from __future__ import annotations

import pytest

from chpit_assets.defs.resources import ChpitStore
from tests.runs.conftest import completion, scripted  # noqa: F401 (the scripted-endpoint fixture)

from .factory import REVISION, build_release
from .hub import ReadHub

REPO = "overthelex/ch-pit"


@pytest.fixture
def published(tmp_path):
    """A constructed release in the published layout, in a folder of its own."""
    folder = tmp_path / "published"
    build_release(folder)
    return folder


@pytest.fixture
def hub(published, monkeypatch):
    """The loopback Hub serving it; huggingface_hub reaches it through HF_ENDPOINT."""
    served = ReadHub(REPO, published, REVISION)
    monkeypatch.setenv("HF_ENDPOINT", served.base_url)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    yield served
    served.close()


@pytest.fixture
def root():
    return ChpitStore().root  # the test's temporary data dir ($CHPIT_DATA_DIR)
