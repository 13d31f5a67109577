"""poptorch.DataLoader and AsynchronousDataAccessor.

PopTorch's DataLoader hands out *combined* batches: ``batch_size`` samples per
micro-batch times ``deviceIterations x replicationFactor x gradientAccumulation``
micro-batches, which is exactly one call of a training model compiled with the same
options (see ``_batching``); inference models ignore gradientAccumulation, so set it
to 1 when loading for them.

With ``inputReplicaGrouping`` a combined batch holds ``deviceIterations x
replicationFactor / input_group_size`` micro-batches. With several processes
(``Options.Distributed``) and ``auto_distributed_partitioning`` (the default),
process ``p`` of ``n`` reads the samples ``p, p + n, p + 2n, ...`` of a map-style
dataset, the same number in every process (the last ``len % n`` samples are
left out); an iterable dataset must partition itself.

``AsynchronousDataAccessor`` loads the next batches on a background thread
while the model runs; ``DataLoaderMode.Async`` and ``AsyncRebatched`` wrap the
loader in one when it is iterated.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import torch
import torch.utils._pytree as pytree

from ._batching import Batching
from .enums import DataLoaderMode
from .errors import ArgumentError, ArgumentTypeError
from .options import Options


class DataLoader(torch.utils.data.DataLoader):
    """``poptorch.DataLoader(options, dataset, batch_size=1, ...)`` as in PopTorch."""

    def __init__(self, options: Options, dataset: torch.utils.data.Dataset, batch_size: int = 1,
                 shuffle: bool = False, num_workers: int = 0, drop_last: bool = True,
                 persistent_workers: bool | None = None, auto_distributed_partitioning: bool = True,
                 mode: DataLoaderMode = DataLoaderMode.Sync, async_options: dict | None = None,
                 rebatched_worker_size: int | None = None, **kwargs: Any) -> None:
        if not isinstance(options, Options):
            raise ArgumentTypeError("poptorch.DataLoader expects poptorch.Options as its first argument, "
                            f"got {type(options).__name__}")
        if not isinstance(mode, DataLoaderMode):
            raise ArgumentTypeError(
                f"poptorch.DataLoader: mode expects a poptorch.DataLoaderMode, got {mode!r}")
        if batch_size is None or batch_size < 1:
            raise ArgumentError(f"poptorch.DataLoader: batch_size must be an int >= 1, got {batch_size}")
        self._options = options
        self._mode = mode
        self._accessor: AsynchronousDataAccessor | None = None
        self._async_options = dict(async_options or {})
        self.batch_size_per_micro_batch = batch_size
        factor = Batching.from_options(options).factor
        if not options._values.get("training", False):
            # PopTorch's combined batch counts gradient accumulation whatever the model.
            factor *= options.Training.gradient_accumulation
        self.combined_batch_size = batch_size * factor
        if persistent_workers is None:
            persistent_workers = num_workers > 0
        loader_batch = self.combined_batch_size
        if mode == DataLoaderMode.AsyncRebatched:
            # Workers load chunks of rebatched_worker_size samples; the accessor joins
            # them into combined batches.
            worker = rebatched_worker_size if rebatched_worker_size is not None \
                else self.combined_batch_size
            if isinstance(worker, bool) or not isinstance(worker, int) \
                    or not 1 <= worker <= self.combined_batch_size:
                raise ArgumentError("poptorch.DataLoader: rebatched_worker_size must be an int "
                                    f"from 1 to the combined batch size "
                                    f"{self.combined_batch_size}, got {rebatched_worker_size!r}")
            loader_batch = worker
            self._async_options.setdefault("rebatched_size", self.combined_batch_size)
            self._rebatch_drop_last = drop_last
            drop_last = False
        elif rebatched_worker_size is not None:
            raise ArgumentError("poptorch.DataLoader: rebatched_worker_size only applies to "
                                "mode=poptorch.DataLoaderMode.AsyncRebatched")
        processes = options.Distributed.numProcesses
        if auto_distributed_partitioning and processes > 1 \
                and not isinstance(dataset, torch.utils.data.IterableDataset):
            pid = options.Distributed.processId
            share = len(dataset) // processes
            dataset = torch.utils.data.Subset(dataset, range(pid, share * processes, processes))
        super().__init__(dataset, batch_size=loader_batch, shuffle=shuffle,
                         num_workers=num_workers, drop_last=drop_last,
                         persistent_workers=persistent_workers, **kwargs)

    @property
    def options(self) -> Options:
        return self._options

    def __iter__(self) -> Iterator[Any]:
        if self._mode == DataLoaderMode.Sync:
            return super().__iter__()
        # One accessor for every epoch: it preloads the next epoch while the model
        # finishes this one, and a second reader would share the workers.
        if self._accessor is None:
            options = dict(self._async_options)
            if self._mode == DataLoaderMode.AsyncRebatched:
                options.setdefault("_drop_last", self._rebatch_drop_last)
            self._accessor = AsynchronousDataAccessor(_SyncView(self), **options)
        return iter(self._accessor)

    def __len__(self) -> int:
        n = super().__len__()
        if self._mode != DataLoaderMode.AsyncRebatched:
            return n
        try:
            samples = len(self.dataset)  # type: ignore[arg-type]
        except TypeError:  # an iterable dataset without a length
            return n
        whole, rest = divmod(samples, self.combined_batch_size)
        return whole + (1 if rest and not self._rebatch_drop_last else 0)

    def terminate(self) -> None:
        """Stops the background reader of the asynchronous modes (the next iteration
        starts it again)."""
        if self._accessor is not None:
            self._accessor.terminate()


class _SyncView:
    """The DataLoader iterated synchronously (what the accessor's thread reads)."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader

    def __iter__(self) -> Iterator[Any]:
        return torch.utils.data.DataLoader.__iter__(self._loader)

    def __len__(self) -> int:
        return len(self._loader)


_END = object()


def _rebatch(batches: Iterator[Any], size: int, drop_last: bool) -> Iterator[Any]:
    """Batches of ``size`` samples made from ``batches`` of any sizes (every tensor in
    a batch has the samples along dim 0; the structures are torch's collated ones)."""
    pending: list[Any] = []
    count = 0
    for batch in batches:
        leaves, spec = pytree.tree_flatten(batch)
        rows = leaves[0].shape[0] if leaves and isinstance(leaves[0], torch.Tensor) else None
        if rows is None:
            raise ArgumentError("poptorch: rebatching needs batches of tensors, got "
                                f"{type(batch).__name__}")
        pending.append((leaves, spec))
        count += rows
        while count >= size:
            joined = [torch.cat(parts) for parts in zip(*(p[0] for p in pending), strict=True)]
            yield pytree.tree_unflatten([j[:size] for j in joined], spec)
            rest = [j[size:] for j in joined]
            count -= size
            pending = [(rest, spec)] if count else []
    if count and not drop_last:
        joined = [torch.cat(parts) for parts in zip(*(p[0] for p in pending), strict=True)]
        yield pytree.tree_unflatten(joined, pending[0][1])


class AsynchronousDataAccessor:
    """Iterates ``dataset`` (a DataLoader or any iterable) on a background thread,
    keeping up to ``buffer_size`` batches ready."""

    def __init__(self, dataset: Any, buffer_size: int = 3, miss_sleep_time_in_ms: float = 0.1,
                 load_indefinitely: bool = True, early_preload: bool = False,
                 sharing_strategy: Any = None, rebatched_size: int | None = None,
                 _drop_last: bool = True) -> None:
        # A thread, not a process, reads the dataset (its workers, if any, are the
        # DataLoader's): there is no polling to tune and no shared memory to set up.
        del miss_sleep_time_in_ms, sharing_strategy
        if rebatched_size is not None and (isinstance(rebatched_size, bool) or not isinstance(
                rebatched_size, int) or rebatched_size < 1):
            raise ArgumentError("poptorch.AsynchronousDataAccessor: rebatched_size must be an "
                                f"int >= 1, got {rebatched_size!r}")
        self._rebatched_size = rebatched_size
        self._drop_last = _drop_last
        if buffer_size < 1:
            raise ArgumentError(f"poptorch.AsynchronousDataAccessor: buffer_size must be >= 1, "
                             f"got {buffer_size}")
        self._dataset = dataset
        self._buffer_size = buffer_size
        self._load_indefinitely = load_indefinitely
        self._queue: queue.Queue | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        if early_preload:
            self._start()

    def __len__(self) -> int:
        return len(self._dataset)

    def _start(self) -> None:
        self._stop = threading.Event()  # one per epoch's thread
        self._queue = queue.Queue(maxsize=self._buffer_size)
        self._thread = threading.Thread(target=self._worker, args=(self._queue, self._stop),
                                        daemon=True)
        self._thread.start()

    def _worker(self, q: queue.Queue, stop: threading.Event) -> None:
        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            items = iter(self._dataset)
            if self._rebatched_size is not None:
                items = _rebatch(items, self._rebatched_size, self._drop_last)
            for item in items:
                if not put(item):
                    return
            put(_END)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            put(e)

    def __iter__(self) -> Iterator[Any]:
        if self._thread is None:
            self._start()
        assert self._queue is not None
        q = self._queue
        finished = False
        try:
            while True:
                item = q.get()
                if item is _END:
                    finished = True
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            # An epoch left early (or failed) stops its reader; one read to the end
            # preloads the next epoch while the model finishes this one.
            self.terminate()
            if finished and self._load_indefinitely:
                self._start()
            else:
                self._queue = None

    def terminate(self) -> None:
        """Stops the background thread."""
        self._stop.set()
        if self._thread is not None:
            # The reader stops once the batch it is loading is ready: waiting for it
            # keeps two readers from sharing the DataLoader's workers.
            self._thread.join()
        self._thread = None

    def __del__(self) -> None:
        self._stop.set()
