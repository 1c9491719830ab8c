// Unit tests for the lexer and the parser.
#include "dsl/parser.h"

#include <gtest/gtest.h>

#include "dsl/check.h"
#include "dsl/lexer.h"

namespace rg::dsl {
namespace {

std::string kinds(const std::vector<Token>& toks) {
  std::string s;
  for (const Token& t : toks) {
    switch (t.kind) {
      case Tok::End:
        s += "$";
        break;
      case Tok::Newline:
        s += "; ";
        break;
      case Tok::Guard:
        s += "{" + t.text + "} ";
        break;
      case Tok::String:
        s += "\"" + t.text + "\" ";
        break;
      default:
        s += t.text + " ";
    }
  }
  return s;
}

TEST(Lexer, TokensCommentsAndPositions) {
  Diag d;
  std::vector<Token> t = lex("f", "x + 0 => x  // comment\n  y...", d);
  EXPECT_EQ(kinds(t), "x + 0 => x ; y ... $");
  EXPECT_EQ(t[6].loc.line, 2);
  EXPECT_EQ(t[6].loc.col, 3);
  EXPECT_EQ(d.errors(), 0);
}

TEST(Lexer, NewlinesInsideBracketsAndAfterOperatorsDoNotEndARule) {
  Diag d;
  EXPECT_EQ(kinds(lex("f", "add(x,\n 0) +\n y\n\n\nz", d)), "add ( x , 0 ) + y ; z $");
  EXPECT_EQ(kinds(lex("f", "x =>\n y", d)), "x => y $");
}

TEST(Lexer, GuardIsRawCxxUpToArrowAtDepthZero) {
  Diag d;
  std::vector<Token> t = lex("f", "x if f(a, \"=>\", '(') && m[i] > 0 // c\n => y", d);
  ASSERT_EQ(d.errors(), 0) << d.text();
  EXPECT_EQ(kinds(t), "x if {f(a, \"=>\", '(') && m[i] > 0 // c} => y $");
  EXPECT_EQ(t[2].loc.col, 6);
}

TEST(Lexer, Errors) {
  Diag d;
  lex("f", "x if y", d);
  EXPECT_NE(d.text().find("f:1:5: error: guard is not followed by '=>'"), std::string::npos) << d.text();
  Diag d2;
  lex("f", "x + $", d2);
  EXPECT_NE(d2.text().find("f:1:5: error: unexpected character '$'"), std::string::npos) << d2.text();
}

const Rule& first_rule(const File& f) { return f.rulesets.at(0).block->stmts.at(0).rule; }

TEST(Parser, PrecedenceInfixAndGreater) {
  Diag d;
  auto f = parse("f", "ruleset s {\n  a + b * c > -d => a\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  EXPECT_EQ(show(first_rule(*f).pattern), "cmplt(neg(d), add(a, mul(b, c)))");
}

TEST(Parser, AllForms) {
  Diag d;
  auto f = parse("f",
                 "include \"h.h\"\nextern h1(const my::Ctx&, node), h2(node, nodes)\n"
                 "ruleset s(my::Ctx) {\n"
                 "  [ordered] r @ reduce[k](x:{i32,f32}, #c, -1, 2.5, true, Invalid, xs...) if k == rg::Op::ADD => "
                 "h1(ctx, x)\n"
                 "  for op in Binary - {pow} + {where} {\n    op(_, ...) => fold(op(x, 1)) : f32\n  }\n"
                 "}\n"
                 "ruleset t = s + {\n  x => x\n}\n",
                 d);
  ASSERT_TRUE(f) << d.text();
  ASSERT_EQ(f->includes.size(), 1u);
  ASSERT_EQ(f->externs.size(), 2u);
  EXPECT_EQ(f->externs[0].name, "h1");
  ASSERT_EQ(f->externs[0].params.size(), 2u);
  EXPECT_EQ(f->externs[0].params[0].text, "const my::Ctx&");
  EXPECT_EQ(f->externs[0].params[1].text, "node");
  EXPECT_EQ(f->externs[1].params[1].text, "nodes");
  ASSERT_EQ(f->rulesets.size(), 2u);
  EXPECT_EQ(f->rulesets[0].ctx, "my::Ctx");
  const Rule& r = first_rule(*f);
  EXPECT_TRUE(r.ordered);
  EXPECT_EQ(show(r.pattern), "r @ reduce[k](x:{i32,f32}, #c, -1, 2.5, true, Invalid, xs...)");
  EXPECT_EQ(r.guard, "k == rg::Op::ADD");
  EXPECT_EQ(show(r.result), "h1(ctx, x)");
  const Stmt& fs = f->rulesets[0].block->stmts.at(1);
  EXPECT_TRUE(fs.is_for);
  EXPECT_EQ(fs.set.terms.size(), 3u);
  EXPECT_EQ(show(fs.body->stmts.at(0).rule.result), "fold(op(x, 1)):f32");
  EXPECT_EQ(f->rulesets[1].parts.size(), 1u);
  EXPECT_TRUE(f->rulesets[1].block.has_value());
  EXPECT_EQ(r.text.substr(0, 24), "[ordered] r @ reduce[k](");
}

// `xs[k]` without a call's parentheses is an element of a span, its index an arg (a name or a number).
TEST(Parser, ElementOfASpan) {
  Diag d;
  auto f = parse("f", "ruleset s {\n  gep[k](vectorize(xs...)) => add(xs[k], xs[0])\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  const Expr& res = first_rule(*f).result;
  ASSERT_EQ(res.kids.size(), 2u);
  EXPECT_EQ(res.kids[0].kind, Expr::Element);
  EXPECT_EQ(res.kids[0].name, "xs");
  EXPECT_EQ(res.kids[0].arg->kind, ArgPat::Name);
  EXPECT_EQ(res.kids[1].arg->kind, ArgPat::Number);
  EXPECT_EQ(show(res), "add(xs[k], xs[0])");
  EXPECT_EQ(first_rule(*f).pattern.kind, Expr::Call);  // gep[k](...) stays a call
}

// `p...` after a pattern that is not a plain name: every last source matches p; `[n..]` counts over them.
TEST(Parser, EverySourceMatchesOnePattern) {
  Diag d;
  auto f = parse("f", "ruleset s {\n  vectorize(x, gep[0..](y)...) => sink(xs...)\n  sink(_:f32...) => noop()\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  const Expr& p = first_rule(*f).pattern;
  ASSERT_EQ(p.kids.size(), 2u);
  const Expr& each = p.kids[1];
  EXPECT_EQ(each.kind, Expr::Each);
  ASSERT_EQ(each.kids.size(), 1u);
  EXPECT_EQ(each.kids[0].kind, Expr::Call);
  EXPECT_EQ(each.kids[0].arg->kind, ArgPat::Count);
  EXPECT_EQ(each.kids[0].arg->num, 0);
  EXPECT_EQ(show(p), "vectorize(x, gep[0..](y)...)");
  EXPECT_EQ(first_rule(*f).result.kids.at(0).kind, Expr::Span);  // a name before '...' stays a span
  const Expr& typed = f->rulesets[0].block->stmts.at(1).rule.pattern.kids.at(0);
  EXPECT_EQ(typed.kind, Expr::Each);
  EXPECT_EQ(show(typed), "_:f32...");
}

TEST(Parser, NameIsItsOwnFieldNotPartOfTheText) {
  Diag d;
  auto f = parse("f",
                 "ruleset s {\n  [name=drop_zero]   x  +\n 0 => x\n  [name=swap, ordered] x + y => y + x\n"
                 "  x * 1 => x\n}\n",
                 d);
  ASSERT_TRUE(f) << d.text();
  const std::vector<Stmt>& rules = f->rulesets.at(0).block->stmts;
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].rule.name, "drop_zero");
  EXPECT_EQ(rules[0].rule.text, "x + 0 => x");
  EXPECT_EQ(rules[0].rule.loc.col, 3);  // the rule starts at its attributes
  EXPECT_EQ(rules[1].rule.name, "swap");
  EXPECT_TRUE(rules[1].rule.ordered);
  EXPECT_EQ(rules[1].rule.text, "[ordered] x + y => y + x");
  EXPECT_EQ(rules[2].rule.name, "");
  EXPECT_EQ(rules[2].rule.text, "x * 1 => x");
}

TEST(Parser, SyntaxErrorHasPosition) {
  Diag d;
  EXPECT_FALSE(parse("f", "ruleset s {\n  x + => x\n}\n", d));
  EXPECT_NE(d.text().find("f:2:7: error: expected a pattern or a term, found '=>'"), std::string::npos) << d.text();
}

// Literals are doubles: one that would round to another value is an error, not a silent change.
TEST(Parser, NumbersThatADoubleCannotHoldAreErrors) {
  for (const char* lit : {"9007199254740993", "0x20000000000001", "99999999999999999999999", "1e999"}) {
    Diag d;
    EXPECT_FALSE(parse("f", std::string("ruleset s {\n  x + ") + lit + " => x\n}\n", d)) << lit;
    EXPECT_NE(d.text().find("f:2:7: error: "), std::string::npos) << d.text();
    EXPECT_NE(d.text().find(lit), std::string::npos) << d.text();
  }
  Diag d;
  auto f = parse("f", "ruleset s {\n  x + 9007199254740992 => x\n  x * 0x1F => x\n  x - 2.5e3 => x\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  EXPECT_EQ(f->rulesets.at(0).block->stmts.at(0).rule.pattern.kids.at(1).num, 9007199254740992.0);
  EXPECT_EQ(f->rulesets[0].block->stmts.at(1).rule.pattern.kids.at(1).num, 31.0);
  EXPECT_EQ(f->rulesets[0].block->stmts.at(2).rule.pattern.kids.at(1).num, 2500.0);
}

// Deep nesting is an error, not a stack overflow in the recursive stages after the parser.
TEST(Parser, NestingDeeperThanTheLimitIsAnError) {
  auto rule = [](const std::string& pattern) { return "ruleset s {\n  " + pattern + " => 0\n}\n"; };
  for (int n : {100000, 257}) {
    std::string chain = "_x";
    for (int i = 0; i < n; ++i) chain += " + _x";
    const std::string brackets = std::string(n, '(') + "_x" + std::string(n, ')');
    const std::string negations = std::string(n, '-') + "_x";
    for (const std::string& p : {brackets, negations, chain}) {
      Diag d;
      EXPECT_FALSE(parse("f", rule(p), d)) << n;
      EXPECT_NE(d.text().find("error: expression nested more than 256 deep"), std::string::npos) << d.text();
    }
  }
  Diag d;
  EXPECT_TRUE(parse("f", rule(std::string(200, '(') + "_x" + std::string(200, ')')), d)) << d.text();
}

TEST(Check, CommutativeVariantsAreDeduplicated) {
  Diag d;
  auto f = parse("f", "ruleset s {\n  x * (_y + 1) => x\n  add(a, a) => a\n  [ordered] 1 + z => z\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  std::vector<File> files{*f};
  Program p = check(files, d);
  ASSERT_EQ(d.errors(), 0) << d.text();
  ASSERT_EQ(p.sets.at(0).insts.size(), 3u);
  EXPECT_EQ(p.sets[0].insts[0].variants.size(), 4u);  // 2 commutative nodes
  EXPECT_EQ(p.sets[0].insts[1].variants.size(), 1u);  // both orders are the same
  EXPECT_EQ(p.sets[0].insts[2].variants.size(), 1u);  // [ordered]
}

// The sources of `p...` after the first may match any commutative variant of p: a row per variant of
// the first, each listing every variant (kids[1..]); a name in p counts as repeated, so `(_ + y)` swaps.
TEST(Check, EveryVariantOfAnEachPattern) {
  Diag d;
  auto f = parse("f", "ruleset s {\n  vectorize((_ + y)...) => y\n  vectorize((_ + _)...) => noop()\n}\n", d);
  ASSERT_TRUE(f) << d.text();
  std::vector<File> files{*f};
  Program p = check(files, d);
  ASSERT_EQ(d.errors(), 0) << d.text();
  const std::vector<Expr>& v = p.sets.at(0).insts.at(0).variants;
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(show(v[0].kids.at(0).kids.at(0)), "add(_, y)");
  EXPECT_EQ(show(v[1].kids.at(0).kids.at(0)), "add(y, _)");
  EXPECT_EQ(v[0].kids[0].kids.size(), 3u);               // the first's variant, then both for the others
  EXPECT_EQ(p.sets[0].insts.at(1).variants.size(), 1u);  // two wildcards: one order
}

}  // namespace
}  // namespace rg::dsl
