// convert-poptorch-to-linalg: contractions, convolutions, pools and
// reductions become the named linalg ops that poptorch-tile-and-vectorize
// matches.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// -----

// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<3x5xf32>)
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = poptorch.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// bfloat16 products accumulate in float32 and round once (like eager).
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xbf16>, tensor<4x5xbf16>) outs(%[[F]] : tensor<3x5xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @matmul_bf16(%a: tensor<3x4xbf16>, %b: tensor<4x5xbf16>) -> tensor<3x5xbf16> {
  %0 = poptorch.matmul %a, %b : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  return %0 : tensor<3x5xbf16>
}

// -----

// Batched activations times a matrix: one matmul over the flattened rows.
// CHECK-LABEL: func.func @matmul_batched_weight
// CHECK: %[[L:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[L]], %{{.*}} : tensor<6x4xf32>, tensor<4x5xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 5]
func.func @matmul_batched_weight(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = poptorch.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_broadcast_batch
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x5x3x4xf32>) dimensions = [1]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x5x3x4xf32> into tensor<10x3x4xf32>
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<5x4x6xf32>) outs(%{{.*}} : tensor<2x5x4x6xf32>) dimensions = [0]
// CHECK: %[[B:.*]] = linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<10x3x4xf32>, tensor<10x4x6xf32>) outs(%{{.*}} : tensor<10x3x6xf32>)
// CHECK: tensor.expand_shape %[[B]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 5, 3, 6]
func.func @matmul_broadcast_batch(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = poptorch.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_dot
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x4xf32>, tensor<4x1xf32>) outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: tensor.collapse_shape %[[M]] [] : tensor<1x1xf32> into tensor<f32>
func.func @matmul_dot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = poptorch.matmul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @matmul_vec
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<4x1xf32>)
// CHECK: tensor.collapse_shape %[[M]] {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
func.func @matmul_vec(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = poptorch.matmul %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A convolution is a matmul over im2col: the padded input (a fill and a
// copy into its interior), a loop over the kernel offsets that transposes
// one strided window per offset into its rows of the (C, KH, KW, N*OH*OW)
// column matrix, then weight (F, C*KH*KW) x columns, accumulated into the
// broadcast bias.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<1x3x10x10xf32>
// CHECK: %[[I:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: %[[CP:.*]] = linalg.copy ins(%[[X]] : tensor<1x3x8x8xf32>) outs(%[[I]] : tensor<1x3x8x8xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[CP]] into %[[F]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<3x3x3x16xf32>
// CHECK: %[[NINE:.*]] = arith.constant 9 : index
// CHECK: %[[LOOP:.*]] = scf.for %[[T:.*]] = %{{.*}} to %[[NINE]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[EMPTY]]) -> (tensor<3x3x3x16xf32>)
// CHECK: %[[KI:.*]] = arith.divui %[[T]], %[[THREE:.*]] : index
// CHECK: %[[KJ:.*]] = arith.remui %[[T]], %[[THREE]] : index
// CHECK: tensor.extract_slice %[[P]][0, 0, %[[KI]], %[[KJ]]] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x10x10xf32> to tensor<1x3x4x4xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x3x4x4xf32>) outs(%{{.*}} : tensor<3x1x4x4xf32>) permutation = [1, 0, 2, 3]
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][0, %[[KI]], %[[KJ]], 0] [3, 1, 1, 16] [1, 1, 1, 1]
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[LOOP]] {{\[\[}}0, 1, 2], [3]] : tensor<3x3x3x16xf32> into tensor<27x16xf32>
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%{{.*}} : tensor<4x16xf32>) dimensions = [1]
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[WM]], %[[COL]] : tensor<4x27xf32>, tensor<27x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 4, 4]
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = poptorch.convolution %x, %w bias %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A depthwise convolution is one elementwise generic over the output: the
// KH*KW input windows and per-channel weights are its operands.
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv_groups
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 2, 2] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x6x6xf32> to tensor<1x4x4x4xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 2, 2] [4, 1, 1] [1, 1, 1] : tensor<4x3x3xf32> to tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$ID4]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-9: arith.mulf
// CHECK: linalg.yield
func.func @conv_groups(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, groups = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// -inf padding; ceil_mode windows get extra high padding. A window of at
// most 25 elements is an elementwise op over its strided taps (one per kernel
// offset, row-major), whose NaN-propagating maximum starts from the first tap:
// the init is neither filled nor read.
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PF:.*]] = linalg.fill ins(%[[NINF]] : f32) {{.*}} -> tensor<1x2x9x9xf32>
// CHECK: %[[P:.*]] = tensor.insert_slice %{{.*}} into %[[PF]][0, 0, 1, 1] [1, 2, 7, 7] [1, 1, 1, 1]
// CHECK: %[[T0:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[P]][0, 0, 0, 1] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[P]][0, 0, 2, 1] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK: %[[T8:.*]] = tensor.extract_slice %[[P]][0, 0, 2, 2] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[T0]], {{.*}}, %[[T8]] : {{.*}}) outs(%[[E]] : tensor<1x2x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32,
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-COUNT-7: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: pooling
func.func @max_pool(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> {
  %0, %i = poptorch.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<1x2x7x7xf32> -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Integer maxima are signed; dilation spaces the taps.
// CHECK-LABEL: func.func @max_pool_int_dilated
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 2] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 2, 0] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 2, 2] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: linalg.generic
// CHECK-COUNT-3: arith.maxsi
// CHECK-NEXT: linalg.yield
func.func @max_pool_int_dilated(%x: tensor<1x2x4x4xi32>) -> tensor<1x2x2x2xi32> {
  %0, %i = poptorch.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>} : tensor<1x2x4x4xi32> -> tensor<1x2x2x2xi32>, tensor<1x2x2x2xi64>
  return %0 : tensor<1x2x2x2xi32>
}

