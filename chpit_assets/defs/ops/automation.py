"""build_report follows the per-language runs by Declarative Automation.

The schedule and the sensor launch language partitions of the build job only;
build_report joins every language, so it must wait for them rather than race
them. Its condition: some core_split partition has a new data version since
build_report was last requested or materialised, and no core_split partition is
still being built. An unchanged nightly (same data versions) does not rewrite it.
Evaluated by `chpit_automation`, the code location's automation sensor.
"""

import dagster as dg

REPORT_AUTOMATION = (
    dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed()).since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("a core split changed, no language in progress")

automation_sensor = dg.AutomationConditionSensorDefinition(
    "chpit_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Declarative Automation: materialises build_report once every language build that changed a core "
    "split has finished (the only asset with an automation condition).",
)
