//===- SpecialFunctions.cpp - special functions as scalar formulas --------===//
//
// The special functions of torch.special that the math dialect lacks. They
// follow the algorithms of eager PyTorch's CPU kernels (which derive from the
// Cephes Math Library), in the same precision, so that results agree to a few
// ulps: f16/bf16 inputs compute in f32 as eager does, and the zeta function
// in f64 (eager's accumulation type for it). Branches are computed on every
// element and selected, so that the formulas stay straight-line and
// vectorize; only the zeta function's series, whose length depends on the
// input, is a loop. lgamma is the C library's, as in eager.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"
#include "Conversion/PoptorchToLinalg/ScalarBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::poptorch;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Chebyshev coefficients (Cephes) of exp(-x) I0(x) on [0, 8] and of
// exp(-x) sqrt(x) I0(x) on the inverted interval [8, inf).
constexpr double kI0eA[] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,
    -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11,
    -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,
    -2.67079385394061173391E-7,  1.11738753912010371815E-6,
    -4.41673835845875056359E-6,  1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,
    -5.76375574538582365885E-4,  1.63947561694133579842E-3,
    -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,
    -9.49010970480476444210E-2,  1.71620901522208775349E-1,
    -3.04682672343198398683E-1,  6.76795274409476084995E-1};
constexpr double kI0eB[] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18,
    4.46562142029675999901E-17,  3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14,
    1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12,
    -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,
    2.04891858946906374183E-7,   2.89137052083475648297E-6,
    6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
// The same for I1; eager's f32 kernels use only the last 17 / 7 terms.
constexpr double kI1eA[] = {
    2.77791411276104639959E-18, -2.11142121435816608115E-17,
    1.55363195773620046921E-16, -1.10559694773538630805E-15,
    7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12,
    1.17361862988909016308E-11, -6.66348972350202774223E-11,
    3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9,  -4.44505912879632808065E-8,
    2.00329475355213526229E-7,  -8.56872026469545474066E-7,
    3.47025130813767847674E-6,  -1.32731636560394358279E-5,
    4.78156510755005422638E-5,  -1.61760815825896745588E-4,
    5.12285956168575772895E-4,  -1.51357245063125314899E-3,
    4.15642294431288815669E-3,  -1.05640848946261981558E-2,
    2.47264490306265168283E-2,  -5.29459812080949914269E-2,
    1.02643658689847095384E-1,  -1.76416518357834055153E-1,
    2.52587186443633654823E-1};
constexpr double kI1eB[] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,
    -4.65030536848935832153E-17, -3.20952592199342395980E-17,
    2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15,
    1.04202769841288027642E-14,  4.27244001671195135429E-14,
    -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,
    1.41258074366137813316E-11,  3.25260358301548823856E-11,
    -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,  -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};
constexpr size_t kI1eAFloatTerms = 17, kI1eBFloatTerms = 7;

// ndtri (Cephes): rational approximations for |y - 0.5| <= 3/8 and for
// z = sqrt(-2 log y) in [2, 8) and [8, 64].
constexpr double kNdtriP0[] = {
    -5.99633501014107895267E1, 9.80010754185999661536E1,
    -5.66762857469070293439E1, 1.39312609387279679503E1,
    -1.23916583867381258016E0};
constexpr double kNdtriQ0[] = {
    1.00000000000000000000E0,  1.95448858338141759834E0,
    4.67627912898881538453E0,  8.63602421390890590575E1,
    -2.25462687854119370527E2, 2.00260212380060660359E2,
    -8.20372256168333339912E1, 1.59056225126211695515E1,
    -1.18331621121330003142E0};
constexpr double kNdtriP1[] = {
    4.05544892305962419923E0,   3.15251094599893866154E1,
    5.71628192246421288162E1,   4.40805073893200834700E1,
    1.46849561928858024014E1,   2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2,
    -8.57456785154685413611E-4};
