// poptorch-split-padding: an elementwise op reading slices of a padded
// tensor (a fill with a value inserted into its interior) is split into
// boxes of its iteration space in which each slice lies wholly inside the
// inserted value, read directly, or wholly in the padding, read as the pad
// constant: the padded tensor is never made.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-split-padding{min-padded-bytes=0}), canonicalize, cse)' | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-split-padding), canonicalize, cse)' | FileCheck %s --check-prefix=SMALL

// A max over three windows of a row padded by -inf on each side: the first
// and last columns read one window from the padding (max with -inf, which
// canonicalization folds away), the rest none.
// CHECK-LABEL: func.func @max_window
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[L0:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 1] [1, 1]
// CHECK: %[[L1:.*]] = tensor.extract_slice %[[X]][0, 1] [4, 1] [1, 1]
// CHECK: %[[LO:.*]] = tensor.extract_slice %[[E]][0, 0] [4, 1] [1, 1]
// CHECK: %[[LEFT:.*]] = linalg.generic {{.*}} ins(%[[L0]], %[[L1]] : tensor<4x1xf32>, tensor<4x1xf32>) outs(%[[LO]] : tensor<4x1xf32>)
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[LEFT]] into %[[E]][0, 0] [4, 1] [1, 1]
// CHECK: %[[M0:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 6] [1, 1]
// CHECK: %[[M1:.*]] = tensor.extract_slice %[[X]][0, 1] [4, 6] [1, 1]
// CHECK: %[[M2:.*]] = tensor.extract_slice %[[X]][0, 2] [4, 6] [1, 1]
// CHECK: %[[MO:.*]] = tensor.extract_slice %[[R1]][0, 1] [4, 6] [1, 1]
// CHECK: %[[MID:.*]] = linalg.generic {{.*}} ins(%[[M0]], %[[M1]], %[[M2]] : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) outs(%[[MO]] : tensor<4x6xf32>)
// CHECK: %[[R2:.*]] = tensor.insert_slice %[[MID]] into %[[R1]][0, 1] [4, 6] [1, 1]
// CHECK: %[[R0:.*]] = tensor.extract_slice %[[X]][0, 6] [4, 1] [1, 1]
// CHECK: %[[R1_:.*]] = tensor.extract_slice %[[X]][0, 7] [4, 1] [1, 1]
// CHECK: %[[RIGHT:.*]] = linalg.generic {{.*}} ins(%[[R0]], %[[R1_]] : tensor<4x1xf32>, tensor<4x1xf32>) outs({{.*}} : tensor<4x1xf32>)
// CHECK: %[[R3:.*]] = tensor.insert_slice %[[RIGHT]] into %[[R2]][0, 7] [4, 1] [1, 1]
// CHECK: return %[[R3]]
// Below min-padded-bytes (160 bytes here) the padded tensor stays.
// SMALL-LABEL: func.func @max_window
// SMALL: linalg.fill
// SMALL: linalg.generic
// SMALL-NOT: linalg.generic
// SMALL: return
func.func @max_window(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x10xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4x10xf32>) -> tensor<4x10xf32>
  %p = tensor.insert_slice %x into %f[0, 1] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x10xf32>
  %t0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x10xf32> to tensor<4x8xf32>
  %t2 = tensor.extract_slice %p[0, 2] [4, 8] [1, 1] : tensor<4x10xf32> to tensor<4x8xf32>
  %o = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t0, %x, %t2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %m = arith.maximumf %a, %b : f32
    %n = arith.maximumf %m, %c : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A stride-2 window over an even length never reaches the trailing pad:
// two boxes along the row. In the first, the window that reads the padding
// is the pad constant in the body; the per-row operand (a batch norm's
// scale, read at a constant index too) is read whole by both.
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[S:.*]]: tensor<2x1xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 1] [1, 2]
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[S]] : tensor<2x1xf32>, tensor<2x1xf32>) outs({{.*}} : tensor<2x1xf32>)
// CHECK: arith.addf %{{.*}}, %[[ZERO]]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][0, 1] [2, 3] [1, 2]
// CHECK: %[[C:.*]] = tensor.extract_slice %[[X]][0, 2] [2, 3] [1, 2]
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[C]], %[[S]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) outs({{.*}} : tensor<2x3xf32>)
// CHECK-NOT: linalg.generic
func.func @strided(%x: tensor<2x8xf32>, %s: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x10xf32>) -> tensor<2x10xf32>
  %p = tensor.insert_slice %x into %f[0, 1] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x10xf32>
  %t0 = tensor.extract_slice %p[0, 0] [2, 4] [1, 2] : tensor<2x10xf32> to tensor<2x4xf32>
  %t1 = tensor.extract_slice %p[0, 1] [2, 4] [1, 2] : tensor<2x10xf32> to tensor<2x4xf32>
  %o = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t0, %t1, %s : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x1xf32>) outs(%o : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %m = arith.addf %a, %b : f32
    %n = arith.mulf %m, %c : f32
    linalg.yield %n : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// A generic with an index op or a reduction is left alone.
// CHECK-LABEL: func.func @reduction
// CHECK: linalg.fill
// CHECK: linalg.generic
func.func @reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x10xf32>) -> tensor<4x10xf32>
  %p = tensor.insert_slice %x into %f[0, 1] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x10xf32>
  %t0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x10xf32> to tensor<4x8xf32>
  %o = tensor.empty() : tensor<4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t0 : tensor<4x8xf32>) outs(%oz : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Windows crossing the border in many places make too many boxes: seven
// windows along the diagonal of a 3-padded 8x8 (a 7x7 window's taps, in
// miniature) cut each loop into 7 ranges, 49 boxes. The generic keeps its
// padded input (49 boxes of 49 slices took seconds to bufferize).
// CHECK-LABEL: func.func @too_many_boxes
// CHECK: linalg.fill
// CHECK: tensor.insert_slice
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @too_many_boxes(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<14x14xf32>) -> tensor<14x14xf32>
  %p = tensor.insert_slice %x into %f[3, 3] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<14x14xf32>
  %t0 = tensor.extract_slice %p[0, 0] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t1 = tensor.extract_slice %p[1, 1] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t2 = tensor.extract_slice %p[2, 2] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t3 = tensor.extract_slice %p[3, 3] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t4 = tensor.extract_slice %p[4, 4] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t5 = tensor.extract_slice %p[5, 5] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %t6 = tensor.extract_slice %p[6, 6] [8, 8] [1, 1] : tensor<14x14xf32> to tensor<8x8xf32>
  %o = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t0, %t1, %t2, %t3, %t4, %t5, %t6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%o : tensor<8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %a5: f32, %a6: f32, %out: f32):
    %s1 = arith.addf %a0, %a1 : f32
    %s2 = arith.addf %s1, %a2 : f32
    %s3 = arith.addf %s2, %a3 : f32
    %s4 = arith.addf %s3, %a4 : f32
    %s5 = arith.addf %s4, %a5 : f32
    %s6 = arith.addf %s5, %a6 : f32
    linalg.yield %s6 : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
