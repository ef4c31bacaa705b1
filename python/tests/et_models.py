"""PyTorch models for the ExecuTorch tests and bench: each a class with
``example()`` giving its inputs (a tuple) and, where the program's path
depends on its inputs, ``others()`` giving more inputs to run."""

from __future__ import annotations

from typing import List, Tuple

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, width: int = 256, depth: int = 4) -> None:
        super().__init__()
        layers: List[nn.Module] = [nn.Linear(64, width), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Linear(width, 10))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(8, 64),)


class Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.a = nn.Conv2d(channels, channels, 3, padding=1)
        self.na = nn.BatchNorm2d(channels)
        self.b = nn.Conv2d(channels, channels, 3, padding=1)
        self.nb = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.na(self.a(x)))
        return torch.relu(x + self.nb(self.b(y)))


class ResNet(nn.Module):
    """A small CNN of residual blocks, downsampling between stages."""

    def __init__(self, widths: Tuple[int, ...] = (16, 32, 64), blocks: int = 2, size: int = 32) -> None:
        super().__init__()
        self.size = size
        layers: List[nn.Module] = [nn.Conv2d(3, widths[0], 3, padding=1), nn.ReLU()]
        for i, w in enumerate(widths):
            if i:
                layers += [nn.Conv2d(widths[i - 1], w, 3, stride=2, padding=1), nn.ReLU()]
            layers += [Residual(w) for _ in range(blocks)]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(widths[-1], 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x).mean(dim=(2, 3)))

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(2, 3, self.size, self.size),)


class DecoderBlock(nn.Module):
    """Causal self-attention, layer norms, a GELU feed-forward."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.n1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.n2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        attn = scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(y)
        return x + self.ff(self.n2(x))


class Decoder(nn.Module):
    """A stack of decoder blocks over token embeddings."""

    def __init__(self, layers: int = 1, dim: int = 64, heads: int = 4, seq: int = 16, vocab: int = 128) -> None:
        super().__init__()
        self.seq, self.vocab = seq, vocab
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[DecoderBlock(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.blocks(self.embed(tokens))))

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randint(0, self.vocab, (1, self.seq)),)


class Branching(nn.Module):
    """A ``torch.cond`` whose branches each hold several intermediates."""

    def __init__(self) -> None:
        super().__init__()
        self.pre = nn.Linear(32, 64)
        self.a = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64))
        self.b = nn.Sequential(nn.Linear(64, 96), nn.Tanh(), nn.Linear(96, 64))
        self.post = nn.Linear(64, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.pre(x))
        h = torch.cond(h.sum() > 0, lambda z: self.a(z) * 2, lambda z: self.b(z) - 1, (h,))
        return self.post(h + x.mean())

    def example(self) -> Tuple[torch.Tensor, ...]:
        torch.manual_seed(1)
        return (torch.randn(4, 32),)

    def others(self) -> List[Tuple[torch.Tensor, ...]]:
        return [(torch.randn(4, 32) * s,) for s in (-3.0, 3.0, 0.5)]


class KVCache(nn.Module):
    """One attention step that writes this position's keys and values
    into caches held as mutable buffers, and attends over the cache. The
    caches start non-zero and the program carries that initial state
    (``initialized``), so a plan that let another tensor overwrite them
    would change the outputs."""

    initialized = ["k_cache", "v_cache"]

    def __init__(self, dim: int = 32, length: int = 16) -> None:
        super().__init__()
        self.dim, self.length = dim, length
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.register_buffer("k_cache", torch.randn(1, length, dim))
        self.register_buffer("v_cache", torch.randn(1, length, dim))

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).split(self.dim, dim=-1)
        self.k_cache.index_copy_(1, pos, k)
        self.v_cache.index_copy_(1, pos, v)
        scores = q @ self.k_cache.transpose(1, 2) / self.dim**0.5
        return self.out(scores.softmax(dim=-1) @ self.v_cache)

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(1, 1, self.dim), torch.tensor([0]))

    def others(self) -> List[Tuple[torch.Tensor, ...]]:
        return [(torch.randn(1, 1, self.dim), torch.tensor([p])) for p in (1, 2, 3)]


class UNet(nn.Module):
    """A U-Net-like CNN: skips from each down stage to its up stage."""

    def __init__(self, widths: Tuple[int, ...] = (16, 32, 64, 128), size: int = 64) -> None:
        super().__init__()
        self.size = size
        self.down = nn.ModuleList()
        channels = 3
        for w in widths:
            self.down.append(nn.Sequential(nn.Conv2d(channels, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU()))
            channels = w
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(nn.ConvTranspose2d(channels, w, 2, stride=2))
            self.merge.append(nn.Sequential(nn.Conv2d(2 * w, w, 3, padding=1), nn.ReLU()))
            channels = w
        self.head = nn.Conv2d(channels, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, stage in enumerate(self.down):
            x = stage(x)
            if i < len(self.down) - 1:
                skips.append(x)
                x = nn.functional.max_pool2d(x, 2)
        for up, merge in zip(self.up, self.merge):
            x = merge(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(1, 3, self.size, self.size),)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int = 6) -> None:
        super().__init__()
        hidden = cin * expand
        self.skip = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, hidden, 1), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1), nn.BatchNorm2d(cout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.skip else y


class MobileNet(nn.Module):
    """A MobileNetV2-like stack of inverted residual blocks: expanded
    intermediates several times the size of the blocks' inputs."""

    def __init__(self, size: int = 96) -> None:
        super().__init__()
        self.size = size
        stages = [(16, 1, 1), (24, 2, 2), (32, 3, 2), (64, 2, 2), (96, 2, 1)]
        layers: List[nn.Module] = [nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU6()]
        cin = 16
        for cout, repeat, stride in stages:
            for i in range(repeat):
                layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1))
                cin = cout
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(cin, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x).mean(dim=(2, 3)))

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(1, 3, self.size, self.size),)


