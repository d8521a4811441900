"""Small models covering the ops the cortex_m backend lowers; used by the lowering tests."""

import torch
from torch import nn


def _x(*shape):
    g = torch.Generator().manual_seed(0)
    return (torch.rand(shape, generator=g) * 2 - 1).contiguous(memory_format=torch.channels_last)


class ConvNet(nn.Module):
    """conv, depthwise conv, relu, max pool, avg pool, linear."""

    def __init__(self, channels: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.dw = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.pw = nn.Conv2d(channels, 16, 1)
        self.maxpool = nn.MaxPool2d(2)
        self.avgpool = nn.AvgPool2d(2)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.relu(self.dw(x))
        x = self.maxpool(x)
        x = torch.relu(self.pw(x))
        x = self.avgpool(x)
        return self.fc(x.flatten(1))


class ConvNet12(ConvNet):
    """ConvNet with 12 channels in its depthwise layer: on the M55 that layer runs CMSIS-NN's kernel
    (cmx_depthwise_3x3_s8's Helium path takes multiples of 8), whose 4,464-byte scratch the memory
    goals trade against the DSP kernel."""

    def __init__(self):
        super().__init__(channels=12)


class EltwiseNet(nn.Module):
    """add, mul, hardswish, softmax around a linear layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(32, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 8)

    def forward(self, x):
        a = self.fc1(x)
        b = self.fc2(x)
        y = nn.functional.hardswish(a) + b
        y = y * b
        return torch.softmax(self.fc3(y), dim=-1)


class Unsupported(nn.Module):
    """A linear layer followed by an op the cortex_m backend does not lower (cumsum)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.cumsum(self.fc(x), dim=-1)


class AddThenHardswish(nn.Module):
    """hardswish after add: executorch 1.5.1 leaves it on int8 data with no cortex_m kernel (cmx-gen's
    backend runs it as a table; without the backend it is refused)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(32, 32)
        self.fc2 = nn.Linear(32, 32)

    def forward(self, x):
        return nn.functional.hardswish(self.fc1(x) + self.fc2(x))


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def example_inputs():
    return (_x(1, 3, 8, 8),)


def calibration_data():
    g = torch.Generator().manual_seed(1)
    return [
        ((torch.rand(1, 3, 8, 8, generator=g) * 2 - 1).contiguous(memory_format=torch.channels_last),) for _ in range(8)
    ]


class BigLinear(nn.Module):
    """1.5 MB of int8 weights: more than the flash of an nRF52840 (1 MB)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(1024, 1536)

    def forward(self, x):
        return self.fc(x)


class WideConv(nn.Module):
    """32 x 128 x 128 int8 activations (512 KiB): more than Corstone-300's DTCM. Pooled before the
    float output, which would otherwise need 2 MiB."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(4)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


class Residual(nn.Module):
    """conv + hardswish, depthwise conv, a residual add of two branches, avg_pool2d, linear: every
    op on cortex_m. Its avg_pool2d is where ExecuTorch's Python op (float, round half to even)
    and arm_avgpool_s8 (integer, round half away from zero) part by one LSB."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = nn.functional.hardswish(self.stem(x))
        x = x + self.pw(torch.relu(self.dw(x)))
        x = nn.functional.avg_pool2d(x, 4)
        return self.fc(x.flatten(1))


class Plain(nn.Module):
    """conv + relu; `Pooled` below adds a weightless pool: same file, same state dict."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Pooled(Plain):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(super().forward(x))


class OneChannelFallback(nn.Module):
    """conv to one channel, then a dilated max pool (no cortex_m kernel: portable fp32). The
    1-channel channels-last tensor gets dim order [0, 2, 1, 3], which the portable kernel refuses."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 1, 3, padding=1)
        self.pool = nn.MaxPool2d(3, 1, dilation=2)

    def forward(self, x):
        return self.pool(self.conv(x))


class OneChannelIn(nn.Module):
    """A convolution from one input channel to 16 (a spectrogram's first layer), then a regular one:
    cmx-gen sends the first to CMSIS-NN's convolution, not its depthwise kernel (conv_choice.py)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = nn.Conv2d(1, 16, (5, 3), stride=2, padding=1)
        self.second = nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


class OneChannelPool(nn.Module):
    """A dilated max pool straight on a 1-channel input (upstream's maxpool_dilation case)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, 1, dilation=2)

    def forward(self, x):
        return self.pool(x)


class Attention(nn.Module):
    """q/k/v linears, bmm, a scalar mul, softmax, bmm, linear: on upstream's cortex_m path executorch
    1.5.1's ReplaceScalarWithTensorArgPass fails on the second bmm (int32 vs int8); cmx-gen's own
    cmx::bmm takes both (own_ops.py)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.q, self.k, self.v, self.out = (nn.Linear(16, 16) for _ in range(4))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        att = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.25, dim=-1)
        return self.out(torch.bmm(att, v))  # ATTENTION_SECOND_BMM


class StridedPaddedTransposeConv(nn.Module):
    """ConvTranspose2d with stride 2 and padding 1: the cortex_m kernel computes something else, so
    cmx-gen rewrites it (exact_rewrites.py); without the rewrite the program is refused."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)

    def forward(self, x):
        return self.up(x)


class CropAfterConv(nn.Module):
    """A crop of a convolution's channels-last output: ExecuTorch's slice gives a contiguous tensor,
    and the portable slice kernel refuses in and out of different dim orders."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(4, 4, 3)

    def forward(self, x):
        return self.conv(x)[:, :, 1:-1, 1:-1]


class Upsampler(nn.Module):
    """The decoder's upsampling layer: ConvTranspose2d(k, stride=2, padding=1), optionally with a ReLU,
    then a convolution. cmx-gen computes it with padding 0 on CMSIS-NN and crops (exact_rewrites.py)."""

    kernel, relu = 4, False

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up = nn.ConvTranspose2d(4, 4, self.kernel, stride=2, padding=1, output_padding=self.kernel % 2)
        self.conv = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        y = self.up(x)
        return self.conv(torch.relu(y) if self.relu else y)


class UpsamplerK4Relu(Upsampler):
    kernel, relu = 4, True


class UpsamplerK3(Upsampler):
    kernel, relu = 3, False


class UpsamplerK3Relu(Upsampler):
    kernel, relu = 3, True


class ThreeConvs(nn.Module):
    """Three conv+ReLU layers; `outliers=True` gives the middle one a weight 60x its largest in every
    output channel, which leaves its other weights a few int8 steps (layer_error.py's test)."""

    outliers = False

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first, self.middle, self.last = (
            nn.Conv2d(3, 8, 3, padding=1),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.Conv2d(8, 8, 3, padding=1),
        )
        if self.outliers:
            with torch.no_grad():
                self.middle.weight[:, 0, 0, 0] = 60 * self.middle.weight.abs().amax(dim=(1, 2, 3))

    def forward(self, x):
        return self.last(torch.relu(self.middle(torch.relu(self.first(x)))))


class ThreeConvsOutliers(ThreeConvs):
    outliers = True


class InplaceSub(nn.Module):
    """forward mutates its input (upstream's sub `inplace` case): no run may change the data."""

    def forward(self, x, y):
        return x.sub_(y)


class ArgmaxHead(nn.Module):
    """A classifier that returns the class index (int64): its output cannot be int8 (--io int8)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return torch.argmax(self.fc(x), dim=-1)


class Conv1dNet(nn.Module):
    """Issue 37's 1-D CNN: Conv1d(8->16, k5), Conv1d(16->16, k3), MaxPool1d(4), Linear over [1, 8, 64]."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c1 = nn.Conv1d(8, 16, 5)
        self.c2 = nn.Conv1d(16, 16, 3)
        self.pool = nn.MaxPool1d(4)
        self.fc = nn.Linear(16 * 14, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.c2(torch.relu(self.c1(x)))))
        return self.fc(torch.flatten(x, 1))


class AdaptivePool1dNet(nn.Module):
    """A 1-D classifier ending as users end one: AdaptiveAvgPool1d(1) over the time axis, flatten,
    Linear (it was a float mean over the 3-D tensor before the lift took adaptive pools)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c1 = nn.Conv1d(3, 16, 5, padding=2)
        self.c2 = nn.Conv1d(16, 24, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(24, 4)

    def forward(self, x):
        x = self.pool(torch.relu(self.c2(torch.relu(self.c1(x)))))
        return self.fc(torch.flatten(x, 1))


class Shapes1d(nn.Module):
    """The 1-D shapes that matter: kernel 1, 3, 5, 9; stride 1 and 2; dilation 1, 2, 4; depthwise;
    BatchNorm1d after a convolution; a residual TCN block (dilated conv pair + skip); max and average
    pooling. Input [1, 4, 101]: k9 stride 2 padding 4 over 101 columns is a geometry CMSIS-NN's 1xN
    MVE path gets wrong at the edge (the backend calls arm_convolve_s8 for it), k3 stride 2 padding 1
    over 51 one it gets right (it runs there)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.k1 = nn.Conv1d(4, 12, 1)
        self.bn = nn.BatchNorm1d(12)
        self.k9s2 = nn.Conv1d(12, 12, 9, stride=2, padding=4)
        self.k3s2 = nn.Conv1d(12, 16, 3, stride=2, padding=1)
        self.k5d2 = nn.Conv1d(16, 16, 5, dilation=2, padding=4)
        self.k9d4 = nn.Conv1d(16, 16, 9, dilation=4, padding=16)
        self.dw = nn.Conv1d(16, 16, 3, padding=1, groups=16)
        self.tcn_a = nn.Conv1d(16, 16, 3, dilation=2, padding=2)
        self.tcn_b = nn.Conv1d(16, 16, 3, dilation=2, padding=2)
        self.maxp = nn.MaxPool1d(2)
        self.avgp = nn.AvgPool1d(3, stride=2)
        self.fc = nn.Linear(16 * 6, 6)
        with torch.no_grad():  # a BatchNorm that is not the identity
            self.bn.running_mean.uniform_(-0.2, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = torch.relu(self.bn(self.k1(x)))
        x = torch.relu(self.k9s2(x))
        x = torch.relu(self.k3s2(x))
        x = torch.relu(self.k5d2(x))
        x = torch.relu(self.k9d4(x))
        x = torch.relu(self.dw(x))
        x = torch.relu(x + self.tcn_b(torch.relu(self.tcn_a(x))))
        x = self.avgp(self.maxp(x))
        return self.fc(torch.flatten(x, 1))


class Wav2Letter(nn.Module):
    """torchaudio.models.Wav2Letter (input_type="waveform"), rebuilt from its published layer list
    without torchaudio: the model upstream's cortex_m test case says "does largely not lower to
    accelerated kernels due to missing conv1d support". `width` and `wide` scale the 250 and 2000
    channels (1.0: the published model, 34 M parameters with num_classes=4096)."""

    def __init__(self, num_classes=4096, num_features=1, width=250, wide=2000):
        super().__init__()
        torch.manual_seed(0)
        acoustic = [nn.Conv1d(width, width, 48, stride=2, padding=23), nn.ReLU(inplace=True)]
        for _ in range(7):
            acoustic += [nn.Conv1d(width, width, 7, stride=1, padding=3), nn.ReLU(inplace=True)]
        acoustic += [
            nn.Conv1d(width, wide, 32, stride=1, padding=16),
            nn.ReLU(inplace=True),
            nn.Conv1d(wide, wide, 1, stride=1, padding=0),
            nn.ReLU(inplace=True),
            nn.Conv1d(wide, num_classes, 1, stride=1, padding=0),
            nn.ReLU(inplace=True),
        ]
        waveform = [nn.Conv1d(num_features, width, 250, stride=160, padding=45), nn.ReLU(inplace=True)]
        self.acoustic_model = nn.Sequential(nn.Sequential(*waveform), nn.Sequential(*acoustic))

    def forward(self, x):
        return nn.functional.log_softmax(self.acoustic_model(x), dim=1)


class Wav2LetterSmall(Wav2Letter):
    """The same layer list at 1/16 of the channels (16 and 128) and 32 classes."""

    def __init__(self):
        super().__init__(num_classes=32, width=16, wide=128)


class LstmKws(nn.Module):
    """Issue 34's LSTM keyword spotter: 49 steps of 10 features, one LSTM layer of 32, a linear layer
    to 12 classes on the last step."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm = nn.LSTM(10, 32, batch_first=True)
        self.fc = nn.Linear(32, 12)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class GruKws(nn.Module):
    """LstmKws with a GRU of the same shape."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.gru = nn.GRU(10, 32, batch_first=True)
        self.fc = nn.Linear(32, 12)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y[:, -1])


class EncoderBlock(nn.Module):
    """Issue 34's pre-norm encoder block: LayerNorm, 2-head self-attention written with bmm, a GELU
    MLP, residuals, then the mean over the sequence and a linear classifier. Input [1, 16, 32]."""

    def __init__(self, dim: int = 32, heads: int = 2):
        super().__init__()
        torch.manual_seed(0)
        self.heads, self.dim = heads, dim
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)
        self.act = nn.GELU()
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, h, d // h).transpose(1, 2).reshape(b * h, t, d // h) for y in (q, k, v))
        att = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * (d // h) ** -0.5, dim=-1)
        y = torch.bmm(att, v).reshape(b, h, t, d // h).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.fc2(self.act(self.fc1(self.norm2(x))))
        return self.head(x.mean(dim=1))


class LstmTimeMajor(nn.Module):
    """Two stacked LSTM layers, time-major input [time, batch, features], the last step classified."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.lstm = nn.LSTM(12, 24, num_layers=2)
        self.fc = nn.Linear(24, 6)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[-1])


class GruSequence(nn.Module):
    """A GRU without biases whose every step's output is returned (a sequence tagger's body)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.gru = nn.GRU(8, 20, batch_first=True, bias=False)

    def forward(self, x):
        y, _ = self.gru(x)
        return y


class NormMean(nn.Module):
    """LayerNorm, a linear layer, LayerNorm without affine, then the mean over the sequence."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.norm, self.fc, self.plain = nn.LayerNorm(24), nn.Linear(24, 24), nn.LayerNorm(24, elementwise_affine=False)

    def forward(self, x):
        return self.plain(self.fc(self.norm(x))).mean(dim=1)


class TableOps(nn.Module):
    """Element-wise float ops between int8 layers, each run as a 256-entry table."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x):
        y = torch.exp(self.a(x) * -0.5)
        return self.b(y - 0.25)


class NormOut(nn.Module):
    """A linear layer and the LayerNorm the model returns (with --io int8, the int8 LayerNorm is the output)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.fc, self.norm = nn.Linear(16, 32), nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(self.fc(x))


class TableOut(nn.Module):
    """A linear layer and the element-wise table the model returns."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.exp(self.fc(x) * -0.5)


class WideningPointwise(nn.Module):
    """1x1 layers that widen their channels over 10 positions, each written over its input by the memory
    schedule: cmx_conv_row_s8 takes them three positions at a time in chunks of 6, the last chunk 4."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.a = nn.Conv2d(16, 32, 1)
        self.b = nn.Conv2d(32, 64, 1)
        self.c = nn.Conv2d(64, 16, 1)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


class SharedHead1d(nn.Module):
    """One Conv1d module called twice on the same features (a mask and a residual from one head): its
    weight has two readers."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.inp = nn.Conv1d(2, 8, 5, padding=2)
        self.head = nn.Conv1d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.inp(x))
        return x * torch.sigmoid(self.head(h)) + self.head(h) * 0.1
