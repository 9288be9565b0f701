"""A step-level discrete-event simulation of the continuous-batching scheduler that
sizing/serve/load.py models analytically, written with SimPy (a test dependency; sizing/ never
imports it).

The engine (one replica) loops over iterations. Each iteration runs one token of every decoding
sequence and fills the rest of the token budget with prompt tokens, first come first served,
several prompts in one iteration when they fit (vLLM's chunked prefill); its time is one engine
iteration of the serving step model, ContinuousBatching.step (batching.engine_iteration), with
the decodes at their mean context (decode FLOPs and KV bytes are affine in the context, so the
mean gives the sum) and the prompt tokens at the replica's prompt (the mix's token-weighted one,
as the model takes them). A prompt whose
last chunk runs yields its first token at the end of that iteration and decodes from the next;
a request ends after O - 1 decode iterations. A prompt gets its KV blocks, ⌈(P + O)/B⌉, when its
first chunk is scheduled (no preemption; the queue waits while the cache is full). Arrivals are
Poisson; classes are drawn by their shares. Each request's TTFT, TPOT = (latency - TTFT)/(O - 1)
(vLLM's benchmark_serving) and latency are recorded; the first and last 10% of requests by
arrival are dropped (warm-up and drain)."""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

import simpy

from sizing.serve.batching import ContinuousBatching
from sizing.serve.requests import RequestMix


@dataclass
class _Request:
    arrival: float
    prompt: int
    output: int
    left: int  # prompt tokens not yet prefilled
    blocks: int
    first_token: float = math.nan
    done: float = math.nan
    k0: int = 0  # the iteration of its first decode


@dataclass
class _Engine:
    cb: ContinuousBatching
    env: simpy.Environment
    free_blocks: int
    waiting: deque = field(default_factory=deque)
    iteration: int = 0
    decoding: int = 0
    context_offset: int = 0  # Σ (P_i - k0_i + 1) over decoding sequences: contexts sum to this + D·k
    finishing: dict = field(default_factory=dict)  # iteration index -> requests whose last decode it is
    wake: simpy.Event | None = None
    done: int = 0

    def run(self):
        while True:
            if not self.decoding and not self.waiting:
                self.wake = self.env.event()
                yield self.wake
            chunks, taken = self._prefill_chunks()
            d, k = self.decoding, self.iteration
            context = round((self.context_offset + d * k) / d) if d else 0
            yield self.env.timeout(self.cb.step(d, context, sum(t for t, _ in chunks)).seconds)
            self._finish_decodes(k)
            self._finish_prefills(taken, k)
            self.iteration += 1

    def _prefill_chunks(self):
        spare = self.cb.token_budget - self.decoding
        chunks, taken = [], []
        for r in self.waiting:
            if spare <= 0:
                break
            if r.left == r.prompt:  # first chunk: the request's KV blocks, or wait (FCFS)
                if r.blocks > self.free_blocks:
                    break
                self.free_blocks -= r.blocks
            take = min(r.left, spare)
            chunks.append((take, r.prompt))
            taken.append((r, take))
            spare -= take
        return chunks, taken

    def _finish_decodes(self, k: int) -> None:
        for r in self.finishing.pop(k, ()):
            r.done = self.env.now
            self.done += 1
            self.decoding -= 1
            self.context_offset -= r.prompt - r.k0 + 1
            self.free_blocks += r.blocks

    def _finish_prefills(self, taken, k: int) -> None:
        for r, take in taken:
            r.left -= take
            if r.left == 0:  # the prefill yields the first token; decoding from the next iteration
                self.waiting.popleft()  # FCFS: a finished prompt is always at the head
                r.first_token = self.env.now
                r.k0 = k + 1
                self.decoding += 1
                self.context_offset += r.prompt - r.k0 + 1
                self.finishing.setdefault(k + r.output - 1, []).append(r)


def simulate(cb: ContinuousBatching, mix: RequestMix, rate: float, requests: int, seed: int = 1) -> dict:
    """Run `requests` Poisson arrivals at `rate`; TTFT, TPOT and latency of the middle 80%."""
    rng = random.Random(seed)
    env = simpy.Environment()
    engine = _Engine(cb, env, cb.blocks)
    block = cb.block_size
    log: list[_Request] = []

    def arrivals():
        classes = mix.classes
        weights = [c.share for c in classes]
        for _ in range(requests):
            yield env.timeout(rng.expovariate(rate))
            c = rng.choices(classes, weights)[0]
            r = _Request(env.now, c.prompt, c.output, c.prompt, math.ceil((c.prompt + c.output) / block))
            log.append(r)
            engine.waiting.append(r)
            if engine.wake is not None and not engine.wake.triggered:
                engine.wake.succeed()

    env.process(arrivals())
    env.process(engine.run())
    while engine.done < requests:
        env.step()
    kept = log[requests // 10 : requests - requests // 10]
    return {
        "ttft": [r.first_token - r.arrival for r in kept],
        "tpot": [(r.done - r.first_token) / (r.output - 1) for r in kept],
        "e2e": [r.done - r.arrival for r in kept],
        "output": [r.output for r in kept],
        "output_tokens_per_second": sum(r.output for r in kept) / (kept[-1].arrival - kept[0].arrival),
    }


def percentile(values: list[float], q: float) -> float:
    """The q-quantile, linear between order statistics (numpy's default)."""
    s = sorted(values)
    x = q * (len(s) - 1)
    i = math.floor(x)
    return s[i] if i + 1 >= len(s) else s[i] + (x - i) * (s[i + 1] - s[i])
