//===- OutlineRepeats.cpp - one function per repeated run of ops ---------===//
//
// A model repeats itself: a transformer's layers are the same ops on the same
// types, and differ only in the weights they read. Tiling, vectorization and
// bufferization work op by op, so on BERT they did their work twelve times
// over before poptorch-outline-kernels found the copies identical again.
//
// This pass finds, in every block of every function, a run of ops that
// repeats back to back (k instances of the same L ops, each reading the values
// before it in the same way) and makes the first instance a private function
// that all k instances call. Later passes then see each layer once.
//
// * Free ops (constants, tensor.empty, and fills and reshapes of them: see
//   isFree) do not count as ops of a run: each instance that uses one gets a
//   clone inside the function, so an instance's constants must equal the
//   first instance's.
// * Candidates come from a hash of each op (name, attributes, types); a
//   candidate is kept only if every instance is the same ops as the first
//   (OperationEquivalence, regions included) and reads its values the same
//   way: a value from inside the instance at the same position, a value from
//   before it consistently (the same value for the same argument).
// * Where in the period the instances start is chosen so that as few values
//   as possible cross the cut: for a transformer that is the hidden state
//   between two layers, so a layer's fusion stays inside one call.
// * The largest saving (ops times repeats) goes first; the search runs again
//   on the rest of the block until nothing repeats.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <set>

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHOUTLINEREPEATS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// Runs shorter than this stay inline: the call is a fusion barrier, and
/// tiling a handful of ops costs little.
constexpr int64_t kMinOps = 8;

/// Candidates verified per search at most: ops that hash alike but read
/// their values differently could otherwise make the search cubic in the
/// block's size. The best candidates come first.
constexpr int64_t kMaxCandidates = 64;

/// Values that cost nothing to recompute: constants, empty tensors, and what
/// is computed from them alone without reading tensor data (fills,
/// reshapes). CSE merged the copies that each layer had; every instance that
/// reads one gets its own copy again. A fill that a contraction accumulates
/// into must stay visible to tiling (it is fused into the tiles), and as an
/// argument the callee's write into it would cost the caller a copy.
bool isFree(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    if (llvm::any_of(linalgOp.getDpsInputs(),
                     [](Value v) { return isa<ShapedType>(v.getType()); }))
      return false;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  auto freeValue = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && isFree(def);
  };
  return llvm::all_of(op->getOperands(), freeValue) &&
         llvm::all_of(above, freeValue);
}

/// Ops that read or make buffers (a host kernel's call and the buffers of its
/// operands and results, made at tensor level by the conversion): outlined,
/// buffers would cross function boundaries that bufferization treats as
/// tensor boundaries, so runs never contain them.
bool touchesBuffers(Operation *op) {
  auto isBuffer = [](Type t) { return isa<BaseMemRefType>(t); };
  bool found = llvm::any_of(op->getOperandTypes(), isBuffer) ||
               llvm::any_of(op->getResultTypes(), isBuffer);
  op->walk([&](Operation *inner) {
    found |= llvm::any_of(inner->getOperandTypes(), isBuffer) ||
             llvm::any_of(inner->getResultTypes(), isBuffer);
  });
  return found;
}

/// The free ops that `v` is computed from, producers first.
void collectFree(Value v, llvm::SetVector<Operation *> &ops) {
  Operation *def = v.getDefiningOp();
  if (ops.contains(def))
    return;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(def->getRegions(), above);
  for (Value u : llvm::concat<Value>(def->getOperands(), above))
    collectFree(u, ops);
  ops.insert(def);
}

/// Whether two free values are computed the same way.
bool sameFree(Value l, Value r) {
  if (l == r)
    return true;
  auto a = dyn_cast<OpResult>(l), b = dyn_cast<OpResult>(r);
  if (!a || !b || a.getResultNumber() != b.getResultNumber())
    return false;
  DenseMap<Value, Value> inner;
  return OperationEquivalence::isEquivalentTo(
      a.getOwner(), b.getOwner(),
      [&](Value x, Value y) {
        auto it = inner.find(x);
        return success(it != inner.end() ? it->second == y : sameFree(x, y));
      },
      [&](Value x, Value y) { inner[x] = y; },
      OperationEquivalence::IgnoreLocations);
}

