"""What the in-process families (hf, openvino, python runners) share: the model's own tokenizer, and the ids a
generation stops on."""

from __future__ import annotations

__all__ = ["EOG_TEXTS", "InProcessTokenizer"]

# End-of-generation token texts of the common chat templates: a generation stops on any the vocabulary has.
EOG_TEXTS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|eom_id|>", "</s>")


class InProcessTokenizer:
    """For an in-process backend: text to ids and back with the model file's own tokenizer (`self.model_path`:
    a GGUF's vocabulary or a folder's tokenizer.json), loaded on first use."""

    model_path = None
    _tokenizer = None

    def _local_tokenizer(self):
        if self._tokenizer is None:
            from oracle.run.prompting import LocalTokenizer

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
