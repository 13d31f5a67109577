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

// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} = %c0 to %c32 step %c1
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1
// CHECK-COUNT-9: arith.mulf {{.*}} : vector<1x1x1x8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1x8xf32>, tensor<1x32x8x8xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @depthwise(%x: tensor<1x32x8x8xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, groups = 32 : i64} : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32>
  return %0 : tensor<1x32x8x8xf32>
}
