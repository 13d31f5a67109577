// poptorch-decompose: composite ops become matmul, elementwise, reduction and
// data-movement poptorch ops.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-decompose))' | FileCheck %s

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<32x16xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[WT:.*]] = poptorch.permute %[[W]] {dims = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
// CHECK: %[[MM:.*]] = poptorch.matmul %[[X]], %[[WT]] : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK: %[[R:.*]] = poptorch.add %[[MM]], %[[B]] : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK: return %[[R]]
func.func @linear(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %0 = poptorch.linear %x, %w bias %b : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// A bf16 product stays in its f32 accumulator for the bias: one rounding, as
// eager's linear (and addmm) do.
// CHECK-LABEL: func.func @linear_bf16
// CHECK: %[[MM:.*]] = poptorch.matmul %{{.*}}, %{{.*}} : (tensor<4x16xbf16>, tensor<16x32xbf16>) -> tensor<4x32xf32>
// CHECK: %[[B32:.*]] = poptorch.cast %{{.*}} : tensor<32xbf16> -> tensor<32xf32>
// CHECK: %[[SUM:.*]] = poptorch.add %[[MM]], %[[B32]] : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK: %[[R:.*]] = poptorch.cast %[[SUM]] : tensor<4x32xf32> -> tensor<4x32xbf16>
// CHECK: return %[[R]]
func.func @linear_bf16(%x: tensor<4x16xbf16>, %w: tensor<32x16xbf16>, %b: tensor<32xbf16>) -> tensor<4x32xbf16> {
  %0 = poptorch.linear %x, %w bias %b : (tensor<4x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>) -> tensor<4x32xbf16>
  return %0 : tensor<4x32xbf16>
}

// -----

// CHECK-LABEL: func.func @linear_vector_weight
// CHECK-NOT: poptorch.permute
// CHECK: poptorch.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
// CHECK-NOT: poptorch.add
func.func @linear_vector_weight(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>) -> tensor<2x3xf32> {
  %0 = poptorch.linear %x, %w : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A batched lhs with one matrix expanded over its batch: one matmul of the
// folded rows, not a bmm of copies of the matrix.
// CHECK-LABEL: func.func @matmul_broadcast_rhs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x16xf32>, %[[W:.*]]: tensor<16x32xf32>)
// CHECK: %[[A:.*]] = poptorch.reshape %[[X]] : tensor<4x8x16xf32> -> tensor<32x16xf32>
// CHECK: %[[MM:.*]] = poptorch.matmul %[[A]], %[[W]] : (tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
// CHECK: %[[R:.*]] = poptorch.reshape %[[MM]] : tensor<32x32xf32> -> tensor<4x8x32xf32>
// CHECK: return %[[R]]
func.func @matmul_broadcast_rhs(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
  %e = poptorch.expand %w : tensor<16x32xf32> -> tensor<4x16x32xf32>
  %0 = poptorch.matmul %x, %e : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @addmm
// CHECK-SAME: (%[[I:.*]]: tensor<5xf32>, %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK-DAG: %[[BETA:.*]] = poptorch.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ALPHA:.*]] = poptorch.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[MM:.*]] = poptorch.matmul %[[A]], %[[B]]
// CHECK: %[[SMM:.*]] = poptorch.mul %[[MM]], %[[ALPHA]]
// CHECK: %[[SI:.*]] = poptorch.mul %[[I]], %[[BETA]]
// CHECK: poptorch.add %[[SI]], %[[SMM]] : (tensor<5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
func.func @addmm(%i: tensor<5xf32>, %a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = poptorch.addmm %i, %a, %b {alpha = 0.5 : f64, beta = 2.0 : f64} : (tensor<5xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// beta = 0 ignores the input (PyTorch does not propagate its NaNs).
// CHECK-LABEL: func.func @addmm_beta0
// CHECK: %[[MM:.*]] = poptorch.matmul
// CHECK-NOT: poptorch.add
// CHECK: return %[[MM]]
func.func @addmm_beta0(%i: tensor<3x5xf32>, %a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = poptorch.addmm %i, %a, %b {beta = 0.0 : f64} : (tensor<3x5xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[EPS:.*]] = poptorch.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-DAG: %[[N:.*]] = poptorch.constant dense<8.000000e+00> : tensor<f32>
// CHECK: %[[S:.*]] = poptorch.reduce_sum %[[X]] {dims = array<i64: 2>, keepdim = true} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// CHECK: %[[MEAN:.*]] = poptorch.div %[[S]], %[[N]]
// CHECK: %[[D:.*]] = poptorch.sub %[[X]], %[[MEAN]]
// CHECK: %[[SQ:.*]] = poptorch.mul %[[D]], %[[D]]
// CHECK: %[[VS:.*]] = poptorch.reduce_sum %[[SQ]] {dims = array<i64: 2>, keepdim = true}
// CHECK: %[[VAR:.*]] = poptorch.div %[[VS]], %[[N]]
// CHECK: %[[VE:.*]] = poptorch.add %[[VAR]], %[[EPS]]
// CHECK: %[[RSTD:.*]] = poptorch.rsqrt %[[VE]]
// CHECK: %[[Y:.*]] = poptorch.mul %[[D]], %[[RSTD]]
// CHECK: %[[YW:.*]] = poptorch.mul %[[Y]], %[[W]]
// CHECK: poptorch.add %[[YW]], %[[B]] : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
func.func @layer_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = poptorch.layer_norm %x weight %w bias %b {normalized_shape = array<i64: 8>, eps = 1.0e-5 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// f16 normalisation computes in f32.
// CHECK-LABEL: func.func @layer_norm_f16
// CHECK: poptorch.cast %{{.*}} : tensor<4x6xf16> -> tensor<4x6xf32>
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 0, 1>, keepdim = true} : tensor<4x6xf32> -> tensor<1x1xf32>
// CHECK: poptorch.rsqrt
// CHECK: poptorch.cast %{{.*}} : tensor<4x6xf32> -> tensor<4x6xf16>
func.func @layer_norm_f16(%x: tensor<4x6xf16>) -> tensor<4x6xf16> {
  %0 = poptorch.layer_norm %x {normalized_shape = array<i64: 4, 6>, eps = 1.0e-5 : f64} : (tensor<4x6xf16>) -> tensor<4x6xf16>
  return %0 : tensor<4x6xf16>
}

// -----

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[W:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[VE:.*]] = poptorch.add %[[V]], %{{.*}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[RSTD:.*]] = poptorch.rsqrt %[[VE]]
// CHECK: %[[SCALE:.*]] = poptorch.mul %[[RSTD]], %[[W]]
// CHECK: %[[MS:.*]] = poptorch.mul %[[M]], %[[SCALE]]
// CHECK: %[[NMS:.*]] = poptorch.neg %[[MS]]
// CHECK: %[[SHIFT:.*]] = poptorch.add %[[NMS]], %[[B]]
// CHECK-DAG: %[[SHIFT3:.*]] = poptorch.reshape %[[SHIFT]] : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK-DAG: %[[SCALE3:.*]] = poptorch.reshape %[[SCALE]] : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[Y:.*]] = poptorch.mul %[[X]], %[[SCALE3]] : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
// CHECK: poptorch.add %[[Y]], %[[SHIFT3]] : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = poptorch.batch_norm %x weight %w bias %b mean %m var %v {eps = 1.0e-5 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>)
// CHECK: %[[MAX:.*]] = poptorch.reduce_max %[[X]] {dims = array<i64: 1>, keepdim = true} : tensor<2x5xf32> -> tensor<2x1xf32>
// CHECK: %[[SH:.*]] = poptorch.sub %[[X]], %[[MAX]]
// CHECK: %[[E:.*]] = poptorch.exp %[[SH]]
// CHECK: %[[S:.*]] = poptorch.reduce_sum %[[E]] {dims = array<i64: 1>, keepdim = true}
// CHECK: %[[R:.*]] = poptorch.div %[[E]], %[[S]] : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = poptorch.softmax %x {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax_f16
// CHECK: %[[X:.*]] = poptorch.cast %{{.*}} : tensor<2x5xf16> -> tensor<2x5xf32>
// CHECK: %[[MAX:.*]] = poptorch.reduce_max %[[X]] {dims = array<i64: 0>, keepdim = true}
// CHECK: %[[SH:.*]] = poptorch.sub %[[X]], %[[MAX]]
// CHECK: %[[E:.*]] = poptorch.exp %[[SH]]
// CHECK: %[[S:.*]] = poptorch.reduce_sum %[[E]]
// CHECK: %[[L:.*]] = poptorch.log %[[S]]
// CHECK: %[[R:.*]] = poptorch.sub %[[SH]], %[[L]]
// CHECK: poptorch.cast %[[R]] : tensor<2x5xf32> -> tensor<2x5xf16>
func.func @log_softmax_f16(%x: tensor<2x5xf16>) -> tensor<2x5xf16> {
  %0 = poptorch.log_softmax %x {dim = 0 : i64} : tensor<2x5xf16> -> tensor<2x5xf16>
  return %0 : tensor<2x5xf16>
}

// -----

// A bool mask keeps where true: log(cast(mask)) is 0 there and -inf elsewhere.
// The scale applies to q; a row whose max is -inf (fully masked) gives 0.
// CHECK-LABEL: func.func @sdpa_bool_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x5x4xf32>, %[[K:.*]]: tensor<2x6x4xf32>, %[[V:.*]]: tensor<2x6x3xf32>, %[[M:.*]]: tensor<5x6xi1>)
// CHECK-DAG: %[[NINF:.*]] = poptorch.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[SCALE:.*]] = poptorch.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[KT:.*]] = poptorch.permute %[[K]] {dims = array<i64: 0, 2, 1>} : tensor<2x6x4xf32> -> tensor<2x4x6xf32>
// CHECK: %[[QS:.*]] = poptorch.mul %[[Q]], %[[SCALE]] : (tensor<2x5x4xf32>, tensor<f32>) -> tensor<2x5x4xf32>
// CHECK: %[[MF:.*]] = poptorch.cast %[[M]] : tensor<5x6xi1> -> tensor<5x6xf32>
// CHECK: %[[ML:.*]] = poptorch.log %[[MF]]
// CHECK: %[[S:.*]] = poptorch.matmul %[[QS]], %[[KT]] : (tensor<2x5x4xf32>, tensor<2x4x6xf32>) -> tensor<2x5x6xf32>
// CHECK: %[[SM:.*]] = poptorch.add %[[S]], %[[ML]] : (tensor<2x5x6xf32>, tensor<5x6xf32>) -> tensor<2x5x6xf32>
// CHECK: %[[MAX:.*]] = poptorch.reduce_max %[[SM]] {dims = array<i64: 2>, keepdim = true}
// CHECK: %[[Y:.*]] = poptorch.div
// CHECK-NOT: poptorch.reduce_all
// CHECK: %[[EMPTY:.*]] = poptorch.eq %[[MAX]], %[[NINF]]
// CHECK: %[[P:.*]] = poptorch.where %[[EMPTY]], %{{.*}}, %[[Y]]
// CHECK: poptorch.matmul %[[P]], %[[V]] : (tensor<2x5x6xf32>, tensor<2x6x3xf32>) -> tensor<2x5x3xf32>
func.func @sdpa_bool_mask(%q: tensor<2x5x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>, %m: tensor<5x6xi1>) -> tensor<2x5x3xf32> {
  %0 = poptorch.sdpa %q, %k, %v mask %m : (tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<5x6xi1>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// is_causal adds a constant lower-triangular 0 / -inf mask; `scale` overrides 1/sqrt(E).
// CHECK-LABEL: func.func @sdpa_causal
// CHECK-DAG: %[[CAUSAL:.*]] = poptorch.constant dense<{{\[\[}}0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000]]> : tensor<2x3xf32>
// CHECK-DAG: %[[SCALE:.*]] = poptorch.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[QS:.*]] = poptorch.mul %{{.*}}, %[[SCALE]] : (tensor<2x2x4xf32>, tensor<f32>) -> tensor<2x2x4xf32>
// CHECK: %[[S:.*]] = poptorch.matmul %[[QS]]
// CHECK: poptorch.add %[[S]], %[[CAUSAL]] : (tensor<2x2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
func.func @sdpa_causal(%q: tensor<2x2x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x3xf32>) -> tensor<2x2x3xf32> {
  %0 = poptorch.sdpa %q, %k, %v {is_causal = true, scale = 0.25 : f64} : (tensor<2x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: poptorch.permute %{{.*}} {dims = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = poptorch.transpose %x {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_mean
// CHECK: %[[N:.*]] = poptorch.constant dense<1.200000e+01> : tensor<f32>
// CHECK: %[[S:.*]] = poptorch.reduce_sum %{{.*}} {dims = array<i64: 1, 2>, keepdim = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
// CHECK: poptorch.div %[[S]], %[[N]] : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %0 = poptorch.reduce_mean %x {dims = array<i64: 1, 2>, keepdim = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}

// -----

// Integer means are not defined (PyTorch raises); left for the lowering to report.
// CHECK-LABEL: func.func @reduce_mean_int
// CHECK: poptorch.reduce_mean
func.func @reduce_mean_int(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  %0 = poptorch.reduce_mean %x {dims = array<i64: 1>} : tensor<2x3xi64> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// clamp is NaN-propagating maximum then minimum; a missing bound is skipped.
// CHECK-LABEL: func.func @clamp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<2x3xf32>)
// CHECK: %[[MAX:.*]] = poptorch.maximum %[[X]], %[[LO]] : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[MIN:.*]] = poptorch.minimum %[[MAX]], %[[HI]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[ONLY:.*]] = poptorch.minimum %[[X]], %[[LO]] : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: return %[[MIN]], %[[ONLY]]
func.func @clamp(%x: tensor<3xf32>, %lo: tensor<f32>, %hi: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %0 = poptorch.clamp %x min %lo max %hi : (tensor<3xf32>, tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = poptorch.clamp %x max %lo : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// x ** 0.5 and x ** -0.5 are sqrt and rsqrt, as eager's pow kernel computes them
// (they differ from pow at -inf and -0); other exponents stay pow.
// CHECK-LABEL: func.func @pow_of_half
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[S:.*]] = poptorch.sqrt %[[X]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[R:.*]] = poptorch.rsqrt %[[X]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[P:.*]] = poptorch.pow %[[X]], %{{.*}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: return %[[S]], %[[R]], %[[P]]
func.func @pow_of_half(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %half = poptorch.constant dense<5.000000e-01> : tensor<f32> : tensor<f32>
  %minus = poptorch.constant dense<-5.000000e-01> : tensor<f32> : tensor<f32>
  %other = poptorch.constant dense<1.500000e+00> : tensor<f32> : tensor<f32>
  %0 = poptorch.pow %x, %half : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = poptorch.pow %x, %minus : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = poptorch.pow %x, %other : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// The integer exponents eager's pow kernel special-cases are multiplications
// (3) and a reciprocal (-2), in the compute type: a float16 x ** 3 is computed
// in float32 and rounded once. Other exponents stay pow.
// CHECK-LABEL: func.func @pow_of_small_integers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK: %[[C:.*]] = poptorch.cast %[[X]] {{.*}} -> tensor<4xf32>
// CHECK: %[[SQ:.*]] = poptorch.mul %[[C]], %[[C]]
// CHECK: %[[CU:.*]] = poptorch.mul %[[SQ]], %[[C]]
// CHECK: poptorch.cast %[[CU]] {{.*}} -> tensor<4xf16>
// CHECK: poptorch.div %{{.*}}, %{{.*}} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: poptorch.pow %[[X]], %{{.*}} : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
// CHECK-NOT: poptorch.pow
func.func @pow_of_small_integers(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %three = poptorch.constant dense<3.0> : tensor<f16> : tensor<f16>
  %m2 = poptorch.constant dense<-2.0> : tensor<f16> : tensor<f16>
  %other = poptorch.constant dense<2.5> : tensor<f16> : tensor<f16>
  %0 = poptorch.pow %x, %three : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %1 = poptorch.pow %x, %m2 : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %2 = poptorch.pow %x, %other : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// -----

// Training mode: the batch's mean and biased variance over (N, H, W).
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: %[[S:.*]] = poptorch.reduce_sum %{{.*}} {dims = array<i64: 0, 2, 3>, keepdim = true} : tensor<2x3x4x4xf32> -> tensor<1x3x1x1xf32>
// CHECK: %[[M:.*]] = poptorch.div %[[S]]
// CHECK: %[[D:.*]] = poptorch.sub %{{.*}}, %[[M]]
// CHECK: %[[SQ:.*]] = poptorch.mul %[[D]], %[[D]]
// CHECK: poptorch.reduce_sum %[[SQ]] {dims = array<i64: 0, 2, 3>, keepdim = true}
// CHECK: poptorch.rsqrt
// CHECK-NOT: poptorch.batch_norm
func.func @batch_norm_training(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %0 = poptorch.batch_norm %x {eps = 1.0e-5 : f64, training = true} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// A convolution that the lowering computes in channels-last layout reads its
// weight through permutes to (kH, kW, I, O) and back, so that
// poptorch-prepack-parameters can take the first one at upload.
// CHECK-LABEL: func.func @conv_channels_last_weight
// CHECK: %[[HWIO:.*]] = poptorch.permute %arg1 {dims = array<i64: 2, 3, 1, 0>} : tensor<16x8x3x3xf32> -> tensor<3x3x8x16xf32>
// CHECK: %[[OIHW:.*]] = poptorch.permute %[[HWIO]] {dims = array<i64: 3, 2, 0, 1>} : tensor<3x3x8x16xf32> -> tensor<16x8x3x3xf32>
// CHECK: poptorch.convolution %arg0, %[[OIHW]]
// CHECK-NOT: poptorch.permute
func.func @conv_channels_last_weight(%x: tensor<1x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

// Convolutions that stay im2col + matmul keep their weight: 1x1 kernels
// with output channels in no whole blocks of 16, input channels over 8 but
// not in blocks of 8, small outputs, and grouped ones.
// CHECK-LABEL: func.func @conv_im2col_weight
// CHECK-NOT: poptorch.permute
func.func @conv_im2col_weight(%x: tensor<1x8x16x16xf32>, %x3: tensor<1x12x16x16xf32>, %s: tensor<1x8x4x4xf32>, %w: tensor<24x8x1x1xf32>, %w3: tensor<16x12x3x3xf32>, %ws: tensor<16x8x3x3xf32>, %wg: tensor<16x4x3x3xf32>) -> (tensor<1x24x16x16xf32>, tensor<1x16x16x16xf32>, tensor<1x16x4x4xf32>, tensor<1x16x16x16xf32>) {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>} : (tensor<1x8x16x16xf32>, tensor<24x8x1x1xf32>) -> tensor<1x24x16x16xf32>
  %1 = poptorch.convolution %x3, %w3 {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x12x16x16xf32>, tensor<16x12x3x3xf32>) -> tensor<1x16x16x16xf32>
  %2 = poptorch.convolution %s, %ws {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  %3 = poptorch.convolution %x, %wg {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, groups = 2 : i64} : (tensor<1x8x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x16x16xf32>
  return %0, %1, %2, %3 : tensor<1x24x16x16xf32>, tensor<1x16x16x16xf32>, tensor<1x16x4x4xf32>, tensor<1x16x16x16xf32>
}

// -----

// A pointwise convolution with output channels in whole blocks of 16 runs
// channels-last: its weight goes through the permutes too.
// CHECK-LABEL: func.func @conv_pointwise_channels_last_weight
// CHECK: poptorch.permute %arg1 {dims = array<i64: 2, 3, 1, 0>} : tensor<32x8x1x1xf32> -> tensor<1x1x8x32xf32>
func.func @conv_pointwise_channels_last_weight(%x: tensor<1x8x16x16xf32>, %w: tensor<32x8x1x1xf32>) -> tensor<1x32x16x16xf32> {
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>} : (tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>) -> tensor<1x32x16x16xf32>
  return %0 : tensor<1x32x16x16xf32>
}

// -----

// Attention whose scores per head exceed 16 KiB runs one head at a time, the
// heads (every leading dim) and blocks of query rows shared among the threads
// by an scf.forall: 6 heads x 2 blocks of 50 rows. Leading dims of size 1
// (k, v, the mask) broadcast; a mask with one row is read whole.
// CHECK-LABEL: func.func @sdpa_per_head
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x100x8xf32>, %[[K:.*]]: tensor<2x1x100x8xf32>, %[[V:.*]]: tensor<2x1x100x4xf32>, %[[M:.*]]: tensor<2x1x1x100xi1>)
// CHECK: %[[KT:.*]] = poptorch.permute %[[K]] {{.*}} -> tensor<2x1x8x100xf32>
// CHECK: %[[QS:.*]] = poptorch.mul %[[Q]]
// CHECK: %[[ML:.*]] = poptorch.log
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3x100x4xf32>
// CHECK: scf.forall (%[[H:.*]], %[[B:.*]]) in (6, 2) shared_outs(%[[OUT:.*]] = %[[INIT]]) -> (tensor<2x3x100x4xf32>)
// CHECK: %[[QB:.*]] = tensor.extract_slice %[[QS]][%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 1, 50, 8] [1, 1, 1, 1] : tensor<2x3x100x8xf32> to tensor<50x8xf32>
// CHECK: %[[KH:.*]] = tensor.extract_slice %[[KT]][%{{.*}}, 0, 0, 0] [1, 1, 8, 100] [1, 1, 1, 1] : tensor<2x1x8x100xf32> to tensor<8x100xf32>
// CHECK: %[[S:.*]] = poptorch.matmul %[[QB]], %[[KH]] : (tensor<50x8xf32>, tensor<8x100xf32>) -> tensor<50x100xf32>
// CHECK: %[[MB:.*]] = tensor.extract_slice %[[ML]][%{{.*}}, 0, 0, 0] [1, 1, 1, 100] [1, 1, 1, 1] : tensor<2x1x1x100xf32> to tensor<1x100xf32>
// CHECK: poptorch.add %[[S]], %[[MB]] : (tensor<50x100xf32>, tensor<1x100xf32>) -> tensor<50x100xf32>
// CHECK: poptorch.reduce_max
// CHECK: %[[VH:.*]] = tensor.extract_slice %[[V]][%{{.*}}, 0, 0, 0] [1, 1, 100, 4] [1, 1, 1, 1] : tensor<2x1x100x4xf32> to tensor<100x4xf32>
// CHECK: %[[O:.*]] = poptorch.matmul %{{.*}}, %[[VH]] : (tensor<50x100xf32>, tensor<100x4xf32>) -> tensor<50x4xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[O]] into %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 1, 50, 4] [1, 1, 1, 1] : tensor<50x4xf32> into tensor<2x3x100x4xf32>
func.func @sdpa_per_head(%q: tensor<2x3x100x8xf32>, %k: tensor<2x1x100x8xf32>, %v: tensor<2x1x100x4xf32>, %m: tensor<2x1x1x100xi1>) -> tensor<2x3x100x4xf32> {
  %0 = poptorch.sdpa %q, %k, %v mask %m : (tensor<2x3x100x8xf32>, tensor<2x1x100x8xf32>, tensor<2x1x100x4xf32>, tensor<2x1x1x100xi1>) -> tensor<2x3x100x4xf32>
  return %0 : tensor<2x3x100x4xf32>
}

// -----

// One head of 601 x 700 scores (1.6 MiB) in blocks of query rows: 8 blocks of
// 72 rows (no divisor of 601 fills half a block), then the last 25 rows in a
// loop of their own. The mask's rows are sliced like the query's.
// CHECK-LABEL: func.func @sdpa_row_blocks
// CHECK-SAME: (%[[Q:.*]]: tensor<601x16xf32>, %{{.*}}: tensor<700x16xf32>, %{{.*}}: tensor<700x16xf32>, %[[M:.*]]: tensor<601x700xf32>)
// CHECK: %[[FULL:.*]] = scf.forall (%{{.*}}, %[[B:.*]]) in (1, 8)
// CHECK: %[[ROW:.*]] = arith.muli %[[B]], %c72
// CHECK: tensor.extract_slice %{{.*}}[%[[ROW]], 0] [72, 16] [1, 1] : tensor<601x16xf32> to tensor<72x16xf32>
// CHECK: tensor.extract_slice %[[M]][%[[ROW]], 0] [72, 700] [1, 1] : tensor<601x700xf32> to tensor<72x700xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (1, 1) shared_outs(%[[OUT:.*]] = %[[FULL]])
// CHECK: tensor.extract_slice %{{.*}}[576, 0] [25, 16] [1, 1] : tensor<601x16xf32> to tensor<25x16xf32>
// CHECK: tensor.extract_slice %[[M]][576, 0] [25, 700] [1, 1] : tensor<601x700xf32> to tensor<25x700xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][576, 0] [25, 16] [1, 1] : tensor<25x16xf32> into tensor<601x16xf32>
func.func @sdpa_row_blocks(%q: tensor<601x16xf32>, %k: tensor<700x16xf32>, %v: tensor<700x16xf32>, %m: tensor<601x700xf32>) -> tensor<601x16xf32> {
  %0 = poptorch.sdpa %q, %k, %v mask %m : (tensor<601x16xf32>, tensor<700x16xf32>, tensor<700x16xf32>, tensor<601x700xf32>) -> tensor<601x16xf32>
  return %0 : tensor<601x16xf32>
}

// -----

// Hugging Face's TF-style "same" padding: a zero pad alike on both sides of
// each spatial dim becomes the convolution's padding (added to its own), and
// a pad by nothing is its input.
// CHECK-LABEL: func.func @convolution_of_zero_padded
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x8xf32>, %[[W:.*]]: tensor<4x1x3x3xf32>, %[[P:.*]]: tensor<8x4x1x1xf32>)
// CHECK-NOT: poptorch.pad
// CHECK: poptorch.convolution %[[X]], %[[W]] {dilation = array<i64: 1>, groups = 4 : i64, padding = array<i64: 2, 1>, stride = array<i64: 1>}
// CHECK: poptorch.convolution %[[X]], %[[P]] {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
func.func @convolution_of_zero_padded(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>, %p: tensor<8x4x1x1xf32>) -> (tensor<2x4x10x8xf32>, tensor<2x8x8x8xf32>) {
  %zero = poptorch.constant dense<0.0> : tensor<f32> : tensor<f32>
  %0 = poptorch.pad %x value %zero {mode = "constant", pad = array<i64: 0, 0, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x10x8xf32>
  %1 = poptorch.convolution %0, %w {dilation = array<i64: 1>, groups = 4 : i64, padding = array<i64: 1>, stride = array<i64: 1>} : (tensor<2x4x10x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x10x8xf32>
  %2 = poptorch.pad %x value %zero {mode = "constant", pad = array<i64: 0, 0, 0, 0>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %3 = poptorch.convolution %2, %p {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x8x8xf32>
  return %1, %3 : tensor<2x4x10x8xf32>, tensor<2x8x8x8xf32>
}

// -----

// Pads the convolution cannot take stay: one side only (stride-2 "same"
// padding), another value, -0.0 (the convolution pads with +0.0), the
// channels, a transposed convolution.
// CHECK-LABEL: func.func @convolution_of_other_pads
// CHECK-COUNT-5: poptorch.pad
func.func @convolution_of_other_pads(%x: tensor<2x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %wc: tensor<4x6x3x3xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x6x6xf32>, tensor<2x4x12x12xf32>) {
  %zero = poptorch.constant dense<0.0> : tensor<f32> : tensor<f32>
  %one = poptorch.constant dense<1.0> : tensor<f32> : tensor<f32>
  %neg = poptorch.constant dense<-0.0> : tensor<f32> : tensor<f32>
  %0 = poptorch.pad %x value %zero {mode = "constant", pad = array<i64: 0, 1, 0, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x9x9xf32>
  %1 = poptorch.convolution %0, %w {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x4x4xf32>
  %2 = poptorch.pad %x value %one {mode = "constant", pad = array<i64: 1, 1, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x10x10xf32>
  %3 = poptorch.convolution %2, %w {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x4x10x10xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  %4 = poptorch.pad %x value %neg {mode = "constant", pad = array<i64: 1, 1, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x10x10xf32>
  %5 = poptorch.convolution %4, %w {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x4x10x10xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  %6 = poptorch.pad %x value %zero {mode = "constant", pad = array<i64: 0, 0, 0, 0, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x6x8x8xf32>
  %7 = poptorch.convolution %6, %wc {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x6x8x8xf32>, tensor<4x6x3x3xf32>) -> tensor<2x4x6x6xf32>
  %8 = poptorch.pad %x value %zero {mode = "constant", pad = array<i64: 1, 1, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x10x10xf32>
  %9 = poptorch.convolution %8, %w {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>} : (tensor<2x4x10x10xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x12x12xf32>
  return %1, %3, %5, %7, %9 : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x6x6xf32>, tensor<2x4x12x12xf32>
}
