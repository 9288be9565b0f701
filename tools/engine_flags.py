"""Write sizing/data/engine_flags.json: the command-line flags of `vllm serve` and SGLang's
`launch_server`, read from the engines' own source in their released wheels (no import, no GPU).

    pip download --no-deps --only-binary=:all: vllm==0.34.0 sglang==0.5.23 -d /tmp/wheels
    python tools/engine_flags.py /tmp/wheels/vllm-*.whl /tmp/wheels/sglang-*.whl

vLLM: every option string of EngineArgs.add_cli_args and the OpenAI server's cli_args
(vllm/engine/arg_utils.py, vllm/entrypoints/openai/cli_args.py); a boolean field's
BooleanOptionalAction adds its --no- spelling. SGLang: every field of the ServerArgs namespaces
(sglang/srt/arg_groups/fields/*.py: the flag is the field name in kebab case, plus its `aliases`)
and the option strings added by hand in server_args.py. The emitted and read flags of
sizing.frameworks are checked against this list (tests/test_frameworks_engines.py).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "sizing" / "data" / "engine_flags.json"
FLAG = re.compile(r"""["'](--[a-z0-9][a-z0-9-]*)["']""")


def _version(wheel: str) -> str:
    return Path(wheel).name.split("-")[1]


def _literal_flags(sources: list[str]) -> set[str]:
    return {flag for text in sources for flag in FLAG.findall(text)}


def _field_flags(text: str) -> set[str]:
    """--field-name of every annotated field of every class in `text` (SGLang's namespaces)."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id
                    if not name.startswith("_"):
                        out.add("--" + name.replace("_", "-"))
    return out


def _vllm(wheel: str) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        names = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py")
        texts = [z.read(n).decode() for n in names if n in z.namelist()]
    flags = _literal_flags(texts)
    booleans = _field_flags(texts[0])  # BooleanOptionalAction: --x and --no-x for bool fields
    flags |= {f"--no-{f[2:]}" for f in booleans if f in flags}
    return flags


def _sglang(wheel: str) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        fields = [z.read(n).decode() for n in z.namelist() if n.startswith("sglang/srt/arg_groups/fields/")]
        server = z.read("sglang/srt/server_args.py").decode()
    flags = set()
    for text in fields:
        flags |= _field_flags(text) | _literal_flags([text])
    return flags | _literal_flags([server])


def main(vllm_wheel: str, sglang_wheel: str) -> None:
    data = {
        "about": "Command-line flags of the serving engines, read from their released wheels by "
        "tools/engine_flags.py (the engines' own argument definitions, not a hand-written list).",
        "vllm": {
            "version": _version(vllm_wheel),
            "source": "vllm/engine/arg_utils.py EngineArgs.add_cli_args, vllm/entrypoints/openai/cli_args.py",
            "flags": sorted(_vllm(vllm_wheel)),
        },
        "sglang": {
            "version": _version(sglang_wheel),
            "source": "sglang/srt/arg_groups/fields/*.py (ServerArgs namespaces), sglang/srt/server_args.py",
            "flags": sorted(_sglang(sglang_wheel)),
        },
    }
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT}: vllm {len(data['vllm']['flags'])} flags, sglang {len(data['sglang']['flags'])} flags")


if __name__ == "__main__":
    main(*sys.argv[1:3])
