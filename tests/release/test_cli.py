"""From the command line (issue 24 acceptance): pull from the loopback Hub, validate, run oracle,
recite and a scripted-endpoint model on the core, one report with the published rows and ours."""

from __future__ import annotations

import json

from chpit_assets.cli import main

from .conftest import REPO, completion
from .factory import REVISION, build_release
from .hub import ReadHub


def test_pull_validate_run_and_report(tmp_path, root, monkeypatch, capsys, scripted):
    folder = tmp_path / "published"
    build_release(folder, cached=4)  # every recite/current/pit call of the core is in the cache
    hub = ReadHub(REPO, folder, REVISION)
    monkeypatch.setenv("HF_ENDPOINT", hub.base_url)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    try:
        assert main(["release", "pull", REPO, "--revision", REVISION]) == 0
        assert '"de": {"items": 8, "core": 4}' in capsys.readouterr().out
        assert main(["release", "validate", f"release:{REVISION}"]) == 0
    finally:
        hub.close()
    server = scripted(
        lambda body: (200, completion(body["messages"][-1]["content"].split("<context>\n")[1].split("\n</context>")[0]))
    )
    code = main(
        [
            "run",
            "--items",
            f"release:{REVISION}",
            "--systems",
            "oracle,recite,echo/pit",
            "--model-slug",
            "echo",
            "--base-url",
            server.base_url,
            "--model",
            "vendor/echo-1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "published report-all.json re-scored with our scorer: reproduced exactly" in out
    summary = [
        line for line in out.splitlines() if line.startswith("| recite/recite") or line.startswith("| echo-1/pit")
    ]
    assert [row.split(" | ")[0] for row in summary] == ["| recite/recite", "| echo-1/pit"]
    report = json.loads((root / "releases" / REVISION / "report" / "report-all.json").read_text())
    assert report["it"]["echo-1/pit"]["all"]["share_correct"] == 1.0  # every context was the published gold
    assert len(server.hits) == 12


def test_a_release_that_is_not_pulled_is_a_clear_error(root, capsys):
    assert main(["release", "validate", "release:v2026.09"]) == 1
    assert "release v2026.09 is not pulled" in capsys.readouterr().err
    assert main(["run", "--items", "release:v2026.09", "--systems", "oracle"]) == 1


def test_a_malformed_items_argument_is_a_usage_error(capsys):
    assert main(["run", "--items", "v2026.09", "--systems", "oracle"]) == 2
    assert "--items takes release:REVISION or release-dir:PATH" in capsys.readouterr().err
