#include "compiler/codegen/thread_walk.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/ir/eval.h"

namespace rg {

namespace {

void run_thread(const Program& p, const std::map<std::string, int64_t>& thread, int64_t slot,
                std::map<int64_t, int>& written) {
  std::map<const UOp*, UPtr> known;  // node -> its value as a CONST
  auto value = [&](const UPtr& u) -> UPtr {
    auto it = known.find(u.get());
    return it == known.end() ? UPtr() : it->second;
  };
  for (const UPtr& u : p.uops) {
    if (u->op == Op::CONST && !u->dtype.is_float()) {
      known[u.get()] = u;
    } else if (u->op == Op::SPECIAL) {
      known[u.get()] = cnst_int(u->dtype, thread.at(u->arg_str()));
    } else if ((is(u->op, kALU) || u->op == Op::CAST) && !u->dtype.is_float()) {
      std::vector<UPtr> src;
      for (const UPtr& s : u->src) src.push_back(value(s));
      if (std::all_of(src.begin(), src.end(), [](const UPtr& s) { return bool(s); }))
        if (UPtr v = fold(UOp::make(u->op, u->dtype, src, u->arg))) known[u.get()] = v;
    } else if (u->op == Op::STORE) {
      const UPtr& addr = u->src[0];
      if (addr->op != Op::INDEX || addr->src[0]->op != Op::PARAM || addr->src[0]->arg_int() != slot) continue;
      UPtr i = value(addr->src[1]);
      UPtr gate = addr->src.size() == 3 ? value(addr->src[2]) : cnst_int(dtypes::bool_, 1);
      if (!i || !gate)
        throw Error("written_positions: the address of " + render_expr(u) + " is not known from the thread indices");
      if (gate->as_int()) ++written[i->as_int()];
    }
  }
}

}  // namespace

std::map<std::string, int64_t> grid_of(const Program& p) {
  std::map<std::string, int64_t> g;
  for (const UPtr& u : p.uops)
    if (u->op == Op::SPECIAL) g[u->arg_str()] = u->src[0]->as_int();
  return g;
}

std::map<int64_t, int> written_positions(const Program& p, int64_t slot) {
  std::map<std::string, int64_t> grid = grid_of(p), thread;
  std::map<int64_t, int> written;
  for (auto& [name, bound] : grid) thread[name] = 0;
  while (true) {
    run_thread(p, thread, slot, written);
    auto it = thread.begin();
    for (; it != thread.end(); ++it) {
      if (++it->second < grid.at(it->first)) break;
      it->second = 0;
    }
    if (it == thread.end()) break;
  }
  return written;
}

void expect_each_once(const Program& p, int64_t n) {
  std::map<int64_t, int> w = written_positions(p);
  EXPECT_EQ(int64_t(w.size()), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(w[i], 1) << "position " << i;
  for (auto& [i, c] : w) EXPECT_TRUE(i >= 0 && i < n) << "position " << i << " is outside the buffer";
}

}  // namespace rg
