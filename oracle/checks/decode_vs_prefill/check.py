"""The decode_vs_prefill check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/decode_vs_prefill/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.decode_vs_prefill.options import TITLE, DecodePrefillSettings, add_options, settings_of
from oracle.checks.decode_vs_prefill.producer import DecodePrefillChecks
from oracle.checks.decode_vs_prefill.state import DecodePrefillState
from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers
from oracle.logits import dvp_report as section

__all__ = ["CHECK", "DecodePrefillChecks", "DecodePrefillSettings", "DecodePrefillState"]


def items(plan) -> list[CheckItem]:
    """decode-vs-prefill with --logits; chunked-prefill (which reads its scored modes, or scores them) where the
    backend feeds any chunk and --prefill-chunks names a size."""
    out = []
    if plan.options.logits:
        out.append(CheckItem("decode-vs-prefill", "decode_vs_prefill", order=43))
    sizes = plan.options.check("decode_vs_prefill").chunks
    if plan.capabilities.chunked_prefill and any(isinstance(size, int) for size in sizes):
        out.append(CheckItem("chunked-prefill", "chunked_prefill", order=44))
    return out


def build(parts: CheckParts) -> Producers:
    dvp = DecodePrefillChecks(parts.plan, parts.recorder, parts.prompts, parts.state, served=parts.chunk)
    return Producers({"decode_vs_prefill": dvp.check, "chunked_prefill": dvp.chunked_check})


CHECK = CheckDescriptor(name="decode_vs_prefill", title=TITLE, order=43,
                        kinds=("decode_vs_prefill", "chunked_prefill"), items=items, build=build,
                        state=DecodePrefillState, add_options=add_options, settings=settings_of,
                        defaults=DecodePrefillSettings(), sections=(section,))
