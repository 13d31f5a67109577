"""Training steps side by side: eager PyTorch, poptorch.trainingModel and, with
``--inductor``, torch.compile (Inductor), on public architectures built from their
configs (Hugging Face BERT encoder, GPT-2, ResNet-18) with seeded random weights.

One step is forward + backward + AdamW update of one batch. For each model it reports
the compile time of each backend (first call minus a steady call), then the steady-state
step time of every backend measured interleaved in this process (median of ``--repeats``),
the ratio eager / backend (above 1: faster than eager), and the host it ran on. The
backends start from the same weights and take the same batches; the loss of the last
step is printed for each so that diverging runs show.

    python benchmarks/training.py [--size small|base] [--batch 8] [--repeats 5]
                                  [--models bert,gpt2,resnet18] [--inductor] [--json out.json]

``--size base`` is the issue's shapes (BERT-base: 12 layers, hidden 768, sequence 128;
GPT-2 small; ResNet-18 at 224 x 224); ``small`` shrinks depth and width for a quick run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Cold compiles for both compilers: Inductor's caches (which would turn its compile into a
# load on a second run) go to a directory of this run; poptorch has no executable cache
# unless the options name one.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-"))

import torch  # noqa: E402
import transformers as tf  # noqa: E402

import poptorch  # noqa: E402

THREADS = 2


def bert(size: str, batch: int) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    layers, hidden, seq = (12, 768, 128) if size == "base" else (2, 256, 64)
    config = tf.BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers,
                           num_attention_heads=hidden // 64, intermediate_size=4 * hidden,
                           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                           num_labels=2)
    ids = torch.randint(4, 30522, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[: batch // 2, -seq // 4:] = 0  # padded rows
    return tf.BertForSequenceClassification(config), dict(
        input_ids=ids, attention_mask=mask, labels=torch.randint(0, 2, (batch,)))


def gpt2(size: str, batch: int) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    layers, hidden, seq = (12, 768, 128) if size == "base" else (2, 256, 64)
    config = tf.GPT2Config(vocab_size=50257, n_embd=hidden, n_layer=layers, n_head=hidden // 64,
                           n_positions=1024, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                           use_cache=False)
    ids = torch.randint(4, 50257, (batch, seq))
    return tf.GPT2LMHeadModel(config), dict(input_ids=ids, labels=ids)


def resnet18(size: str, batch: int) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    image = 224 if size == "base" else 64
    config = tf.ResNetConfig(num_channels=3, embedding_size=64, hidden_sizes=[64, 128, 256, 512],
                             depths=[2, 2, 2, 2], layer_type="basic", num_labels=1000)
    return tf.ResNetForImageClassification(config), dict(
        pixel_values=torch.randn(batch, 3, image, image),
        labels=torch.randint(0, 1000, (batch,)))


MODELS: dict[str, Callable[[str, int], tuple[torch.nn.Module, dict[str, torch.Tensor]]]] = {
    "bert": bert, "gpt2": gpt2, "resnet18": resnet18}


def eager_step(model: torch.nn.Module) -> Callable[[dict[str, torch.Tensor]], float]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(inputs: dict[str, torch.Tensor]) -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return float(loss)
    return step


def inductor_step(model: torch.nn.Module) -> Callable[[dict[str, torch.Tensor]], float]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    compiled = torch.compile(model)

    @torch.compile
    def update() -> None:
        opt.step()

    def step(inputs: dict[str, torch.Tensor]) -> float:
        opt.zero_grad(set_to_none=True)
        loss = compiled(**inputs).loss
        loss.backward()
        update()
        return float(loss)
    return step


def poptorch_step(model: torch.nn.Module) -> Callable[[dict[str, torch.Tensor]], float]:
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.AdamW(model.parameters(),
                                                                           lr=1e-4))

    def step(inputs: dict[str, torch.Tensor]) -> float:
        return float(trained(**inputs).loss)
    return step


def measure(name: str, size: str, batch: int, repeats: int, backends: list[str]) -> dict[str, Any]:
    torch.manual_seed(0)
    base, inputs = MODELS[name](size, batch)
    base.train()
    makers = {"eager": eager_step, "poptorch": poptorch_step, "inductor": inductor_step}
    steps, compile_s, losses = {}, {}, {}
    for backend in backends:
        steps[backend] = makers[backend](copy.deepcopy(base))
        start = time.perf_counter()
        steps[backend](inputs)  # first call: compiles (eager: warm-up)
        first = time.perf_counter() - start
        start = time.perf_counter()
        losses[backend] = steps[backend](inputs)
        steady = time.perf_counter() - start
        compile_s[backend] = max(first - steady, 0.0)
    times: dict[str, list[float]] = {b: [] for b in backends}
    for _ in range(repeats):  # interleaved: every backend sees the same machine state
        for backend in backends:
            start = time.perf_counter()
            losses[backend] = steps[backend](inputs)
            times[backend].append(time.perf_counter() - start)
    median = {b: statistics.median(t) for b, t in times.items()}
    result = {"model": name, "size": size, "batch": batch,
              "step_ms": {b: round(1e3 * m, 2) for b, m in median.items()},
              "ratio_vs_eager": {b: round(median["eager"] / m, 3) for b, m in median.items()},
              "compile_s": {b: round(s, 2) for b, s in compile_s.items() if b != "eager"},
              "last_loss": losses}
    print(json.dumps(result), flush=True)
    return result


def host() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{model or platform.processor()} ({poptorch._C.host_cpu()}), {THREADS} threads"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("small", "base"), default="small")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--inductor", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    backends = ["eager", "poptorch"] + (["inductor"] if args.inductor else [])
    print("host:", host(), flush=True)
    results = [measure(m, args.size, args.batch, args.repeats, backends)
               for m in args.models.split(",")]
    ratios = [r["ratio_vs_eager"]["poptorch"] for r in results]
    geomean = statistics.geometric_mean(ratios)
    print(f"poptorch geometric mean vs eager: {geomean:.3f}x", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"host": host(), "results": results, "geomean_poptorch": geomean}, f,
                      indent=1)


if __name__ == "__main__":
    main()
