// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-device-iterations{iterations=4 replicas=1 period=1})' | FileCheck %s --check-prefix=ALL
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-device-iterations{iterations=4 replicas=2 period=2})' | FileCheck %s --check-prefix=EVERY
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-device-iterations{iterations=4 replicas=1 sum=true})' | FileCheck %s --check-prefix=SUM

// One micro-batch of a model with a buffer update: the input is sliced per
// iteration, the buffer is loop-carried, outputs are stacked (All), kept
// every second iteration (EveryN) or summed (Sum).

// ALL-LABEL: func.func @main
// ALL-SAME: %[[X:.*]]: tensor<4x1x2x3xf32> {poptorch.name = "input0", poptorch.role = "input"}
// ALL-SAME: %[[C:.*]]: tensor<f32> {poptorch.name = "count", poptorch.role = "buffer"}
// ALL-SAME: -> (tensor<4x2x3xf32>, tensor<f32> {poptorch.updates = 1 : i64})
// ALL-SAME: llvm.emit_c_interface
// ALL: %[[EMPTY:.*]] = tensor.empty() : tensor<4x2x3xf32>
// ALL: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[EMPTY]], %[[CNT:.*]] = %[[C]])
// ALL: %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[I]], %{{.*}}, 0, 0] [1, 1, 2, 3] [1, 1, 1, 1] : tensor<4x1x2x3xf32> to tensor<2x3xf32>
// ALL: %[[Y:.*]] = poptorch.mul %[[SLICE]]
// ALL: %[[NEW:.*]] = poptorch.add %[[CNT]]
// ALL: %[[INS:.*]] = tensor.insert_slice %[[Y]] into %[[ACC]][%[[I]], 0, 0] [1, 2, 3] [1, 1, 1]
// ALL: scf.yield %[[INS]], %[[NEW]]
// ALL: return %[[R]]#0, %[[R]]#1

// EVERY-LABEL: func.func @main
// EVERY-SAME: tensor<4x2x2x3xf32>
// EVERY-SAME: %[[REP:[a-z0-9]+]]: tensor<i64> {poptorch.name = "replica", poptorch.role = "replica"}
// EVERY-SAME: -> (tensor<2x2x3xf32>, tensor<f32> {poptorch.updates = 1 : i64})
// EVERY: %[[RI:.*]] = tensor.extract %[[REP]][] : tensor<i64>
// EVERY: %[[RIDX:.*]] = arith.index_cast %[[RI]]
// EVERY: scf.for
// EVERY: tensor.extract_slice %{{.*}}[%{{.*}}, %[[RIDX]], 0, 0]
// EVERY: arith.remui
// EVERY: scf.if
// EVERY: tensor.insert_slice
// EVERY: scf.yield

// SUM-LABEL: func.func @main
// SUM-SAME: -> (tensor<2x3xf32>, tensor<f32> {poptorch.updates = 1 : i64})
// SUM: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// SUM: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]],
// SUM: %[[Y:.*]] = poptorch.mul
// SUM: linalg.add ins(%[[ACC]], %[[Y]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[ACC]] : tensor<2x3xf32>)
func.func @main(%x: tensor<2x3xf32> {poptorch.name = "input0", poptorch.role = "input"},
                %count: tensor<f32> {poptorch.name = "count", poptorch.role = "buffer"})
    -> (tensor<2x3xf32>, tensor<f32> {poptorch.updates = 1 : i64}) attributes {llvm.emit_c_interface} {
  %two = poptorch.constant dense<2.000000e+00> : tensor<f32> : tensor<f32>
  %y = poptorch.mul %x, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %one = poptorch.constant dense<1.000000e+00> : tensor<f32> : tensor<f32>
  %c = poptorch.add %count, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y, %c : tensor<2x3xf32>, tensor<f32>
}

// -----

// An output that is the input itself: each iteration returns its slice.
// ALL-LABEL: func.func @main
// EVERY-LABEL: func.func @main
// SUM-LABEL: func.func @main
func.func @main(%x: tensor<2xf32> {poptorch.role = "input"}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
