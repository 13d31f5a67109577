// poptorch-tile-and-vectorize: register tiles for contractions with the
// elementwise consumer fused on the accumulator, peeled partial tiles,
// vectorized elementwise ops.
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize --canonicalize --cse | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=pack-rhs=false --canonicalize --cse | FileCheck %s --check-prefix=NOPACK
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=vector-bits=256 --canonicalize --cse | FileCheck %s --check-prefix=AVX2
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=min-parallel-cost=0 --canonicalize --cse | FileCheck %s --check-prefix=PAR
// RUN: not poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=vector-bits=128 2>&1 | FileCheck %s --check-prefix=BADBITS
// BADBITS: vector-bits must be 512 (AVX-512) or 256 (AVX2), not 128

// An 8x32 accumulator block stays in registers across the k loop (k unrolled
// by 8 into FMAs); bias + relu run on it before the single store. The column
// blocks are the outer loop (a k x 32 block of B stays in cache while the
// row blocks of A pass).
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} step %c32
// CHECK: scf.for {{.*}} step %c8
// CHECK: %[[ACC:.*]] = scf.for {{.*}} step %c8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield {{.*}} : vector<8x32xf32>
// CHECK: arith.addf {{.*}}, %[[ACC]] : vector<8x32xf32>
// CHECK: arith.maximumf {{.*}} : vector<8x32xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: vector.transfer_write
// CHECK: return
// With AVX2's 16 registers the block is 6 rows by 16 columns (12
// accumulators), 4 rows for the remainder of 16.
// AVX2-LABEL: func.func @matmul_bias_relu
// AVX2: scf.for {{.*}} step %c16
// AVX2: scf.for {{.*}} to %c12 step %c6
// AVX2: scf.for {{.*}} step %c8 iter_args(%{{.*}} = %{{.*}}) -> (vector<6x16xf32>)
// AVX2-COUNT-48: vector.fma {{.*}} : vector<16xf32>
// AVX2: arith.maximumf {{.*}} : vector<6x16xf32>
// AVX2: -> (vector<4x16xf32>)
func.func @matmul_bias_relu(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias, %m : tensor<64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %cst : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Odd sizes: the tile loops are peeled inner loop first, so every tile is
// static and vectorized without masks: full 8x32 tiles, the 1x32 row
// remainder, the 8x1 column remainder and the 1x1 corner.
// CHECK-LABEL: func.func @matmul_odd
// CHECK-NOT: linalg.matmul
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c8
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.mask
// CHECK: -> (vector<1x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c8
// CHECK: -> (vector<8x1xf32>)
// CHECK: -> (vector<1x1xf32>)
// CHECK-NOT: linalg.matmul
func.func @matmul_odd(%a: tensor<17x33xf32>, %b: tensor<33x65xf32>) -> tensor<17x65xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<17x65xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<17x65xf32>) -> tensor<17x65xf32>
  %m = linalg.matmul ins(%a, %b : tensor<17x33xf32>, tensor<33x65xf32>) outs(%f : tensor<17x65xf32>) -> tensor<17x65xf32>
  return %m : tensor<17x65xf32>
}

// -----

// batch_matmul: one batch per tile, same register block.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: scf.for {{.*}} to %c4 step %c1
// CHECK: -> (vector<1x8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
func.func @batch_matmul(%a: tensor<4x16x32xf32>, %b: tensor<4x32x64xf32>) -> tensor<4x16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x64xf32>) outs(%f : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  return %m : tensor<4x16x64xf32>
}

// -----

