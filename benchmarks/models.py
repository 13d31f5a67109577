"""The benchmark models, defined here from ``torch.nn`` (nothing is downloaded).

Each entry of ``MODELS`` is a factory returning ``(model, make_input)``, where
``make_input(batch)`` builds the input batch.  Weights are random (seeded by
the caller); the shapes follow the published architectures:

* ``mlp``: 784-1024-1024-10 with ReLU.
* ``resnet18``: ResNet-18 (basic blocks [2, 2, 2, 2], widths 64-512) on 3x224x224.
* ``mobilenet``: MobileNetV2 (inverted residual blocks, depthwise 3x3) on 3x224x224.
* ``bert``: a BERT-base-shaped encoder: 12 post-norm layers, hidden 768, 12 heads,
  FFN 3072, GELU, token + position embeddings, sequence 128.
* ``gpt2``: a GPT-2-small-shaped decoder forward: 12 pre-norm layers, hidden 768,
  12 heads, causal attention, GELU (tanh), tied 50257-token LM head, sequence 128.

``QUICK`` holds scaled-down versions of the same architectures for tests and
``--quick`` runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

ModelFactory = Callable[[], tuple[nn.Module, Callable[[int], tuple[torch.Tensor, ...]]]]


def calibrated(model: nn.Module, make_input: Callable[[int], tuple[torch.Tensor, ...]]) -> nn.Module:
    """Gives BatchNorm layers the running statistics of real activations.

    Freshly initialised BatchNorm (mean 0, variance 1) lets activations shrink layer after
    layer until the output is nearly constant, which would make both the benchmark and the
    error check meaningless; a trained network's statistics keep them normalised.
    """
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(*make_input(4))
    return model.eval()


# ------------------------------------------------------------------ MLP
def mlp(width: int = 1024, inputs: int = 784) -> ModelFactory:
    def make():
        model = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width),
                              nn.ReLU(), nn.Linear(width, 10))
        return model, lambda b: (torch.randn(b, inputs),)
    return make


# ------------------------------------------------------------------ ResNet-18
class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, widths: tuple[int, ...] = (64, 128, 256, 512), blocks: int = 2,
                 classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            for j in range(blocks):
                layers.append(BasicBlock(cin, w, 2 if i > 0 and j == 0 else 1))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet18(size: int = 224, widths: tuple[int, ...] = (64, 128, 256, 512)) -> ModelFactory:
    def make():
        def make_input(b):
            return (torch.randn(b, 3, size, size),)
        return calibrated(ResNet(widths), make_input), make_input
    return make


# ------------------------------------------------------------------ MobileNetV2
class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.ReLU6(),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    # (expansion, channels, repeats, stride) of the published network
    CONFIG = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1))

    def __init__(self, width: float = 1.0, classes: int = 1000) -> None:
        super().__init__()
        cin = int(32 * width)
        layers: list[nn.Module] = [nn.Conv2d(3, cin, 3, 2, 1, bias=False), nn.BatchNorm2d(cin),
                                   nn.ReLU6()]
        for t, c, n, s in self.CONFIG:
            cout = int(c * width)
            for i in range(n):
                layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        last = int(1280 * max(1.0, width))
        layers += [nn.Conv2d(cin, last, 1, bias=False), nn.BatchNorm2d(last), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(last, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.head(torch.flatten(x, 1))


def mobilenet(size: int = 224, width: float = 1.0) -> ModelFactory:
    def make():
        def make_input(b):
            return (torch.randn(b, 3, size, size),)
        return calibrated(MobileNetV2(width), make_input), make_input
    return make


# ------------------------------------------------------------------ BERT-base
class Bert(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, vocab: int, seq: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(seq, hidden)
        self.norm = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1])
        return self.encoder(self.norm(self.tokens(ids) + self.positions(pos)))


def bert(layers: int = 12, hidden: int = 768, heads: int = 12, vocab: int = 30522,
         seq: int = 128) -> ModelFactory:
    def make():
        model = Bert(layers, hidden, heads, vocab, seq)
        return model, lambda b: (torch.randint(0, vocab, (b, seq)),)
    return make


# ------------------------------------------------------------------ GPT-2 small
class CausalSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))


class GptBlock(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * hidden, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt2(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, vocab: int, seq: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(seq, hidden)
        self.blocks = nn.Sequential(*[GptBlock(hidden, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(hidden)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1])
        x = self.ln(self.blocks(self.tokens(ids) + self.positions(pos)))
        return x @ self.tokens.weight.t()  # tied LM head


def gpt2(layers: int = 12, hidden: int = 768, heads: int = 12, vocab: int = 50257,
         seq: int = 128) -> ModelFactory:
    def make():
        model = Gpt2(layers, hidden, heads, vocab, seq)
        return model, lambda b: (torch.randint(0, vocab, (b, seq)),)
    return make


MODELS: dict[str, ModelFactory] = {
    "mlp": mlp(),
    "resnet18": resnet18(),
    "mobilenet": mobilenet(),
    "bert": bert(),
    "gpt2": gpt2(),
}

# The same architectures, small enough for a test to compile and run them in seconds.
QUICK: dict[str, ModelFactory] = {
    "mlp": mlp(width=64, inputs=32),
    "resnet18": resnet18(size=32, widths=(8, 16, 16, 32)),
    "mobilenet": mobilenet(size=32, width=0.25),
    "bert": bert(layers=2, hidden=64, heads=4, vocab=100, seq=16),
    "gpt2": gpt2(layers=2, hidden=64, heads=4, vocab=100, seq=16),
}
