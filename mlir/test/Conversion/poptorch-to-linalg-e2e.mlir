// End to end: the model shapes the compiler must handle go through every
// stage of the compile pipeline to the LLVM dialect. The first RUN line stops
// right after convert-poptorch-to-linalg and checks the named ops that
// poptorch-tile-and-vectorize matches; the second checks that the whole
// pipeline produces LLVM.
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --convert-poptorch-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --poptorch-stage-to-linalg --poptorch-stage-tile-and-vectorize --poptorch-stage-bufferize --poptorch-stage-to-llvm | FileCheck %s --check-prefix=LLVM

// LINALG-LABEL: func.func @mlp
// LINALG-NOT: poptorch.
// LINALG: linalg.matmul
// LINALG: arith.maximumf
// LINALG: linalg.matmul
// LINALG: math.exp
// LINALG: math.log
// LLVM-LABEL: llvm.func @mlp
// LLVM-NOT: poptorch.
// LLVM-NOT: linalg.
// LLVM: llvm.intr.fmuladd
// exp on vectors is a polynomial (poptorch-approximate-math), not libm calls.
// LLVM-NOT: llvm.intr.exp
// LLVM: llvm.intr.log
func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>,
               %w2: tensor<10x32xf32>, %b2: tensor<10xf32>) -> tensor<4x10xf32> {
  %h = poptorch.linear %x, %w1 bias %b1 : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %r = poptorch.relu %h : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %o = poptorch.linear %r, %w2 bias %b2 : (tensor<4x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  %s = poptorch.log_softmax %o {dim = 1 : i64} : tensor<4x10xf32> -> tensor<4x10xf32>
  return %s : tensor<4x10xf32>
}

// -----

// LINALG-LABEL: func.func @cnn
// LINALG-NOT: poptorch.
// LINALG: linalg.conv_2d_nhwc_hwcf
// The 2x2 max pool: an elementwise maximum of its four strided taps.
// LINALG: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>)
// LINALG-COUNT-3: arith.maximumf
// LINALG: linalg.pooling_nchw_sum
// LINALG: linalg.matmul
// LLVM-LABEL: llvm.func @cnn
// LLVM-NOT: poptorch.
// LLVM-NOT: linalg.
// (arith-expand writes the NaN-propagating maximum as compares and selects)
// LLVM: llvm.select
// LLVM: llvm.fdiv
func.func @cnn(%x: tensor<2x3x16x16xf32>, %cw: tensor<8x3x3x3xf32>, %cb: tensor<8xf32>,
               %g: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>,
               %fw: tensor<10x8xf32>, %fb: tensor<10xf32>) -> tensor<2x10xf32> {
  %c = poptorch.convolution %x, %cw bias %cb {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %n = poptorch.batch_norm %c weight %g bias %b mean %m var %v {eps = 1.0e-5 : f64}
      : (tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %r = poptorch.relu %n : (tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %p, %pi = poptorch.max_pool2d %r {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : tensor<2x8x16x16xf32> -> tensor<2x8x8x8xf32>, tensor<2x8x8x8xi64>
  %a = poptorch.adaptive_avg_pool2d %p {output_size = array<i64: 1, 1>} : tensor<2x8x8x8xf32> -> tensor<2x8x1x1xf32>
  %f = poptorch.reshape %a : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  %o = poptorch.linear %f, %fw bias %fb : (tensor<2x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  return %o : tensor<2x10xf32>
}

// -----

// A transformer encoder layer (post-norm, 2 heads, GELU feed-forward).
// LINALG-LABEL: func.func @encoder_layer
// LINALG-NOT: poptorch.
// LINALG: linalg.matmul
// LINALG: linalg.batch_matmul
// LINALG: math.exp
// LINALG: linalg.batch_matmul
// LINALG: math.rsqrt
// LINALG: math.erf
// LLVM-LABEL: llvm.func @encoder_layer
// LLVM-NOT: poptorch.
// LLVM-NOT: linalg.
// erf and vector exp are polynomials (poptorch-approximate-math), not libm
// calls.
// LLVM-NOT: llvm.intr.exp
// LLVM-NOT: @erff
func.func @encoder_layer(%x: tensor<2x5x8xf32>, %wqkv: tensor<24x8xf32>, %bqkv: tensor<24xf32>,
                         %wo: tensor<8x8xf32>, %bo: tensor<8xf32>,
                         %g1: tensor<8xf32>, %b1: tensor<8xf32>,
                         %w1: tensor<16x8xf32>, %bb1: tensor<16xf32>,
                         %w2: tensor<8x16xf32>, %bb2: tensor<8xf32>,
                         %g2: tensor<8xf32>, %b2: tensor<8xf32>) -> tensor<2x5x8xf32> {
  %qkv = poptorch.linear %x, %wqkv bias %bqkv : (tensor<2x5x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<2x5x24xf32>
  %q0 = poptorch.slice %qkv {dim = 2 : i64, start = 0 : i64} : tensor<2x5x24xf32> -> tensor<2x5x8xf32>
  %k0 = poptorch.slice %qkv {dim = 2 : i64, start = 8 : i64} : tensor<2x5x24xf32> -> tensor<2x5x8xf32>
  %v0 = poptorch.slice %qkv {dim = 2 : i64, start = 16 : i64} : tensor<2x5x24xf32> -> tensor<2x5x8xf32>
  %q1 = poptorch.reshape %q0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %k1 = poptorch.reshape %k0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %v1 = poptorch.reshape %v0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %q = poptorch.transpose %q1 {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %k = poptorch.transpose %k1 {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %v = poptorch.transpose %v1 {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %att = poptorch.sdpa %q, %k, %v : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  %at = poptorch.transpose %att {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x2x5x4xf32> -> tensor<2x5x2x4xf32>
  %ar = poptorch.reshape %at : tensor<2x5x2x4xf32> -> tensor<2x5x8xf32>
  %o = poptorch.linear %ar, %wo bias %bo : (tensor<2x5x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %d = poptorch.dropout %o {p = 0.1 : f64, train = false} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  %r1 = poptorch.add %x, %d : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %n1 = poptorch.layer_norm %r1 weight %g1 bias %b1 {normalized_shape = array<i64: 8>, eps = 1.0e-5 : f64}
      : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %h = poptorch.linear %n1, %w1 bias %bb1 : (tensor<2x5x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  %ge = poptorch.gelu %h : (tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  %f = poptorch.linear %ge, %w2 bias %bb2 : (tensor<2x5x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %r2 = poptorch.add %n1, %f : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %n2 = poptorch.layer_norm %r2 weight %g2 bias %b2 {normalized_shape = array<i64: 8>, eps = 1.0e-5 : f64}
      : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  return %n2 : tensor<2x5x8xf32>
}
