//===- LowerVectors.cpp - hoisting and vector lowering on tensors --------===//
//
// The last step of poptorch-tile-and-vectorize, on each function once its
// tiles are vectorized: register tiles' accumulators are hoisted out of
// their reduction loops, and the vector ops are lowered towards what LLVM
// selects well (contractions to FMAs, or to AVX512-BF16 dot products for
// bfloat16 on hosts that have them; transposes to shuffles; reductions to
// register-wide combines).
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

namespace {

/// Whether `write` overwrites every element of its (static) tensor: no mask,
/// from the origin, and the chunk it writes (each dim covered by the vector
/// dim written along it, a dim that none runs along by one element) is the
/// tensor's shape.
bool overwritesWholeTensor(vector::TransferWriteOp write) {
  auto type = dyn_cast<RankedTensorType>(write.getBase().getType());
  return type && type.hasStaticShape() && !write.getMask() &&
         !write.hasOutOfBoundsDim() &&
         llvm::all_of(write.getIndices(), isZeroInteger) &&
         ArrayRef<int64_t>(write.getTransferChunkAccessed()) == type.getShape();
}

/// An in-bounds read of a tensor that a splat (a constant or a broadcast
/// scalar) has just overwritten whole is that splat: a register tile's
/// accumulator starts from its vectorized fill. Upstream's read-after-write
/// fold needs the same vector type, and a panel matmul's fill writes the
/// tile's shape (6x1x16) where the contraction reads its accumulator without
/// the unit panel loop (6x16). Left alone, every such tile bufferized to a
/// heap allocation, zero-filled and freed around each run of the reduction
/// loop (a 1024x768 @ 768x3072 linear layer: a malloc, twelve stores and a
/// free per 6x16 block, 147K flops).
struct ReadOfSplatWrite : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto write = read.getBase().getDefiningOp<vector::TransferWriteOp>();
    if (!write || read.getMask() || read.hasOutOfBoundsDim() ||
        !overwritesWholeTensor(write))
      return failure();
    VectorType type = read.getVectorType();
    Value written = write.getVector();
    SplatElementsAttr splat;
    if (matchPattern(written, m_Constant(&splat))) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          read, SplatElementsAttr::get(type, splat.getSplatValue<Attribute>()));
      return success();
    }
    auto broadcast = written.getDefiningOp<vector::BroadcastOp>();
    if (!broadcast || isa<VectorType>(broadcast.getSourceType()))
      return failure();
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, type,
                                                     broadcast.getSource());
    return success();
  }
};

/// A write that overwrites its whole tensor does not need what an earlier
/// write put there: it writes into that write's tensor instead (the
/// accumulator's store after the fill's, when their vector types differ,
/// which upstream's write-after-write fold needs to be equal).
struct WriteOverWholeWrite : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferWriteOp write,
                                PatternRewriter &rewriter) const override {
    auto earlier = write.getBase().getDefiningOp<vector::TransferWriteOp>();
    if (!earlier || !overwritesWholeTensor(write))
      return failure();
    rewriter.modifyOpInPlace(
        write, [&] { write.getBaseMutable().assign(earlier.getBase()); });
    return success();
  }
};

/// A multi-reduction over its leading dim (and maybe others) combines the
/// slices along that dim elementwise first, then reduces the rest: a batch
/// norm's per-channel statistics over an 8 x 16 x 16 tile become 127 vector
/// adds and one horizontal sum, where the inner-reduction lowering flattened
/// the tile into one 2048-wide vector, element row by row (1.8 s of LLVM
/// code generation per such kernel).
struct ReduceLeadingDim : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSourceVectorType();
    // Slices narrower than a few lanes are left to the lowering, which
    // reduces such a column (1000 x 1) as one wide vector.
    if (op.isMasked() || type.getRank() < 2 || type.isScalable() ||
        !op.isReducedDim(0) || type.getNumElements() / type.getDimSize(0) < 4)
      return failure();
    Location loc = op.getLoc();
    Value combined;
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      Value slice = vector::ExtractOp::create(rewriter, loc, op.getSource(), i);
      combined = combined ? vector::makeArithReduction(
                                rewriter, loc, op.getKind(), combined, slice)
                          : slice;
    }
    SmallVector<bool> rest;
    for (int64_t d = 1; d < type.getRank(); ++d)
      rest.push_back(op.isReducedDim(d));
    if (!llvm::is_contained(rest, true))
      rewriter.replaceOp(op,
                         vector::makeArithReduction(rewriter, loc, op.getKind(),
                                                    combined, op.getAcc()));
    else
      rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
          op, combined, op.getAcc(), rest, op.getKind());
    return success();
  }
};