// -----

// Windows of more than 49 elements keep the named pool (one operand per
// window element would not stay in the vector registers).
// CHECK-LABEL: func.func @max_pool_large_window
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %[[WIN]] : tensor<1x2x10x10xf32>, tensor<8x8xf32>) outs(%[[F]] : tensor<1x2x2x2xf32>)
func.func @max_pool_large_window(%x: tensor<1x2x10x10xf32>) -> tensor<1x2x2x2xf32> {
  %0, %i = poptorch.max_pool2d %x {kernel_size = array<i64: 8, 8>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<1x2x10x10xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// count_include_pad = false: the divisor counts the window inside the input
// only. The sum is an elementwise op over the taps, as the max pool's.
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$HW:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @avg_pool
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 2, 7, 7] : tensor<2x7x7xf32> into tensor<1x2x7x7xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins({{.*}} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
// CHECK-COUNT-8: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{.*}} : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
// CHECK: %[[D:.*]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID3]], #[[$HW]], #[[$ID3]]], {{.*}}} ins(%[[C]], %[[D]] : tensor<2x4x4xf32>, tensor<4x4xf32>)
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<2x7x7xf32>) -> tensor<2x4x4xf32> {
  %0 = poptorch.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, count_include_pad = false} : tensor<2x7x7xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @adaptive_avg_pool
// CHECK: linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<8> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8xf32>, tensor<8x8xf32>)
// CHECK: arith.constant 6.400000e+01 : f32
func.func @adaptive_avg_pool(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x1x1xf32> {
  %0 = poptorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum_keepdim
// CHECK: %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [0, 2]
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[R]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
func.func @reduce_sum_keepdim(%x: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
  %0 = poptorch.reduce_sum %x {dims = array<i64: 2, 0>, keepdim = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// f16 sums accumulate in f32.
// CHECK-LABEL: func.func @reduce_sum_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.reduce ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @reduce_sum_f16(%x: tensor<2x3xf16>) -> tensor<2xf16> {
  %0 = poptorch.reduce_sum %x {dims = array<i64: 1>} : tensor<2x3xf16> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// CHECK-LABEL: func.func @reduce_max_int
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32)
// CHECK: linalg.reduce
// CHECK: arith.maxsi
func.func @reduce_max_int(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %0 = poptorch.reduce_max %x {dims = array<i64: 1>} : tensor<2x3xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
