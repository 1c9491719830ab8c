"""rules_library: compiles one .rules file into a cc_library of rule sets."""

def rules_library(name, srcs, deps = [], visibility = None, **kwargs):
    """Runs rulegen on srcs and compiles the result.

    Generates <name>.h and <name>.cc in the calling package; the header
    declares one `extern const rg::RuleSet <set>;` per rule set, in namespace
    rg::rules.

    Args:
      name: the cc_library; its header is "<package>/<name>.h".
      srcs: the .rules file (normally one; several are checked and emitted together).
      deps: cc_library targets with the headers the rules include (helpers, contexts).
      visibility: of the cc_library.
      **kwargs: passed to the cc_library (tags, testonly, ...).
    """
    rulegen = str(Label("//dsl:rulegen"))
    pkg = native.package_name()
    include = (pkg + "/" if pkg else "") + name + ".h"
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = [name + ".h", name + ".cc"],
        tools = [rulegen],
        cmd = ("$(execpath %s) --name=%s --include=%s --header=$(execpath %s.h) " +
               "--source=$(execpath %s.cc) $(SRCS)") % (rulegen, name, include, name, name),
        message = "rulegen %s" % name,
        visibility = ["//visibility:private"],
        testonly = kwargs.get("testonly", False),
    )
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        deps = deps + [str(Label("//compiler/ir"))],
        # Each file registers its rules at start-up (rg::all_rule_files), even
        # when no rule set of it is referenced.
        alwayslink = kwargs.pop("alwayslink", True),
        visibility = visibility,
        **kwargs
    )
