// convert-poptorch-to-linalg for N-d convolution (1-D as 2-D, grouped 3-D as
// a generic, transposed as a regular convolution of the zero-interleaved
// input) and the windowed reductions of the pools.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// 1-D is 2-D with a unit height: an im2col matmul whose 8 columns are
// padded to 16 (zeros), dropped again from the result. The im2col is one
// loop over the 3 kernel offsets t = (i, j), each a strided window of the
// input transposed into its row block of col.
// CHECK-LABEL: func.func @conv1d
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<1x3x10xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x3x8xf32>) outs(%{{.*}} : tensor<1x3x8xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<3x1x3x16xf32>
// CHECK: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[THREE]] step %{{.*}} iter_args(%[[COL:.*]] = %[[EMPTY]]) -> (tensor<3x1x3x16xf32>)
// CHECK: %[[I:.*]] = arith.divui %[[T]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %[[I]], %[[J]]] [1, 3, 1, 8] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[COL]][0, %[[I]], %[[J]], 0] [3, 1, 1, 8] [1, 1, 1, 1]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x3x1x8xf32>) outs(%{{.*}} : tensor<3x1x1x8xf32>) permutation = [1, 0, 2, 3]
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %{{.*}} into %[[COL]][0, %[[I]], %[[J]], 0] [3, 1, 1, 8] [1, 1, 1, 1]
// CHECK: scf.yield %[[NEXT]]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : tensor<3x1x3x8xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x9xf32>, tensor<9x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: tensor.extract_slice %[[M]][0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// CHECK: tensor.collapse_shape %{{.*}} : tensor<1x4x1x8xf32> into tensor<1x4x8xf32>
func.func @conv1d(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// f16 accumulates in f32; groups split the channels.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d6, d3 + d7, d4 + d8, d5 + d9)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d1, d2, d6, d7, d8, d9)>
// CHECK-LABEL: func.func @conv3d_grouped
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x2x2x4x4x4xf32>, tensor<2x2x2x2x2x2xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @conv3d_grouped(%x: tensor<1x4x4x4x4xf16>, %w: tensor<4x2x2x2x2xf16>) -> tensor<1x4x3x3x3xf16> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, groups = 2 : i64} : (tensor<1x4x4x4x4xf16>, tensor<4x2x2x2x2xf16>) -> tensor<1x4x3x3x3xf16>
  return %0 : tensor<1x4x3x3x3xf16>
}

// -----

// Stride 2 inserts one zero between inputs; padding 1 of a 3-wide kernel
// leaves 1 on each side, output_padding adds 1 at the end. The weight is
// flipped and its channels swapped.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: %[[W:.*]] = linalg.generic
// CHECK: arith.subi
// CHECK: tensor.extract
// CHECK: %[[WT:.*]] = tensor.collapse_shape %[[W]] {{.*}} into tensor<2x3x3x3xf32>
// CHECK: %[[X:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
// CHECK: tensor.extract_slice %[[X]][0, 0, %{{.*}}, %{{.*}}] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[WT]] {{.*}} into tensor<2x27xf32>
// CHECK: linalg.matmul ins(%[[WM]], %{{.*}} : tensor<2x27xf32>, tensor<27x64xf32>)
func.func @conv_transpose(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x8x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, transposed = true, output_padding = array<i64: 1>} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

