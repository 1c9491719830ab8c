"""The repositories rulegrad builds against, all local (Debian packages and in-repo stubs).

Our WORKSPACE calls rulegrad_dependencies(); another workspace that uses rulegrad does the same:

    local_repository(name = "rulegrad", path = "/src/rulegrad")
    load("@rulegrad//:deps.bzl", "rulegrad_dependencies")
    rulegrad_dependencies(rulegrad_path = "/src/rulegrad")
"""

def rulegrad_dependencies(rulegrad_path = "."):
    """Declares every repository rulegrad needs; nothing is downloaded.

    Args:
      rulegrad_path: where rulegrad's source tree is, relative to the calling workspace or absolute.
    """

    # Declared before Bazel's built-in WORKSPACE suffix, whose maybe(http_archive, ...) then skips them.
    native.local_repository(name = "platforms", path = "/usr/share/bazel/tools/platforms")
    native.local_repository(name = "bazel_skylib", path = "/usr/share/bazel/tools/skylib")
    native.local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")  # loaded by @bazel_tools

    # Debian's rules_cc needs a newer Bazel: this one forwards to the native rules.
    native.local_repository(name = "rules_cc", path = rulegrad_path + "/third_party/rules_cc")

    # Test rules depend on the coverage tools even without `bazel coverage`.
    native.local_repository(name = "remote_coverage_tools", path = rulegrad_path + "/third_party/remote_coverage_tools")

    # System libraries and tools; their files are labels, so upgrading a Debian
    # package re-runs exactly the actions that use it.
    native.new_local_repository(name = "gtest", build_file = str(Label("//third_party:gtest.BUILD")), path = "/usr")
    native.new_local_repository(name = "llvm", build_file = str(Label("//third_party:llvm.BUILD")), path = "/usr/lib/llvm-14")
    native.new_local_repository(name = "z3", build_file = str(Label("//third_party:z3.BUILD")), path = "/usr")
    native.new_local_repository(name = "re2c", build_file = str(Label("//third_party:re2c.BUILD")), path = "/usr")
    native.new_local_repository(name = "openblas", build_file = str(Label("//third_party:openblas.BUILD")), path = "/usr")
    native.new_local_repository(name = "nlohmann_json", build_file = str(Label("//third_party:nlohmann_json.BUILD")), path = "/usr")
    native.new_local_repository(name = "zlib", build_file = str(Label("//third_party:zlib.BUILD")), path = "/usr")
    native.new_local_repository(name = "openmpi", build_file = str(Label("//third_party:openmpi.BUILD")), path = "/usr/lib/x86_64-linux-gnu")
    native.new_local_repository(name = "graphviz", build_file = str(Label("//third_party:graphviz.BUILD")), path = "/usr")

    # ONNX: onnx.proto from Debian's libonnx-dev, the conformance suite from libonnx-testdata.
    native.new_local_repository(name = "onnx", build_file = str(Label("//third_party:onnx.BUILD")), path = "/usr/include/onnx")
    native.new_local_repository(
        name = "onnx_testdata",
        build_file = str(Label("//third_party:onnx_testdata.BUILD")),
        path = "/usr/share/libonnx-testdata/data",
    )

    # Named as the native proto_library / cc_proto_library expect.
    native.new_local_repository(
        name = "com_google_protobuf",
        build_file = str(Label("//third_party:com_google_protobuf.BUILD")),
        path = "/usr",
    )
