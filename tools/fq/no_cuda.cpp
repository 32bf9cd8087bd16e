// The subcommands that need the CUDA runtime, in a build without CUDA.
#include <cstdio>

#include "cli.h"

namespace fqtool {
int bench_main(int, char**) {
    std::printf("fq bench: this fq was built without CUDA; nothing to measure\n");
    return 77;
}
int check_main(int, char**) {
    std::printf("fq check: this fq was built without CUDA; nothing to compare with the host reference\n");
    return 77;
}
}  // namespace fqtool
