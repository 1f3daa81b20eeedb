"""Send a suite's token-id prompts to a backend and collect complete records.

Requests go in waves (one at a time is a wave of one), one connection per in-flight request.
Requests are never retried: a failure stops the run, and every record finished before it is
kept (the callback has already saved it).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

from oracle.backends import Backend, CompletionRequest, Counters, RequestFailed
from oracle.backends.base import RouteMissing
from oracle.backends.conformance import check_completion, check_text
from oracle.run.overlap import achieved_concurrency
from oracle.run.prompting import RenderedPrompt
from oracle.run.sampling import Sampling
from oracle.store.records import Condition, Record

__all__ = ["WriteFailed", "RunInterrupted", "RunResult", "one_at_a_time", "run_waves"]

LOAD_POLL_S = 0.2  # server-side gauge sampling; each sample is a /metrics request the server must answer


class WriteFailed(RuntimeError):
    """A finished request whose record or report could not be written (the disk full, the folder gone): the run
    stops, what was written stays."""


class RunInterrupted(RuntimeError):
    """A request failed mid-run; `finished` holds the records completed before it."""

    def __init__(self, message: str, finished: list[Record], missing: list[str]) -> None:
        super().__init__(message)
        self.finished = finished
        self.missing = missing


@dataclass
class RunResult:
    condition: Condition
    records: list[Record]
    counters_before: Counters | None
    counters_after: Counters | None
    wall_s: float = 0.0
    wave_overlap: list[int] = field(default_factory=list)  # achieved concurrency of each wave (client side)
    server_peak: int | None = None  # most requests the server reported processing at once, when it reports it

    @property
    def counters_delta(self) -> Counters | None:
        if self.counters_before is None or self.counters_after is None:
            return None
        return self.counters_after.delta(self.counters_before)

    def log_row(self, **extra) -> dict:
        """The report's row for this condition's run (identity.json `runs`): wall time, requests, the counters
        around it."""
        def counters(c):
            return c.as_dict() if c is not None else None

        return {"condition": self.condition.key, "wall_s": round(self.wall_s, 3), "requests": len(self.records),
                **extra, "counters_before": counters(self.counters_before),
                "counters_after": counters(self.counters_after)}


async def client_complete(backend: Backend, client, p: RenderedPrompt, *, logprobs: int, seed: int,
                          first_token: asyncio.Event | None = None, sampling: Sampling | None = None,
                          vocab: int | None = None):
    # A sampled run's prompt carries its own seed (run/sampling.py); greedy requests send the run's.
    sampled = {} if sampling is None else {"temperature": sampling.temperature, "top_p": sampling.top_p}
    request = CompletionRequest(prompt_ids=p.ids, max_tokens=p.prompt.max_tokens, logprobs=logprobs,
                                seed=seed if p.prompt.seed is None else p.prompt.seed, **sampled,
                                messages=tuple(p.prompt.messages), first_token=first_token)
    c = await backend.complete(client, request)
    # The answer checked against the request: garbage stops the run (not-run), never reaches a verdict.
    check_completion(c, request, vocab=vocab, where=f"the answer to prompt {p.id!r}")
    if c.prompt_ids is not None and tuple(c.prompt_ids) != p.ids:
        raise RequestFailed(f"the server echoed other prompt token ids than were sent "
                            f"({len(c.prompt_ids)} vs {len(p.ids)} tokens)")
    return c


def one_at_a_time(prompts: Sequence[RenderedPrompt]) -> list[list[tuple[RenderedPrompt, int]]]:
    """Waves of one: every prompt once, each sent when the one before it has finished."""
    return [[(p, 0)] for p in prompts]


async def _poll_load(backend: Backend, peak: list[int], stop: asyncio.Event) -> None:
    """Sample the server's own count of running requests until stop is set (None: it has no such gauge)."""
    if not backend.capabilities.load_gauge:
        return
    while not stop.is_set():
        value = await asyncio.to_thread(backend.load)
        if value is None:
            return
        peak.append(value)
        try:
            await asyncio.wait_for(stop.wait(), LOAD_POLL_S)
        except asyncio.TimeoutError:
            pass


