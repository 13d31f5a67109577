// poptorch-tile-and-vectorize{bf16-dot=true}: register tiles of bfloat16
// contractions into an f32 accumulator become AVX512-BF16 dot products
// (vdpbf16ps), each over a pair of k; without the option (hosts without
// AVX512-BF16) they widen to f32 FMAs. Shapes the instruction does not fit
// keep the FMAs.
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=bf16-dot=true --canonicalize --cse | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize --canonicalize --cse | FileCheck %s --check-prefix=FMA
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=bf16-dot=true --canonicalize --cse --convert-vector-to-llvm=enable-x86vector=true | FileCheck %s --check-prefix=LLVM
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize="bf16-dot=true min-parallel-cost=0" --canonicalize --cse | FileCheck %s --check-prefix=PANEL

// An 8 x 32 block over k tiles of 8: four pairs of k, each with the rhs rows
// interleaved (two shuffles of 32 columns into pairs) and 8 rows x 2
// registers of dot products.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// CHECK: vector.shuffle {{.*}} [0, 32, 1, 33, 2, 34
// CHECK: vector.shuffle {{.*}} [16, 48, 17, 49
// CHECK: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK: vector.bitcast {{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-64: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: arith.truncf {{.*}} to vector<8x32xbf16>
// FMA-LABEL: func.func @matmul_bf16
// FMA-NOT: x86vector
// FMA: arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// FMA: vector.fma {{.*}} : vector<32xf32>
// LLVM-LABEL: func.func @matmul_bf16
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
func.func @matmul_bf16(%a: tensor<64x256xbf16>, %b: tensor<256x64xbf16>) -> tensor<64x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x256xbf16>, tensor<256x64xbf16>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<64x64xf32>) outs(%e2 : tensor<64x64xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  return %r : tensor<64x64xbf16>
}

// -----

// An odd reduction (k tiles of 1) has no pairs: FMAs.
// CHECK-LABEL: func.func @matmul_bf16_odd_k
// CHECK-NOT: x86vector
// CHECK: vector.fma
func.func @matmul_bf16_odd_k(%a: tensor<16x7xbf16>, %b: tensor<7x32xbf16>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<16x7xbf16>, tensor<7x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %mm : tensor<16x32xf32>
}

// -----

// f32 contractions are untouched.
// CHECK-LABEL: func.func @matmul_f32
// CHECK-NOT: x86vector
// CHECK: vector.fma
func.func @matmul_f32(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %mm : tensor<16x32xf32>
}

// -----

// A batched matmul's register tiles (a unit batch dim) run on the dot
// products too; without them their bf16 operands are extended to f32 and
// contracted with FMAs (the contraction lowering cannot unroll a batch dim
// of a mixed-precision contraction).
// CHECK-LABEL: func.func @batch_matmul_bf16
// CHECK: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.contract
// FMA-LABEL: func.func @batch_matmul_bf16
// FMA-NOT: vector.contract
// FMA: arith.extf {{.*}}bf16{{.*}} to vector<{{.*}}f32>
// FMA: vector.fma {{.*}} : vector<32xf32>
func.func @batch_matmul_bf16(%a: tensor<4x16x64xbf16>, %b: tensor<4x64x32xbf16>) -> tensor<4x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  %mm = linalg.batch_matmul ins(%a, %b : tensor<4x16x64xbf16>, tensor<4x64x32xbf16>) outs(%acc : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %mm : tensor<4x16x32xf32>
}

// -----

