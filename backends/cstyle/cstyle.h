// The C-style renderer core, as tinygrad's CStyleLanguage: one linear Program -> the source of one
// kernel in a C dialect. The core walks the program; a dialect (the CPU's C in backends/cpu, CUDA C in
// backends/cuda) overrides only what it spells differently. The defaults are GNU C, as clang takes it.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// What a C dialect spells its own way. The defaults are the CPU's C (GNU C for clang). Operands
// handed to the hooks are names or literals: free of side effects, so they may be repeated.
class CStyleLanguage {
 public:
  virtual ~CStyleLanguage() = default;

  // Error messages start with this ("render_c"); `target` names the backend ("CPU").
  virtual std::string who() const { return "render_c"; }
  virtual std::string target() const { return "CPU"; }

  // The C name of a scalar type (index: long long). Not asked for the 16-bit floats: they are
  // computed in float and stored as unsigned short.
  virtual std::string scalar_type(DType scalar) const;
  // A non-finite float literal (the caller handles finite values).
  virtual std::string nonfinite(double v, bool single) const;
  // The name of a math function: "__builtin_exp2f" for base "exp2" at float32.
  virtual std::string math_fn(const char* base, DType dt) const;

  // The 16-bit float conversions (rg_h2f, rg_f2h, rg_rh; rg_bf2f, rg_f2bf, rg_rbf) are one text in
  // the core, emitted before the kernel when used. A dialect gives their qualifier and the two
  // bit casts they are written on, rg_f2u (float -> its bits) and rg_u2f.
  virtual std::string helper_qualifier() const { return "static inline "; }
  virtual std::string float_bits_helpers() const;

  // Expressions for what C has no operator for. `ct` is the C type of the result, dt its dtype.
  // `helpers` collects code the expression needs before the kernel (added once, in first-use order).
  // 2^x for a float computed in float (float32 and its vectors, the 16-bit floats): the core's rg_exp2f
  // (rg_exp2f16 for 16 lanes, ...), straight-line code a loop of them vectorizes (libm's exp2f is a call
  // per element); math_fn's builtin otherwise. `ct` is the C type of the result.
  virtual std::string exp2(DType dt, const std::string& ct, const std::string& x,
                           std::vector<std::string>& helpers) const;
  // The bits of `from` (C type ft) as a value of C type tt (both the same size).
  virtual std::string bitcast(const std::string& ft, const std::string& tt, const std::string& from,
                              std::vector<std::string>& helpers) const;

  // Vector values. With native vectors a vector gets a typedef (returned here) and ALU ops on it;
  // without, VECTORIZE only groups lanes that GEPs take apart again, and any other use of a vector
  // is an error (the devectorizer has to split it first).
  virtual bool native_vectors() const { return true; }
  // The name of a vector of `count` lanes of `scalar` (C: the typedef's, float4, long_long2).
  virtual std::string vector_type(DType scalar, int count) const;
  // The dialect computes ALU ops on its vectors (C's vector extension does; CUDA's float4 is memory only,
  // and an ALU op on a vector is an error there: codegen keeps the lanes' ops scalar, LowerOptions::vector_alu).
  virtual bool vector_alu() const { return true; }
  virtual std::string vector_typedef(const std::string& scalar, const std::string& name, int count) const;
  // A vector of type `type` from its lanes, "a,b,c,d" (C: the compound literal `(float4){a,b,c,d}`), and
  // lane i of the vector named v (C: `v[i]`).
  virtual std::string vector_literal(const std::string& type, const std::string& lanes) const {
    return "(" + type + "){" + lanes + "}";
  }
  virtual std::string lane(const std::string& v, int64_t i) const { return v + "[" + std::to_string(i) + "]"; }
  // The type of a pointer to `elem` in memory `ptr` points into (C has one address space: `elem*`).
  virtual std::string pointer_type(const std::string& elem, DType ptr) const { return elem + "*"; }
  // Image textures (dtypes::imagef, rules/image.rules): the texel (a float4) of image `img` (whose dtype is
  // `image`) at the int2 coordinate `xy`, and the statement writing `texel` there, without its `;`. `helpers`
  // as for exp2. "" (the default): the target has no images, and an image access is an error.
  virtual std::string image_read(const std::string& img, DType image, const std::string& xy,
                                 std::vector<std::string>& helpers) const {
    return "";
  }
  virtual std::string image_write(const std::string& img, DType image, const std::string& xy, const std::string& texel,
                                  std::vector<std::string>& helpers) const {
    return "";
  }
  // Text before everything else in the source (headers).
  virtual std::string prelude() const { return ""; }

  // GPU ops. barrier(): the statement of a BARRIER ("": nothing to wait for, the CPU runs one
  // thread). special(): the value of a SPECIAL thread index; local_prefix(): the qualifier of a
  // DEFINE_LOCAL array ("__shared__"). An empty answer there means the target cannot run the op.
  virtual std::string barrier() const { return ""; }
  virtual std::string special(const UOp& u) const { return ""; }
  virtual std::string local_prefix() const { return ""; }

  // The whole kernel around `body`: signature, parameter and variable declarations. `params` are
  // the declared PARAMs in program order, as (slot, pointer type, name); `vars` as (C type, name).
  struct Param {
    int64_t slot;
    std::string type, name;
  };
  struct Var {
    std::string type, name;
  };
  virtual std::string function(const Program& p, const std::vector<Param>& params, const std::vector<Var>& vars,
                               const std::string& body) const;
};

// The source of one kernel in `lang`.
std::string render_cstyle(const Program& p, const CStyleLanguage& lang);

// For GPU languages: the axis d of a SPECIAL named gidx<d> or lidx<d>, d in 0..2; -1 for any other name.
int gpu_special_axis(const std::string& name);
// Appends the helper text h to a kernel's preamble `helpers` unless it is there already.
void need_helper(std::vector<std::string>& helpers, const char* h);
// The type of a value of dt in `lang` (c_type for the CPU's C); throws for vectors without native vectors.
std::string cstyle_type(DType dt, const CStyleLanguage& lang);
// A CONST as a literal in `lang`.
std::string cstyle_const(const UPtr& c, const CStyleLanguage& lang);

}  // namespace rg
