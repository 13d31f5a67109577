// RUN: poptorch-opt %s -poptorch-approximate-math | FileCheck %s

// erf on vectors must become arithmetic (no libm call per element): f32 erf
// is x * P(x^2) / Q(x^2) on x clamped to [-4, 4], 6 + 4 multiply-adds, one
// division and no per-interval selects, clamped to [-1, 1]. Scalars too.
// CHECK-LABEL: func.func @erf_vector
// CHECK-NOT: math.erf
// CHECK-NOT: arith.select
// CHECK: %[[LO:.+]] = arith.minimumf %arg0, %{{.*}} : vector<8xf32>
// CHECK: %[[X:.+]] = arith.maximumf %[[LO]], %{{.*}} : vector<8xf32>
// CHECK: %[[T:.+]] = arith.mulf %[[X]], %[[X]]
// CHECK-COUNT-6: math.fma %{{.*}}, %[[T]]
// CHECK: %[[XP:.+]] = arith.mulf %[[X]],
// CHECK-COUNT-4: math.fma %{{.*}}, %[[T]]
// CHECK: arith.divf %[[XP]],
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK-NOT: arith.select
// CHECK: return
func.func @erf_vector(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %v : vector<8xf32>
  return %0 : vector<8xf32>
}

// CHECK-LABEL: func.func @erf_scalar
// CHECK-NOT: math.erf
// CHECK: arith.divf
// CHECK: return
func.func @erf_scalar(%s: f32) -> f32 {
  %0 = math.erf %s : f32
  return %0 : f32
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
