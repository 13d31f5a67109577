// RUN: poptorch-opt %s -poptorch-test-break="op=poptorch.relu mode=perturb index=1" | FileCheck %s
// RUN: poptorch-opt %s -poptorch-test-break="op=poptorch.tanh mode=perturb" | FileCheck %s --check-prefix=NONE
// RUN: poptorch-opt %s -poptorch-test-break="op=poptorch.relu mode=fail" -verify-diagnostics

// Test-only (docs/debugging.md): perturb negates the result of the index-th
// op named `op`; fail makes the pass fail on it; no such op: no change.
// CHECK-LABEL: func.func @two_relus
// CHECK: %[[A:.*]] = poptorch.relu %arg0
// CHECK: %[[B:.*]] = poptorch.relu %[[A]]
// CHECK: %[[N:.*]] = poptorch.neg %[[B]]
// CHECK: return %[[N]]
// NONE-NOT: poptorch.neg
func.func @two_relus(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{poptorch-test-break: deliberate failure on poptorch.relu}}
  %a = poptorch.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = poptorch.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
