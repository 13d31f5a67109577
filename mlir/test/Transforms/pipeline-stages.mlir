// The named stage (what replay.sh lists for a pipelined program) is the pass.
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-outline-stages | FileCheck %s --check-prefix=OUTLINE
// RUN: poptorch-opt %s -split-input-file -poptorch-outline-stages | FileCheck %s --check-prefix=OUTLINE
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-outline-stages, poptorch-device-iterations{iterations=4 replicas=1 period=1 pipeline=true})' | FileCheck %s --check-prefix=PIPE
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-outline-stages, poptorch-device-iterations{iterations=4 replicas=1 period=1})' | FileCheck %s --check-prefix=SEQ

// Three stages; stage 2 also reads a value of stage 0 (it passes through
// stage 1), stage 0 returns an output of its own, stage 1 updates a buffer.

// OUTLINE-LABEL: func.func private @main_stage0
// OUTLINE-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32> {poptorch.result = 1 : i64})
// OUTLINE-SAME: poptorch.pipeline_stage = 0
// OUTLINE: %[[TWO:.*]] = poptorch.constant
// OUTLINE: %[[A:.*]] = poptorch.mul %[[X]], %[[TWO]]
// OUTLINE: return %[[A]], %[[A]]
// OUTLINE-LABEL: func.func private @main_stage1
// OUTLINE-SAME: (%[[C:.*]]: tensor<f32>, %[[A1:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32> {poptorch.result = 2 : i64})
// OUTLINE: %[[B:.*]] = poptorch.tanh %[[A1]]
// OUTLINE: %[[N:.*]] = poptorch.add %[[C]]
// OUTLINE: return %[[A1]], %[[B]], %[[N]]
// OUTLINE-LABEL: func.func private @main_stage2
// OUTLINE-SAME: (%[[A2:.*]]: tensor<2x3xf32>, %[[B2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32> {poptorch.result = 0 : i64})
// OUTLINE: poptorch.add %[[B2]], %[[A2]]
// OUTLINE-LABEL: func.func @main
// OUTLINE: %[[S0:.*]]:2 = call @main_stage0(%{{.*}})
// OUTLINE: %[[S1:.*]]:3 = call @main_stage1(%{{.*}}, %[[S0]]#0)
// OUTLINE: %[[S2:.*]] = call @main_stage2(%[[S1]]#0, %[[S1]]#1)
// OUTLINE: return %[[S2]], %[[S0]]#1, %[[S1]]#2

// The software pipeline: fill (steps 0, 1), the steady state (all three
// stages per step, each on its own micro-batch), drain (steps 4, 5).
// PIPE-LABEL: func.func @main
// PIPE-SAME: poptorch.pipeline = "overlapped"
// PIPE: call @main_stage0
// PIPE-NOT: scf.for
// PIPE: call @main_stage0
// PIPE: call @main_stage1
// PIPE: scf.for %[[T:[a-z0-9]+]] = %c2 to %{{.*}} iter_args(
// PIPE: tensor.extract_slice %{{.*}}[%[[T]], %{{.*}}, 0, 0]
// PIPE: call @main_stage0
// PIPE: %[[M1:.*]] = arith.subi %[[T]], %c1
// PIPE: call @main_stage1
// PIPE: %[[M2:.*]] = arith.subi %[[T]], %c2
// PIPE: call @main_stage2
// PIPE: tensor.insert_slice %{{.*}} into %{{.*}}[%[[T]], 0, 0]
// PIPE: tensor.insert_slice %{{.*}} into %{{.*}}[%[[M2]], 0, 0]
// PIPE: scf.yield
// PIPE: } {poptorch.device_loop}
// PIPE: call @main_stage1
// PIPE: call @main_stage2
// PIPE: call @main_stage2
// PIPE: return

// Without pipeline=true the stages are inlined back: the plain loop.
// SEQ-LABEL: func.func @main
// SEQ-SAME: poptorch.pipeline = "sequential: PipelinedExecution was not asked for"
// SEQ-NOT: call
// SEQ: scf.for
// SEQ: poptorch.mul
// SEQ: poptorch.tanh
// SEQ: poptorch.add
// SEQ-NOT: func.func private
func.func @main(%x: tensor<2x3xf32> {poptorch.name = "input0", poptorch.role = "input"},
                %count: tensor<f32> {poptorch.name = "count", poptorch.role = "buffer"})
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32> {poptorch.updates = 1 : i64}) attributes {llvm.emit_c_interface} {
  %two = poptorch.constant dense<2.000000e+00> : tensor<f32> : tensor<f32>
  %a = poptorch.mul %x, %two {poptorch.stage = 0 : i64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %b = poptorch.tanh %a {poptorch.stage = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %one = poptorch.constant dense<1.000000e+00> : tensor<f32> : tensor<f32>
  %c = poptorch.add %count, %one {poptorch.stage = 1 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %y = poptorch.add %b, %a {poptorch.stage = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %a, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>
}

// -----

// A buffer read by stage 0 and written by stage 1: the stages cannot carry
// it separately, so they run one after another (and @main says why).
// OUTLINE-LABEL: func.func @main
// OUTLINE: call @main_stage0
// OUTLINE: call @main_stage1
// PIPE-LABEL: func.func @main
// PIPE-SAME: poptorch.pipeline = "sequential: the buffer count is read by stage 0 and written by stage 1"
// PIPE-NOT: call
// SEQ-LABEL: func.func @main
func.func @main(%x: tensor<2xf32> {poptorch.name = "input0", poptorch.role = "input"},
                %count: tensor<2xf32> {poptorch.name = "count", poptorch.role = "buffer"})
    -> (tensor<2xf32>, tensor<2xf32> {poptorch.updates = 1 : i64}) {
  %a = poptorch.add %x, %count {poptorch.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c = poptorch.add %a, %count {poptorch.stage = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %a, %c : tensor<2xf32>, tensor<2xf32>
}

// -----

// One stage: nothing to outline.
// OUTLINE-LABEL: func.func @main
// OUTLINE-NOT: call
// OUTLINE: poptorch.neg
// PIPE-LABEL: func.func @main
// PIPE-NOT: poptorch.pipeline
// SEQ-LABEL: func.func @main
func.func @main(%x: tensor<2xf32> {poptorch.role = "input"}) -> tensor<2xf32> {
  %a = poptorch.neg %x {poptorch.stage = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}
