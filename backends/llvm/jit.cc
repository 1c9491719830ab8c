// The one file of the package that includes LLVM headers (they take seconds to parse).
#include "backends/llvm/jit.h"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "compiler/ir/uop.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "runtime/kernel_cache.h"

namespace rg {

namespace {

std::atomic<uint64_t> compilations{0};

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

// The process-wide JIT. Never destroyed: kernels may run during static destruction.
struct Jit {
  std::mutex mu;  // one compile at a time; a second request for a key waits for the first
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;  // the host CPU's cost model for the O2 pipeline
  std::unordered_map<std::string, std::shared_ptr<const LlvmKernel>> kernels;
  uint64_t dylibs = 0;
  // What ORC reports on the side while materializing (an unresolved symbol's name); the lookup's
  // own error only says that materialization failed.
  std::mutex report_mu;
  std::string reported;
};

Jit& jit() {
  static Jit* j = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // The host's CPU and features: the same code clang -march=native would produce.
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw Error("llvm: cannot describe the host: " + message(jtmb.takeError()));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
    auto tm = jtmb->createTargetMachine();
    if (!tm) throw Error("llvm: no target machine for the host: " + message(tm.takeError()));
    auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!lljit) throw Error("llvm: cannot create the JIT: " + message(lljit.takeError()));
    // Kernels call libm (sinf, exp2f, fmodf: what the math intrinsics lower to) from this process.
    auto gen =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*lljit)->getDataLayout().getGlobalPrefix());
    if (!gen) throw Error("llvm: cannot search this process for symbols: " + message(gen.takeError()));
    (*lljit)->getMainJITDylib().addGenerator(std::move(*gen));
    auto* out = new Jit();
    out->lljit = std::move(*lljit);
    out->tm = std::move(*tm);
    out->lljit->getExecutionSession().setErrorReporter([out](llvm::Error e) {
      std::lock_guard<std::mutex> lock(out->report_mu);
      out->reported += message(std::move(e)) + "\n";
    });
    return out;
  }();
  return *j;
}

// Parses and verifies a module for the host. Throws rg::Error with LLVM's diagnostic.
std::unique_ptr<llvm::Module> parse(const std::string& ir, llvm::LLVMContext& ctx, Jit& j) {
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> m = llvm::parseIR(llvm::MemoryBufferRef(ir, "kernel"), diag, ctx);
  if (!m) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print("kernel", os, /*ShowColors=*/false);
    throw Error("compile_llvm: bad IR: " + os.str());
  }
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(*m, &os)) throw Error("compile_llvm: invalid IR: " + os.str());
  m->setTargetTriple(j.tm->getTargetTriple().str());
  m->setDataLayout(j.lljit->getDataLayout());
  return m;
}

// The standard O2 pipeline (mem2reg/SROA, instcombine, loop and SLP vectorizers, ...).
void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

}  // namespace

uint64_t llvm_compilations() { return compilations.load(); }

std::string optimize_llvm(const std::string& ir) {
  Jit& j = jit();
  std::lock_guard<std::mutex> lock(j.mu);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parse(ir, ctx, j);
  optimize(*m, *j.tm);
  std::string out;
  llvm::raw_string_ostream os(out);
  m->print(os, nullptr);
  return os.str();
}

std::shared_ptr<const LlvmKernel> compile_llvm(const std::string& ir, const std::string& name) {
  const std::string key = content_key(name + "\n" + ir);
  Jit& j = jit();
  std::lock_guard<std::mutex> lock(j.mu);
  if (auto it = j.kernels.find(key); it != j.kernels.end()) return it->second;
  compilations.fetch_add(1, std::memory_order_relaxed);

  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = parse(ir, *ctx, j);
  optimize(*m, *j.tm);
  // A JITDylib per module: kernels of different source may share a name. Symbols it does not
  // define resolve through the main one, which sees this process.
  auto jd = j.lljit->createJITDylib("kernel" + std::to_string(j.dylibs++));
  if (!jd) throw Error("compile_llvm: " + message(jd.takeError()));
  jd->addToLinkOrder(j.lljit->getMainJITDylib());
  {
    std::lock_guard<std::mutex> rl(j.report_mu);
    j.reported.clear();
  }
  auto fail = [&](const std::string& what, llvm::Error e) {
    std::string msg = "compile_llvm: " + what + ": " + message(std::move(e));
    {
      std::lock_guard<std::mutex> rl(j.report_mu);
      if (!j.reported.empty()) msg += "\n" + j.reported;
    }
    llvm::consumeError(j.lljit->getExecutionSession().removeJITDylib(*jd));
    return Error(msg);
  };
  if (llvm::Error e = j.lljit->addIRModule(*jd, llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw fail("cannot add the module", std::move(e));
  auto sym = j.lljit->lookup(*jd, name);  // compiles the module to machine code
  if (!sym) throw fail("no function '" + name + "'", sym.takeError());
  auto k = std::make_shared<const LlvmKernel>(reinterpret_cast<LlvmKernel::Fn>(sym->getAddress()), key);
  j.kernels.emplace(key, k);
  return k;
}

std::string llvm_version() { return "LLVM " LLVM_VERSION_STRING; }

}  // namespace rg
