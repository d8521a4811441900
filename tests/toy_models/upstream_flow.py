"""Programs lowered by upstream's own Python flow, not cmx-gen's: CortexMQuantizer -> to_edge ->
CortexMPassManager(target) -> to_executorch, and a BundledProgram of it (what `aot_arm_compiler
--quantize --bundleio` writes). For the tests of programs lowered elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]


class Upstream(NamedTuple):
    pte: bytes
    bpte: bytes


def digits_program(target: str) -> Upstream:
    """The digits sample (convolutions, a linear layer) lowered by upstream for `target`
    ("cortex-m55", "cortex-m4", ...), its bundle checking example_inputs()."""
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    sys.path.insert(0, str(ROOT / "samples" / "digits"))
    try:
        from model import DigitsCNN, calibration_data, example_inputs
    finally:
        sys.path.pop(0)
    example = example_inputs()
    graph = torch.export.export(DigitsCNN().eval(), example).module(check_guards=False)
    prepared = prepare_pt2e(graph, CortexMQuantizer())
    for sample in calibration_data():
        prepared(*sample)
    edge = to_edge(torch.export.export(convert_pt2e(prepared), example), compile_config=cortex_m_edge_compile_config())
    config = CortexMTargetConfig.from_target_string(target)
    lowered = CortexMPassManager(edge.exported_program(), target_config=config).transform()
    expected = lowered.module()(*example)
    program = EdgeProgramManager(lowered, compile_config=cortex_m_edge_compile_config()).to_executorch()
    suite = MethodTestSuite("forward", [MethodTestCase(inputs=list(example), expected_outputs=[expected])])
    return Upstream(program.buffer, serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite])))
