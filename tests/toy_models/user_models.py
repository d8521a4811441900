"""Models written the ordinary PyTorch way, as a user brings them (issue 53): no layer picked to suit
cmx-gen. Each has the example_inputs() a user's file would."""

import torch
from torch import nn


class TinyUNet(nn.Module):
    """An encoder-decoder with a skip: a strided grouped conv down, a dilated grouped conv, a depthwise
    conv with channel multiplier 2, nn.Upsample back up, torch.cat of the skip, a sigmoid mask."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=4), nn.ReLU())
        self.mid = nn.Sequential(
            nn.Conv2d(32, 32, 3, padding=2, dilation=2, groups=2),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1, groups=32),
            nn.ReLU(),
            nn.Conv2d(64, 32, 1),
            nn.ReLU(),
        )
        self.up = nn.Upsample(scale_factor=2)
        self.dec = nn.Sequential(nn.Conv2d(48, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))

    def forward(self, x):
        skip = self.enc(x)
        x = self.mid(self.down(skip))
        x = torch.cat([self.up(x), skip], dim=1)
        return torch.sigmoid(self.dec(x))


class SkipConcat(nn.Module):
    """Two branches of very different ranges concatenated along the channels (DenseNet-style)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 8, 3, padding=1)
        with torch.no_grad():
            self.b.weight.mul_(8)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        e = torch.relu(self.a(x))
        return self.head(torch.cat([torch.relu(self.b(e)), e], dim=1))


def example_inputs():
    return (torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)


def calibration_data(n: int = 16):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(1, 3, 16, 16, generator=g),) for _ in range(n)]


class TinyViT(nn.Module):
    """A patch-embedding conv, a class token and a learned position embedding (parameters used as
    tensors), two pre-norm blocks of nn.LayerNorm, nn.MultiheadAttention(batch_first=True), GELU MLP."""

    def __init__(self, dim: int = 32, heads: int = 2, depth: int = 2):
        super().__init__()
        torch.manual_seed(0)
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 17, dim) * 0.02)
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                {
                    "norm1": nn.LayerNorm(dim),
                    "attn": nn.MultiheadAttention(dim, heads, batch_first=True),
                    "norm2": nn.LayerNorm(dim),
                    "mlp": nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)),
                }
            )
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for block in self.blocks:
            y = block["norm1"](x)
            x = x + block["attn"](y, y, y, need_weights=False)[0]
            x = x + block["mlp"](block["norm2"](x))
        return self.head(self.norm(x[:, 0]))


