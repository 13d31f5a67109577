// convert-poptorch-to-linalg: the ScalarBuilder primitives behind the
// elementwise formulas of the op table (integer division rules, shifts,
// libm calls, loops, f16 computed in f32 or in its own type).
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// Floor division of integers: the divisor is made safe (no trap on 0 or
// INT_MIN / -1) and truncation is corrected when the signs differ.
// CHECK-LABEL: func.func @floor_divide_i32
// CHECK: linalg.generic
// CHECK: arith.select
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: arith.subi
// CHECK: linalg.yield
func.func @floor_divide_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = poptorch.floor_divide %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Shifts by the bit width or more give 0 (left) or the sign fill (right).
// CHECK-LABEL: func.func @shifts_i8
// CHECK: arith.cmpi ult
// CHECK: arith.shli
// CHECK: arith.select
// CHECK: arith.shrsi
func.func @shifts_i8(%x: tensor<4xi8>, %y: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>) {
  %0 = poptorch.shift_left %x, %y : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %1 = poptorch.shift_right %x, %y : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0, %1 : tensor<4xi8>, tensor<4xi8>
}

// -----

// lgamma is the C library's, declared once; f16 calls the f32 function.
// CHECK-LABEL: func.func private @lgammaf(f32) -> f32
// CHECK-LABEL: func.func @lgamma_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: func.call @lgammaf(%{{.*}}) : (f32) -> f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @lgamma_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = poptorch.lgamma %x : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// gcd is Euclid's loop inside the linalg body.
// CHECK-LABEL: func.func @gcd_i64
// CHECK: linalg.generic
// CHECK: scf.while
// CHECK: arith.remsi
// CHECK: scf.yield
func.func @gcd_i64(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %0 = poptorch.gcd %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// logit computes in f16 itself, rounding after each step as eager does.
// CHECK-LABEL: func.func @logit_f16
// CHECK: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK-NOT: arith.extf
// CHECK: arith.divf %{{.*}}, %{{.*}} : f16
// CHECK: math.log %{{.*}} : f16
func.func @logit_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = poptorch.logit %x : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Predicates of floats compare; of integers they are constant false.
// CHECK-LABEL: func.func @isnan
// CHECK: arith.cmpf uno
// CHECK: arith.constant false
func.func @isnan(%x: tensor<4xf32>, %y: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = poptorch.isnan %x : (tensor<4xf32>) -> tensor<4xi1>
  %1 = poptorch.isnan %y : (tensor<4xi32>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// Attributes with defaults: leaky_relu's negative_slope is 0.01 when absent.
// CHECK-LABEL: func.func @leaky_relu_default
// CHECK: arith.constant 0.00999999977 : f32
func.func @leaky_relu_default(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = poptorch.leaky_relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