/// k instances of `len` ops from seq[start].
struct Run {
  int64_t start, len, count;
};

/// The block's ops that runs are made of (everything but free ops and the
/// terminator), and where each one is.
struct Sequence {
  Block &block;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;

  explicit Sequence(Block &block) : block(block) {
    for (Operation &op : block.without_terminator())
      if (!isFree(&op)) {
        index[&op] = ops.size();
        ops.push_back(&op);
      }
  }

  /// The position of the op of the block that `op` is or is nested in: the
  /// terminator is after every op, and -1 stands for free ops and ops outside
  /// the block.
  int64_t positionOfOp(Operation *op) const {
    Operation *top = block.findAncestorOpInBlock(*op);
    if (top && top == block.getTerminator())
      return ops.size();
    auto it = index.find(top);
    return it == index.end() ? -1 : it->second;
  }

  /// The position of the op of the block that defines `v` (or whose region
  /// does), -1 for values from outside the block's ops.
  int64_t positionOf(Value v) const {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &block
                 ? -1
                 : positionOfOp(arg.getOwner()->getParentOp());
    return positionOfOp(v.getDefiningOp());
  }
};

/// How a verified run maps onto a function.
struct Instances {
  Run run;
  /// The ops of every instance, instance after instance.
  SmallVector<Operation *> ops;
  /// Per instance, the values it reads from before it (arguments).
  SmallVector<SmallVector<Value>> inputs;
  /// The free ops the first instance reads (cloned into the function).
  SmallVector<Operation *> freeOps;
  /// (op within the instance, result number) of what is used after it.
  SmallVector<std::pair<int64_t, unsigned>> outputs;
};