class AttentionDenoiser(nn.Module):
    """A denoiser of 16x16 one-channel images, trained when made (seeded, about a second): a conv and
    ReLU (the skip), a strided conv down, nn.MultiheadAttention over the 8x8 tokens
    (`flatten(2).transpose(1, 2)` and back with `reshape`), nn.Upsample, torch.cat of the skip, and the
    noise estimate subtracted from the input. The skip's ReLU shares the concat's quantization with the
    attention branch, which goes negative; the image made back from the tokens is contiguous."""

    def __init__(self, steps: int = 60):
        super().__init__()
        torch.manual_seed(0)
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec = nn.Sequential(nn.Conv2d(24, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
        optimizer = torch.optim.Adam(self.parameters(), 3e-3)
        for step in range(steps):
            noisy, clean = _noisy_images(16, 100 + step)
            loss = ((self(noisy) - clean) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        self.eval()

    def forward(self, x):
        skip = self.enc(x)
        y = self.down(skip)
        b, c, h, w = y.shape
        t = y.flatten(2).transpose(1, 2)
        t = t + self.attn(t, t, t, need_weights=False)[0]
        y = t.transpose(1, 2).reshape(b, c, h, w)
        return x - self.dec(torch.cat([self.up(y), skip], dim=1))

    def example_inputs(self):
        return (_noisy_images(1, 7)[0],)

    def calibration_data(self):
        noisy, _ = _noisy_images(16, 3)
        return [(noisy[i : i + 1],) for i in range(16)]


def _noisy_images(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n noisy 16x16 sine patterns and their clean originals."""
    g = torch.Generator().manual_seed(seed)
    xs = torch.linspace(-1, 1, 16)
    freq = torch.rand(n, 1, 1, 1, generator=g) * 4 + 1
    phase = torch.rand(n, 1, 1, 1, generator=g) * 3
    clean = torch.sin(freq * xs.view(1, 1, 16, 1) + phase) * torch.cos(freq * xs.view(1, 1, 1, 16))
    return clean + 0.2 * torch.randn(clean.shape, generator=g), clean


class BiGruKeywordSpotter(nn.Module):
    """A keyword spotter over 49 frames of 10 MFCC-like features: a bidirectional nn.GRU (batch_first),
    its outputs averaged over time, a linear classifier of 12 words. Trained when made (seeded, a few
    seconds) on synthetic words: a formant sweeping up or down through one of six bands."""

    def __init__(self, steps: int = 80):
        super().__init__()
        torch.manual_seed(0)
        self.gru = nn.GRU(10, 32, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(64, 12)
        optimizer = torch.optim.Adam(self.parameters(), 1e-2)
        for step in range(steps):
            x, label = _spoken_words(32, 200 + step)
            loss = nn.functional.cross_entropy(self(x), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        self.eval()

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y.mean(dim=1))

    def example_inputs(self):
        return (_spoken_words(1, 7)[0],)

    def calibration_data(self):
        x, _ = _spoken_words(16, 3)
        return [(x[i : i + 1],) for i in range(16)]


class BiLstmTagger(nn.Module):
    """A sequence tagger: two bidirectional nn.LSTM layers over 20 time-major steps of 8 features
    ([time, batch, features], PyTorch's default), a linear layer tagging every step with 4 classes."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.lstm = nn.LSTM(8, 12, num_layers=2, bidirectional=True)
        self.tag = nn.Linear(24, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.tag(y)

    def example_inputs(self):
        return (torch.randn(20, 1, 8, generator=torch.Generator().manual_seed(0)).cumsum(0) * 0.3,)

    def calibration_data(self):
        g = torch.Generator().manual_seed(1)
        return [(torch.randn(20, 1, 8, generator=g).cumsum(0) * 0.3,) for _ in range(16)]


class SpectrogramNormKws(nn.Module):
    """A keyword spotter on a one-channel 49 x 10 spectrogram that normalizes its input as audio models
    do, `nn.BatchNorm2d(1)` first (or, with `pool`, averages pairs of frames first), then convs. The
    input reached the first conv through another op, so it stayed contiguous and every conv float:
    refused (a one-channel image's dim order [0, 2, 1, 3] before a float conv)."""

    def __init__(self, pool: bool = False):
        super().__init__()
        torch.manual_seed(6)
        self.pool = pool
        self.norm = nn.BatchNorm2d(1)
        self.norm.running_mean.fill_(0.3)
        self.norm.running_var.fill_(2.0)
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()
        )
        self.fc = nn.Linear(16, 12)
        self.eval()

    def forward(self, x):
        x = nn.functional.avg_pool2d(x, (2, 1)) if self.pool else self.norm(x)
        return self.fc(self.features(x).mean((2, 3)))

    def example_inputs(self):
        return (_spoken_words(1, 8)[0].unsqueeze(1),)

    def calibration_data(self):
        x, _ = _spoken_words(16, 4)
        return [(x[i : i + 1].unsqueeze(1),) for i in range(16)]


class PooledSpectrogramKws(SpectrogramNormKws):
    """SpectrogramNormKws with an average pool over pairs of frames in place of the BatchNorm."""

    def __init__(self):
        super().__init__(pool=True)


def _spoken_words(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n synthetic words [n, 49, 10] and their labels: word k sweeps a formant through band k // 2,
    upwards for even k and downwards for odd, at a random onset, over noise."""
    g = torch.Generator().manual_seed(seed)
    label = torch.randint(0, 12, (n,), generator=g)
    t = torch.arange(49).view(1, 49, 1).float()
    onset = torch.randint(0, 20, (n, 1, 1), generator=g).float()
    sweep = ((t - onset) / 25).clamp(0, 1)
    direction = torch.where(label % 2 == 0, 1.0, -1.0).view(n, 1, 1)
    centre = (label // 2).view(n, 1, 1).float() * 1.5 + 1 + 2 * direction * (sweep - 0.5)
    band = torch.arange(10).view(1, 1, 10).float()
    active = ((t >= onset) & (t < onset + 25)).float()
    return active * torch.exp(-((band - centre) ** 2)) + 0.1 * torch.randn(n, 49, 10, generator=g), label


def _accelerometer(n: int, seed: int, length: int = 96) -> torch.Tensor:
    """n three-axis windows [n, 3, length]: a vibration at one of a few frequencies over noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length).float() / length
    f = torch.randint(1, 9, (n, 3, 1), generator=g).float()
    return torch.sin(2 * torch.pi * f * t) + 0.2 * torch.randn(n, 3, length, generator=g)


class Windows1d(nn.Module):
    """What the 1-D models below share: accelerometer windows in, calibration on 16 of them."""

    def example_inputs(self):
        return (_accelerometer(1, 0),)

    def calibration_data(self):
        return [(w.unsqueeze(0),) for w in _accelerometer(16, 1)]


class SamePaddingVibration(Windows1d):
    """Conv1d with padding="same" (dilated too), a max pool, and a global AdaptiveMaxPool1d, as a
    Keras port writes them: every conv was float (the cortex_m quantizer takes no conv2d.padding)
    and so was the adaptive max pool."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(7)
        self.c1 = nn.Conv1d(3, 16, 5, padding="same")
        self.c2 = nn.Conv1d(16, 16, 3, padding="same", dilation=2)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        x = nn.functional.max_pool1d(torch.relu(self.c1(x)), 2)
        x = nn.functional.adaptive_max_pool1d(torch.relu(self.c2(x)), 1).flatten(1)
        return self.fc(x)


class UpsampleSkip1d(Windows1d):
    """A 1-D encoder-decoder step: a strided Conv1d, nn.Upsample(scale_factor=2) back to the input's
    length (it was float: export writes upsample_nearest1d, then indexing ops), a skip concat."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(8)
        self.down = nn.Conv1d(3, 8, 3, stride=2, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.out = nn.Conv1d(8 + 3, 3, 3, padding=1)

    def forward(self, x):
        return self.out(torch.cat([self.up(torch.relu(self.down(x))), x], dim=1))


class SamePadding2d(nn.Module):
    """Conv2d with padding="same" (one dilated) and an AdaptiveMaxPool2d(1) head: both were float."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(9)
        self.c1 = nn.Conv2d(3, 8, 3, padding="same")
        self.c2 = nn.Conv2d(8, 8, 5, padding="same", dilation=2)
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = torch.relu(self.c2(torch.relu(self.c1(x))))
        return self.fc(self.pool(x).flatten(1))

    def example_inputs(self):
        return (torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(s)),) for s in range(1, 17)]


class ViewFlattenCnn(nn.Module):
    """The classic PyTorch flatten, `x.view(x.size(0), -1)`, after convolutions: with the input
    channels-last (as its convolutions need it) the view is refused by the strides, and the model
    was refused at export ("Cannot view a tensor ... with strides ..."); it is traced as a reshape."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(10)
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        x = torch.relu(self.c2(torch.relu(self.c1(x))))
        return self.fc(x.view(x.size(0), -1))

    def example_inputs(self):
        return (torch.randn(1, 3, 24, 24, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 3, 24, 24, generator=torch.Generator().manual_seed(s)),) for s in range(1, 13)]


class AdaptiveGridPool(nn.Module):
    """F.adaptive_avg_pool2d(x, 2): a 2 x 2 grid of means before a linear layer. It was a float
    island at a delegate boundary the target check refused ("would build wrong firmware")."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(11)
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 4, 3)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(torch.relu(self.c(x)), 2)
        return self.fc(x.flatten(1))

    def example_inputs(self):
        return (torch.randn(1, 3, 24, 24, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 3, 24, 24, generator=torch.Generator().manual_seed(s)),) for s in range(1, 13)]


class ZeroPaddedConvs(nn.Module):
    """nn.ZeroPad2d(1) before a padding-free conv, and F.pad(x, (2, 2, 2, 2)) before a padded one:
    the pad ran int8 on a contiguous image and the convs stayed float (the input too: a pad is not a
    conv for the input's layout). The pads fold into the convs' own padding."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(12)
        self.pad = nn.ZeroPad2d(1)
        self.c1 = nn.Conv2d(3, 8, 3)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        x = torch.relu(self.c1(self.pad(x)))
        x = torch.relu(self.c2(nn.functional.pad(x, (2, 2, 2, 2))))
        return self.fc(x.mean((2, 3)))

    def example_inputs(self):
        return (torch.randn(1, 3, 20, 20, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 3, 20, 20, generator=torch.Generator().manual_seed(s)),) for s in range(1, 13)]


class GatedKwsHead(nn.Module):
    """A keyword spotter over 49 frames of 10 MFCC-like features written with gates, as GLU-style and
    attention-masked audio models are: a per-frame mask `x * sigmoid(nn.Linear(10, 10)(x))`, the frames
    flattened into nn.Linear(490, 30), a gated unit `nn.Linear(30, 64)(h) * sigmoid(nn.Linear(30, 64)(h))`,
    a bottleneck nn.Linear(64, 18), the product of two branches of it `nn.Linear(18, 40)(z) *
    nn.Linear(18, 40)(z)`, and nn.Linear(40, 12) over 12 words. Its inputs count 10, 490, 30 and 18
    features (none a multiple of four) as well as 64 and 40."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(13)
        self.mask = nn.Linear(10, 10)
        self.embed = nn.Linear(490, 30)
        self.value = nn.Linear(30, 64)
        self.gate = nn.Linear(30, 64)
        self.squeeze = nn.Linear(64, 18)
        self.left = nn.Linear(18, 40)
        self.right = nn.Linear(18, 40)
        self.fc = nn.Linear(40, 12)
        self.eval()

    def forward(self, x):
        x = x * torch.sigmoid(self.mask(x))
        h = torch.relu(self.embed(x.flatten(1)))
        h = self.value(h) * torch.sigmoid(self.gate(h))
        z = torch.relu(self.squeeze(h))
        return self.fc(self.left(z) * self.right(z))

    def example_inputs(self):
        return (_spoken_words(1, 9)[0],)

    def calibration_data(self):
        x, _ = _spoken_words(16, 5)
        return [(x[i : i + 1],) for i in range(16)]


class TinyMlpMixer(nn.Module):
    """An MLP-Mixer block as people write it: patches by a strided conv, nn.LayerNorm, token mixing by
    `.transpose(1, 2)` around an nn.GELU MLP, channel mixing, a mean over tokens."""

    def __init__(self, dim: int = 16, tokens: int = 16):
        super().__init__()
        torch.manual_seed(5)
        self.patch = nn.Conv2d(1, dim, 4, stride=4)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.tokens = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.channels = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)  # [1, tokens, dim]
        t = t + self.tokens(self.norm1(t).transpose(1, 2)).transpose(1, 2)
        t = t + self.channels(self.norm2(t))
        return self.head(t.mean(1))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 1, 16, 16),)

    @staticmethod
    def calibration_data():
        g = torch.Generator().manual_seed(6)
        return [(torch.randn(1, 1, 16, 16, generator=g),) for _ in range(16)]


class SqueezeExciteBlock(nn.Module):
    """A MobileNetV3 block as people write it: nn.Hardswish after BatchNorms, a depthwise conv, a
    squeeze-and-excite gate (adaptive pool, 1x1 convs, F.hardsigmoid), a residual and a pooled head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.Hardswish())
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.BatchNorm2d(16), nn.Hardswish())
        self.squeeze, self.excite = nn.Conv2d(16, 8, 1), nn.Conv2d(8, 16, 1)
        self.pw = nn.Sequential(nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.stem(x)
        y = self.dw(x)
        s = nn.functional.adaptive_avg_pool2d(y, 1)
        s = nn.functional.hardsigmoid(self.excite(nn.functional.relu(self.squeeze(s))))
        y = self.pw(y * s) + x
        return self.head(nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 3, 32, 32),)

    @staticmethod
    def calibration_data():
        g = torch.Generator().manual_seed(7)
        return [(torch.randn(1, 3, 32, 32, generator=g),) for _ in range(16)]


def _conv_bn_relu(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ConvTransposeUNet(nn.Module):
    """The U-Net of the paper, small: two Conv-BatchNorm-ReLU a level, nn.MaxPool2d down, nn.ConvTranspose2d
    (2 x 2, stride 2) up, torch.cat of the skip, a 1x1 head; BatchNorm statistics not the identity."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(8)
        self.enc1 = nn.Sequential(_conv_bn_relu(1, 8), _conv_bn_relu(8, 8))
        self.enc2 = nn.Sequential(_conv_bn_relu(8, 16), _conv_bn_relu(16, 16))
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Sequential(_conv_bn_relu(16, 32), _conv_bn_relu(32, 32))
        self.up2, self.dec2 = nn.ConvTranspose2d(32, 16, 2, stride=2), _conv_bn_relu(32, 16)
        self.up1, self.dec1 = nn.ConvTranspose2d(16, 8, 2, stride=2), _conv_bn_relu(16, 8)
        self.head = nn.Conv2d(8, 2, 1)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 1, 16, 16),)

    @staticmethod
    def calibration_data():
        g = torch.Generator().manual_seed(9)
        return [(torch.randn(1, 1, 16, 16, generator=g),) for _ in range(16)]
