"""Any architecture transformers knows, sized by building it from its config.json on the meta device
(no weights, no memory): parameters counted per module exactly, FLOPs per token counted with
torch's FlopCounterMode at the sequence length asked, the KV cache and recurrent state measured
from the model's own cache object, and the tensors autograd keeps for backward. The `hf` extra
(`pip install 'transformer-sizing[hf]'`: torch and transformers); `sizing` itself never imports
this package outside its command layer, and only when a config's model_type is not modelled by
formula (docs/coverage.md).

Every number it gives is labelled "counted by transformers on the meta device, not by formula",
with what is exact and what is estimated (sizing.whole.WholeModel.exact). A `trust_remote_code`
model (a model_type transformers does not have, whose config.json names its own code in
`auto_map`) runs no code unless the caller passes run_remote_code=True (`--run-remote-code`).
"""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "META_LABEL": "hf_meta.whole",
    "build_on_meta": "hf_meta.build",
    "count_params": "hf_meta.count",
    "measure_whole_model": "hf_meta.whole",
    "transformers_version": "hf_meta.build",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
