// poptorch-fuse-elementwise: elementwise chains fuse into one generic, while
// contractions (named or generic) are never fused into and reshapes never
// folded into them (which would turn a named one into linalg.generic).
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-fuse-elementwise))' | FileCheck %s

// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = arith.maximumf %p, %cst : f32
    linalg.yield %t : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// A 3-D input flattened for a matmul and the result expanded for the bias:
// the matmul stays named (upstream's fusion would expand it to a generic),
// and the bias add's loops collapse to the matmul's, so that it reads the
// matmul's result as it is (the tiling pass fuses it into the matmul's
// register tiles); its result is expanded instead.
// CHECK-LABEL: func.func @linear_3d
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK-NOT: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: %[[R:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg2, %[[M]] : tensor<512xf32>, tensor<128x512xf32>) outs(%{{.*}} : tensor<128x512xf32>)
// CHECK: %[[R3:.+]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [2, 64, 512]
// CHECK: return %[[R3]]
func.func @linear_3d(%x: tensor<2x64x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<2x64x512xf32> {
  %cst = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x64x256xf32> into tensor<128x256xf32>
  %e = tensor.empty() : tensor<128x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m = linalg.matmul ins(%c, %w : tensor<128x256xf32>, tensor<256x512xf32>) outs(%f : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 64, 512] : tensor<128x512xf32> into tensor<2x64x512xf32>
  %e3 = tensor.empty() : tensor<2x64x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %m3 : tensor<512xf32>, tensor<2x64x512xf32>) outs(%e3 : tensor<2x64x512xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64x512xf32>
  return %r : tensor<2x64x512xf32>
}

// -----

// The matmul's result has a second user: the generic keeps its loops (the
// tiling pass fuses only a sole consumer).
// CHECK-LABEL: func.func @linear_3d_two_users
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[M3:.+]] = tensor.expand_shape %[[M]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2, %[[M3]] : tensor<512xf32>, tensor<2x64x512xf32>)
func.func @linear_3d_two_users(%x: tensor<2x64x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> (tensor<2x64x512xf32>, tensor<128x512xf32>) {
  %cst = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x64x256xf32> into tensor<128x256xf32>
  %e = tensor.empty() : tensor<128x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m = linalg.matmul ins(%c, %w : tensor<128x256xf32>, tensor<256x512xf32>) outs(%f : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 64, 512] : tensor<128x512xf32> into tensor<2x64x512xf32>
  %e3 = tensor.empty() : tensor<2x64x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %m3 : tensor<512xf32>, tensor<2x64x512xf32>) outs(%e3 : tensor<2x64x512xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64x512xf32>
  return %r, %m : tensor<2x64x512xf32>, tensor<128x512xf32>
}

// -----

// The generic also reads a residual along the expanded dims: it keeps its
// loops, so that a layer's output stays in the model's shape (collapsed, the
// first of a stack of layers would read its input differently from the
// others, and poptorch-outline-repeats would not outline it with them).
// CHECK-LABEL: func.func @linear_3d_residual
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[M3:.+]] = tensor.expand_shape %[[M]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2, %[[M3]], %arg0 :
func.func @linear_3d_residual(%x: tensor<2x64x256xf32>, %w: tensor<256x256xf32>, %b: tensor<256xf32>) -> tensor<2x64x256xf32> {
  %cst = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x64x256xf32> into tensor<128x256xf32>
  %e = tensor.empty() : tensor<128x256xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
  %m = linalg.matmul ins(%c, %w : tensor<128x256xf32>, tensor<256x256xf32>) outs(%f : tensor<128x256xf32>) -> tensor<128x256xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 64, 256] : tensor<128x256xf32> into tensor<2x64x256xf32>
  %e3 = tensor.empty() : tensor<2x64x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %m3, %x : tensor<256xf32>, tensor<2x64x256xf32>, tensor<2x64x256xf32>) outs(%e3 : tensor<2x64x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r0: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.addf %s, %r0 : f32
    linalg.yield %t : f32
  } -> tensor<2x64x256xf32>
  return %r : tensor<2x64x256xf32>
}

// -----

