// Round trip and verifier errors of the reductions family (reductions, scans,
// sorts, losses).
// RUN: poptorch-opt %s -split-input-file -verify-diagnostics | poptorch-opt | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: poptorch.reduce_min %{{.*}} {dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
// CHECK: poptorch.reduce_all %{{.*}} {dims = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<i1>
// CHECK: poptorch.max_dim %{{.*}} {dim = 1 : i64, keepdim = true} : tensor<2x3xf32> -> tensor<2x1xf32>, tensor<2x1xi64>
// CHECK: poptorch.argmax %{{.*}} : tensor<2x3xf32> -> tensor<i64>
// CHECK: poptorch.var_mean %{{.*}} {correction = 0.000000e+00 : f64, dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>, tensor<2xf32>
// CHECK: poptorch.cummax %{{.*}} {dim = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
// CHECK: poptorch.sort %{{.*}} {descending = true, dim = 1 : i64} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
// CHECK: poptorch.nll_loss %{{.*}}, %{{.*}} weight %{{.*}} {ignore_index = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>)
func.func @roundtrip(%x: tensor<2x3xf32>, %t: tensor<2xi64>, %w: tensor<3xf32>) {
  %0 = poptorch.reduce_min %x {dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %1 = poptorch.reduce_all %x {dims = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<i1>
  %2:2 = poptorch.max_dim %x {dim = 1 : i64, keepdim = true} : tensor<2x3xf32> -> tensor<2x1xf32>, tensor<2x1xi64>
  %3 = poptorch.argmax %x : tensor<2x3xf32> -> tensor<i64>
  %4:2 = poptorch.var_mean %x {dims = array<i64: 1>, correction = 0.0 : f64} : tensor<2x3xf32> -> tensor<2xf32>, tensor<2xf32>
  %5:2 = poptorch.cummax %x {dim = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
  %6:2 = poptorch.sort %x {dim = 1 : i64, descending = true} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  %7:2 = poptorch.nll_loss %x, %t weight %w {ignore_index = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @max_of_empty(%x: tensor<0x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{cannot reduce an empty tensor (PyTorch raises here too)}}
  %0 = poptorch.max %x : tensor<0x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @argmin_empty_dim(%x: tensor<0x3xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{cannot reduce an empty dim}}
  %0 = poptorch.argmin %x {dim = 0 : i64} : tensor<0x3xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @max_dim_index_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{indices must be int64}}
  %0:2 = poptorch.max_dim %x {dim = 1 : i64} : tensor<2x3xf32> -> tensor<2xf32>, tensor<2xi32>
  return
}

// -----

func.func @sort_longer(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{does not fit}}
  %0:2 = poptorch.sort %x {dim = 1 : i64} : tensor<2x3xf32> -> tensor<2x4xf32>, tensor<2x4xi64>
  return
}

// -----

func.func @cumsum_type(%x: tensor<3xi32>) -> tensor<3xi64> {
  // expected-error @+1 {{the result must have the input element type}}
  %0 = poptorch.cumsum %x {dim = 0 : i64} : tensor<3xi32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @kthvalue_k(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{k = 4 is out of range [1, 3]}}
  %0:2 = poptorch.kthvalue %x {k = 4 : i64, dim = 1 : i64} : tensor<2x3xf32> -> tensor<2xf32>, tensor<2xi64>
  return
}

// -----

func.func @loss_reduction(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{reduction 3 is not 0 (none), 1 (mean) or 2 (sum)}}
  %0 = poptorch.mse_loss %x, %x {reduction = 3 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @var_int(%x: tensor<3xi32>) -> tensor<i32> {
  // expected-error @+1 {{needs a floating-point input}}
  %0 = poptorch.var %x {dims = array<i64: 0>} : tensor<3xi32> -> tensor<i32>
  return %0 : tensor<i32>
}
