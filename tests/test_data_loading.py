"""PopTorch's data loading and custom inputs: DataLoader modes (AsyncRebatched joins
the workers' chunks into combined batches), worker processes and early exits, and
ICustomArgParser for input and output objects of the user's own types."""

from __future__ import annotations

import time

import pytest
import torch
from conftest import assert_matches

import poptorch


def options(iterations: int) -> poptorch.Options:
    return poptorch.Options().deviceIterations(iterations)


@pytest.mark.parametrize("worker_size", [None, 1, 5])
def test_async_rebatched_yields_combined_batches(worker_size):
    data = torch.utils.data.TensorDataset(torch.arange(46.0).reshape(23, 2), torch.arange(23))
    sync = list(poptorch.DataLoader(options(3), data, batch_size=2))
    loader = poptorch.DataLoader(options(3), data, batch_size=2,
                                 mode=poptorch.DataLoaderMode.AsyncRebatched,
                                 rebatched_worker_size=worker_size)
    assert len(loader) == len(sync) == 3
    for _ in range(2):  # epochs
        got = list(loader)
        assert len(got) == 3
        for (x, i), (sx, si) in zip(got, sync, strict=True):
            assert x.shape == (6, 2) and torch.equal(x, sx) and torch.equal(i, si)


def test_async_rebatched_keeps_the_last_partial_batch_without_drop_last():
    data = torch.utils.data.TensorDataset(torch.arange(10.0))
    loader = poptorch.DataLoader(options(2), data, batch_size=2, drop_last=False,
                                 mode=poptorch.DataLoaderMode.AsyncRebatched,
                                 rebatched_worker_size=3)
    sizes = [len(x) for (x,) in loader]
    assert sizes == [4, 4, 2] and len(loader) == 3
    with pytest.raises(poptorch.Error, match="rebatched_worker_size must be an int from 1"):
        poptorch.DataLoader(options(2), data, batch_size=2,
                            mode=poptorch.DataLoaderMode.AsyncRebatched, rebatched_worker_size=9)
    with pytest.raises(poptorch.Error, match="only applies to"):
        poptorch.DataLoader(options(2), data, batch_size=2, rebatched_worker_size=2)


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((3,), float(i))


def test_worker_processes_feed_the_model_and_shut_down():
    model = torch.nn.Linear(3, 2).eval()
    opts = options(2)
    compiled = poptorch.inferenceModel(model, opts)
    for mode in [poptorch.DataLoaderMode.Async, poptorch.DataLoaderMode.AsyncRebatched]:
        loader = poptorch.DataLoader(opts, Slow(), batch_size=4, num_workers=2, mode=mode,
                                     shuffle=False)
        seen = 0
        for x in loader:
            with torch.no_grad():
                assert_matches(compiled(x), model(x))
            seen += 1
            if seen == 3:
                break  # an early exit stops the background reader
        loader.terminate()
        start = time.perf_counter()
        assert [float(x[0, 0]) for x in loader] == [0.0, 8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 56.0]
        assert time.perf_counter() - start < 30


class Graph:
    """A user type holding tensors, with a parser as PyTorch Geometric registers one."""

    def __init__(self, x, edges, name):
        self.x, self.edges, self.name = x, edges, name


class GraphParser(poptorch.ICustomArgParser):
    def yieldTensors(self, struct):  # noqa: N802
        yield struct.x
        yield struct.edges

    def reconstruct(self, original_structure, tensor_iterator):
        return Graph(next(tensor_iterator), next(tensor_iterator), original_structure.name)


poptorch.registerCustomArgParser(Graph, GraphParser())


class GraphModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, g: Graph) -> Graph:
        h = self.lin(g.x)
        messages = torch.zeros_like(h).index_add(0, g.edges[1], h[g.edges[0]])
        return Graph(h + messages, g.edges.flip(0), g.name + "'")


def test_custom_arg_parser_inputs_and_outputs():
    torch.manual_seed(0)
    model = GraphModel().eval()
    compiled = poptorch.inferenceModel(model)
    for _ in range(2):
        g = Graph(torch.randn(5, 4), torch.randint(0, 5, (2, 7)), "g")
        out = compiled(g)
        with torch.no_grad():
            ref = model(g)
        assert isinstance(out, Graph) and out.name == "g'"
        assert_matches((out.x, out.edges), (ref.x, ref.edges))
    assert compiled.compile_count == 1
    with pytest.raises(poptorch.Error, match="must be an ICustomArgParser"):
        poptorch.registerCustomArgParser(Graph, object())
