// convert-poptorch-to-linalg for the counter-based random ops: the per-op key
// is mixed from the state [seed, calls] and the stream number outside the
// loop; each element mixes the key with its row-major index.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @bernoulli
// CHECK: %[[SEED:.*]] = tensor.extract %arg0[%{{.*}}] : tensor<2xi64>
// CHECK: %[[CALLS:.*]] = tensor.extract %arg0[%{{.*}}] : tensor<2xi64>
// CHECK: arith.muli %[[CALLS]]
// CHECK: arith.xori %[[SEED]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf16>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: arith.uitofp %{{.*}} : i64 to f32
// CHECK: arith.cmpf olt
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @bernoulli(%s: tensor<2xi64>, %p: tensor<4xf32>) -> tensor<2x4xf16> {
  %0 = poptorch.rand_bernoulli %s p %p {stream = 3 : i64} : (tensor<2xi64>, tensor<4xf32>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @normal
// CHECK: linalg.generic
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.cos
func.func @normal(%s: tensor<2xi64>) -> tensor<8xf64> {
  %0 = poptorch.rand_normal %s {stream = 0 : i64, a = 1.0 : f64, b = 2.0 : f64} : (tensor<2xi64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

// [-3, 5): bits mod 8, plus -3.
// CHECK-LABEL: func.func @randint
// CHECK: linalg.generic
// CHECK: arith.remui %{{.*}}, %c8_i64
// CHECK: arith.addi %{{.*}}, %c-3_i64
// CHECK: arith.trunci %{{.*}} : i64 to i8
func.func @randint(%s: tensor<2xi64>) -> tensor<8xi8> {
  %0 = poptorch.rand_int %s {stream = 1 : i64, a = -3.0 : f64, b = 5.0 : f64} : (tensor<2xi64>) -> tensor<8xi8>
  return %0 : tensor<8xi8>
}

// -----

// CHECK-LABEL: func.func @cauchy
// CHECK: linalg.generic
// CHECK: math.tan
func.func @cauchy(%s: tensor<2xi64>) -> tensor<8xf32> {
  %0 = poptorch.rand_cauchy %s {stream = 0 : i64, a = 1.0 : f64, b = 2.0 : f64} : (tensor<2xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @log_normal
// CHECK: linalg.generic
// CHECK: math.cos
// CHECK: math.exp
func.func @log_normal(%s: tensor<2xi64>) -> tensor<8xf64> {
  %0 = poptorch.rand_log_normal %s {stream = 0 : i64, a = 1.0 : f64, b = 2.0 : f64} : (tensor<2xi64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

// CHECK-LABEL: func.func @geometric
// CHECK: linalg.generic
// CHECK: math.log
// CHECK: math.ceil
// CHECK: arith.maximumf
func.func @geometric(%s: tensor<2xi64>) -> tensor<8xf32> {
  %0 = poptorch.rand_geometric %s {stream = 0 : i64, a = 0.25 : f64} : (tensor<2xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
