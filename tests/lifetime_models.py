"""Models of test_lifetime.py, importable by its child interpreters without
conftest (whose input checks would count in their memory figures)."""

from __future__ import annotations

import torch


def mlp(width: int = 64) -> torch.nn.Module:
    torch.manual_seed(width)
    return torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                               torch.nn.LayerNorm(4 * width), torch.nn.Linear(4 * width, width))


class Keyword(torch.nn.Module):
    """Takes its input by keyword: calls go through the checked (Python) path."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *, x: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.inner(x)
        return {"y": y, "norm": y.norm(dim=-1)}
