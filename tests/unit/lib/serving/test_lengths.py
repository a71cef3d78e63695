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


# --- the text form: prompt:output*count, joined by commas --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "prompts", "outputs"),
    [
        ("1024:256", [1024], [256]),
        ("1024:256*3,95:410", [1024, 1024, 1024, 95], [256, 256, 256, 410]),
        (" 1024 : 256 * 2 ,\t95:410 ", [1024, 1024, 95], [256, 256, 410]),  # spaces around any part
        ("95:410,1024:256,95:410", [95, 1024, 95], [410, 256, 410]),  # the order written, repeats kept
        ("007:1*1", [7], [1]),  # leading zeros and an explicit count of one
        ("1:" + "0" * 20 + "5", [1], [5]),  # leading zeros are not digits past the limit
    ],
)
def test_the_text_form_gives_the_requests_in_order(text, prompts, outputs):
    got_prompts, got_outputs = lengths.parse_lengths(text)
    assert got_prompts.tolist() == prompts and got_outputs.tolist() == outputs
    assert got_prompts.dtype == np.int64 and got_outputs.dtype == np.int64


@pytest.mark.parametrize(
    ("prompts", "outputs", "text"),
    [
        ([1024], [256], "1024:256"),
        ([1024, 1024, 1024, 95], [256, 256, 256, 410], "1024:256*3,95:410"),
        ([95, 1024, 95, 95], [410, 256, 410, 410], "95:410,1024:256,95:410*2"),
        ([5, 5], [6, 7], "5:6,5:7"),
    ],
)
def test_the_text_form_round_trips(prompts, outputs, text):
    assert lengths.format_lengths(prompts, outputs) == text
    back = lengths.parse_lengths(text)
    assert back[0].tolist() == prompts and back[1].tolist() == outputs
    assert lengths.format_lengths(*back) == text


def test_a_file_and_its_text_form_give_the_same_sample(tmp_path):
    path = tmp_path / "chat.csv"
    path.write_text("prompt_tokens,output_tokens\n812,233\n812,233\n95,410\n2048,64\n")
    from_file = lengths.read_lengths(path)
    text = lengths.format_lengths(*from_file)
    assert text == "812:233*2,95:410,2048:64"
    assert [a.tolist() for a in lengths.parse_lengths(text)] == [a.tolist() for a in from_file]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no request"),
        ("   ", "holds no request"),
        ("1024", "group 1 is '1024'"),
        ("1024:256,", "group 2 is ''"),
        ("1024:256,,95:410", "group 2 is ''"),
        ("1024:256;95:410", "group 1 is '1024:256;95:410'"),
        ("1024-256", "group 1 is '1024-256'"),
        ("1e3:256", "group 1 is '1e3:256'"),
        ("-5:256", "group 1 is '-5:256'"),
        ("+5:256", "group 1 is '\\+5:256'"),
        ("512.0:256", "group 1 is '512.0:256'"),
        ("512:256*", "group 1 is '512:256\\*'"),
        ("512:256*2*3", "group 1 is '512:256\\*2\\*3'"),
        ("１２:3", "group 1 is '１２:3'"),  # full-width digits: ASCII only, as a browser's [0-9]
        ("0:256", "group 1 '0:256': prompt must be a whole number from 1 to 1000000000, got 0"),
        ("512:0", "group 1 '512:0': output must be"),
        ("1:1,512:256*0", "group 2 '512:256\\*0': count must be"),
        ("1:1000000001", "output must be a whole number from 1 to 1000000000, got 1000000001"),
        ("1:" + "9" * 5000, "output must be a whole number from 1 to 1000000000, got 9999"),
        ("1:1*10000,2:2", "more than 10,000 requests \\(at --lengths-inline group 2 '2:2'\\)"),
    ],
)
def test_a_bad_text_is_refused_naming_the_option_and_the_group(text, message):
    with pytest.raises(ValueError, match=message) as refused:
        lengths.parse_lengths(text, "--lengths-inline")
    assert str(refused.value).startswith("--lengths-inline ") and "\n" not in str(refused.value)


def test_the_largest_text_form_is_accepted():
    prompts, outputs = lengths.parse_lengths(f"1:{lengths.MAX_INLINE_TOKENS}*{lengths.MAX_INLINE_REQUESTS}")
    assert prompts.size == lengths.MAX_INLINE_REQUESTS and int(outputs.max()) == lengths.MAX_INLINE_TOKENS


@pytest.mark.parametrize(
    ("prompts", "outputs", "name"),
    [
        ([1, 2], [3], "prompts and outputs"),
        ([], [], "prompts and outputs"),
        ([0], [1], "prompts"),
        ([1], [1.5], "outputs"),
    ],
)
def test_formatting_a_bad_sample_names_it(prompts, outputs, name):
    with pytest.raises(ValueError, match=name):
        lengths.format_lengths(prompts, outputs)


def test_a_text_that_is_not_text_is_refused():
    with pytest.raises(ValueError, match="lengths must be text.*got 1024"):
        lengths.parse_lengths(1024)
