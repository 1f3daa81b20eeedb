"""Which server runs which item under pytest-xdist, and the scheduler that keeps to it.

Worker gwK owns server K (its --oracle-url entry, or the server it launched). The placement is a pure
function of the collected node ids and the worker count, so the controller (which schedules) and
every worker (which must know its own prompts before the first item) compute the same map:

    place(["oracle::tokens[a]", "oracle::tokens[b]", "oracle::cache-zero[server1]", ...], 2, specs)

where specs maps each gate item's node id to its `ItemSpec` (kind, key, deal), built from the plan:
nothing is parsed back out of a node id.

- prompt items (a check's items placed "prompt": tokens / record / run) are dealt round-robin: each worker runs
  its share at c1;
- items placed "server" (`cache-zero[serverK]`, `speculation[serverK]`) prove server K's own run, so they go to
  worker K-1;
- an item of a check kind's own deal (`CheckItem.deal`) is dealt round-robin in that deal, each whole to one
  worker (a ladder level: its waves must hit one server); an item kept `together` with its kind goes where the
  first of its kind was dealt (later boots: a boot sequence restarts one server);
- every other item (the canaries; a repeat burst is one item) is dealt round-robin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from xdist.report import report_collection_diff
from xdist.scheduler.each import EachScheduling

from oracle.checks.per_server import server_label

__all__ = ["GATE_PREFIX", "PinnedScheduling", "place", "server_label", "worker_index"]

GATE_PREFIX = "oracle::"


def worker_index(worker_id: str) -> int:
    """'gw3' -> 3 (pytest-xdist's worker ids)."""
    return int(worker_id.removeprefix("gw"))


def place(nodeids: Sequence[str], workers: int, specs: Mapping[str, object]) -> list[int]:
    """The worker index for each node id, in order; specs: node id -> the gate item's spec (kind, key, placed)."""
    out: list[int] = []
    dealt: dict[str, int] = {}  # deal -> items dealt from it ("prompt", "other", a check kind's own)

    def deal(name: str) -> int:
        w = dealt.get(name, 0) % workers
        dealt[name] = dealt.get(name, 0) + 1
        return w

    together: dict[str, int] = {}  # item kind -> the worker its first item was dealt
    for nodeid in nodeids:
        spec = specs.get(nodeid)
        kind, placed = (spec.kind, spec.placed) if spec is not None else (None, None)
        if placed == "prompt":  # each prompt's c1 item: a worker runs the prompts of its share
            out.append(deal("prompt"))
        elif placed == "server" and spec.key is not None:  # that server's own proof
            out.append(spec.key % workers)
        elif spec is not None and spec.together:
            if kind not in together:
                together[kind] = deal(spec.deal or "other")  # the next worker of its deal
            out.append(together[kind])
        elif spec is not None and spec.deal is not None:
            out.append(deal(spec.deal))
        else:
            out.append(deal("other"))
    return out


class PinnedScheduling(EachScheduling):
    """Send each worker exactly the items `place` gives it, in collection order; nothing moves.

    A worker that dies is not replaced: its server's items stay unrun and the merged report says so
    (moving them to another server would change what they prove).
    """

    def __init__(self, config, log, *, specs: Mapping[str, object]) -> None:
        super().__init__(config, log)
        self.specs = specs

    def schedule(self) -> None:
        assert self.collection_is_completed
        collections = list(self.node2collection.items())
        first_node, first = collections[0]
        for node, collection in collections[1:]:
            if collection != first:
                raise pytest.UsageError("oracle: the xdist workers collected different items, so they cannot share "
                                        "one gate:\n" + report_collection_diff(first, collection, first_node.gateway.id,
                                                                               node.gateway.id))
        placement = place(first, self.numnodes, self.specs)
        for node, pending in self.node2pending.items():
            if node in self._started:
                continue
            mine = worker_index(node.gateway.id)
            pending[:] = [i for i, w in enumerate(placement) if w == mine]
            if pending:
                node.send_runtest_some(list(pending))
            node.shutdown()
            self._started.append(node)

    def add_node_collection(self, node, collection: Sequence[str]) -> None:
        if self.collection_is_completed:
            return  # a replacement worker: it gets no items (see the class docstring)
        super().add_node_collection(node, collection)

    def remove_node(self, node) -> str | None:
        pending = self.node2pending.pop(node)
        return self.node2collection[node][pending[0]] if pending else None
