// The convolution strategies end to end through the codegen strategy:
// a regular convolution is im2col (vectorized strided copies) + the
// register-blocked matmul; a depthwise one is an elementwise op over the
// output, vectorized along its width.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg --canonicalize --cse --poptorch-fuse-elementwise --poptorch-tile-and-vectorize --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @conv3x3
// CHECK-NOT: linalg.
// Padding: a vectorized fill and copy.
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x10xf32>, tensor<1x16x10x10xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x8xf32>, tensor<1x16x8x8xf32>
// A loop over the nine kernel offsets, each a window copy into the (C, KH,
// KW, OH*OW) columns, tiled and vectorized inside the loop.
// CHECK: scf.for {{.*}} = %c0 to %c9 step %c1 {{.*}} -> (tensor<16x3x3x64xf32>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x8xf32>, tensor<16x1x8x8xf32>
// CHECK-NOT: vector.transfer_write {{.*}} : vector<1x1x1x8xf32>, tensor<16x1x8x8xf32>
// The matmul: column blocks outside row blocks, 8x32 accumulators over k.
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for {{.*}} = %c0 to %c32 step %c8
// CHECK: scf.for {{.*}} = %c0 to %c144 step %c8 {{.*}} -> (vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv3x3(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  return %0 : tensor<1x32x8x8xf32>
}

// -----

// Depthwise with channels in no whole blocks of 8 (12): (N, C, H, W),
// vectorized along the output width.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} = %c0 to %c12 step %c1
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1
// CHECK-COUNT-9: arith.mulf {{.*}} : vector<1x1x1x8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x8xf32>, tensor<1x12x8x8xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @depthwise(%x: tensor<1x12x8x8xf32>, %w: tensor<12x1x3x3xf32>) -> tensor<1x12x8x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, groups = 12 : i64} : (tensor<1x12x8x8xf32>, tensor<12x1x3x3xf32>) -> tensor<1x12x8x8xf32>
  return %0 : tensor<1x12x8x8xf32>
}

// -----

// Depthwise with channels in whole blocks of 8 and a window of at most 16
// taps: channels-last, vectorized along the channels: the input copied
// into a padded (N, Hp, Wp, C), the weights transposed to (KH, KW, C), one
// vector of 32 channels per output pixel, nine taps each.
// CHECK-LABEL: func.func @depthwise_channels_last
// CHECK-NOT: linalg.
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x32xf32>, tensor<1x10x10x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x32xf32>, tensor<1x3x3x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1
// CHECK-COUNT-9: arith.mulf {{.*}} : vector<1x1x1x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x32xf32>, tensor<1x8x8x32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @depthwise_channels_last(%x: tensor<1x32x8x8xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, groups = 32 : i64} : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32>
  return %0 : tensor<1x32x8x8xf32>
}

// -----

// A channels-last convolution (16 input channels, 256 output pixels): the
// input goes to a padded (N, Hp, Wp, C) tensor and linalg.conv_2d_nhwc_hwcf
// is tiled with the blocks of 32 output channels outermost, then output rows
// and blocks of 8 pixels; the window and the blocks of 8 input channels are
// loops that carry the 8x32 accumulators in registers. Each block's weights
// are packed (3 x 3 x 16 x 32) before the pixel loops. The output's zero
// fill joins the tiles: the accumulators start from the constant, and no
// pass over the output writes zeros first.
// CHECK-LABEL: func.func @conv_channels_last
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<1x8x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c32 {{.*}} -> (tensor<1x16x16x64xf32>)
// CHECK: %[[P:.*]] = scf.for {{.*}} -> (tensor<3x3x16x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c1 {{.*}} -> (tensor<1x16x16x64xf32>)
// CHECK-NEXT: scf.for {{.*}} = %c0 to %c16 step %c8 {{.*}} -> (tensor<1x16x16x64xf32>)
// CHECK-NOT: vector.transfer_read {{.*}} : tensor<1x1x8x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<1x8x32xf32>)
// CHECK-NEXT: scf.for {{.*}} = %c0 to %c3 step %c1 {{.*}} -> (vector<1x8x32xf32>)
// CHECK-NEXT: scf.for {{.*}} = %c0 to %c16 step %c8 {{.*}} -> (vector<1x8x32xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<1x18x18x16xf32>, vector<1x8x8xf32>
// CHECK: vector.transfer_read %[[P]]{{.*}} : tensor<3x3x16x32xf32>, vector<1x8x32xf32>
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write {{.*}} : vector<1x8x32xf32>, tensor<1x1x8x32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_channels_last(%x: tensor<1x16x16x16xf32>, %w: tensor<64x16x3x3xf32>) -> tensor<1x64x16x16xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x16x16x16xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x16x16xf32>
  return %0 : tensor<1x64x16x16xf32>
}

// -----

// 13 output pixels a row and 48 output channels: the blocks of 8 pixels and
// 32 channels leave partial blocks of 5 and 16, peeled into loops of their
// own with static shapes, all vectorized.
// CHECK-LABEL: func.func @conv_channels_last_partial
// CHECK-DAG: scf.for {{.*}} -> (vector<1x8x32xf32>)
// CHECK-DAG: scf.for {{.*}} -> (vector<1x5x32xf32>)
// CHECK-DAG: scf.for {{.*}} -> (vector<1x8x16xf32>)
// CHECK-DAG: scf.for {{.*}} -> (vector<1x5x16xf32>)
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_channels_last_partial(%x: tensor<1x8x13x13xf32>, %w: tensor<48x8x3x3xf32>) -> tensor<1x48x13x13xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x13x13xf32>, tensor<48x8x3x3xf32>) -> tensor<1x48x13x13xf32>
  return %0 : tensor<1x48x13x13xf32>
}