constexpr double kNdtriQ1[] = {
    1.00000000000000000000E0,   1.57799883256466749731E1,
    4.53907635128879210584E1,   4.13172038254672030440E1,
    1.50425385692907503408E1,   2.50464946208309415979E0,
    -1.42182922854787788574E-1, -3.80806407691578277194E-2,
    -9.33259480895457427372E-4};
constexpr double kNdtriP2[] = {
    3.23774891776946035970E0,  6.91522889068984211695E0,
    3.93881025292474443415E0,  1.33303460815807542389E0,
    2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6,
    6.23974539184983293730E-9};
constexpr double kNdtriQ2[] = {
    1.00000000000000000000E0,  6.02427039364742014255E0,
    3.67983563856160859403E0,  1.37702099489081330271E0,
    2.16236993594496635890E-1, 1.34204006088543189037E-2,
    3.28014464682127739104E-4, 2.89247864745380683936E-6,
    6.79019408009981274425E-9};

// Asymptotic series of digamma in 1/x^2 (Cephes psi).
constexpr double kDigammaA[] = {
    8.33333333333333333333E-2, -2.10927960927960927961E-2,
    7.57575757575757575758E-3, -4.16666666666666666667E-3,
    3.96825396825396825397E-3, -8.33333333333333333333E-3,
    8.33333333333333333333E-2};
constexpr double kPsi10 = 2.25175258906672110764; // digamma(10)

// Euler-Maclaurin coefficients of the Hurwitz zeta function (Cephes zeta).
constexpr double kZetaA[] = {12.0,
                             -720.0,
                             30240.0,
                             -1209600.0,
                             47900160.0,
                             -1.8924375803183791606e9,
                             7.47242496e10,
                             -2.950130727918164224e12,
                             1.1646782814350067249e14,
                             -4.5979787224074726105e15,
                             1.8152105401943546773e17,
                             -7.1661652561756670113e18};
} // namespace

Value ScalarBuilder::chebyshev(Value x, ArrayRef<double> c) {
  Value b0 = cst(c[0]), b1 = cst(0), b2 = cst(0);
  for (double ci : c.drop_front()) {
    b2 = b1;
    b1 = b0;
    b0 = add(sub(mul(x, b1), b2), cst(ci));
  }
  return mul(cst(0.5), sub(b0, b2));
}

Value ScalarBuilder::polynomial(Value x, ArrayRef<double> c) {
  Value r = cst(c[0]);
  for (double ci : c.drop_front())
    r = add(mul(r, x), cst(ci));
  return r;
}

Value ScalarBuilder::lgamma(Value x) { return callLibm("lgamma", {x}); }

Value ScalarBuilder::digamma(Value x) {
  // Negative non-integers by reflection: psi(x) = psi(1 - x) - pi / tan(pi r)
  // with r the fractional part of x (more accurate than tan(pi x)).
  Value negative = lt(x, cst(0));
  Value v = select(negative, sub(cst(1), x), x);
  // Recurrence psi(x) = psi(x + 1) - 1 / x up to x >= 10: at most 10 steps
  // for x > 0.
  Value result = cst(0);
  for (int i = 0; i < 10; ++i) {
    Value below = lt(v, cst(10));
    result = select(below, sub(result, div(cst(1), v)), result);
    v = select(below, add(v, cst(1)), v);
  }
  Value z = div(cst(1), mul(v, v));
  Value tail =
      select(lt(v, cst(1e17)), mul(z, polynomial(z, kDigammaA)), cst(0));
  Value asymptotic = sub(sub(add(result, log(v)), div(cst(0.5), v)), tail);
  Value positive = select(eq(v, cst(10)), add(result, cst(kPsi10)), asymptotic);
  Value r = sub(x, trunc(x));
  Value reflected = sub(positive, div(cst(M_PI), tan(mul(cst(M_PI), r))));
  Value out = select(negative, reflected, positive);
  out = select(bitAnd(negative, eq(x, trunc(x))), cst(kNaN), out);
  return select(eq(x, cst(0)), copysign(cst(kInf), neg(x)), out);
}

