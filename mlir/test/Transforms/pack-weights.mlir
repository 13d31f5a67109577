// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-pack-weights{vector-bits=256}))' | FileCheck %s --check-prefix=AVX2
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-pack-weights{vector-bits=512}))' | FileCheck %s --check-prefix=AVX512
// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-pack-weights{vector-bits=512 bf16-pairs=true}))' | FileCheck %s --check-prefix=PAIRS

// A linear layer's transposed weight (K x N = 64 x 128, taken permuted
// [1, 0]) at batch 8 is laid out in panels of the register block's columns
// (2 registers: 16 with AVX2, 32 with AVX-512), and the matmul becomes a
// contraction over (m, panel, column, k) into its expanded result.
// AVX2-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// AVX2-DAG: #[[P:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// AVX2-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// AVX2-LABEL: func.func @linear
// AVX2-SAME: %[[W:arg1]]: tensor<8x64x16xf32> {poptorch.packed_shape = array<i64: 8, 16, 64>, poptorch.permuted = array<i64: 0, 2, 1>, poptorch.role = "parameter"}
// AVX2: %[[INIT:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [8, 8, 16] : tensor<8x128xf32> into tensor<8x8x16xf32>
// AVX2: %[[MM:.+]] = linalg.generic {indexing_maps = [#[[A]], #[[P]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// AVX2-SAME: ins(%arg0, %[[W]] : tensor<8x64xf32>, tensor<8x64x16xf32>) outs(%[[INIT]] : tensor<8x8x16xf32>)
// AVX2: arith.mulf
// AVX2: arith.addf
// AVX2: tensor.collapse_shape %[[MM]] {{\[}}[0], [1, 2]] : tensor<8x8x16xf32> into tensor<8x128xf32>
// AVX2-NOT: linalg.matmul
// AVX512-LABEL: func.func @linear
// AVX512-SAME: tensor<4x64x32xf32> {poptorch.packed_shape = array<i64: 4, 32, 64>, poptorch.permuted = array<i64: 0, 2, 1>
// f32 weights are never laid out in pairs.
// PAIRS-LABEL: func.func @linear
// PAIRS-SAME: tensor<4x64x32xf32> {poptorch.packed_shape = array<i64: 4, 32, 64>, poptorch.permuted = array<i64: 0, 2, 1>
func.func @linear(%x: tensor<8x64xf32> {poptorch.role = "input"},
                  %w: tensor<64x128xf32> {poptorch.permuted = array<i64: 1, 0>, poptorch.role = "parameter"}) -> tensor<8x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x128xf32>) outs(%init : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %y : tensor<8x128xf32>
}

// -----

