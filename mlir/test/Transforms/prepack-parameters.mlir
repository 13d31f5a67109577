// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-prepack-parameters))' | FileCheck %s

// The transposed weight of a linear layer is taken pre-permuted.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<4x3xf32> {poptorch.permuted = array<i64: 1, 0>, poptorch.role = "parameter"}
// CHECK-NOT: poptorch.permute
// CHECK: poptorch.matmul %arg0, %[[W]]
func.func @linear(%x: tensor<2x4xf32>, %w: tensor<3x4xf32> {poptorch.role = "parameter"}) -> tensor<2x3xf32> {
  %t = poptorch.permute %w {dims = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  %y = poptorch.matmul %x, %t : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A parameter with another use, an input, or two different permutations
// stays as it is.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: %arg0: tensor<3x4xf32> {poptorch.role = "parameter"}
// CHECK-SAME: %arg1: tensor<3x4xf32> {poptorch.role = "input"}
// CHECK-COUNT-2: poptorch.permute
func.func @kept(%w: tensor<3x4xf32> {poptorch.role = "parameter"},
                %x: tensor<3x4xf32> {poptorch.role = "input"}) -> (tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>) {
  %t = poptorch.permute %w {dims = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  %u = poptorch.permute %x {dims = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  return %t, %w, %u : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// A table shared by an embedding and a linear head (tied weights) is taken
// transposed for the head; the embedding reads it through the inverse
// permutation.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<4x5xf32> {poptorch.permuted = array<i64: 1, 0>, poptorch.role = "parameter"}
// CHECK: %[[T:.*]] = poptorch.permute %[[W]] {dims = array<i64: 1, 0>} : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK: poptorch.embedding %[[T]], %arg1
// CHECK-NOT: poptorch.permute
// CHECK: poptorch.matmul %{{.*}}, %[[W]]
func.func @tied(%w: tensor<5x4xf32> {poptorch.role = "parameter"},
                %ids: tensor<3xi64> {poptorch.role = "input"}) -> tensor<3x5xf32> {
  %x = poptorch.embedding %w, %ids : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %t = poptorch.permute %w {dims = array<i64: 1, 0>} : tensor<5x4xf32> -> tensor<4x5xf32>
  %y = poptorch.matmul %x, %t : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// An embedding table without a permuting use stays as it is.
// CHECK-LABEL: func.func @embedding_only
// CHECK-SAME: %arg0: tensor<5x4xf32> {poptorch.role = "parameter"}
// CHECK-NOT: poptorch.permute
func.func @embedding_only(%w: tensor<5x4xf32> {poptorch.role = "parameter"},
                          %ids: tensor<3xi64> {poptorch.role = "input"}) -> tensor<3x4xf32> {
  %x = poptorch.embedding %w, %ids : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %x : tensor<3x4xf32>
}

// -----

// The weight of a channels-last convolution (poptorch-decompose gave it the
// permutes) is taken as (kH, kW, I, O); the convolution reads it through the
// permute back, which the lowering looks through.
// CHECK-LABEL: func.func @conv_weight
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<3x3x8x16xf32> {poptorch.permuted = array<i64: 2, 3, 1, 0>, poptorch.role = "parameter"}
// CHECK: %[[B:.*]] = poptorch.permute %[[W]] {dims = array<i64: 3, 2, 0, 1>}
// CHECK: poptorch.convolution %arg0, %[[B]]
func.func @conv_weight(%x: tensor<1x8x16x16xf32> {poptorch.role = "input"},
                       %w: tensor<16x8x3x3xf32> {poptorch.role = "parameter"}) -> tensor<1x16x16x16xf32> {
  %0 = poptorch.permute %w {dims = array<i64: 2, 3, 1, 0>} : tensor<16x8x3x3xf32> -> tensor<3x3x8x16xf32>
  %1 = poptorch.permute %0 {dims = array<i64: 3, 2, 0, 1>} : tensor<3x3x8x16xf32> -> tensor<16x8x3x3xf32>
  %2 = poptorch.convolution %x, %1 {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32>
  return %2 : tensor<1x16x16x16xf32>
}