Value ScalarBuilder::trigamma(Value x) {
  Value small = lt(x, cst(0.5));
  Value s = sin(mul(cst(M_PI), x));
  Value result = select(small, neg(div(cst(M_PI * M_PI), mul(s, s))), cst(0));
  Value v = select(small, sub(cst(1), x), x);
  for (int i = 0; i < 6; ++i) {
    result = add(result, div(cst(1), mul(v, v)));
    v = add(v, cst(1));
  }
  Value ixx = div(cst(1), mul(v, v));
  Value series = sub(cst(1.0 / 30), mul(ixx, cst(1.0 / 42)));
  series = sub(cst(1.0 / 6), mul(ixx, series));
  series = add(add(cst(1), div(cst(1), mul(cst(2), v))), mul(ixx, series));
  result = add(result, div(series, v));
  return select(small, neg(result), result);
}

Value ScalarBuilder::erfinv(Value y) {
  // A rational first guess (central range |y| <= 0.7, else in
  // sqrt(-log((1 - |y|) / 2))), then two Newton steps on erf(x) = y.
  Value yAbs = abs(y);
  Value z = mul(y, y);
  Value num =
      polynomial(z, {-0.140543331, 0.914624893, -1.645349621, 0.886226899});
  Value den = polynomial(
      z, {0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0});
  Value central = div(mul(y, num), den);
  Value t = sqrt(neg(log(div(sub(cst(1), yAbs), cst(2)))));
  Value tailNum =
      polynomial(t, {1.641345311, 3.429567803, -1.624906493, -1.970840454});
  Value tailDen = polynomial(t, {1.637067800, 3.543889200, 1.0});
  Value tail = div(copysign(tailNum, y), tailDen);
  Value x = select(le(yAbs, cst(0.7)), central, tail);
  Value twoOverSqrtPi = cst(2.0 / std::sqrt(M_PI));
  for (int i = 0; i < 2; ++i)
    x = sub(x, div(sub(erf(x), y), mul(twoOverSqrtPi, exp(neg(mul(x, x))))));
  x = select(eq(yAbs, cst(1)), copysign(cst(kInf), y), x);
  return select(gt(yAbs, cst(1)), cst(kNaN), x);
}

Value ScalarBuilder::i0e(Value x) {
  Value a = abs(x);
  Value near = chebyshev(sub(div(a, cst(2)), cst(2)), kI0eA);
  Value far = div(chebyshev(sub(div(cst(32), a), cst(2)), kI0eB), sqrt(a));
  return select(le(a, cst(8)), near, far);
}

Value ScalarBuilder::i0(Value x) { return mul(exp(abs(x)), i0e(x)); }

Value ScalarBuilder::i1e(Value x) {
  ArrayRef<double> coeffA(kI1eA), coeffB(kI1eB);
  if (type.isF32()) {
    coeffA = coeffA.take_back(kI1eAFloatTerms);
    coeffB = coeffB.take_back(kI1eBFloatTerms);
  }
  Value a = abs(x);
  Value near = mul(chebyshev(sub(div(a, cst(2)), cst(2)), coeffA), a);
  Value far = div(chebyshev(sub(div(cst(32), a), cst(2)), coeffB), sqrt(a));
  Value out = select(le(a, cst(8)), near, far);
  return select(lt(x, cst(0)), neg(out), out);
}

Value ScalarBuilder::i1(Value x) { return mul(exp(abs(x)), i1e(x)); }

