#!/usr/bin/env python3
"""Writes tools/symbolic_corpus.txt: index expressions with tinygrad's simplified size and bounds.

Not part of the build. It needs a tinygrad checkout (the `tinygrad` package and its `test/null` tests,
no numpy or z3 needed) on PYTHONPATH or as the working directory:

  cd TINYGRAD && python3 RULEGRAD/tools/symbolic_corpus.py > RULEGRAD/tools/symbolic_corpus.txt

The expressions come from two places: the inputs tinygrad's own symbolic tests simplify
(test_uop_symbolic, test_simplify_valid_idx, test_symbolic_failures; captured while they run) and a
seeded random set of the index forms kernels produce (range splits x//a*a + x%a, products, mods,
comparisons, gates `where(valid, idx, Invalid)`). Each is simplified with tinygrad's `sym`.

One expression per line, tab-separated:
  source  nodes  vmin  vmax  in_vmin  in_vmax  graph
nodes: the DAG node count of tinygrad's result (variables, ranges and thread indices count as one node,
their bounds not at all); vmin/vmax: the bounds of the result (of the gated value for an Invalid gate);
in_vmin/in_vmax: the bounds tinygrad gives the unsimplified expression (all clamped to int64). graph: nodes separated by ';',
each `op arg...` where `%k` refers to node k; the last node is the root:
  var NAME LO HI | range ID %END | special NAME %END | const V | bool 0|1 | invalid |
  add|mul|sub|floordiv|floormod|div|mod|max|cmplt|cmpne|cmpeq|and|or|xor|shl|shr %a %b | neg %a | where %c %t %f
(`floordiv`/`floormod` are tinygrad's `//` and `%`, `div`/`mod` its truncating CDIV/CMOD; and/or on
conditions are boolean.) rulegrad reads the file in `bench -- symbolic_corpus` and //tools:symbolic_corpus_test.
"""
import os, random, sys, types, unittest

sys.path.insert(0, os.getcwd())  # the tinygrad checkout

# The tests import z3, numpy and test.helpers at module level; capturing their inputs needs none of them.
class Stub(types.ModuleType):
  def __getattr__(self, name): return (lambda: (99,)) if name == "get_version" else type(name, (), {})
for name in ("z3", "numpy"):
  sys.modules[name] = Stub(name)
helpers = types.ModuleType("test.helpers")
helpers.full_rewrite = lambda *a, **k: None
sys.modules["test.helpers"] = helpers

from tinygrad.dtype import dtypes, Invalid  # noqa: E402
from tinygrad.uop.ops import UOp, Ops, graph_rewrite  # noqa: E402
from tinygrad.uop.symbolic import sym  # noqa: E402

BINARY = {Ops.ADD: "add", Ops.MUL: "mul", Ops.SUB: "sub", Ops.FLOORDIV: "floordiv", Ops.FLOORMOD: "floormod",
          Ops.CDIV: "div", Ops.CMOD: "mod", Ops.MAX: "max", Ops.CMPLT: "cmplt", Ops.CMPNE: "cmpne",
          Ops.CMPEQ: "cmpeq", Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor", Ops.SHL: "shl", Ops.SHR: "shr"}
LEAVES = (Ops.PARAM, Ops.RANGE, Ops.SPECIAL)

def is_invalid(u): return u.op is Ops.CONST and u.arg is Invalid

def nodes(root):
  """The nodes of root, variables, ranges and thread indices as leaves (their bounds not visited)."""
  seen, stack = {}, [root]
  while stack:
    u = stack.pop()
    if u in seen: continue
    seen[u] = None
    if u.op not in LEAVES: stack.extend(u.src)
  return list(seen)

def supported(root, need_leaf=True):
  if is_invalid(root): return not need_leaf
  if need_leaf and not any(u.op in LEAVES for u in nodes(root)): return False  # constants only
  for u in nodes(root):
    if is_invalid(u): continue
    if u.dtype not in (dtypes.weakint, dtypes.bool): return False
    if u.op is Ops.PARAM:
      if u.arg.vmin_vmax is None: return False
    elif u.op in (Ops.RANGE, Ops.SPECIAL):
      if len(u.src) != 1: return False
    elif u.op not in BINARY and u.op not in (Ops.CONST, Ops.NEG, Ops.WHERE): return False
    if u.op is Ops.CONST and not isinstance(u.arg, (int, bool)): return False
    if u.op in (Ops.RANGE, Ops.SPECIAL) and not supported_bound(u.src[0]): return False
    if any(is_invalid(s) for s in u.src) and not (u.op is Ops.WHERE and is_invalid(u.src[2]) and not is_invalid(u.src[1])):
      return False  # Invalid only as a gate's other branch
  return True

def supported_bound(end): return supported(end, need_leaf=False)

def count(root):
  return len(nodes(root)) if not is_invalid(root) else 1

def serialize(root):
  ids, out = {}, []
  def visit(u):
    if u in ids: return ids[u]
    if u.op is Ops.PARAM: s = f"var {u.arg.name} {int(u.arg.vmin_vmax[0])} {int(u.arg.vmin_vmax[1])}"
    elif u.op is Ops.RANGE: s = f"range {u.arg[0]} %{visit(u.src[0])}"
    elif u.op is Ops.SPECIAL: s = f"special {u.arg} %{visit(u.src[0])}"
    elif is_invalid(u): s = "invalid"
    elif u.op is Ops.CONST: s = f"bool {int(u.arg)}" if u.dtype == dtypes.bool else f"const {int(u.arg)}"
    elif u.op is Ops.NEG: s = f"neg %{visit(u.src[0])}"
    elif u.op is Ops.WHERE: s = "where " + " ".join(f"%{visit(x)}" for x in u.src)
    else: s = BINARY[u.op] + " " + " ".join(f"%{visit(x)}" for x in u.src)
    ids[u] = len(out)
    out.append(s)
    return ids[u]
  visit(root)
  return ";".join(out)

def value_bounds(u):
  # An Invalid gate's bounds are the gated value's; an unbounded weakint's are int64's (as rulegrad's index).
  if u.op is Ops.WHERE and is_invalid(u.src[2]): u = u.src[1]
  if is_invalid(u): return 0, 0
  return tuple(min(max(int(v), -2**63), 2**63 - 1) for v in (u.vmin, u.vmax))

# ---- expressions from tinygrad's tests ----

captured = []
def capture(root):
  if isinstance(root, UOp): captured.append(root)

def candidates(root):
  """The index expressions in a captured root: itself if it is one, else the indices of its INDEX nodes."""
  if supported(root) and root.op not in LEAVES + (Ops.CONST,): return [root]
  return [s for u in root.toposort() if u.op is Ops.INDEX for s in u.src[1:] if supported(s) and s.op is not Ops.CONST]

def run_tests():
  import test.null.test_uop_symbolic as t_sym
  import test.null.test_simplify_valid_idx as t_valid
  import test.null.test_symbolic_failures as t_fail
  real_rewrite, real_simplify, real_simplify_valid = graph_rewrite, UOp.simplify, t_valid.simplify_valid
  def rewrite(root, *a, **k):
    capture(root)
    return real_rewrite(root, *a, **k)
  def simplify(self, *a, **k):
    capture(self)
    return real_simplify(self, *a, **k)
  def simplify_valid(valid):
    capture(valid)
    return real_simplify_valid(valid)
  for m in (t_sym, t_valid, t_fail):
    if hasattr(m, "graph_rewrite"): m.graph_rewrite = rewrite
  t_valid.simplify_valid = simplify_valid
  t_sym.TestSymbolic.check_equal_z3 = lambda *a, **k: None
  UOp.simplify = simplify
  suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromModule(m) for m in (t_sym, t_valid, t_fail))
  unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(suite)
  UOp.simplify = real_simplify
  out = []
  for root in captured:
    out += candidates(root)
  return out