// A weight laid out in pairs of rows (poptorch-pack-weights' bf16-pairs): the
// contraction over (m, panel, column, kp, kr) is tiled along kp (4 pairs, 8
// of k, per step) with the pair whole, each operand read as rows of pairs,
// and no shuffles: every register of a row of pairs goes to the dot
// products as it is. Without bf16-dot (the pipeline pairs weights only with
// it) the contraction still lowers, to a product and a sum per element.
// CHECK-LABEL: func.func @paired_weight
// CHECK: scf.for {{.*}} step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<4x64xbf16>, vector<4x64xbf16>
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<8x8xbf16>, vector<8x8xbf16>
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-64: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK: scf.yield
// FMA-LABEL: func.func @paired_weight
// FMA-NOT: x86vector
// FMA: vector.reduction <add>
// LLVM-LABEL: func.func @paired_weight
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
#pA = affine_map<(m, p, j, kp, kr) -> (m, kp, kr)>
#pB = affine_map<(m, p, j, kp, kr) -> (p, kp, j, kr)>
#pC = affine_map<(m, p, j, kp, kr) -> (m, p, j)>
func.func @paired_weight(%a: tensor<64x768xbf16>, %w: tensor<24x384x32x2xbf16>) -> tensor<64x768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x768xf32>
  %e3 = tensor.expand_shape %e [[0], [1, 2]] output_shape [64, 24, 32] : tensor<64x768xf32> into tensor<64x24x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x24x32xf32>) -> tensor<64x24x32xf32>
  %a3 = tensor.expand_shape %a [[0], [1, 2]] output_shape [64, 384, 2] : tensor<64x768xbf16> into tensor<64x384x2xbf16>
  %r = linalg.generic {indexing_maps = [#pA, #pB, #pC], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a3, %w : tensor<64x384x2xbf16>, tensor<24x384x32x2xbf16>) outs(%acc : tensor<64x24x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %o, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<64x24x32xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<64x24x32xf32> into tensor<64x768xf32>
  return %c : tensor<64x768xf32>
}

// -----

// A wide bf16 B (rows 2 KB apart: a tied vocabulary head, im2col columns)
// is packed per column tile; with the dot products, in pairs of rows: one
// interleave of two rows of 32 columns per pair, once per panel, and the
// tile becomes a contraction over (m, n, kp, kr) whose register tiles read
// the panel's rows of pairs with no shuffles. Its 16 columns left over
// (not whole register tiles, not packed) keep the interleave per k.
// PANEL-LABEL: func.func @wide_rhs
// PANEL: scf.forall (%{{.*}}) = (0) to (1024) step (32)
// PANEL: vector.interleave {{.*}} : vector<32xbf16> -> vector<64xbf16>
// PANEL: tensor.expand_shape {{.*}} : tensor<32x64xbf16> into tensor<32x32x2xbf16>
// PANEL: scf.for {{.*}} step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// PANEL-NOT: vector.interleave
// PANEL-NOT: vector.shuffle
// PANEL-COUNT-64: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// PANEL: scf.yield
// PANEL: scf.forall (%{{.*}}) = (0) to (16) step (8)
// PANEL: vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
func.func @wide_rhs(%a: tensor<16x64xbf16>, %b: tensor<64x1040xbf16>) -> tensor<16x1040xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1040xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1040xf32>) -> tensor<16x1040xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<16x64xbf16>, tensor<64x1040xbf16>) outs(%acc : tensor<16x1040xf32>) -> tensor<16x1040xf32>
  return %mm : tensor<16x1040xf32>
}

// -----

// Columns that are not whole registers (17: the last tile of 49 pixels or
// of a 50257-token head) run on the dot products in two whole registers:
// the rhs rows padded with zeros (as i16, which LLVM's X86 backend can
// shuffle), the first 17 columns kept.
// CHECK-LABEL: func.func @matmul_bf16_partial_columns
// CHECK: vector.bitcast {{.*}} : vector<17xbf16> to vector<17xi16>
// CHECK: vector.insert_strided_slice {{.*}} : vector<17xi16> into vector<32xi16>
// CHECK: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: vector.extract_strided_slice {{.*}} {offsets = [0], sizes = [17], strides = [1]} : vector<32xf32> to vector<17xf32>
// CHECK-NOT: vector.fma
func.func @matmul_bf16_partial_columns(%a: tensor<8x64xbf16>, %b: tensor<64x17xbf16>) -> tensor<8x17xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x17xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x17xf32>) -> tensor<8x17xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x64xbf16>, tensor<64x17xbf16>) outs(%acc : tensor<8x17xf32>) -> tensor<8x17xf32>
  return %mm : tensor<8x17xf32>
}
