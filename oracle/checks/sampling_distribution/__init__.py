"""The sampling distribution (`--temperature` with `--sampling-check distribution`): the candidate's sampled
tokens and the reference's own samples, both scored under the reference model on the `--score-url` server and
compared as distributions (compare/distribution.py), for a candidate whose tokens may differ by design.

Its options (options.py: the sampled-decoding group), producer (producer.py), what it needs of the scoring server
(scorer.py), state (state.py: the report's `sampling`), report section (oracle/report/sampling.py) and this
descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers
from oracle.checks.sampling_distribution.options import DistributionSettings, add_options, settings_of
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


CHECK = CheckDescriptor(name="sampling_distribution", title="sampled decoding", order=42,
                        kinds=("sampling_distribution",), items=items, build=build, state=SamplingState,
                        add_options=add_options, settings=settings_of, defaults=DistributionSettings(),
                        sections=(section,))
