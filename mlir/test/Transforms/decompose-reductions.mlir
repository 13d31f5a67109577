// poptorch-decompose of the reductions family: composite reductions, order
// statistics and losses become core reductions, sorts and elementwise ops.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-decompose))' | FileCheck %s

// CHECK-LABEL: func.func @var_mean
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.sub
// CHECK: poptorch.mul
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.div
// CHECK-NOT: poptorch.var_mean
func.func @var_mean(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = poptorch.var_mean %x {dims = array<i64: 0>, correction = 2.0 : f64} : tensor<4x3xf32> -> tensor<3xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// logsumexp: the max is taken as 0 where it is infinite.
// CHECK-LABEL: func.func @logsumexp
// CHECK: poptorch.reduce_max
// CHECK: poptorch.abs
// CHECK: poptorch.eq
// CHECK: poptorch.where
// CHECK: poptorch.exp
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.log
func.func @logsumexp(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = poptorch.logsumexp %x {dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// kthvalue: the first k of a stable sort, then the k-th.
// CHECK-LABEL: func.func @kthvalue
// CHECK: poptorch.sort %{{.*}} {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
// CHECK: poptorch.slice %{{.*}} {dim = 1 : i64, start = 2 : i64} : tensor<2x3xf32> -> tensor<2x1xf32>
func.func @kthvalue(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %0:2 = poptorch.kthvalue %x {k = 3 : i64, dim = 1 : i64} : tensor<2x5xf32> -> tensor<2xf32>, tensor<2xi64>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}

// -----

// median: NaN and the first NaN's index where the slice has one.
// CHECK-LABEL: func.func @median_dim
// CHECK: poptorch.sort
// CHECK: poptorch.ne
// CHECK: poptorch.reduce_any
// CHECK: poptorch.argmax
// CHECK: poptorch.where
// CHECK: poptorch.where
func.func @median_dim(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %0:2 = poptorch.median_dim %x {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2xf32>, tensor<2xi64>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}

// -----

// nll_loss: a one-hot of the target against an iota of the classes, masked
// by ignore_index; mean divides by the total weight.
// CHECK-LABEL: func.func @nll_loss
// CHECK: poptorch.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: poptorch.eq
// CHECK: poptorch.logical_and
// CHECK: poptorch.where
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.neg
// CHECK: poptorch.div
func.func @nll_loss(%x: tensor<3xf32>, %t: tensor<i64>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = poptorch.nll_loss %x, %t {ignore_index = -100 : i64} : (tensor<3xf32>, tensor<i64>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @mse_loss_f16
// CHECK: poptorch.cast %{{.*}} : tensor<4xf16> -> tensor<4xf32>
// CHECK: poptorch.sub
// CHECK: poptorch.mul
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.div
// CHECK: poptorch.cast %{{.*}} : tensor<f32> -> tensor<f16>
func.func @mse_loss_f16(%x: tensor<4xf16>, %t: tensor<4xf16>) -> tensor<f16> {
  %0 = poptorch.mse_loss %x, %t : (tensor<4xf16>, tensor<4xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// nanmedian: the sort puts NaN last; the entry (count - 1) / 2 of each slice
// is gathered.
// CHECK-LABEL: func.func @nanmedian_dim
// CHECK: poptorch.sort
// CHECK: poptorch.ne
// CHECK: poptorch.logical_not
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.floor_divide
// CHECK: poptorch.gather
// CHECK: poptorch.gather
func.func @nanmedian_dim(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %0:2 = poptorch.nanmedian_dim %x {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2xf32>, tensor<2xi64>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}

// -----

// mode: pairwise equality counts, the smallest value with the top count,
// its last index.
// CHECK-LABEL: func.func @mode
// CHECK: poptorch.eq
// CHECK: poptorch.reduce_sum
// CHECK: poptorch.reduce_max
// CHECK: poptorch.reduce_min
// CHECK: poptorch.reduce_max
func.func @mode(%x: tensor<3x4xi32>) -> (tensor<3xi32>, tensor<3xi64>) {
  %0:2 = poptorch.mode %x {dim = 1 : i64} : tensor<3x4xi32> -> tensor<3xi32>, tensor<3xi64>
  return %0#0, %0#1 : tensor<3xi32>, tensor<3xi64>
}
