"""Overloads of the op table that Python code reaches only through ``torch.ops.aten``
(scalar forms that torch's Python bindings wrap into tensors, internal ops that other
frontends emit), and the special functions that map onto existing dialect ops. Each
is captured, compiled and compared with eager; ``make test`` checks that every row of
the table is captured by some passing test (docs/ops.md, tests column)."""

from __future__ import annotations

import pytest
import torch
from conftest import check, compiled
from opsuite import FLOAT_DTYPES, INT_DTYPES, SIGNED_DTYPES, dtypes, sample

A = torch.ops.aten


@dtypes([torch.float32, torch.float64], SIGNED_DTYPES)
@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_scalar_mode(dtype, mode):
    check(lambda x: A.div.Scalar_mode(x, 3, rounding_mode=mode), sample((2, 5), dtype))


@dtypes([torch.float32, torch.float64], SIGNED_DTYPES)
def test_floor_divide_scalar(dtype):
    check(lambda x: A.floor_divide.Scalar(x, -2), sample((7,), dtype))


@dtypes([torch.float32, torch.float64])
def test_scalar_forms_of_binary_special_functions(dtype):
    x = sample((6,), dtype, low=0.5, high=3.0)
    check(lambda x: A.xlogy.Scalar_Self(2.5, x), x)
    check(lambda x: A.special_xlog1py.other_scalar(x, 1.5), x)
    check(lambda x: A.special_xlog1py.self_scalar(1.5, x), x)
    check(lambda x: A.special_zeta.other_scalar(x + 1.5, 2.0), x)
    check(lambda x: A.special_zeta.self_scalar(3.0, x), x)


@dtypes(INT_DTYPES)
def test_shift_scalar_forms(dtype):
    x = sample((6,), dtype, low=0, high=8)
    check(lambda x: A.bitwise_left_shift.Tensor_Scalar(x, 2), x)
    check(lambda x: A.bitwise_right_shift.Tensor_Scalar(x, 1), x)
    check(lambda x: A.bitwise_left_shift.Scalar_Tensor(3, x), x)
    check(lambda x: A.bitwise_right_shift.Scalar_Tensor(100, x), x)


def test_copies_of_views():
    x = torch.randn(3, 1, 4)
    check(lambda x: A.alias_copy(x) * 2, x)
    check(lambda x: A.squeeze_copy.dims(x, [1]), x)
    check(lambda x: torch.narrow_copy(x, 2, 1, 2), x)


@dtypes(FLOAT_DTYPES)
def test_native_batch_norm_legit_no_training(dtype):
    x = sample((2, 3, 4), dtype)
    w, b = sample((3,), dtype), sample((3,), dtype)
    mean, var = sample((3,), dtype), sample((3,), dtype, low=0.5, high=2.0)
    tol = {} if dtype in (torch.float32, torch.float64) else {"atol": 2e-2, "rtol": 2e-2}
    check(lambda x: A._native_batch_norm_legit_no_training(x, w, b, mean, var, 0.1, 1e-5)[0],
          x, **tol)


@pytest.mark.filterwarnings("ignore:_aminmax is deprecated")
@dtypes([torch.float32, torch.float64], SIGNED_DTYPES)
def test_aminmax_all_elements(dtype):
    # torch registers no Meta kernel for the deprecated _aminmax; poptorch._meta does.
    check(lambda x: torch._aminmax(x), sample((3, 4), dtype))


@dtypes([torch.float32, torch.float64])
def test_norm_overloads(dtype):
    x = sample((3, 4), dtype)
    check(lambda x: A.norm.Scalar(x, 3), x)
    check(lambda x: A.norm.ScalarOpt_dtype(x, 2, dtype=torch.float64), x)
    check(lambda x: A.norm.ScalarOpt_dim_dtype(x, 1.5, [1], True, dtype=torch.float64), x)


def test_scatter_value_reduce():
    x = torch.randn(3, 4)
    index = torch.tensor([[0, 2, 1, 0]])
    check(lambda x: A.scatter.value_reduce(x, 0, index, 2.0, reduce="multiply"), x)
    check(lambda x: A.scatter.value_reduce(x, 0, index, 2.0, reduce="add"), x)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_impl(accumulate):
    x, v = torch.randn(4, 5), torch.randn(2, 5)
    index = torch.tensor([3, 1])
    check(lambda x, v: A._index_put_impl(x, [index], v, accumulate), x, v)


def test_bernoulli_tensor_and_random_to():
    n = 100_000
    p = torch.full((n,), 0.25)
    draws = compiled(lambda p: A.bernoulli.Tensor(torch.zeros_like(p), p), p)
    assert set(draws.unique().tolist()) <= {0.0, 1.0}
    assert abs(draws.mean().item() - 0.25) < 0.01
    ints = compiled(lambda x: A.random.to(x, 7), torch.zeros(n, dtype=torch.int64))
    assert ints.min() == 0 and ints.max() == 6


@dtypes([torch.float32, torch.float64], [torch.int32])
def test_special_bessel_functions(dtype):
    x = sample((4, 6), dtype)
    check(lambda x: torch.special.modified_bessel_i0(x), x)
    check(lambda x: torch.special.modified_bessel_i1(x), x)
    check(lambda x: torch.special.spherical_bessel_j0(x), x)


def test_spherical_bessel_j0_special_values():
    x = torch.tensor([0.0, 1e-4, -0.3, 0.49, 0.51, 7.0, -40.0, float("inf"), -float("inf"),
                      float("nan")], dtype=torch.float64)
    fn = torch.special.spherical_bessel_j0
    torch.testing.assert_close(compiled(fn, x), fn(x), equal_nan=True)