struct OutlineRepeatsPass
    : public poptorch::impl::PoptorchOutlineRepeatsBase<OutlineRepeatsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal())
        continue;
      SmallVector<Block *> blocks;
      fn.walk([&](Block *b) {
        Operation *parent = b->getParentOp();
        if (parent == fn || isa<RegionBranchOpInterface>(parent))
          blocks.push_back(b);
      });
      for (Block *block : blocks)
        while (std::optional<Instances> found = findRepeats(*block))
          outline(symbols, fn, *found);
    }
  }

  std::optional<Instances> findRepeats(Block &block) {
    Sequence seq(block);
    int64_t n = seq.ops.size();
    if (n < 2 * kMinOps)
      return std::nullopt;
    SmallVector<llvm::hash_code> hash;
    for (auto [i, op] : llvm::enumerate(seq.ops))
      hash.push_back(touchesBuffers(op)
                         // A hash no other op has: no run contains the op.
                         ? llvm::hash_combine(op, i)
                         : OperationEquivalence::computeHash(
                               op, OperationEquivalence::ignoreHashValue,
                               OperationEquivalence::ignoreHashValue,
                               OperationEquivalence::IgnoreLocations));

    // crossing[c]: values defined before seq[c] and used at or after it.
    SmallVector<int64_t> crossing(n + 2, 0);
    for (auto [i, op] : llvm::enumerate(seq.ops))
      for (Value r : op->getResults()) {
        int64_t last = -1;
        for (Operation *user : r.getUsers())
          last = std::max(last, seq.positionOfOp(user));
        if (last > int64_t(i)) {
          ++crossing[i + 1];
          --crossing[last + 1];
        }
      }
    for (int64_t c = 1; c <= n; ++c)
      crossing[c] += crossing[c - 1];

    // Periodic stretches: hash[i] == hash[i + len] for i in [from, to).
    struct Stretch {
      int64_t from, span, len;
    };
    SmallVector<Stretch> stretches;
    for (int64_t len = kMinOps; 2 * len <= n; ++len)
      for (int64_t i = 0; i + len < n;) {
        if (hash[i] != hash[i + len]) {
          ++i;
          continue;
        }
        int64_t j = i;
        while (j + len < n && hash[j] == hash[j + len])
          ++j;
        if (j - i >= len)
          stretches.push_back({i, j - i + len, len});
        i = j + 1;
      }
    llvm::stable_sort(stretches, [](const Stretch &a, const Stretch &b) {
      return (a.span / a.len - 1) * a.len > (b.span / b.len - 1) * b.len;
    });

    for (const Stretch &s : ArrayRef(stretches).take_front(kMaxCandidates)) {
      // The phase whose cut the fewest values cross, among those that keep
      // the most instances.
      int64_t bestStart = -1, bestCount = 0;
      for (int64_t p = 0; p < s.len; ++p) {
        int64_t count = (s.span - p) / s.len, start = s.from + p;
        if (count < 2)
          break;
        if (count > bestCount ||
            (count == bestCount && crossing[start] < crossing[bestStart])) {
          bestStart = start;
          bestCount = count;
        }
      }
      if (bestCount < 2)
        continue;
      Instances found = verify(seq, {bestStart, s.len, bestCount});
      if (found.run.count >= 2)
        return found;
    }
    return std::nullopt;
  }

  /// The longest prefix of `run` whose instances match the first one.
  Instances verify(const Sequence &seq, Run run) {
    Instances result{run, {}, {}, {}, {}};
    result.run.count = 1;
    auto inside = [&](Value v, int64_t instance) {
      int64_t at = seq.positionOf(v);
      int64_t start = run.start + instance * run.len;
      return at >= start && at < start + run.len;
    };
    // The first instance's operands from before it, in order of first use.
    llvm::SetVector<Value> firstInputs;
    llvm::SetVector<Operation *> freeOps;
    for (int64_t i = 0; i < run.len; ++i)
      seq.ops[run.start + i]->walk([&](Operation *op) {
        for (Value v : op->getOperands()) {
          if (inside(v, 0))
            continue;
          Operation *def = v.getDefiningOp();
          if (def && isFree(def))
            collectFree(v, freeOps);
          else
            firstInputs.insert(v);
        }
      });
    result.inputs.push_back(firstInputs.takeVector());
    result.freeOps = freeOps.takeVector();

    for (int64_t k = 1; k < run.count; ++k) {
      std::optional<SmallVector<Value>> inputs =
          matchInstance(seq, run, k, result.inputs[0], inside);
      if (!inputs)
        break;
      result.inputs.push_back(std::move(*inputs));
      result.run.count = k + 1;
    }

    // What any instance's later users read.
    std::set<std::pair<int64_t, unsigned>> used;
    for (int64_t k = 0; k < result.run.count; ++k)
      for (int64_t i = 0; i < run.len; ++i) {
        Operation *op = seq.ops[run.start + k * run.len + i];
        result.ops.push_back(op);
        for (OpResult r : op->getResults())
          if (llvm::any_of(r.getUsers(), [&](Operation *user) {
                int64_t at = seq.positionOfOp(user);
                return at < run.start + k * run.len ||
                       at >= run.start + (k + 1) * run.len;
              }))
            used.insert({i, r.getResultNumber()});
      }
    result.outputs.assign(used.begin(), used.end());
    return result;
  }

  /// Instance k's arguments (matching `firstInputs`), or nothing if it is
  /// not the first instance's ops reading their values the same way.
  std::optional<SmallVector<Value>>
  matchInstance(const Sequence &seq, Run run, int64_t k,
                ArrayRef<Value> firstInputs,
                llvm::function_ref<bool(Value, int64_t)> inside) {
    DenseMap<Value, Value> same;             // first instance -> instance k
    DenseMap<Value, Value> outer, outerBack; // values from before them
    for (int64_t i = 0; i < run.len; ++i) {
      Operation *a = seq.ops[run.start + i];
      Operation *b = seq.ops[run.start + k * run.len + i];
      if (!OperationEquivalence::isEquivalentTo(
              a, b, OperationEquivalence::ignoreValueEquivalence, nullptr,
              OperationEquivalence::IgnoreLocations))
        return std::nullopt;
      SmallVector<Operation *> as, bs;
      a->walk<WalkOrder::PreOrder>([&](Operation *o) { as.push_back(o); });
      b->walk<WalkOrder::PreOrder>([&](Operation *o) { bs.push_back(o); });
      if (as.size() != bs.size())
        return std::nullopt;
      for (auto [x, y] : llvm::zip(as, bs)) {
        for (auto [l, r] : llvm::zip(x->getOperands(), y->getOperands())) {
          if (auto it = same.find(l); it != same.end()) {
            if (it->second != r)
              return std::nullopt;
            continue;
          }
          if (inside(r, k))
            return std::nullopt;
          Operation *ld = l.getDefiningOp(), *rd = r.getDefiningOp();
          bool lFree = ld && isFree(ld), rFree = rd && isFree(rd);
          if (lFree || rFree) {
            if (!lFree || !rFree || !sameFree(l, r))
              return std::nullopt;
            continue;
          }
          auto [f, fresh] = outer.try_emplace(l, r);
          auto [g, freshBack] = outerBack.try_emplace(r, l);
          if (f->second != r || g->second != l)
            return std::nullopt;
        }
        for (auto [u, v] : llvm::zip(x->getResults(), y->getResults()))
          same[u] = v;
        for (auto [ru, rv] : llvm::zip(x->getRegions(), y->getRegions()))
          for (auto [bu, bv] : llvm::zip(ru, rv))
            for (auto [u, v] : llvm::zip(bu.getArguments(), bv.getArguments()))
              same[u] = v;
      }
    }
    SmallVector<Value> inputs;
    for (Value v : firstInputs)
      inputs.push_back(outer.lookup(v));
    return inputs;
  }

  void outline(SymbolTable &symbols, func::FuncOp parent,
               const Instances &found) {
    const Run &run = found.run;
    auto op = [&](int64_t k, int64_t i) { return found.ops[k * run.len + i]; };
    Location loc = op(0, 0)->getLoc();
    SmallVector<Type> resultTypes;
    for (auto [i, r] : found.outputs)
      resultTypes.push_back(op(0, i)->getResult(r).getType());

    OpBuilder b(parent);
    auto fn = func::FuncOp::create(
        b, loc, (parent.getSymName() + "_repeat").str(),
        b.getFunctionType(ValueRange(found.inputs[0]).getTypes(), resultTypes));
    fn.setPrivate();
    symbols.insert(fn); // a unique name
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(found.inputs[0], entry->getArguments()))
      map.map(v, arg);
    for (Operation *c : found.freeOps)
      b.clone(*c, map);
    for (int64_t i = 0; i < run.len; ++i)
      b.clone(*op(0, i), map);
    SmallVector<Value> results;
    for (auto [i, r] : found.outputs)
      results.push_back(map.lookup(op(0, i)->getResult(r)));
    func::ReturnOp::create(b, loc, results);

    // An instance's arguments may be results of the instance before it,
    // which its call replaced.
    DenseMap<Value, Value> replaced;
    for (int64_t k = 0; k < run.count; ++k) {
      Operation *last = op(k, run.len - 1);
      OpBuilder at(last->getContext());
      at.setInsertionPointAfter(last);
      SmallVector<Value> args;
      for (Value v : found.inputs[k]) {
        Value after = replaced.lookup(v);
        args.push_back(after ? after : v);
      }
      auto call = func::CallOp::create(at, op(k, 0)->getLoc(), fn, args);
      for (auto [n, out] : llvm::enumerate(found.outputs)) {
        Value old = op(k, out.first)->getResult(out.second);
        old.replaceAllUsesWith(call.getResult(n));
        replaced[old] = call.getResult(n);
      }
      for (int64_t i = run.len - 1; i >= 0; --i)
        op(k, i)->erase();
    }
  }
};

} // namespace
