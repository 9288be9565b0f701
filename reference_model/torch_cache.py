"""Keep torch's compile caches out of the user's folders.

Importing torch._dynamo (which torch does on the first call of many functions, torch.arange
among them) creates `$TMPDIR/torchinductor_<user>/` and leaves it there, although `sizing
verify` compiles nothing. Unless the user chose a cache (TORCHINDUCTOR_CACHE_DIR), the
reference model points it at a private temporary folder of this process, removed at exit, so
a run writes nothing outside the paths the user named. Child processes inherit the setting.
Standard library only: this runs before torch is imported.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


def use_private_torch_cache() -> str | None:
    """Point torch's inductor (and Triton) caches at a private temporary folder removed at exit;
    the folder, or None when the user set TORCHINDUCTOR_CACHE_DIR (their choice is kept)."""
    if os.environ.get(CACHE_VARIABLE):
        return None
    folder = tempfile.mkdtemp(prefix="sizing-torch-cache-")
    os.environ[CACHE_VARIABLE] = folder
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(folder, "triton"))
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # a forked child leaves the parent's folder alone
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder
