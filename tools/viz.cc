#include "tools/viz.h"

#include <arpa/inet.h>
#include <graphviz/gvc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/codegen/codegen.h"

namespace rg::viz {

void Recording::kernel(const std::string& name, const UPtr& graph) {
  std::lock_guard<std::mutex> lock(mu_);
  kernels.push_back({name, graph, {}, {}, "", "", 0, 0});
  lowering_ = int(kernels.size()) - 1;
}

void Recording::pass(const PassReport& r) {
  std::lock_guard<std::mutex> lock(mu_);
  Step s{r.name, r.rules, r.context, r.before, r.after, r.fired};
  (lowering_ >= 0 ? kernels[lowering_].passes : schedule).push_back(std::move(s));
}

void Recording::linear(const std::string&, const std::vector<UPtr>& program) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lowering_ >= 0) kernels[lowering_].program = program;
  lowering_ = -1;
}

void Recording::source(const std::string& kernel, const std::string& device, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto k = kernels.rbegin(); k != kernels.rend(); ++k)
    if (k->name == kernel && k->source.empty()) {
      k->device = device;
      k->source = text;
      return;
    }
}

void Recording::ran(const std::string& kernel, const std::string&, double ms) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto k = kernels.rbegin(); k != kernels.rend(); ++k)
    if (k->name == kernel) {
      ++k->runs;
      k->ms += ms;
      return;
    }
}

std::unordered_set<const UOp*> new_nodes(const UPtr& before, const UPtr& after) {
  std::unordered_set<const UOp*> old, made;
  for (const UPtr& u : toposort(before)) old.insert(u.get());
  for (const UPtr& u : toposort(after))
    if (!old.count(u.get())) made.insert(u.get());
  return made;
}

const char* op_class(Op op) {
  if (op == Op::CONST || op == Op::DEFINE_VAR || op == Op::BIND) return "const";
  if (is(op, kReduce) || op == Op::REDUCE || op == Op::DEFINE_REG) return "reduce";
  if (is(op, kMovement)) return "movement";
  if (is(op, kALU) || op == Op::CAST || op == Op::BITCAST || op == Op::MULACC) return "alu";
  switch (op) {
    case Op::BUFFER:
    case Op::PARAM:
    case Op::INDEX:
    case Op::LOAD:
    case Op::STORE:
    case Op::COPY:
    case Op::ASSIGN:
    case Op::DEFINE_LOCAL:
      return "memory";
    case Op::RANGE:
    case Op::END:
    case Op::SPECIAL:
    case Op::IF:
    case Op::ENDIF:
    case Op::BARRIER:
      return "loop";
    default:
      return "other";
  }
}

