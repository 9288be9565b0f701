"""Meeting users in their own files: read a trainer's or a serving engine's configuration into
the options this tool's commands take (`--from FILE`), and write the layout or serving plan a
command chose as the file or command line the framework starts from (`--emit FORMAT`).

A reader turns a file into Knobs: the option (a key of sizing/cli/spec_table.py) and its value,
each with the file field it came from, so that a file and the equivalent flags ask the same
question by construction; the fields the calculator does not use are listed, never dropped.
Nothing here imports a question package at module level: readers load only with --from.
"""

# Names lent on first use (PEP 562): importing the package costs nothing.
_LAZY = {
    "FileSettings": "sizing.frameworks.settings",
    "Knob": "sizing.frameworks.settings",
    "READ_FORMATS": "sizing.frameworks.formats",
    "detect_format": "sizing.frameworks.detect",
    "read_settings": "sizing.frameworks.detect",
    "TRAINING_EMITS": "sizing.frameworks.write_training",
    "emit_training": "sizing.frameworks.write_training",
    "SERVING_EMITS": "sizing.frameworks.write_serving",
    "ServingPlan": "sizing.frameworks.write_serving",
    "emit_serving": "sizing.frameworks.write_serving",
    "ENGINE_FLAGS": "sizing.frameworks.engine_flags",
    "unknown_engine_flags": "sizing.frameworks.engine_flags",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
