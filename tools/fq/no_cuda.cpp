// fq bench, which needs the CUDA runtime, in a build without CUDA.
#include <cstdio>

#include "bench_case.h"
#include "cli.h"

namespace fqtool {
// Parses the sweep as a CUDA build does, so --help and a sweep file's mistakes show here too.
int bench_main(int argc, char** argv) {
    const Args args(argc, argv, bench_options());
    if (args.has("help")) {
        std::fputs(bench_help().c_str(), stdout);
        return 0;
    }
    const size_t cases = bench_cases(args).size();
    std::printf("fq bench: this fq was built without CUDA; nothing to measure (%zu measurements parsed)\n", cases);
    return 77;
}
}  // namespace fqtool