// Elementwise: rows of 64 lanes; the row loop is the only loop.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.for {{.*}} to %c8 step %c1
// CHECK: math.exp {{.*}} : vector<1x64xf32>
// CHECK-NOT: linalg.
func.func @elementwise(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// Convolution: one output row and 8 output channels per tile, decomposed
// to a 1-D convolution and vectorized.
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d
// CHECK: vector.fma
func.func @conv(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %init: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// -----

// B rows 16 KB apart (1 KB or more): each column block's 64 x 32 panel of B is copied into
// a contiguous buffer (one vector per row) before the row blocks that reuse
// it, and the micro-kernel reads B from the panel. Split among the workers
// (PAR), each task packs the panel of its columns: B is then a slice of the
// task's columns, whose own rows are only 32 wide.
// CHECK-LABEL: func.func @matmul_packed_panel
// CHECK: scf.for %[[J:.*]] = %c0 to %c4096 step %c32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x32xf32>
// CHECK: %[[P:.*]] = scf.for %[[K:.*]] = %c0 to %c64 step %c1 iter_args(%[[A:.*]] = %[[E]])
// CHECK: %[[V:.*]] = vector.transfer_read %{{.*}}[%[[K]], %[[J]]]{{.*}} : tensor<64x4096xf32>, vector<1x32xf32>
// CHECK: vector.transfer_write %[[V]], %[[A]][%[[K]], %c0]
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c8
// CHECK: vector.transfer_read %[[P]]{{.*}} : tensor<64x32xf32>, vector<8x32xf32>
// NOPACK-LABEL: func.func @matmul_packed_panel
// NOPACK-NOT: tensor<64x32xf32>
// NOPACK: vector.transfer_read {{.*}} : tensor<64x4096xf32>, vector<8x32xf32>
// PAR-LABEL: func.func @matmul_packed_panel
// PAR: scf.forall (%[[J:.*]]) = (0) to (4096) step (32)
// PAR: %[[E:.*]] = tensor.empty() : tensor<64x32xf32>
// PAR: %[[P:.*]] = scf.for %[[K:.*]] = %c0 to %c64 step %c1 iter_args(%[[A:.*]] = %[[E]])
// PAR: vector.transfer_read %{{.*}}[%[[K]], %[[J]]]{{.*}} : tensor<64x4096xf32>, vector<1x32xf32>
// PAR: scf.for {{.*}} = %c0 to %c16 step %c8
// PAR: vector.transfer_read %[[P]]{{.*}} : tensor<64x32xf32>, vector<8x32xf32>
func.func @matmul_packed_panel(%a: tensor<16x64xf32>, %b: tensor<64x4096xf32>) -> tensor<16x4096xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4096xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x4096xf32>) outs(%f : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  return %m : tensor<16x4096xf32>
}

// -----

// Columns that 32 does not divide (a vocabulary head): the full column tiles
// are peeled from the 17-column remainder before packing, so both panels
// have static shapes and both micro-kernels are vectorized.
// CHECK-LABEL: func.func @matmul_packed_panel_remainder
// CHECK: scf.for %{{.*}} = %c0 to %c4096 step %c32
// CHECK: tensor.empty() : tensor<64x32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: tensor.empty() : tensor<64x17xf32>
// CHECK: vector.fma {{.*}} : vector<17xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul_packed_panel_remainder(%a: tensor<16x64xf32>, %b: tensor<64x4113xf32>) -> tensor<16x4113xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4113xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<16x4113xf32>) -> tensor<16x4113xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x4113xf32>) outs(%f : tensor<16x4113xf32>) -> tensor<16x4113xf32>
  return %m : tensor<16x4113xf32>
}

// -----

// A transpose reads 16x16 blocks along the input's rows (16 contiguous
// loads) and transposes them in registers, instead of loading each element
// of a vector from another row.
// CHECK-LABEL: func.func @transpose_blocks
// CHECK: scf.for {{.*}} step %c16
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, true, true]} : tensor<128x12x64xf32>, vector<16x1x16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<1x16x16xf32>, tensor<12x64x128xf32>
func.func @transpose_blocks(%a: tensor<128x12x64xf32>) -> tensor<12x64x128xf32> {
  %e = tensor.empty() : tensor<12x64x128xf32>
  %t = linalg.transpose ins(%a : tensor<128x12x64xf32>) outs(%e : tensor<12x64x128xf32>) permutation = [1, 2, 0]
  return %t : tensor<12x64x128xf32>
}

// -----

