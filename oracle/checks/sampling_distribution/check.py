"""The sampling_distribution check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/sampling_distribution/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers
from oracle.checks.sampling_distribution.options import TITLE, DistributionSettings, add_options, settings_of
from oracle.checks.sampling_distribution.producer import SamplingChecks
from oracle.checks.sampling_distribution.state import SamplingState
from oracle.report import sampling as section

__all__ = ["CHECK", "DistributionSettings", "SamplingChecks", "SamplingState"]


def items(plan) -> list[CheckItem]:
    """Against a reference: its scoring requests go to the --score-url server, after the suite's logits."""
    return [CheckItem("sampling-distribution", "sampling_distribution")] if plan.distribution_gate else []


def build(parts: CheckParts) -> Producers:
    checks = SamplingChecks(parts.plan, parts.recorder, parts.prompts, parts.state)
    return Producers({"sampling_distribution": checks.distribution_check})


CHECK = CheckDescriptor(name="sampling_distribution", title=TITLE, order=42,
                        kinds=("sampling_distribution",), items=items, build=build, state=SamplingState,
                        add_options=add_options, settings=settings_of, defaults=DistributionSettings(),
                        sections=(section,))
