"""Silence third-party chatter that means nothing to our users (and drowns the progress lines).

torchao reports CUDA-only extensions it cannot load on a CPU host; torch's pytree warns about
enum registration; executorch warns that PassManager is deprecated on every call. Call
`quiet_third_party()` before torchao/executorch are imported; `quiet_executorch()` again after,
because executorch pins its logger level when imported.
"""

from __future__ import annotations

import logging
import warnings


def quiet_torch() -> None:
    """torch logs tracebacks (fake-tensor meta failures, a corrupt .pt2) before it raises; cmx-gen
    turns the exception into one line, and --debug shows the trace. Call after `import torch`:
    torch._logging sets its loggers' levels on import."""
    for name in (
        "torch",
        "torch._subclasses.fake_tensor",
        "torch.fx.experimental.symbolic_shapes",
        "torch._dynamo",
        "torch.export",
        "torch._export",
    ):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def quiet_third_party() -> None:
    quiet_torch()
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    quiet_executorch()


def quiet_executorch() -> None:
    logging.getLogger("executorch.exir.pass_manager").setLevel(logging.ERROR)
