// convert-poptorch-to-linalg: elementwise ops (one generic pattern driven by
// the scalar formulas), casts, constants and data movement.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// -----

// Numpy broadcasting: the size-1 dim reads index 0, the missing leading dim is dropped.
// CHECK-DAG: #[[$XMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$YMAP:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$XMAP]], #[[$YMAP]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<1x3xf32>) outs(%[[E]] : tensor<4x2x3xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[BA:.*]] = arith.mulf %[[B]], %[[ALPHA]] : f32
// CHECK: %[[R:.*]] = arith.addf %[[A]], %[[BA]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<4x2x3xf32> {
  %0 = poptorch.add %x, %y {alpha = 2.0 : f64} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @relu_i32
// CHECK: linalg.generic
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32
func.func @relu_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = poptorch.relu %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// f16 formulas are evaluated in f32 and rounded once.
// CHECK-LABEL: func.func @gelu_f16
// CHECK: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[X:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK: math.erf %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
func.func @gelu_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = poptorch.gelu %x : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Unsigned integers compute as signless with unsigned ops.
// CHECK-LABEL: func.func @max_u8
// CHECK: ^bb0(%[[A:.*]]: ui8, %[[B:.*]]: ui8, %{{.*}}: ui8):
// CHECK: %[[SA:.*]] = builtin.unrealized_conversion_cast %[[A]] : ui8 to i8
// CHECK: %[[SB:.*]] = builtin.unrealized_conversion_cast %[[B]] : ui8 to i8
// CHECK: %[[M:.*]] = arith.maxui %[[SA]], %[[SB]] : i8
// CHECK: %[[R:.*]] = builtin.unrealized_conversion_cast %[[M]] : i8 to ui8
// CHECK: linalg.yield %[[R]] : ui8
func.func @max_u8(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = poptorch.maximum %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// PyTorch conversions: float->int truncates, x->bool is x != 0 (NaN is true), bool->x is 0/1.
// CHECK-LABEL: func.func @casts
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK: arith.uitofp %{{.*}} : i1 to f32
func.func @casts(%x: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
  %0 = poptorch.cast %x : tensor<4xf32> -> tensor<4xi32>
  %1 = poptorch.cast %x : tensor<4xf32> -> tensor<4xi1>
  %2 = poptorch.cast %i : tensor<4xi64> -> tensor<4xi1>
  %3 = poptorch.cast %b : tensor<4xi1> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @constant_dropout
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: return %[[C]], %[[X]]
func.func @constant_dropout(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = poptorch.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> : tensor<3xf32>
  %d = poptorch.dropout %x {p = 0.5 : f64, train = false} : tensor<3xf32> -> tensor<3xf32>
  return %c, %d : tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @reshape(%x: tensor<2x3x4xf32>, %s: tensor<f32>) -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<1x1xf32>) {
  %0 = poptorch.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = poptorch.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %2 = poptorch.reshape %s : tensor<f32> -> tensor<1x1xf32>
  return %0, %1, %2 : tensor<6x4xf32>, tensor<4x6xf32>, tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @permute_expand
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: linalg.broadcast ins(%[[C]] : tensor<3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) dimensions = [0, 2]
func.func @permute_expand(%x: tensor<2x3x4xf32>, %y: tensor<3x1xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = poptorch.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = poptorch.expand %y : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @slice_select_cat
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [2, 4] [1, 2] : tensor<2x9xf32> to tensor<2x4xf32>
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [1, 9] [1, 1] : tensor<2x9xf32> to tensor<9xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x12xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[I0]][0, 3] [2, 9] [1, 1]
func.func @slice_select_cat(%x: tensor<2x9xf32>, %y: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<9xf32>, tensor<2x12xf32>) {
  %0 = poptorch.slice %x {dim = 1 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x9xf32> -> tensor<2x4xf32>
  %1 = poptorch.select %x {dim = 0 : i64, index = 1 : i64} : tensor<2x9xf32> -> tensor<9xf32>
  %2 = poptorch.cat %y, %x {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x9xf32>) -> tensor<2x12xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<9xf32>, tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[W:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<2x3xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[IDX:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %[[W]][%[[ROW]], %[[COL]]] : tensor<10x4xf32>
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = poptorch.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Comparisons compute in the operands' type (f16 in f32) and yield i1;
// ordered predicates are false with NaN, `ne` is unordered.
// CHECK-LABEL: func.func @compare_f16
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<3xf16>) outs(%{{.*}} : tensor<2x3xi1>)
// CHECK: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: i1):
// CHECK: %[[X:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[Y:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[R:.*]] = arith.cmpf olt, %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[R]] : i1
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
func.func @compare_f16(%x: tensor<2x3xf16>, %y: tensor<3xf16>) -> (tensor<2x3xi1>, tensor<2x3xi1>) {
  %0 = poptorch.lt %x, %y : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  %1 = poptorch.ne %x, %y : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  return %0, %1 : tensor<2x3xi1>, tensor<2x3xi1>
}

// -----

// Signed, unsigned and bool integers pick the matching predicate.
// CHECK-LABEL: func.func @compare_int
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK: arith.cmpi ugt, %{{.*}}, %{{.*}} : i1
func.func @compare_int(%x: tensor<4xi64>, %u: tensor<4xui8>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = poptorch.ge %x, %x : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %1 = poptorch.lt %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = poptorch.gt %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Logical ops test "nonzero" (NaN is true) in the operands' type.
// CHECK-LABEL: func.func @logical
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-DAG: %[[NA:.*]] = arith.cmpf une, %[[A]], %{{.*}} : f32
// CHECK-DAG: %[[NB:.*]] = arith.cmpf une, %[[B]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: linalg.yield %[[R]] : i1
// CHECK: arith.cmpf oeq
func.func @logical(%x: tensor<4xf32>, %y: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %yf = poptorch.cast %y : tensor<4xi32> -> tensor<4xf32>
  %0 = poptorch.logical_and %x, %yf : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = poptorch.logical_not %x : (tensor<4xf32>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// where: the condition stays i1, the branches compute in their own type.
// CHECK-LABEL: func.func @where_f16
// CHECK: ^bb0(%[[C:.*]]: i1, %[[A:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[S:.*]] = arith.select %[[C]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
func.func @where_f16(%c: tensor<3xi1>, %x: tensor<2x3xf16>, %y: tensor<f16>) -> tensor<2x3xf16> {
  %0 = poptorch.where %c, %x, %y : (tensor<3xi1>, tensor<2x3xf16>, tensor<f16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func.func @bitwise_not
// CHECK: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK: arith.xori %{{.*}}, %[[ONES]] : i32
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: arith.xori %{{.*}}, %[[T]] : i1
func.func @bitwise_not(%x: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>) {
  %0 = poptorch.bitwise_not %x : (tensor<4xi32>) -> tensor<4xi32>
  %1 = poptorch.bitwise_not %b : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi32>, tensor<4xi1>
}

// -----

// arith.constant is signless: a uint8 constant is built from its bits and
// reinterpreted element by element.
// CHECK-LABEL: func.func @constant_uint8
// CHECK: %[[BITS:.*]] = arith.constant dense<[6, -6]> : tensor<2xi8>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[BITS]] : tensor<2xi8>)
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : i8 to ui8
func.func @constant_uint8() -> tensor<2xui8> {
  %0 = poptorch.constant dense<[6, 250]> : tensor<2xui8> : tensor<2xui8>
  return %0 : tensor<2xui8>
}
