# lit configuration of the MLIR tests: `lit mlir/test` with poptorch-opt on
# PATH, or named by the POPTORCH_OPT environment variable. FileCheck and
# `not` come from LLVM 22. Output goes under build/, outside the source tree.
import os
import shutil

import lit.formats

config.name = "poptorch-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
_repo = os.path.dirname(os.path.dirname(config.test_source_root))
config.test_exec_root = os.environ.get(
    "POPTORCH_LIT_OUT", os.path.join(_repo, "build", "lit", "mlir")
)

_llvm_bin = os.environ.get("LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin")
_opt = os.environ.get("POPTORCH_OPT") or shutil.which("poptorch-opt")
if not _opt:
    # Convenience for a developer checkout: the default CMake build dir.
    _dev = os.path.join(_repo, "build", "dev", "mlir", "poptorch-opt")
    if os.path.exists(_dev):
        _opt = _dev
if not _opt:
    lit_config.fatal("poptorch-opt not found: put it on PATH or set POPTORCH_OPT")

config.environment["PATH"] = os.pathsep.join(
    [_llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# Replace the tool name only where it stands alone on a RUN line.
config.substitutions.append(
    (r"(?<![\w/.-])poptorch-opt(?![\w.-])", os.path.abspath(_opt))
)
