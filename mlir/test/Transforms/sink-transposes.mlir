// poptorch-sink-transposes: a transpose moves below the ops that read it,
// which then compute in its input's layout, until it meets the op that
// wants the other layout back and the two cancel.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-sink-transposes), canonicalize, cse)' | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#tonhwc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>

// A convolution's channels-last result, transposed to NCHW, a batch norm's
// scale and a ReLU, then the next convolution's channels-last copy: all of
// it computes channels-last (the scale read along the innermost dim) and no
// transpose is left.
// CHECK-LABEL: func.func @conv_scale_relu_conv
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[C:map[0-9]*]], #[[ID]]]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x5x6x16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<2x5x6x16xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK-SAME: tensor<2x5x6x16xf32>
// CHECK: arith.maximumf
// CHECK-NOT: linalg.transpose
// CHECK: return %{{.*}} : tensor<2x5x6x16xf32>
func.func @conv_scale_relu_conv(%conv: tensor<2x5x6x16xf32>, %scale: tensor<16xf32>) -> tensor<2x5x6x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%conv : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %bn = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t, %scale : tensor<2x16x5x6xf32>, tensor<16xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x16x5x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn : tensor<2x16x5x6xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x16x5x6xf32>
  %e2 = tensor.empty() : tensor<2x5x6x16xf32>
  %nhwc = linalg.generic {indexing_maps = [#tonhwc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%relu : tensor<2x16x5x6xf32>) outs(%e2 : tensor<2x5x6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x5x6x16xf32>
  return %nhwc : tensor<2x5x6x16xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tonhwc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>

// A residual add of two branches that each scale a transposed convolution
// result: the add counts the branch that has not moved yet as transposed
// too (its scale reads a transpose), so both branches and the add compute
// channels-last, whichever branch moves first.
// CHECK-LABEL: func.func @residual_add
// CHECK-NOT: linalg.transpose
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// CHECK: return %{{.*}} : tensor<2x5x6x16xf32>
func.func @residual_add(%a: tensor<2x5x6x16xf32>, %b: tensor<2x5x6x16xf32>) -> tensor<2x5x6x16xf32> {
  %cst = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %ta = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %tb = linalg.transpose ins(%b : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %sa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta : tensor<2x16x5x6xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x16x5x6xf32>
  %sb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%tb : tensor<2x16x5x6xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x16x5x6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sa, %sb : tensor<2x16x5x6xf32>, tensor<2x16x5x6xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x16x5x6xf32>
  %e2 = tensor.empty() : tensor<2x5x6x16xf32>
  %nhwc = linalg.generic {indexing_maps = [#tonhwc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<2x16x5x6xf32>) outs(%e2 : tensor<2x5x6x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x5x6x16xf32>
  return %nhwc : tensor<2x5x6x16xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// An elementwise op whose result leaves the function in NCHW keeps its
// order and reads the transpose: moved below it, the transpose would only
// be written after it instead of read fused into it.
// CHECK-LABEL: func.func @result_leaves_in_nchw
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[T]] : tensor<2x16x5x6xf32>)
func.func @result_leaves_in_nchw(%a: tensor<2x5x6x16xf32>) -> tensor<2x16x5x6xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<2x16x5x6xf32>) outs(%e : tensor<2x16x5x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x16x5x6xf32>
  return %r : tensor<2x16x5x6xf32>
}

// -----

// A batch norm's statistics: the sum over (N, H, W) of a transposed
// channels-last result, read through an expand_shape, becomes a sum over
// the channels-last tensor itself with the channels innermost.
// CHECK-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
// CHECK-LABEL: func.func @channel_sums
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 5, 6, 1, 16]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel"]}
func.func @channel_sums(%a: tensor<2x5x6x16xf32>) -> tensor<1x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %x = tensor.expand_shape %t [[0], [1, 2], [3], [4]] output_shape [2, 1, 16, 5, 6] : tensor<2x16x5x6xf32> into tensor<2x1x16x5x6xf32>
  %z = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%z : tensor<1x16xf32>) -> tensor<1x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x1x16x5x6xf32>) outs(%f : tensor<1x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  return %s : tensor<1x16xf32>
}

// -----