class Mapped(nn.Module):
    """``torch.map`` (a loop over the leading dimension, run by the
    ExecuTorch runtime) of a small network."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 48)
        self.b = nn.Linear(48, 16)

    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        from torch._higher_order_ops.map import map as loop

        return loop(lambda x: self.b(torch.relu(self.a(x))) * 3, xs) + xs.mean()

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(5, 3, 16),)


class Shared(nn.Module):
    """Linear layers and ReLUs; ``SHARE_RELU`` below makes each ReLU write
    into its input's storage (ExecuTorch's storage-backed specs)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 64)
        self.b = nn.Linear(64, 64)
        self.c = nn.Linear(64, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(3, 16),)


class NestedBranching(nn.Module):
    """A ``torch.cond`` inside a branch of another: the inner results
    reach the outer graph through both branches' outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.c = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def outer(z: torch.Tensor) -> torch.Tensor:
            return torch.cond(z.mean() > 0, lambda w: self.a(w).relu(), lambda w: self.b(w).tanh(), (z,))

        y = torch.cond(x.sum() > 0, outer, lambda z: z * 3, (x,))
        return self.c(y) + y

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(3, 8).abs(),)

    def others(self) -> List[Tuple[torch.Tensor, ...]]:
        torch.manual_seed(2)
        return [(-torch.randn(3, 8).abs(),), (torch.randn(3, 8),), (torch.randn(3, 8) + 0.5,)]


# A zoo of smaller models, each for an op family a planner must not trip
# on: recurrent layers, several outputs, PyTorch's attention modules,
# integer tensors, normalisation and dropout in eval, embeddings, buffers
# updated in place.


class Recurrent(nn.Module):
    """Two-layer LSTM and a GRU; both of the GRU's outputs returned."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.gru = nn.GRU(32, 16, batch_first=True)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        y, _ = self.lstm(x)
        z, h = self.gru(y)
        return z.sum(1), h

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(2, 10, 16),)


class Signal(nn.Module):
    """1-d convolutions (dilated), GELU and SiLU, two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Sequential(
            nn.Conv1d(4, 16, 5, padding=2), nn.GELU(), nn.Conv1d(16, 16, 3, dilation=2, padding=2), nn.SiLU()
        )

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        y = self.c(x)
        return y.softmax(-1), y.amax(-1)

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(2, 4, 50),)


class Attention(nn.Module):
    """``nn.MultiheadAttention`` (weights returned too) and
    ``scaled_dot_product_attention``."""

    def __init__(self) -> None:
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm = nn.LayerNorm(32)
        self.qkv = nn.Linear(32, 96)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        y, weights = self.mha(x, x, x)
        y = self.norm(y + x)
        q, k, v = self.qkv(y).chunk(3, -1)
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), weights

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(2, 12, 32),)


class Indexing(nn.Module):
    """Integer inputs and results: gather, argmax, cumsum, an embedding
    and normalisation against its table."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.position = nn.Parameter(torch.randn(20, 16))

    def forward(self, x: torch.Tensor, index: torch.Tensor, tokens: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        picked = torch.gather(x, 1, index) * 2 + x.argmax(1, keepdim=True).float()
        h = self.embed(tokens) + self.position[: tokens.shape[1]]
        return picked, torch.cumsum(x, 0), nn.functional.normalize(h, dim=-1) @ self.embed.weight.T

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(4, 6), torch.randint(0, 6, (4, 3)), torch.randint(0, 50, (2, 20)))


class Classifier(nn.Module):
    """Convolution, batch norm, adaptive pooling, flatten, dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Sequential(
            nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
            nn.Flatten(), nn.Linear(128, 5), nn.Dropout(0.1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c(x)

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(2, 3, 20, 20),)


class Accumulator(nn.Module):
    """Buffers updated in place each call (a count and a running mean)."""

    initialized = ["count", "acc"]

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", torch.ones(1))
        self.register_buffer("acc", torch.randn(4, 8))
        self.l = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count.add_(1)
        self.acc.mul_(0.5).add_(self.l(x))
        return self.acc / self.count

    def example(self) -> Tuple[torch.Tensor, ...]:
        return (torch.randn(4, 8),)

    def others(self) -> List[Tuple[torch.Tensor, ...]]:
        return [(torch.randn(4, 8),), (torch.randn(4, 8),)]


# The models the tests run (small enough for every CI run), by name;
# the bench adds larger ones.
TESTED = {
    "mlp": lambda: MLP(),
    "resnet": lambda: ResNet(),
    "decoder": lambda: Decoder(layers=2),
    "cond": lambda: Branching(),
    "nested-cond": lambda: NestedBranching(),
    "kv-cache": lambda: KVCache(),
    "unet": lambda: UNet(size=32),
    "mobilenet": lambda: MobileNet(size=64),
    "map": lambda: Mapped(),
    "recurrent": lambda: Recurrent(),
    "signal": lambda: Signal(),
    "attention": lambda: Attention(),
    "indexing": lambda: Indexing(),
    "classifier": lambda: Classifier(),
    "accumulator": lambda: Accumulator(),
}
