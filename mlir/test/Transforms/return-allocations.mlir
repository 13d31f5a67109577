// poptorch-return-allocations: a returned reshape of a buffer the function
// allocates becomes the buffer, allocated in the returned shape, so that
// buffer-results-to-out-params{modify-public-functions hoist-static-allocs} computes into the
// caller's buffer instead of copying into it.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-return-allocations))' | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-return-allocations), buffer-results-to-out-params{modify-public-functions hoist-static-allocs})' | FileCheck %s --check-prefix=OUT

// A (B * S, N) result computed 2-D and returned (B, S, N) through two
// expands: the buffer is (B, S, N), seen 2-D by the op that writes it.
// CHECK-LABEL: func.func @expanded_result
// CHECK: %[[WHOLE:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x4x8xf32>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[WHOLE]] {{\[\[}}0, 1, 2, 3]] : memref<2x3x4x8xf32> into memref<192xf32>
// CHECK: %[[OLD:.+]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [6, 32] : memref<192xf32> into memref<6x32xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OLD]] : memref<6x32xf32>)
// CHECK: return %[[WHOLE]] : memref<2x3x4x8xf32>
// OUT-LABEL: func.func @expanded_result
// OUT-SAME: (%[[ARG:.+]]: memref<2x3x4x8xf32>)
// OUT-NOT: memref.copy
// OUT-NOT: memref.alloc
// OUT: memref.collapse_shape %[[ARG]]
// OUT-NOT: memref.copy
// OUT: return
func.func @expanded_result() -> memref<2x3x4x8xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<6x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<6x32xf32>)
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 3, 32] : memref<6x32xf32> into memref<2x3x32xf32>
  %e2 = memref.expand_shape %e [[0], [1], [2, 3]] output_shape [2, 3, 4, 8] : memref<2x3x32xf32> into memref<2x3x4x8xf32>
  return %e2 : memref<2x3x4x8xf32>
}

// -----

// Two results view one buffer: each must be a buffer of its own, so neither
// is rewritten (buffer-results-to-out-params copies into both). A returned
// argument's view and a returned allocation itself are left as they are.
// CHECK-LABEL: func.func @shared_or_not_allocated
// CHECK: %[[A:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[E:.+]] = memref.expand_shape %[[A]]
// CHECK: %[[C:.+]] = memref.collapse_shape %[[A]]
// CHECK: %[[X:.+]] = memref.expand_shape %arg0
// CHECK: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK: return %[[E]], %[[C]], %[[X]], %[[B]]
func.func @shared_or_not_allocated(%arg0: memref<8xf32>) -> (memref<2x2x8xf32>, memref<32xf32>, memref<2x4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 2, 8] : memref<4x8xf32> into memref<2x2x8xf32>
  %c = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %x = memref.expand_shape %arg0 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %b = memref.alloc() : memref<4xf32>
  return %e, %c, %x, %b : memref<2x2x8xf32>, memref<32xf32>, memref<2x4xf32>, memref<4xf32>
}