// The indices are used: one elementwise op over the window taps with two
// results; a tap that some output reads in the padding is taken only where it
// is valid (here the first one, w >= 0, and the last, w < 7); the flat index
// is h * W + w; the first valid tap is always taken (index still -1).
// CHECK-LABEL: func.func @max_pool_indices
// CHECK: %[[P:.*]] = linalg.fill {{.*}} -> tensor<1x1x4x9xf32>
// CHECK: %[[T0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 1, 2]
// CHECK: %[[T1:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 1] [1, 1, 4, 4] [1, 1, 1, 2]
// CHECK: %[[T2:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 2] [1, 1, 4, 4] [1, 1, 1, 2]
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[T0]], %[[T1]], %[[T2]] : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xi64>)
// CHECK: linalg.index 3 : index
// CHECK: %[[W0:.*]] = arith.addi %{{.*}}, %c-1 : index
// CHECK: arith.cmpi sge, %[[W0]], %{{.*}} : index
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ogt
// CHECK: %[[W2:.*]] = arith.addi %{{.*}}, %c1{{.*}} : index
// CHECK: arith.cmpi slt, %[[W2]], %c7{{.*}} : index
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, i64
func.func @max_pool_indices(%x: tensor<1x4x7xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x4xi64>) {
  %0, %1 = poptorch.max_pool2d %x {kernel_size = array<i64: 1, 3>, stride = array<i64: 1, 2>, padding = array<i64: 0, 1>, dilation = array<i64: 1, 1>} : tensor<1x4x7xf32> -> tensor<1x4x4xf32>, tensor<1x4x4xi64>
  return %0, %1 : tensor<1x4x4xf32>, tensor<1x4x4xi64>
}

// -----

// bf16 taps are compared in f32 (LLVM has no bf16 comparison on hosts where
// bf16 is a native type) and the maximum rounded back, both exactly.
// CHECK-LABEL: func.func @max_pool_indices_bf16
// CHECK: ^bb0(%[[A:[^:]*]]: bf16, %{{[^:]*}}: bf16, %{{[^:]*}}: bf16, %{{[^:]*}}: bf16, %{{[^:]*}}: i64):
// CHECK-NOT: arith.cmpf {{.*}} : bf16
// CHECK: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK: arith.cmpf ogt, %[[AF]], %{{.*}} : f32
// CHECK-NOT: arith.cmpf {{.*}} : bf16
// CHECK: %[[M:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.yield %[[M]], %{{.*}} : bf16, i64
func.func @max_pool_indices_bf16(%x: tensor<1x4x7xbf16>) -> (tensor<1x4x4xbf16>, tensor<1x4x4xi64>) {
  %0, %1 = poptorch.max_pool2d %x {kernel_size = array<i64: 1, 3>, stride = array<i64: 1, 2>, padding = array<i64: 0, 1>, dilation = array<i64: 1, 1>} : tensor<1x4x7xbf16> -> tensor<1x4x4xbf16>, tensor<1x4x4xi64>
  return %0, %1 : tensor<1x4x4xbf16>, tensor<1x4x4xi64>
}

// -----

