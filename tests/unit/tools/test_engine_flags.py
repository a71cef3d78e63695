"""Tests for tools.engine_flags: the flag tables read from small synthetic sources (no network, no wheel)."""

from __future__ import annotations

import hashlib
import json
import textwrap
import zipfile

from tools import engine_flags
from tools.engine_flags import Sources, sglang_flags, vllm_flags


def _src(files: dict) -> Sources:
    return Sources({path: textwrap.dedent(text) for path, text in files.items()})


VLLM = {
    "vllm/config/__init__.py": "from vllm.config.parallel import ParallelConfig\n",
    "vllm/config/parallel.py": """
        from typing import Literal
        from vllm.config.utils import config

        All2AllBackend = Literal["naive", "deepep_low_latency", "passthrough"]
        CacheDType = Literal["auto", "fp8"]

        @config
        class Inner:
            x: int = 0

        @config
        class ParallelConfig:
            tensor_parallel_size: int = 1
            enable_expert_parallel: bool = False
            all2all_backend: All2AllBackend = "naive"
            cache_dtype: CacheDType | str = "auto"
            max_num_batched_tokens: int | None = None
            inner: Inner | None = None
            sizes: list[int] | None = None
            mode: "Literal['b', 'a'] | None" = None
    """,
    "vllm/config/utils.py": "def config(cls):\n    return cls\n",
    "vllm/model_executor/layers/quantization/__init__.py": """
        from typing import Literal
        QuantizationMethods = Literal["fp8", "gptq"]
    """,
    "vllm/engine/arg_utils.py": """
        import argparse
        from vllm.config import ParallelConfig

        PASSTHROUGH = "passthrough"

        class EngineArgs:
            @staticmethod
            def add_cli_args(parser):
                parallel_kwargs = get_kwargs(ParallelConfig)
                parallel_kwargs["all2all_backend"]["choices"].remove(PASSTHROUGH)
                group = parser.add_argument_group("ParallelConfig")
                group.add_argument("--tensor-parallel-size", "-tp", **parallel_kwargs["tensor_parallel_size"])
                group.add_argument("--enable-expert-parallel", "-ep", **parallel_kwargs["enable_expert_parallel"])
                group.add_argument("--all2all-backend", **parallel_kwargs["all2all_backend"])
                group.add_argument("--kv-cache-dtype", **parallel_kwargs["cache_dtype"])
                group.add_argument(
                    "--max-num-batched-tokens", **{**parallel_kwargs["max_num_batched_tokens"], "default": None}
                )
                group.add_argument("--inner-config", **parallel_kwargs["inner"])
                group.add_argument("--sizes", **parallel_kwargs["sizes"])
                group.add_argument("--mode", **parallel_kwargs["mode"])
                group.add_argument("--quantization", "-q", type=str, default=None)
                group.add_argument("--x", type=int, choices=[1, 2])
                group.add_argument("--eager", action="store_true")
                group.add_argument("--device", choices=["auto"] + plugin_devices())
                return parser

        class AsyncEngineArgs(EngineArgs):
            @staticmethod
            def add_cli_args(parser, async_args_only=False):
                parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction)
                return parser
    """,
    "vllm/entrypoints/common/cli_args.py": """
        from typing import Literal
        from vllm.config.utils import config

        @config
        class BaseFrontendArgs:
            chat_template: str | None = None
            default_kwargs: dict | None = None

            @classmethod
            def _customize_cli_kwargs(cls, frontend_kwargs):
                frontend_kwargs["default_kwargs"]["type"] = json.loads
                return frontend_kwargs

        @config
        class FrontendArgs(BaseFrontendArgs):
            port: int = 8000
            uvicorn_log_level: Literal["info", "debug"] = "info"

        def make_arg_parser(parser):
            parser.add_argument("model_tag", nargs="?")
            parser.add_argument("--api-server-count", "-asc", type=int)
            parser = FrontendArgs.add_cli_args(parser)
            return AsyncEngineArgs.add_cli_args(parser)
    """,
}


def test_vllm_names_aliases_and_types_follow_add_argument_and_the_dataclass_fields():
    src = _src(VLLM)
    flags = vllm_flags(src)
    assert flags["--tensor-parallel-size"] == {
        "takes_value": True, "nargs": None, "type": "int", "choices": None, "known_values": None,
        "aliases": ["-tp"], "negation": None,
    }  # fmt: skip
    assert flags["--enable-expert-parallel"]["takes_value"] is False
    assert flags["--enable-expert-parallel"]["negation"] == "--no-enable-expert-parallel"
    assert flags["--enable-log-requests"]["negation"] == "--no-enable-log-requests"
    assert flags["--eager"]["takes_value"] is False and flags["--eager"]["negation"] is None
    assert flags["--max-num-batched-tokens"]["type"] == "human_readable_int"
    assert flags["--inner-config"]["type"] == "json"
    assert (flags["--sizes"]["type"], flags["--sizes"]["nargs"]) == ("int", "+")
    assert flags["--api-server-count"]["aliases"] == ["-asc"]
    assert "model_tag" not in flags
    assert {"vllm/engine/arg_utils.py", "vllm/entrypoints/common/cli_args.py", "vllm/config/parallel.py"} <= src.read


