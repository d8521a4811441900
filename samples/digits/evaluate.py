"""Float vs INT8 accuracy of DigitsCNN on the load_digits test split.

The INT8 figure comes from the program lowered by executorch's cortex_m flow
(CortexMQuantizer -> cortex_m edge config -> CortexMPassManager), executed in
Python through the cortex_m ops' reference implementations, i.e. the same
arithmetic the CMSIS-NN kernels do on the device.
Run: python samples/digits/evaluate.py [--target cortex-m55]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from model import DigitsCNN, calibration_data, evaluation_data, example_inputs  # noqa: E402


def lower(model: torch.nn.Module, target: str):
    """Quantize and lower with the cortex_m backend; return (lowered ExportedProgram, .pte bytes)."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    example = example_inputs()
    graph = torch.export.export(model, example).module(check_guards=False)
    prepared = prepare_pt2e(graph, CortexMQuantizer())
    for sample in calibration_data():
        prepared(*sample)
    quantized = torch.export.export(convert_pt2e(prepared), example)
    edge = to_edge(quantized, compile_config=cortex_m_edge_compile_config())
    config = CortexMTargetConfig.from_target_string(target)
    lowered = CortexMPassManager(edge.exported_program(), target_config=config).transform()
    # to_executorch rewrites the graph to out-variants, so serialize a copy.
    import copy
    pte = EdgeProgramManager(copy.deepcopy(lowered), compile_config=cortex_m_edge_compile_config())
    return lowered, pte.to_executorch().buffer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cortex-m55")
    args = parser.parse_args()

    model = DigitsCNN()
    x, y = evaluation_data()
    with torch.no_grad():
        float_acc = (model(x).argmax(1) == y).float().mean().item()

    start = time.time()
    lowered, pte = lower(model, args.target)
    seconds = time.time() - start
    run = lowered.module()
    with torch.no_grad():
        preds = torch.stack([run(x[i : i + 1].contiguous(memory_format=torch.channels_last))[0].argmax()
                             for i in range(len(x))])
    int8_acc = (preds == y).float().mean().item()
    print(f"test images {len(x)}  float accuracy {float_acc:.4f}  INT8 accuracy {int8_acc:.4f}")
    print(f"target {args.target}  lowering {seconds:.1f} s  .pte {len(pte)} bytes")


if __name__ == "__main__":
    main()
