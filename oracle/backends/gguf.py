"""A GGUF file's metadata through `gguf`'s GGUFReader (llama.cpp's own reader), and a `tokenizers` tokenizer
built from it.

    meta = gguf_metadata("model.gguf"); meta["llama.context_length"]
    tok = tokenizer_from_gguf("model.gguf")  # BPE (gpt2-style) vocabularies only

No library builds a `tokenizers` tokenizer from a GGUF's own vocabulary (transformers does, but only by loading
the model); that part stays here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType

__all__ = ["GGUFError", "context_length", "gguf_context_length", "gguf_metadata", "tokenizer_from_gguf"]


class GGUFError(ValueError):
    pass


class _Reader(GGUFReader):
    """GGUFReader, reading arrays whole.

    The stock reader (gguf 0.19.0) makes numpy views of its memory map per array element, and per string two
    (length and bytes): a vocabulary of 49k tokens and 49k merges took it 4 s where the file's metadata is read
    in 0.1 s. Here an array of numbers is one view, and an array of strings one view per string made from a
    plain (not np.memmap) view of the map. Files of the other byte order, and arrays of arrays, keep the stock
    path. Upstream: ggml-org/llama.cpp pull 13378 (open).

    A field's parts differ from the stock reader's for arrays: an array of numbers is a single part (its
    `contents()` is the whole list; `contents(i)` is not the i-th value), an array of strings has no length parts.
    """

    def _get_field_parts(self, orig_offs: int, raw_type: int):
        if raw_type != GGUFValueType.ARRAY or self.byte_order != "I":
            return super()._get_field_parts(orig_offs, raw_type)
        raw_itype = self._get(orig_offs, np.uint32)
        alen = self._get(orig_offs + 4, np.uint64)
        itype, count, offs = GGUFValueType(int(raw_itype[0])), int(alen[0]), orig_offs + 12
        types = [GGUFValueType.ARRAY, itype]
        nptype = self.gguf_scalar_to_np.get(itype)
        if nptype is not None:
            values = self._get(offs, nptype, count)
            if len(values) != count:
                raise ValueError("truncated array")
            return 12 + int(values.nbytes), [raw_itype, alen, values], [2], types
        if itype == GGUFValueType.STRING:
            plain = self.data.view(np.ndarray)
            raw = memoryview(plain)
            parts: list = [raw_itype, alen]
            for _ in range(count):
                n = int.from_bytes(raw[offs:offs + 8], sys.byteorder)
                if offs + 8 + n > len(plain):
                    raise ValueError("truncated array")
                parts.append(plain[offs + 8:offs + 8 + n])
                offs += 8 + n
            return offs - orig_offs, parts, list(range(2, 2 + count)), types
        return super()._get_field_parts(orig_offs, raw_type)


def _text(part: np.ndarray) -> str:
    return part.tobytes().decode("utf-8", errors="replace")


def _value(field):
    if field.types[0] == GGUFValueType.STRING:
        return _text(field.parts[-1])
    if field.types[0] == GGUFValueType.ARRAY and field.types[-1] == GGUFValueType.STRING:
        return [_text(field.parts[i]) for i in field.data]
    return field.contents()


_FIX = ("re-download the model, or pass another .gguf (a Git LFS pointer, an HTML error page or an unfinished "
        "download is not one)")


def _read(path: str | Path) -> GGUFReader:
    """The file's GGUFReader, its errors as GGUFError (OSError as is: the file is missing or unreadable)."""
    try:
        return _Reader(path)
    except OSError:
        raise
    except (ValueError, IndexError, KeyError, OverflowError) as exc:
        # GGUFReader: ValueError('GGUF magic invalid'), ValueError('Sorry, file appears to be version N ...');
        # np.memmap: ValueError('cannot mmap an empty file'); IndexError and others on a file cut short.
        text = str(exc)
        if "magic" in text or "empty file" in text:
            with open(path, "rb") as f:
                head = f.read(16)
            raise GGUFError(f"{path}: not a GGUF file (it starts with {head!r}); {_FIX}") from None
        if "version" in text:
            raise GGUFError(f"{path}: {text} (gguf {_gguf_version()}); upgrade the gguf package or convert the "
                            "model again with a current llama.cpp") from None
        raise GGUFError(f"{path}: truncated or corrupt GGUF ({type(exc).__name__}: {text}); {_FIX}") from None


def _gguf_version() -> str:
    from importlib.metadata import version

    return version("gguf")


_READ: dict[tuple[str, int, int], dict] = {}  # the files read in this process, by path, size and mtime
_READ_KEEP = 4


def gguf_metadata(path: str | Path) -> dict:
    """All key/value metadata of a GGUF file (versions 2 and 3), as Python values and lists. A file is read once
    in a process while its size and modification time stay (a run asks for its context length, its vocabulary
    and its architecture at different places); the dict is a copy, its lists are shared: do not change them."""
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    meta = _READ.get(key)
    if meta is None:
        reader = _read(path)
        meta = {name: _value(field) for name, field in reader.fields.items() if not name.startswith("GGUF.")}
        if len(_READ) >= _READ_KEEP:
            _READ.clear()
        _READ[key] = meta
    return dict(meta)


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
    except (OSError, GGUFError, ValueError):
        return None