/// A multi-reduction whose leading dim is kept and which reduces a dim that is
/// neither leading nor innermost (a per-channel mean over 7 x 7 pixels, tiled
/// as 32 channels x 7 x 7) is one multi-reduction per leading index: each
/// then starts with a reduced dim and combines its rows elementwise
/// (ReduceLeadingDim). The inner-reduction lowering flattened the reduced
/// dims instead, shuffling each 7-wide row into a 49-wide vector: 224 rows,
/// 36000 lines of LLVM IR and 3.2 s of LLVM code generation for ConvNeXt's
/// final pooling.
struct UnrollLeadingParallelDim
    : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSourceVectorType();
    int64_t rank = type.getRank();
    if (op.isMasked() || rank < 3 || type.isScalable() || op.isReducedDim(0))
      return failure();
    SmallVector<bool> rest;
    for (int64_t d = 1; d < rank; ++d)
      rest.push_back(op.isReducedDim(d));
    if (!llvm::is_contained(ArrayRef<bool>(rest).drop_back(), true))
      return failure(); // no middle dim reduced
    Location loc = op.getLoc();
    Value result = op.getAcc();
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      Value slice = vector::ExtractOp::create(rewriter, loc, op.getSource(), i);
      Value acc = vector::ExtractOp::create(rewriter, loc, op.getAcc(), i);
      Value reduced = vector::MultiDimReductionOp::create(
          rewriter, loc, slice, acc, rest, op.getKind());
      result = vector::InsertOp::create(rewriter, loc, reduced, result, i);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A horizontal reduction wider than a register combines register-wide
/// chunks elementwise and reduces one register (and the tail narrower than
/// a register): LLVM expands a 1000-wide reduction into one long chain
/// (a softmax over 1000 classes: 1.8 s of code generation). The chunks go
/// round-robin into kAccumulators independent registers combined at the
/// end: one chain of dependent adds or maxima runs at the latency of the
/// instruction (softmax rows of 1500 in Whisper's attention, 4x slower).
struct SplitWideReduction : OpRewritePattern<vector::ReductionOp> {
  SplitWideReduction(MLIRContext *ctx, int64_t lanes)
      : OpRewritePattern(ctx), lanes(lanes) {}
  static constexpr int64_t kAccumulators = 4;
  int64_t lanes;

