//===- TracerControlFlow.cpp - poptorch.for_loop and poptorch.cond -------===//
//
// A loop body or a branch is traced like the rest of the model, into the
// region of an `scf.for` / `scf.if` of @main (GraphBuilder::beginForLoop,
// beginIf). The body's arguments are new ipu tensors bound to the region's
// arguments, so writes into them stay inside; when the region ends, every
// tensor still holding one of its values is out of scope (an error to use).
// What a region cannot do is refused by name: write an argument of @main,
// draw random numbers, read a computed value while tracing.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "Tracer.h"
#include "TracerSupport.h"

namespace poptorch {

using poptorch_bridge::CompileError;

namespace {

std::string tensorText(const at::Tensor &t) {
  TypeRecord r;
  r.dtype = t.scalar_type();
  r.sizes.assign(t.sizes().begin(), t.sizes().end());
  return typeText(r);
}

} // namespace

void Tracer::checkNotInRegion(const std::string &opName,
                              const std::string &message) {
  if (regions.empty())
    return;
  fail(opName,
       "inside " + std::string(regions.back().what) + ": " + message + ".");
}

Tracer::OpenRegion &Tracer::innermost(const char *what) {
  if (regions.empty() || std::string(regions.back().what) != what)
    throw std::runtime_error(std::string(what) + ": it is not the innermost "
                                                 "open region");
  return regions.back();
}

std::vector<at::Tensor>
Tracer::boundTensors(const std::vector<at::Tensor> &like,
                     const std::vector<ValueId> &ids) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < like.size(); ++i) {
    at::Tensor t =
        emptyIpu(like[i].sizes(), c10::contiguous_strides(like[i].sizes()),
                 like[i].scalar_type());
    bindValue(t, ids[i]);
    out.push_back(t);
  }
  return out;
}

std::vector<ValueId>
Tracer::regionResults(const std::vector<at::Tensor> &outputs,
                      const std::vector<at::Tensor> *expected,
                      const std::string &what, const std::string &against) {
  if (expected && expected->size() != outputs.size())
    fail(what, "returns " + std::to_string(outputs.size()) + " tensor(s) but " +
                   against + " has " + std::to_string(expected->size()) +
                   ": they must correspond one to one");
  std::vector<ValueId> ids;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const at::Tensor &t = outputs[i];
    if (!t.defined() || !isIpu(t))
      fail(what, "output " + std::to_string(i) +
                     " is not a tensor of the model (an ipu tensor)");
    if (expected) {
      const at::Tensor &e = (*expected)[i];
      if (t.sizes() != e.sizes() || t.scalar_type() != e.scalar_type())
        fail(what, "output " + std::to_string(i) + " is " + tensorText(t) +
                       " but " + against + " " + std::to_string(i) + " is " +
                       tensorText(e) +
                       ": they must have the same shape and dtype");
    }
    ids.push_back(valueOf(t, std::nullopt, what));
  }
  return ids;
}

void Tracer::closeRegion(const OpenRegion &region) {
  // An argument of @main (a buffer, parameter or input) written inside: its
  // new value would only exist inside the region.
  for (auto &[arg, value] : bufferUpdates) {
    auto before = region.bufferUpdates.find(arg);
    if (before == region.bufferUpdates.end() || before->second != value)
      fail(region.what,
           "writes " + argNames.at(arg) +
               " in place inside its body; a loop body or a branch can only "
               "change its own tensors. Pass it in (for_loop's inputs) and "
               "use the value returned, or write it after the region");
  }
  std::string reason = "computed inside " + std::string(region.what) + " at " +
                       describe(sourceLocation()) +
                       ": only its results are visible after it (return the "
                       "tensor from the body)";
  for (auto &[impl, e] : values)
    if (e.value >= region.firstValue && !e.owner.expired()) {
      e.poisonReason = reason;
      e.outOfScope = true;
    }
  // View bookkeeping that refers to the region's values.
  auto inner = [&](ValueId v) { return v >= region.firstValue; };
  for (auto it = expandedViews.begin(); it != expandedViews.end();)
    it = inner(it->first) || inner(it->second.image) ? expandedViews.erase(it)
                                                     : std::next(it);
  for (auto it = expandedBases.begin(); it != expandedBases.end();)
    it = inner(it->first) ? expandedBases.erase(it) : std::next(it);
  for (auto it = expandInverses.begin(); it != expandInverses.end();)
    it = inner(it->first) ? expandInverses.erase(it) : std::next(it);
  for (auto it = viewOrigins.begin(); it != viewOrigins.end();)
    it = inner(it->first) ? viewOrigins.erase(it) : std::next(it);
}

