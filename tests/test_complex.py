"""Complex tensors: the program holds a complex tensor as its (real, imaginary) pairs
(``torch.view_as_real``'s layout, a trailing dim of 2), views of complex tensors are
captured like any other, and ops that read or make complex values run as PyTorch's
CPU kernels inside the program (host kernels). Compared with eager PyTorch."""

from __future__ import annotations

import logging
import re

import pytest
import torch
from conftest import Fn, assert_matches

import poptorch
from poptorch import _tracing


def run_twice(fn, *args):
    """The compiled fn on args, then on other values of the same shapes."""
    model = poptorch.inferenceModel(Fn(fn))
    for _ in range(2):
        with torch.no_grad():
            expected = fn(*args)
        assert_matches(model(*args), expected, atol=1e-5, rtol=1e-5)
        args = tuple(torch.randn_like(a) if a.is_floating_point() or a.is_complex() else a
                     for a in args)
    return model


@pytest.mark.parametrize("name, fn", [
    ("fft", torch.fft.fft),
    ("rfft", torch.fft.rfft),
    # the inverse transforms of real input conjugate a transform (a lazy conj() in eager)
    ("ifft", lambda x: torch.fft.ifft(x, norm="ortho")),
    ("ihfft", torch.fft.ihfft),
    ("irfft", torch.fft.irfft),
    ("hfft", torch.fft.hfft),
    ("fft2", torch.fft.fft2),
    ("fftn-real-part", lambda x: torch.fft.fftn(x * 2, dim=(0, 1)).real + x),
    ("rfft-abs-angle", lambda x: torch.fft.rfft(x).abs() + torch.fft.rfft(x).angle()),
    ("roundtrip", lambda x: torch.fft.irfft(torch.fft.rfft(x) * 0.5, n=x.shape[-1])),
])
def test_fft_of_real_input(name, fn):
    run_twice(fn, torch.randn(4, 8))


@pytest.mark.parametrize("name, fn, args", [
    ("complex", torch.complex, (torch.randn(3), torch.randn(3))),
    ("polar", torch.polar, (torch.rand(3) + 0.1, torch.randn(3))),
    ("cfloat", lambda x: x.cfloat() * 2, (torch.randn(3),)),
    ("to-cdouble", lambda x: x.to(torch.complex128) + 1j, (torch.randn(2, 3),)),
    ("view_as_complex", lambda x: torch.view_as_complex(x * 2), (torch.randn(3, 2),)),
    ("view_as_real", lambda x: torch.view_as_real(torch.fft.rfft(x)) + 1, (torch.randn(3, 8),)),
])
def test_complex_from_and_to_real(name, fn, args):
    run_twice(fn, *args)


def cx(*shape):
    return torch.randn(*shape, dtype=torch.complex64)


@pytest.mark.parametrize("name, fn", [
    ("slice-transpose-conj", lambda x: x[1:].T.conj() * 2),
    ("select-mul-j", lambda x: x[:, 1] * 1j),
    ("real-imag", lambda x: x.real * 2 + x.imag),
    ("reshape-permute", lambda x: x.reshape(2, 2, 3).permute(2, 0, 1) + 1),
    ("conj-physical-sum", lambda x: (x.conj() * x).sum(1).real),
    ("neg-view-imag", lambda x: x.conj().imag * 3),
    ("matmul", lambda x: x @ x.mT),
])
def test_complex_inputs_outputs_and_views(name, fn):
    run_twice(fn, cx(4, 3))


def test_writes_into_views_of_complex_tensors():
    def fn(x):
        y = x * 1
        y[0] = 5.0  # a real written into a complex view: cast by torch's kernel
        y[1:, 1] *= 1j
        torch.view_as_real(y)[2, 0, 1] = -7.0
        return y

    run_twice(fn, cx(3, 2))


def test_conjugate_and_negative_inputs_are_resolved():
    x = cx(3, 4)
    fn = lambda a: a * 2  # noqa: E731
    model = poptorch.inferenceModel(Fn(fn))
    assert_matches(model(x.conj()), fn(x.conj()))
    assert_matches(model(x.conj().imag), fn(x.conj().imag))  # a negative view of a float
    assert_matches(model(x), fn(x))


def test_complex_is_typed_as_pairs_in_the_ir():
    mlir = poptorch.trace(Fn(lambda x: torch.fft.rfft(x) * 2), torch.randn(4, 8)).mlir
    # the rfft of 4x8 is 4x5 complex: 4x5x2 of f32
    assert re.search(r"poptorch\.host_kernel.*-> tensor<4x5x2xf32>", mlir), mlir
    assert "complex" not in mlir.split("call")[0]


def test_complex_host_kernels_warn_once_and_say_why(caplog):
    for key in ("aten::_fft_r2c for complex tensors", "aten::mul.Tensor for complex tensors"):
        _tracing._HOST_KERNELS_WARNED.discard(key)
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        poptorch.trace(Fn(lambda x: torch.fft.rfft(x) * 2), torch.randn(4, 8))
    text = "\n".join(r.message for r in caplog.records)
    assert "aten::mul.Tensor" in text and "no lowering for complex tensors" in text, text
    assert re.search(r"aten::_fft_r2c at \S+test_complex.py:\d+ has no lowering", text), text


def test_native_code_only_refuses_complex_ops():
    opts = poptorch.Options().hostKernels(False)
    with pytest.raises(poptorch.errors.UnsupportedOpError, match="_fft_r2c"):
        poptorch.inferenceModel(Fn(torch.fft.rfft), opts)(torch.randn(8))


def test_stft_with_a_window_made_in_forward():
    # hann_window(8) without device= is a CPU tensor, which stft refuses next to an
    # ipu input: the model is traced again with the ipu as the default device.
    def fn(x):
        return torch.stft(x, 8, window=torch.hann_window(8), return_complex=True).abs()

    model = run_twice(fn, torch.randn(64))
    assert model.compile_count == 1


def test_view_as_real_and_complex_are_the_value_itself():
    # the program holds a complex tensor as its pairs: these views are no ops
    fn = lambda x: torch.view_as_complex(x * 2).real + torch.view_as_real(x.cfloat())[..., 0, 0]  # noqa: E731
    x = torch.randn(3, 2)
    graph = poptorch.trace(Fn(fn), x)
    kernels = {r["name"] for r in graph.op_log if r["status"] == "host_kernel"}
    assert not {"aten::view_as_real", "aten::view_as_complex"} & kernels, kernels
    run_twice(fn, x)