def test_vllm_choices_come_from_literals_with_the_edits_add_cli_args_makes():
    flags = vllm_flags(_src(VLLM))
    assert flags["--all2all-backend"]["choices"] == ["deepep_low_latency", "naive"]  # passthrough removed
    assert flags["--mode"]["choices"] == ["a", "b"]  # sorted, a string annotation read too
    # Literal | str: argparse shows the values but takes any string
    assert (flags["--kv-cache-dtype"]["choices"], flags["--kv-cache-dtype"]["known_values"]) == (None, ["auto", "fp8"])
    # checked after parsing, from vllm/model_executor/layers/quantization
    assert flags["--quantization"]["known_values"] == ["fp8", "gptq"] and flags["--quantization"]["aliases"] == ["-q"]
    assert flags["--x"]["type"] == "int" and flags["--x"]["choices"] == [1, 2]
    assert flags["--device"]["choices"] is None and flags["--device"]["dynamic_choices"] is True
    assert flags["--uvicorn-log-level"]["choices"] == ["debug", "info"]
    assert flags["--default-kwargs"]["type"] == "json" and flags["--chat-template"]["type"] == "str"
    assert flags["--port"]["type"] == "int"


SGLANG = {
    "sglang/srt/arg_groups/choices.py": 'QUANTIZATION_CHOICES = ["fp8", "awq"]\n',
    "sglang/srt/arg_groups/fields/parallel.py": """
        import argparse
        from typing import Literal, Optional
        from sglang.srt.arg_groups.arg_utils import A, Arg
        from sglang.srt.arg_groups.choices import QUANTIZATION_CHOICES

        class Backend:
            FULL = "full"
            ALL = (FULL, "disabled")

        class Parallel:
            _NS_PATH = "parallel"
            tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"])] = 1
            quantization: A[Optional[str], Arg(help="Q.", choices=QUANTIZATION_CHOICES)] = None
            mode: A[Optional[Literal["a", "b"]], "Mode."] = None
            graph: A[Optional[str], Arg(help="G.", choices=Backend.ALL)] = None
            enable_x: A[bool, "Switch."] = False
            overlap: A[bool, Arg(help="O.", action=argparse.BooleanOptionalAction)] = True
            hidden: A[int, Arg(help="H.", no_cli=True)] = 0
            ids: A[Optional[list[int]], "Ids."] = None
            renamed: A[int, Arg(help="R.", cli_name="--other-name")] = 0
            bare: int = 0
    """,
    "sglang/srt/server_args.py": """
        from sglang.srt.arg_groups.fields.parallel import Parallel

        class ServerArgs:
            @staticmethod
            def add_cli_args(parser):
                add_cli_args_from_dataclass(parser, ServerArgs)
                parser.add_argument("--reasoning-parser", choices=["auto"] + parsers())
                parser.add_argument("--old", action=DeprecatedStoreTrueAction, new_flag="--new")

        _INPUT_NAMESPACES = [Parallel]
        ServerArgs = defstruct("ServerArgs", [])
    """,
    "sglang/srt/arg_groups/argparse_actions.py": """
        import argparse
        class DeprecatedStoreTrueAction(argparse.Action):
            def __init__(self, option_strings, dest, new_flag=None, nargs=0, **kwargs):
                super().__init__(option_strings, dest, nargs=nargs, **kwargs)
    """,
}
SGLANG["sglang/srt/server_args.py"] = SGLANG["sglang/srt/server_args.py"].replace(
    "from sglang.srt.arg_groups.fields.parallel import Parallel",
    "from sglang.srt.arg_groups.fields.parallel import Parallel\n"
    "        from sglang.srt.arg_groups.argparse_actions import DeprecatedStoreTrueAction",
)


def test_sglang_fields_read_as_add_cli_args_from_dataclass_does():
    flags = sglang_flags(_src(SGLANG))
    assert flags["--tp-size"]["aliases"] == ["--tensor-parallel-size"] and flags["--tp-size"]["type"] == "int"
    assert flags["--quantization"]["choices"] == ["awq", "fp8"]  # a list constant from another module
    assert flags["--mode"]["choices"] == ["a", "b"]  # Optional[Literal[...]]
    assert flags["--graph"]["choices"] == ["disabled", "full"]  # a class attribute
    assert flags["--enable-x"]["takes_value"] is False and flags["--enable-x"]["negation"] is None
    assert flags["--overlap"]["negation"] == "--no-overlap"
    assert (flags["--ids"]["type"], flags["--ids"]["nargs"]) == ("int", "+")
    assert "--other-name" in flags and "--renamed" not in flags
    assert "--hidden" not in flags and "--bare" not in flags  # no_cli; no A[T, help] annotation
    assert flags["--reasoning-parser"]["dynamic_choices"] is True
    assert flags["--old"]["takes_value"] is False  # a custom action whose __init__ defaults nargs to 0


def test_a_table_records_the_wheel_its_digest_and_sorted_flags(tmp_path):
    wheel = tmp_path / "sglang-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in SGLANG.items():
            archive.writestr(path, textwrap.dedent(text))
    engine_flags.main(["sglang", "9.9.9", "--wheel", str(wheel), "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "sglang-9.9.9.json").read_text()
    document = json.loads(text)
    assert document["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert (document["wheel"], document["entry_point"]) == (wheel.name, "python -m sglang.launch_server")
    assert "sglang/srt/server_args.py" in document["sources"]
    assert list(document["flags"]) == sorted(document["flags"])
    assert text == json.dumps(document, indent=1, sort_keys=True) + "\n"
