// convert-poptorch-to-linalg error paths: one clear error per unsupported op
// (the driver's generic "failed to legalize" follow-up is suppressed).
// RUN: poptorch-opt %s -split-input-file -verify-diagnostics --convert-poptorch-to-linalg

func.func @conv_unsigned(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xui8> {
  // expected-error @+1 {{convolution of element type 'ui8' is not supported; use a float or signed integer}}
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xui8>
  return %0 : tensor<1x4x6x6xui8>
}

// -----

func.func @adaptive_avg_int(%x: tensor<1x3x7x7xi64>) -> tensor<1x3x3x3xi64> {
  // expected-error @+1 {{adaptive average pooling of element type 'i64' is not supported; use a float type}}
  %0 = poptorch.adaptive_avg_pool2d %x {output_size = array<i64: 3, 3>} : tensor<1x3x7x7xi64> -> tensor<1x3x3x3xi64>
  return %0 : tensor<1x3x3x3xi64>
}

// -----

func.func @avg_pool_bool(%x: tensor<1x4x4xi1>) -> tensor<1x2x2xi1> {
  // expected-error @+1 {{average pooling of element type 'i1' is not supported; use a float or signed integer}}
  %0 = poptorch.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<1x4x4xi1> -> tensor<1x2x2xi1>
  return %0 : tensor<1x2x2xi1>
}

// -----

func.func @avg_pool_divisor_zero(%x: tensor<1x4x4xf32>) -> tensor<1x2x2xf32> {
  // expected-error @+1 {{divisor_override must be non-zero}}
  %0 = poptorch.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, divisor_override = 0 : i64} : tensor<1x4x4xf32> -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----

func.func @dropout_training(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{in training mode is not supported (poptorch compiles inference only); call model.eval() before compiling}}
  %0 = poptorch.dropout %x {p = 0.5 : f64, train = true} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @exp_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{is only defined for floating-point tensors, got 'i32'; cast the operands to a float type first}}
  %0 = poptorch.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @mean_int(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{mean of integer type 'i64' is not defined; cast to a float type first}}
  %0 = poptorch.reduce_mean %x {dims = array<i64: 1>} : tensor<2x3xi64> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @sum_bool(%x: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{sum of booleans must be computed in an integer type; cast the input to int64 first}}
  %0 = poptorch.reduce_sum %x {dims = array<i64: 1>} : tensor<2x3xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @matmul_bool(%a: tensor<2x3xi1>, %b: tensor<3x2xi1>) -> tensor<2x2xi1> {
  // expected-error @+1 {{element type 'i1' is not supported; cast to a float or signed integer type}}
  %0 = poptorch.matmul %a, %b : (tensor<2x3xi1>, tensor<3x2xi1>) -> tensor<2x2xi1>
  return %0 : tensor<2x2xi1>
}

// -----

func.func @bitwise_not_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is only defined for integer and bool tensors, got 'f32'}}
  %0 = poptorch.bitwise_not %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