// A window of more than 49 taps with its indices: a windowed reduction with two
// results; padded window elements are masked, the flat index is h * W + w.
// CHECK-DAG: #[[$PIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-LABEL: func.func @max_pool_indices_large_window
// CHECK: linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<1x2x2x2xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[$PIN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-DAG: arith.cmpf ogt
// CHECK-DAG: arith.cmpf uno
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
func.func @max_pool_indices_large_window(%x: tensor<1x2x9x9xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  %0, %1 = poptorch.max_pool2d %x {kernel_size = array<i64: 8, 8>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<1x2x9x9xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
  return %0, %1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

// Window o of 7 -> 3 is [floor(7o/3), ceil(7(o+1)/3)): [0,3), [2,5), [4,7);
// the divisor is 2 (rows) times 3.
// CHECK: affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2 + d3, (d2 * 7) floordiv 3 + d4)>
// CHECK-LABEL: func.func @adaptive_avg
// CHECK: tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic
// CHECK: arith.divui
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: arith.constant 6.000000e+00 : f32
// CHECK: arith.divf
func.func @adaptive_avg(%x: tensor<2x2x7xf32>) -> tensor<2x1x3xf32> {
  %0 = poptorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 3>} : tensor<2x2x7xf32> -> tensor<2x1x3xf32>
  return %0 : tensor<2x1x3xf32>
}

// -----

// A channels-last convolution (ConvolutionOp::isChannelsLastDirect): the
// input is written by an elementwise generic into the interior of a zero
// padded (N, Hp, Wp, C) tensor, linalg.conv_2d_nhwc_hwcf reads the (kH, kW,
// I, O) weight that the permute back came from, and the result goes back to
// NCHW.
// CHECK-LABEL: func.func @conv_channels_last
// CHECK: %[[PAD:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x18x18x8xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x8x16x16xf32>) outs(%[[IN]] : tensor<1x16x16x8xf32>)
// CHECK: %[[X:.*]] = tensor.insert_slice %[[T]] into %[[PAD]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[BIAS:.*]] = linalg.broadcast ins(%arg2 : tensor<16xf32>) outs(%{{.*}} : tensor<1x16x16x16xf32>) dimensions = [0, 1, 2]
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[X]], %arg1 : tensor<1x18x18x8xf32>, tensor<3x3x8x16xf32>) outs(%[[BIAS]] : tensor<1x16x16x16xf32>)
// CHECK: linalg.transpose ins(%[[C]] : tensor<1x16x16x16xf32>) outs(%{{.*}} : tensor<1x16x16x16xf32>) permutation = [0, 3, 1, 2]
func.func @conv_channels_last(%x: tensor<1x8x16x16xf32>, %w: tensor<3x3x8x16xf32>, %b: tensor<16xf32>) -> tensor<1x16x16x16xf32> {
  %0 = poptorch.permute %w {dims = array<i64: 3, 2, 0, 1>} : tensor<3x3x8x16xf32> -> tensor<16x8x3x3xf32>
  %1 = poptorch.convolution %x, %0 bias %b {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  return %1 : tensor<1x16x16x16xf32>
}

// -----

// bf16: the channels-last copy and the weight stay bf16 and the convolution
// extends them into its f32 accumulator (the bias widened), rounded once.
// CHECK-LABEL: func.func @conv_channels_last_bf16
// CHECK: linalg.fill ins(%{{.*}} : bf16) outs(%{{.*}} : tensor<1x18x18x8xbf16>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %arg1 : tensor<1x18x18x8xbf16>, tensor<3x3x8x16xbf16>) outs(%{{.*}} : tensor<1x16x16x16xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @conv_channels_last_bf16(%x: tensor<1x8x16x16xbf16>, %w: tensor<3x3x8x16xbf16>, %b: tensor<16xbf16>) -> tensor<1x16x16x16xbf16> {
  %0 = poptorch.permute %w {dims = array<i64: 3, 2, 0, 1>} : tensor<3x3x8x16xbf16> -> tensor<16x8x3x3xbf16>
  %1 = poptorch.convolution %x, %0 bias %b {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x16x16xbf16>, tensor<16x8x3x3xbf16>, tensor<16xbf16>) -> tensor<1x16x16x16xbf16>
  return %1 : tensor<1x16x16x16xbf16>
}

// -----

// A bf16 im2col convolution (too few output pixels for channels-last) copies
// the windows of the bf16 input into bf16 columns for the matmul.
// CHECK-LABEL: func.func @conv_im2col_bf16
// CHECK: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x8x4x4xbf16>) outs(%{{.*}} : tensor<8x1x4x4xbf16>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x72xbf16>, tensor<72x16xbf16>) outs(%{{.*}} : tensor<16x16xf32>)
func.func @conv_im2col_bf16(%x: tensor<1x8x4x4xbf16>, %w: tensor<16x8x3x3xbf16>) -> tensor<1x16x4x4xbf16> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x4x4xbf16>, tensor<16x8x3x3xbf16>) -> tensor<1x16x4x4xbf16>
  return %0 : tensor<1x16x4x4xbf16>
}

// -----

