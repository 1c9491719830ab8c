// The one file of the package that includes LLVM headers (they take seconds to parse).
#include "backends/llvm/jit.h"

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "compiler/ir/uop.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
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

using KernelPtr = std::shared_ptr<const LlvmKernel>;

// The process-wide JIT. Never destroyed: kernels may run during static destruction.
struct Jit {
  explicit Jit(llvm::orc::JITTargetMachineBuilder b) : host(std::move(b)) {}
  const llvm::orc::JITTargetMachineBuilder host;  // the host's CPU and features; each thread makes its own machine
  std::string target;  // what the machine code depends on: LLVM's version, the CPU, its features, the levels
  std::mutex mu;       // guards the maps and the LLJIT's dylibs (compiles run outside it, concurrently)
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  // Kernels by key; a kernel being compiled is a future that a second request for its key waits on.
  std::unordered_map<std::string, std::shared_future<KernelPtr>> kernels;
  uint64_t dylibs = 0;
  // What ORC reports on the side while linking (an unresolved symbol's name); the lookup's own error
  // only says that materialization failed.
  std::string reported;
};

// Our optimizer decides each kernel's unrolling (register tiles, vector lanes, small windows whole). LLVM's partial
// unrolling on top of it grew modules up to 15x (a 96-step copy loop to 4000 lines) and took half of all compile
// time (a detection model's 125 kernels: 9 s of CPU, 4 s without). Best of 4 runs without it: matmul 256-1024 and
// the example's forward and input-gradient convolutions as fast, its weight gradients 6-17% slower (their short
// inner loops; the CPU device's clang still unrolls them). Full unrolling of small constant loops stays. No
// pipeline setting reaches the late unroller's partial mode, so the option is set as `-unroll-allow-partial=false`
// would.
void disable_partial_unrolling() {
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("unroll-allow-partial");
  if (it == options.end() || it->second->addOccurrence(0, "unroll-allow-partial", "false"))
    throw Error("llvm: cannot set -unroll-allow-partial=false");
}

Jit& jit() {
  static Jit* j = [] {
    disable_partial_unrolling();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // The host's CPU and features: the same code clang -march=native would produce.
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw Error("llvm: cannot describe the host: " + message(jtmb.takeError()));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
    auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!lljit) throw Error("llvm: cannot create the JIT: " + message(lljit.takeError()));
    // Kernels call libm (sinf, exp2f, fmodf: what the math intrinsics lower to) from this process.
    auto gen =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*lljit)->getDataLayout().getGlobalPrefix());
    if (!gen) throw Error("llvm: cannot search this process for symbols: " + message(gen.takeError()));
    (*lljit)->getMainJITDylib().addGenerator(std::move(*gen));
    auto* out = new Jit(*jtmb);
    out->target =
        llvm_version() + " " + jtmb->getCPU() + " " + jtmb->getFeatures().getString() + " O2 no-partial-unroll";
    out->lljit = std::move(*lljit);
    out->lljit->getExecutionSession().setErrorReporter([out](llvm::Error e) {
      out->reported += message(std::move(e)) + "\n";  // called while linking, under Jit::mu
    });
    return out;
  }();
  return *j;
}

// This thread's TargetMachine for the host (they are not safe to share between threads).
llvm::TargetMachine& thread_target(Jit& j) {
  thread_local std::unique_ptr<llvm::TargetMachine> tm;
  if (!tm) {
    llvm::orc::JITTargetMachineBuilder b = j.host;  // a copy: creating a machine is not const; the host never changes
    auto t = b.createTargetMachine();
    if (!t) throw Error("llvm: no target machine for the host: " + message(t.takeError()));
    tm = std::move(*t);
  }
  return *tm;
}

// Parses and verifies a module for the host. Throws rg::Error with LLVM's diagnostic.
std::unique_ptr<llvm::Module> parse(const std::string& ir, llvm::LLVMContext& ctx, llvm::TargetMachine& tm) {
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
  m->setTargetTriple(tm.getTargetTriple().str());
  m->setDataLayout(tm.createDataLayout());
  return m;
}