Value ScalarBuilder::ndtri(Value y0) {
  constexpr double kExpMinus2 = 0.13533528323661269189;
  Value upper = gt(y0, cst(1 - kExpMinus2));
  Value y = select(upper, sub(cst(1), y0), y0);
  // Central range.
  Value c = sub(y, cst(0.5));
  Value c2 = mul(c, c);
  Value central = mul(add(c, mul(c, div(mul(c2, polynomial(c2, kNdtriP0)),
                                        polynomial(c2, kNdtriQ0)))),
                      cst(2.50662827463100050242));
  // Tails.
  Value x = sqrt(mul(cst(-2), log(y)));
  Value x0 = sub(x, div(log(x), x));
  Value z = div(cst(1), x);
  Value x1near = div(mul(z, polynomial(z, kNdtriP1)), polynomial(z, kNdtriQ1));
  Value x1far = div(mul(z, polynomial(z, kNdtriP2)), polynomial(z, kNdtriQ2));
  Value t = sub(x0, select(lt(x, cst(8)), x1near, x1far));
  Value tail = select(upper, t, neg(t));
  Value out = select(gt(y, cst(kExpMinus2)), central, tail);
  Value outside = bitOr(lt(y0, cst(0)), gt(y0, cst(1)));
  out = select(outside, cst(kNaN), out);
  out = select(eq(y0, cst(1)), cst(kInf), out);
  return select(eq(y0, cst(0)), cst(-kInf), out);
}

Value ScalarBuilder::zeta(Value xIn, Value qIn) {
  // In f64 whatever the tensor's type, as eager.
  Type f64 = b.getF64Type();
  ScalarBuilder d(b, loc, op, f64, storage, false);
  Value x = convertScalar(b, loc, xIn, f64, false, false);
  Value q = convertScalar(b, loc, qIn, f64, false, false);
  constexpr double kMachEp = 1.11022302462515654042E-16;

  // Poles and the domain: the series is not summed (it would not end for
  // q = -inf).
  Value qInt = d.eq(q, d.floor(q));
  Value qNonPos = d.le(q, d.cst(0));
  Value pole = d.bitAnd(qNonPos, qInt);
  Value outside =
      d.bitOr(d.lt(x, d.cst(1)), d.bitAnd(qNonPos, d.ne(x, d.floor(x))));
  Value special = d.bitOr(d.bitOr(pole, outside), d.eq(x, d.cst(1)));

  // s = sum_{i=0}^{n} (q + i)^-x until a term is negligible, at least 9
  // terms and up to q + n > 9.
  Value s0 = d.pow(q, d.neg(x));
  Type i1 = b.getI1Type();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{f64, f64, f64, f64, i1},
      ValueRange{d.cst(0), q, d.cst(0), s0, special},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ScalarBuilder e(nb, nloc, op, f64, storage, false);
        Value more = e.bitOr(e.lt(args[0], e.cst(9)), e.le(args[1], e.cst(9)));
        Value go = e.bitAnd(more, e.bitNot(args[4]));
        scf::ConditionOp::create(nb, nloc, go, args);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ScalarBuilder e(nb, nloc, op, f64, storage, false);
        Value i = e.add(args[0], e.cst(1));
        Value a = e.add(args[1], e.cst(1));
        Value bt = e.pow(a, e.neg(x));
        Value s = e.add(args[3], bt);
        Value done = e.bitAnd(e.lt(e.mul(e.cst(-kMachEp), s), bt),
                              e.lt(bt, e.mul(e.cst(kMachEp), s)));
        scf::YieldOp::create(nb, nloc, ValueRange{i, a, bt, s, done});
      });
  Value a = loop.getResult(1), bt = loop.getResult(2), s = loop.getResult(3);
  Value done = loop.getResult(4);
  // Euler-Maclaurin tail.
  Value w = a;
  Value t = d.add(s, d.div(d.mul(bt, w), d.sub(x, d.cst(1))));
  t = d.sub(t, d.mul(d.cst(0.5), bt));
  Value sum = d.select(done, s, t);
  Value fac = d.cst(1), k = d.cst(0);
  for (double coeff : kZetaA) {
    fac = d.mul(fac, d.add(x, k));
    bt = d.div(bt, w);
    Value term = d.div(d.mul(fac, bt), d.cst(coeff));
    sum = d.select(done, sum, d.add(sum, term));
    done = d.bitOr(done, d.lt(d.abs(d.div(term, sum)), d.cst(kMachEp)));
    k = d.add(k, d.cst(1));
    fac = d.mul(fac, d.add(x, k));
    bt = d.div(bt, w);
    k = d.add(k, d.cst(1));
  }
  sum = d.select(outside, d.cst(kNaN), sum);
  sum = d.select(pole, d.cst(kInf), sum);
  sum = d.select(d.lt(x, d.cst(1)), d.cst(kNaN), sum);
  sum = d.select(d.eq(x, d.cst(1)), d.cst(kInf), sum);
  return convertScalar(b, loc, sum, type, false, false);
}