# ---- random index forms, as kernels produce them ----

def random_forms(n, seed=13):
  rng = random.Random(seed)
  def leaf():
    k = rng.randrange(4)
    if k == 0: return UOp.range(rng.choice([2, 3, 4, 5, 8, 16, 32, 64, 100, 224]), rng.randrange(6))
    if k == 1: return UOp.special(rng.choice([4, 13, 32, 56, 128, 256]), f"gidx{rng.randrange(3)}")
    if k == 2: return UOp.variable(f"v{rng.randrange(4)}", rng.choice([0, 0, 1, -8]), rng.choice([7, 15, 100, 1023]), param=True)
    return UOp.range(rng.choice([4, 8, 16]), rng.randrange(6))
  def linear(terms):
    e = leaf() * rng.choice([1, 1, 2, 3, 4, 8, 16, 19, 32, 224])
    for _ in range(terms - 1): e = e + leaf() * rng.choice([1, 2, 3, 4, 8, 12, 16, 64, 256, 672])
    if rng.random() < 0.4: e = e + rng.choice([-19, -3, -1, 1, 2, 3, 7, 150])
    return e
  def form():
    x = linear(rng.randrange(1, 4))
    a, b = rng.choice([2, 3, 4, 7, 8, 16, 32]), rng.choice([2, 3, 4, 5, 8, 14, 224])
    k = rng.randrange(12)
    if k == 0: return x // a * a + x % a                                    # a range split put back together
    if k == 1: return x // a % b * a + x % a + x // (a * b) * (a * b)       # a three-way split
    if k == 2: return (x // a) * rng.choice([1, 2, 4]) + x % a
    if k == 3: return (x * a + leaf()) // a
    if k == 4: return (x * a + leaf()) % a
    if k == 5: return x // a // b
    if k == 6: return x % (a * b) // a
    if k == 7: return (x < rng.randrange(1, 600)).where(x, UOp.invalid())   # a padded read
    if k == 8:
      r1, r2 = leaf(), leaf()
      valid = ((x + r1) < rng.randrange(1, 300)) & (rng.randrange(0, 4) < r2 + x)
      return valid.where((x + r1) // a + r2 * b, UOp.invalid())
    if k == 9: return x // a * b + x % a * rng.choice([1, 3, 5])
    if k == 10: return (x - rng.randrange(0, 200)) // (-a if rng.random() < 0.5 else a)
    return (x % a) * (x // a) + x % a
  return [form() for _ in range(n)]

def main():
  exprs = [("test", e) for e in run_tests()] + [("random", e) for e in random_forms(700)]
  seen = set()
  for source, e in exprs:
    if e in seen: continue
    seen.add(e)
    try:
      out = graph_rewrite(e, sym)
    except Exception:  # noqa: BLE001 a test input tinygrad itself rejects
      continue
    if not supported(out, need_leaf=False): continue
    lo, hi = value_bounds(out)
    in_lo, in_hi = value_bounds(e)
    print(f"{source}\t{count(out)}\t{lo}\t{hi}\t{in_lo}\t{in_hi}\t{serialize(e)}")

if __name__ == "__main__":
  main()