// Trailing unit dims are no vector dims where the next loop is the fastest
// dim of the inputs too: a copy into (64, 8, 96, 1) runs its vectors along
// the 96 (contiguous in both tensors; with the unit loop as the vector, one
// scalar at a time). A transpose into (96, 64, 1), whose input varies
// fastest along the 96, keeps the unit vector (along the 64 it would be a
// gather of one load per element).
// CHECK-LABEL: func.func @unit_inner_copy
// CHECK: vector.transfer_read {{.*}} : tensor<8x1x64x96xf32>, vector<1x1x64x1xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x64x1xf32>, tensor<64x8x96x1xf32>
func.func @unit_inner_copy(%a: tensor<8x1x64x96xf32>) -> tensor<64x8x96x1xf32> {
  %e = tensor.empty() : tensor<64x8x96x1xf32>
  %t = linalg.transpose ins(%a : tensor<8x1x64x96xf32>) outs(%e : tensor<64x8x96x1xf32>) permutation = [2, 0, 3, 1]
  return %t : tensor<64x8x96x1xf32>
}
// CHECK-LABEL: func.func @unit_inner_transpose
// CHECK: vector.transfer_read {{.*}} : tensor<1x64x96xf32>, vector<1x1x1xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x1xf32>, tensor<96x64x1xf32>
func.func @unit_inner_transpose(%a: tensor<1x64x96xf32>) -> tensor<96x64x1xf32> {
  %e = tensor.empty() : tensor<96x64x1xf32>
  %t = linalg.transpose ins(%a : tensor<1x64x96xf32>) outs(%e : tensor<96x64x1xf32>) permutation = [2, 1, 0]
  return %t : tensor<96x64x1xf32>
}
// A convolution kernel's re-layout (F, C, 3, 3) -> (3, 3, C, F): 16x16
// squares over C and F, with the 3 x 3 window as the innermost loops (the
// rows a square reads stay in cache for all nine), transposed in registers.
// CHECK-LABEL: func.func @weight_relayout
// CHECK: scf.for {{.*}} to %c32 step %c16
// CHECK: scf.for {{.*}} to %c64 step %c16
// CHECK: scf.for {{.*}} to %c3 step %c1
// CHECK: scf.for {{.*}} to %c3 step %c1
// CHECK: vector.transfer_read {{.*}} : tensor<64x32x3x3xf32>, vector<16x16x1x1xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<1x1x16x16xf32>, tensor<3x3x32x64xf32>
func.func @weight_relayout(%a: tensor<64x32x3x3xf32>) -> tensor<3x3x32x64xf32> {
  %e = tensor.empty() : tensor<3x3x32x64xf32>
  %t = linalg.transpose ins(%a : tensor<64x32x3x3xf32>) outs(%e : tensor<3x3x32x64xf32>) permutation = [2, 3, 1, 0]
  return %t : tensor<3x3x32x64xf32>
}
// A depthwise convolution's taps times per-channel weights: a weight that
// does not vary along the vector (the width) is one element broadcast, not
// a transposing read. The vectors run along the width, one channel at a
// time; 16x16 squares over channels and width made every weight a
// broadcast transposed in registers (a 7x7 depthwise convolution took LLVM
// 5 s).
// CHECK-LABEL: func.func @per_channel_operand
// CHECK-NOT: vector<1x16x1x16xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<1x32x8x64xf32>, vector<1x1x1x64xf32>
// CHECK-NOT: vector<1x16x1x16xf32>
// CHECK: return
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @per_channel_operand(%x: tensor<1x32x8x64xf32>, %w: tensor<32xf32>) -> tensor<1x32x8x64xf32> {
  %e = tensor.empty() : tensor<1x32x8x64xf32>
  %r = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %w : tensor<1x32x8x64xf32>, tensor<32xf32>) outs(%e : tensor<1x32x8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x32x8x64xf32>
  return %r : tensor<1x32x8x64xf32>
}
// The window of a depthwise convolution with a 1x1 output, a slice of
// (2, 144, 3, 3): the channels are 9 elements apart, so no vector runs along
// them (64-element gathers of it took LLVM 47 s for a small MobileNetV2).
// CHECK-LABEL: func.func @unit_window
// CHECK-NOT: vector<1x64x1x1xf32>
// CHECK: return
func.func @unit_window(%a: tensor<2x144x3x3xf32>) -> tensor<2x144x1x1xf32> {
  %s = tensor.extract_slice %a[0, 0, 0, 0] [2, 144, 1, 1] [1, 1, 2, 2] : tensor<2x144x3x3xf32> to tensor<2x144x1x1xf32>
  %e = tensor.empty() : tensor<2x144x1x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x144x1x1xf32>) outs(%e : tensor<2x144x1x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<2x144x1x1xf32>
  return %r : tensor<2x144x1x1xf32>
}

