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