// The generic's result is written into the interior of a padded tensor,
// rows of 64 into rows of 66: collapsed, it would be computed into a
// temporary and copied with a stride, so it keeps its loops. Written whole
// along the expanded dims (a concatenation along the last), it collapses.
// CHECK-LABEL: func.func @linear_3d_into_padded
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[M3:.+]] = tensor.expand_shape %[[M]]
// CHECK: %[[R:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2, %[[M3]] : tensor<512xf32>, tensor<2x64x512xf32>)
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[0, 1, 0] [2, 64, 512] [1, 1, 1]
// CHECK-LABEL: func.func @linear_3d_into_concatenation
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[R:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg2, %[[M]] : tensor<512xf32>, tensor<128x512xf32>)
// CHECK: %[[R3:.+]] = tensor.expand_shape %[[R]]
// CHECK: tensor.insert_slice %[[R3]] into %{{.*}}[0, 0, 0] [2, 64, 512] [1, 1, 1]
func.func @linear_3d_into_padded(%x: tensor<2x64x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<2x66x512xf32> {
  %cst = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x64x256xf32> into tensor<128x256xf32>
  %e = tensor.empty() : tensor<128x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m = linalg.matmul ins(%c, %w : tensor<128x256xf32>, tensor<256x512xf32>) outs(%f : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 64, 512] : tensor<128x512xf32> into tensor<2x64x512xf32>
  %e3 = tensor.empty() : tensor<2x64x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %m3 : tensor<512xf32>, tensor<2x64x512xf32>) outs(%e3 : tensor<2x64x512xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64x512xf32>
  %z = tensor.empty() : tensor<2x66x512xf32>
  %zf = linalg.fill ins(%cst : f32) outs(%z : tensor<2x66x512xf32>) -> tensor<2x66x512xf32>
  %i = tensor.insert_slice %r into %zf[0, 1, 0] [2, 64, 512] [1, 1, 1] : tensor<2x64x512xf32> into tensor<2x66x512xf32>
  return %i : tensor<2x66x512xf32>
}
func.func @linear_3d_into_concatenation(%x: tensor<2x64x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<2x64x1024xf32>) -> tensor<2x64x1024xf32> {
  %cst = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x64x256xf32> into tensor<128x256xf32>
  %e = tensor.empty() : tensor<128x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m = linalg.matmul ins(%c, %w : tensor<128x256xf32>, tensor<256x512xf32>) outs(%f : tensor<128x512xf32>) -> tensor<128x512xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 64, 512] : tensor<128x512xf32> into tensor<2x64x512xf32>
  %e3 = tensor.empty() : tensor<2x64x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %m3 : tensor<512xf32>, tensor<2x64x512xf32>) outs(%e3 : tensor<2x64x512xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64x512xf32>
  %i = tensor.insert_slice %r into %y[0, 0, 0] [2, 64, 512] [1, 1, 1] : tensor<2x64x512xf32> into tensor<2x64x1024xf32>
  return %i : tensor<2x64x1024xf32>
}

// -----

// A batch norm and ReLU after a pointwise convolution (a contraction over
// (n, f, p, c)), written channels-last into the padded input of the next
// convolution: another order than the result's, so its loops stay (collapsed,
// the write would be a temporary and a strided copy).
// CHECK-LABEL: func.func @pointwise_then_channels_last
// CHECK: %[[C:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: %[[C4:.+]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1], [2, 3]]
// CHECK: %[[R:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C4]], %arg2 :
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[0, 1, 1, 0] [2, 4, 4, 8] [1, 1, 1, 1]
func.func @pointwise_then_channels_last(%x: tensor<2x3x16xf32>, %w: tensor<8x3xf32>, %s: tensor<8xf32>) -> tensor<2x6x6x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %x : tensor<8x3xf32>, tensor<2x3x16xf32>) outs(%f : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<2x8x16xf32>
  %c4 = tensor.expand_shape %c [[0], [1], [2, 3]] output_shape [2, 8, 4, 4] : tensor<2x8x16xf32> into tensor<2x8x4x4xf32>
  %e4 = tensor.empty() : tensor<2x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c4, %s : tensor<2x8x4x4xf32>, tensor<8xf32>) outs(%e4 : tensor<2x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.maximumf %p, %cst : f32
    linalg.yield %q : f32
  } -> tensor<2x4x4x8xf32>
  %z = tensor.empty() : tensor<2x6x6x8xf32>
  %zf = linalg.fill ins(%cst : f32) outs(%z : tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  %i = tensor.insert_slice %r into %zf[0, 1, 1, 0] [2, 4, 4, 8] [1, 1, 1, 1] : tensor<2x4x4x8xf32> into tensor<2x6x6x8xf32>
  return %i : tensor<2x6x6x8xf32>
}