// -----

// A 3-D convolution as a generic (window reads d3 + d7, ...) is no matmul:
// it and its consumer are tiled like any generic, one output row at a time.
// Tiled as a contraction, its window loops were left whole and the consumer
// became one vector of 2688 elements (minutes of LLVM instruction selection).
// CHECK-LABEL: func.func @conv3d_generic
// CHECK-NOT: vector<2x1x4x8x7x6x
// CHECK: arith.truncf {{.*}} : vector<1x1x1x1x1x6xf32> to vector<1x1x1x1x1x6xbf16>
#in3 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d6, d3 + d7, d4 + d8, d5 + d9)>
#w3 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d1, d2, d6, d7, d8, d9)>
#out3 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d2, d3, d4, d5)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
func.func @conv3d_generic(%x: tensor<2x1x2x9x8x7xf32>, %w: tensor<1x4x2x2x2x2xf32>, %init: tensor<2x1x4x8x7x6xf32>) -> tensor<2x1x4x8x7x6xbf16> {
  %c = linalg.generic {indexing_maps = [#in3, #w3, #out3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<2x1x2x9x8x7xf32>, tensor<1x4x2x2x2x2xf32>) outs(%init : tensor<2x1x4x8x7x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x1x4x8x7x6xf32>
  %e = tensor.empty() : tensor<2x1x4x8x7x6xbf16>
  %t = linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x1x4x8x7x6xf32>) outs(%e : tensor<2x1x4x8x7x6xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x1x4x8x7x6xbf16>
  return %t : tensor<2x1x4x8x7x6xbf16>
}

// -----

// A contraction that no register tile divides (20 rows in blocks of 8, a
// 4113-column vocabulary head in blocks of 32) is split into its whole
// column tiles, which run in parallel with static task shapes, and the
// 17-column rest. Each part fills its own slice of the result inside its
// tiles (the accumulator starts as a zero vector), with no pass of its own.
// PAR-LABEL: func.func @matmul_split_for_parallel
// PAR-NOT: linalg.fill
// PAR: %[[E:.*]] = tensor.empty() : tensor<20x4113xf32>
// PAR: %[[W:.*]] = tensor.extract_slice %[[E]][0, 0] [20, 4096]
// PAR: %[[P:.*]] = scf.forall (%{{.*}}) = (0) to (4096) step (32) shared_outs(%{{.*}} = %[[W]])
// PAR: vector.fma {{.*}} : vector<32xf32>
// PAR: %[[I:.*]] = tensor.insert_slice %[[P]] into %[[E]][0, 0] [20, 4096]
// PAR: tensor.extract_slice %[[I]][0, 4096] [20, 17]
// PAR: vector.fma {{.*}} : vector<17xf32>
// PAR-NOT: linalg.fill
// PAR: return
func.func @matmul_split_for_parallel(%a: tensor<20x64xf32>, %b: tensor<64x4113xf32>) -> tensor<20x4113xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x4113xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<20x4113xf32>) -> tensor<20x4113xf32>
  %m = linalg.matmul ins(%a, %b : tensor<20x64xf32>, tensor<64x4113xf32>) outs(%f : tensor<20x4113xf32>) -> tensor<20x4113xf32>
  return %m : tensor<20x4113xf32>
}

// -----

