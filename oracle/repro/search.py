"""The search for the smallest request that still diverges, and the servers it replays probes on.

    result = search("code-hashmap", context=("code-palindrome",), max_tokens=32, probe=probe, budget=24)
    result.prompts, result.max_tokens, result.split, result.proven

A probe is one fresh server start (`Replayer.probe`): the chosen prompts sent one at a time in the gate's order,
as the same token ids, greedy, and the target prompt's first divergence from the reference within max_tokens.
The search first sends the target alone; only when that does not diverge are the prompts the gate sent before it
searched by ddmin (`bisect/ddmin.py`) for the fewest that still make it diverge. Then max_tokens shrinks to the
shortest length that still diverges: the split's position + 1 first, else a binary search. `Replayer.verify`
sends the final request (as `Backend.one_shot` spells it, the body the curl command carries) twice on one more
fresh server. Never retries: a server that does not come up raises TargetError, a failed request RequestFailed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Sequence

import httpx

from oracle.backends import RequestFailed
from oracle.backends.base import CompletionRequest
from oracle.backends.http import send_one_shot
from oracle.bisect.ddmin import ddmin
from oracle.compare.tokens import first_divergence
from oracle.repro.source import ReproSource
from oracle.run.prompting import RenderedPrompt
from oracle.run.runner import run_waves
from oracle.run.suite import Prompt
from oracle.store.records import Condition
from oracle.targets import make_target

__all__ = ["Probe", "Replayer", "SearchResult", "Verified", "search", "split_within"]

ProbeFn = Callable[[tuple[str, ...], int], int | None]  # (prompts, max_tokens) -> the target's split, or None


@dataclass(frozen=True)
class Probe:
    number: int
    step: str  # "alone", "context", "prompts" (ddmin), "length"
    prompts: tuple[str, ...]
    max_tokens: int
    split: int | None  # the target's first divergence (None: it matched the reference)

    @property
    def diverged(self) -> bool:
        return self.split is not None

    def as_json(self) -> dict:
        return {"number": self.number, "step": self.step, "prompts": list(self.prompts),
                "max_tokens": self.max_tokens, "split": self.split,
                "verdict": "diverged" if self.diverged else "exact"}


@dataclass
class SearchResult:
    reproduced: bool  # the divergence came back in some probe
    prompts: tuple[str, ...]  # the smallest set found, the target last
    max_tokens: int
    split: int | None
    proven: bool  # False: the budget ran out, the result is the smallest seen
    probes: list[Probe] = field(default_factory=list)


class _Spent(Exception):
    pass


def split_within(expected: Sequence[int], observed: Sequence[int], max_tokens: int) -> int | None:
    """The first position < max_tokens where the observed tokens leave the expected ones (one ending early
    counts), or None."""
    return first_divergence(list(expected[:max_tokens]), list(observed[:max_tokens]))


def search(target: str, *, context: Sequence[str], max_tokens: int, probe: ProbeFn, budget: int,
           probes: list[Probe] | None = None) -> SearchResult:
    """probes: the list each finished probe is appended to (the caller's, so an interrupted search keeps them)."""
    probes = [] if probes is None else probes
    seen: dict[tuple[tuple[str, ...], int], int | None] = {}

    def run(prompts: tuple[str, ...], tokens: int, step: str) -> int | None:
        key = (prompts, tokens)
        if key not in seen:
            if len(probes) >= budget:
                raise _Spent
            seen[key] = probe(prompts, tokens)
            probes.append(Probe(len(probes) + 1, step, prompts, tokens, seen[key]))
        return seen[key]

    best = (tuple(context) + (target,), max_tokens)
    try:
        if run((target,), max_tokens, "alone") is not None:
            best = ((target,), max_tokens)
        elif not context or run(best[0], max_tokens, "context") is None:
            return SearchResult(False, best[0], max_tokens, None, True, probes)
        else:
            found = ddmin(list(context), lambda sub: run(tuple(sub) + (target,), max_tokens, "prompts") is not None,
                          budget=max(budget - len(probes), 0))
            best = (tuple(found.minimal) + (target,), max_tokens)
            if not found.proven:
                raise _Spent
        best = (best[0], _shortest(best[0], max_tokens, seen[best], run))
    except _Spent:  # the shortest diverging length seen for the best prompt set
        best = min((k for k, v in seen.items() if k[0] == best[0] and v is not None), key=lambda k: k[1],
                   default=best)
        return SearchResult(True, best[0], best[1], seen.get(best), False, probes)
    return SearchResult(True, best[0], best[1], seen[best], True, probes)


def _shortest(prompts: tuple[str, ...], max_tokens: int, split: int, run) -> int:
    """The fewest tokens that still diverge: split + 1 when that does, else a binary search above it."""
    good, bad = split, max_tokens  # split tokens cannot show a split at index `split`
    if split + 1 < max_tokens:
        if run(prompts, split + 1, "length") is not None:
            return split + 1
        good = split + 1
    while bad - good > 1:
        mid = (good + bad) // 2
        if run(prompts, mid, "length") is not None:
            bad = mid
        else:
            good = mid
    return bad


@dataclass
class Verified:
    requests: list[tuple[str, dict]]  # (route, body) in the order sent; the final request last
    observed: list[list[int]]  # the final request's completion ids, each time it was sent
    texts: list[str]  # and its text
    decoded: dict[int, str]  # token id -> its text, for the ids shown around the split
    command: str  # the candidate's command as started ({port} kept), its environment in front
    log: str | None


class Replayer:
    """Fresh servers of the candidate's launch command, one per probe."""

    def __init__(self, source: ReproSource, *, log_dir: Path, request_timeout: float = 600.0,
                 launch_timeout: float = 600.0) -> None:
        self.source, self.log_dir = source, log_dir
        self.request_timeout, self.launch_timeout = request_timeout, launch_timeout
        self.starts = 0
        self.current = None  # the target running now (stopped on the way out, also on Ctrl-C)

    def _start(self, name: str):
        self.starts += 1
        s = self.source
        options = SimpleNamespace(backend=s.backend, urls=(), launch=s.launch, model=s.model,
                                  server_args=s.server_args, request_timeout=self.request_timeout,
                                  launch_timeout=self.launch_timeout, family_settings=())
        target = make_target(options, worker=0, log_dir=self.log_dir / f"{self.starts:02d}-{name}")
        self.current = target
        return target, target.up()

    def prompt(self, pid: str, max_tokens: int) -> RenderedPrompt:
        return RenderedPrompt(Prompt(pid, "", (), max_tokens), "", self.source.prompt_ids[pid])

    def probe(self, prompts: tuple[str, ...], max_tokens: int) -> int | None:
        """One start: the prompts in order (the target, last, at max_tokens; the others at the gate's length)."""
        try:
            _, backend = self._start(f"probe-{len(prompts)}p-{max_tokens}t")
            s = self.source
            waves = [[(self.prompt(p, max_tokens if p == s.target else s.max_tokens), 0)] for p in prompts]
            result = run_waves(backend, waves, Condition(boot=self.starts), logprobs=s.logprobs, seed=s.seed)
        finally:
            self.stop()
        record = next(r for r in result.records if r.id == s.target)
        return split_within(s.expected.completion_ids, record.completion_ids, max_tokens)

    def verify(self, prompts: tuple[str, ...], max_tokens: int, *, repeats: int = 2,
               shown: Callable[[list[int]], list[int]] = lambda ids: ids) -> Verified:
        """One start: the context requests once, then the final request `repeats` times, each as `one_shot`
        spells it (not streamed); `shown(observed)` names the ids whose text the report shows."""
        s = self.source
        try:
            target, backend = self._start("verify")
            requests = []
            for pid in prompts:
                tokens = max_tokens if pid == s.target else s.max_tokens
                shot = backend.one_shot(CompletionRequest(s.prompt_ids[pid], tokens, s.logprobs, s.seed))
                if shot is None:
                    raise RequestFailed(f"the {s.backend} backend's route has no one-shot request to replay")
                requests.append(shot)
            for r in requests[:-1]:
                send_one_shot(target.server.url, *r, timeout_s=self.request_timeout)
            finals = [send_one_shot(target.server.url, *requests[-1], timeout_s=self.request_timeout)
                      for _ in range(repeats)]
            read = [backend.one_shot_ids(a) for a in finals]
            observed = [ids for ids, _ in read]
            wanted = sorted({t for t in shown(observed[0])})
            decoded = _decoded(backend, wanted)
            command = _with_env(target.server.configured_command, target.server.env)
            log = str(target.log_path) if target.log_path else None
        finally:
            self.stop()
        return Verified(requests, observed, [t for _, t in read], decoded, command, log)

    def stop(self) -> None:
        target, self.current = self.current, None
        if target is not None:
            target.stop()


def _decoded(backend, ids: list[int]) -> dict[int, str]:
    """Each id's text as the server detokenizes it; {} when it cannot (the report then shows ids only)."""
    try:
        return {t: backend.detokenize([t]) for t in ids}
    except (RequestFailed, OSError, ValueError, httpx.HTTPError):
        return {}


def _with_env(command: str, env: dict[str, str] | None) -> str:
    """The command as a shell runs it by hand: the environment oracle gave it in front, `exec ` dropped."""
    command = command.removeprefix("exec ")
    if not env:
        return command
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + command
