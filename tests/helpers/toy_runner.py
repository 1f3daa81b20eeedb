"""Runners with planted faults for tests/servers/test_python_runner.py: a toy model through the real runner protocol
(docs/runner.md), cheap enough to need no runtime, each factory one fault.

The toy model: the logits after a path are a fixed pseudo-random vector of its last token and its length, over the
embedded SmolLM2 vocabulary (its GGUF renders the prompts), so a greedy path is deterministic.
"""

from __future__ import annotations

import numpy as np

VOCAB = 49152


def _row(token: int, position: int) -> np.ndarray:
    return np.random.default_rng(token * 8191 + position).standard_normal(VOCAB).astype(np.float32) * 4


class ToyRunner:
    vocab_size = VOCAB

    def __init__(self) -> None:
        self.length, self.prompts = 0, 0

    def reset(self) -> None:
        self.length = 0
        self.prompts += 1

    def prefill(self, ids, start):
        rows = []
        for token in ids:
            self.length += 1
            rows.append(_row(int(token), self.length))
        return np.stack(rows)

    def step(self, token):
        self.length += 1
        return _row(int(token), self.length)


class WrongSize(ToyRunner):
    def step(self, token):
        return super().step(token)[:-1]  # one logit short


class RaisesOnSecondPrompt(ToyRunner):
    def prefill(self, ids, start):
        if self.prompts == 2:  # run with --warmup=0: the first prompt, then the second
            raise RuntimeError("device lost (planted on the second prompt)")
        return super().prefill(ids, start)


class StringLogits(ToyRunner):
    def step(self, token):
        return [str(x) for x in super().step(token)[:4]]  # text, not numbers


class ExitsOnStep(ToyRunner):
    def step(self, token):
        raise SystemExit(3)  # a runner that calls sys.exit: named, never the end of the gate


class ChunkDrift(ToyRunner):
    def prefill(self, ids, start):
        rows = super().prefill(ids, start)
        if start > 0:  # a later chunk: a planted bug that moves the top token
            rows[:, 7] += 100.0
        return rows


def toy():
    return ToyRunner()


def wrong_size():
    return WrongSize()


def raises_on_second_prompt():
    return RaisesOnSecondPrompt()


def string_logits():
    return StringLogits()


def exits_on_step():
    return ExitsOnStep()


def chunk_drift():
    return ChunkDrift()


def factory_fails(device="npu"):
    raise RuntimeError(f"no {device} device here")


class LastOnly:
    """A tiny runner whose prefill gives the last position only (oracle then feeds one prefix per position)."""

    vocab_size = 4

    def reset(self):
        self.seen = []

    def prefill(self, ids, start):
        self.seen += list(ids)
        return np.array([len(self.seen), 0.0, 1.0, sum(self.seen) % 3], dtype=np.float32)

    def step(self, token):
        return self.prefill([token], len(self.seen))


def last_only():
    return LastOnly()


class LayeredToy(ToyRunner):
    """A toy model with layers (docs/localize.md's planted-layer control): token embeddings through LAYERS residual
    layers h += tanh(W_l (h + mean of the path's h so far)), the logits the embeddings' dot products with the last
    h. `perturb=k` flips the sign of layer k's weights, so exactly layer k and those after it compute otherwise.
    Its state is each layer's running sum of h, so a step costs one position (the chunked-prefill ladder's long
    prompts stay cheap)."""

    LAYERS, WIDTH = 6, 16

    def __init__(self, perturb: int | None = None) -> None:
        super().__init__()
        rng = np.random.default_rng(54)
        self.embed = rng.standard_normal((VOCAB, self.WIDTH)).astype(np.float32)
        self.weights = [rng.standard_normal((self.WIDTH, self.WIDTH)).astype(np.float32) / 4
                        for _ in range(self.LAYERS)]
        if perturb is not None:
            self.weights[perturb] = -self.weights[perturb]
        self.sums, self.count = np.zeros((self.LAYERS, self.WIDTH), np.float32), 0

    def reset(self) -> None:
        super().reset()
        self.sums, self.count = np.zeros((self.LAYERS, self.WIDTH), np.float32), 0

    def _forward(self, ids, sums: np.ndarray, count: int) -> list[np.ndarray]:
        """Each layer's output for the new ids on top of the state (sums, count); the sums move on in place."""
        h = self.embed[np.asarray(ids, dtype=np.int64)]
        seen = count + np.arange(1, len(h) + 1, dtype=np.float32)[:, None]
        out = []
        for k, w in enumerate(self.weights):
            causal = (sums[k] + np.cumsum(h, axis=0)) / seen
            sums[k] += h.sum(axis=0)
            h = h + np.tanh((h + causal) @ w.T)
            out.append(h)
        return out

    def layer_outputs(self, token_ids) -> dict[str, np.ndarray]:
        layers = self._forward(token_ids, np.zeros((self.LAYERS, self.WIDTH), np.float32), 0)
        return {f"layers.{k}": h for k, h in enumerate(layers)}

    def prefill(self, ids, start):
        last = self._forward(ids, self.sums, self.count)[-1]
        self.count += len(ids)
        return last @ self.embed.T * 4

    def step(self, token):
        return self.prefill([token], self.count)[-1]


def layered(perturb: str = ""):
    return LayeredToy(int(perturb) if perturb else None)
