"""Matmul and convolution shape classes of the packed, register-blocked kernels.

poptorch-tile-and-vectorize tiles contractions into 8x32 register blocks (column
blocks outside row blocks) and copies the k x 32 block of B that a column block
reads into a contiguous panel when several row blocks reuse it (`pack-rhs`);
regular convolutions are matmuls over im2col columns. These tests cover the
shapes around those choices: sizes that are not multiples of the tiles, one row
block (no packing), K = 1, batched and broadcast operands, transposed
operands, wide B, and every dtype path, against eager.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import check
from opsuite import FLOAT_DTYPES, SIGNED_DTYPES, dtypes, sample

MM_SHAPES = [
    ((16, 64), (64, 128)),  # packed panels, whole tiles
    ((17, 33), (33, 65)),  # partial row, column and k tiles
    ((70, 100), (100, 130)),  # several row blocks, partial panel
    ((8, 64), (64, 300)),  # one row block: no packing
    ((40, 1), (1, 96)),  # K = 1
    ((1, 50), (50, 200)),  # a single row
    ((33, 7), (7, 1)),  # a single column
    ((40, 64), (64, 1100)),  # B rows 4.4 KB apart: packed panels, peeled 12-column remainder
    ((256, 64), (64, 1100)),  # both cores, rows in chunks of register tiles, packed panels
    ((64, 3072), (3072, 96)),  # long reduction, unpacked B: blocks of 768 in each column task
    ((70, 4096), (4096, 100)),  # blocks of 512, partial row and column tiles
    ((130, 64), (64, 1100)),  # no tile divides rows or columns: split, whole column tiles in parallel
    ((100, 64), (64, 48)),  # one column tile: split, whole row tiles in parallel
]


def _tol(dtype: torch.dtype) -> dict:
    # Reduced-precision results differ by the accumulation order.
    if dtype == torch.float16:
        return {"atol": 2.5e-1, "rtol": 5e-2}
    if dtype == torch.bfloat16:
        return {"atol": 2.5e-1, "rtol": 5e-2}
    return {}


@pytest.mark.parametrize("shapes", MM_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@dtypes(FLOAT_DTYPES, [torch.int32, torch.int64])
def test_matmul_shapes(shapes: tuple, dtype: torch.dtype) -> None:
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype)
    tol = _tol(dtype)
    if dtype == torch.float32 and shapes[0][1] >= 2048:
        # Sums of thousands of products: float32 rounding in another order
        # than torch's BLAS (both are ~1e-4 off the float64 result).
        tol = {"atol": 2e-3, "rtol": 1e-4}
    check(lambda x, y: x @ y, a, b, **tol)


@pytest.mark.parametrize("shapes", [
    ((3, 20, 40), (3, 40, 70)),  # batch matmul, packed per batch
    ((2, 1, 24, 40), (3, 40, 70)),  # broadcast batch dims
    ((5, 9, 33), (33, 65)),  # batched lhs, shared rhs: one matmul
    ((4, 16, 8), (4, 8, 1)),  # batch matrix-vector
], ids=lambda s: f"{s[0]}x{s[1]}")
@dtypes([torch.float32, torch.float64, torch.bfloat16, torch.int64])
def test_batch_matmul_shapes(shapes: tuple, dtype: torch.dtype) -> None:
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype)
    check(torch.matmul, a, b, **_tol(dtype))


@pytest.mark.parametrize("transpose", ["lhs", "rhs", "both"])
@dtypes([torch.float32, torch.float64, torch.int32])
def test_matmul_transposed_operands(transpose: str, dtype: torch.dtype) -> None:
    a, b = sample((48, 20), dtype), sample((96, 48), dtype)

    def fn(x, y):
        lhs = x.t() if transpose in ("lhs", "both") else x.t().contiguous()
        rhs = y.t() if transpose in ("rhs", "both") else y.t().contiguous()
        return lhs @ rhs

    check(fn, a, b, **_tol(dtype))


@pytest.mark.parametrize("batch_dims", [(6,), (3, 5)], ids=["b6", "b3x5"])
@dtypes([torch.float32, torch.float64, torch.int64])
def test_matmul_transposed_batch_with_matrix(batch_dims: tuple, dtype: torch.dtype) -> None:
    # A non-contiguous batched lhs with a matrix: torch.matmul expands the matrix over the
    # batch and calls bmm (nn.MultiheadAttention's in-projection of a batch_first input);
    # it is one matmul of the folded rows.
    a, w = sample((7, *batch_dims, 20), dtype), sample((20, 33), dtype)

    def fn(x, y):
        return torch.matmul(x.movedim(0, -2), y)

    check(fn, a, w, **_tol(dtype))


@dtypes([torch.float32, torch.float64])
def test_linear_parameter_weight(dtype: torch.dtype) -> None:
    # The weight is a parameter (stored transposed at compile time) and the
    # bias is fused into the packed kernel's accumulator.
    lin = torch.nn.Linear(72, 150).to(dtype)
    check(lin, sample((19, 72), dtype))


@dtypes(SIGNED_DTYPES)
def test_matmul_small_ints(dtype: torch.dtype) -> None:
    a, b = sample((17, 40), dtype, low=-3, high=3), sample((40, 70), dtype, low=-3, high=3)
    check(lambda x, y: x @ y, a, b)


CONV_CASES = [
    # (input, weight, stride, padding, bias)
    ((1, 16, 20, 20), (32, 16, 3, 3), 1, 1, True),  # packed im2col panels
    ((1, 8, 13, 11), (24, 8, 3, 3), 1, 1, False),  # odd spatial: partial panel
    ((2, 8, 12, 12), (40, 8, 3, 3), 2, 1, True),  # batch 2, stride 2
    ((1, 24, 9, 9), (48, 24, 1, 1), 1, 0, False),  # 1x1: columns are the input
    ((1, 3, 30, 30), (16, 3, 7, 7), 2, 3, True),  # a stem
    ((1, 64, 7, 7), (72, 64, 3, 3), 1, 1, False),  # few columns, many rows
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}*{c[1]}/s{c[2]}")
@dtypes([torch.float32, torch.float64, torch.bfloat16])
def test_conv2d_shapes(case: tuple, dtype: torch.dtype) -> None:
    x_shape, w_shape, stride, padding, has_bias = case
    x, w = sample(x_shape, dtype), sample(w_shape, dtype)
    b = sample((w_shape[0],), dtype) if has_bias else None
    tol = {"atol": 0.5, "rtol": 5e-2} if dtype == torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}
    check(lambda i, k, c: F.conv2d(i, k, c, stride=stride, padding=padding), x, w, b, **tol)
