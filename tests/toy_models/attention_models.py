"""Attention as PyTorch writes it (issue 53): F.scaled_dot_product_attention with is_causal and with a
boolean mask, nn.TransformerEncoderLayer pre- and post-norm and as a decoder's causal layer,
nn.MultiheadAttention with a float causal mask. Tokens [1, 16, 32], as a user's file has them."""

import torch
from torch import nn
from torch.nn import functional as F

TOKENS, DIM, HEADS = 16, 32, 2


class _Sdpa(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def heads(self, x):
        return x.reshape(1, TOKENS, HEADS, DIM // HEADS).transpose(1, 2)

    def attend(self, x, **kwargs):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        y = F.scaled_dot_product_attention(self.heads(q), self.heads(k), self.heads(v), **kwargs)
        return self.out(y.transpose(1, 2).reshape(1, TOKENS, DIM))


class CausalSdpa(_Sdpa):
    """A decoder's self-attention: is_causal=True."""

    def forward(self, x):
        return self.attend(x, is_causal=True)


class MaskedSdpa(_Sdpa):
    """Self-attention with a constant boolean mask (a sliding window of 4 tokens each way)."""

    def __init__(self):
        super().__init__()
        i = torch.arange(TOKENS)
        self.register_buffer("mask", (i[None, :] - i[:, None]).abs() <= 4)

    def forward(self, x):
        return self.attend(x, attn_mask=self.mask)


class DilatedMaskSdpa(_Sdpa):
    """A mask whose allowed keys are not one run a row (every other token): upstream's float path."""

    def __init__(self):
        super().__init__()
        i = torch.arange(TOKENS)
        self.register_buffer("mask", (i[None, :] - i[:, None]) % 2 == 0)

    def forward(self, x):
        return self.attend(x, attn_mask=self.mask)


class MhaCausalMask(nn.Module):
    """nn.MultiheadAttention given nn.Transformer's float causal mask (0 and -inf), its residual."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(TOKENS))

    def forward(self, x):
        y, _ = self.attn(x, x, x, attn_mask=self.mask, need_weights=False)
        return x + y


class CausalDecoderLayer(nn.Module):
    """nn.TransformerEncoderLayer as a decoder-only model has it: pre-norm, the causal mask made in
    forward and is_causal=True."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.TransformerEncoderLayer(
            DIM, HEADS, dim_feedforward=2 * DIM, dropout=0.0, batch_first=True, norm_first=True
        )

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(TOKENS)
        return self.layer(x, src_mask=mask, is_causal=True)


class EncoderPostNorm(nn.Module):
    """nn.TransformerEncoderLayer as its defaults have it: post-norm, ReLU."""

    def __init__(self, norm_first: bool = False, activation: str = "relu"):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.TransformerEncoderLayer(
            DIM,
            HEADS,
            dim_feedforward=2 * DIM,
            dropout=0.0,
            batch_first=True,
            norm_first=norm_first,
            activation=activation,
        )

    def forward(self, x):
        return self.layer(x)


class EncoderPreNorm(EncoderPostNorm):
    """nn.TransformerEncoderLayer pre-norm with GELU."""

    def __init__(self):
        super().__init__(norm_first=True, activation="gelu")


def example_inputs():
    return (torch.randn(1, TOKENS, DIM, generator=torch.Generator().manual_seed(0)),)


def calibration_data(n: int = 16):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(1, TOKENS, DIM, generator=g),) for _ in range(n)]
