"""Tests for lib.serving.lengths: a file of requests' lengths, read or refused with its line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lib.serving import lengths


def test_csv_and_json_lines_give_the_same_sample(tmp_path):
    rows = [(812, 233), (95, 410), (2048, 64)]
    csv_file = tmp_path / "chat.csv"
    csv_file.write_text("output_tokens,prompt_tokens,model\n" + "".join(f"{o},{p},x\n" for p, o in rows))
    jsonl = tmp_path / "chat.jsonl"  # the names of vLLM's and SGLang's benchmark dumps
    jsonl.write_text("".join(json.dumps({"input_len": p, "output_len": o}) + "\n\n" for p, o in rows))
    for path in (csv_file, jsonl):
        prompts, outputs = lengths.read_lengths(path)
        assert prompts.tolist() == [p for p, _ in rows] and outputs.tolist() == [o for _, o in rows], path
        assert prompts.dtype.kind == "i" and outputs.dtype.kind == "i"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("empty.csv", "prompt_tokens,output_tokens\n", "holds no request"),
        ("zero.csv", "prompt_tokens,output_tokens\n10,5\n0,5\n", "line 3: prompt_tokens must be a whole number"),
        ("half.csv", "prompt_tokens,output_tokens\n10,2.5\n", "line 2: output_tokens must be a whole number"),
        ("text.csv", "prompt_tokens,output_tokens\nten,5\n", "got 'ten'"),
        ("nameless.csv", "prompt,output\n10,5\n", "line 2 has no prompt_tokens or input_len"),
        ("broken.jsonl", '{"prompt_tokens": 10, "output_tokens": 5}\n{oops\n', "line 2 is not JSON"),
        ("list.jsonl", "[10, 5]\n", "line 1 is not an object"),
    ],
)
def test_a_bad_file_is_refused_with_its_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as refused:
        lengths.read_lengths(path, "--lengths")
    assert str(refused.value).startswith("--lengths") and name in str(refused.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="lengths cannot be read: .*absent.csv"):
        lengths.read_lengths(tmp_path / "absent.csv")


def test_the_description_gives_the_means_and_tails():
    words = lengths.describe_lengths(np.array([100] * 9 + [1000]), np.array([50] * 10))
    assert words == "10 requests (prompt mean 190, p90 190; output mean 50, p90 50)"