// A channels-last convolution packs the weights of each block of 32 output
// channels (3 x 3 x 64 x 32, rows 512 channels apart in the filter) once,
// before the loops over output pixels that reuse them.
// CHECK-LABEL: func.func @conv_nhwc_packed_weights
// CHECK: scf.for %[[F:.*]] = %c0 to %c512 step %c32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x3x64x32xf32>
// CHECK: %[[P:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[E]]) -> (tensor<3x3x64x32xf32>)
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[F]]]{{.*}} : tensor<3x3x64x512xf32>, vector<1x1x1x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c7 step %c1
// CHECK: vector.transfer_read %[[P]]{{.*}} : tensor<3x3x64x32xf32>, vector<1x8x32xf32>
// NOPACK-LABEL: func.func @conv_nhwc_packed_weights
// NOPACK-NOT: tensor<3x3x64x32xf32>
// NOPACK: vector.transfer_read {{.*}} : tensor<3x3x64x512xf32>, vector<1x8x32xf32>
func.func @conv_nhwc_packed_weights(%x: tensor<1x9x9x64xf32>, %w: tensor<3x3x64x512xf32>) -> tensor<1x7x7x512xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x9x9x64xf32>, tensor<3x3x64x512xf32>) outs(%f : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  return %c : tensor<1x7x7x512xf32>
}

// -----

