"""What the in-process families (hf, openvino, python runners) share: the model's own tokenizer, and the ids a
generation stops on; `LocalTokenizer` is also what `--tokenizer` loads (run/prompts.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["EOG_TEXTS", "InProcessTokenizer", "LocalTokenizer"]

# End-of-generation token texts of the common chat templates: a generation stops on any the vocabulary has.
EOG_TEXTS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|eom_id|>", "</s>")


class InProcessTokenizer:
    """For an in-process backend: text to ids and back with the model file's own tokenizer (`self.model_path`:
    a GGUF's vocabulary or a folder's tokenizer.json), loaded on first use."""

    model_path = None
    _tokenizer = None

    def _local_tokenizer(self):
        if self._tokenizer is None:
            self._tokenizer = LocalTokenizer(self.model_path)
        return self._tokenizer

    def tokenize(self, text: str) -> list[int]:
        return self._local_tokenizer().encode(text)

    def detokenize(self, ids: list[int]) -> str:
        return self._local_tokenizer().decode(ids)

    def _vocabulary_stop_ids(self, eos_token_id) -> set[int]:
        """The ids of EOG_TEXTS in the vocabulary and the model config's `eos_token_id` (one id or a list)."""
        tok = self._local_tokenizer()
        ids = {tok.token_id(t) for t in EOG_TEXTS}
        ids |= set(eos_token_id) if isinstance(eos_token_id, list) else {eos_token_id}
        return {int(i) for i in ids if i is not None}


class LocalTokenizer:
    """A `tokenizers` tokenizer: a Hugging Face `tokenizer.json`, its model folder, or a GGUF's own vocabulary."""

    def __init__(self, path: str | Path) -> None:
        from tokenizers import Tokenizer

        p = Path(path)
        if p.is_dir():
            p = p / "tokenizer.json"
        if not p.is_file():
            raise FileNotFoundError(f"--tokenizer {path}: no tokenizer.json there; give the file, its model folder "
                                    "or a .gguf")
        self.path = p
        if p.suffix == ".gguf":
            from oracle.backends.gguf import tokenizer_from_gguf

            self._tok = tokenizer_from_gguf(p)
            self.source = "gguf"
            self.sha256 = hashlib.sha256(self._tok.to_str().encode()).hexdigest()
        else:
            self._tok = Tokenizer.from_file(str(p))
            self.source = "tokenizer.json"
            self.sha256 = hashlib.sha256(p.read_bytes()).hexdigest()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)

    def token_id(self, text: str) -> int | None:
        """The id of one whole token spelled `text` (a special token such as `<|im_end|>`), or None."""
        return self._tok.token_to_id(text)