// -----

// A gather from a transposed table reads the table at the permuted position:
// the transpose is not materialized.
// CHECK-LABEL: func.func @gather_through_transpose
// CHECK-SAME: %[[W:.*]]: tensor<4x5xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = arith.index_cast
// CHECK: %[[COL:.*]] = linalg.index 1
// CHECK: tensor.extract %[[W]][%[[COL]], %[[ROW]]]
func.func @gather_through_transpose(%w: tensor<4x5xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<5x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x5xf32>) outs(%e : tensor<5x4xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<3xi64>) outs(%o : tensor<3x4xf32>) {
  ^bb0(%i: i64, %out: f32):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %t[%row, %col] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// A transpose read only by an elementwise op (a convolution's (F, N, H, W)
// result going back to (N, F, H, W) for its batch norm) fuses into it: the
// generic reads the matmul's layout through its indexing map.
// CHECK-DAG: #[[PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @transpose_into_elementwise
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[PERM]],
// CHECK-SAME: ins(%arg0, %arg1 : tensor<4x2x3x5xf32>, tensor<2x4x3x5xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @transpose_into_elementwise(%fnhw: tensor<4x2x3x5xf32>, %y: tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32> {
  %e = tensor.empty() : tensor<2x4x3x5xf32>
  %t = linalg.transpose ins(%fnhw : tensor<4x2x3x5xf32>) outs(%e : tensor<2x4x3x5xf32>) permutation = [1, 0, 2, 3]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t, %y : tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>) outs(%e : tensor<2x4x3x5xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x4x3x5xf32>
  return %r : tensor<2x4x3x5xf32>
}

// -----

