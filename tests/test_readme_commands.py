"""Issue 14.1 acceptance: every `python -m chpit_assets` command of the README, run as written, in
README order, from a plain shell (no DAGSTER_HOME, no CHPIT_* variables) in a copy of the project.

Two things beyond this machine are stood in for on 127.0.0.1, and that is the only difference from
a user's shell: live Fedlex, through the documented `CHPIT_SPARQL_URL` override, is the loopback
server serving the real sample; the hosted endpoint's URL in the command is replaced by a loopback
OpenAI-compatible server's (the one edit made to a command). The local model command runs the real
SmolLM2 server. A command found in the README without a check here fails the test, so the README
cannot grow a command nobody ran.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from chpit_assets.fedlex.catalog import load_sample_catalog
from tests.fedlex.conftest import SAMPLE, FakeFedlex, sample_graph
from tests.ops_schedule.nightly_project import copy_project, plain_env
from tests.runs.conftest import ScriptedServer, completion, tool_call

ROOT = Path(__file__).resolve().parents[1]
HOSTED = "https://openrouter.ai/api/v1"


def readme_commands(text: str) -> list[str]:
    """The CLI commands of the README's `sh` blocks and inline code, continuation lines joined, in order."""
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```sh\n(.*?)```", text, re.S):
        for line in block.group(1).replace("\\\n", " ").splitlines():
            command = line.split(" #")[0].strip()
            if re.match(r"(\.venv/bin/)?python -m chpit_assets ", command):
                found.append((block.start(), " ".join(command.split())))
    for inline in re.finditer(r"`((?:\.venv/bin/)?python -m chpit_assets [^`]+)`", text):
        found.append((inline.start(), inline.group(1)))
    commands: list[str] = []
    for _, command in sorted(found):
        if command not in commands:
            commands.append(command)
    return commands


def openai_like(body: dict) -> tuple[int, dict]:
    """Answers like a hosted model that can call tools: the tool probe gets its call, the rest an answer."""
    if any(t["function"]["name"] == "get_time" for t in body.get("tools") or []):
        return 200, completion(tool_calls=[tool_call("get_time", {"city": "Bern"})])
    return 200, completion("1 Die Bearbeitung von Personendaten richtet sich nach diesem Gesetz.")


def check(command: str, done: subprocess.CompletedProcess) -> str:
    """What the command must have done; "" when it did."""
    out = done.stdout + done.stderr
    if done.returncode != 0:
        return f"exit {done.returncode}"
    expected = {
        "run --help": ["--langs", "--systems", "--retry-errors"],
        "smollm2-135m/pit": [
            "smollm2-135m/pit [de]: 2 answered, 0 errored",
            "benchmark: ok",
            "hf_dataset: not published (--limit 2: a partial run",
        ],
        "gpt/pit,gpt/agentic": [
            "gpt/pit [de]: 9 answered, 0 errored",
            "gpt/agentic [fr]: 1 answered, 0 errored",
            "hf_dataset: ok",
        ],
        "compare gpt/pit gpt/agentic": ["gpt/pit vs gpt/agentic on 10 shared items", "exact McNemar p ="],
        "--source live": [
            "build [de]: ok",
            "build [it]: ok",
            "benchmark: ok",
            "hf_dataset: not published (--sr-numbers 235.1,220: a partial run",
        ],
        "nightly --changed": ["catalog: no catalog change since the last build"],
        "nightly": ["hf_dataset: ok", "nightly: ok"],
    }
    key = next((k for k in expected if k in command), None)
    if key is None:
        return "no check for this README command: add one"
    missing = [text for text in expected[key] if text not in out]
    return f"missing {missing}" if missing else ""


def test_every_readme_command_works_as_written(tmp_path):
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 6, commands  # the parser does see the README's commands
    project = copy_project(tmp_path / "project")
    fedlex, model = FakeFedlex(), ScriptedServer(openai_like)
    try:
        fedlex.graph, files = sample_graph(load_sample_catalog(SAMPLE), fedlex.base_url)
        fedlex.files = {path: src.read_bytes() for path, src in files.items()}
        # As a shell with the venv activated (for the README's bare `python -m ...`) and the example's exports.
        env = plain_env(
            PATH=f"{project / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
            CHPIT_SPARQL_URL=fedlex.endpoint,
            OPENROUTER_API_KEY="sk-loopback",
            PRICE_IN="1.25",
            PRICE_OUT="10",
        )
        failures = []
        for command in commands:
            done = subprocess.run(
                ["bash", "-c", command.replace(HOSTED, model.base_url)],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            problem = check(command, done)
            if problem:
                failures.append(f"{command}\n  -> {problem}\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    finally:
        fedlex.close()
        model.close()
    assert not failures, "\n\n".join(failures)
    assert model.hits and fedlex.queries  # both stand-ins were really asked
