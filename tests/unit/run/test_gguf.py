import pytest

from oracle.run.gguf import GGUFError, context_length, gguf_metadata, tokenizer_from_gguf


def test_metadata_of_the_real_model(model_path):
    meta = gguf_metadata(model_path)
    assert meta["general.architecture"] == "llama" and meta["tokenizer.ggml.model"] == "gpt2"
    assert context_length(model_path) == 8192


def test_tokenizer_round_trips_chatml(model_path):
    tok = tokenizer_from_gguf(model_path)
    text = "<|im_start|>user\nWhat is 7*2?<|im_end|>\n<|im_start|>assistant\n"
    ids = tok.encode(text, add_special_tokens=False).ids
    assert ids[0] == 1 and ids.count(2) == 1  # <|im_start|> and <|im_end|> are single special tokens
    assert tok.decode(ids, skip_special_tokens=False) == text


def test_not_a_gguf_is_refused(tmp_path):
    f = tmp_path / "x.gguf"
    f.write_bytes(b"nope" * 10)
    with pytest.raises(GGUFError, match="not a GGUF"):
        gguf_metadata(f)