// A transpose that feeds a matmul stays a named transpose.
// CHECK-LABEL: func.func @transpose_into_matmul
// CHECK: linalg.transpose
// CHECK: linalg.matmul
func.func @transpose_into_matmul(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%t, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A per-channel (C) -> (C, 1, 1) expansion read at index 0 of its unit dims
// (a batch norm's scale, in channels-last order) is read unexpanded, so that
// a vector along C is one contiguous read.
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @unit_expanded_input
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[C]], #{{.*}}]{{.*}} ins(%arg0, %arg1 : tensor<1x4x4x8xf32>, tensor<8xf32>)
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3, 0, 0)>
func.func @unit_expanded_input(%x: tensor<1x4x4x8xf32>, %s: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %e = tensor.expand_shape %s [[0, 1, 2]] output_shape [8, 1, 1] : tensor<8xf32> into tensor<8x1x1xf32>
  %o = tensor.empty() : tensor<1x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %e : tensor<1x4x4x8xf32>, tensor<8x1x1xf32>) outs(%o : tensor<1x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

// A unit dim read by a loop (here the only operand giving the reduction its
// extent) is not an index-0 broadcast: the expansion stays.
// CHECK-LABEL: func.func @unit_expanded_input_read_by_loop
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
#r0 = affine_map<(d0, d1) -> (d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @unit_expanded_input_read_by_loop(%s: tensor<f32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %e = tensor.expand_shape %s [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %r = linalg.generic {indexing_maps = [#r0, #r1, #r1], iterator_types = ["parallel", "reduction"]} ins(%e, %x : tensor<1xf32>, tensor<3xf32>) outs(%x : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A per-row value (its one dim not the innermost loop) stays expanded: read
// unexpanded across the vector it would lower to one broadcast per element.
// CHECK-LABEL: func.func @unit_expanded_per_row
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d0, 0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
func.func @unit_expanded_per_row(%s: tensor<4xf32>, %x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %e = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %o = tensor.empty() : tensor<4x32xf32>
  %r = linalg.generic {indexing_maps = [#row, #all, #all], iterator_types = ["parallel", "parallel"]} ins(%e, %x : tensor<4x1xf32>, tensor<4x32xf32>) outs(%o : tensor<4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.subf %b, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// A panel matmul (poptorch-pack-weights) keeps its producers and its
// result: the relu before it is not fused into it, and the row sum after it
// (with the bias + relu fused in) reads the collapsed result with its one
// reduction over 64 columns; folding the collapse into it would split the
// reduction into 4 x 16.
// CHECK-LABEL: func.func @panel_matmul
// CHECK: %[[RELU:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x32xf32>)
// CHECK: arith.maximumf
// CHECK: %[[MM:.+]] = linalg.generic {{.*}} ins(%[[RELU]], %arg1 : tensor<8x32xf32>, tensor<4x32x16xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[MM]] {{\[}}[0], [1, 2]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg2, %[[FLAT]] : tensor<64xf32>, tensor<8x64xf32>)
#a = affine_map<(m, p, j, k) -> (m, k)>
#w = affine_map<(m, p, j, k) -> (p, k, j)>
#c = affine_map<(m, p, j, k) -> (m, p, j)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @panel_matmul(%x: tensor<8x32xf32>, %w: tensor<4x32x16xf32>, %b: tensor<64xf32>) -> tensor<8xf32> {
  %cst = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<8x32xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x32xf32>) outs(%ex : tensor<8x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = arith.maximumf %p, %cst : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x4x16xf32>
  %f3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  %mm = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%relu, %w : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%f3 : tensor<8x4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x4x16xf32>
  %flat = tensor.collapse_shape %mm [[0], [1, 2]] : tensor<8x4x16xf32> into tensor<8x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %biased = linalg.generic {indexing_maps = [#col, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b, %flat : tensor<64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %0 = arith.addf %p, %q : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  } -> tensor<8x64xf32>
  %er = tensor.empty() : tensor<8xf32>
  %fr = linalg.fill ins(%cst : f32) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%biased : tensor<8x64xf32>) outs(%fr : tensor<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %0 = arith.addf %p, %o : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// An elementwise op copied into the interior of a zero-padded tensor (a
// batch norm and ReLU6 before a depthwise convolution) computes into the
// copy's destination: no linalg.copy, one generic that reads the input and
// writes the padded tensor's interior (elementwise fusion then gives the
// generic, which does not read its init, a tensor.empty; distinct-buffers
// puts it back in the fill's slice).
// CHECK-LABEL: func.func @elementwise_into_padded
// CHECK-NOT: linalg.copy
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: arith.minimumf
// CHECK: tensor.insert_slice %[[R]] into %[[FILL]][0, 1, 1] [4, 8, 8]
// CHECK-NOT: linalg.copy
func.func @elementwise_into_padded(%x: tensor<4x8x8xf32>) -> tensor<4x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x8x8xf32>) outs(%e : tensor<4x8x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %0 = arith.maximumf %p, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  } -> tensor<4x8x8xf32>
  %pe = tensor.empty() : tensor<4x10x10xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x10x10xf32>) -> tensor<4x10x10xf32>
  %interior = tensor.extract_slice %fill[0, 1, 1] [4, 8, 8] [1, 1, 1] : tensor<4x10x10xf32> to tensor<4x8x8xf32>
  %c = linalg.copy ins(%r : tensor<4x8x8xf32>) outs(%interior : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %p = tensor.insert_slice %c into %fill[0, 1, 1] [4, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> into tensor<4x10x10xf32>
  return %p : tensor<4x10x10xf32>
}

// -----

// A view of an operand in the layout a contraction reads it in (A as
// M x (K / 2) x 2 for a bf16 weight in pairs of rows), here behind the
// collapse of a 3-D activation: the elementwise producer (a GELU's tanh)
// keeps its own shape instead of iterating innermost over the pair.
// CHECK-LABEL: func.func @pair_view_of_elementwise
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<1x8x64xbf16>)
// CHECK: math.tanh
// CHECK: tensor.expand_shape {{.*}} into tensor<1x8x32x2xbf16>
#pA = affine_map<(m, p, j, kp, kr) -> (m, kp, kr)>
#pB = affine_map<(m, p, j, kp, kr) -> (p, kp, j, kr)>
#pC = affine_map<(m, p, j, kp, kr) -> (m, p, j)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pair_view_of_elementwise(%x: tensor<1x8x64xbf16>, %w: tensor<2x32x32x2xbf16>) -> tensor<8x2x32xf32> {
  %e = tensor.empty() : tensor<1x8x64xbf16>
  %t = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x64xbf16>) outs(%e : tensor<1x8x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %0 = math.tanh %in : bf16
    linalg.yield %0 : bf16
  } -> tensor<1x8x64xbf16>
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<1x8x64xbf16> into tensor<8x64xbf16>
  %a = tensor.expand_shape %c [[0], [1, 2]] output_shape [8, 32, 2] : tensor<8x64xbf16> into tensor<8x32x2xbf16>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<8x2x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
  %r = linalg.generic {indexing_maps = [#pA, #pB, #pC], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %w : tensor<8x32x2xbf16>, tensor<2x32x32x2xbf16>) outs(%acc : tensor<8x2x32xf32>) {
  ^bb0(%in: bf16, %in_1: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_1 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<8x2x32xf32>
  return %r : tensor<8x2x32xf32>
}

// -----

// A producer with more than 8 inputs (a depthwise convolution's window taps)
// is not fused into a consumer that reads it through a permutation (an
// NCHW -> NHWC permute fused into the cast that starts a layer norm): every
// tap would become a transposed read, each tiled in squares transposed in
// registers. Fewer inputs fuse.
// CHECK-LABEL: func.func @many_inputs_read_transposed
// CHECK: %[[TAPS:.+]] = linalg.generic {{.*}}ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8 :
// CHECK: linalg.generic {{.*}}ins(%[[TAPS]] : tensor<1x4x8x8xf32>) outs(%{{.*}} : tensor<1x8x8x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%arg0, %arg1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) outs(%{{.*}} : tensor<1x8x8x4xf32>)
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#fromNhwc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
func.func @many_inputs_read_transposed(%x0: tensor<1x4x8x8xf32>, %x1: tensor<1x4x8x8xf32>, %x2: tensor<1x4x8x8xf32>, %x3: tensor<1x4x8x8xf32>, %x4: tensor<1x4x8x8xf32>, %x5: tensor<1x4x8x8xf32>, %x6: tensor<1x4x8x8xf32>, %x7: tensor<1x4x8x8xf32>, %x8: tensor<1x4x8x8xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) {
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %taps = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw, #nchw, #nchw, #nchw, #nchw, #nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7, %x8 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %a5: f32, %a6: f32, %a7: f32, %a8: f32, %out: f32):
    %s0 = arith.addf %a0, %a1 : f32
    %s1 = arith.addf %s0, %a2 : f32
    %s2 = arith.addf %s1, %a3 : f32
    %s3 = arith.addf %s2, %a4 : f32
    %s4 = arith.addf %s3, %a5 : f32
    %s5 = arith.addf %s4, %a6 : f32
    %s6 = arith.addf %s5, %a7 : f32
    %s7 = arith.addf %s6, %a8 : f32
    linalg.yield %s7 : f32
  } -> tensor<1x4x8x8xf32>
  %o = tensor.empty() : tensor<1x8x8x4xf32>
  %t = linalg.generic {indexing_maps = [#fromNhwc, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%taps : tensor<1x4x8x8xf32>) outs(%o : tensor<1x8x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x8x8x4xf32>
  %few = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x0, %x1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %s = arith.mulf %a0, %a1 : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x8xf32>
  %t2 = linalg.generic {indexing_maps = [#fromNhwc, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%few : tensor<1x4x8x8xf32>) outs(%o : tensor<1x8x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x8x8x4xf32>
  return %t, %t2 : tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>
}

// -----

// A per-channel producer with a math function (a batch norm's
// rsqrt(var + eps)) read by a channels-last image through a broadcast is
// not fused into it: it would compute the rsqrt once per pixel and channel
// instead of once per channel. The multiply-add after the broadcast fuses.
// CHECK-LABEL: func.func @per_channel_rsqrt
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK: math.rsqrt
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[S]] : tensor<2x5x16xf32>, tensor<16xf32>)
// CHECK-NOT: math.rsqrt
// CHECK: arith.mulf
// CHECK: return
func.func @per_channel_rsqrt(%x: tensor<2x5x16xf32>, %var: tensor<16xf32>) -> tensor<2x5x16xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<2x5x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : tensor<2x5x16xf32>, tensor<16xf32>) outs(%e : tensor<2x5x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}