// One row: the block is 4 registers wide (32 columns with AVX2). A K x N
// parameter that the model holds as it is (x @ w) is viewed as
// K x (N / nr) x nr and permuted [1, 0, 2]. bf16 inputs keep the matmul's
// body, which extends them to the f32 accumulator.
// AVX2-LABEL: func.func @one_row
// AVX2-SAME: tensor<4x64x32xbf16> {poptorch.packed_shape = array<i64: 64, 4, 32>, poptorch.permuted = array<i64: 1, 0, 2>, poptorch.role = "parameter"}
// AVX2: linalg.generic
// AVX2: arith.extf
// AVX2: arith.extf
// AVX2: arith.mulf
// AVX2: arith.addf
func.func @one_row(%x: tensor<1x64xbf16> {poptorch.role = "input"},
                   %w: tensor<64x128xbf16> {poptorch.role = "parameter"}) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x64xbf16>, tensor<64x128xbf16>) outs(%init : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

// -----

// Left as they are: a weight with another use (returned), one read by
// matmuls whose blocks differ (1 row and 8 rows), columns that are not a
// multiple of the block or not wider than one block, and an input.
// AVX2-LABEL: func.func @kept
// AVX2-NOT: poptorch.packed_shape
// AVX2-COUNT-6: linalg.matmul
// AVX2-NOT: linalg.generic
func.func @kept(%x1: tensor<1x64xf32> {poptorch.role = "input"},
                %x8: tensor<8x64xf32> {poptorch.role = "input"},
                %returned: tensor<64x128xf32> {poptorch.role = "parameter"},
                %mixed: tensor<64x128xf32> {poptorch.role = "parameter"},
                %ragged: tensor<64x40xf32> {poptorch.role = "parameter"},
                %narrow: tensor<64x16xf32> {poptorch.role = "parameter"},
                %input: tensor<64x128xf32> {poptorch.role = "input"})
    -> (tensor<64x128xf32>, tensor<8x128xf32>, tensor<1x128xf32>, tensor<8x128xf32>, tensor<8x40xf32>, tensor<8x16xf32>, tensor<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x128xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x128xf32>) -> tensor<1x128xf32>
  %e8 = tensor.empty() : tensor<8x128xf32>
  %i8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %e40 = tensor.empty() : tensor<8x40xf32>
  %i40 = linalg.fill ins(%zero : f32) outs(%e40 : tensor<8x40xf32>) -> tensor<8x40xf32>
  %e16 = tensor.empty() : tensor<8x16xf32>
  %i16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = linalg.matmul ins(%x8, %returned : tensor<8x64xf32>, tensor<64x128xf32>) outs(%i8 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %b = linalg.matmul ins(%x1, %mixed : tensor<1x64xf32>, tensor<64x128xf32>) outs(%i1 : tensor<1x128xf32>) -> tensor<1x128xf32>
  %c = linalg.matmul ins(%x8, %mixed : tensor<8x64xf32>, tensor<64x128xf32>) outs(%i8 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %d = linalg.matmul ins(%x8, %ragged : tensor<8x64xf32>, tensor<64x40xf32>) outs(%i40 : tensor<8x40xf32>) -> tensor<8x40xf32>
  %f = linalg.matmul ins(%x8, %narrow : tensor<8x64xf32>, tensor<64x16xf32>) outs(%i16 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = linalg.matmul ins(%x8, %input : tensor<8x64xf32>, tensor<64x128xf32>) outs(%i8 : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %returned, %a, %b, %c, %d, %f, %g : tensor<64x128xf32>, tensor<8x128xf32>, tensor<1x128xf32>, tensor<8x128xf32>, tensor<8x40xf32>, tensor<8x16xf32>, tensor<8x128xf32>
}

// -----

// With bf16-pairs, a bfloat16 weight with an even K is laid out in pairs of
// rows for the dot products: (N / nr) x (K / 2) x nr x 2, viewed from the
// transposed weight (N x K) as (N / nr) x nr x (K / 2) x 2 and permuted
// [0, 2, 1, 3], from a K x N one as (K / 2) x 2 x (N / nr) x nr permuted
// [2, 0, 3, 1]. The contraction runs over (m, panel, column, kp, kr) with A
// viewed as M x (K / 2) x 2; an odd K keeps the plain panels.
// PAIRS-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// PAIRS-DAG: #[[P:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d2, d4)>
// PAIRS-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// PAIRS-LABEL: func.func @pairs
// PAIRS-SAME: %[[W:arg1]]: tensor<4x32x32x2xbf16> {poptorch.packed_shape = array<i64: 4, 32, 32, 2>, poptorch.permuted = array<i64: 0, 2, 1, 3>, poptorch.role = "parameter"}
// PAIRS-SAME: %[[V:arg2]]: tensor<4x32x32x2xbf16> {poptorch.packed_shape = array<i64: 32, 2, 4, 32>, poptorch.permuted = array<i64: 2, 0, 3, 1>, poptorch.role = "parameter"}
// PAIRS-SAME: %[[ODD:arg3]]: tensor<4x63x32xbf16> {poptorch.packed_shape = array<i64: 63, 4, 32>, poptorch.permuted = array<i64: 1, 0, 2>, poptorch.role = "parameter"}
// PAIRS: %[[X:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [8, 32, 2] : tensor<8x64xbf16> into tensor<8x32x2xbf16>
// PAIRS: linalg.generic {indexing_maps = [#[[A]], #[[P]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// PAIRS-SAME: ins(%[[X]], %[[W]] : tensor<8x32x2xbf16>, tensor<4x32x32x2xbf16>)
// PAIRS: linalg.generic {{.*}}ins(%{{.+}}, %[[V]] : tensor<8x32x2xbf16>, tensor<4x32x32x2xbf16>)
// PAIRS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// PAIRS-SAME: ins(%arg4, %[[ODD]] : tensor<8x63xbf16>, tensor<4x63x32xbf16>)
// AVX2-LABEL: func.func @pairs
// AVX512-LABEL: func.func @pairs
// AVX512-SAME: tensor<4x64x32xbf16> {poptorch.packed_shape = array<i64: 4, 32, 64>, poptorch.permuted = array<i64: 0, 2, 1>
func.func @pairs(%x: tensor<8x64xbf16> {poptorch.role = "input"},
                 %w: tensor<64x128xbf16> {poptorch.permuted = array<i64: 1, 0>, poptorch.role = "parameter"},
                 %v: tensor<64x128xbf16> {poptorch.role = "parameter"},
                 %odd: tensor<63x128xbf16> {poptorch.role = "parameter"},
                 %x63: tensor<8x63xbf16> {poptorch.role = "input"}) -> (tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x64xbf16>, tensor<64x128xbf16>) outs(%init : tensor<8x128xf32>) -> tensor<8x128xf32>
  %z = linalg.matmul ins(%x, %v : tensor<8x64xbf16>, tensor<64x128xbf16>) outs(%init : tensor<8x128xf32>) -> tensor<8x128xf32>
  %o = linalg.matmul ins(%x63, %odd : tensor<8x63xbf16>, tensor<63x128xbf16>) outs(%init : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %y, %z, %o : tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>
}
