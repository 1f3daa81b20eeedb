"""The `hf` family's layers: forward hooks on each decoder layer and on the attention and MLP inside it, read at
one position of one forward pass; the logit lens is the model's own final norm and head on each layer's output.

    capture = hf_capture(model, path_ids)     # a transformers causal LM (HfBackend.model), any dtype or device

Rows, in model order: `embed` (the token embeddings, layer -1), then per decoder layer i `layers.i.attn`,
`layers.i.mlp` (parts) and `layers.i` (the layer's output, the residual stream after it). Every vector is
copied to float64 on the CPU, so configurations of any dtype and device compare as numbers.
"""

from __future__ import annotations

from oracle.localize.compare import LayerCapture, LayerOutput

__all__ = ["HF_LENS", "hf_capture", "hf_parts"]

HF_LENS = "the model's own final norm and lm_head on each layer's output (logit lens)"


def _first(output):
    """A module's output tensor: decoder layers and attention return tuples in some transformers releases."""
    return output[0] if isinstance(output, (tuple, list)) else output


def hf_parts(model) -> list[tuple[str, int, bool, object]]:
    """(row name, layer index, whole layer?, module) of every hooked module, in model order."""
    inner = model.get_decoder() if hasattr(model, "get_decoder") else model.model
    out = [("embed", -1, False, inner.embed_tokens)]
    for i, layer in enumerate(inner.layers):
        attn = getattr(layer, "self_attn", None)
        mlp = getattr(layer, "mlp", None)
        out += [(f"layers.{i}.attn", i, False, attn)] if attn is not None else []
        out += [(f"layers.{i}.mlp", i, False, mlp)] if mlp is not None else []
        out.append((f"layers.{i}", i, True, layer))
    return out


def hf_capture(model, path_ids: list[int], *, position: int = -1) -> LayerCapture:
    """Every hooked module's output at `position` of one forward pass over `path_ids`."""
    import torch

    parts = hf_parts(model)
    seen: dict[str, object] = {}
    handles = []
    for name, _, _, module in parts:
        def hook(_module, _inputs, output, name=name):
            seen[name] = _first(output)[0, position].detach()
        handles.append(module.register_forward_hook(hook))
    device = next(model.parameters()).device
    try:
        with torch.inference_mode():
            model(torch.tensor([list(path_ids)], device=device), use_cache=False)
            inner = model.get_decoder() if hasattr(model, "get_decoder") else model.model
            lens = {}
            for name, _, whole, _ in parts:
                if whole or name == "embed":
                    logits = model.lm_head(inner.norm(seen[name][None, None, :]))
                    lens[name] = int(torch.argmax(logits[0, 0]))
    finally:
        for handle in handles:
            handle.remove()
    rows = tuple(LayerOutput(name=name, layer=layer, whole=whole,
                             vector=seen[name].to(device="cpu", dtype=torch.float64).numpy().copy(),
                             lens_top1=lens.get(name))
                 for name, layer, whole, _ in parts)
    return LayerCapture(rows, lens=HF_LENS)
