"""PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``,
shipped in the torch wheel) through ``poptorch.inferenceModel``: the first three samples of
every OpInfo, for float32, int64 and bool, each in a crash-isolated worker and compared with eager
PyTorch (tests/opinfo/sweep.py).

The outcome of every (op, dtype) over all samples is recorded in tests/opinfo/expected.json
(``make opinfo`` runs the full sweep and rewrites it). This run fails on any crash or write
into an input, and on any (op, dtype) whose first three samples passed in the recorded sweep
and no longer pass.
"""

from __future__ import annotations

from opinfo.sweep import DTYPES, compare_with_expected, load_expected, run_sweep, summarize


def test_first_samples_of_every_opinfo():
    report = run_sweep(DTYPES, jobs=2, max_samples=3)
    print(summarize(report))
    assert not report["poptorch_rebuilt"], "poptorch._C changed while the sweep ran"
    unsafe = [f"{s['op']} {s['dtype']} sample {s['sample']}: {s['outcome']}: {s['detail']}"
              for s in report["failed_samples"] if s["outcome"] in ("crash", "input_written")]
    assert not unsafe, "\n".join(unsafe)
    regressions, _ = compare_with_expected(report, load_expected())
    assert not regressions, "regressions against tests/opinfo/expected.json:\n" + "\n".join(regressions)
