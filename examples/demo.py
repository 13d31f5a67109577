"""The README example: compile a small model for the ipu and compare with eager PyTorch."""

import re

import torch

import poptorch

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
model.eval()
x = torch.randn(8, 16)

ipu_model = poptorch.inferenceModel(model, poptorch.Options())
out = ipu_model(x)  # traced, compiled to native code, run

torch.testing.assert_close(out, model(x))
print("poptorch output matches eager PyTorch:", tuple(out.shape))
ir = ipu_model.executable.graph.mlir
print("captured IR (locations removed):")
print("\n".join(re.sub(r" loc\(.*\)$", "", line) for line in ir.splitlines()
                if not line.startswith("#loc")))