// A padded copy read by window slices (a pool's, a depthwise
// convolution's) keeps its transpose before the padding: moved below it,
// the whole padded tensor would be transposed for the windows.
// CHECK-LABEL: func.func @padded_for_windows
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: tensor.insert_slice %[[T]]
func.func @padded_for_windows(%a: tensor<2x5x6x16xf32>) -> tensor<2x16x5x6xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %pe = tensor.empty() : tensor<2x16x7x8xf32>
  %p = linalg.fill ins(%cst : f32) outs(%pe : tensor<2x16x7x8xf32>) -> tensor<2x16x7x8xf32>
  %ins = tensor.insert_slice %t into %p[0, 0, 1, 1] [2, 16, 5, 6] [1, 1, 1, 1] : tensor<2x16x5x6xf32> into tensor<2x16x7x8xf32>
  %w = tensor.extract_slice %ins[0, 0, 2, 2] [2, 16, 5, 6] [1, 1, 1, 1] : tensor<2x16x7x8xf32> to tensor<2x16x5x6xf32>
  return %w : tensor<2x16x5x6xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tonhwc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>

// A padded copy read elementwise (the next channels-last convolution's
// input) takes the transpose: the interior is copied in the input's layout
// into a padded tensor of that layout (by a linalg.copy, which is
// vectorized, not a bare insert_slice, which bufferizes into a strided
// memref.copy).
// CHECK-LABEL: func.func @padded_then_channels_last
// CHECK-NOT: linalg.transpose
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<2x7x8x16xf32>
// CHECK: %[[I:.*]] = tensor.extract_slice %[[F]][0, 1, 1, 0] [2, 5, 6, 16] [1, 1, 1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%arg0 : tensor<2x5x6x16xf32>) outs(%[[I]] : tensor<2x5x6x16xf32>)
// CHECK: tensor.insert_slice %[[C]] into %[[F]][0, 1, 1, 0] [2, 5, 6, 16] [1, 1, 1, 1] : tensor<2x5x6x16xf32> into tensor<2x7x8x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %{{.*}} : tensor<2x7x8x16xf32>
func.func @padded_then_channels_last(%a: tensor<2x5x6x16xf32>) -> tensor<2x7x8x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %pe = tensor.empty() : tensor<2x16x7x8xf32>
  %p = linalg.fill ins(%cst : f32) outs(%pe : tensor<2x16x7x8xf32>) -> tensor<2x16x7x8xf32>
  %ins = tensor.insert_slice %t into %p[0, 0, 1, 1] [2, 16, 5, 6] [1, 1, 1, 1] : tensor<2x16x5x6xf32> into tensor<2x16x7x8xf32>
  %e2 = tensor.empty() : tensor<2x7x8x16xf32>
  %nhwc = linalg.generic {indexing_maps = [#tonhwc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ins : tensor<2x16x7x8xf32>) outs(%e2 : tensor<2x7x8x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x7x8x16xf32>
  return %nhwc : tensor<2x7x8x16xf32>
}

// -----

// Transposes compose; a collapse that keeps each group contiguous in the
// input moves above the transpose.
// CHECK-LABEL: func.func @compose_and_collapse
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3]] : tensor<2x5x6x16xf32> into tensor<2x30x16xf32>
// CHECK: linalg.transpose ins(%[[C]] : tensor<2x30x16xf32>) outs(%{{.*}} : tensor<16x2x30xf32>) permutation = [2, 0, 1]
// CHECK-NOT: linalg.transpose
func.func @compose_and_collapse(%a: tensor<2x5x6x16xf32>) -> tensor<16x2x30xf32> {
  %e = tensor.empty() : tensor<2x16x5x6xf32>
  %t = linalg.transpose ins(%a : tensor<2x5x6x16xf32>) outs(%e : tensor<2x16x5x6xf32>) permutation = [0, 3, 1, 2]
  %e2 = tensor.empty() : tensor<16x2x5x6xf32>
  %t2 = linalg.transpose ins(%t : tensor<2x16x5x6xf32>) outs(%e2 : tensor<16x2x5x6xf32>) permutation = [1, 0, 2, 3]
  %c = tensor.collapse_shape %t2 [[0], [1], [2, 3]] : tensor<16x2x5x6xf32> into tensor<16x2x30xf32>
  return %c : tensor<16x2x30xf32>
}