Value ScalarBuilder::mvlgamma(Value x, int64_t p) {
  // sum_{j < p} lgamma(x - j / 2) + p (p - 1) / 4 log(pi), from the
  // largest shift down, as eager sums them.
  Value sum;
  for (int64_t j = p - 1; j >= 0; --j) {
    Value term = lgamma(sub(x, cst(0.5 * j)));
    sum = sum ? add(sum, term) : term;
  }
  return add(sum, cst(double(p * (p - 1)) * std::log(M_PI) * 0.25));
}

//===----------------------------------------------------------------------===//
// Orthogonal polynomials (torch.special.*_polynomial_*)
//===----------------------------------------------------------------------===//

namespace {
/// The shape of one family: the recurrence q_{k+1} = step(k, q_k, q_{k-1})
/// from q_0 = 1 and q_1, eager's closed form for large n (Chebyshev kinds
/// only) and its special values.
enum class PolyKind {
  ChebT,
  ChebU,
  ChebV,
  ChebW,
  HermiteH,
  HermiteHe,
  Laguerre,
  Legendre
};
} // namespace

Value ScalarBuilder::orthogonalPolynomial(StringRef kindName, Value x,
                                          Value nIn) {
  bool shifted = kindName.consume_front("shifted_");
  PolyKind kind = llvm::StringSwitch<PolyKind>(kindName)
                      .Case("chebyshev_t", PolyKind::ChebT)
                      .Case("chebyshev_u", PolyKind::ChebU)
                      .Case("chebyshev_v", PolyKind::ChebV)
                      .Case("chebyshev_w", PolyKind::ChebW)
                      .Case("hermite_h", PolyKind::HermiteH)
                      .Case("hermite_he", PolyKind::HermiteHe)
                      .Case("laguerre_l", PolyKind::Laguerre)
                      .Case("legendre_p", PolyKind::Legendre);
  bool cheb = kind == PolyKind::ChebT || kind == PolyKind::ChebU ||
              kind == PolyKind::ChebV || kind == PolyKind::ChebW;

  // n as an integer, as eager's static_cast<int64_t>: NaN, infinities and
  // values out of range give a negative degree (result 0).
  Type i64 = b.getI64Type();
  ScalarBuilder ib(b, loc, op, i64, i64, false);
  Value inRange = bitAnd(gt(nIn, cst(-9.2e18)), lt(nIn, cst(9.2e18)));
  Value n = ib.select(inRange, convertScalar(b, loc, nIn, i64, false, false),
                      ib.cst(-1));
  auto toT = [&](Value v) {
    return convertScalar(b, loc, v, type, false, false);
  };
  Value nf = toT(n);
  Value one = cst(1), zero = cst(0);
  Value even = ib.eq(ib.bitAnd(n, ib.cst(1)), ib.cst(0));
  auto bySign = [&](Value v) { return select(even, v, neg(v)); };
  Value nPlus1 = toT(ib.add(n, ib.cst(1)));
  Value twoNPlus1 = toT(ib.add(ib.add(n, n), ib.cst(1)));

  // The argument of the recurrence (2x - 1 for the shifted polynomials), q_1
  // and the special values at the ends of the interval.
  Value y = shifted ? sub(add(x, x), one) : x;
  Value q1, edge, edgeValue, closed, closedValue;
  Value pos = shifted ? eq(x, one) : gt(x, zero);
  switch (kind) {
  case PolyKind::ChebT:
  case PolyKind::ChebU:
  case PolyKind::ChebV:
  case PolyKind::ChebW: {
    edge = shifted ? bitOr(eq(x, one), eq(x, zero)) : eq(abs(x), one);
    // Eager switches to the trigonometric form above a degree threshold.
    int64_t threshold = 8;
    if (kind == PolyKind::ChebT || shifted)
      threshold = 6;
    if (kind == PolyKind::ChebW && shifted)
      threshold = 4;
    closed = bitAnd(ib.gt(n, ib.cst(threshold)), lt(abs(y), one));
    Value a = acos(y);
    Value half = div(a, cst(2));
    Value nHalf = add(nf, cst(0.5));
    switch (kind) {
    case PolyKind::ChebT:
      q1 = y;
      edgeValue = select(pos, one, bySign(one));
      closedValue = cos(mul(nf, a));
      break;
    case PolyKind::ChebU: {
      q1 = add(y, y);
      edgeValue = select(pos, nPlus1, bySign(nPlus1));
      Value s = sin(a);
      closedValue = select(ne(s, zero), div(sin(mul(nPlus1, a)), s),
                           div(mul(nPlus1, cos(mul(nPlus1, a))), y));
      break;
    }
    case PolyKind::ChebV:
      q1 = sub(add(y, y), one);
      edgeValue = select(pos, one, bySign(twoNPlus1));
      closedValue =
          select(ne(sin(half), one), div(cos(mul(nHalf, a)), cos(half)),
                 bySign(twoNPlus1));
      break;
    default: // ChebW
      q1 = add(add(y, y), one);
      edgeValue = select(pos, twoNPlus1, bySign(one));
      closedValue = select(
          ne(cos(half), one), div(sin(mul(nHalf, a)), sin(half)),
          shifted ? bySign(one) : select(gt(x, zero), twoNPlus1, bySign(one)));
      break;
    }
    break;
  }
  case PolyKind::HermiteH:
  case PolyKind::HermiteHe: {
    q1 = kind == PolyKind::HermiteH ? add(x, x) : x;
    edge = boolean(false);
    edgeValue = zero;
    // Past a degree limit eager gives NaN rather than overflowing.
    closed = ib.gt(n, ib.cst(type.isF64() ? 512 : 128));
    closedValue = cst(kNaN);
    break;
  }
  case PolyKind::Laguerre:
    q1 = sub(one, x);
    edge = eq(x, zero);
    edgeValue = one;
    closed = boolean(false);
    closedValue = zero;
    break;
  case PolyKind::Legendre:
    q1 = x;
    edge = eq(abs(x), one);
    edgeValue = select(pos, one, bySign(one));
    closed = boolean(false);
    closedValue = zero;
    break;
  }

  // q_{i+1} for i = 1 .. n - 1, stopping early at NaN (it stays NaN); the
  // loop only runs where no special case applies.
  Value negative = ib.lt(n, ib.cst(0));
  Value special =
      bitOr(bitOr(negative, edge), bitOr(closed, ib.le(n, ib.cst(1))));
  Value bound = ib.select(special, ib.cst(1), n);
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{i64, type, type}, ValueRange{ib.cst(1), one, q1},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ScalarBuilder e(nb, nloc, op, type, storage, false);
        ScalarBuilder ie(nb, nloc, op, i64, i64, false);
        Value go = e.bitAnd(ie.lt(args[0], bound), e.bitNot(e.isnan(args[2])));
        scf::ConditionOp::create(nb, nloc, go, args);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ScalarBuilder e(nb, nloc, op, type, storage, false);
        ScalarBuilder ie(nb, nloc, op, i64, i64, false);
        Value i = args[0], p = args[1], q = args[2];
        Value k = convertScalar(nb, nloc,
                                kind == PolyKind::HermiteH ? ie.add(i, i) : i,
                                type, false, false);
        Value r;
        if (cheb) {
          r = e.sub(e.mul(e.add(y, y), q), p);
        } else if (kind == PolyKind::HermiteH) {
          r = e.sub(e.mul(e.add(x, x), q), e.mul(k, p));
        } else if (kind == PolyKind::HermiteHe) {
          r = e.sub(e.mul(x, q), e.mul(k, p));
        } else if (kind == PolyKind::Laguerre) {
          Value c = e.add(e.add(k, k), e.sub(e.cst(1), x));
          r = e.div(e.sub(e.mul(c, q), e.mul(k, p)), e.add(k, e.cst(1)));
        } else { // Legendre
          Value c = e.mul(e.add(e.add(k, k), e.cst(1)), x);
          r = e.div(e.sub(e.mul(c, q), e.mul(k, p)), e.add(k, e.cst(1)));
        }
        scf::YieldOp::create(nb, nloc, ValueRange{ie.add(i, ie.cst(1)), q, r});
      });
  Value r = loop.getResult(2);
  r = select(ib.eq(n, ib.cst(1)), q1, r);
  r = select(ib.eq(n, ib.cst(0)), one, r);
  r = select(closed, closedValue, r);
  r = select(edge, edgeValue, r);
  return select(negative, zero, r);
}

