"""Regression tests of the reliability guarantees: a compiled call never writes
its inputs, no input shape crashes the process, and every error is a
``poptorch.Error``.

Each case was a failure seen with third-party material (PyTorch's OpInfo
samples, a differential fuzzer): an update in place of an input, a segfault on
a zero-size or 0-d tensor, a view that saw a later update of its base. Every
compiled call of the suite also checks its inputs (``tests/conftest.py``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from conftest import Fn, assert_matches

import poptorch


def run_twice(fn, *args) -> None:
    """Two compiled calls equal eager's, and leave the inputs as they were."""
    before = [a.clone() for a in args]
    with torch.no_grad():
        expected = fn(*[a.clone() for a in args])
    model = poptorch.inferenceModel(Fn(fn))
    for _ in range(2):
        assert_matches(model(*args), expected)
        for a, b in zip(args, before, strict=True):
            assert torch.equal(a, b), "the compiled call wrote into its input"


# --- inputs are read-only ---------------------------------------------------

IDX = torch.tensor([0, 4, 2])


@pytest.mark.parametrize("name, fn, args", [
    ("index_add", lambda x, s: torch.index_add(x, 0, IDX, s, alpha=2.0),
     (torch.zeros(5, 3), torch.ones(3, 3))),
    ("index_copy", lambda x, s: torch.index_copy(x, 0, IDX, s), (torch.zeros(5, 3), torch.ones(3, 3))),
    ("index_fill", lambda x: torch.index_fill(x, 1, torch.tensor([1]), -1.0), (torch.randn(5, 3),)),
    ("scatter", lambda x, s: torch.scatter(x, 0, torch.tensor([[0, 1, 2]]), s),
     (torch.zeros(5, 3), torch.ones(1, 3))),
    ("scatter_add", lambda x, s: torch.scatter_add(x, 1, torch.tensor([[0, 0, 1]]), s),
     (torch.zeros(2, 3), torch.ones(1, 3))),
    ("scatter_reduce", lambda x, s: torch.scatter_reduce(x, 0, torch.tensor([0, 0, 1]), s, "amax"),
     (torch.zeros(3), torch.randn(3))),
    ("index_put", lambda x, v: torch.index_put(x, (torch.tensor([0, 2]),), v, accumulate=True),
     (torch.zeros(5, 3), torch.ones(2, 3))),
    ("masked_scatter", lambda x, s: x.masked_scatter(x > 0, s), (torch.randn(4, 3), torch.randn(12))),
    ("slice_fill", lambda x: torch.slice_scatter(x, torch.zeros(2, 3), 0, 1, 3), (torch.randn(4, 3),)),
    # a composite kernel copies into a clone of the input, which holds the input's value
    ("matrix_power_0", lambda x: torch.linalg.matrix_power(x, 0), (torch.randn(3, 3),)),
])
def test_update_of_input_leaves_it(name, fn, args):
    run_twice(fn, *args)


def test_model_updating_its_input_still_writes_it_back():
    # An in-place update of an input by the model itself is eager's semantics.
    def f(x):
        x.add_(1)
        return x * 2

    x = torch.zeros(3)
    model = poptorch.inferenceModel(Fn(f))
    out = model(x)
    torch.testing.assert_close(out, torch.full((3,), 2.0))
    torch.testing.assert_close(x, torch.ones(3))


def test_buffer_updated_in_place_keeps_semantics():
    class Counter(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x):
            self.count += 1
            return x + self.count

    model = poptorch.inferenceModel(Counter())
    x = torch.zeros(2)
    torch.testing.assert_close(model(x), torch.ones(2))
    torch.testing.assert_close(model(x), torch.full((2,), 2.0))
    torch.testing.assert_close(x, torch.zeros(2))


# --- zero-size and 0-d tensors -----------------------------------------------