// AVX2 (6-row blocks): a block of fewer than 4 output pixels leaves the FMA
// ports waiting on their latency, so a width of 7 takes blocks of 4 and 3
// (not 6 and 1) and a width of 14 blocks of 5 and 4 (not 6, 6 and 2); a
// width of 56 keeps 6-row blocks and a block of 2 (4-row blocks would save
// under 1/16).
// AVX2-LABEL: func.func @conv_nhwc_block_rows
// AVX2-DAG: scf.for {{.*}} -> (vector<1x4x16xf32>)
// AVX2-DAG: scf.for {{.*}} -> (vector<1x3x16xf32>)
// AVX2-DAG: scf.for {{.*}} -> (vector<1x5x16xf32>)
// AVX2-DAG: scf.for {{.*}} -> (vector<1x6x16xf32>)
// AVX2-DAG: scf.for {{.*}} -> (vector<1x2x16xf32>)
// AVX2-NOT: vector<1x1x16xf32>
// AVX2: return
func.func @conv_nhwc_block_rows(%x7: tensor<1x9x9x16xf32>, %x14: tensor<1x16x16x16xf32>, %x56: tensor<1x3x58x16xf32>, %w: tensor<3x3x16x16xf32>)
    -> (tensor<1x7x7x16xf32>, tensor<1x14x14x16xf32>, tensor<1x1x56x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e7 = tensor.empty() : tensor<1x7x7x16xf32>
  %f7 = linalg.fill ins(%cst : f32) outs(%e7 : tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32>
  %c7 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x7, %w : tensor<1x9x9x16xf32>, tensor<3x3x16x16xf32>) outs(%f7 : tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32>
  %e14 = tensor.empty() : tensor<1x14x14x16xf32>
  %f14 = linalg.fill ins(%cst : f32) outs(%e14 : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %c14 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x14, %w : tensor<1x16x16x16xf32>, tensor<3x3x16x16xf32>) outs(%f14 : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %e56 = tensor.empty() : tensor<1x1x56x16xf32>
  %f56 = linalg.fill ins(%cst : f32) outs(%e56 : tensor<1x1x56x16xf32>) -> tensor<1x1x56x16xf32>
  %c56 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x56, %w : tensor<1x3x58x16xf32>, tensor<3x3x16x16xf32>) outs(%f56 : tensor<1x1x56x16xf32>) -> tensor<1x1x56x16xf32>
  return %c7, %c14, %c56 : tensor<1x7x7x16xf32>, tensor<1x14x14x16xf32>, tensor<1x1x56x16xf32>
}

// -----

// A matmul reading its weight in panels (poptorch-pack-weights): 8 rows by
// 4 panels of 16 columns. Each register tile reads one panel row after
// another (16 contiguous elements each) and is a 6 x 16 (and a 2 x 16)
// block of FMAs, with the bias + relu consumer on it: its unit panel loop
// is dropped, so that it vectorizes as the matmul it is, not as a
// horizontal sum per output element.
// AVX2-LABEL: func.func @panel_matmul
// AVX2: scf.for {{.*}} -> (vector<6x16xf32>)
// AVX2: vector.transfer_read %arg1[%{{.+}}, %{{.+}}, %c0]{{.*}} : tensor<4x64x16xf32>, vector<8x16xf32>
// AVX2: vector.fma {{.*}} : vector<16xf32>
// AVX2: arith.maximumf {{.*}} : vector<6x1x16xf32>
// AVX2: scf.for {{.*}} -> (vector<2x16xf32>)
// AVX2-NOT: vector.reduction
// AVX2: return
#a = affine_map<(m, p, j, k) -> (m, k)>
#p = affine_map<(m, p, j, k) -> (p, k, j)>
#c = affine_map<(m, p, j, k) -> (m, p, j)>
#bias = affine_map<(m, p, j) -> (p, j)>
#id3 = affine_map<(m, p, j) -> (m, p, j)>
func.func @panel_matmul(%x: tensor<8x64xf32>, %w: tensor<4x64x16xf32>, %b: tensor<4x16xf32>) -> tensor<8x4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  %mm = linalg.generic {indexing_maps = [#a, #p, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<4x64x16xf32>) outs(%f : tensor<8x4x16xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x4x16xf32>
  %r = linalg.generic {indexing_maps = [#bias, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %mm : tensor<4x16xf32>, tensor<8x4x16xf32>) outs(%e : tensor<8x4x16xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %0 = arith.addf %in, %v : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  } -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}

// -----

// A panel matmul (poptorch-pack-weights: B as (N / nr) x K x nr panels): the
// register tile's fill writes the tile's shape (8x1x32), the contraction
// reads it without the unit panel loop (8x32). The accumulator starts from
// the zero constant, and the tile is written once, after the reduction: no
// zeros written and read back first (bufferized, that tile was a heap
// allocation filled and freed around every reduction).
// CHECK-LABEL: func.func @panel_matmul_accumulator_from_fill
// CHECK-NOT: vector.transfer_write
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %cst) -> (vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write %[[ACC]], %{{.*}} : vector<8x32xf32>, tensor<8x1x32xf32>
// CHECK-NOT: vector.transfer_write
// CHECK: return
#pa = affine_map<(m, p, j, k) -> (m, k)>
#pw = affine_map<(m, p, j, k) -> (p, k, j)>
#pc = affine_map<(m, p, j, k) -> (m, p, j)>
func.func @panel_matmul_accumulator_from_fill(%x: tensor<16x64xf32>, %w: tensor<2x64x32xf32>) -> tensor<16x2x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<16x2x32xf32>) -> tensor<16x2x32xf32>
  %mm = linalg.generic {indexing_maps = [#pa, #pw, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<16x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<16x2x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16x2x32xf32>
  return %mm : tensor<16x2x32xf32>
}

// -----

// A reduction over dims that end in a unit dim: the budget counts whole
// registers along the innermost dim, so the outer dims become loops instead
// of one vector of 2592 single-lane registers (which took LLVM minutes).
// CHECK-LABEL: func.func @reduce_ending_in_unit_dim
// CHECK-NOT: vector<3x6x8x18x1xi64>
// CHECK: scf.for %{{.*}} = %c0 to %c3
// CHECK: scf.for %{{.*}} = %c0 to %c6
// CHECK: vector.transfer_read {{.*}} : tensor<3x6x8x18x1xi64>, vector<1x1x8x18x1xi64>
// CHECK: arith.addi {{.*}} : vector<18x1xi64>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xi64> into i64
// CHECK: vector.reduction <add>, %{{.*}} : vector<2xi64> into i64
func.func @reduce_ending_in_unit_dim(%x: tensor<3x6x8x18x1xi64>) -> tensor<i64> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%c0 : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %r = linalg.reduce ins(%x : tensor<3x6x8x18x1xi64>) outs(%init : tensor<i64>) dimensions = [0, 1, 2, 3, 4]
    (%in: i64, %acc: i64) {
      %s = arith.addi %in, %acc : i64
      linalg.yield %s : i64
    }
  return %r : tensor<i64>
}

// -----

// A generic that gathers from a bool tensor stays scalar: a vector read of i1
// would load bits where the tensor holds bytes (torch.bool's layout).
// CHECK-LABEL: func.func @gathers_from_bool
// CHECK-NOT: vector<{{.*}}xi1>
// CHECK: tensor.extract %{{.*}} : tensor<8xi1>
func.func @gathers_from_bool(%x: tensor<8xi1>) -> tensor<2x8xi64> {
  %e = tensor.empty() : tensor<2x8xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x8xi64>) {
  ^bb0(%out: i64):
    %j = linalg.index 1 : index
    %b = tensor.extract %x[%j] : tensor<8xi1>
    %v = arith.extui %b : i1 to i64
    linalg.yield %v : i64
  } -> tensor<2x8xi64>
  return %r : tensor<2x8xi64>
}

// -----

// A convolution written as a generic whose loops are all unit but the width
// and the window: the register tile drops the unit loops and takes the named
// op's form, which is built where the reduced op stood, before the
// insert_slice of its result (it was built after it: invalid IR).
// CHECK-LABEL: func.func @conv_with_unit_loops
// CHECK-NOT: linalg.
// CHECK: vector.fma
// CHECK: return
func.func @conv_with_unit_loops(%x: tensor<1x1x1x1x1x10xf32>, %w: tensor<1x1x1x1x1x4xf32>) -> tensor<1x1x1x1x1x7xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x1x1x1x7xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x1x1x1x1x7xf32>) -> tensor<1x1x1x1x1x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d6, d3 + d7, d4 + d8, d5 + d9)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d1, d2, d6, d7, d8, d9)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x1x1x1x1x10xf32>, tensor<1x1x1x1x1x4xf32>) outs(%init : tensor<1x1x1x1x1x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x1x1x1x7xf32>
  return %r : tensor<1x1x1x1x1x7xf32>
}