//===----------------------------------------------------------------------===//
// erfcx, log_ndtr
//===----------------------------------------------------------------------===//

Value ScalarBuilder::erfcx(Value xIn) {
  // In f64: exp(x^2) erfc(x) below 8 (erfc keeps its relative accuracy and
  // the product overflows to inf for very negative x as eager's), the
  // asymptotic series 1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k
  // above (its terms fall below 1e-17 within 16 terms at x = 8).
  Type f64 = b.getF64Type();
  ScalarBuilder d(b, loc, op, f64, storage, false);
  Value x = convertScalar(b, loc, xIn, f64, false, false);
  Value small = d.mul(d.exp(d.mul(x, x)), d.callLibm("erfc", {x}));
  Value z = d.div(d.cst(1), d.mul(d.cst(2), d.mul(x, x)));
  Value term = d.cst(1), sum = d.cst(1);
  for (int k = 1; k <= 16; ++k) {
    term = d.mul(d.mul(term, z), d.cst(-(2.0 * k - 1)));
    sum = d.add(sum, term);
  }
  Value large = d.div(sum, d.mul(x, d.cst(std::sqrt(M_PI))));
  Value r = d.select(d.lt(x, d.cst(8)), small, large);
  return convertScalar(b, loc, r, type, false, false);
}

Value ScalarBuilder::logNdtr(Value xIn) {
  // Eager's formula: log(erfcx(-t) / 2) - t^2 below -1 (no underflow),
  // log1p(-erfc(t) / 2) above, t = x / sqrt(2); in f64.
  Type f64 = b.getF64Type();
  ScalarBuilder d(b, loc, op, f64, storage, false);
  Value x = convertScalar(b, loc, xIn, f64, false, false);
  Value t = d.mul(x, d.cst(M_SQRT1_2));
  Value lower = d.sub(d.log(d.div(d.erfcx(d.neg(t)), d.cst(2))), d.mul(t, t));
  Value upper = d.log1p(d.div(d.neg(d.callLibm("erfc", {t})), d.cst(2)));
  Value r = d.select(d.lt(x, d.cst(-1)), lower, upper);
  return convertScalar(b, loc, r, type, false, false);
}
