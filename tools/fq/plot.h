// fq bench --plot: plot_bench.py run by a Python interpreter that has matplotlib.
#pragma once

#include <string>
#include <vector>

namespace fqtool {

// The first of `interpreters` (names on PATH or paths) that imports matplotlib, or "" when none does.
std::string python_with_matplotlib(const std::vector<std::string>& interpreters);
// Runs `script json png` with python3 or python, whichever has matplotlib; throws ToolError (exit 1) saying
// how to install matplotlib when neither has it, or naming the command when the plot fails.
void run_plot(const std::string& script, const std::string& json, const std::string& png);

}  // namespace fqtool
