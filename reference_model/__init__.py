"""The PyTorch reference GPT built from `sizing.ModelConfig` (needs torch).

`reference_model.build(cfg, device=...)` is loaded lazily, so importing the package alone
does not import torch.
"""

from reference_model.torch_cache import use_private_torch_cache

use_private_torch_cache()  # before anything here imports torch: no cache folder left in $TMPDIR

_MODEL_NAMES = ("build", "GPT", "KVCache")


def __getattr__(name):
    if name in _MODEL_NAMES:
        from reference_model.model import gpt as model

        return getattr(model, name)
    raise AttributeError(f"module 'reference_model' has no attribute {name!r}")