async def _waves(backend: Backend, waves: Sequence[Sequence[tuple[RenderedPrompt, int]]], condition: Condition, *,
                 logprobs: int, seed: int, on_record: Callable[[Record], None], result: RunResult,
                 staggered: bool = False, sampling: Sampling | None = None) -> None:
    width = max((len(w) for w in waves), default=1)
    loop = asyncio.get_running_loop()
    vocab = await asyncio.to_thread(backend.vocab_size)  # read once per run (the server states it, or None)
    # Ids and text agree by the server's own detokenizer; an in-process backend writes its text from its ids.
    detokenizer = [None if backend.capabilities.in_process else backend.detokenize]
    # Records are saved on one writer thread, in order, so disk writes never stall the other streams.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="oracle-records") as writer:
        async with backend.async_client(connections=width) as client:

            async def one(p: RenderedPrompt, index: int, after: asyncio.Event | None = None,
                          first: asyncio.Event | None = None) -> Record:
                try:
                    if after is not None:  # staggered: sent once the request before it has its first token
                        await after.wait()
                    started = time.time()
                    c = await client_complete(backend, client, p, logprobs=logprobs, seed=seed, first_token=first,
                                              sampling=sampling, vocab=vocab)
                finally:
                    if first is not None:  # a request that failed or streamed nothing releases the next one
                        first.set()
                finished = time.time()
                await _agree(c, detokenizer, where=f"the answer to prompt {p.id!r}")
                rec = Record.from_completion(p.id, p.ids, condition, c, started_at=started, finished_at=finished,
                                             repeat=index)
                try:
                    await loop.run_in_executor(writer, on_record, rec)
                except OSError as exc:
                    raise WriteFailed(f"writing {exc.filename or 'its record'} failed ({exc.strerror or exc}); "
                                      "free space on that disk or give --report-dir a writable folder") from exc
                result.records.append(rec)
                return rec

            await _send_waves(backend, waves, condition, one, result, staggered)


async def _agree(c, detokenizer: list, *, where: str) -> None:
    """The answer's text against its ids (conformance.check_text), after the request's clock has stopped; a server
    without a detokenizer route (some OpenAI-compatible servers) cannot be asked, for the rest of the run."""
    if detokenizer[0] is None:
        return
    try:
        await asyncio.to_thread(check_text, c, detokenizer[0], where=where)
    except RouteMissing:
        detokenizer[0] = None


async def _send_waves(backend: Backend, waves, condition: Condition, one, result: RunResult,
                      staggered: bool = False) -> None:
    """Each wave at once (staggered: each request once the one before it has its first token), the next wave only
    when the last has finished; stop at the first failed wave."""
    for number, wave in enumerate(waves):
        firsts = [asyncio.Event() for _ in wave] if staggered else [None] * len(wave)
        afters = [None] + firsts[:-1]
        stop, samples = asyncio.Event(), []
        # A lone request overlaps nothing: the server's gauge is sampled only for waves of several.
        poller = asyncio.create_task(_poll_load(backend, samples, stop)) if len(wave) > 1 else None
        outcomes = await asyncio.gather(*(one(p, i, a, f) for (p, i), a, f in zip(wave, afters, firsts)),
                                        return_exceptions=True)
        stop.set()
        if poller is not None:
            await poller
        if samples:
            result.server_peak = max(result.server_peak or 0, max(samples))
        failed = [(p, o) for (p, _), o in zip(wave, outcomes) if isinstance(o, BaseException)]
        if failed:
            done = {(r.id, r.repeat) for r in result.records}
            missing = [p.id if i == 0 else f"{p.id}~{i}" for w in waves for p, i in w if (p.id, i) not in done]
            p, exc = failed[0]
            if not isinstance(exc, (RequestFailed, WriteFailed)):
                raise exc
            more = f" (and {len(failed) - 1} more failed in the same wave)" if len(failed) > 1 else ""
            sent = sum(len(w) for w in waves[:number]) + [q for q, _ in wave].index(p) + 1
            total = sum(len(w) for w in waves)
            raise RunInterrupted(f"prompt {p.id!r} ({condition.key}, request {sent} of {total}): {exc}{more}",
                                 list(result.records), missing) from exc
        result.wave_overlap.append(achieved_concurrency(outcomes))


def run_waves(backend: Backend, waves: Sequence[Sequence[tuple[RenderedPrompt, int]]], condition: Condition, *,
              logprobs: int, seed: int, on_record: Callable[[Record], None] = lambda r: None,
              staggered: bool = False, sampling: Sampling | None = None) -> RunResult:
    """Send each wave's requests all at once (one connection each), the waves one after another; staggered: each
    request of a wave once the one before it has streamed its first token, so its prefill runs beside the earlier
    requests' decode (the mixed-batch condition).

    (prompt, index) pairs: index numbers the request within the condition, so a prompt sent
    twice keeps two records. Counters are read right around the whole condition. sampling: the run's sampled
    settings (None: greedy), each prompt with its own seed.
    """
    result = RunResult(condition, [], backend.counters(), None)
    t0 = time.perf_counter()
    asyncio.run(_waves(backend, waves, condition, logprobs=logprobs, seed=seed, on_record=on_record, result=result,
                       staggered=staggered, sampling=sampling))
    result.wall_s = time.perf_counter() - t0
    result.counters_after = backend.counters()
    return result