@pytest.mark.parametrize("name, fn, args", [
    ("mm_0_rows", torch.mm, (torch.randn(0, 5), torch.randn(5, 10))),
    ("mm_0_inner", torch.mm, (torch.randn(4, 0), torch.randn(0, 10))),
    ("linear_0_rows", torch.nn.functional.linear, (torch.randn(0, 5), torch.randn(10, 5))),
    ("split_0_piece", lambda x: torch.split(x, [5, 0], 1)[1] + 1, (torch.randn(3, 5),)),
    ("empty_slice", lambda x: x[:, 2:2] * 2, (torch.randn(3, 5),)),
    ("empty_input", lambda x: (x.sin(), x.sum(0)), (torch.randn(0, 4),)),
    ("index_add_0d", lambda x, s: torch.index_add(x, 0, torch.tensor([0]), s),
     (torch.tensor(1.0), torch.tensor(2.0))),
    ("index_copy_0d", lambda x, s: torch.index_copy(x, 0, torch.tensor([0]), s),
     (torch.tensor(1.0), torch.tensor(2.0))),
    ("index_fill_0d", lambda x: torch.index_fill(x, 0, torch.tensor([0]), 3.0), (torch.tensor(1.0),)),
    ("element_of_vector", lambda x: x[1].sin(), (torch.randn(4),)),
    ("element_of_strided", lambda x: x[::2][1].exp(), (torch.randn(8),)),
    # one element of a stepped slice broadcast against a row: a 0-d read of a strided buffer
    ("element_of_strided_broadcast", lambda x: x[0, 2::3] - torch.asin(x),
     (torch.linspace(-0.9, 0.9, 5).reshape(1, 5),)),
    # quantile's kernel takes transpose(0, -1) of a 1-element view, an alias: read as the
    # traced value it is, not as the uninitialised memory of a new tensor
    ("quantile_0d", lambda x: torch.quantile(x, 0.5, dim=0), (torch.tensor(-4.3),)),
    # a gather from a stepped slice: a vector gather from a strided buffer
    ("gather_of_stepped_slice", lambda x: x[3][26::3].gather(-1, torch.tensor([0, 2, 0])) - x[3, 26],
     (torch.randn(7, 33),)),
    # shape functions: the strides of a tensor with no elements mean nothing, and copysign's
    # Meta kernel drops the permutation of its input that eager's kernel keeps
    ("add_no_elements", lambda x: x.add(2), (torch.randint(-8, 9, (32, 3, 0, 1)),)),
    ("copysign_permuted", torch.copysign,
     (torch.randn(4, 17, 17).transpose(-1, -2), torch.randn(1, 17, 17))),
    # an index the model builds is a CPU tensor, as in eager
    ("take_along_dim_built_index",
     lambda x: torch.take_along_dim(x, torch.tensor([[[0, 1, 1, 0]]]), dim=2), (torch.randn(2, 2, 2),)),
])
def test_edge_shapes(name, fn, args):
    run_twice(fn, *args)


NO_INDEX = torch.tensor([], dtype=torch.int64)


@pytest.mark.parametrize("name, fn, args", [
    # A scatter with an empty index writes nothing, whatever the other shapes: PyTorch skips
    # its shape checks then (the Meta kernels refuse some of these sources).
    ("scatter_add_1d_index", lambda x: x.mT.scatter_add(0, NO_INDEX, torch.zeros(0, 2, 3)),
     (torch.randn(4, 3, 2),)),
    ("scatter_reduce_mean", lambda x: x.scatter_reduce(-1, torch.zeros(1, 0, dtype=torch.int64),
                                                       torch.zeros(1, 0, 2, 2), reduce="mean"),
     (torch.randn(1, 4, 17, 4),)),
    ("scatter_value", lambda x: x.scatter(1, torch.zeros(2, 0, dtype=torch.int64), 2.0),
     (torch.randn(2, 3),)),
    ("index_add_empty_source", lambda x, w: x.index_add(2, NO_INDEX, w),
     (torch.randn(5, 16, 3)[:, :, 1::2], torch.randn(5, 16, 0))),
    ("index_copy", lambda x: x.index_copy(0, NO_INDEX, torch.zeros(0, 3)), (torch.randn(4, 3),)),
    ("index_fill", lambda x: x.index_fill(1, NO_INDEX, -1.0), (torch.randn(4, 3),)),
])
def test_scatter_of_no_indices(name, fn, args):
    run_twice(fn, *args)