namespace {

const char* fill_of(const char* cls) {
  const std::string c = cls;
  if (c == "alu") return "#cfe3ff";
  if (c == "reduce") return "#ffcf99";
  if (c == "movement") return "#fff2a8";
  if (c == "memory") return "#c9f2c9";
  if (c == "loop") return "#f5c6e6";
  if (c == "const") return "#e6e6e6";
  return "#ffffff";
}

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// Graphviz reads backslashes in labels as escapes: "\\n" is a line break.
std::string escape_label(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

std::string node_label(const UPtr& u) {
  std::string l = lower_name(u->op);
  const std::string arg = render_arg(u->op, u->arg);
  if (!arg.empty()) l += " " + arg;
  if (u->dtype.name() != "void") l += "\n" + u->dtype.name();
  return l;
}

char* cs(const char* s) { return const_cast<char*>(s); }

}  // namespace

std::string graph_svg(const UPtr& graph, const std::unordered_set<const UOp*>& changed) {
  static std::mutex mu;  // Graphviz is not thread-safe
  static GVC_t* gvc = gvContext();
  std::lock_guard<std::mutex> lock(mu);
  Agraph_t* g = agopen(cs("g"), Agdirected, nullptr);
  agattr(g, AGRAPH, cs("bgcolor"), cs("transparent"));
  agattr(g, AGNODE, cs("shape"), cs("box"));
  agattr(g, AGNODE, cs("style"), cs("filled,rounded"));
  agattr(g, AGNODE, cs("fontname"), cs("monospace"));
  agattr(g, AGNODE, cs("fontsize"), cs("10"));
  agattr(g, AGNODE, cs("fillcolor"), cs("#ffffff"));
  agattr(g, AGNODE, cs("color"), cs("#666666"));
  agattr(g, AGNODE, cs("penwidth"), cs("1"));
  agattr(g, AGNODE, cs("class"), cs(""));
  agattr(g, AGNODE, cs("label"), cs(""));
  agattr(g, AGEDGE, cs("arrowsize"), cs("0.6"));
  std::unordered_map<const UOp*, Agnode_t*> nodes;
  for (const UPtr& u : toposort(graph)) {
    const std::string id = "n" + std::to_string(nodes.size());
    Agnode_t* n = agnode(g, cs(id.c_str()), 1);
    nodes[u.get()] = n;
    const char* cls = op_class(u->op);
    const bool made = changed.count(u.get()) > 0;
    agset(n, cs("label"), cs(escape_label(node_label(u)).c_str()));
    agset(n, cs("fillcolor"), cs(fill_of(cls)));
    agset(n, cs("class"), cs((std::string(cls) + (made ? " changed" : "")).c_str()));
    if (made) {
      agset(n, cs("color"), cs("#e0301e"));
      agset(n, cs("penwidth"), cs("3"));
    }
    for (const UPtr& s : u->src) agedge(g, nodes.at(s.get()), n, nullptr, 1);
  }
  gvLayout(gvc, g, "dot");
  char* data = nullptr;
  unsigned int len = 0;
  gvRenderData(gvc, g, "svg", &data, &len);
  std::string svg(data ? data : "", len);
  gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  agclose(g);
  const size_t start = svg.find("<svg");
  return start == std::string::npos ? svg : svg.substr(start);
}

namespace {

constexpr const char* kStyle = R"(
body { font: 13px sans-serif; margin: 0; display: flex; height: 100vh; }
nav { width: 220px; overflow: auto; border-right: 1px solid #ccc; padding: 8px; background: #fafafa; }
nav li, .passes li { cursor: pointer; padding: 2px 4px; list-style: none; }
nav li.active, .passes li.active { background: #dde8ff; }
nav ul, .passes ul { padding: 0; margin: 0; }
main { flex: 1; overflow: auto; padding: 8px; }
.kernel { display: flex; gap: 12px; }
.passes { width: 230px; flex: none; }
.passes li.same { color: #999; }
.step { flex: 1; }
.step svg { max-width: 100%; height: auto; }
nav h2 { font-size: 14px; }
.rules td { padding: 1px 8px 1px 0; }
code, pre { font: 12px monospace; }
pre { background: #f6f6f6; padding: 6px; overflow: auto; }
.time { color: #777; float: right; }
.legend span { display: inline-block; padding: 1px 6px; margin: 2px; border: 1px solid #999; }
)";

constexpr const char* kScript = R"(
function show(k, s) {
  document.querySelectorAll('.kernel').forEach(e => e.hidden = e.id != k);
  document.querySelectorAll('nav li').forEach(e => e.classList.toggle('active', e.dataset.k == k));
  const sec = document.getElementById(k);
  s = s || sec.querySelector('.step').id;
  sec.querySelectorAll('.step').forEach(e => e.hidden = e.id != s);
  sec.querySelectorAll('.passes li').forEach(e => e.classList.toggle('active', e.dataset.s == s));
  history.replaceState(null, '', '#' + s);
}
// The step named by the address (#k0-p3: kernel 0 after pass 3), so that a view can be shared; else `k`.
function start(k) {
  const e = location.hash && document.getElementById(location.hash.slice(1));
  if (e && e.classList.contains('step')) show(e.closest('.kernel').id, e.id); else show(k);
}
)";

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms < 1 ? "%.1f us" : "%.2f ms", ms < 1 ? ms * 1e3 : ms);
  return b;
}

// The rules that fired in a pass, each with its text and a link to its line.
std::string rules_table(const Step& s) {
  if (s.fired.empty()) return "<p>no rule fired</p>\n";
  std::string out = "<table class=\"rules\">\n";
  for (const auto& [rule, n] : s.fired)
    out += "<tr><td class=\"rule\"><code>" + escape_html(rule->text) + "</code></td><td>" + escape_html(rule->name) +
           "</td><td><a href=\"" + escape_html(rule->file) + "#L" + std::to_string(rule->line) + "\">" +
           escape_html(rule->location()) + "</a></td><td>x" + std::to_string(n) + "</td></tr>\n";
  return out + "</table>\n";
}

std::string step_div(const std::string& id, const std::string& title, const std::string& body) {
  return "<div class=\"step\" id=\"" + id + "\" hidden>\n<h3>" + escape_html(title) + "</h3>\n" + body + "</div>\n";
}

// A pipeline's section: the pass list and one view per step (the first: `graph` as it came in).
std::string section(const std::string& id, const std::string& title, const UPtr& graph, const std::vector<Step>& passes,
                    const std::string& tail) {
  std::string list, views;
  auto item = [&](const std::string& sid, const std::string& text, bool same) {
    list += "<li data-s=\"" + sid + "\"" + (same ? " class=\"same\"" : "") + " onclick=\"show('" + id + "','" + sid +
            "')\">" + escape_html(text) + "</li>\n";
  };
  if (graph) {
    item(id + "-in", "graph before codegen", false);
    views += step_div(id + "-in", title + ": graph before codegen", graph_svg(graph));
  }
  for (size_t i = 0; i < passes.size(); ++i) {
    const Step& s = passes[i];
    const std::string sid = id + "-p" + std::to_string(i);
    const bool same = s.after == s.before;
    item(sid, s.name + (same ? "" : " *"), same);
    std::string body = "<p>rules: " + escape_html(s.rules.empty() ? "C++" : s.rules) +
                       (s.context.empty() ? "" : " (" + escape_html(s.context) + ")") + "</p>\n" + rules_table(s);
    body += same ? "<p>the graph did not change</p>\n" : graph_svg(s.after, new_nodes(s.before, s.after));
    views += step_div(sid, "pass " + s.name, body);
  }
  return "<section class=\"kernel\" id=\"" + id + "\" hidden>\n<div class=\"passes\"><h2>" + escape_html(title) +
         "</h2><ul>\n" + list + "</ul></div>\n<div>\n" + views + tail + "</div>\n</section>\n";
}

}  // namespace

std::string html(const Recording& r, const std::string& title) {
  std::string nav = "<nav><h2>" + escape_html(title) + "</h2>\n<ul id=\"kernel-list\">\n", main;
  auto entry = [&](const std::string& id, const std::string& name, const std::string& note) {
    nav += "<li class=\"kernel-entry\" data-k=\"" + id + "\" onclick=\"show('" + id + "')\">" + escape_html(name) +
           (note.empty() ? "" : " <span class=\"time\">" + escape_html(note) + "</span>") + "</li>\n";
  };
  for (size_t k = 0; k < r.kernels.size(); ++k) {
    const Kernel& kr = r.kernels[k];
    const std::string id = "k" + std::to_string(k);
    entry(id, kr.name, kr.runs ? ms_text(kr.ms) : "");
    std::string tail = "<details open><summary>run</summary><p>" +
                       (kr.runs ? std::to_string(kr.runs) + (kr.runs == 1 ? " run" : " runs") + " on " +
                                      escape_html(kr.device) + ", " + ms_text(kr.ms)
                                : std::string("not run")) +
                       "</p></details>\n";
    tail += "<details><summary>linear program (" + std::to_string(kr.program.size()) + " instructions)</summary><pre>" +
            escape_html(program_text(kr.program)) + "</pre></details>\n";
    tail += "<details open><summary>source" + (kr.device.empty() ? "" : " for " + escape_html(kr.device)) +
            "</summary><pre class=\"source\">" + escape_html(kr.source) + "</pre></details>\n";
    main += section(id, kr.name, kr.graph, kr.passes, tail);
  }
  if (!r.schedule.empty()) {
    entry("sched", "schedule passes", "");
    main += section("sched", "schedule", UPtr(), r.schedule, "");
  }
  nav += "</ul>\n<p class=\"legend\">";
  for (const char* c : {"alu", "reduce", "movement", "memory", "loop", "const"})
    nav += std::string("<span style=\"background:") + fill_of(c) + "\">" + c + "</span> ";
  nav += "<br><span style=\"border:2px solid #e0301e\">made by the pass</span></p></nav>\n";
  const std::string first = r.kernels.empty() ? (r.schedule.empty() ? "" : "sched") : "k0";
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + escape_html(title) + "</title>\n<style>" +
         kStyle + "</style>\n<script>" + kScript + "</script></head>\n<body>\n" + nav + "<main>\n" + main +
         "</main>\n" + (first.empty() ? "" : "<script>start('" + first + "')</script>\n") + "</body></html>\n";
}

namespace {

void send_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    const ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += size_t(n);
  }
}

std::string response(int code, const std::string& type, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + (code == 200 ? " OK" : " Not Found") + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// A .rules file as a page with one anchor per line (#L12).
std::string rules_page(const std::string& dir, const std::string& file) {
  if (file.find("..") != std::string::npos || file.find('/') != std::string::npos) return "";
  std::ifstream f(dir + "/" + file);
  if (!f) return "";
  std::string out = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + escape_html(file) +
                    "</title><style>:target{background:#ffef9e}</style></head><body><pre>";
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    const std::string at = std::to_string(++n);
    out += "<span id=\"L" + at + "\">" + at + "  " + escape_html(line) + "</span>\n";
  }
  return out + "</pre></body></html>\n";
}

}  // namespace

void serve(const std::string& page, int port, const std::function<void(int)>& ready, int max_requests,
           const std::string& rules_dir) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error("viz: cannot open a socket: " + std::string(std::strerror(errno)));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("viz: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  ready(ntohs(addr.sin_port));
  for (int served = 0; max_requests == 0 || served < max_requests; ++served) {
    const int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(c, buf, sizeof buf - 1, 0);
    std::string req(buf, n > 0 ? size_t(n) : 0);
    // "GET /path HTTP/1.1"
    const size_t a = req.find(' '), b = a == std::string::npos ? a : req.find(' ', a + 1);
    std::string path = a == std::string::npos || b == std::string::npos ? "/" : req.substr(a + 1, b - a - 1);
    path = path.substr(0, path.find_first_of("?#"));
    std::string body;
    if (path == "/" || path == "/index.html") {
      send_all(c, response(200, "text/html; charset=utf-8", page));
    } else if (!rules_dir.empty() && path.rfind("/rules/", 0) == 0 &&
               !(body = rules_page(rules_dir, path.substr(7))).empty()) {
      send_all(c, response(200, "text/html; charset=utf-8", body));
    } else {
      send_all(c, response(404, "text/plain", "not found\n"));
    }
    ::close(c);
  }
  ::close(fd);
}

}  // namespace rg::viz
