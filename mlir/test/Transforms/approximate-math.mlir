// RUN: poptorch-opt %s -poptorch-approximate-math | FileCheck %s

// erf on vectors must become arithmetic (no libm call per element).
// CHECK-LABEL: func.func @erf_vector
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: return
func.func @erf_vector(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %v : vector<8xf32>
  return %0 : vector<8xf32>
}

// tanh likewise (LLVM scalarizes its intrinsic on vectors into libm calls).
// CHECK-LABEL: func.func @tanh_vector
// CHECK-NOT: math.tanh
// CHECK: return
func.func @tanh_vector(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.tanh %v : vector<8xf32>
  return %0 : vector<8xf32>
}

// Vector f32 exp too (softmax); a scalar exp stays a libm call.
// CHECK-LABEL: func.func @exp_vector_only
// CHECK-SAME: (%[[V:.*]]: vector<16xf32>, %[[S:.*]]: f32)
// CHECK-NOT: math.exp %[[V]]
// CHECK: math.exp %[[S]] : f32
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp_vector_only(%v: vector<16xf32>, %s: f32) -> (vector<16xf32>, f32) {
  %0 = math.exp %v : vector<16xf32>
  %1 = math.exp %s : f32
  return %0, %1 : vector<16xf32>, f32
}
