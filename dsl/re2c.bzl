"""re2c_cc: turns a re2c .re file into a .cc file."""

def re2c_cc(name, src, out = None, opts = [], **kwargs):
    """Generates C++ from a re2c source; use the output in a cc_library's srcs.

    Args:
      name: target name.
      src: the .re file.
      out: generated file name; defaults to src with .re replaced by .cc.
      opts: extra re2c flags.
      **kwargs: passed to the genrule (tags, visibility, ...).
    """
    if out == None:
        if not src.endswith(".re"):
            fail("re2c_cc: src must end in .re, or pass out=")
        out = src[:-len(".re")] + ".cc"
    re2c = str(Label("@re2c//:re2c"))
    native.genrule(
        name = name,
        srcs = [src],
        outs = [out],
        tools = [re2c],
        # -W -Werror: every re2c warning fails the build. No date or version in
        # the output keeps it byte-identical across machines (cache hits).
        cmd = "$(execpath %s) -W -Werror --no-generation-date --no-version %s -o $@ $<" % (re2c, " ".join(opts)),
        message = "re2c %s" % src,
        **kwargs
    )
