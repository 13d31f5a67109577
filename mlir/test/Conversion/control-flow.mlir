// poptorch.for_loop and poptorch.cond capture as scf.for / scf.if around
// poptorch ops: the conversion lowers the ops inside the regions and leaves
// the regions as they are, the loop-carried tensors become loop-carried
// buffers, and the whole pipeline produces LLVM with the loop and the branch
// intact (not unrolled).
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --convert-poptorch-to-linalg | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --poptorch-stage-to-linalg --poptorch-stage-tile-and-vectorize --poptorch-stage-bufferize | FileCheck %s --check-prefix=BUF
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --poptorch-stage-to-linalg --poptorch-stage-tile-and-vectorize --poptorch-stage-bufferize --poptorch-stage-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-NOT: poptorch.{{[a-z_]+}} %
// CHECK: %[[N:.*]] = arith.constant 1000 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[X:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}}) -> (tensor<3x6xf32>, tensor<3x6xf32>)
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<3x6xf32>, tensor<6x6xf32>)
// CHECK: math.tanh
// CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<3x6xf32>, tensor<3x6xf32>
// CHECK: %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.if %[[C]] -> (tensor<3x6xf32>)
// CHECK: scf.yield %{{.*}} : tensor<3x6xf32>
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : tensor<3x6xf32>
// The loop starts from copies of the inputs, which are never written.
// BUF-LABEL: func.func @main
// BUF: memref.copy %arg0, %[[X0:.*]] : memref<3x6xf32> to memref<3x6xf32>
// BUF: memref.copy %arg1, %[[H0:.*]] : memref<3x6xf32> to memref<3x6xf32>
// BUF: scf.for %{{.*}} = %{{.*}} to %c1000 step %{{.*}} iter_args(%{{.*}} = %[[X0]], %{{.*}} = %[[H0]]
// BUF: scf.if %{{.*}} -> (memref<3x6xf32
// LLVM-LABEL: llvm.func @main
// LLVM: llvm.icmp "slt"
// LLVM: llvm.cond_br
func.func @main(%x: tensor<3x6xf32> {poptorch.role = "input"},
                %h: tensor<3x6xf32> {poptorch.role = "input"},
                %w: tensor<6x6xf32> {poptorch.role = "parameter"})
    -> (tensor<3x6xf32>, tensor<3x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1000 = arith.constant 1000 : index
  %c1 = arith.constant 1 : index
  %half = poptorch.constant dense<5.000000e-01> : tensor<f32> : tensor<f32>
  %0:2 = scf.for %i = %c0 to %c1000 step %c1 iter_args(%a = %x, %b = %h) -> (tensor<3x6xf32>, tensor<3x6xf32>) {
    %1 = poptorch.matmul %a, %w : (tensor<3x6xf32>, tensor<6x6xf32>) -> tensor<3x6xf32>
    %2 = poptorch.add %1, %b : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
    %3 = poptorch.tanh %2 : (tensor<3x6xf32>) -> tensor<3x6xf32>
    %4 = poptorch.mul %b, %half : (tensor<3x6xf32>, tensor<f32>) -> tensor<3x6xf32>
    scf.yield %3, %4 : tensor<3x6xf32>, tensor<3x6xf32>
  }
  %zero = poptorch.constant dense<0.000000e+00> : tensor<f32> : tensor<f32>
  %s = poptorch.reduce_sum %0#0 {dims = array<i64: 0, 1>} : tensor<3x6xf32> -> tensor<f32>
  %gt = poptorch.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %flag = tensor.extract %gt[] : tensor<i1>
  %5 = scf.if %flag -> (tensor<3x6xf32>) {
    %6 = poptorch.mul %0#0, %0#1 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
    scf.yield %6 : tensor<3x6xf32>
  } else {
    %6 = poptorch.neg %0#1 : (tensor<3x6xf32>) -> tensor<3x6xf32>
    scf.yield %6 : tensor<3x6xf32>
  }
  return %0#0, %5 : tensor<3x6xf32>, tensor<3x6xf32>
}