// -----

// A 0-d op gathering one element stays scalar (a vector.gather of 0-d
// vectors is invalid).
// CHECK-LABEL: func.func @gather_one_element
// CHECK-NOT: vector.gather
// CHECK: tensor.extract %{{.*}} : tensor<5xf32>
func.func @gather_one_element(%x: tensor<5xf32>, %i: tensor<i64>) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%i : tensor<i64>) outs(%e : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %j = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%j] : tensor<5xf32>
    linalg.yield %v : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A reduction over outer dims that keeps the innermost one (a linear layer's
// bias gradient, summed over batch and sequence) loops over the reduced dims
// and adds a row of vectors per step; no vector spans the reduced dims.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<8x64x256xf32>, vector<1x1x64xf32>
// CHECK: arith.addf {{.*}} : vector<64xf32>
// CHECK-NOT: vector<8x64
// CHECK: return
func.func @column_sum(%x: tensor<8x64x256xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]} ins(%x : tensor<8x64x256xf32>) outs(%fill : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

// A per-channel sum over batch and pixels (a convolution's bias gradient,
// batch norm's statistics): one channel per step, its 8 x 16 x 16 tile
// combined row by row into one register and summed once, not flattened into
// a 2048-wide vector.
// CHECK-LABEL: func.func @per_channel_sum
// CHECK-NOT: vector<2048xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<8x64x16x16xf32>, vector<8x1x16x16xf32>
// CHECK: arith.addf {{.*}} : vector<1x16x16xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK-NOT: vector<2048xf32>
func.func @per_channel_sum(%x: tensor<8x64x16x16xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%x : tensor<8x64x16x16xf32>) outs(%init : tensor<64xf32>) dimensions = [0, 2, 3]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// -----

// A row sum wider than a register (softmax over 1000 classes): register-wide
// chunks added elementwise into four independent accumulators (chunk 4 into
// chunk 0's, 5 into 1's, ...), the four added pairwise, one horizontal sum of
// a register and one of the 8-element tail. One chain of dependent adds would
// run at the add's latency.
// CHECK-LABEL: func.func @wide_row_sum
// CHECK-NOT: vector.reduction <add>, %{{.*}} : vector<1000xf32>
// CHECK: %[[A0:.*]] = vector.extract_strided_slice %[[ROW:.*]] {offsets = [0], sizes = [16]{{.*}} : vector<1000xf32> to vector<16xf32>
// CHECK: %[[A1:.*]] = vector.extract_strided_slice %[[ROW]] {offsets = [16]
// CHECK: vector.extract_strided_slice %[[ROW]] {offsets = [32]
// CHECK: vector.extract_strided_slice %[[ROW]] {offsets = [48]
// CHECK: %[[C4:.*]] = vector.extract_strided_slice %[[ROW]] {offsets = [64]
// CHECK: arith.addf %[[A0]], %[[C4]] : vector<16xf32>
// CHECK: %[[C5:.*]] = vector.extract_strided_slice %[[ROW]] {offsets = [80]
// CHECK: arith.addf %[[A1]], %[[C5]] : vector<16xf32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [992], sizes = [8]
// CHECK: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
func.func @wide_row_sum(%x: tensor<8x1000xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x1000xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

// A row longer than the vector budget (a vocabulary of 50257 words) is
// reduced in chunks of 16 registers and a peeled partial chunk, not element by
// element.
// CHECK-LABEL: func.func @long_row_max
// CHECK: scf.for %{{.*}} = %c0 to %c50176 step %c256
// CHECK: vector.transfer_read {{.*}} : tensor<4x50257xf32>, vector<4x256xf32>
// CHECK: vector.reduction <maxnumf>, %{{.*}} : vector<16xf32> into f32
// CHECK: vector.transfer_read {{.*}} : tensor<4x50257xf32>, vector<4x81xf32>
func.func @long_row_max(%x: tensor<4x50257xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x50257xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.maxnumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}

// -----

// A mean over 7 x 7 pixels of several channels (an (N, C, H, W) global
// average pool, 32 channels per tile): each channel's rows are added
// elementwise and summed once; the reduced dims are not flattened into a
// 49-wide vector row by row.
// CHECK-LABEL: func.func @pixel_sum_per_channel
// CHECK: vector.transfer_read {{.*}} : tensor<32x7x7xf32>, vector<32x7x7xf32>
// CHECK-NOT: vector<49xf32>
// CHECK: arith.addf {{.*}} : vector<7xf32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<7xf32> into f32
// CHECK-NOT: vector<49xf32>
// CHECK: return
func.func @pixel_sum_per_channel(%x: tensor<32x7x7xf32>) -> tensor<32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %r = linalg.reduce ins(%x : tensor<32x7x7xf32>) outs(%init : tensor<32xf32>) dimensions = [1, 2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<32xf32>
}

// -----

// The same pooling of a sum with a channels-last operand (ConvNeXt's last
// residual: (C, H, W) + (H, W, C)) and a per-channel scale: a tile of several
// channels would be transposed in registers element by element (32 x 7 x 7
// of them), so the tile is one channel, its channels-last pixels 49 strided
// elements.
// CHECK-LABEL: func.func @pixel_sum_mixed_layouts
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<32x7x7xf32>, vector<1x7x7xf32>
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<7x7x32xf32>, vector<1x7x7xf32>
// CHECK-NOT: vector<32x7x7xf32>
// CHECK: return
func.func @pixel_sum_mixed_layouts(%x: tensor<32x7x7xf32>, %y: tensor<7x7x32xf32>, %s: tensor<32xf32>) -> tensor<32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %y, %s : tensor<32x7x7xf32>, tensor<7x7x32xf32>, tensor<32xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %acc: f32):
    %m = arith.mulf %b, %c : f32
    %t = arith.addf %a, %m : f32
    %u = arith.addf %t, %acc : f32
    linalg.yield %u : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}
