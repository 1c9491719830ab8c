#include "compiler/ir/placement.h"

#include <unordered_map>

namespace rg {

namespace {
// The BUFFER under a chain of the ops `through` lets pass, or a null handle.
template <class Through>
const UPtr& buffer_under(const UPtr& u, Through through) {
  static const UPtr kNone;
  const UPtr* p = &u;
  while (*p && through((*p)->op)) p = &(*p)->src[0];
  return *p && (*p)->op == Op::BUFFER ? *p : kNone;
}
}  // namespace

const UPtr& base_buffer(const UPtr& u) {
  return buffer_under(u, [](Op op) { return op == Op::RESHAPE; });
}

const UPtr& window_buffer(const UPtr& u) {
  return buffer_under(u, [](Op op) { return op == Op::RESHAPE || op == Op::PERMUTE || op == Op::SHRINK; });
}

bool is_device_tuple(const std::string& name) { return !name.empty() && name.front() == '('; }

std::vector<std::string> device_tuple(const std::string& name) {
  if (!is_device_tuple(name)) return {name};
  if (name.back() != ')') throw Error("bad device tuple '" + name + "'");
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i + 1 < name.size(); ++i) {
    if (name[i] == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (name[i] != ' ') {
      cur += name[i];
    }
  }
  out.push_back(cur);
  for (const std::string& d : out)
    if (d.empty()) throw Error("bad device tuple '" + name + "'");
  return out;
}

std::string tuple_name(const std::vector<std::string>& devices) {
  std::string r = "(";
  for (size_t i = 0; i < devices.size(); ++i) r += (i ? ", " : "") + devices[i];
  return r + ")";
}

std::string graph_device(const UPtr& root) {
  std::unordered_map<const UOp*, std::string> dev;
  for (const UPtr& u : toposort(root)) {
    std::string d;
    if (u->op == Op::BUFFER || u->op == Op::COPY) {
      d = u->src[u->op == Op::COPY ? 1 : 0]->arg_str();
    } else {
      for (const UPtr& x : u->src)
        if (auto it = dev.find(x.get()); it != dev.end() && !it->second.empty()) {
          d = it->second;
          break;
        }
    }
    dev[u.get()] = d;
  }
  return dev[root.get()];
}

}  // namespace rg