  LogicalResult matchAndRewrite(vector::ReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSourceVectorType();
    if (op.isMasked() || type.getRank() != 1 || type.isScalable() ||
        type.getDimSize(0) <= lanes)
      return failure();
    Location loc = op.getLoc();
    int64_t n = type.getDimSize(0), whole = n / lanes * lanes;
    auto chunk = [&](int64_t at, int64_t size) -> Value {
      return vector::ExtractStridedSliceOp::create(rewriter, loc,
                                                   op.getVector(), at, size, 1);
    };
    SmallVector<Value, kAccumulators> accs;
    for (int64_t at = 0, i = 0; at < whole; at += lanes, ++i) {
      Value c = chunk(at, lanes);
      if (i < kAccumulators)
        accs.push_back(c);
      else
        accs[i % kAccumulators] = vector::makeArithReduction(
            rewriter, loc, op.getKind(), accs[i % kAccumulators], c);
    }
    // Pairwise: (a0 + a1) + (a2 + a3).
    while (accs.size() > 1) {
      SmallVector<Value, kAccumulators> pairs;
      for (size_t i = 0; i + 1 < accs.size(); i += 2)
        pairs.push_back(vector::makeArithReduction(rewriter, loc, op.getKind(),
                                                   accs[i], accs[i + 1]));
      if (accs.size() % 2)
        pairs.push_back(accs.back());
      accs = std::move(pairs);
    }
    Value acc = accs.front();
    Value r = vector::ReductionOp::create(rewriter, loc, op.getKind(), acc,
                                          op.getAcc(), op.getFastmath());
    if (whole < n)
      r = vector::ReductionOp::create(rewriter, loc, op.getKind(),
                                      chunk(whole, n - whole), r,
                                      op.getFastmath());
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// A contraction of bfloat16 matrices into an f32 accumulator, (m..., k) x
/// (k, n) -> (m..., n) with an even k, as AVX512-BF16 dot products
/// (vdpbf16ps: each f32 lane adds the products of one pair of bf16 along k,
/// twice the multiply-adds of an f32 FMA per instruction, and no widening
/// of the operands). Each lhs row's pair of elements is broadcast as one
/// 32-bit element. The rhs must give the instruction rows k and k + 1
/// interleaved: a plain (k, n) rhs gets one shuffle per register of columns,
/// shared by all rows of the tile; a weight that poptorch-pack-weights laid
/// out in pairs is read as it is, the contraction then being over (kp, 2):
/// (m..., kp, 2) x (kp, n, 2) -> (m..., n). Sums are rounded in a different
/// order than one FMA per k, and the instruction treats bf16 subnormals as
/// zero, as PyTorch's own bf16 kernels on such hosts do. Columns that are
/// not whole registers are computed in whole registers. Shapes that do not
/// fit (odd k, masked tiles, a transposed operand) keep the FMA lowering.
struct ContractToBF16Dot : OpRewritePattern<vector::ContractionOp> {
  ContractToBF16Dot(MLIRContext *ctx, int64_t lanes)
      : OpRewritePattern(ctx, /*benefit=*/2), lanes(lanes) {}
  int64_t lanes;

  static Value bf16Source(Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    auto type = dyn_cast<VectorType>(v.getType());
    return type && type.getElementType().isBF16() && !type.isScalable()
               ? v
               : Value();
  }

  /// Whether the maps are lhs (b..., m..., k), rhs (b..., k, n) (or, when
  /// `paired`, lhs (b..., m..., kp, kr), rhs (b..., kp, n, kr) with kr of 2),
  /// acc (b..., m..., n), with unit batch dims b (a batched matmul's register
  /// tile).
  static bool isTileOfMatmul(vector::ContractionOp op, VectorType rhsType,
                             bool paired) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    ArrayRef<AffineExpr> l = maps[0].getResults(), r = maps[1].getResults(),
                         a = maps[2].getResults();
    int64_t ks = paired ? 2 : 1;
    if (r.size() < 1 + size_t(ks) || a.size() + ks != l.size() + 1 ||
        l.size() < r.size() - 1 ||
        llvm::count(op.getIteratorTypesArray(),
                    vector::IteratorType::reduction) != ks)
      return false;
    // rhs's dims: b..., then kp, n, kr (paired) or k, n.
    size_t nAt = paired ? r.size() - 2 : r.size() - 1;
    size_t batch = r.size() - 1 - ks;
    if (a.back() != r[nAt] ||
        ArrayRef(l).drop_back(ks) != ArrayRef(a).drop_back() ||
        ArrayRef(r).take_front(batch) != ArrayRef(l).take_front(batch) ||
        l.end()[-ks] != r[batch] || (paired && l.back() != r.back()) ||
        llvm::any_of(rhsType.getShape().take_front(batch),
                     [](int64_t d) { return d != 1; }))
      return false;
    for (AffineExpr e : ArrayRef(l).take_back(ks))
      if (!vector::isReductionIterator(
              op.getIteratorTypes()[cast<AffineDimExpr>(e).getPosition()]))
        return false;
    return !paired || rhsType.getShape().back() == 2;
  }

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = bf16Source(op.getLhs()), rhs = bf16Source(op.getRhs());
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD || !lhs || !rhs ||
        !accType || !accType.getElementType().isF32() ||
        isa_and_nonnull<vector::MaskOp>(op->getParentOp()))
      return failure();
    auto rhsType = cast<VectorType>(rhs.getType());
    bool paired = isTileOfMatmul(op, rhsType, /*paired=*/true);
    if (!paired && !isTileOfMatmul(op, rhsType, /*paired=*/false))
      return failure();
    ArrayRef<int64_t> rhsShape = rhsType.getShape();
    int64_t k = paired ? 2 * rhsShape.end()[-3] : rhsShape.end()[-2];
    int64_t n = paired ? rhsShape.end()[-2] : rhsShape.back();
    if (k % 2 != 0 || n == 0)
      return failure();
    int64_t m = accType.getNumElements() / n;
    // Columns that are not whole registers (a tile of the last 17 of 49
    // pixels) are computed in whole registers, the rhs rows padded with
    // zeros, and only the first n kept.
    int64_t width = llvm::alignTo(n, lanes);

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type();
    // (Folded into the shape casts that read the operands, if any.)
    Value lhs2 = rewriter.createOrFold<vector::ShapeCastOp>(
        loc, VectorType::get({m, k}, bf16), lhs);
    // (k, n), or (k / 2, 2 n) with the pairs interleaved.
    rhs = rewriter.createOrFold<vector::ShapeCastOp>(
        loc,
        paired ? VectorType::get({k / 2, 2 * n}, bf16)
               : VectorType::get({k, n}, bf16),
        rhs);
    auto accRows = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({m, n}, rewriter.getF32Type()),
        op.getAcc());
    // (bf16 vectors are padded as i16: LLVM 22's X86 instruction selection
    // aborts on shuffles of bfloat vectors of odd length.)
    auto padded = [&](Value v, int64_t size) -> Value {
      auto type = cast<VectorType>(v.getType());
      if (type.getNumElements() == size)
        return v;
      Type elem = type.getElementType();
      Type bits = elem.isBF16() ? rewriter.getI16Type() : elem;
      if (bits != elem)
        v = vector::BitCastOp::create(rewriter, loc, type.clone(bits), v);
      auto wide = VectorType::get({size}, bits);
      Value zeros = arith::ConstantOp::create(rewriter, loc, wide,
                                              rewriter.getZeroAttr(wide));
      v = vector::InsertStridedSliceOp::create(rewriter, loc, v, zeros, 0, 1);
      return bits == elem ? v
                          : vector::BitCastOp::create(rewriter, loc,
                                                      wide.clone(elem), v);
    };
    int64_t chunks = width / lanes;
    auto pairType = VectorType::get({2 * lanes}, bf16);
    SmallVector<Value> acc;     // m x chunks registers of f32
    SmallVector<Value> lhsRows; // m rows of k bf16
    for (int64_t i = 0; i < m; ++i) {
      lhsRows.push_back(vector::ExtractOp::create(rewriter, loc, lhs2, i));
      Value row =
          padded(vector::ExtractOp::create(rewriter, loc, accRows, i), width);
      for (int64_t j = 0; j < chunks; ++j)
        acc.push_back(vector::ExtractStridedSliceOp::create(
            rewriter, loc, row, j * lanes, lanes, 1));
    }
    for (int64_t p = 0; p < k / 2; ++p) {
      SmallVector<Value> pairs; // columns j*lanes.. of rows 2p, 2p+1
      if (paired) {
        Value row =
            padded(vector::ExtractOp::create(rewriter, loc, rhs, p), 2 * width);
        for (int64_t j = 0; j < chunks; ++j)
          pairs.push_back(vector::ExtractStridedSliceOp::create(
              rewriter, loc, row, j * 2 * lanes, 2 * lanes, 1));
      } else {
        Value r0 =
            padded(vector::ExtractOp::create(rewriter, loc, rhs, 2 * p), width);
        Value r1 = padded(
            vector::ExtractOp::create(rewriter, loc, rhs, 2 * p + 1), width);
        for (int64_t j = 0; j < chunks; ++j) {
          SmallVector<int64_t> mask;
          for (int64_t e = 0; e < lanes; ++e) {
            mask.push_back(j * lanes + e);
            mask.push_back(width + j * lanes + e);
          }
          pairs.push_back(
              vector::ShuffleOp::create(rewriter, loc, r0, r1, mask));
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        Value two = vector::ExtractStridedSliceOp::create(
            rewriter, loc, lhsRows[i], 2 * p, 2, 1);
        Value word = vector::BitCastOp::create(
            rewriter, loc, VectorType::get({1}, rewriter.getI32Type()), two);
        Value scalar = vector::ExtractOp::create(rewriter, loc, word, 0);
        Value splat = vector::BroadcastOp::create(
            rewriter, loc, VectorType::get({lanes}, rewriter.getI32Type()),
            scalar);
        Value a = vector::BitCastOp::create(rewriter, loc, pairType, splat);
        for (int64_t j = 0; j < chunks; ++j) {
          Value &c = acc[i * chunks + j];
          c = x86vector::DotBF16Op::create(rewriter, loc, c.getType(), c, a,
                                           pairs[j]);
        }
      }
    }
    Value result = ub::PoisonOp::create(rewriter, loc, accRows.getType());
    auto rowType = VectorType::get({width}, rewriter.getF32Type());
    for (int64_t i = 0; i < m; ++i) {
      Value row = ub::PoisonOp::create(rewriter, loc, rowType);
      for (int64_t j = 0; j < chunks; ++j)
        row = vector::InsertStridedSliceOp::create(
            rewriter, loc, acc[i * chunks + j], row, j * lanes, 1);
      if (width != n)
        row =
            vector::ExtractStridedSliceOp::create(rewriter, loc, row, 0, n, 1);
      result = vector::InsertOp::create(rewriter, loc, row, result, i);
    }
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, accType, result);
    return success();
  }
};

