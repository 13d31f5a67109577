"""The ipu device outside tracing: factories, copies, printing and eager ops
(which run through PyTorch's CPU fallback); nothing may crash."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import poptorch  # noqa: F401  (registers the ipu device's kernels)

IPU = torch.device("ipu")


def test_factories():
    e = torch.empty(2, 3, device="ipu")
    assert e.device == torch.device("ipu:0") and e.shape == (2, 3) and e.is_ipu
    assert torch.empty(4, dtype=torch.int32, device="ipu").dtype == torch.int32
    torch.testing.assert_close(torch.zeros(2, 2, device="ipu").cpu(), torch.zeros(2, 2))
    torch.testing.assert_close(torch.ones(3, device="ipu").cpu(), torch.ones(3))
    torch.testing.assert_close(torch.arange(5, device="ipu").cpu(), torch.arange(5))
    torch.testing.assert_close(torch.full((2,), 3.0, device="ipu").cpu(), torch.full((2,), 3.0))
    torch.testing.assert_close(torch.tensor([1, 2], device="ipu").cpu(), torch.tensor([1, 2]))
    assert torch.randn(3, device="ipu").shape == (3,)
    assert torch.empty_like(e).device.type == "ipu"
    assert torch.empty(0, 3, device="ipu").cpu().shape == (0, 3)


def test_only_one_device():
    with pytest.raises(RuntimeError, match="one ipu device"):
        torch.zeros(2).to("ipu:1")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                   torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool,
                                   torch.complex64])
def test_roundtrip(dtype):
    x = (torch.randn(3, 4) * 10).to(dtype)
    y = x.to("ipu")
    assert y.device.type == "ipu" and y.dtype == dtype
    assert torch.equal(y.cpu(), x)
    assert torch.equal(y.to("cpu"), x)


def test_non_contiguous_copies():
    x = torch.randn(3, 4)
    assert torch.equal(x.to("ipu").t().cpu(), x.t())
    assert torch.equal(x.t().to("ipu").cpu(), x.t())
    assert torch.equal(x[:, ::2].to("ipu").cpu(), x[:, ::2])
    assert torch.equal(x[:, :1].to("ipu").expand(3, 5).cpu(), x[:, :1].expand(3, 5))
    dst = torch.empty(4, 3, device="ipu")
    dst.copy_(x.t())
    assert torch.equal(dst.cpu(), x.t())
    host = torch.empty(3, 4)
    host.copy_(x.to("ipu"))
    assert torch.equal(host, x)


def test_printing():
    x = torch.tensor([[1.5, -2.0], [0.25, 3.0]])
    text = str(x.to("ipu"))
    assert "device='ipu:0'" in text and "1.5000" in text and "-2.0000" in text
    assert "..." in repr(torch.randn(100, 100).to("ipu"))  # summarised printing
    assert "ipu" in repr(torch.empty(0, device="ipu"))


def test_host_reads():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="ipu")
    assert x[1, 0].item() == 3.0
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert bool(x.sum() > 0)
    assert int(x[0, 1]) == 2


@pytest.mark.parametrize("fn", [
    lambda x, w: x + 1,
    lambda x, w: x * w[0] - w[1] / 2,
    lambda x, w: x @ w.t(),
    lambda x, w: torch.softmax(x, -1),
    lambda x, w: F.gelu(x).sum(0),
    lambda x, w: x.view(4, 3)[1:, ::2].contiguous(),
    lambda x, w: torch.cat([x, w], 0).mean(1),
    lambda x, w: torch.sort(x, dim=1).values,  # not compiled by poptorch, fine eagerly
    lambda x, w: torch.fft.rfft(x).abs(),
    lambda x, w: (x > 0).nonzero(),
    lambda x, w: torch.where(x > 0, x, w),
    lambda x, w: x[torch.tensor([2, 0])],
    lambda x, w: x.to(torch.float64).exp(),
])
def test_eager_ops_match_cpu(fn):
    x, w = torch.randn(3, 4), torch.randn(3, 4)
    out = fn(x.to("ipu"), w.to("ipu"))
    assert out.device.type == "ipu"
    torch.testing.assert_close(out.cpu(), fn(x, w))


def test_inplace_and_views_eagerly():
    x = torch.randn(3, 4)
    y = x.to("ipu")
    v = y.view(12)
    v.add_(1)
    y[:, 0] = 0
    expected = x + 1
    expected[:, 0] = 0
    torch.testing.assert_close(y.cpu(), expected)
    torch.testing.assert_close(v.cpu(), expected.view(12))


def test_resize_and_out():
    t = torch.empty(2, device="ipu")
    t.resize_(10)
    assert t.shape == (10,)
    out = torch.empty(0, device="ipu")
    torch.add(torch.ones(3, device="ipu"), 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.full((3,), 2.0))


def test_modules_on_ipu():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(2, 3, 3, padding=1)
    x = torch.randn(1, 2, 5, 5)
    expected = conv(x)
    ipu_conv = copy.deepcopy(conv).to("ipu")
    assert ipu_conv.weight.device.type == "ipu"
    torch.testing.assert_close(ipu_conv(x.to("ipu")).cpu(), expected)


def test_autograd_through_ipu_tensors():
    a = torch.randn(3, requires_grad=True)
    (a.to("ipu") * 2).sum().backward()
    torch.testing.assert_close(a.grad, torch.full((3,), 2.0))


def test_deepcopy_and_clone():
    x = torch.randn(2, 2).to("ipu")
    for y in (copy.deepcopy(x), x.clone()):
        assert y.device.type == "ipu"
        assert torch.equal(y.cpu(), x.cpu())
        assert y.data_ptr() != x.data_ptr()


def test_many_allocations_do_not_leak_or_crash():
    for i in range(200):
        t = torch.full((64, 64), float(i), device="ipu")
        assert t[0, 0].item() == float(i)
