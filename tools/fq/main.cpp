// fq: the command line of libfusedquant. One executable, one subcommand per task.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.h"
#include "fusedquant/fusedquant.h"

namespace fqtool {
int bench_main(int argc, char** argv);
int check_main(int argc, char** argv);
int quantize_weights_main(int argc, char** argv);
int info_main(int argc, char** argv);
std::string version_text();
}  // namespace fqtool

namespace {

const char* kHelp = R"(usage: fq <command> [options]       (fq <command> --help for its options)

  check              every kernel variant of this build on this GPU against the host reference: a
                     pass/fail table (run it after installing to trust the build)
  bench              effective bandwidth over a sweep of shapes, schemes and variants, beside a same-bytes
                     device copy of the same run; table, --json, --csv, --plot
  quantize-weights   a .safetensors file's or a sharded checkpoint directory's bf16/fp16 weights to FP8 with
                     128x128 block scales (or MXFP8 / NVFP4), scales beside each weight, quantization_config
                     in config.json; never overwrites its input
  info               the library's version, this build's CUDA architectures, the GPUs seen and which
                     kernel variant each operation would run on each of them and on the host
  version            the library's version and the header's fq was built with (also --version, -V)
  help               this text
)";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        std::fputs(kHelp, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string cmd = argv[1];
    try {
        if (cmd == "bench") return fqtool::bench_main(argc - 2, argv + 2);
        if (cmd == "check") return fqtool::check_main(argc - 2, argv + 2);
        if (cmd == "quantize-weights") return fqtool::quantize_weights_main(argc - 2, argv + 2);
        if (cmd == "info") return fqtool::info_main(argc - 2, argv + 2);
        if (cmd == "version" || cmd == "--version" || cmd == "-V") {
            std::fputs(fqtool::version_text().c_str(), stdout);
            return 0;
        }
    } catch (const fqtool::ToolError& e) {
        std::fprintf(stderr, "fq %s: %s\n", cmd.c_str(), e.what());
        return e.exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fq %s: %s\n", cmd.c_str(), e.what());
        return 1;
    }
    const std::string hint = fqtool::did_you_mean(
        cmd, {"check", "bench", "quantize-weights", "info", "version", "help", "--version", "--help"}, "");
    std::fprintf(stderr, "fq: unknown command \"%s\"%s\n\n%s", cmd.c_str(), hint.c_str(), kHelp);
    return 2;
}