/// A batched contraction of f16/bf16 operands into a wider accumulator (a
/// batched matmul's register tile, unit batch dims and all) that
/// ContractToBF16Dot does not take: its operands are extended to the
/// accumulator's type, since the contraction lowering unrolls batch dims
/// into contractions it cannot lower with mixed types. A plain (m, k) x
/// (k, n) tile keeps its narrow operands: the outer-product lowering extends
/// them row by row.
struct WidenBatchedContract : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (!accType || op.getRhsType().getRank() <= 2)
      return failure();
    Type wide = accType.getElementType();
    auto widen = [&](Value v) -> Value {
      auto type = cast<VectorType>(v.getType());
      if (type.getElementType() == wide || !isa<FloatType>(wide) ||
          !isa<FloatType>(type.getElementType()))
        return Value();
      return arith::ExtFOp::create(rewriter, op.getLoc(), type.clone(wide), v);
    };
    Value lhs = widen(op.getLhs()), rhs = widen(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (lhs)
        op.getLhsMutable().assign(lhs);
      if (rhs)
        op.getRhsMutable().assign(rhs);
    });
    return success();
  }
};

} // namespace

void mlir::poptorch::hoistAndLowerVectors(func::FuncOp func, int64_t lanes,
                                          bool bf16Dot) {
  MLIRContext *ctx = func.getContext();
  IRRewriter rewriter(ctx);
  {
    RewritePatternSet patterns(ctx);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  // Transposing reads of square tiles (TileGeneric.cpp's tileGeneric): a
  // read along the source's rows and a vector.transpose, which lowers to
  // shuffles.
  func.walk([&](vector::TransferReadOp read) {
    AffineMap map = read.getPermutationMap();
    VectorType type = read.getVectorType();
    if (read.getMask() || map.isMinorIdentity() || !map.isPermutation() ||
        llvm::is_contained(read.getInBoundsValues(), false) ||
        llvm::count_if(type.getShape(), [](int64_t s) { return s != 1; }) !=
            2 ||
        llvm::any_of(type.getShape(),
                     [&](int64_t s) { return s != 1 && s != lanes; }))
      return;
    SmallVector<int64_t> perm, shape(type.getRank());
    for (AffineExpr e : map.getResults())
      perm.push_back(cast<AffineDimExpr>(e).getPosition());
    for (auto [i, p] : llvm::enumerate(perm))
      shape[p] = type.getDimSize(i);
    rewriter.setInsertionPoint(read);
    Value rows = vector::TransferReadOp::create(
        rewriter, read.getLoc(), VectorType::get(shape, type.getElementType()),
        read.getBase(), read.getIndices(), read.getPadding(),
        SmallVector<bool>(shape.size(), true));
    rewriter.replaceOpWithNewOp<vector::TransposeOp>(read, rows, perm);
  });
  // Accumulators: keep the vector in registers across the k loop (post
  // order, so inner loops hoist first and outer loops see the result).
  func.walk([&](scf::ForOp loop) {
    (void)hoistLoopInvariantSubsets(rewriter, loop);
  });
  // A reduction over unit dims only (a step of a loop over an outer
  // reduction, see tileGeneric) is an elementwise combine with its
  // accumulator, and one over a leading dim combines its slices
  // (ReduceLeadingDim, after UnrollLeadingParallelDim): all before the
  // multi-reduction lowering, which makes one scalar reduction per element of
  // the result.
  {
    RewritePatternSet unitReductions(ctx);
    vector::MultiDimReductionOp::getCanonicalizationPatterns(unitReductions,
                                                             ctx);
    unitReductions.add<ReduceLeadingDim, UnrollLeadingParallelDim>(ctx);
    (void)applyPatternsGreedily(func, std::move(unitReductions));
  }
  // Transfer permutation maps are lowered after bufferization (by
  // convert-vector-to-scf), once masks are gone.
  RewritePatternSet patterns(ctx);
  patterns.add<ReadOfSplatWrite, WriteOverWholeWrite>(ctx);
  patterns.add<SplitWideReduction>(ctx, lanes);
  patterns.add<WidenBatchedContract>(ctx);
  if (bf16Dot)
    patterns.add<ContractToBF16Dot>(ctx, lanes);
  // A tile that the k loop carries unchanged (its accumulator hoisted) is
  // forwarded, so that the store after the loop meets the fill's write.
  scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::Shuffle16x16);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(func, std::move(patterns));
}
