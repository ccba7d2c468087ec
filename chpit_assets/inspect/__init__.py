"""CH-PiT in Inspect (inspect_ai, issue 26): our systems, tools and scorer as an Inspect task
(`chpit_assets/inspect_tasks.py`), and chpit run logs to and from Inspect `.eval` logs.

Needs the optional extra: `pip install '.[inspect]'`. Nothing here is imported by the pipeline.
"""