@pytest.mark.parametrize("name, fn, args", [
    # Composite kernels below functionalization write into views of tensors they made:
    # block_diag copies each block into narrow()s of zeros, _chunk_cat each chunk into a
    # slice of its result, bilinear's kernel fills views of an intermediate.
    ("block_diag", torch.block_diag, (torch.randn(2, 2), torch.randn(2, 3), torch.randn(1, 1))),
    ("chunk_cat", lambda a, b: torch._chunk_cat([a, b], dim=1, num_chunks=2),
     (torch.randn(2, 4, 3), torch.randn(2, 2, 3))),
    ("bilinear", lambda a, b, w: torch.nn.functional.bilinear(a, b, w),
     (torch.randn(5, 3), torch.randn(5, 4), torch.randn(2, 3, 4))),
])
def test_composite_kernel_writes_into_its_views(name, fn, args):
    run_twice(fn, *args)


# --- views and in-place updates ----------------------------------------------

def test_nested_slice_update():
    def f(x, y):
        x = x * 1
        x[1][2:4] += y
        return x

    run_twice(f, torch.randn(3, 6), torch.randn(2))


@pytest.mark.parametrize("view", ["expand", "transpose"])
def test_reshape_copy_does_not_see_later_update(view):
    # Eager's reshape of an expanded or transposed tensor is a copy, so a later
    # update in place of its base does not show in it.
    def f(x):
        x = x * 1
        v = x.expand(3, 4) if view == "expand" else x.t()
        r = v.reshape(-1)
        x.add_(1)
        return r, x

    run_twice(f, torch.randn(1, 4) if view == "expand" else torch.randn(3, 4))


def test_strided_update_is_one_op():
    def f(x):
        x = x * 1
        x[1::2] += 1
        return x

    x = torch.randn(256)
    graph = poptorch.trace(Fn(f), x)
    assert "poptorch.slice_insert" in graph.mlir
    assert "poptorch.cat" not in graph.mlir
    run_twice(f, x)


# --- errors are poptorch's -----------------------------------------------------

def test_error_classes():
    assert issubclass(poptorch.RecoverableError, poptorch.Error)
    assert issubclass(poptorch.UnrecoverableError, poptorch.Error)
    assert issubclass(poptorch._C.CompileError, poptorch.Error)
    e = poptorch.RecoverableError("poptorch: x at model.py:12: broken")
    assert (e.message, e.location, e.recovery_action) == ("poptorch: x at model.py:12: broken",
                                                          "model.py:12", "NONE")


def test_unsupported_op_is_a_poptorch_error():
    def f(x):  # uint64 results cannot be host kernels either
        return torch.hash_tensor(x).float()

    with pytest.raises(poptorch.Error, match="unsupported operation") as info:
        poptorch.inferenceModel(Fn(f))(torch.randn(3, 3))
    assert isinstance(info.value, poptorch.errors.UnsupportedOpError)
    assert isinstance(info.value, RuntimeError)  # code catching RuntimeError keeps working
    assert info.value.location.startswith(__file__.rsplit("/", 1)[-1]) or __file__ in info.value.message


def test_value_read_error_is_a_poptorch_error():
    def f(x):  # a value read from a random op cannot be guarded
        return x * float(torch.rand((), device=x.device))

    with pytest.raises(poptorch.errors.TraceError, match="needs the value"):
        poptorch.inferenceModel(Fn(f))(torch.randn(3))


def test_bad_option_is_a_poptorch_error():
    with pytest.raises(poptorch.Error):
        poptorch.Options().deviceIterations(-1)
    with pytest.raises(ValueError):  # and still the builtin it was
        poptorch.Options().deviceIterations(-1)


def test_torch_check_while_tracing_is_a_poptorch_error():
    # torch's own check in a composite op's kernel, on the traced tensors: still a
    # RuntimeError, now a poptorch.Error too.
    def f(x):
        return torch.einsum("ij,jk->ik", x, x[None])

    with pytest.raises(poptorch.errors.TraceError, match="einsum"):
        poptorch.inferenceModel(Fn(f))(torch.randn(1, 1))