std::vector<at::Tensor>
Tracer::beginForLoop(const std::vector<at::Tensor> &inputs, int64_t count) {
  const char *what = "poptorch.for_loop";
  if (count < 0)
    fail(what, "count must be >= 0, got " + std::to_string(count));
  std::vector<ValueId> inits = regionResults(inputs, nullptr, what, "");
  std::vector<ValueId> args;
  try {
    args = builder.beginForLoop(count, inits, sourceLocation());
  } catch (const CompileError &e) {
    fail(what, e.what());
  }
  // firstValue: the body's arguments are the region's first values.
  regions.push_back({what,
                     args.empty() ? builder.nextValueId() : args[0],
                     bufferUpdates,
                     {},
                     inputs});
  return boundTensors(inputs, args);
}

std::vector<at::Tensor>
Tracer::endForLoop(const std::vector<at::Tensor> &outputs) {
  OpenRegion region = innermost("poptorch.for_loop");
  std::vector<ValueId> yields = regionResults(
      outputs, &region.inputs, "poptorch.for_loop's body", "its input");
  std::vector<ValueId> results;
  try {
    results = builder.endForLoop(yields);
  } catch (const CompileError &e) {
    fail(region.what, e.what());
  }
  regions.pop_back();
  closeRegion(region);
  return boundTensors(region.inputs, results);
}

std::vector<at::Tensor>
Tracer::beginIf(const at::Tensor &cond,
                const std::vector<at::Tensor> &thenInputs) {
  const char *what = "poptorch.cond";
  if (!cond.defined() || !isIpu(cond) || cond.numel() != 1 ||
      cond.scalar_type() != at::kBool || cond.dim() != 0)
    fail(what, "the condition must be a 0-d bool tensor of the model");
  ValueId c = valueOf(cond, std::nullopt, what);
  std::vector<ValueId> ins = regionResults(thenInputs, nullptr, what, "");
  try {
    builder.beginIf(c, sourceLocation());
  } catch (const CompileError &e) {
    fail(what, e.what());
  }
  regions.push_back({what, builder.nextValueId(), bufferUpdates, {}, {}});
  return boundTensors(thenInputs, ins);
}

std::vector<at::Tensor>
Tracer::elseBranch(const std::vector<at::Tensor> &thenOutputs,
                   const std::vector<at::Tensor> &elseInputs) {
  innermost("poptorch.cond");
  std::vector<ValueId> yields =
      regionResults(thenOutputs, nullptr, "poptorch.cond's then_body", "");
  try {
    builder.elseBranch(yields);
  } catch (const CompileError &e) {
    fail("poptorch.cond", e.what());
  }
  OpenRegion &region = regions.back();
  closeRegion(region);
  region.thenOutputs = thenOutputs;
  // else_inputs are values from before the conditional (then_body's are out
  // of scope now).
  return boundTensors(elseInputs,
                      regionResults(elseInputs, nullptr, "poptorch.cond", ""));
}

std::vector<at::Tensor>
Tracer::endIf(const std::vector<at::Tensor> &elseOutputs) {
  OpenRegion region = innermost("poptorch.cond");
  std::vector<ValueId> yields =
      regionResults(elseOutputs, &region.thenOutputs,
                    "poptorch.cond's else_body", "then_body's output");
  std::vector<ValueId> results;
  try {
    results = builder.endIf(yields);
  } catch (const CompileError &e) {
    fail(region.what, e.what());
  }
  regions.pop_back();
  closeRegion(region);
  return boundTensors(region.thenOutputs, results);
}

} // namespace poptorch
