"""CH-PiT as Inspect tasks, one per mode of the registry (chpit_assets.runs.systems.MODES):

    inspect eval chpit_assets/inspect_tasks.py@pit --model openai-api/<provider>/<model>
    inspect eval chpit_assets/inspect_tasks.py@agentic_search_verify --model mockllm/model -T lang=de,fr
    inspect eval chpit_assets/inspect_tasks.py -T mode=closed      # the generic task, `chpit`

Task arguments (-T): lang (comma-separated), data_dir (default: data/), today (ISO date the tools
treat as today), slug (our system key's model slug; default: from the model name),
sample_per_lang, limit. Needs `pip install '.[inspect]'` and a build (`make run`).
"""

from __future__ import annotations

from inspect_ai import Task, task

from chpit_assets.inspect.task import chpit_task, task_name
from chpit_assets.runs.systems import ALL_MODES


@task
def chpit(
    mode: str = "pit",
    lang: str = "de",
    data_dir: str = "",
    today: str = "",
    slug: str = "",
    sample_per_lang: int = 0,
    limit: int = 0,
) -> Task:
    """Any registered mode, by name (`-T mode=agentic+verify`)."""
    return chpit_task(mode, lang, data_dir, today, slug, sample_per_lang, limit)


def _mode_task(mode: str):
    def mode_task(
        lang: str = "de", data_dir: str = "", today: str = "", slug: str = "", sample_per_lang: int = 0, limit: int = 0
    ) -> Task:
        return chpit_task(mode, lang, data_dir, today, slug, sample_per_lang, limit)

    mode_task.__doc__ = f"CH-PiT, mode {mode}."
    return task(name=task_name(mode))(mode_task)


# One task per registered mode: a new registry entry is a new task, with nothing to add here.
MODE_TASKS = {mode: _mode_task(mode) for mode in ALL_MODES}
globals().update({task_name(mode): fn for mode, fn in MODE_TASKS.items()})