// Depthwise (groups = channels): one elementwise generic over the output
// whose body is the sum of the 2x2 taps (windows x per-channel weights),
// started from the bias (or the first product). Its init is never read, so
// elementwise fusion does not keep the convolution's own result beside the
// fused one (a zero fill, a copy and a dead store of the activation).
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x3x4x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<1x3x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[X0:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[W0:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32):
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[X0]], %[[W0]] : f32
// CHECK-NEXT: %[[P1:.*]] = arith.mulf
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK-NEXT: %[[P2:.*]] = arith.mulf
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[P2]] : f32
// CHECK-NEXT: %[[P3:.*]] = arith.mulf
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[P3]] : f32
// CHECK-NEXT: linalg.yield %[[S3]] : f32
// CHECK-LABEL: func.func @depthwise_bias
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.generic {{.*}} ins({{.*}} : {{.*}}tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK-NEXT: ^bb0({{.*}}%[[B:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK-NEXT: %[[P0:.*]] = arith.mulf
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[B]], %[[P0]] : f32
// CHECK-NEXT: %[[P1:.*]] = arith.mulf
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[P1]] : f32
// CHECK-NEXT: %[[P2:.*]] = arith.mulf
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[P2]] : f32
// CHECK-NEXT: %[[P3:.*]] = arith.mulf
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[P3]] : f32
// CHECK-NEXT: linalg.yield %[[S3]] : f32
func.func @depthwise(%x: tensor<1x3x5x5xf32>, %w: tensor<3x1x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x3x5x5xf32>, tensor<3x1x2x2xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
func.func @depthwise_bias(%x: tensor<1x3x5x5xf32>, %w: tensor<3x1x2x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = poptorch.convolution %x, %w bias %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x3x5x5xf32>, tensor<3x1x2x2xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// A 1x1 stride-1 convolution is one contraction of the weight with every
// image's (C, H*W) plane into the (N, F, H*W) result: no im2col copy, no
// column padding (7x7 = 49 columns stay 49) and no transpose of the result.
// One image is a plain matmul.
// CHECK-DAG: #[[W_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[X_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[R_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<6x4x1x1xf32> into tensor<6x4xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<2x4x3x5xf32> into tensor<2x4x15xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<6xf32>) outs(%{{.*}} : tensor<2x6x15xf32>) dimensions = [0, 2]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[W_MAP]], #[[X_MAP]], #[[R_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[X]] : tensor<6x4xf32>, tensor<2x4x15xf32>) outs(%[[B]] : tensor<2x6x15xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 6, 3, 5]
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @pointwise_one_image
// CHECK: %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<6x4xf32>, tensor<4x49xf32>) outs(%{{.*}} : tensor<6x49xf32>)
// CHECK-NEXT: tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 6, 7, 7]
// CHECK-LABEL: func.func @pointwise_bf16
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
func.func @pointwise(%x: tensor<2x4x3x5xf32>, %w: tensor<6x4x1x1xf32>, %b: tensor<6xf32>) -> tensor<2x6x3x5xf32> {
  %0 = poptorch.convolution %x, %w bias %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x4x3x5xf32>, tensor<6x4x1x1xf32>, tensor<6xf32>) -> tensor<2x6x3x5xf32>
  return %0 : tensor<2x6x3x5xf32>
}
func.func @pointwise_one_image(%x: tensor<1x4x7x7xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<1x6x7x7xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x7x7xf32>, tensor<6x4x1x1xf32>) -> tensor<1x6x7x7xf32>
  return %0 : tensor<1x6x7x7xf32>
}
func.func @pointwise_bf16(%x: tensor<2x4x3x5xbf16>, %w: tensor<6x4x1x1xbf16>) -> tensor<2x6x3x5xbf16> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x4x3x5xbf16>, tensor<6x4x1x1xbf16>) -> tensor<2x6x3x5xbf16>
  return %0 : tensor<2x6x3x5xbf16>
}

// -----

// im2col of floats: the input zero-padded, then one copy of windows through an
// affine map (no bounds checks), collapsed to (N, C*KH*KW, OH*OW).
// CHECK-LABEL: func.func @im2col_windows
// CHECK: linalg.generic {indexing_maps = [#[[READ:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: tensor<2x3x11x12xf32>
// CHECK-NOT: tensor.extract
// CHECK: tensor.collapse_shape {{.*}} tensor<2x3x2x3x5x4xf32> into tensor<2x18x20xf32>
func.func @im2col_windows(%x: tensor<2x3x9x8xf32>) -> tensor<2x18x20xf32> {
  %0 = poptorch.im2col %x {kernel_size = array<i64: 2, 3>, dilation = array<i64: 2, 1>, padding = array<i64: 1, 2>, stride = array<i64: 2, 3>} : tensor<2x3x9x8xf32> -> tensor<2x18x20xf32>
  return %0 : tensor<2x18x20xf32>
}