def test_llvm_fatal_error_is_a_poptorch_error():
    # LLVM's report_fatal_error (instruction selection, pass invariants) ends the
    # process unless a handler is installed: here it is a CompileError, and the
    # process (a child, in case it does not) goes on.
    script = ("import poptorch\n"
              "try:\n"
              "    poptorch._C._report_llvm_fatal_error('no instruction for op')\n"
              "except poptorch.errors.CompileError as e:\n"
              "    print(e)\n"
              "print('alive')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["LLVM fatal error: no instruction for op", "alive"]


# --- layouts: a reshape, flatten or contiguous() is a view or a copy as in eager ------

def run_like_eager(fn, *args) -> None:
    """Two compiled calls give eager's results and leave the inputs as eager leaves its
    own (written where eager writes them, as they were where eager copies)."""
    eager_args = [_same_layout_copy(a) for a in args]
    mine = [_same_layout_copy(a) for a in args]
    model = poptorch.inferenceModel(Fn(fn))
    for _ in range(2):
        with torch.no_grad():
            expected = fn(*eager_args)
        assert_matches(model(*mine), expected)
        for a, b in zip(mine, eager_args, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True,
                                       msg="the input differs from eager's")


def _same_layout_copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` with its strides (transposed, sliced or expanded)."""
    if any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape, strict=True)):
        base = t[tuple(slice(0, 1) if s == 0 else slice(None) for s in t.stride())]
        return _same_layout_copy(base).expand(t.shape)
    storage = torch.empty(t.untyped_storage().nbytes() // t.element_size(), dtype=t.dtype)
    out = storage.as_strided(t.shape, t.stride(), t.storage_offset())
    out.copy_(t)
    return out


def _transposed() -> torch.Tensor:
    return torch.arange(6.0).reshape(2, 3).t()  # (3, 2), strides (1, 3)


def _sliced() -> torch.Tensor:
    return torch.arange(24.0).reshape(4, 6)[:, 1:5:2]  # gaps between rows and elements


def _expanded() -> torch.Tensor:
    return torch.arange(3.0).reshape(3, 1).expand(3, 4)


LAYOUT_CASES = [
    # (input layout, model): in eager, each reshape below copies or views depending on
    # the input's strides, so the write reaches the caller's tensor or it does not.
    ("transposed-reshape", _transposed, lambda x: x.reshape(6).sub_(1)),
    ("transposed-flatten-index_add", _transposed,
     lambda x: x.flatten().index_add_(0, torch.tensor([0, 5]), torch.ones(2))),
    ("transposed-t-contiguous", _transposed, lambda x: x.t().contiguous().mul_(2)),
    ("transposed-contiguous", _transposed, lambda x: x.contiguous().mul_(2)),
    ("transposed-view-of-t", _transposed, lambda x: x.t().view(6).add_(1)),
    ("sliced-reshape", _sliced, lambda x: x.reshape(8).add_(1)),
    ("sliced-row-reshape", _sliced, lambda x: x[1].reshape(2).add_(1)),
    ("expanded-flatten", _expanded, lambda x: x.flatten().fill_(3.0)),
    ("expanded-reshape-then-read", _expanded,
     lambda x: (x.reshape(12).add_(1), x.sum())[1]),
    ("contiguous-reshape", lambda: torch.arange(6.0), lambda x: x.reshape(2, 3).add_(1)),
]


@pytest.mark.parametrize("make, fn", [c[1:] for c in LAYOUT_CASES],
                         ids=[c[0] for c in LAYOUT_CASES])
def test_input_layouts(make, fn):
    run_like_eager(fn, make())


VIEW_CASES = [
    # Views of intermediates keep eager's layouts too (chunk/split/unbind pieces and
    # stepped slices have gaps: a reshape of them copies).
    ("chunk-reshape", lambda x: x.chunk(2, dim=1)[0].reshape(-1).add_(1)),
    ("split-reshape", lambda x: x.split([1, 3], dim=1)[1].reshape(-1).mul_(3)),
    ("unbind-reshape", lambda x: x.unbind(1)[2].reshape(2, 2).sub_(1)),
    ("step-slice-flatten", lambda x: x[:, ::2].flatten().add_(5)),
    ("select-view", lambda x: x[:, 1].view(2, 2).add_(1)),
    ("permute-reshape", lambda x: x.permute(1, 0).reshape(-1).add_(1)),
    ("matmul-of-permuted", lambda x: x.t() @ (x * 2)),
]


@pytest.mark.parametrize("fn", [c[1] for c in VIEW_CASES], ids=[c[0] for c in VIEW_CASES])
def test_intermediate_view_layouts(fn):
    run_like_eager(lambda x: (x * 1, fn(x * 1)), torch.arange(16.0).reshape(4, 4))


EXPANDED_VIEW_CASES = [
    # Views of an expanded (stride 0) tensor read its unexpanded value: the pieces of a chunk,
    # a slice of a slice, a diagonal and an unfold window of memory that the rows share.
    ("chunk-div", lambda x: x.chunk(2, dim=0)[1].div(x[:2], rounding_mode="floor")),
    ("slice-of-slice", lambda x: x[1:][:, 1:3] * 2),
    ("diagonal", lambda x: x.diagonal() + 1),
    ("unfold", lambda x: x.unfold(1, 2, 1).sum(-1)),
    ("transposed-chunk", lambda x: x.t().chunk(2, dim=1)[0].exp()),
]


@pytest.mark.parametrize("fn", [c[1] for c in EXPANDED_VIEW_CASES],
                         ids=[c[0] for c in EXPANDED_VIEW_CASES])
def test_views_of_expanded_tensors(fn):
    run_like_eager(fn, (torch.arange(4.0) + 1).expand(4, 4))
    run_like_eager(lambda x: fn(x.expand(4, 4)), torch.arange(4.0) + 1)


def test_a_new_layout_is_a_new_variant():
    """The program is specialised on its inputs' layouts: the same shape with other
    strides recompiles, and each layout keeps eager's view-or-copy decision."""
    model = poptorch.inferenceModel(Fn(lambda x: x.reshape(6).add_(1)))
    contiguous, transposed = torch.zeros(3, 2), torch.zeros(2, 3).t()
    model(contiguous)
    assert torch.equal(contiguous, torch.ones(3, 2)), "a view in eager: the input is written"
    model(transposed)
    assert model.compile_count == 2
    assert torch.equal(transposed, torch.zeros(3, 2)), "a copy in eager: the input is kept"


# --- constants written into parameters, buffers and inputs ----------------------

BUFFER_WRITES = [
    ("ellipsis", lambda b: b.__setitem__(Ellipsis, 5)),
    ("slice", lambda b: b.__setitem__(slice(0, 2), 7)),
    ("index", lambda b: b.__setitem__(torch.tensor([0, 2]), 4)),
    ("fill_", lambda b: b.fill_(3)),
    ("zero_", lambda b: b.zero_()),
    ("copy_", lambda b: b.copy_(torch.tensor([1, 2, 3]))),
    ("copy_0d", lambda b: b.copy_(torch.tensor(9))),
]


class _SetsBuffer(torch.nn.Module):
    def __init__(self, write) -> None:
        super().__init__()
        self.write = write
        self.register_buffer("b", torch.arange(3) + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = self.b * 1
        self.write(self.b)
        return v + x


@pytest.mark.parametrize("write", [w[1] for w in BUFFER_WRITES], ids=[w[0] for w in BUFFER_WRITES])
def test_constant_written_into_buffer(write):
    """A constant assigned to a buffer is a value of the program: tracing never writes
    it into the model's memory (the first call used to see it already)."""
    model, eager = _SetsBuffer(write), _SetsBuffer(write)
    compiled = poptorch.inferenceModel(model)
    x = torch.zeros(3, dtype=torch.int64)
    for _ in range(2):
        assert torch.equal(compiled(x), eager(x))
        assert torch.equal(model.b, torch.arange(3) + 1), "tracing wrote into the buffer"
    compiled.copyWeightsToHost()
    assert torch.equal(model.b, eager.b)


def test_constant_written_into_input():
    def f(x):
        x[...] = 2
        return x * 1

    x = torch.zeros(3)
    out = poptorch.inferenceModel(Fn(f))(x)
    assert torch.equal(out, torch.full((3,), 2.0)) and torch.equal(x, out)


# --- empty tensors: results computed on the host keep eager's dtypes ------------

EMPTY_FOLDS = [
    ("bool+int", lambda x: torch.full_like(x, 1).add(1), torch.bool),
    ("bool*float", lambda x: torch.ones_like(x) * 1.5, torch.bool),
    ("int/int", lambda x: torch.zeros_like(x) / 2, torch.int64),
    ("int<int", lambda x: torch.zeros_like(x) < 2, torch.int32),
]


@pytest.mark.parametrize("fn, dtype", [c[1:] for c in EMPTY_FOLDS], ids=[c[0] for c in EMPTY_FOLDS])
def test_empty_constant_results_keep_their_dtype(fn, dtype):
    """An op of constants evaluated on the host while tracing (all empty tensors have the
    same null data pointer: the result is not the input)."""
    run_twice(fn, torch.zeros(1, 0, dtype=dtype))


# --- special values: eager's pow kernel takes sqrt / rsqrt for exponents +-0.5 ---

SPECIAL = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 2.0, -3.0] * 3)


@pytest.mark.parametrize("exponent", [0.5, -0.5, 2.0, -1.0, 1.5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_pow_scalar_special_values(exponent, dtype):
    x = SPECIAL.to(dtype)
    expected = x ** exponent
    out = poptorch.inferenceModel(Fn(lambda t: t ** exponent))(x)
    torch.testing.assert_close(out, expected, equal_nan=True)
    zeros = expected == 0
    assert torch.equal(torch.signbit(out[zeros]), torch.signbit(expected[zeros])), \
        "the sign of zeros differs"


# --- writes into views with no elements leave their base as it is ---------------

EMPTY_WRITES = [
    ("slice-past-end", lambda x: (x.__setitem__(slice(4, None), 1.0), x * 2)[1]),
    ("empty-column-range", lambda x: (x[:, 2:2].add_(1), x + 0)[1]),
    ("select-of-empty", lambda x: (x[1:1][:, 0].mul_(3), x - 1)[1]),
    ("intermediate", lambda x: (lambda y: (y[:, 5:].fill_(7), y)[1])(x * 1)),
]


@pytest.mark.parametrize("fn", [c[1] for c in EMPTY_WRITES], ids=[c[0] for c in EMPTY_WRITES])
def test_write_into_empty_view(fn):
    run_like_eager(fn, torch.arange(16.0).reshape(4, 4))


# --- bool tensors gathered by a generic (tile, repeat) are read as bytes ----------

@pytest.mark.parametrize("fn", [
    lambda x: x.tile((2, 1)).sum(),
    lambda x: x.repeat(3, 2).sum(dim=1),
    lambda x: x.tile((2, 1)).to(torch.int64).cumsum(1),
    lambda x: torch.where(x.repeat(2, 1), 1.0, -1.0),
], ids=["tile-sum", "repeat-sum", "tile-cumsum", "repeat-where"])
def test_bool_tensor_gathered(fn):
    run_twice(fn, torch.tensor([True, False, True, True, False, False, False, True]))


# --- writes through views of an expanded tensor write its base's memory ----------------

def _write_row(y, v):
    y.expand(3, 4)[1].add_(v)


def _assign_row(y, v):
    e = y.expand(3, 4)
    e[2] = v
    return e * 1


def _nested_broadcast_to(y, v):
    torch.broadcast_to(y, (2, 3, 4))[0][1] = v


def _unsqueezed_slice(y, v):
    y.unsqueeze(0).expand(2, 1, 4)[1, 0, 1:3] = v[:2]


def _transposed_base(y, v):
    y.reshape(2, 2).t().expand(3, 2, 2)[1].copy_(v.reshape(2, 2))


def _whole_expand_as(y, v):
    y.expand_as(y).scatter_(0, torch.tensor([1, 3]), v[:2])


def _whole_unit_expand(y, v):
    y[None].expand(1, 4).mul_(2)


EXPANDED_WRITES = [
    # Functionalization rebuilds the base as base + sum_to(mutated_view - base), which is
    # NaN where the base holds an inf and 0 where a write of 1 lands on 1e20; eager writes
    # the memory the expanded view's rows share.
    ("select-add_", _write_row),
    ("setitem-row", _assign_row),
    ("nested-broadcast_to", _nested_broadcast_to),
    ("unsqueeze-expand-slice", _unsqueezed_slice),
    ("transposed-base", _transposed_base),
    ("whole-expand_as-scatter_", _whole_expand_as),
    ("whole-unit-expand-mul_", _whole_unit_expand),
]


@pytest.mark.parametrize("write", [c[1] for c in EXPANDED_WRITES],
                         ids=[c[0] for c in EXPANDED_WRITES])
def test_write_through_expanded_view(write):
    def fn(x, v):
        y = x * 1
        out = write(y, v)
        return (y,) if out is None else (y, out)

    x = torch.tensor([float("inf"), 1e20, -float("inf"), 3.0])
    run_like_eager(fn, x, torch.tensor([1.0, 2.0, 3.0, 4.0]))
