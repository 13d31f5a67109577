//===- Debugging.cpp - poptorch.print_tensor to a runtime call -----------===//
//
// poptorch.ipu_print_tensor prints a value while the program runs. The op
// becomes a call of `poptorch_print_tensor_<type>(memref<*xT>, memref<*xi8>)`
// with a read-only view of the input's buffer and the title (a constant
// global, NUL-terminated). The runtime (csrc/bridge/Program.cpp) registers
// those symbols in every JIT engine. The op's result is its input.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// "f32", "bf16", "i64", "ui8", "i1": the suffix of the runtime function.
std::string typeSuffix(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

struct PrintTensorLowering : OpConversionPattern<PrintTensorOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PrintTensorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto module = op->getParentOfType<ModuleOp>();
    Value input = adaptor.getInput();
    auto type = getTensorType(input);
    Type elem = type.getElementType();
    std::string callee = "poptorch_print_tensor_" + typeSuffix(elem);
    auto i8 = IntegerType::get(ctx, 8);
    auto dataType = UnrankedMemRefType::get(elem, 0);
    auto titleType = UnrankedMemRefType::get(i8, 0);

    Value titleArg = stringConstant(rewriter, loc, module,
                                    "__poptorch_print_title_", op.getTitle());
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      if (!module.lookupSymbol(callee)) {
        auto fn = func::FuncOp::create(
            rewriter, loc, callee,
            rewriter.getFunctionType({dataType, titleType}, {}));
        fn.setPrivate();
      }
    }

    Value data = readOnlyBuffer(rewriter, loc, input);
    func::CallOp::create(rewriter, loc, callee, TypeRange{},
                         ValueRange{data, titleArg});
    rewriter.replaceOp(op, input);
    return success();
  }
};

} // namespace

Value mlir::poptorch::stringConstant(OpBuilder &b, Location loc,
                                     ModuleOp module, StringRef prefix,
                                     StringRef text) {
  MLIRContext *ctx = b.getContext();
  auto i8 = IntegerType::get(ctx, 8);
  SmallVector<int8_t> bytes(text.begin(), text.end());
  bytes.push_back(0);
  auto type = MemRefType::get({static_cast<int64_t>(bytes.size())}, i8);
  auto value = DenseElementsAttr::get(
      RankedTensorType::get(type.getShape(), i8), ArrayRef(bytes));
  std::string name;
  for (int n = 0;; ++n) {
    name = prefix.str() + std::to_string(n);
    auto existing = module.lookupSymbol<memref::GlobalOp>(name);
    if (!existing || existing.getInitialValueAttr() == value)
      break;
  }
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                             value, /*constant=*/true,
                             /*alignment=*/IntegerAttr());
  }
  Value buffer = memref::GetGlobalOp::create(b, loc, type, name);
  return memref::CastOp::create(b, loc, UnrankedMemRefType::get(i8, 0), buffer);
}

Value mlir::poptorch::readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto layout = StridedLayoutAttr::get(
      b.getContext(), ShapedType::kDynamic,
      SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
  auto view = MemRefType::get(type.getShape(), type.getElementType(), layout);
  Value buffer = bufferization::ToBufferOp::create(b, loc, view, tensor,
                                                   /*readOnly=*/true);
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

void mlir::poptorch::populateDebuggingPatterns(RewritePatternSet &patterns) {
  patterns.add<PrintTensorLowering>(patterns.getContext());
}
