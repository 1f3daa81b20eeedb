import numpy as np
import pytest
from gguf import GGUFReader, GGUFWriter

from oracle.backends.gguf import GGUFError, context_length, gguf_metadata, tokenizer_from_gguf


def test_metadata_of_the_real_model(model_path):
    meta = gguf_metadata(model_path)
    assert meta["general.architecture"] == "llama" and meta["tokenizer.ggml.model"] == "gpt2"
    assert context_length(model_path) == 8192
    assert len(meta["tokenizer.ggml.tokens"]) == len(meta["tokenizer.ggml.token_type"]) == 49152
    assert not any(name.startswith("GGUF.") for name in meta)  # the reader's header fields are not metadata


def test_tokenizer_round_trips_chatml(model_path):
    tok = tokenizer_from_gguf(model_path)
    text = "<|im_start|>user\nWhat is 7*2?<|im_end|>\n<|im_start|>assistant\n"
    ids = tok.encode(text, add_special_tokens=False).ids
    assert ids[0] == 1 and ids.count(2) == 1  # <|im_start|> and <|im_end|> are single special tokens
    assert tok.decode(ids, skip_special_tokens=False) == text


def _small_gguf(path):
    w = GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(["a", "b", "\u00e9\u0120x", ""])
    w.add_token_types([1, 3, 1, 4])
    w.add_token_merges(["a b"])
    w.add_array("test.floats", [1.5, 2.5])
    w.add_array("test.bools", [True, False])
    w.add_array("test.nested", [[1, 2], [3]])
    w.add_tensor("t", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_arrays_read_whole_give_what_the_stock_reader_gives(tmp_path):
    path = _small_gguf(tmp_path / "small.gguf")
    stock = {name: f.contents() for name, f in GGUFReader(path).fields.items() if not name.startswith("GGUF.")}
    assert gguf_metadata(path) == stock
    assert stock["tokenizer.ggml.tokens"] == ["a", "b", "\u00e9\u0120x", ""] and context_length(path) == 64


def test_not_a_gguf_is_refused(tmp_path):
    f = tmp_path / "x.gguf"
    f.write_bytes(b"nope" * 10)
    with pytest.raises(GGUFError, match="not a GGUF"):
        gguf_metadata(f)


@pytest.mark.parametrize("case, message", [
    ("empty", "not a GGUF file"),
    ("lfs pointer", r"not a GGUF file \(it starts with b'version https://'\); re-download"),
    ("version 99", "version 99 .*upgrade the gguf package"),
])
def test_refusals_name_the_fix(tmp_path, case, message):
    data = _small_gguf(tmp_path / "small.gguf").read_bytes()
    f = tmp_path / "x.gguf"
    f.write_bytes({"empty": b"",
                   "lfs pointer": b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n",
                   "version 99": data[:4] + (99).to_bytes(4, "little") + data[8:]}[case])
    with pytest.raises(GGUFError, match=message):
        gguf_metadata(f)


def test_a_gguf_cut_short_anywhere_is_a_gguf_error(tmp_path):
    data = _small_gguf(tmp_path / "small.gguf").read_bytes()
    f = tmp_path / "cut.gguf"
    for n in range(len(data)):
        f.write_bytes(data[:n])
        with pytest.raises(GGUFError, match="GGUF"):
            gguf_metadata(f)


def test_a_file_is_read_once_until_it_changes(tmp_path, monkeypatch):
    import oracle.backends.gguf as gguf_module

    path = _small_gguf(tmp_path / "small.gguf")
    reads = []
    real_read = gguf_module._read
    monkeypatch.setattr(gguf_module, "_read", lambda p: reads.append(p) or real_read(p))
    first = gguf_metadata(path)
    first["general.architecture"] = "changed by the caller"  # a copy: the next caller gets the file's value
    assert gguf_metadata(path)["general.architecture"] == "llama" and len(reads) == 1
    assert context_length(path) == 64 and len(reads) == 1
    (tmp_path / "other.gguf").write_bytes(path.read_bytes())  # another file: read on its own
    assert gguf_metadata(tmp_path / "other.gguf")["test.floats"] == [1.5, 2.5] and len(reads) == 2
    w = GGUFWriter(str(path), "llama")  # the same path written again: its size and time change, it is read again
    w.add_context_length(128)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    assert context_length(path) == 128 and len(reads) == 3
