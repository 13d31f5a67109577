"""poptorch.serializedMatMul: a matmul computed as smaller matmuls split along one
dimension, equal to torch.matmul, eagerly and compiled."""

from __future__ import annotations

import pytest
import torch
from conftest import Fn, assert_matches

import poptorch
from poptorch import MatMulSerializationMode as Mode


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("factor", [1, 2, 4])
@pytest.mark.parametrize("shapes", [((8, 12), (12, 16)), ((3, 8, 12), (12, 16)),
                                    ((2, 8, 12), (2, 12, 16))])
def test_equals_matmul(mode, factor, shapes):
    lhs, rhs = torch.randn(shapes[0]), torch.randn(shapes[1])
    fn = lambda a, b: poptorch.serializedMatMul(a, b, mode, factor)  # noqa: E731
    expected = torch.matmul(lhs, rhs)
    torch.testing.assert_close(fn(lhs, rhs), expected)
    assert_matches(poptorch.inferenceModel(Fn(fn))(lhs, rhs), expected)


def test_splits_into_factor_matmuls():
    lhs, rhs = torch.randn(8, 12), torch.randn(12, 16)
    graph = poptorch.trace(
        Fn(lambda a, b: poptorch.serializedMatMul(a, b, Mode.OutputChannels, 4)), lhs, rhs)
    assert sum(r["name"] == "aten::mm" for r in graph.op_log) == 4


def test_keep_precision_sums_half_partials_in_float():
    lhs = torch.randn(4, 64).half()
    rhs = torch.randn(64, 8).half()
    got = poptorch.serializedMatMul(lhs, rhs, Mode.ReducingDim, 8, keep_precision=True)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got.float(), lhs.float() @ rhs.float(), atol=5e-2, rtol=1e-2)


@pytest.mark.parametrize("mode, factor, match", [
    (Mode.InputChannels, 3, "divides the rows of lhs"),
    (Mode.ReducingDim, 0, "divides the reduced dimension"),
    ("input_channels", 2, "MatMulSerializationMode"),
])
def test_bad_arguments_are_clear_errors(mode, factor, match):
    with pytest.raises(poptorch.Error, match=match):
        poptorch.serializedMatMul(torch.randn(8, 12), torch.randn(12, 16), mode, factor)
