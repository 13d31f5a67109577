// Round trip of every poptorch op: print, parse again, print the same.
// RUN: poptorch-opt %s | poptorch-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
// CHECK: poptorch.neg %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.abs %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.relu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.exp %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.log %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.sqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.rsqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.reciprocal %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.erf %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.tanh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.sigmoid %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.silu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.gelu %{{.*}} {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.add %{{.*}}, %{{.*}} {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.sub %{{.*}}, %{{.*}} {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.mul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.div %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.maximum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.minimum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %neg = poptorch.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %abs = poptorch.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %relu = poptorch.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %exp = poptorch.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log = poptorch.log %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sqrt = poptorch.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rsqrt = poptorch.rsqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %reciprocal = poptorch.reciprocal %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %erf = poptorch.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %tanh = poptorch.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sigmoid = poptorch.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %silu = poptorch.silu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %gelu = poptorch.gelu %x {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %add = poptorch.add %x, %y {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = poptorch.sub %x, %y {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %mul = poptorch.mul %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %div = poptorch.div %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %maximum = poptorch.maximum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %minimum = poptorch.minimum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %pow = poptorch.pow %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %pow : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @misc
// CHECK: poptorch.constant dense<1.000000e+00> : tensor<2x3xf32> : tensor<2x3xf32>
// CHECK: poptorch.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi64>
// CHECK: poptorch.dropout %{{.*}} {p = 1.000000e-01 : f64, train = false} : tensor<2x3xf32> -> tensor<2x3xf32>
func.func @misc(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) {
  %c = poptorch.constant dense<1.0> : tensor<2x3xf32> : tensor<2x3xf32>
  %i = poptorch.cast %x : tensor<2x3xf32> -> tensor<2x3xi64>
  %d = poptorch.dropout %x {p = 0.1 : f64, train = false} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %c, %i, %d : tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @linear_algebra
// CHECK: poptorch.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: poptorch.linear %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
// CHECK: poptorch.linear %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
// CHECK: poptorch.addmm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f64, beta = 2.000000e+00 : f64} : (tensor<5xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK: poptorch.sdpa %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>) -> tensor<2x5x3xf32>
// CHECK: poptorch.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {is_causal = true, scale = 2.500000e-01 : f64} : (tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<5x6xi1>) -> tensor<2x5x3xf32>
func.func @linear_algebra(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %wt: tensor<5x4xf32>, %b: tensor<5xf32>,
                          %m: tensor<3x4xf32>, %q: tensor<2x5x4xf32>, %k: tensor<2x6x4xf32>,
                          %v: tensor<2x6x3xf32>, %mask: tensor<5x6xi1>) {
  %0 = poptorch.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %1 = poptorch.linear %x, %wt bias %b : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %2 = poptorch.linear %x, %wt : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %3 = poptorch.addmm %b, %m, %w {alpha = 0.5 : f64, beta = 2.0 : f64} : (tensor<5xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %4 = poptorch.sdpa %q, %k, %v : (tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>) -> tensor<2x5x3xf32>
  %5 = poptorch.sdpa %q, %k, %v mask %mask {is_causal = true, scale = 0.25 : f64} : (tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<5x6xi1>) -> tensor<2x5x3xf32>
  return
}

// CHECK-LABEL: func.func @conv_pool
// CHECK: poptorch.convolution %{{.*}}, %{{.*}} bias %{{.*}} {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
// CHECK: poptorch.max_pool2d %{{.*}} {ceil_mode = true, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x5x5xf32>, tensor<1x4x5x5xi64>
// CHECK: poptorch.avg_pool2d %{{.*}} {count_include_pad = false, divisor_override = 3 : i64, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
// CHECK: poptorch.adaptive_avg_pool2d %{{.*}} {output_size = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
// CHECK: poptorch.max_pool3d %{{.*}} : tensor<1x4x8x8xf32> -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>
// CHECK: poptorch.avg_pool3d %{{.*}} : tensor<1x4x8x8xf32> -> tensor<1x2x4x4xf32>
// CHECK: poptorch.adaptive_avg_pool3d %{{.*}} {output_size = array<i64: 3, 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x3x3x3xf32>
// CHECK: poptorch.adaptive_max_pool2d %{{.*}} {output_size = array<i64: 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x4x3x3xf32>, tensor<1x4x3x3xi64>
func.func @conv_pool(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %y: tensor<4x8x8xf32>) {
  %0 = poptorch.convolution %x, %w bias %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %1:2 = poptorch.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<1x4x8x8xf32> -> tensor<1x4x5x5xf32>, tensor<1x4x5x5xi64>
  %2 = poptorch.avg_pool2d %y {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, count_include_pad = false, divisor_override = 3 : i64} : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  %3 = poptorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %4:2 = poptorch.max_pool3d %x {kernel_size = array<i64: 2>, stride = array<i64: 2>, padding = array<i64: 0>, dilation = array<i64: 1>} : tensor<1x4x8x8xf32> -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>
  %5 = poptorch.avg_pool3d %x {kernel_size = array<i64: 2>, stride = array<i64: 2>, padding = array<i64: 0>} : tensor<1x4x8x8xf32> -> tensor<1x2x4x4xf32>
  %6 = poptorch.adaptive_avg_pool3d %x {output_size = array<i64: 3, 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x3x3x3xf32>
  %7:2 = poptorch.adaptive_max_pool2d %x {output_size = array<i64: 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x4x3x3xf32>, tensor<1x4x3x3xi64>
  return
}

// CHECK-LABEL: func.func @norms
// CHECK: poptorch.batch_norm %{{.*}} weight %{{.*}} bias %{{.*}} mean %{{.*}} var %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK: poptorch.batch_norm %{{.*}} mean %{{.*}} var %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK: poptorch.layer_norm %{{.*}} weight %{{.*}} {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 4>} : (tensor<2x3x4x4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
// CHECK: poptorch.softmax %{{.*}} {dim = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
// CHECK: poptorch.log_softmax %{{.*}} {dim = 3 : i64} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
func.func @norms(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %d: tensor<4xf32>) {
  %0 = poptorch.batch_norm %x weight %c bias %c mean %c var %c {eps = 1.0e-5 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %1 = poptorch.batch_norm %x mean %c var %c {eps = 1.0e-5 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %2 = poptorch.layer_norm %x weight %d {normalized_shape = array<i64: 4>, eps = 1.0e-5 : f64} : (tensor<2x3x4x4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  %3 = poptorch.softmax %x {dim = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %4 = poptorch.log_softmax %x {dim = 3 : i64} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 0, 2>, keepdim = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK: poptorch.reduce_mean %{{.*}} {dims = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK: poptorch.reduce_max %{{.*}} {dims = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
func.func @reductions(%x: tensor<2x3x4xf32>) {
  %0 = poptorch.reduce_sum %x {dims = array<i64: 0, 2>, keepdim = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %1 = poptorch.reduce_mean %x {dims = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %2 = poptorch.reduce_max %x {dims = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @data_movement
// CHECK: poptorch.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: poptorch.permute %{{.*}} {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK: poptorch.transpose %{{.*}} {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK: poptorch.expand %{{.*}} : tensor<3x1xf32> -> tensor<2x3x4xf32>
// CHECK: poptorch.slice %{{.*}} {dim = 2 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
// CHECK: poptorch.slice_insert %{{.*}} into %{{.*}} {dim = 2 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x3x2xf32> into tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: poptorch.select %{{.*}} {dim = 1 : i64, index = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK: poptorch.cat %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4x3x4xf32>
// CHECK: poptorch.embedding %{{.*}}, %{{.*}} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<3x1xf32>, %w: tensor<10x4xf32>, %i: tensor<2x3xi64>) {
  %0 = poptorch.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = poptorch.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = poptorch.transpose %x {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %3 = poptorch.expand %y : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %4 = poptorch.slice %x {dim = 2 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %s4 = poptorch.slice_insert %4 into %x {dim = 2 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x3x2xf32> into tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %5 = poptorch.select %x {dim = 1 : i64, index = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %6 = poptorch.cat %x, %x {dim = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4x3x4xf32>
  %7 = poptorch.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return
}


// Comparisons and logical ops: operands of one element type, a bool result.
// CHECK-LABEL: func.func @bool_valued
// CHECK: poptorch.eq %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.ne %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.lt %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.le %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.gt %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.ge %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi1>
// CHECK: poptorch.logical_and %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.logical_or %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.logical_xor %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK: poptorch.logical_not %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK: poptorch.bitwise_not %{{.*}} : (tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK: poptorch.bitwise_and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK: poptorch.bitwise_or %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// CHECK: poptorch.bitwise_xor %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
func.func @bool_valued(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x3xi64>, %s: tensor<i64>) -> tensor<2x3xi1> {
  %eq = poptorch.eq %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %ne = poptorch.ne %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %lt = poptorch.lt %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %le = poptorch.le %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %gt = poptorch.gt %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %ge = poptorch.ge %i, %s : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi1>
  %and = poptorch.logical_and %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %or = poptorch.logical_or %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %xor = poptorch.logical_xor %and, %or : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %not = poptorch.logical_not %x : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %bnot = poptorch.bitwise_not %i : (tensor<2x3xi64>) -> tensor<2x3xi64>
  %band = poptorch.bitwise_and %eq, %ne : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %bor = poptorch.bitwise_or %i, %s : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  %bxor = poptorch.bitwise_xor %i, %s : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  return %xor : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @where_clamp
// CHECK: poptorch.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: poptorch.clamp %{{.*}} min %{{.*}} max %{{.*}} : (tensor<2x3xf32>, tensor<f32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.clamp %{{.*}} max %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
func.func @where_clamp(%c: tensor<3xi1>, %x: tensor<2x3xf32>, %s: tensor<f32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %w = poptorch.where %c, %x, %s : (tensor<3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %c1 = poptorch.clamp %w min %s max %y : (tensor<2x3xf32>, tensor<f32>, tensor<3xf32>) -> tensor<2x3xf32>
  %c2 = poptorch.clamp %c1 max %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %c2 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @random
// CHECK: poptorch.rand_uniform %{{.*}} {a = 2.000000e+00 : f64, b = 5.000000e+00 : f64, stream = 0 : i64} : (tensor<2xi64>) -> tensor<4xf32>
// CHECK: poptorch.rand_bernoulli %{{.*}} p %{{.*}} {stream = 1 : i64} : (tensor<2xi64>, tensor<4xf32>) -> tensor<4xf32>
func.func @random(%s: tensor<2xi64>, %p: tensor<4xf32>) {
  %0 = poptorch.rand_uniform %s {a = 2.0 : f64, b = 5.0 : f64, stream = 0 : i64} : (tensor<2xi64>) -> tensor<4xf32>
  %1 = poptorch.rand_bernoulli %s p %p {stream = 1 : i64} : (tensor<2xi64>, tensor<4xf32>) -> tensor<4xf32>
  return
}