// The standard O2 pipeline (mem2reg/SROA, instcombine, loop and SLP vectorizers, ...), without partial unrolling.
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

// IR → optimized machine code, an object file in memory. Runs on the calling thread, beside others.
std::string compile_object(const std::string& ir, Jit& j) {
  llvm::TargetMachine& tm = thread_target(j);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parse(ir, ctx, tm);
  optimize(*m, tm);
  llvm::SmallVector<char, 0> obj;
  llvm::raw_svector_ostream os(obj);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    throw Error("compile_llvm: the host's target cannot emit object files");
  pm.run(*m);
  compilations.fetch_add(1, std::memory_order_relaxed);
  return std::string(obj.data(), obj.size());
}

// Links an object into a JITDylib of its own (kernels of different source may share a name; symbols it
// does not define resolve through the main one, which sees this process) and finds `name` in it.
KernelPtr link(Jit& j, const std::string& object, const std::string& name, const std::string& key) {
  std::lock_guard<std::mutex> lock(j.mu);
  auto jd = j.lljit->createJITDylib("kernel" + std::to_string(j.dylibs++));
  if (!jd) throw Error("compile_llvm: " + message(jd.takeError()));
  jd->addToLinkOrder(j.lljit->getMainJITDylib());
  j.reported.clear();
  auto fail = [&](const std::string& what, llvm::Error e) {
    std::string msg = "compile_llvm: " + what + ": " + message(std::move(e));
    if (!j.reported.empty()) msg += "\n" + j.reported;
    llvm::consumeError(j.lljit->getExecutionSession().removeJITDylib(*jd));
    return Error(msg);
  };
  if (llvm::Error e = j.lljit->addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(object, key)))
    throw fail("cannot add the object", std::move(e));
  auto sym = j.lljit->lookup(*jd, name);  // links the object
  if (!sym) throw fail("no function '" + name + "'", sym.takeError());
  return std::make_shared<const LlvmKernel>(reinterpret_cast<LlvmKernel::Fn>(sym->getAddress()), key);
}

// The kernel of `key`: its object from the disk cache when a process compiled it before, else compiled
// and written there.
KernelPtr build(Jit& j, const std::string& ir, const std::string& name, const std::string& key) {
  const std::string path = kernel_cache_dir() + "/" + key + ".o";
  if (std::optional<std::string> cached = read_cache_file(path)) {
    try {
      return link(j, *cached, name, key);
    } catch (const Error&) {  // unreadable (written by another LLVM, damaged): compiled again below
    }
  }
  const std::string object = compile_object(ir, j);
  KernelPtr k = link(j, object, name, key);
  write_cache_file(path, object);
  return k;
}

}  // namespace

uint64_t llvm_compilations() { return compilations.load(); }

std::string optimize_llvm(const std::string& ir) {
  Jit& j = jit();
  llvm::TargetMachine& tm = thread_target(j);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parse(ir, ctx, tm);
  optimize(*m, tm);
  std::string out;
  llvm::raw_string_ostream os(out);
  m->print(os, nullptr);
  return os.str();
}

KernelPtr compile_llvm(const std::string& ir, const std::string& name) {
  Jit& j = jit();
  const std::string key = content_key(j.target + "\n" + name + "\n" + ir);
  std::promise<KernelPtr> mine;
  {
    std::unique_lock<std::mutex> lock(j.mu);
    auto [it, first] = j.kernels.try_emplace(key, mine.get_future().share());
    if (!first) {
      std::shared_future<KernelPtr> theirs = it->second;
      lock.unlock();
      return theirs.get();  // compiled, or being compiled by another thread (its error is ours too)
    }
  }
  try {
    KernelPtr k = build(j, ir, name, key);
    mine.set_value(k);
    return k;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(j.mu);
      j.kernels.erase(key);  // a failed kernel is not cached: a later request tries again
    }
    mine.set_exception(std::current_exception());
    throw;
  }
}

void clear_llvm_memory_cache() {
  Jit& j = jit();
  std::lock_guard<std::mutex> lock(j.mu);
  j.kernels.clear();
}

std::string llvm_version() { return "LLVM " LLVM_VERSION_STRING; }

}  // namespace rg
