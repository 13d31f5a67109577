"""Search and statistics ops of round 2 against eager: searchsorted, bucketize, isin, histc.

Every test takes a ``dtype`` over the dtypes eager accepts for the op (the
others are skipped when eager rejects them) and several shapes: 0-dim,
empty, 1-D and batched sorted sequences, broadcasting of values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from conftest import compiled
from opsuite import DTYPES, FLOAT_DTYPES, dtype_id, dtypes, sample

NAN, INF = float("nan"), float("inf")


def _check(fn: Callable[..., Any], *args: Any, dtype: torch.dtype, **kwargs: Any) -> None:
    try:
        with torch.no_grad():
            expected = fn(*args, **kwargs)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        pytest.skip(f"eager rejects it on {dtype_id(dtype)}: {str(e).splitlines()[0]}")
    torch.testing.assert_close(compiled(fn, *args, **kwargs), expected, equal_nan=True)


def _sorted(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    return sample(shape, dtype).sort(dim=-1).values


# (sorted shape, values shape)
SEARCH_SHAPES = [((6,), (5,)), ((6,), ()), ((6,), (2, 3)), ((2, 5), (2, 4)), ((2, 3, 4), (2, 3, 2)),
                 ((0,), (3,)), ((6,), (0,)), ((1,), (4,))]


def _many(fn: Callable[..., Any], cases: list[tuple[torch.Tensor, ...]],
          dtype: torch.dtype) -> None:
    """fn over every case in one compiled program (compiling dominates)."""
    arity = len(cases[0])

    def program(*flat: torch.Tensor) -> tuple[Any, ...]:
        return tuple(fn(*flat[i:i + arity]) for i in range(0, len(flat), arity))

    _check(program, *[t for c in cases for t in c], dtype=dtype)


@dtypes(DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side: str, dtype: torch.dtype) -> None:
    cases = []
    for ss, vs in SEARCH_SHAPES:
        s, v = _sorted(ss, dtype), sample(vs, dtype)
        if v.numel() and s.numel():  # exact hits of the boundaries
            v.view(-1)[0] = s.view(-1)[0]
        cases.append((s, v))
    right = side == "right"

    def fn(s: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.searchsorted(s, v, right=right),
                torch.searchsorted(s, v, side=side, out_int32=True))

    _many(fn, cases, dtype)


@dtypes(FLOAT_DTYPES)
def test_searchsorted_special_values(dtype: torch.dtype) -> None:
    s = torch.tensor([-INF, -1.0, 0.0, 0.0, 2.5, INF, NAN], dtype=dtype)
    v = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 2.5, 3.0, -7.0], dtype=dtype)
    _check(lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True)), s, v,
           dtype=dtype)


@dtypes([torch.float32, torch.int64])
def test_searchsorted_sorter_and_scalar(dtype: torch.dtype) -> None:
    s = sample((7,), dtype)
    sorter = s.argsort()
    v = sample((2, 3), dtype)

    def fn(s: torch.Tensor, v: torch.Tensor, sorter: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.searchsorted(s, v, sorter=sorter),
                torch.searchsorted(s, v, side="right", sorter=sorter),
                torch.searchsorted(s.sort().values, 1))

    _check(fn, s, v, sorter, dtype=dtype)


@dtypes(DTYPES)
def test_bucketize(dtype: torch.dtype) -> None:
    cases = [(sample(shape, dtype), _sorted((5,), dtype))
             for shape in [(), (0,), (5,), (2, 3), (2, 1, 4)]]

    def fn(x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.bucketize(x, b), torch.bucketize(x, b, right=True, out_int32=True),
                torch.bucketize(2, b))

    _many(fn, cases, dtype)


ISIN_SHAPES = [((5,), (3,)), ((2, 3), (4,)), ((), (3,)), ((3,), ()), ((2, 2), (2, 3)),
               ((0,), (3,)), ((4,), (0,))]


@dtypes(DTYPES)
def test_isin(dtype: torch.dtype) -> None:
    cases = []
    for es, ts in ISIN_SHAPES:
        e, t = sample(es, dtype, low=-3, high=4), sample(ts, dtype, low=-3, high=4)
        if dtype.is_floating_point:
            e, t = e.round(), t.round()
        cases.append((e, t))

    def fn(e: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.isin(e, t), torch.isin(e, t, invert=True), torch.isin(e, 1)

    _many(fn, cases, dtype)


def test_isin_special_and_promotion() -> None:
    e = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0, 2.5])
    t = torch.tensor([NAN, INF, 0.0, 2.5])
    ints = torch.tensor([0, 1, 2, 3])

    def fn(e: torch.Tensor, t: torch.Tensor, ints: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.isin(e, t), torch.isin(e, t, invert=True), torch.isin(ints, e),
                torch.isin(e, ints), torch.isin(2.5, t), torch.isin(ints, 2.0))

    _check(fn, e, t, ints, dtype=torch.float32)


@dtypes(DTYPES)
@pytest.mark.parametrize("bins,lo,hi", [(5, -2.0, 2.0), (1, 0.0, 1.0), (8, 0.0, 0.0), (3, 1.5, 1.5)],
                         ids=["range", "one_bin", "data_range", "equal_range"])
def test_histc(bins: int, lo: float, hi: float, dtype: torch.dtype) -> None:
    cases = []
    for shape in [(0,), (7,), (3, 4), (2, 3, 5), ()]:
        x = sample(shape, dtype)
        if dtype.is_floating_point and x.numel() > 2:  # the edges themselves
            x.view(-1)[0], x.view(-1)[1] = -2.0, 2.0
        cases.append((x,))
    _many(lambda x: torch.histc(x, bins, lo, hi), cases, dtype)


def test_histc_constant_and_special() -> None:
    x = torch.full((4,), 3.0)
    y = torch.tensor([NAN, INF, -INF, 0.5, 1.0, -1.0, 0.0, 0.999, 0.25])

    def fn(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.histc(x, 4), torch.histc(y, 4, -1, 1)

    _check(fn, x, y, dtype=torch.float32)


STAT_SHAPES = [(7,), (3, 4), (2, 5, 3), (), (1,)]


@dtypes(DTYPES)
def test_nanmedian(dtype: torch.dtype) -> None:
    cases = []
    for shape in STAT_SHAPES:
        x = sample(shape, dtype)
        if dtype.is_floating_point and x.numel() > 2:
            x.view(-1)[::3] = NAN  # some slices partly NaN
        cases.append((x,))

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if x.dim() == 0:
            return torch.nanmedian(x), *torch.nanmedian(x, 0)
        return (torch.nanmedian(x), *torch.nanmedian(x, -1),
                *torch.nanmedian(x, 0, keepdim=True))

    _many(fn, cases, dtype)


def test_nanmedian_all_nan_and_empty() -> None:
    x = torch.tensor([[NAN, NAN, NAN], [1.0, NAN, 0.0], [INF, -INF, NAN]])

    def fn(x: torch.Tensor, e: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.nanmedian(x), *torch.nanmedian(x, 1), torch.nanmedian(e)

    _check(fn, x, torch.zeros(0), dtype=torch.float32)


@dtypes(DTYPES)
def test_mode(dtype: torch.dtype) -> None:
    # few distinct values, so that counts tie; slices shorter than 16 (eager's
    # sort is stable there, its index is the last occurrence)
    cases = []
    for shape in STAT_SHAPES:
        x = sample(shape, dtype, low=-2, high=3)
        cases.append((x.round() if dtype.is_floating_point else x,))

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if x.dim() == 0:
            return tuple(torch.mode(x))
        return (*torch.mode(x), *torch.mode(x, 0, keepdim=True))

    _many(fn, cases, dtype)
