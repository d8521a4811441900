"""The shrunk models of bench/fuzz_models.py's failures, each as the fuzzer wrote it (seed in the
docstring): they stay fixed (tests/lower/test_fuzzed_models.py, tests/device/test_user_models_firmware.py)."""

import torch
from torch import nn


def _image(*shape: int) -> tuple[torch.Tensor]:
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(0)),)


def _images(*shape: int) -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(*shape, generator=g),) for _ in range(8)]


class TokensTimesConv(nn.Module):
    """Seeds 111, 118 (WRONG: plan vs reference 0.39): tokens back to an image (contiguous) times a
    conv of it (channels-last): the element-wise mul walked one in NHWC order, the other in NCHW."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Linear(3, 3)
        self.l1 = nn.Conv2d(3, 3, 3, stride=1, padding=1, groups=3)

    def forward(self, x):
        t = x.flatten(2).transpose(1, 2)
        t = self.l0(t)
        x = t.transpose(1, 2).reshape(1, 3, 12, 16)
        return x * self.l1(x)

    def example_inputs(self):
        return _image(1, 3, 12, 16)

    def calibration_data(self):
        return _images(1, 3, 12, 16)


class DilatedDepthwise(nn.Module):
    """Seed 2 (refused: the host model ran torch's conv on int tensors, which has no dilated kernel)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l1 = nn.Conv2d(4, 4, 3, stride=1, padding=2, dilation=2, groups=4, bias=False)

    def forward(self, x):
        return self.l1(x)

    def example_inputs(self):
        return _image(1, 4, 16, 12)

    def calibration_data(self):
        return _images(1, 4, 16, 12)


class PoolHardswish(nn.Module):
    """Seeds 12, 100 (refused: "hardswish_cpu" not implemented for 'Char'): a hardswish after a pool,
    which upstream's DecomposeHardswishPass leaves on int8 data (it takes one after a conv or linear)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(3, 6, 5, stride=1, padding=2, groups=3)
        self.l2 = nn.AvgPool2d(2)
        self.l3 = nn.Hardswish()

    def forward(self, x):
        return self.l3(self.l2(self.l0(x)))

    def example_inputs(self):
        return _image(1, 3, 12, 8)

    def calibration_data(self):
        return _images(1, 3, 12, 8)


class OneChannelUpsample(nn.Module):
    """Seed 117 (crashed: "Missing out variants: cmx::quantized_upsample_nearest"): the upsampling of a
    one-channel image, whose input and output ExecuTorch gives different dim orders although their
    bytes lie alike; it was made an int8 upsampling the backend then did not take."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(3, 1, 5, stride=1, padding=4, dilation=2, groups=1, bias=True)
        self.l1 = nn.Upsample(scale_factor=2)
        self.l2 = nn.Linear(1, 5)

    def forward(self, x):
        x = self.l1(self.l0(x))
        return self.l2(x.mean((2, 3)))

    def example_inputs(self):
        return _image(1, 3, 12, 12)

    def calibration_data(self):
        return _images(1, 3, 12, 12)


class StandaloneBatchNorm(nn.Module):
    """Seeds 1115, 1122 (refused: "quantization failed: KeyError: batch_norm"): a BatchNorm2d after no
    convolution (here tokens back to an image), then a pool, a hardswish and a conv."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Linear(3, 3)
        self.l1 = nn.BatchNorm2d(3)
        with torch.no_grad():  # the statistics of a trained model, not the initial ones
            self.l1.running_mean.uniform_(-0.5, 0.5)
            self.l1.running_var.uniform_(0.5, 2.0)
            self.l1.weight.uniform_(0.5, 1.5)
            self.l1.bias.uniform_(-0.2, 0.2)
        self.l2 = nn.MaxPool2d(2)
        self.l3 = nn.Hardswish()
        self.l4 = nn.Conv2d(3, 6, 3, stride=1, padding=1)
        self.eval()

    def forward(self, x):
        t = self.l0(x.flatten(2).transpose(1, 2))
        x = self.l1(t.transpose(1, 2).reshape(1, 3, 16, 12))
        return self.l4(self.l3(self.l2(x)))

    def example_inputs(self):
        return _image(1, 3, 16, 12)

    def calibration_data(self):
        return _images(1, 3, 16, 12)


class UpsampleThenPool(nn.Module):
    """Seed 1308 (refused: "quantization failed: KeyError: upsample_nearest2d"): a max pool shares its
    input's quantization with an upsampling no annotator took, and prepare_pt2e looked that node up."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.BatchNorm2d(3)
        self.l1 = nn.Upsample(scale_factor=2)
        self.l2 = nn.MaxPool2d(2)
        self.l3 = nn.Hardswish()
        self.l4 = nn.Conv2d(3, 3, 3, stride=2, padding=1, groups=3)
        self.l5 = nn.Linear(3, 5)
        self.eval()

    def forward(self, x):
        x = self.l4(self.l3(self.l2(self.l1(self.l0(x)))))
        return self.l5(x.mean((2, 3)))

    def example_inputs(self):
        return _image(1, 3, 12, 12)

    def calibration_data(self):
        return _images(1, 3, 12, 12)


class ActivationsBeforeBatchNorm(nn.Module):
    """Seed 3008 (host PASS, `create` refused: "float operator(s) aten::hardsigmoid.out ... neither
    portable, cortex_m nor the optimized library has one"): a hardsigmoid no annotator took (upstream
    takes one after a conv or linear) stayed float, which no portable kernel computes, and the input,
    reaching the convolutions through activations, was not made channels-last, so both stayed float."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Hardswish()
        self.l1 = nn.Hardsigmoid()
        self.l2 = nn.BatchNorm2d(3)
        self.l3 = nn.Conv2d(3, 3, 5, stride=1, padding=2, groups=3)
        self.eval()

    def forward(self, x):
        return self.l3(self.l2(self.l1(self.l0(x))))

    def example_inputs(self):
        return _image(1, 3, 16, 12)

    def calibration_data(self):
        return _images(1, 3, 16, 12)


class TwoBatchNorms(nn.Module):
    """Seed 5020 (refused: "quantization failed: KeyError: attribute 'batch_norm_as_depthwise_w' already
    exists"): the first BatchNorm, after no convolution, became a 1x1 depthwise conv whose weight was a
    plain attribute; the quantizer folded the second into that conv by registering its weight again."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.BatchNorm2d(4)
        self.l1 = nn.BatchNorm2d(4)
        self.l2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)
        self.eval()

    def forward(self, x):
        return self.l2(self.l1(self.l0(x)))

    def example_inputs(self):
        return _image(1, 4, 16, 8)

    def calibration_data(self):
        return _images(1, 4, 16, 8)


class OneChannelRelu6(nn.Module):
    """Seed 5013 and 17 refused seeds of 1000-1399 (refused: "a tensor [1, 1, h, w] has dim order
    [0, 2, 1, 3]"): a one-channel image out of a convolution (here a BatchNorm's depthwise) is
    channels-last, which ExecuTorch orders [0, 2, 1, 3], and the portable kernel after it (the ReLU6
    no conv fused) refuses that order."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Sigmoid()
        self.l1 = nn.BatchNorm2d(1)
        self.l2 = nn.ReLU()
        self.l3 = nn.ReLU6()
        self.l4 = nn.Linear(1, 5)
        self.eval()

    def forward(self, x):
        x = self.l3(self.l2(self.l1(self.l0(x))))
        return self.l4(x.mean((2, 3)))

    def example_inputs(self):
        return _image(1, 1, 8, 16)

    def calibration_data(self):
        return _images(1, 1, 8, 16)


class ConvHardswish(nn.Module):
    """Seed 3042 (host PASS, **execute error 0x12 on QEMU M4**): upstream's DecomposeHardswishPass
    writes a hardswish after a conv as `minimum(conv, q(3))` and a mul; the portable minimum refuses
    the conv's channels-last output beside the constant's default dim order. Any conv -> hardswish
    (MobileNetV3's block) stopped on the target; the minimum is a table in the backend now."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(8, 16, 3, stride=2, padding=2, dilation=2, groups=4)
        self.l1 = nn.Sigmoid()
        self.l2 = nn.Conv2d(16, 32, 5, stride=1, padding=4, dilation=2, groups=4, bias=False)
        self.l3 = nn.Hardswish()
        self.l4 = nn.AvgPool2d(2)
        self.eval()

    def forward(self, x):
        return self.l4(self.l3(self.l2(self.l1(self.l0(x)))))

    def example_inputs(self):
        return _image(1, 8, 8, 12)

    def calibration_data(self):
        return _images(1, 8, 8, 12)


class OneChannelSkipConcat(nn.Module):
    """Seed 7010 (WRONG on the host, FAIL 149 LSB on QEMU M4): a one-channel image read both by a
    portable kernel (through one_channel.py's layout copy) and by the backend's concat, whose output
    order ExecuTorch derived again from its inputs' strides: contiguous outside the delegate,
    channels-last inside. The concat now carries its order (concat.py)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.BatchNorm2d(1)
        self.l1 = nn.ReLU()
        self.eval()

    def forward(self, x):
        x = self.l0(x)
        return torch.cat([x, self.l1(x)], dim=1)

    def example_inputs(self):
        return _image(1, 1, 12, 12)

    def calibration_data(self):
        return _images(1, 1, 12, 12)


class PermutedImage(nn.Module):
    """Seed 2002 (FAIL max_abs_err=212 on QEMU M4, host PASS): a permute of a conv's channels-last
    image; upstream's transpose kernel permutes the bytes as if they were contiguous."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(8, 8, 1)
        self.l1 = nn.Conv2d(12, 4, 3, padding=1)

    def forward(self, x):
        x = self.l0(x).permute(0, 2, 1, 3).permute(0, 1, 3, 2)
        return self.l1(torch.relu(x))

    def example_inputs(self):
        return _image(1, 8, 12, 10)

    def calibration_data(self):
        return _images(1, 8, 12, 10)


class LeakyReluTokens(nn.Module):
    """Seed 6024 (refused: "aten::view_copy ... reshapes a channels-last tensor"): a LeakyReLU after a
    conv, which no upstream annotator takes on its own, stayed float, and so did the flatten after it:
    the portable view_copy would reshape a float channels-last image wrong. Then a LayerNorm and a
    bidirectional LSTM over the tokens."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(8, 8, 3, stride=1, padding=1, dilation=1, groups=2, bias=True)
        self.l1 = nn.LeakyReLU(0.1)
        self.l2 = nn.LayerNorm(8)
        self.l3 = nn.LSTM(8, 4, num_layers=1, batch_first=True, bidirectional=True)
        self.l4 = nn.Linear(8, 5)
        self.eval()

    def forward(self, x):
        t = self.l1(self.l0(x)).flatten(2).transpose(1, 2)
        t = self.l3(self.l2(t))[0]
        return self.l4(t.mean(1))

    def example_inputs(self):
        return _image(1, 8, 16, 12)

    def calibration_data(self):
        return _images(1, 8, 16, 12)


class HardsigmoidSkipConcat(nn.Module):
    """Seeds 10273 (M55) and 11169 (M4), refused "hardsigmoid_cpu not implemented for 'Char'": a
    hardsigmoid after a depthwise conv, concatenated with the conv's input. The concat gave the
    hardsigmoid's output its own (wider) quantization, so upstream's fusion refused ("qmin is out of
    range") and left the hardsigmoid on int8 data, which no kernel runs. Its quantization is narrowed
    to [quantize(0), quantize(1)] now (activation_range.py) and upstream folds it into the conv."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l0 = nn.Conv2d(3, 6, 3, padding=1)
        self.l1 = nn.Conv2d(6, 6, 5, padding=2, groups=6)
        self.l2 = nn.Hardsigmoid()
        self.l3 = nn.Conv2d(12, 4, 1)
        self.eval()

    def forward(self, x):
        x = self.l0(x)
        return self.l3(torch.cat([x, self.l2(self.l1(x))], dim=1))

    def example_inputs(self):
        return _image(1, 3, 8, 8)

    def calibration_data(self):
        return _images(1, 3, 8, 8)
