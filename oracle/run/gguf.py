"""Read a GGUF file's metadata (no tensors) and build a `tokenizers` tokenizer from it.

    meta = gguf_metadata("model.gguf"); meta["llama.context_length"]
    tok = tokenizer_from_gguf("model.gguf")  # BPE (gpt2-style) vocabularies only
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

__all__ = ["GGUFError", "context_length", "gguf_context_length", "gguf_metadata", "tokenizer_from_gguf"]

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    pass


def _read(f: BinaryIO, fmt: str):
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise GGUFError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _string(f: BinaryIO) -> str:
    n = _read(f, "<Q")
    return f.read(n).decode("utf-8", errors="replace")


def _value(f: BinaryIO, vtype: int):
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == _STRING:
        return _string(f)
    if vtype == _ARRAY:
        itype, count = _read(f, "<I"), _read(f, "<Q")
        return [_value(f, itype) for _ in range(count)]
    raise GGUFError(f"unknown GGUF value type {vtype}")


def gguf_metadata(path: str | Path) -> dict:
    """All key/value metadata of a GGUF file (versions 2 and 3)."""
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise GGUFError(f"{path}: not a GGUF file")
        version = _read(f, "<I")
        if version < 2:
            raise GGUFError(f"{path}: GGUF version {version} is too old")
        _read(f, "<Q")  # tensor count
        kv_count = _read(f, "<Q")
        return {_string(f): _value(f, _read(f, "<I")) for _ in range(kv_count)}


def context_length(path: str | Path) -> int | None:
    meta = gguf_metadata(path)
    arch = meta.get("general.architecture")
    value = meta.get(f"{arch}.context_length")
    return int(value) if value is not None else None


def tokenizer_from_gguf(path: str | Path):
    """A byte-level BPE `tokenizers.Tokenizer` from the GGUF's own vocabulary and merges."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    meta = gguf_metadata(path)
    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise GGUFError(f"{path}: tokenizer model {meta.get('tokenizer.ggml.model')!r} is not byte-level BPE; "
                        "pass a tokenizer.json with --tokenizer, or let the server tokenize")
    tokens = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta.get("tokenizer.ggml.merges", [])]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    types = meta.get("tokenizer.ggml.token_type", [])
    specials = [tokens[i] for i, t in enumerate(types) if t in (3, 4)]  # control and user-defined
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    return tok


def gguf_context_length(path: str | Path) -> int | None:
    """`<arch>.context_length` from a GGUF file's metadata, or None when unreadable."""
    try:
        return context_length(path)
    except (OSError, GGUFError, ValueError, struct.error):
        return None
